"""The verified-cells cache of ``leaderboard --data`` (issue 33, items 1 and 2).

Real suites from the mirror, real ``submit``; each render through
:func:`consistency_bench.leaderboard.webpage.build_site.build_site`, which reports which entries it
scored
again:

- a cached render writes the same bytes as a cold one (``--no-cache``), with nothing changed,
  with an entry added, and after the cache is deleted;
- exactly the entries whose key changed are scored again: a suite rebuilt (only the entries
  that touch it), a byte of the stored predictions, the harness version, the scorer code;
- a hand-edited ``results.json`` is refused with a warm cache as without it; a record edited by
  hand, or forged with another key, is never believed;
- the cache is a dot-folder of the submissions (never an entry, never published), ignored by
  git, written atomically, and may be deleted or broken at any time.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
import yaml

from consistency_bench.bench.io.manifest import read_manifest
from consistency_bench.bench.scoring.engine import score_file
from consistency_bench.leaderboard.cache import keys
from consistency_bench.leaderboard.cache.store import (
    FOLDER,
    CellStore,
    Record,
    decode,
    encode,
    load_key,
)
from consistency_bench.leaderboard.submissions.storage import submit
from consistency_bench.leaderboard.webpage.build_site import build_site
from tests.helpers import build_suites

SUITES = ["rte_semantic", "rte_negational", "mrpc_salad_reverse"]
META = {"model": "m", "revision": "r", "license": "mit", "link": "https://example.org/m",
        "contact": "c@example.org", "date": "2024-01-01"}


@pytest.fixture(scope="module")
def built(corpora: Path, tmp_path_factory) -> Path:
    return build_suites(corpora, tmp_path_factory.mktemp("cache") / "cb", SUITES)


def _flip(row_id: str, share: float) -> bool:
    return int(hashlib.sha256(row_id.encode()).hexdigest()[:8], 16) / 2**32 < share


def write(folder: Path, out: Path, suites: list[str], share: float | None) -> Path:
    """Gold (or 0 where there is none) with a hashed ``share`` flipped; ``None``: always 0."""
    manifest = read_manifest(folder)
    with open(out, "w") as fh:
        for suite in suites:
            table = pq.read_table(folder / manifest[suite]["path"], columns=["id", "label"])
            for row_id, gold in zip(*(table.column(c).to_pylist() for c in ("id", "label")),
                                    strict=True):
                label = 0 if share is None or gold is None else gold
                if share is not None and _flip(row_id, share):
                    label = 1 - label
                fh.write(json.dumps({"id": row_id, "label": label,
                                     "probs": [0.8, 0.2] if label == 0 else [0.2, 0.8]}) + "\n")
    return out


@pytest.fixture(scope="module")
def stored(built, tmp_path_factory) -> Path:
    """Four entries, submitted once: three over every suite, one over ``rte_semantic`` only."""
    root = tmp_path_factory.mktemp("stored")
    (root / "meta.yaml").write_text(yaml.safe_dump(META))
    for name, suites, share in (("good", SUITES, 0.05), ("fair", SUITES, 0.2),
                                ("const", SUITES, None), ("rte-only", SUITES[:1], 0.1)):
        write(built, root / f"{name}.jsonl", suites, share)
        submit(root / f"{name}.jsonl", name=name, meta_path=root / "meta.yaml",
               root=root / "subs", data_dir=built, variant=f"synthetic {name}")  # one model
    return root


@pytest.fixture
def board(stored, tmp_path, monkeypatch):
    """A copy of the stored entries, and a cache key of this test's own."""
    monkeypatch.setenv("CONSISTENCY_BENCH_CACHE_KEY", str(tmp_path / "key"))
    shutil.copytree(stored / "subs", tmp_path / "subs")
    shutil.copy(stored / "meta.yaml", tmp_path / "meta.yaml")
    return tmp_path


def render(board: Path, data: Path, out: str, **kwargs):
    warnings: list[str] = []
    report = build_site(board / "subs", board / out, data, warn=warnings.append, **kwargs)
    return report, warnings


def files(site: Path) -> dict[str, bytes]:
    return {p.relative_to(site).as_posix(): p.read_bytes()
            for p in sorted(site.rglob("*")) if p.is_file()}


def test_cached_renders_are_byte_identical_to_cold(board, built):
    cold, w0 = render(board, built, "cold", cache=False)
    assert not (board / "subs" / FOLDER).exists()  # --no-cache writes nothing
    first, w1 = render(board, built, "first")
    warm, w2 = render(board, built, "warm")
    assert w0 == w1 == w2 == []
    assert sorted(cold.recomputed) == sorted(first.recomputed) == ["const", "fair", "good",
                                                                     "rte-only"]
    assert warm.recomputed == []
    assert files(board / "cold") == files(board / "first") == files(board / "warm")
    board_json = json.loads((board / "warm" / "leaderboard.json").read_text())
    assert board_json["views"]["all"]["rows"][0]["rank_low"] is not None  # intervals made
    # one entry added: only it is scored; the page is what a cold render of all five gives
    write(built, board / "late.jsonl", SUITES, 0.1)
    submit(board / "late.jsonl", name="late", meta_path=board / "meta.yaml",
           root=board / "subs", data_dir=built, variant="synthetic late")
    added, _ = render(board, built, "added")
    again, _ = render(board, built, "cold2", cache=False)
    assert added.recomputed == ["late"] and len(again.recomputed) == 5
    assert files(board / "added") == files(board / "cold2")
    # deleted at any time: the next render makes it again, the same page
    shutil.rmtree(board / "subs" / FOLDER)
    remade, _ = render(board, built, "remade")
    assert len(remade.recomputed) == 5 and files(board / "remade") == files(board / "cold2")


def _rebuild(built: Path, tmp: Path, suite: str) -> Path:
    """A copy of the folder where ``suite``'s Parquet file has other bytes (same rows)."""
    copy = tmp / "rebuilt"
    shutil.copytree(built, copy)
    path = copy / read_manifest(built)[suite]["path"]
    pq.write_table(pq.read_table(path), path, compression="gzip")
    suites = json.loads((copy / "suites.json").read_text())
    suites["suites"][suite]["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    (copy / "suites.json").write_text(json.dumps(suites))
    return copy


def test_exactly_the_changed_entries_are_scored_again(board, built, monkeypatch):
    render(board, built, "site")
    # a suite rebuilt: the entries that touch it, and only those
    rebuilt = _rebuild(built, board, "rte_negational")
    report, warnings = render(board, rebuilt, "site")
    assert sorted(report.recomputed) == ["const", "fair", "good"]
    assert report.entries == 1 and len(warnings) == 3  # scored on other suite files
    assert all("was scored on other suite files" in w for w in warnings)
    assert render(board, built, "site")[0].recomputed == ["const", "fair", "good"]
    # a byte of the stored predictions (the same content, compressed otherwise): scored again,
    # and still verified
    stored = board / "subs" / "good" / "predictions.jsonl.gz"
    stored.write_bytes(gzip.compress(gzip.decompress(stored.read_bytes()), compresslevel=1))
    report, warnings = render(board, built, "site")
    assert report.recomputed == ["good"] and warnings == [] and report.entries == 4
    # a new harness version, or other scorer code: everything
    keys._fixed.cache_clear()
    monkeypatch.setattr("consistency_bench.bench.__version__", "99.0.0")
    assert len(render(board, built, "site")[0].recomputed) == 4
    keys._fixed.cache_clear()
    monkeypatch.setattr(keys, "code_version", lambda: "other scorer code")
    assert len(render(board, built, "site")[0].recomputed) == 4
    assert render(board, built, "site")[0].recomputed == []
    keys._fixed.cache_clear()


def test_a_changed_prediction_is_refused_with_the_cache_as_without(board, built):
    render(board, built, "site")
    stored = board / "subs" / "fair" / "predictions.jsonl.gz"
    lines = gzip.decompress(stored.read_bytes()).decode().splitlines(keepends=True)
    row = json.loads(lines[0])
    row["label"] = 1 - row["label"]
    lines[0] = json.dumps(row) + "\n"
    stored.write_bytes(gzip.compress("".join(lines).encode()))
    for cache in (True, False):
        report, warnings = render(board, built, "site", cache=cache)
        assert report.entries == 3 and "fair" in report.recomputed
        assert len(warnings) == 1 and "the predictions changed after scoring" in warnings[0]


def _edit_results(board: Path) -> None:
    """A hand edit that keeps the stored keys consistent with one another (cc follows ca)."""
    path = board / "subs" / "fair" / "results.json"
    results = json.loads(path.read_text())
    res = results["suites"]["rte_semantic"]
    res["consistent_accuracy"] = 0.99
    c = res["consistent_accuracy_chance"]
    res["consistent_accuracy_cc"] = (0.99 - c) / (1 - c)
    path.write_text(json.dumps(results))


def test_hand_edits_are_caught_with_a_warm_cache(board, built, tmp_path):
    render(board, built, "site")
    _edit_results(board)
    for _ in range(2):  # from the cache, and refused: on every render
        report, warnings = render(board, built, "site")
        assert report.recomputed == [] and report.entries == 3
        assert len(warnings) == 1 and "suite 'rte_semantic' consistent_accuracy stored 0.99" \
            in warnings[0]
    # the record edited to agree with the edited results (the same length, so only its HMAC
    # tells): never believed, the entry is scored again and refused
    path = CellStore(board / "subs", load_key()).path("fair")
    blob = path.read_bytes()
    at = blob.index(b'"rte_semantic":{')
    at = blob.index(b'"consistent_accuracy":', at) + len(b'"consistent_accuracy":')
    end = blob.index(b",", at)
    path.write_bytes(blob[:at] + b"0.99".ljust(end - at, b"0") + blob[end:])
    record = decode(blob, load_key())
    forged = json.loads(json.dumps(record.data))
    forged["fresh"]["rte_semantic"]["consistent_accuracy"] = 0.99
    report, warnings = render(board, built, "site")
    assert report.recomputed == ["fair"] and report.entries == 3
    assert any("HMAC does not match" in w for w in warnings)
    assert any("consistent_accuracy stored 0.99" in w for w in warnings)
    # forged whole with another key (e.g. committed by someone else): never read
    path.write_bytes(encode(Record(record.key, forged, record.arrays),
                            b"another key 32 bytes long......!"))
    report, warnings = render(board, built, "site")
    assert report.recomputed == ["fair"] and report.entries == 3
    assert len(warnings) == 1 and "consistent_accuracy stored 0.99" in warnings[0]


def test_the_cache_folder_is_private_atomic_and_disposable(board, built, tmp_path):
    render(board, built, "site")
    folder = board / "subs" / FOLDER
    assert sorted(p.name for p in folder.iterdir()) == [
        ".gitignore", "const.cells", "fair.cells", "good.cells", "rte-only.cells"]
    assert (folder / ".gitignore").read_text().splitlines()[-1] == "*"
    record = json.loads((board / "site" / ".consistency-bench-owned.json").read_text())
    assert FOLDER not in json.dumps(record)  # not an entry, never published
    # a truncated record (a crash of a writer that was not atomic): read as none, rewritten
    (folder / "good.cells").write_bytes((folder / "good.cells").read_bytes()[:1000])
    report, warnings = render(board, built, "site")
    assert report.recomputed == ["good"] and warnings and "entry recomputed" in warnings[0]
    assert not [p for p in folder.iterdir() if p.name.startswith(".good")]  # no temp left
    # the record of an entry that is gone is removed; files that are not records are kept
    (folder / "notes.txt").write_text("mine")
    shutil.rmtree(board / "subs" / "const")
    render(board, built, "site")
    assert not (folder / "const.cells").exists() and (folder / "notes.txt").exists()
    # a folder that is a link is never written through: the cache is off, the page the same
    shutil.rmtree(folder)
    (tmp_path / "elsewhere").mkdir()
    folder.symlink_to(tmp_path / "elsewhere")
    report, warnings = render(board, built, "linked")
    assert len(report.recomputed) == 3 and any("symbolic link" in w for w in warnings)
    assert list((tmp_path / "elsewhere").iterdir()) == []
    assert files(board / "linked") == files(board / "site")


def test_the_review_render_scores_only_the_merged_entry(board, built, monkeypatch):
    """``review --merge`` stores the pull request's entry, then renders with ``render_site``."""
    from consistency_bench.leaderboard.cache import verified
    from consistency_bench.leaderboard.review.loop import render_site

    render(board, built, "site")
    write(built, board / "late.jsonl", SUITES, 0.1)
    submit(board / "late.jsonl", name="late", meta_path=board / "meta.yaml",
           root=board / "subs", data_dir=built, variant="synthetic late")
    scored: list[str] = []
    real = verified.recompute

    def spy(path, *args, **kwargs):
        scored.append(path.parent.name)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(verified, "recompute", spy)
    render_site(board / "subs", board / "site", built)
    assert scored == ["late"]
    rows = json.loads((board / "site" / "leaderboard.json").read_text())["views"]["all"]["rows"]
    assert "late" in {r["name"] for r in rows} and rows[0]["rank_low"] is not None


def test_samples_are_the_same_bits_whatever_the_batch():
    """A cell's sample does not depend on which other cells were computed with it."""
    from consistency_bench.bench.metrics.consistent.salad_score import SALAD_STATISTIC, salad_codes
    from consistency_bench.leaderboard.ranking.resample import sample_cells

    rng = np.random.default_rng(0)
    n = 3000
    gold, salad = rng.integers(0, 2, size=n), rng.integers(0, 2, size=n)
    orig = np.where(rng.random(n) < 0.8, gold, 1 - gold)
    spec = {"statistic": SALAD_STATISTIC, "n_labels": 2, "copy": False}

    def coded(unsure: float) -> np.ndarray:  # word-salad v3 codes, with a confidence level
        return salad_codes(orig, gold, salad, orig, 2,
                           salad_uncertainty=np.full(n, unsure)).astype(float)

    cells = [(rng.choice([0.0, 0.7, 1.3], size=n), None, 0.25),
             (rng.choice([0.0, 1.0], size=n), None, 0.5),
             (coded(0.9), spec, 0.0),
             (rng.choice(np.arange(12) / 11, size=n), None, 0.0)]  # counted by bincount
    # four cells: counted through the product; one or two: each draw's value looked up
    # (resample.GATHER_CELLS); the same integers either way, so the same bits
    together = sample_cells("s", "u", cells)
    for cell, sample in zip(cells, together, strict=True):
        [alone] = sample_cells("s", "u", [cell])
        assert alone.scores.tobytes() == sample.scores.tobytes()
        assert alone.mean == sample.mean
    for pair in ((0, 3), (1, 2)):
        both = sample_cells("s", "u", [cells[i] for i in pair])
        assert [b.scores.tobytes() for b in both] == [together[i].scores.tobytes() for i in pair]
    assert together[1].binary is not None and together[0].binary is None
    assert together[2].mean is None and together[2].binary is None
    # the confidence level in the codes reaches the resampled scores: a confident answerer
    # (the same labels at uncertainty 0.1) scores lower on every resample
    [confident] = sample_cells("s", "u", [(coded(0.1), spec, 0.0)])
    assert (confident.scores < together[2].scores).all()
    other = sample_cells("s", "v", cells[:1])[0]  # another unit set: other draws
    assert other.scores.tobytes() != together[0].scores.tobytes()


def test_the_code_hash_covers_the_comparison(tmp_path, monkeypatch):
    """A record remembers that ``results.json`` passed ``leaderboard/stored.py``'s comparison
    (issue 27 added the ``tasks`` check there), so a change of that file is a new key."""
    import consistency_bench.leaderboard.stored

    before = keys.code_version()
    copy = tmp_path / "stored.py"
    stored_py = Path(consistency_bench.leaderboard.stored.__file__)
    copy.write_bytes(stored_py.read_bytes() + b"\n# changed\n")
    monkeypatch.setattr(consistency_bench.leaderboard.stored, "__file__", str(copy))
    keys.code_version.cache_clear()
    try:
        assert keys.code_version() != before
    finally:
        monkeypatch.undo()
        keys.code_version.cache_clear()
    assert keys.code_version() == before


def test_scores_passed_to_submit_and_the_cache_must_be_of_the_stored_bytes(board, built):
    """``submit(scored=...)`` and ``remember_entry`` (``review --merge``, issue 33 item 2).

    Results computed for other predictions are refused (nothing stored); a Recomputed of
    another file writes no record; the right one writes the render's record, byte for byte.
    """
    from consistency_bench.bench.errors import ConfigError
    from consistency_bench.bench.scoring.engine import score_file_recomputed
    from consistency_bench.leaderboard.cache.verified import remember_entry, verify_entries
    from consistency_bench.leaderboard.submissions.storage import ScoredFile

    late = write(built, board / "late.jsonl", SUITES, 0.1)
    other = write(built, board / "other.jsonl", SUITES, 0.3)
    results, fresh = score_file_recomputed(late, built)
    _, wrong = score_file_recomputed(other, built)
    digest = hashlib.sha256(late.read_bytes()).hexdigest()
    with pytest.raises(ConfigError, match="scores passed to submit are those of other"):
        submit(other, name="late", meta_path=board / "meta.yaml", root=board / "subs",
               data_dir=built, variant="synthetic late", scored=ScoredFile(digest, results))
    assert not (board / "subs" / "late").exists()
    entry = submit(late, name="late", meta_path=board / "meta.yaml", root=board / "subs",
                   data_dir=built, variant="synthetic late", scored=ScoredFile(digest, results))
    assert entry.results["suites"] == score_file(late, built)["suites"]
    warnings: list[str] = []
    assert not remember_entry(board / "subs", entry, wrong, warnings.append)
    assert not (board / "subs" / FOLDER / "late.cells").exists() and warnings
    assert remember_entry(board / "subs", entry, fresh)
    made = (board / "subs" / FOLDER / "late.cells").read_bytes()
    assert verify_entries([entry], built, board / "subs").recomputed == []  # a render reads it
    (board / "subs" / FOLDER / "late.cells").unlink()
    verify_entries([entry], built, board / "subs")
    again = CellStore(board / "subs", load_key()).read("late")
    ours = decode(made, load_key())
    assert ours is not None and again is not None
    assert {**ours.data, "passed": None} == {**again.data, "passed": None}
    assert ours.key == again.key
    assert all(np.array_equal(ours.arrays[k], again.arrays[k]) for k in again.arrays)
