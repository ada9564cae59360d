"""YAML from users (``meta.yaml``, a model card's header), with bounded cost.

``yaml.safe_load`` refuses ``!!python`` tags but still expands aliases: a 436-byte
``meta.yaml`` of nested anchors (a "billion laughs") expanded to a tree whose repr was a
351 MB error line (1.1 GB of memory; 479 bytes: MemoryError after 45 s). Here:

* the text is at most :data:`MAX_YAML_BYTES` (checked on the file's size before reading);
* anchors (``&a``) and aliases (``*a``) are refused where the parser meets them, before any
  tree is built: metadata never needs them;
* nesting deeper than :data:`MAX_YAML_DEPTH` is refused (PyYAML's composer recurses per
  level: RecursionError);
* a key given twice in one mapping is refused (PyYAML keeps the last value silently: a
  ``meta.yaml`` with ``model`` twice);
* messages never show a parsed value whole (:func:`consistency_bench.bench.errors.shorten`).
"""

from __future__ import annotations

import os
from pathlib import Path

from consistency_bench.bench.errors import ConfigError, shorten

#: Largest metadata file read (a meta.yaml is a few hundred bytes; a card header a few KB).
MAX_YAML_BYTES = 256 * 1024
#: Deepest nesting of mappings and lists read.
MAX_YAML_DEPTH = 20


def _loader(where: str):
    import yaml

    class StrictLoader(yaml.SafeLoader):
        """``SafeLoader`` without anchors and aliases, of bounded depth."""

        depth = 0

        def compose_node(self, parent, index):
            event = self.peek_event()
            line = event.start_mark.line + 1
            if isinstance(event, yaml.AliasEvent):
                raise ConfigError(f"{where}:{line}: YAML alias *{_name(event.anchor)} refused; "
                                  "write the value out (anchors and aliases are not read)")
            if getattr(event, "anchor", None) is not None:
                raise ConfigError(f"{where}:{line}: YAML anchor &{_name(event.anchor)} refused; "
                                  "write the value out (anchors and aliases are not read)")
            self.depth += 1
            try:
                if self.depth > MAX_YAML_DEPTH:
                    raise ConfigError(f"{where}:{line}: YAML nested more than "
                                      f"{MAX_YAML_DEPTH} levels deep")
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

        def construct_mapping(self, node, deep=False):
            """A mapping; a key given twice is refused (PyYAML keeps the last one silently)."""
            if isinstance(node, yaml.MappingNode):
                self.flatten_mapping(node)
                seen: set = set()
                for key_node, _ in node.value:
                    key = self.construct_object(key_node, deep=deep)
                    try:
                        again = key in seen
                    except TypeError:  # unhashable: the base class refuses it
                        continue
                    if again:
                        raise ConfigError(f"{where}:{key_node.start_mark.line + 1}: key "
                                          f"{shorten(key)} given twice (which value is meant?)")
                    seen.add(key)
            return super().construct_mapping(node, deep)

    return StrictLoader


def _name(anchor: str) -> str:
    return anchor if len(anchor) <= 40 else anchor[:40] + "..."


def load_yaml_text(text: str, where: str) -> object:
    """Parse ``text`` (named ``where`` in messages) with the limits of this module.

    Raises:
        ConfigError: Too large, an anchor or alias, too deep, or not valid YAML.

    """
    import yaml

    if len(text) > MAX_YAML_BYTES:
        raise ConfigError(f"{where}: {len(text):,} characters of YAML; at most "
                          f"{MAX_YAML_BYTES:,} are read")
    try:
        return yaml.load(text, Loader=_loader(where))
    except yaml.YAMLError as exc:
        message = " ".join(str(exc).split())
        if len(message) > 300:
            message = message[:300] + "..."
        raise ConfigError(f"{where}: not valid YAML: {message}") from None
    except RecursionError:
        raise ConfigError(f"{where}: YAML nested too deeply") from None
    except ValueError as exc:  # date: 2026-13-45, an integer of 5,000 digits (YAML reads both)
        raise ConfigError(f"{where}: a value is not valid ({shorten(str(exc))}); dates are "
                          "YYYY-MM-DD") from None


def read_yaml_file(path: str | os.PathLike) -> object:
    """Read and parse a YAML file, checking its size before reading it.

    Raises:
        ConfigError: Not a regular file, too large, not UTF-8, or refused by
            :func:`load_yaml_text`.

    """
    path = Path(path)
    size = path.stat().st_size
    if size > MAX_YAML_BYTES:
        raise ConfigError(f"{path}: {size:,} bytes; a metadata file may have at most "
                          f"{MAX_YAML_BYTES:,}")
    with open(path, "rb") as handle:
        raw = handle.read(MAX_YAML_BYTES + 1)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path}: not valid UTF-8 ({exc.reason} at byte {exc.start}); save it as UTF-8"
        ) from None
    return load_yaml_text(text, str(path))
