"""The suites as a ``datasets`` builder class, for in-process use.

datasets 5 no longer runs loading scripts from a path or the Hub, so users load the built
Parquet folder; this class is for Python code that wants the rows without building a folder::

    from consistency_bench.builders.hf_builder import ConsistencyBench
    builder = ConsistencyBench(config_name="snli_transitive", sources="../shared/corpora")
    builder.download_and_prepare()
    suite = builder.as_dataset(split="test")

Both paths run the same row generator (``SuiteSpec.build``), so they give the same rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import datasets

from consistency_bench.bench import __version__
from consistency_bench.bench.registries.source_files import SourceResolver
from consistency_bench.builders.catalog import SUITES


@dataclass
class ConsistencyBenchConfig(datasets.BuilderConfig):
    """One suite. ``sources`` is a local mirror directory (else the resolver's defaults)."""

    sources: str | None = None
    download: bool = True


class ConsistencyBench(datasets.GeneratorBasedBuilder):
    """Every registered suite as a config; one split, ``test``."""

    BUILDER_CONFIG_CLASS = ConsistencyBenchConfig
    BUILDER_CONFIGS = [  # noqa: RUF012 (datasets reads this class attribute, a list)
        ConsistencyBenchConfig(name=name, version=spec.version, description=spec.description)
        for name, spec in SUITES.items()
    ]

    def _info(self) -> datasets.DatasetInfo:
        spec = SUITES[self.config.name]
        return datasets.DatasetInfo(
            description=spec.description,
            features=spec.features,
            citation=spec.citation,
            license=spec.license,
            version=spec.version,
            homepage=f"consistency-bench {__version__}",
        )

    def _split_generators(self, dl_manager):
        return [datasets.SplitGenerator(name=datasets.Split.TEST)]

    def _generate_examples(self):
        spec = SUITES[self.config.name]
        resolver = SourceResolver(self.config.sources, download=self.config.download)
        for row in spec.build(resolver):
            yield row["id"], row
