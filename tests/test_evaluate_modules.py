import evaluate
import pytest

from bench.evaluate_modules import path


def test_evaluate_load_offline_matches_the_harness():
    sem = evaluate.load(path(), "tau_sem")
    # BECEL Figure 2: symmetric inconsistency 40%.
    original = [1] * 8 + [0] * 2
    swapped = [0, 0] + [1] * 8
    assert sem.compute(predictions=swapped, references=original)["tau_sem"] == pytest.approx(0.4)
    neg = evaluate.load(path(), "tau_neg")
    negated = [0, 0, 0, 0, 1, 1, 0, 0, 0, 0]
    assert neg.compute(predictions=negated, references=original)["tau_neg"] == pytest.approx(0.4)
    c_r = evaluate.load(path(), "c_r")
    assert c_r.compute(predictions=[0, 1, 2, -1], references=[0, 1, 1, -1])["c_r"] == 0.5


def test_additive_conditioning():
    add = evaluate.load(path(), "tau_add")
    out = add.compute(
        predictions=[1, 0, 1, 0], references=[1, 1, 1, 1],
        first_predictions=[1, 1, 0, 1], second_predictions=[1, 1, 1, 1],
    )
    assert out == {"tau_add": pytest.approx(2 / 3), "n_conditioned": 3}
    with pytest.raises(ValueError, match="first_predictions"):
        add.compute(predictions=[1], references=[1])
