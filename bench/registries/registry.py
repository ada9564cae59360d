"""One registry type for every name -> item table of the toolkit.

Suites (:data:`consistency_bench.builders.suite.spec.SUITES`), tasks
(:data:`consistency_bench.bench.registries.tasks.TASKS`), metric kinds'
scorers (:data:`consistency_bench.bench.scorers.contract.SCORERS`), source files
(:data:`consistency_bench.bench.registries.source_files.SOURCES`)
and paper families (:data:`consistency_bench.bench.registries.families.FAMILIES`) are each a
:class:`Registry`:
filled
explicitly by the module that owns the items (no scanning), read like a mapping in
registration order. Registering a name twice raises
:class:`~consistency_bench.bench.errors.DuplicateNameError`;
looking up an unknown name raises :class:`~consistency_bench.bench.errors.UnknownNameError` (a
``KeyError``)
with the closest known names, so ``registry.get(name)`` still returns ``None`` for a name that
is not there, as a ``dict`` does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TypeVar

from consistency_bench.bench.errors import DuplicateNameError, UnknownNameError

T = TypeVar("T")


class Registry(Mapping[str, T]):
    """Items of one kind by unique name, in registration order.

    Args:
        kind: What a name names, for messages (``"suite"``, ``"metric kind"``, ...).
        describe: How a duplicate message shows the item already registered (default: not
            shown).

    """

    def __init__(self, kind: str, describe: Callable[[T], str] | None = None):
        self.kind = kind
        self._describe = describe
        self._items: dict[str, T] = {}

    def register(self, name: str, item: T) -> T:
        """Add ``item`` under ``name`` and return it.

        Raises:
            DuplicateNameError: ``name`` is already registered.

        """
        if name in self._items:
            known = self._describe(self._items[name]) if self._describe else ""
            raise DuplicateNameError(
                f"{self.kind} {name!r} is already registered" + (f" as {known}" if known else "")
            )
        self._items[name] = item
        return item

    def unregister(self, name: str) -> T:
        """Remove ``name`` and return its item (tests and scratch examples undo a register).

        Raises:
            UnknownNameError: ``name`` is not registered.

        """
        item = self[name]
        del self._items[name]
        return item

    def names(self) -> tuple[str, ...]:
        """Every registered name, in registration order."""
        return tuple(self._items)

    def __getitem__(self, name: str) -> T:
        try:
            return self._items[name]
        except KeyError:
            raise UnknownNameError(self.kind, name, self._items) from None

    def get(self, name: str, default: T | None = None) -> T | None:
        """The item of ``name``, or ``default`` when it is not registered (as ``dict.get``)."""
        return self._items.get(name, default)

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {len(self._items)} names)"
