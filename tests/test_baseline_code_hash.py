"""The baseline run record's code hash covers files that exist (a regroup once moved three)."""

from consistency_bench.bench.runrecord import baseline_record


def test_every_code_pattern_matches_a_file():
    from pathlib import Path

    root = Path(baseline_record.__file__).resolve().parents[1]
    for pattern in baseline_record.CODE:
        assert any(root.glob(pattern)), pattern


def test_a_missing_code_file_is_an_error(monkeypatch):
    import pytest

    baseline_record.code_sha256.cache_clear()
    monkeypatch.setattr(baseline_record, "CODE", (*baseline_record.CODE, "inputs.py"))
    with pytest.raises(RuntimeError, match=r"inputs\.py"):
        baseline_record.code_sha256()
    baseline_record.code_sha256.cache_clear()
