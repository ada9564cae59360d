"""``review --reproduce N``: reproduce each accepted pull request's entry before commenting.

One step of the review loop (:mod:`consistency_bench.leaderboard.review.loop`):
:func:`reproduce_step`,
called once
per pull request after its review and before its comment is posted. For an accepted request:

* with a ``run.json`` whose model is open and loadable here (the Hub id at its commit, from
  the cache or the network) or a baseline whose training data is here: the entry is
  reproduced on ``N`` groups per suite on the maintainer's device; the comment reports the
  figures. A failed reproduction refuses the request (the predictions are not what the
  recorded model gives); a passed one is kept on the review (``reproduction``) and ``--merge``
  stores it with the entry (``submit(..., reproduction=...)``: in the same rename).
* without a run record, a served model, or a model that cannot be read here (closed, gated,
  no network): the comment says so and why; the request is judged as without ``--reproduce``.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from consistency_bench.bench.errors import BenchError


def _section(title: str, body: str) -> str:
    return f"\n\n**Reproduction** ({title}): {body}"


def reproduce_review(review, data_dir: str | os.PathLike, groups: int, *,
                     device: str | None = None, seed: int = 0) -> None:
    """Reproduce one accepted review's entry; update its comment, verdict and reproduction.

    Args:
        review: A :class:`consistency_bench.leaderboard.review.checks.Review` with verdict
        ``accepted``.
        data_dir: The published suites (the review's ``--data``).
        groups: Groups sampled per suite.
        device: The maintainer's device (None: auto).
        seed: Seed of the sample.

    """
    from consistency_bench.bench.predictions.files import read_payload
    from consistency_bench.bench.reproduce.rerun import NotReproducible
    from consistency_bench.bench.runrecord.schema import read_record
    from consistency_bench.leaderboard.reproduce.rerun import reproduce_files
    from consistency_bench.leaderboard.reproduce.run_records import RUN
    from consistency_bench.leaderboard.reproduce.shown import summary_line
    from consistency_bench.leaderboard.submissions.meta import META, PREDICTIONS, read_meta

    run = review.files.get(RUN)
    if run is None:
        review.comment += _section("not run", "the request has no run.json (the record "
                                   "`consistency-bench predict` writes beside the prediction "
                                   "file), so the entry is not reproducible.")
        return
    predictions = Path(review.files[PREDICTIONS])
    results = dict(review.results or {})
    results["predictions"] = {**results.get("predictions", {}), "sha256": hashlib.sha256(
        read_payload(predictions)).hexdigest()}  # of the JSONL, as the entry will store it
    try:
        report = reproduce_files(read_record(run), read_meta(review.files[META]), results,
                                 predictions, data_dir, groups=groups, seed=seed,
                                 device=device)
    except NotReproducible as exc:
        review.comment += _section("not run here", str(exc))
        return
    except BenchError as exc:
        review.comment += _section("not run", f"{exc}")
        return
    line = summary_line(report)
    if report["status"] != "passed":
        review.verdict, review.reason = "refused", f"reproduction failed: {line}"
        review.posted = True  # a new verdict at this head: its comment is due
        quoted = review.reason.replace("`", "'")
        review.comment = (f"Refused by `consistency-bench review`:\n\n```\n{quoted}\n```\n\n"
                          "The recorded model, run again on a sample of the entry's groups, "
                          "does not give the submitted predictions. Fix the request and push "
                          "to this pull request, or open a new one.")
        return
    review.reproduction = {**report, "entry": review.slug}
    review.comment += _section(f"{groups} groups per suite, seed {seed}", line)


@dataclass(frozen=True)
class ReproduceStep:
    """What ``review --reproduce N [--device D]`` asks of every accepted request."""

    #: The published suites (the review's ``--data``).
    data_dir: str | os.PathLike
    #: Groups sampled per suite (``N``).
    groups: int
    #: The maintainer's device (None: auto).
    device: str | None = None
    #: Seed of the sample.
    seed: int = 0


def reproduce_step(review, step: ReproduceStep | None, log: Callable[[str], None]) -> None:
    """The review loop's reproduction step: one call per request, after its review.

    Does nothing without ``step`` (no ``--reproduce``) or unless the request was accepted.
    Else :func:`reproduce_review`, and one log line. An unexpected error of the run (the
    device out of memory, a broken model file) does not stop the loop or refuse the request:
    the comment says that the reproduction was not run, and why.
    """
    if step is None or review.verdict != "accepted":
        return
    try:
        reproduce_review(review, step.data_dir, step.groups, device=step.device,
                         seed=step.seed)
    except Exception as exc:  # any error: one line in the comment, no traceback
        first = (str(exc).splitlines() or [""])[0][:300]
        review.comment += _section("not run", f"the run stopped: {type(exc).__name__}: "
                                   f"{first}; the request is judged as without --reproduce")
    state = ("reproduced" if review.reproduction is not None
             else "refused: reproduction failed" if review.verdict == "refused"
             else "not reproduced")
    log(f"#{review.num}: {state}")
