"""BECEL's metadata: versions, the family declaration, Table 1 sizes, descriptions, metrics."""

from consistency_bench.bench.registries.families import FAMILIES

VERSION = "1.0.0"
ADDITIVE_VERSION = "2.0.0"  # every combination within the cutoff, one seeded order (issue 21)
ADDITIVE_SEED = 20221012  # seeds the merge order of each combination

#: Paper, citation and licence notes: declared once in bench/registries/families.py.
BECEL = FAMILIES["becel"]

TABLE1 = {  # BECEL Table 1: new test data points per task and type
    ("boolq", "semantic"): 1076,
    ("snli", "semantic"): 4406,
    ("rte", "semantic"): 248,
    ("mrpc", "semantic"): 202,
    ("wic", "semantic"): 140,
    ("sst2", "semantic"): 187,
    ("ag_news", "semantic"): 540,
    ("boolq", "negational"): 401,
    ("snli", "negational"): 2204,
    ("rte", "negational"): 153,
    ("mrpc", "negational"): 290,
    ("snli", "symmetric"): 3237,
    ("rte", "symmetric"): 1241,
    ("mrpc", "symmetric"): 3668,
    ("wic", "symmetric"): 5428,
    ("snli", "transitive"): 2375,
    ("wic", "transitive"): 3162,
    ("sst2", "additive"): 53_000,
    ("ag_news", "additive"): 53_000,
}

DESCRIPTIONS = {
    "semantic": "Human-verified paraphrases of one input; a consistent model predicts the same "
    "label for the original and the paraphrase. Main metric tau_sem = 1 - agreement.",
    "negational": "Human-verified opposite-meaning versions (negation or antonym) of one input "
    "of rows whose label flips; a consistent model changes its prediction. Main metric "
    "tau_neg = share of unchanged predictions.",
    "symmetric": "The two inputs swapped, for rows where the label is symmetric; a consistent "
    "model predicts the same label. Main metric tau_sym = 1 - agreement.",
    "transitive": "Rows derived by a transitivity rule from two source rows (included as "
    "variant 'source'); scored only where the model is right on both sources. Main metric "
    "tau_trn = share of those derived rows whose constraint is violated.",
    "additive": "Two same-label texts merged; scored only where the model is right on both. "
    "Main metric tau_add = share of those merged rows predicted with another label.",
}

MAIN_METRIC = {
    "semantic": "tau_sem",
    "negational": "tau_neg",
    "symmetric": "tau_sym",
    "transitive": "tau_trn",
    "additive": "tau_add",
}

