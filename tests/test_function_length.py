"""Issue 29 item 3: no function of the installed code over 80 lines; over 60 says why.

Lines are counted as ``scripts/layout_numbers.py`` counts them (``end_lineno - lineno + 1``
of the ``def``, decorators left out). A function over 60 lines carries a comment line that
starts with ``# One piece`` in the comment block right above its ``def`` (or above its
decorators).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("bench", "builders", "leaderboard", "consistency_bench")
LONG, TOO_LONG = 60, 80


def long_functions(root: Path) -> tuple[list[str], list[str]]:
    """``(over 80 lines, over 60 lines without a one-piece comment)`` under ``root``."""
    too_long, unexplained = [], []
    for folder in FOLDERS:
        for path in sorted((root / folder).rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            text = path.read_text(encoding="utf-8")
            lines = text.splitlines()
            for node in ast.walk(ast.parse(text, str(path))):
                if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                length = node.end_lineno - node.lineno + 1
                where = f"{path.relative_to(root)}:{node.lineno} {node.name} ({length} lines)"
                if length > TOO_LONG:
                    too_long.append(where)
                elif length > LONG:
                    first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                    if not _says_why(lines, first - 2):
                        unexplained.append(where)
    return too_long, unexplained


def _says_why(lines: list[str], index: int) -> bool:
    """Whether the comment block ending at ``lines[index]`` has a ``# One piece`` line."""
    while index >= 0 and lines[index].strip().startswith("#"):
        if lines[index].strip().startswith("# One piece"):
            return True
        index -= 1
    return False


def test_no_function_over_80_lines():
    assert long_functions(ROOT)[0] == []


def test_functions_over_60_lines_say_why():
    assert long_functions(ROOT)[1] == []
