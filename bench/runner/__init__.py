"""Run a Hugging Face model over built suites and write a prediction file, fast and resumably.

Pipeline (docs/runner.md):

1. Read the suites' Parquet files; turn every row into its model input
   (``consistency_bench.bench.prompting.row_inputs``).
2. Deduplicate: rows with the same model input, in any suite, are run once (BECEL suites reuse
   the same original rows many times).
3. Tokenise once, sort by length (longest first) and batch with dynamic padding: a batch is
   padded to its own longest input, and with ``--batch-size auto`` holds as many inputs as fit
   a token budget.
4. Forward under ``torch.inference_mode``; on CUDA under bf16 (fp16 where bf16 is missing)
   autocast with SDPA attention. An out-of-memory error halves the batch and retries it.
5. Results are appended in shard files under ``<out>.parts/``; a restarted run reads them and
   skips done batches. At the end the per-row records (``id``, ``label``, ``probs``) are
   written to ``<out>`` atomically and the shards removed.

Everything that needs no weights (steps 1-3, the label mapping, the few-shot pools) is
:func:`prepare`, which the CLI runs before the model loads; :func:`execute` is the rest.

The batches are planned once over every distinct input, so a batch holds the same inputs
whoever runs it: launched processes (``torchrun``, ``accelerate launch``) and ``--shard i/N``
take every N-th batch and produce byte-identical results to a single process
(``consistency_bench.bench.runner.distributed``; part files are joined by :func:`merge_parts`).

The modules, each of one job (none imports torch at load time):

* :mod:`~consistency_bench.bench.runner.options`: :class:`RunnerOptions`, :class:`RunStats`, the
  lengths;
* :mod:`~consistency_bench.bench.runner.unique_inputs`: suite rows to deduplicated model inputs
  (step 1-2);
* :mod:`~consistency_bench.bench.runner.prepare`: tokens, label mappings, settings: :func:`prepare`
  (step 3);
* :mod:`~consistency_bench.bench.runner.batching`: batch plans and the out-of-memory retry (step
  3-4);
* :mod:`~consistency_bench.bench.runner.forward`: the forward pass (step 4);
* :mod:`~consistency_bench.bench.runner.shards`: resume shards, and reading and merging ``--shard``
  parts (5);
* :mod:`~consistency_bench.bench.runner.output`: the prediction file and a part file (step 5);
* :mod:`~consistency_bench.bench.runner.run`: :func:`predict` and :func:`execute`, the pipeline.
"""
