"""The run record: what a prediction run was, so that anyone can run it again.

``predict`` (and ``baseline``, ``merge-predictions``) write ``<PRED>.run.json`` beside the
prediction file ``<PRED>``; ``submit`` stores it in the entry as ``run.json``;
``reproduce`` reads it to run the same model with the same settings on a sample of the rows
(docs/runner.md, "Run record"; docs/maintain.md, "Reproduction").

Modules, one job each (import from where a name lives):

* :mod:`~consistency_bench.bench.runrecord.schema`: the format: file names, version, validation,
  read, write;
* :mod:`~consistency_bench.bench.runrecord.identity`: which weights a model name or folder is
  (commit, sha256);
* :mod:`~consistency_bench.bench.runrecord.environment`: device, precision and package versions of a
  run;
* :mod:`~consistency_bench.bench.runrecord.predict_record`: the record of a ``predict`` run;
* :mod:`~consistency_bench.bench.runrecord.baseline_record`: the record of a ``baseline`` run;
* :mod:`~consistency_bench.bench.runrecord.merge`: the record of ``merge-predictions`` (from the
  parts' records).
"""
