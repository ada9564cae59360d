"""Page content as data: one node format that Python writes as HTML and the page's script builds.

A node is a ``str`` (a text node) or a list ``[tag, attrs, *children]``: ``tag`` one of
:data:`TAGS` (``""`` is a fragment: its children only), ``attrs`` a dict of attribute name to
``str``/``int`` (``None`` leaves the attribute out). The same node gives the same DOM
whether :func:`to_html` wrote it into ``index.html`` or the page's script (``build`` in
``page_assets.JS``) created it from a lazily loaded file, so the first page and the files
loaded later are rendered by one Python function each. Both sides allow only the tags of
:data:`TAGS`, the attributes of :data:`ATTRS` plus ``data-*`` and ``aria-*``, and links that
:func:`safe_href` accepts; the script builds with ``createElement``/``textContent``, never
from an HTML string, so no value can become markup.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from consistency_bench.leaderboard.webpage.formatting import clean, html_attr, html_text, safe_url

#: A node (see the module docstring); ``list`` because JSON has no tuples.
Node = str | list

#: Elements a node may be (the script's ``TAG`` pattern is the same list).
TAGS = frozenset(
    "a b br button code dd details div dl dt em h2 h3 h4 li p section small span strong "
    "summary table tbody td th thead tr ul".split())
#: Elements without a closing tag.
VOID = frozenset({"br"})
#: Attributes a node may carry besides ``data-*`` and ``aria-*``.
ATTRS = frozenset({"class", "id", "title", "href", "rel", "type", "colspan", "role", "hidden",
                   "open"})
_ATTR_NAME = re.compile(r"(data|aria)-[a-z0-9-]+")
#: Relative links the page makes: an entry's ``meta.yaml``, an anchor of the page.
_RELATIVE = re.compile(r"(submissions/[A-Za-z0-9%._~-]+/meta\.yaml|#[a-z0-9-]+)")


def safe_href(url: str) -> str | None:
    """``url`` when a node may link to it: http(s) (``safe_url``), a ``meta.yaml``, an anchor."""
    if _RELATIVE.fullmatch(url):
        return url
    return safe_url(url)


def el(tag: str, attrs: Mapping[str, object] | None = None, *children: Node | None) -> list:
    """A node; ``None`` children are left out, text is cleaned of control characters.

    Raises:
        ValueError: ``tag`` or an attribute is not allowed, or an ``href`` is not a safe link
            (a bug of the page code, never a value of a results or meta file: those are
            text).

    """
    if tag not in TAGS and tag != "":
        raise ValueError(f"node tag {tag!r} is not allowed")
    kept: dict[str, str | int] = {}
    for name, value in (attrs or {}).items():
        if value is None or value is False:
            continue
        if name not in ATTRS and not _ATTR_NAME.fullmatch(name):
            raise ValueError(f"node attribute {name!r} is not allowed")
        if name == "href" and safe_href(str(value)) is None:
            raise ValueError(f"href {value!r} is not a safe link")
        kept[name] = value if isinstance(value, int) and not isinstance(value, bool) \
            else clean(value)
    return [tag, kept, *(clean(c) if isinstance(c, str) else c for c in children
                         if c is not None)]


def frag(*children: Node | None) -> list:
    """A fragment: its children without an element around them."""
    return el("", None, *children)


def to_html(node: Node) -> str:
    """The HTML of a node: every text and attribute value escaped (``render_format``)."""
    if isinstance(node, str):
        return html_text(node)
    tag, attrs, children = node[0], node[1], node[2:]
    inner = "".join(to_html(c) for c in children)
    if tag == "":
        return inner
    text = "".join(f' {k}="{html_attr(str(v))}"' for k, v in attrs.items())
    if tag in VOID:
        return f"<{tag}{text}>"
    return f"<{tag}{text}>{inner}</{tag}>"


def text_of(node: Node) -> str:
    """The text of a node as ``textContent`` reads it."""
    if isinstance(node, str):
        return node
    return "".join(text_of(c) for c in node[2:])
