"""The shared bounded JSON loader (bench/io/json_input.py) and the call sites that use it.

The last three tests failed before the loader: a corrupt resume ``run.json`` was a
``JSONDecodeError`` traceback, a deep ``--label-map`` file and a deep stored ``results.json``
read by ``submit`` (the name check) were ``RecursionError`` tracebacks.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from consistency_bench.bench.errors import ConfigError, DataError
from consistency_bench.bench.io.json_input import (
    JsonFileError,
    JsonTextError,
    load_json_file,
    parse_json,
)

DEEP = '{"a": ' + "[" * 5000 + "]" * 5000 + "}"


@pytest.mark.parametrize(("content", "size", "message"), [
    (b'{"a": [1, 2]}', None, None),
    (b'{"a": 1}' + b" " * 100, 50, "f.json: more than 50 bytes; a JSON file is read up to"),
    (b'{"a": "\xff"}', None, "f.json: not valid JSON (not UTF-8: invalid start byte at byte 7)"),
    (DEEP.encode(), None, "f.json: JSON nested 5001 levels deep; at most 100 are read"),
    (b'{"a": 1, "a": 2}', None, "f.json: key 'a' given twice in one object (which value"),
    (b'{\n "a": 1,\n}', None, "f.json: not valid JSON (Expecting property name enclosed in "
     "double quotes: line 3 column 1 (char 11))"),
    (b'{"a": ' + b"1" * 5000 + b"}", None, "f.json: not valid JSON (an integer of more than "
     "4,300 digits)"),
])
def test_load_json_file_refuses_with_one_wording(tmp_path, content, size, message):
    path = tmp_path / "f.json"
    path.write_bytes(content)
    kwargs = {} if size is None else {"max_bytes": size}
    if message is None:
        assert load_json_file(path, **kwargs) == {"a": [1, 2]}
        return
    with pytest.raises(JsonFileError) as caught:
        load_json_file(path, **kwargs)
    assert str(caught.value).startswith(str(tmp_path / message)), caught.value
    assert isinstance(caught.value, DataError)  # exit 2, one line, as every BenchError


def test_load_json_file_names_a_missing_file_and_reads_no_more_than_the_cap(tmp_path):
    with pytest.raises(JsonFileError, match=r"nope\.json: cannot be read \(No such file"):
        load_json_file(tmp_path / "nope.json")
    with pytest.raises(JsonFileError, match="more than 1,000 bytes"):
        load_json_file("/dev/zero", max_bytes=1000)  # endless: read up to the cap only


def test_parse_json_words_a_line_and_keeps_the_key_apart():
    with pytest.raises(JsonTextError) as caught:
        parse_json('{"id": "x", "label": ', line=True)
    assert caught.value.reason == ("not valid JSON (Expecting value at column 22); "
                                   "truncated line?")
    with pytest.raises(JsonTextError) as caught:
        parse_json('{"label": 0, "label": 1}')
    assert (caught.value.key, caught.value.reason) == ("label", "key given twice in one object "
                                                       "(which value is meant?)")
    assert str(caught.value) == "key 'label' given twice in one object (which value is meant?)"
    assert parse_json("[1, 2]") == [1, 2]


def test_a_corrupt_resume_run_json_is_a_data_error(tmp_path):
    from consistency_bench.bench.runner.shards import RUN_FILE, ShardStore

    parts = tmp_path / "p.jsonl.parts"
    parts.mkdir()
    (parts / RUN_FILE).write_text('{"model": ')
    (parts / "shard-0-000000.jsonl").write_text(json.dumps({"k": "a", "v": 1}) + "\n")
    with pytest.raises(DataError, match=r"run\.json: not valid JSON"):
        ShardStore(parts, {"model": "m"})


def test_a_deep_label_map_file_is_a_config_error(tmp_path):
    from consistency_bench.bench.modeling.label_map import parse_label_map

    path = tmp_path / "map.json"
    path.write_text(DEEP)
    with pytest.raises(ConfigError, match=r"--label-map file .*map\.json: JSON nested 5001"):
        parse_label_map(str(path))


def test_a_deep_stored_results_json_has_no_stored_name(tmp_path: Path):
    from consistency_bench.leaderboard.submissions.meta import RESULTS
    from consistency_bench.leaderboard.submissions.storage import stored_name

    (tmp_path / RESULTS).write_text(DEEP)
    assert stored_name(tmp_path) is None
    (tmp_path / RESULTS).write_text(json.dumps({"provenance": {"arguments": {"name": "x"}}}))
    assert stored_name(tmp_path) == "x"
