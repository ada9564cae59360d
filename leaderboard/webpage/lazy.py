"""The page's lazily loaded files: ``data/<kind>/<stem>.js``, one ``receive`` call each.

Each file is one line, ``window.consistencyBench.receive("data/view/view-all.js", "<JSON>");``:
the payload is JSON inside a JavaScript string literal, which the page's script parses with
``JSON.parse`` (``load(path)`` in ``page_assets.JS`` returns a promise of it). So a value of a
results or meta file is only ever data, never code, and a key such as ``__proto__`` stays a key.

Why scripts and not ``fetch``: a page opened from ``file://`` has an opaque origin, so Chromium
refuses to ``fetch`` its neighbour files, but it loads a ``<script src>``; served by the Space,
the same files load the same way. The page's Content-Security-Policy allows them with
``'strict-dynamic'``: a script element that the page's own hashed script creates may load,
while a ``<script>`` written in the HTML (one injected past the escaping) still may not. The
script loads only paths of the form :data:`PATH` (checked there too), never a path taken from
the address or a value.

Kinds (:data:`KINDS`, an explicit registry; a new panel adds its kind here and documents its
payload in docs/leaderboard.md, "Lazily loaded files"):

- ``index``: ``data/index/entries.js``, every entry's search text, parameter count,
  reproduction status, file and CSV fields (the filters and the heatmap picker);
- ``view``: one per view, its section (title, note, table head, per-suite list) and all rows;
- ``suite``: one per suite, the per-suite table (head and rows);
- ``entry``: one per entry, its details panel and its heatmap row;
- ``explorer``: one per entry, a seeded sample of each suite's inconsistent groups
  (``consistency_bench.leaderboard.explorer.payload``, issue 31);
- ``plot``: one per view, the points and per-kind profiles of its plots
  (``consistency_bench.leaderboard.explorer.plots``, issue 31).
"""

from __future__ import annotations

import json
import re

#: Folder of the lazily loaded files, beside ``index.html``.
DATA = "data"
#: The kinds of lazily loaded files (see the module docstring).
KINDS = ("index", "view", "suite", "entry", "explorer", "plot")
#: A file name stem: what ``render_format.dom_id`` makes (letters, digits, ``-``).
_STEM = re.compile(r"[a-z0-9][a-z0-9-]{0,127}")
#: Every path the page loads (the script checks the same pattern before it loads one).
PATH = re.compile(r"data/[a-z]+/[a-z0-9][a-z0-9-]{0,127}\.js")


def data_path(kind: str, stem: str) -> str:
    """The path, relative to ``index.html``, of one lazily loaded file.

    Raises:
        ValueError: An unknown kind or a stem that is not a safe file name (a bug: stems are
            made by ``dom_id``).

    """
    if kind not in KINDS or not _STEM.fullmatch(stem):
        raise ValueError(f"lazy file {kind!r}/{stem!r}: unknown kind or unsafe stem")
    return f"{DATA}/{kind}/{stem}.js"


INDEX = data_path("index", "entries")


def data_script(path: str, payload: object) -> str:
    """The text of the file at ``path``: one ``receive`` call with ``payload`` as JSON text.

    Raises:
        ValueError: ``payload`` holds a NaN or an infinity (not JSON), or ``path`` is not a
            data path.

    """
    if not PATH.fullmatch(path):
        raise ValueError(f"{path!r} is not a data path")
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    # ensure_ascii on the outer literal: the file is ASCII, whatever charset it is served with
    return f"window.consistencyBench.receive({json.dumps(path)},{json.dumps(text)});\n"
