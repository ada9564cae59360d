"""The commands that never call BLAS run numpy with one OpenBLAS thread (the CLI applies it)."""

from __future__ import annotations

import json
import os

import pytest

from consistency_bench.bench.runtime import ONE_BLAS_THREAD
from consistency_bench.cli import make_parser
from tests.helpers import python_stdout

PROBE = """
import json, sys
from consistency_bench import cli
code = cli.main(sys.argv[1:])  # fails fast (no such file): numpy is imported after it
import numpy, threadpoolctl
pools = [p for p in threadpoolctl.threadpool_info() if p["internal_api"] == "openblas"]
print(json.dumps({"code": code, "threads": [p["num_threads"] for p in pools]}))
"""


def _openblas_threads(argv: list[str], **env: str) -> list[int]:
    environ = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    out = python_stdout(PROBE, *argv, env={**environ, **env})
    result = json.loads(out.splitlines()[-1])
    assert result["code"] == 2  # the command ran and reported the missing file
    return result["threads"]


@pytest.fixture(scope="module")
def cores() -> int:
    pytest.importorskip("threadpoolctl")
    if os.cpu_count() < 2:
        pytest.skip("one core: OpenBLAS starts one thread anyway")
    return os.cpu_count()


def test_score_runs_numpy_with_one_openblas_thread(cores, tmp_path):
    threads = _openblas_threads(["score", str(tmp_path / "missing.jsonl")])
    assert threads == [1]


def test_a_users_setting_is_kept(cores, tmp_path):
    assert _openblas_threads(["score", str(tmp_path / "missing.jsonl")],
                             OPENBLAS_NUM_THREADS="2") == [2]


def test_parsing_any_listed_command_does_not_import_numpy():
    """The setting only works if numpy is imported after it: by the command, not the CLI."""
    code = ("import sys; from consistency_bench.cli import make_parser; make_parser(); "
            "print('numpy' in sys.modules)")
    assert python_stdout(code).strip() == "False"
    assert set(make_parser()._subparsers._group_actions[0].choices) >= ONE_BLAS_THREAD
