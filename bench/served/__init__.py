"""Served and API models: ``predict --api openai`` against an OpenAI-compatible endpoint.

The engine (vLLM, SGLang, TGI, a hosted API) runs the model; this package is the client.
Two modes (docs/runner.md, "Served models"):

* ``loglikelihood``: the completions endpoint with ``echo`` and ``logprobs`` scores every
  verbaliser after the same prompt, few-shot demonstrations and truncation as the local causal
  path (``consistency_bench.bench.runner.causal``, ``consistency_bench.bench.prompting.prompts``),
  sent
  as token ids
  of the model's tokenizer;
* ``generate``: the chat endpoint answers with one label word, parsed strictly
  (:mod:`consistency_bench.bench.served.answers`); probabilities from the first answer token's
  ``top_logprobs``
  where the endpoint returns them.

Modules, each of one job:

* :mod:`~consistency_bench.bench.served.endpoint`: the URL, the key (read from the environment,
  never stored);
* :mod:`~consistency_bench.bench.served.cache`: the persistent SQLite request cache;
* :mod:`~consistency_bench.bench.served.client`: async requests (aiohttp) with concurrency, a rate
  limit and
  retries;
* :mod:`~consistency_bench.bench.served.preflight`: what the endpoint serves, checked before any
  request of a run;
* :mod:`~consistency_bench.bench.served.answers`: strict answer parsing and first-token
  probabilities;
* :mod:`~consistency_bench.bench.served.loglikelihood`: completion requests and their
  log-likelihoods;
* :mod:`~consistency_bench.bench.served.generate`: chat requests and their answers;
* :mod:`~consistency_bench.bench.served.record`: the ``api`` block and ``mode`` of the run record;
* :mod:`~consistency_bench.bench.served.options`: the options of a run and what it did;
* :mod:`~consistency_bench.bench.served.flows`: the two modes' runs once the inputs are built;
* :mod:`~consistency_bench.bench.served.served_run`: one run end to end
  (:func:`~consistency_bench.bench.served.served_run.predict_served`).
"""
