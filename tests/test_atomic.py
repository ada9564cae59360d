"""The shared output checks of bench/io/ (write, staged_folder, output_checks): lose nothing."""

from __future__ import annotations

import json
import os

import pytest

from consistency_bench.bench.errors import ConfigError
from consistency_bench.bench.io.output_checks import check_output_dir, check_output_file


def test_output_dir_missing_or_empty_is_fine(tmp_path):
    assert check_output_dir(tmp_path / "new") == tmp_path / "new"
    (tmp_path / "empty").mkdir()
    assert check_output_dir(tmp_path / "empty") == tmp_path / "empty"


@pytest.mark.parametrize(
    ("setup", "kwargs", "fragment"),
    [
        ("file", {}, "is a file"),
        ("full", {}, "Pass --overwrite"),
        ("file", {"overwrite": True}, "is a file"),
    ],
)
def test_output_dir_refused(tmp_path, setup, kwargs, fragment):
    target = tmp_path / "out"
    if setup == "file":
        target.write_text("keep")
    else:
        target.mkdir()
        (target / "keep.txt").write_text("keep")
    with pytest.raises(ConfigError, match=fragment):
        check_output_dir(target, **kwargs)


def test_output_dir_overwrite_or_own_marker(tmp_path):
    target = tmp_path / "out"
    target.mkdir()
    (target / "keep.txt").write_text("keep")
    assert check_output_dir(target, overwrite=True) == target
    (target / "leaderboard.json").write_text("{}")
    assert check_output_dir(target, replaceable="leaderboard.json") == target


def test_output_file_checks(tmp_path):
    source = tmp_path / "p.jsonl"
    source.write_text("x")
    with pytest.raises(ConfigError, match="is a folder"):
        check_output_file(tmp_path)
    with pytest.raises(ConfigError, match="is the input file"):
        check_output_file(tmp_path / "." / "p.jsonl", inputs=(source,))
    assert check_output_file(tmp_path / "r.json", inputs=(source,)) == tmp_path / "r.json"


def test_owned_folder_keeps_foreign_files_and_survives_a_bad_record(tmp_path):
    from consistency_bench.bench.io.output_checks import OWNED, read_owned
    from consistency_bench.bench.io.staged_folder import atomic_dir

    out = tmp_path / "out"
    with atomic_dir(out, owner="cmd") as tmp:
        (tmp / "a.txt").write_text("1")
        (tmp / "sub").mkdir()
        (tmp / "sub" / "b.txt").write_text("2")
    assert read_owned(out)["files"] == ["a.txt", "sub/b.txt"]
    (out / "mine.txt").write_text("keep")
    (out / "empty").mkdir()
    (out / "link").symlink_to(tmp_path / "elsewhere")  # kept as a link, never followed
    (out / OWNED).write_text(json.dumps({"command": "cmd", "files": ["a.txt", "sub/b.txt", 3]}))
    with atomic_dir(out, owner="cmd") as tmp:
        (tmp / "a.txt").write_text("new")
    assert sorted(p.name for p in out.iterdir()) == [OWNED, "a.txt", "empty", "link",
                                                     "mine.txt"]
    assert (out / "a.txt").read_text() == "new" and (out / "mine.txt").read_text() == "keep"
    assert os.readlink(out / "link") == str(tmp_path / "elsewhere")
