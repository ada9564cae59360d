"""What a user would write without the harness: pandas, per group (BECEL's style), vectorised.

Reads the prediction JSONL and every suite's Parquet file with pandas, joins them on ``id``
and computes each suite's main score per group, as BECEL's evaluation scripts do per test
case, but vectorised the way a pandas user would: one pivot (group x variant) for the paired
kinds, an explode + merge + groupby for the transitive and additive constraints. No
validation, no confidence intervals. A first version iterating ``groupby("group")`` in Python
took minutes for every suite, a straw man; this one is the fair reference. Covers the
BECEL kinds, CALM's C_R and word salad's agreement; coherence suites are left out (listed).
``bench_score.py`` runs it as a whole process beside ``consistency-bench score`` and checks
that the main scores agree. Usage::

    python benchmarks/pandas_reference.py PREDICTIONS.jsonl DATA_DIR [--out scores.json]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd

PERTURBED = {"semantic": "paraphrase", "negational": "negated", "symmetric": "swapped"}


def _label_index(value, names: list[str]) -> int:
    return names.index(value) if isinstance(value, str) else int(value)


def _pivot(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per group, one column per variant, predictions as values."""
    return frame.pivot(index="group", columns="variant", values="pred")


def score_suite(kind: str, frame: pd.DataFrame, names: list[str]) -> float | None:
    """Main score of one suite from its rows joined with their predictions (``pred``)."""
    if kind in PERTURBED:
        by_group = _pivot(frame)
        same = (by_group["original"] == by_group[PERTURBED[kind]]).mean()
        return float(same if kind == "negational" else 1 - same)
    if kind == "calm":
        by_group = _pivot(frame)
        return float((by_group["original"] == by_group["reverse"]).mean())
    if kind == "salad":
        original = frame[frame["variant"] == "original"].set_index("group")["pred"]
        salad = frame[frame["variant"] != "original"].set_index("group")
        reference = original.reindex(salad.index)
        fixed = salad["agreement_with"] != "original"
        reference[fixed] = salad.loc[fixed, "agreement_with"].map(names.index)
        return float((salad["pred"] == reference).mean())
    if kind in ("transitive", "additive"):
        derived = frame[frame["antecedent_ids"].map(len) > 0][["id", "antecedent_ids",
                                                              "constraint", "pred"]]
        pairs = derived.explode("antecedent_ids").merge(
            frame[["id", "pred", "label"]].rename(
                columns={"id": "antecedent_ids", "pred": "a_pred", "label": "a_label"}
            ),
            on="antecedent_ids",
        )
        pairs["correct"] = pairs["a_pred"] == pairs["a_label"]
        in_condition = pairs.groupby("id")["correct"].all()
        derived = derived.set_index("id")[in_condition.reindex(derived["id"]).to_numpy()]
        if derived.empty:
            return None
        op = derived["constraint"].str.split(":").str[0]
        label = derived["constraint"].str.split(":").str[1]
        hit = derived["pred"].map(names.__getitem__) == label
        ok = (hit & (op == "is")) | (~hit & (op != "is"))
        return float(1 - ok.mean())
    return None


def main() -> None:
    """Print (or write) ``{suite: main score}``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("predictions", type=Path)
    parser.add_argument("data", type=Path)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    preds = pd.read_json(args.predictions, lines=True)
    manifest = json.loads((args.data / "suites.json").read_text())["suites"]
    preds["suite"] = preds["id"].str.split("/", n=1).str[0]
    scores, left_out = {}, []
    for suite, suite_preds in preds.groupby("suite"):
        entry = manifest[suite]
        rows = pd.read_parquet(args.data / entry["path"])
        if len(suite_preds) != len(rows):
            continue
        names = entry["label_names"]
        suite_preds = suite_preds.assign(
            pred=[_label_index(v, names) for v in suite_preds["label"]]
        )
        frame = rows.merge(suite_preds[["id", "pred"]], on="id", how="left")
        score = score_suite(entry["kind"], frame, names)
        if score is None:
            left_out.append(suite)
        else:
            scores[suite] = score
    text = json.dumps({"scores": scores, "left_out": left_out}, indent=1)
    if args.out:
        args.out.write_text(text)
    else:
        print(text)


if __name__ == "__main__":
    main()
