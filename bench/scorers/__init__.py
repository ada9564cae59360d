"""Family scorers, one module per family; each registers its metric kinds in ``SCORERS``.

The contract they share is :mod:`consistency_bench.bench.scorers.contract`. This package imports
none of the
family modules itself (so importing the contract stays cheap):
``consistency_bench.bench.scoring.engine.get_scorer``
imports, on first use, the ``scorer`` module each family declares in
:mod:`consistency_bench.bench.registries.families`,
which fills the registry.
"""
