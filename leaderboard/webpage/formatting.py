"""Pure text helpers of the renderers: escaping, number formatting, links, status words.

Every value that reaches the page or the Markdown goes through one of these, whatever file it
came from (results, meta.yaml, entry names): :func:`html_text` / :func:`html_attr` for HTML,
:func:`md_text` for Markdown, :func:`safe_url` for links, :func:`dom_id` for ``id`` attributes.
"""

from __future__ import annotations

import hashlib
import html
import math
import re
from collections.abc import Mapping
from urllib.parse import quote, urlsplit

from consistency_bench.leaderboard.paired import format_p

#: Row status words, used identically in the HTML, the Markdown and ``leaderboard.json``.
STATUS_LEGEND = {
    "ranked": "covers every suite of the view and is not degenerate: ranked",
    "reference": "covers every suite but is degenerate on tasks carrying more than half of the "
                 "view's weight (a constant or random baseline, or a model whose accuracy on a "
                 "task's distinct originals is not significantly above its majority class): "
                 "shown below the ranked entries, never ranked",
    "partial": "does not cover every suite of the view: shown last, not ranked",
}
#: Flag words (``Row.flags``), used identically in the HTML, the Markdown and
#: ``leaderboard.json``: the page shows each with its reason as text.
FLAG_LEGEND = {
    "degenerate": "judged once per task, on its distinct originals: accuracy not significantly "
                  "above the majority-class rate, or near-constant predictions",
    "failing": "ranked, but not significantly above chance on some kind (e.g. never flips "
               "under negation); it stays ranked, last if need be",
    "contaminated": "declared training on a file a suite draws from",
}
#: Characters that are Markdown syntax inside a table cell, escaped with a backslash (``#``,
#: ``-``, ``+``, ``.`` only matter at the start of a line, which a cell never is).
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()!|~])")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_Z = re.compile(r"z = (-?\d+(?:\.\d+)?)")
_LONG_FLOAT = re.compile(r"(-?\d+\.\d{4,})")
#: A Hugging Face Hub model id: ``org/name``.
_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,95}/[A-Za-z0-9][A-Za-z0-9_.-]{0,95}$")


def clean(value: object) -> str:
    """``str(value)`` with control characters (newlines included) replaced by spaces."""
    return _CONTROL.sub(" ", str(value))


def html_text(value: object) -> str:
    """Escape for an HTML text node or a double-quoted attribute (``& < > " '``)."""
    return html.escape(clean(value), quote=True)


html_attr = html_text


def md_text(value: object) -> str:
    """Escape for a Markdown table cell: HTML, pipes, link and emphasis syntax, newlines.

    ``<``, ``>`` and ``&`` become entities (no raw HTML reaches the Hub card); every other
    Markdown character of a table cell gets a backslash, so ``[x](javascript:...)`` stays text.
    """
    text = html.escape(clean(value), quote=False)
    return _MD_SPECIAL.sub(r"\\\1", text)


def pct(x: float | None, digits: int = 1) -> str:
    """A share in % for people: ``–`` when missing or not finite."""
    if x is None or not math.isfinite(x):
        return "–"
    text = f"{100 * x:.{digits}f}"
    return "0.0" if text in ("-0.0", "-0") else text


def p_text(p: float | None) -> str:
    """``p = 0.012``, ``p < 0.001`` or ``p n/a``."""
    text = format_p(p)
    return f"p {text}" if text.startswith("<") or text == "n/a" else f"p = {text}"


def _z(match: re.Match) -> str:
    z = float(match.group(1))
    if z <= -100:
        return "z < −100"
    if z >= 100:
        return "z > 100"
    return f"z = {z:.2f}".replace("-", "−")


def humanize(reason: str | None) -> str:
    """A flag reason for people: z values clamped to ±100, long decimals rounded.

    ``"score -4.1% ... (z = -5216308.71 < 1.645)"`` -> ``"score -4.1% ... (z < −100 < 1.645)"``.
    """
    if not reason:
        return ""
    text = _Z.sub(_z, clean(reason))
    return _LONG_FLOAT.sub(lambda m: f"{float(m.group(1)):.3g}", text)


def safe_url(url: object) -> str | None:
    """``url`` when it is an absolute http(s) URL without spaces or controls, else ``None``."""
    if not isinstance(url, str) or _CONTROL.search(url) or " " in url or len(url) > 2000:
        return None
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return None
    return url


def model_url(meta: Mapping) -> str | None:
    """The model page: ``https://huggingface.co/<model>`` for a Hub id, else meta ``link``."""
    model = meta.get("model")
    if isinstance(model, str) and _HUB_ID.match(model) and ".." not in model:
        return "https://huggingface.co/" + quote(model, safe="/")
    return safe_url(meta.get("link"))


def parameters(meta: Mapping) -> tuple[str, float | None]:
    """Meta ``parameters`` as (text, count): ``22700000`` -> ``("22.7M", 2.27e7)``.

    Only a number is a count (issue 27, item 7: ``parameters`` is an integer field). Text is
    kept as written, with no count: "1 threshold per task" is not 1 parameter, so a range
    filter shows such an entry as "unknown" rather than reading a number into the prose.
    """
    raw = meta.get("parameters")
    if raw is None or isinstance(raw, bool):
        return "", None
    if isinstance(raw, int | float) and math.isfinite(raw) and raw >= 0:
        n = float(raw)
        for suffix, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
            if n >= scale:
                return f"{n / scale:.3g}{suffix}", n
        return f"{n:g}", n
    return clean(raw), None


def dom_id(prefix: str, key: str, taken: set[str]) -> str:
    """A safe, unique HTML id for ``key``: letters, digits and ``-`` only.

    ``task:snli`` -> ``view-task-snli``; anything else in ``key`` becomes ``-``; when two keys
    sanitise to the same id (or the key had to be changed), a short hash of the key is added.
    """
    base = re.sub(r"[^a-z0-9-]+", "-", key.replace("_", "-").replace(":", "-").lower())
    base = f"{prefix}-{base.strip('-')}".rstrip("-")[:80]
    simple = key.replace("_", "-").replace(":", "-").lower()
    if base in taken or not re.fullmatch(r"[a-z0-9-]+", simple):
        base += "-" + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    taken.add(base)
    return base
