# ruff: noqa: E501  (BibTeX entries keep one field per line, as ACL Anthology writes them)
"""What the dataset card states, as data: corpora, paper sizes, deviations and fields.

``builders/card/render.py`` renders these tables and the family declarations of
:mod:`consistency_bench.bench.registries.families` (paper, licences, annotation creators, release,
citation);
``tests/test_card.py`` checks them against a build (every column defined, every corpus cited
and licensed, every paper size from a constant that names its table, every measured figure
still true of the rows) and ``tests/test_registries.py`` that every config named here is a
registered suite. Nothing here is prose assembled at render time.
"""

from __future__ import annotations

from dataclasses import dataclass

from consistency_bench.bench.registries.families import FAMILIES


@dataclass(frozen=True)
class Corpus:
    """A source corpus the rows of a task come from.

    Attributes:
        name: The corpus as the card names it (also the key of its license line).
        hub_id: Its Hub dataset id (``source_datasets: extended|<id>``), if it has one.
        task_category: Hub ``task_categories`` value of the task.
        task_id: Hub ``task_ids`` value of the task.
        language_creators: Hub ``language_creators`` values of the corpus text.
        license: License as the upstream release states it.
        license_url: Where that license or those terms are published.
        citation: BibTeX of the paper(s) that introduced the corpus.
        caveat: A restriction a user must know beyond the license line.
        verified: Where the license was read in an upstream file (the mirror's copy, or the
            upstream repository at a pinned commit), quoted; empty when no upstream file
            available here states it (the card then lists the license as not verified).

    """

    name: str
    hub_id: str | None
    task_category: str
    task_id: str
    language_creators: tuple[str, ...]
    license: str
    license_url: str
    citation: str
    caveat: str = ""
    verified: str = ""


GLUE = """@inproceedings{wang-etal-2018-glue,
    title = "{GLUE}: A Multi-Task Benchmark and Analysis Platform for Natural Language Understanding",
    author = "Wang, Alex and Singh, Amanpreet and Michael, Julian and Hill, Felix and Levy, Omer and Bowman, Samuel",
    booktitle = "Proceedings of the 2018 {EMNLP} Workshop {B}lackbox{NLP}: Analyzing and Interpreting Neural Networks for {NLP}",
    year = "2018",
    pages = "353--355",
    url = "https://aclanthology.org/W18-5446"
}"""

_NLI = ("text-classification", "natural-language-inference")
_SIM = ("text-classification", "semantic-similarity-classification")

#: Every source corpus, by task key (``consistency_bench.bench.registries.tasks``). One entry per
#: task.
CORPORA: dict[str, Corpus] = {
    "snli": Corpus(
        "SNLI", "snli", *_NLI, ("crowdsourced",), "CC BY-SA 4.0",
        "https://nlp.stanford.edu/projects/snli/",
        """@inproceedings{bowman-etal-2015-large,
    title = "A large annotated corpus for learning natural language inference",
    author = "Bowman, Samuel R. and Angeli, Gabor and Potts, Christopher and Manning, Christopher D.",
    booktitle = "Proceedings of the 2015 Conference on Empirical Methods in Natural Language Processing",
    year = "2015",
    pages = "632--642",
    url = "https://aclanthology.org/D15-1075"
}"""),
    "mnli": Corpus(
        "MultiNLI", "multi_nli", *_NLI, ("crowdsourced", "found"),
        "OANC / CC BY-SA 3.0 / CC BY 3.0 mixture (per genre, see the MultiNLI paper)",
        "https://cims.nyu.edu/~sbowman/multinli/",
        """@inproceedings{williams-etal-2018-broad,
    title = "A Broad-Coverage Challenge Corpus for Sentence Understanding through Inference",
    author = "Williams, Adina and Nangia, Nikita and Bowman, Samuel",
    booktitle = "Proceedings of the 2018 Conference of the North {A}merican Chapter of the Association for Computational Linguistics: Human Language Technologies, Volume 1 (Long Papers)",
    year = "2018",
    pages = "1112--1122",
    url = "https://aclanthology.org/N18-1101"
}"""),
    "rte": Corpus(
        "RTE", "glue", *_NLI, ("found",),
        "no license stated; see the RTE challenge terms (GLUE redistributes RTE 1, 2, 3 and 5)",
        "https://gluebenchmark.com/tasks",
        """@inproceedings{dagan-etal-2005-pascal,
    title = "The {PASCAL} Recognising Textual Entailment Challenge",
    author = "Dagan, Ido and Glickman, Oren and Magnini, Bernardo",
    booktitle = "Machine Learning Challenges Workshop",
    year = "2005",
    pages = "177--190"
}
""" + GLUE),
    "mrpc": Corpus(
        "MRPC", "glue", *_SIM, ("found",), "Microsoft Research Paraphrase Corpus terms",
        "https://www.microsoft.com/en-us/download/details.aspx?id=52398",
        """@inproceedings{dolan-brockett-2005-automatically,
    title = "Automatically Constructing a Corpus of Sentential Paraphrases",
    author = "Dolan, William B. and Brockett, Chris",
    booktitle = "Proceedings of the Third International Workshop on Paraphrasing ({IWP}2005)",
    year = "2005",
    url = "https://aclanthology.org/I05-5002"
}
""" + GLUE),
    "qnli": Corpus(
        "QNLI", "glue", *_NLI, ("found", "crowdsourced"), "CC BY-SA 4.0 (derived from SQuAD)",
        "https://rajpurkar.github.io/SQuAD-explorer/",
        """@inproceedings{rajpurkar-etal-2016-squad,
    title = "{SQ}u{AD}: 100,000+ Questions for Machine Comprehension of Text",
    author = "Rajpurkar, Pranav and Zhang, Jian and Lopyrev, Konstantin and Liang, Percy",
    booktitle = "Proceedings of the 2016 Conference on Empirical Methods in Natural Language Processing",
    year = "2016",
    pages = "2383--2392",
    url = "https://aclanthology.org/D16-1264"
}
""" + GLUE),
    "qqp": Corpus(
        "QQP", "glue", *_SIM, ("found",), "Quora's terms of use (non-commercial research)",
        "https://quoradata.quora.com/First-Quora-Dataset-Release-Question-Pairs",
        """@misc{iyer-etal-2017-quora,
    title = "First Quora Dataset Release: Question Pairs",
    author = "Iyer, Shankar and Dandekar, Nikhil and Csernai, Korn{\\'e}l",
    year = "2017",
    url = "https://quoradata.quora.com/First-Quora-Dataset-Release-Question-Pairs"
}
""" + GLUE),
    "sst2": Corpus(
        "SST-2", "glue", "text-classification", "sentiment-classification", ("found",),
        "no license stated; see the Stanford Sentiment Treebank terms",
        "https://nlp.stanford.edu/sentiment/",
        """@inproceedings{socher-etal-2013-recursive,
    title = "Recursive Deep Models for Semantic Compositionality Over a Sentiment Treebank",
    author = "Socher, Richard and Perelygin, Alex and Wu, Jean and Chuang, Jason and Manning, Christopher D. and Ng, Andrew and Potts, Christopher",
    booktitle = "Proceedings of the 2013 Conference on Empirical Methods in Natural Language Processing",
    year = "2013",
    pages = "1631--1642",
    url = "https://aclanthology.org/D13-1170"
}
""" + GLUE),
    "boolq": Corpus(
        "BoolQ", "super_glue", *_NLI, ("found",), "CC BY-SA 3.0",
        "https://github.com/google-research-datasets/boolean-questions",
        """@inproceedings{clark-etal-2019-boolq,
    title = "{B}ool{Q}: Exploring the Surprising Difficulty of Natural Yes/No Questions",
    author = "Clark, Christopher and Lee, Kenton and Chang, Ming-Wei and Kwiatkowski, Tom and Collins, Michael and Toutanova, Kristina",
    booktitle = "Proceedings of the 2019 Conference of the North {A}merican Chapter of the Association for Computational Linguistics: Human Language Technologies, Volume 1 (Long and Short Papers)",
    year = "2019",
    pages = "2924--2936",
    url = "https://aclanthology.org/N19-1300"
}""",
        verified="google-research-datasets/boolean-questions@90af341 README.md: \"BoolQ is "
        "released under the Creative Commons Share-Alike 3.0 license\" (the link: CC BY-SA 3.0)"),
    "wic": Corpus(
        "WiC", "super_glue", "text-classification", "word-sense-disambiguation",
        ("found", "expert-generated"), "CC BY-NC 4.0 (non-commercial)",
        "https://pilehvar.github.io/wic/",
        """@inproceedings{pilehvar-camacho-collados-2019-wic,
    title = "{W}i{C}: the Word-in-Context Dataset for Evaluating Context-Sensitive Meaning Representations",
    author = "Pilehvar, Mohammad Taher and Camacho-Collados, Jose",
    booktitle = "Proceedings of the 2019 Conference of the North {A}merican Chapter of the Association for Computational Linguistics: Human Language Technologies, Volume 1 (Long and Short Papers)",
    year = "2019",
    pages = "1267--1273",
    url = "https://aclanthology.org/N19-1128"
}"""),
    "ag_news": Corpus(
        "AG News", "ag_news", "text-classification", "topic-classification", ("found",),
        "non-commercial research use (AG's corpus of news articles)",
        "http://groups.di.unipi.it/~gulli/AG_corpus_of_news_articles.html",
        """@inproceedings{zhang-etal-2015-character,
    title = "Character-level Convolutional Networks for Text Classification",
    author = "Zhang, Xiang and Zhao, Junbo and LeCun, Yann",
    booktitle = "Advances in Neural Information Processing Systems 28",
    year = "2015",
    pages = "649--657"
}""",
        verified="ag_news/readme.txt of the mirror: \"provided by the academic comunity for "
        "research purposes in data mining (clustering, classification, etc), information "
        "retrieval (ranking, search, etc), xml, data compression, data streaming, and any other "
        "non-commercial activity\""),
    "kornli": Corpus(
        "KorNLI", "kor_nli", *_NLI, ("machine-generated", "expert-generated"),
        "CC BY-SA 4.0 as Kakao Brain releases it; but the dev and test files (the only KorNLI "
        "files built here) are human translations of XNLI dev and test, which XNLI releases "
        "under CC BY-NC 4.0 (non-commercial): the translations carry that restriction",
        "https://github.com/kakaobrain/kor-nlu-datasets",
        """@inproceedings{ham-etal-2020-kornli,
    title = "{K}or{NLI} and {K}or{STS}: New Benchmark Datasets for {K}orean Natural Language Understanding",
    author = "Ham, Jiyeon and Choe, Yo Joong and Park, Kyubyong and Choi, Ilji and Soh, Hyungjoon",
    booktitle = "Findings of the Association for Computational Linguistics: EMNLP 2020",
    year = "2020",
    pages = "422--430",
    url = "https://aclanthology.org/2020.findings-emnlp.39"
}
@inproceedings{conneau-etal-2018-xnli,
    title = "{XNLI}: Evaluating Cross-lingual Sentence Representations",
    author = "Conneau, Alexis and Rinott, Ruty and Lample, Guillaume and Williams, Adina and Bowman, Samuel and Schwenk, Holger and Stoyanov, Veselin",
    booktitle = "Proceedings of the 2018 Conference on Empirical Methods in Natural Language Processing",
    year = "2018",
    pages = "2475--2485",
    url = "https://aclanthology.org/D18-1269"
}""",
        verified="kakaobrain/KorNLUDatasets@0df0fe7 README.md (the commit the mirror copies): "
        "\"License: Creative Commons Attribution-ShareAlike license (CC BY-SA 4.0)\", and its "
        "table: Dev. and Test \"Source: XNLI\", \"Translated by: Human\". XNLI's own "
        "CC BY-NC 4.0 is not verified here: facebookresearch/XNLI README.md says \"XNLI is "
        "licensed under the license found in the LICENSE file\", and that file is not available"),
    "klue_nli": Corpus(
        "KLUE", "klue", *_NLI, ("found", "crowdsourced"), "CC BY-SA 4.0",
        "https://klue-benchmark.com/",
        """@inproceedings{park-etal-2021-klue,
    title = "{KLUE}: Korean Language Understanding Evaluation",
    author = "Park, Sungjoon and Moon, Jihyung and Kim, Sungdong and Cho, Won Ik and Han, Jiyoon and Park, Jangwon and Song, Chisung and Kim, Junseong and Song, Yongsook and Oh, Taehwan and others",
    booktitle = "Proceedings of the Neural Information Processing Systems Track on Datasets and Benchmarks",
    year = "2021",
    url = "https://arxiv.org/abs/2105.09680"
}""",
        verified="KLUE-benchmark/KLUE@3efd987 README.md (the commit the mirror copies): \"This "
        "work is licensed under a Creative Commons Attribution-ShareAlike 4.0 International "
        "License\""),
    "conv_ent": Corpus(
        "Conversational Entailment", None, *_NLI, ("found", "expert-generated"),
        "no license stated upstream", "https://github.com/sled-group/Verifiable-Coherent-NLU",
        """@inproceedings{zhang-chai-2010-towards,
    title = "Towards Conversation Entailment: An Empirical Investigation",
    author = "Zhang, Chen and Chai, Joyce",
    booktitle = "Proceedings of the 2010 Conference on Empirical Methods in Natural Language Processing",
    year = "2010",
    pages = "756--766",
    url = "https://aclanthology.org/D10-1074"
}
@misc{godfrey-holliman-1997-switchboard,
    title = "Switchboard-1 Release 2 ({LDC97S62})",
    author = "Godfrey, John J. and Holliman, Edward",
    publisher = "Linguistic Data Consortium",
    year = "1997",
    url = "https://catalog.ldc.upenn.edu/LDC97S62"
}""",
        caveat="The dialogues are transcript excerpts of Switchboard-1 (LDC97S62), which the "
        "Linguistic Data Consortium distributes under its user agreement to members and "
        "licensees. Neither the Conversational Entailment release nor the coherence "
        "annotations state a license that grants redistribution of that text; check your "
        "LDC license before using or republishing `conv_ent_coherence`."),
    "art": Corpus(
        "ART", "art", "multiple-choice", "multiple-choice-qa", ("crowdsourced",),
        "CC BY 4.0 (AI2)", "https://leaderboard.allenai.org/anli/submissions/get-started",
        """@inproceedings{bhagavatula-etal-2020-abductive,
    title = "Abductive Commonsense Reasoning",
    author = "Bhagavatula, Chandra and Le Bras, Ronan and Malaviya, Chaitanya and Sakaguchi, Keisuke and Holtzman, Ari and Rashkin, Hannah and Downey, Doug and Yih, Wen-tau and Choi, Yejin",
    booktitle = "International Conference on Learning Representations",
    year = "2020",
    url = "https://openreview.net/forum?id=Byg1v1HKDB"
}"""),
}
CORPORA["klue_sts"] = Corpus(
    "KLUE", "klue", *_SIM, ("found",), CORPORA["klue_nli"].license,
    CORPORA["klue_nli"].license_url, CORPORA["klue_nli"].citation,
    verified=CORPORA["klue_nli"].verified,
)
#: Source corpora of few-shot pools that no config is built from, by key.
POOL_CORPORA: dict[str, Corpus] = {
    "korsts": Corpus(
        "KorSTS", None, *_SIM, ("machine-generated", "expert-generated"),
        "CC BY-SA 4.0 as Kakao Brain releases it (the train file is a machine translation of "
        "STS-B train, whose parts carry their own terms, not verified here)",
        "https://github.com/kakaobrain/kor-nlu-datasets", CORPORA["kornli"].citation,
        verified="kakaobrain/KorNLUDatasets@0df0fe7 README.md: \"License: Creative Commons "
        "Attribution-ShareAlike license (CC BY-SA 4.0)\""),
}
#: Mirror folder of a few-shot pool's source file -> key of its corpus (CORPORA, POOL_CORPORA).
POOL_SOURCE_CORPUS: dict[str, str] = {
    "sst2": "sst2", "mnli": "mnli", "snli": "snli", "becel/mrpc": "mrpc", "becel/wic": "wic",
    "becel/boolq": "boolq", "becel/ag_news": "ag_news", "art": "art",
    "coherence/conv_ent": "conv_ent", "korsts": "korsts",
}

@dataclass(frozen=True)
class PaperSize:
    """The size a paper prints for a config's test set.

    Attributes:
        printed: As the paper prints it ("53K", "9.8K", "2,375").
        value: The number it stands for (53K -> 53,000).
        rounded: Whether the paper rounded it (compare at its precision, not exactly).
        where: The paper and table or section that prints it.

    """

    printed: str
    value: int
    rounded: bool
    where: str


_BECEL_T1 = "BECEL Table 1"
_CALM_T6 = "CALM Table 6 (validation set size)"
_COH = "Storks and Chai section 4.1"

#: Every paper size the card shows, by config. Configs absent here show "-": generated and
#: model-specific configs have no paper size. The word-salad paper prints no count; it
#: transforms each task's whole validation set (its section 5), so its size is that split's
#: (:data:`SALAD_SOURCE_ROWS`, added below the table).
PAPER_SIZES: dict[str, PaperSize] = {
    "boolq_semantic": PaperSize("1,076", 1076, False, _BECEL_T1),
    "snli_semantic": PaperSize("4,406", 4406, False, _BECEL_T1),
    "rte_semantic": PaperSize("248", 248, False, _BECEL_T1),
    "mrpc_semantic": PaperSize("202", 202, False, _BECEL_T1),
    "wic_semantic": PaperSize("140", 140, False, _BECEL_T1),
    "sst2_semantic": PaperSize("187", 187, False, _BECEL_T1),
    "ag_news_semantic": PaperSize("540", 540, False, _BECEL_T1),
    "boolq_negational": PaperSize("401", 401, False, _BECEL_T1),
    "snli_negational": PaperSize("2,204", 2204, False, _BECEL_T1),
    "rte_negational": PaperSize("153", 153, False, _BECEL_T1),
    "mrpc_negational": PaperSize("290", 290, False, _BECEL_T1),
    "snli_symmetric": PaperSize("3,237", 3237, False, _BECEL_T1),
    "rte_symmetric": PaperSize("1,241", 1241, False, _BECEL_T1),
    "mrpc_symmetric": PaperSize("3,668", 3668, False, _BECEL_T1),
    "wic_symmetric": PaperSize("5,428", 5428, False, _BECEL_T1),
    "snli_transitive": PaperSize("2,375", 2375, False, _BECEL_T1),
    "wic_transitive": PaperSize("3,162", 3162, False, _BECEL_T1),
    "sst2_additive": PaperSize("53K", 53000, True, _BECEL_T1),
    "ag_news_additive": PaperSize("53K", 53000, True, _BECEL_T1),
    "conv_ent_coherence": PaperSize("178", 178, False, _COH),
    "art_coherence": PaperSize("189", 189, False, _COH + " (200 annotated, 11 discarded)"),
    "mnli_calm": PaperSize("9.8K", 9800, True, _CALM_T6),
    "qnli_calm": PaperSize("5.5K", 5500, True, _CALM_T6),
    "rte_calm": PaperSize("277", 277, False, _CALM_T6),
    "mrpc_calm": PaperSize("408", 408, False, _CALM_T6),
    "qqp_calm": PaperSize("40K", 40000, True, _CALM_T6),
    "kornli_calm": PaperSize("10K", 10000, True, _CALM_T6 + "; the paper's own KorNLI sample"),
    "kornli_test_calm": PaperSize("10K", 10000, True,
                                  _CALM_T6 + "; the paper's own KorNLI sample"),
    "klue_nli_calm": PaperSize("1.5K", 1500, True, _CALM_T6 + "; half of KLUE dev"),
    "klue_sts_calm": PaperSize("260", 260, False, _CALM_T6 + "; half of KLUE dev"),
}
for _stem in ("mnli", "qnli", "rte", "mrpc", "qqp"):
    PAPER_SIZES[f"{_stem}_calm_t2t"] = PAPER_SIZES[f"{_stem}_calm"]


def matches_paper(items: int, size: PaperSize) -> bool:
    """Whether ``items`` equals the paper's size (at the paper's precision when rounded)."""
    if not size.rounded:
        return items == size.value
    digits = size.printed.rstrip("K")
    decimals = len(digits.split(".")[1]) if "." in digits else 0
    return round(items / 1000, decimals) == float(digits)


#: Labelled source examples each word-salad task transforms (the validation split the paper
#: uses; measured: ``len(consistency_bench.builders.salad.sources.read_records(task, resolver))``,
#: checked by
#: tests/test_card.py). A config with fewer groups left the others out.
SALAD_SOURCE_ROWS: dict[str, int] = {"mnli": 9815, "snli": 9842, "mrpc": 408, "sst2": 872}

_SALAD_WHERE = ("Gupta et al. section 5: each task's whole validation set (labelled examples; "
                "the paper prints no count)")
#: The word-salad configs the paper defines (its Table 6; no PBSMT for MRPC, CopySort for
#: pair tasks only), by task.
_SALAD_CONFIGS = {
    "mnli": ("sort", "reverse", "shuffle", "copysort", "pbsmt"),
    "snli": ("sort", "reverse", "shuffle", "copysort", "pbsmt"),
    "mrpc": ("sort", "reverse", "shuffle", "copysort"),
    "sst2": ("sort", "reverse", "shuffle", "pbsmt"),
}
for _task, _transforms in _SALAD_CONFIGS.items():
    for _transform in _transforms:
        PAPER_SIZES[f"{_task}_salad_{_transform}"] = PaperSize(
            f"{SALAD_SOURCE_ROWS[_task]:,}", SALAD_SOURCE_ROWS[_task], False, _SALAD_WHERE)


@dataclass(frozen=True)
class Deviation:
    """One known way a config departs from its paper.

    Attributes:
        title: A few words, shown in bold and in each config's section.
        configs: The configs it applies to (only those present are listed).
        text: What differs, with measured figures (each checked by tests/test_card.py).

    """

    title: str
    configs: tuple[str, ...]
    text: str


#: The static word-salad configs, in the card's order (task, then transformation).
_SALAD = tuple(f"{t}_salad_{x}" for t in ("mnli", "snli", "mrpc", "sst2", "qqp")
               for x in ("sort", "reverse", "shuffle", "copysort", "pbsmt")
               if f"{t}_salad_{x}" in FAMILIES["salad"].suites)
_PBSMT = ("mnli_salad_pbsmt", "snli_salad_pbsmt", "sst2_salad_pbsmt", "qqp_salad_pbsmt")
_KOREAN = ("kornli_calm", "kornli_test_calm", "klue_nli_calm", "klue_sts_calm")
_CALM_CLS = tuple(f"{t}_calm" for t in ("mnli", "qnli", "rte", "mrpc", "qqp")) + _KOREAN

#: Every known deviation from the papers (docs/suites/*.md; issue 21). Figures were measured
#: with ``python -m consistency_bench.builders.card.figures DIR`` on a build of the mirror.
DEVIATIONS: tuple[Deviation, ...] = (
    Deviation(
        "PBSMT stand-in, not trained on the training split", _PBSMT,
        "The paper trains one Moses system per label on that label's pairs *in the "
        "training set* and adjusts Moses's distortion and language-model weights until it "
        "stops copying its input. Here a stand-in built from NLTK's phrase-based parts (IBM "
        "Model 1 alignments, phrase extraction, a trigram language model, a stack decoder; "
        "Moses and KenLM cannot be installed) is trained on at most 2,000 pairs per label, "
        "the first in file order, disjoint from the evaluated rows: MNLI has no training "
        "split in the mirror, so dev-matched is split in a fixed half by premise (the rows "
        "of odd-numbered premises train the systems, only the 4,898 rows of even-numbered "
        "premises are evaluated); SNLI is trained on its test split (the evaluated rows come "
        "from its validation split); SST-2 on the 6,885 training sentences of GLUE's train "
        "file (first half to second half); a training pair that shares a text with an "
        "evaluated row is left out. In place of the paper's tuning the decoder prefers "
        "translation to copying (a penalty of -5 per copied word on each phrase pair) and "
        "drops unknown words (Moses's -drop-unknown). An output that is a permutation of its "
        "source is replaced by the next hypothesis of the decoder's n-best list, or the row "
        "is dropped. Outputs that are an exact token permutation of the text the system "
        "translated: mnli_salad_pbsmt 0 of 3,745 (0.0%), snli_salad_pbsmt 0 of 9,642 "
        "(0.0%), sst2_salad_pbsmt 0 of 515 (0.0%); output tokens found in that text: "
        "mnli_salad_pbsmt 47,928 of 52,676, snli_salad_pbsmt 68,295 of 86,507, "
        "sst2_salad_pbsmt 1,570 of 3,170 (version 3.0.0; docs/suites/word-salad.md). The "
        "PBSMT rows are comparable to the paper's in construction only, not in number."),
    Deviation(
        "Degenerate PBSMT outputs left out", _PBSMT,
        "An output is degenerate when it has 2 or fewer word tokens, holds only function "
        "words and punctuation (a closed list of English function words), or is a "
        "contiguous run of the words of the text the system translated or of the text it "
        "replaces (e.g. the premise without its first two words). Such an output destroys "
        "little a model could be tested on. Version 2.0.0 kept them: degenerate outputs "
        "mnli_salad_pbsmt 1,165 of 4,857 (24.0%), snli_salad_pbsmt 392 of 9,834 (4.0%), "
        "sst2_salad_pbsmt 405 of 857 (47.3%). Version 3.0.0 takes the next hypothesis of "
        "the decoder's n-best list (every hypothesis of its last stack, at most 22 distinct "
        "outputs, instead of 3) and drops the row when none is usable: degenerate outputs "
        "mnli_salad_pbsmt 0 of 3,745 (0.0%), snli_salad_pbsmt 0 of 9,642 (0.0%), "
        "sst2_salad_pbsmt 0 of 515 (0.0%). Groups: mnli_salad_pbsmt 4,857 before, 3,745 "
        "after (1,111 rows dropped for a degenerate output); snli_salad_pbsmt 9,834 before, "
        "9,642 after (194 dropped); sst2_salad_pbsmt 857 before, 515 after (342 dropped). "
        "The function words are the stand-in's: its per-label systems know few content "
        "words of an unseen text, and a later hypothesis of the same system rarely has "
        "other words (the longer n-best list keeps 25 MNLI, 50 SNLI and 28 SST-2 rows "
        "that 3 hypotheses would have dropped)."),
    Deviation(
        "SST-2 PBSMT output replaces the whole sentence", ("sst2_salad_pbsmt",),
        "Inferred reading: the paper translates the first half of the sentence into a "
        "second half and does not say whether the first half is kept; the output replaces "
        "the whole sentence."),
    Deviation(
        "Unchanged rows left out", _SALAD,
        "A source example whose transformation leaves the text unchanged (already sorted, "
        "one token, no PBSMT hypothesis that is not empty, a copy of its source or target, "
        "a permutation of its source or degenerate) is left out with its original, and so "
        "is one whose tokens have no order that keeps no bigram of the original (final "
        "punctuation last): Shuffle cannot meet its rule there (mnli_salad_shuffle 2 rows: "
        "\"it gets it.\" and \"no, no\"). The paper transforms the whole validation set and "
        "says nothing of such rows. Left out per config: see the list below."),
    Deviation(
        "One shuffle seed", tuple(f"{t}_salad_shuffle" for t in ("mnli", "snli", "mrpc",
                                                                  "sst2", "qqp")),
        "The paper averages Shuffle over 5 random seeds; each config holds one shuffle "
        "(seed 20210202, derived per row)."),
    Deviation(
        "Transformed text lower-cased", _SALAD,
        "The transformed text is lower-cased (the untouched first text of a pair keeps its "
        "case). Inferred reading: every transformed example the paper prints is lower-case; "
        "the paper does not state a casing rule."),
    Deviation(
        "Additive merge order and count", ("sst2_additive", "ag_news_additive"),
        "As the paper says, every combination of two same-label points whose merged length "
        "is within the 75% quantile of the training lengths is kept, none sampled: "
        "sst2_additive 27,270 combinations and ag_news_additive 26,375 combinations, where "
        "the paper prints about 53K for each. Counting both merge orders of every combination "
        "(ordered pairs) gives 54,540 and 52,750, close to the paper's 53K: the paper may "
        "have counted both orders, but \"all possible combinations\" reads as unordered and it "
        "does not say. The paper names no merge order: each combination is "
        "merged in one order, chosen per combination from sha256 of (seed 20221012, its two "
        "row positions), so a combination is one group and one unit of the confidence "
        "intervals. Groups whose reverse order is also a group: sst2_additive 0 of 27,270; "
        "ag_news_additive 0 of 26,375. Lengths are counted in regex word and punctuation "
        "tokens (the paper names no tokenizer), and the count is sensitive to the cutoff: "
        "SST-2 26 / 27 / 28 tokens give 23,740 / 27,270 / 31,088 combinations, AG News "
        "42 / 43 / 44 give 21,513 / 26,375 / 32,278. A sentence occurs in many combinations "
        "(606 of 872 SST-2 sentences, 1,386 of 3,800 AG News texts), which the intervals, "
        "drawn over combinations, do not account for."),
    Deviation(
        "Invalid-input threshold tuned on the suite", _SALAD,
        "Scoring with the toolkit: the paper tunes the rejection threshold theta (and the "
        "temperature of its temperature scaling) on 10% of the training set; the toolkit "
        "searches theta on the scored suite itself unless `salad_theta` is given, and scales "
        "the probabilities only when `salad_temperature` is given (default: no scaling)."),
    Deviation(
        "Additive length cutoff from stand-in data", ("sst2_additive",),
        "The 75% length quantile is read from the 6,885 training *sentences* of GLUE's "
        "SST-2 train (the phrases that sit inside no other phrase; the file itself holds "
        "67,349 phrases, whose quantile, 14 tokens, keeps only 1,550 combinations): 27 tokens."),
    Deviation(
        "Additive length cutoff from stand-in data", ("ag_news_additive",),
        "AG News train is not mirrored: the length quantile (43 tokens) comes from BECEL's "
        "validation half of the original test split, disjoint from the evaluated half. The "
        "classes are uneven after the length filter: World 9,235, Sports 2,525, Business "
        "2,260, Sci/Tech 12,355 combinations; the scorer reports tau per class "
        "(`tau_add_per_class`)."),
    Deviation(
        "CALM pair joined by the model's tokenizer", _CALM_CLS,
        "Inferred reading: the paper's examples (its Tables 2, 9 and 10) give a model two "
        "inputs, each with its indicator, and do not say how they are joined. `text` and "
        "`text_pair` hold the two inputs; a pair encoder gets them as a tokenizer text pair "
        "(its own separator between the segments), a causal-LM prompt joins them with one "
        "space (`Sentence1: <s1> Sentence2: <s2>`)."),
    Deviation(
        "Korean splits", _KOREAN,
        "The paper sampled its own Korean test sets with an unpublished seed (KLUE: half of "
        "dev; KorNLI: from train) and does not print its Korean indicators; we use the full "
        "XNLI-ko dev and test sets (two configs), the full KLUE dev sets and the indicators "
        "전제 / 가설 and 문장1 / 문장2."),
    Deviation(
        "Negation rule not in the paper", ("snli_negational", "mrpc_negational",
                                           "boolq_negational"),
        "The release tags some rows `rm_negation` (an existing negation removed: 15 SNLI, "
        "11 MRPC, 2 BoolQ rows), a rule the paper does not describe; they are kept."),
    Deviation(
        "Fewer Conversational Entailment examples", ("conv_ent_coherence",),
        "The paper reports 178 Conversational Entailment test examples; the released "
        "annotation file has 172 (99 positive, 73 negative)."),
    Deviation(
        "All six ART spans scored", ("art_coherence",),
        "The authors' code visits only multi-sentence spans and keeps the flag of the last "
        "one; we score all six spans, as the paper's section 3.2 defines. The confidence "
        "threshold theta is swept on the scored data itself unless fixed (optimistic)."),
)

#: Configs of a registered family that the build could not make (their source is absent).
ABSENT_NOTE = (
    "Not built: {names}. Their source is not in the corpus mirror (QQP: the GLUE archive "
    "cannot be fetched or checksummed here); a local copy builds them (docs/suites/calm.md)."
)

#: The paper's gradient-based word-salad transformations (its Tables 3 and 6): never built by
#: ``build``, because they depend on the model under test.
GRADIENT_NOTE = (
    "Not built, model-dependent: the word-salad paper's gradient-based transformations "
    "Drop, Repeat, Replace and CopyOne (its Tables 3 and 6). Which tokens they drop, "
    "repeat, replace or copy is chosen by the token importance (input embedding times the "
    "gradient of the loss) of the model under test, so no config fits every model. "
    "`consistency-bench salad --model PATH --suite <task>_salad_gradient --data DIR` makes "
    "the four for one fine-tuned classifier and writes them into DIR as "
    "`<task>_salad_<drop|repeat|replace|copyone>_<tag>` (CopyOne for pair tasks only), "
    "with suites.json and this card updated (docs/suites/word-salad.md). {present}"
)

#: Every column a config can have, with its meaning (base columns first, then extras).
FIELDS: dict[str, str] = {
    "id": "Unique row id, `<group>/<variant>`.",
    "suite": "The config the row belongs to.",
    "task": "Task key (`snli`, `mrpc`, ...); gives the label names.",
    "group": "The rows compared with each other share it: an original row and its "
    "perturbed rows, one test item. Transitive configs: every row is a group of its own (a "
    "source row, or a derived row, whose two antecedents are source rows that other derived "
    "rows share too), and a test item is a derived row (`test_items` in `suites.json`).",
    "variant": "The row's role in its group: `original`, `paraphrase`, `negated`, "
    "`swapped`, `source` / `transitive`, `first` / `second` / `merged`, `reverse`, "
    "`signal:<symbol>`, `span:<i>-<j>`, or the word-salad transformation.",
    "text": "First input (premise, sentence1, question, the sentence; CALM: the first "
    "indicator-sentence block, or the whole input in the `_t2t` configs).",
    "text_pair": "Second input (hypothesis, sentence2, passage; CALM: the second "
    "indicator-sentence block), or null for single-text tasks and the CALM `_t2t` configs.",
    "label": "Gold label (ClassLabel of the task's label names), or null where the row has "
    "no correct label (word salad, a span with no confident choice).",
    "source_file": "Mirror path of the source file the row comes from.",
    "source_row": "0-based data row (or line) of that source file.",
    "antecedent_ids": "Derived rows (transitive, additive merged): the ids of the two rows "
    "the derived row is built from; empty elsewhere.",
    "constraint": "Derived rows: what the prediction must satisfy given the antecedents' "
    "predictions, `is:<label>` or `not:<label>`; empty elsewhere.",
    "rule": "Derived rows: the consistency rule tested, as the paper writes it; empty "
    "elsewhere.",
    "tag": "Negational rows: how the negated text was made (`negation`, `antonym`, "
    "`rm_negation`).",
    "word": "WiC: the target word.",
    "start1": "WiC: character start of the target word in `text`.",
    "end1": "WiC: character end (exclusive) of the target word in `text`.",
    "start2": "WiC: character start of the target word in `text_pair`.",
    "end2": "WiC: character end (exclusive) of the target word in `text_pair`.",
    "raw_text": "CALM: the first sentence before formatting (task order).",
    "raw_text_pair": "CALM: the second sentence before formatting (task order).",
    "transform": "Word salad: the transformation that made the row (empty on originals).",
    "transform_family": "Word salad: `lexical` or `statistical` (`gradient` in the "
    "model-specific configs that `consistency-bench salad` makes); empty on originals.",
    "agreement_with": "Word salad: what the transformed row's prediction is compared with: "
    "`original` (the original row's prediction) or a default label name (CopySort; CopyOne "
    "in the model-specific configs); empty on originals.",
    "model": "Model-specific word salad: the model whose token importances chose the tokens.",
    "span_start": "Coherence: first unit (dialog turn or story sentence) of the span, 0-based.",
    "span_end": "Coherence: last unit of the span, inclusive.",
    "n_units": "Coherence: number of units of the whole example.",
    "span_label": "Coherence: the span's gold label as text (`no_confident_choice` for an ART "
    "span that allows no choice).",
}
