"""Load Hugging Face models and map their labels to the task label names.

One loader for every part of the harness that runs a model: the prediction runner, the
fine-tuning command and the word-salad gradient transformations all call
:func:`load_classifier`. torch and transformers are imported inside the functions, so
``import consistency_bench.bench.modeling`` stays light.

Label mapping: a classifier's ``config.id2label`` names its outputs. Each task label is
matched to a model label by name, ignoring case, ``_``, ``-`` and spaces
(``not_entailment`` = ``NOT ENTAILMENT``). ``--label-map`` overrides the match per task::

    snli:entailment=ENTAILMENT,neutral=NEUTRAL,contradiction=CONTRADICTION;rte:not_entailment=1

A value may be a model label name or an output index, and several outputs joined with ``+``
(``rte:not_entailment=neutral+contradiction`` sums the probabilities of a 3-way NLI head).
The same mapping can be given as a JSON file ``{"snli": {"entailment": "ENTAILMENT"}}``.

Modules, one job each: :mod:`~consistency_bench.bench.modeling.info` (``ModelInfo``,
``LoadedModel``),
:mod:`~consistency_bench.bench.modeling.model_kinds` (classifier, text-to-text or causal; multimodal
checkpoints),
:mod:`~consistency_bench.bench.modeling.devices` (device, dtype, ``--max-memory``),
:mod:`~consistency_bench.bench.modeling.loading` (inspect a model, load its weights) and
:mod:`~consistency_bench.bench.modeling.label_map` (the label mapping). Import each name from its
module; this package re-exports nothing.
"""
