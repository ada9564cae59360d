"""The console command ends ``score`` without the interpreter's teardown (cli.console_main).

What must hold: the same output, to the byte, and the same results file and exit code as
:func:`consistency_bench.cli.main` called in-process, which returns instead of exiting.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

from consistency_bench.cli import main
from tests.helpers import ROOT, write_predictions


def _untimed(text: str) -> str:
    return re.sub(r" in \d+\.\d+s", " in Ns", text)


def test_quick_exit_keeps_every_output(becel_folder, tmp_path, capsys):
    pred = write_predictions(becel_folder, tmp_path / "p.jsonl", ["snli_transitive"])
    inside, outside = tmp_path / "in.json", tmp_path / "out.json"
    assert main(["score", str(pred), "--data", str(becel_folder), "--out", str(inside),
                 "--n-boot", "50"]) == 0  # in-process: returns
    printed = capsys.readouterr()
    done = subprocess.run(
        [sys.executable, "-m", "consistency_bench", "score", str(pred), "--data",
         str(becel_folder), "--out", str(outside), "--n-boot", "50"],
        capture_output=True, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    # the same lines, the one timing apart ("... in 0.03s")
    assert _untimed(done.stdout) == _untimed(printed.out.replace(str(inside), str(outside)))
    assert done.stderr == printed.err
    a, b = (json.loads(p.read_text()) for p in (inside, outside))
    a.pop("provenance"), b.pop("provenance")
    assert a == b
    # a refused file still exits 2 with its message (the quick exit is for success only)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "nope", "label": 0}\n')
    done = subprocess.run(
        [sys.executable, "-m", "consistency_bench", "score", str(bad), "--data",
         str(becel_folder)], capture_output=True, text=True, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2 and "error:" in done.stderr


def test_only_a_finished_score_skips_the_teardown(becel_folder, tmp_path):
    pred = write_predictions(becel_folder, tmp_path / "p.jsonl", ["snli_transitive"])
    code = ("import atexit, sys\n"
            "atexit.register(lambda: print('teardown', file=sys.stderr))\n"
            "from consistency_bench.cli import console_main\n"
            "sys.argv = ['consistency-bench', *sys.argv[1:]]\n"
            "console_main()\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    scored = subprocess.run([sys.executable, "-c", code, "score", str(pred), "--data",
                             str(becel_folder), "--n-boot", "20"],
                            capture_output=True, text=True, cwd=ROOT, env=env)
    assert scored.returncode == 0 and "snli_transitive" in scored.stdout
    assert "teardown" not in scored.stderr
    # a refused file: exit 2 through the usual teardown
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "nope", "label": 0}\n')
    refused = subprocess.run([sys.executable, "-c", code, "score", str(bad), "--data",
                              str(becel_folder)], capture_output=True, text=True, cwd=ROOT,
                             env=env)
    assert refused.returncode == 2 and "teardown" in refused.stderr


def test_a_profiled_score_ends_as_usual(becel_folder, tmp_path):
    """cProfile (and coverage) write their files at the end: no quick exit under them."""
    pred = write_predictions(becel_folder, tmp_path / "p.jsonl", ["snli_transitive"])
    done = subprocess.run(
        [sys.executable, "-m", "cProfile", "-o", str(tmp_path / "prof.out"), "-m",
         "consistency_bench", "score", str(pred), "--data", str(becel_folder), "--n-boot", "20"],
        capture_output=True, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "prof.out").stat().st_size > 0
