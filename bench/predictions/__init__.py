"""Read and validate prediction files (JSONL, CSV or Parquet; see docs/predictions.md).

A prediction file (optionally gzip-compressed: ``.jsonl.gz``) has one record per
suite row: ``id``, ``label`` (index or label name) and
optionally ``probs``. Reading happens in two passes of one design:

* a fast columnar pass (pyarrow) for well-formed JSONL and Parquet files;
* a line-by-line pass that is authoritative for errors: whenever the fast pass fails, or the
  validation of its columns fails, the file is read line by line so that the error names the
  exact line, field and value.

Every problem raises :class:`consistency_bench.bench.errors.PredictionFileError`; nothing is
written.

The modules, each of one job:

* :mod:`~consistency_bench.bench.predictions.types`: :class:`SuitePredictions`,
  :class:`Predictions`, the columns;
* :mod:`~consistency_bench.bench.predictions.files`: the file on disk (regular file, format, bytes,
  gzip cap);
* :mod:`~consistency_bench.bench.predictions.records`: the line-by-line pass and :func:`to_jsonl`;
* :mod:`~consistency_bench.bench.predictions.fast`: the columnar pass (a large JSONL parsed as two
  halves);
* :mod:`~consistency_bench.bench.predictions.resolve`: ids matched against the suites, split by
  suite;
* :mod:`~consistency_bench.bench.predictions.labels`: label names and indices, ``probs`` rows;
* :mod:`~consistency_bench.bench.predictions.read`: :func:`read_predictions`, the two passes
  together.

Import each name from its module (the tunables, ``SPLIT_PARSE_BYTES``,
``MAX_DECOMPRESSED_BYTES``, ..., from the module that reads them); this package re-exports
nothing.
"""
