"""The statistical word-salad suites as the build makes them: n-best lists cached per part.

Training a part's phrase-based system and decoding its records is most of a fresh build's
time (issue 32 item 12), and its result, the decoder's n-best list of every source, depends
on nothing but the source files and the code. So a part's n-best lists are stored in the
user's build cache (:mod:`consistency_bench.builders.cache`, kind ``pbsmt``) under a key of

- ``DECODER_VERSION`` and the suite version,
- the task and the part's label,
- the sha256 of each source file of the suite (the evaluated split and the training split),
- the sha256 of every module the lists come from (:data:`CODE`: reading, tokenizing,
  selecting the training pairs, training, decoding) and the versions of Python, NLTK, numba
  and NumPy,

and a later build reads them instead of training and decoding: the rows are then chosen from
the lists as before (:func:`consistency_bench.builders.salad.pbsmt.suite_rows.nbest_rows`), so a
build
with the cache
gives the same bytes as one without (``tests/test_build_cache.py``). An entry that is missing,
damaged or lacks a source is a miss: the part is trained and decoded, and the entry written.
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from collections.abc import Callable, Iterator
from functools import cache
from importlib import metadata
from pathlib import Path

from consistency_bench.bench.io.digest import file_sha256
from consistency_bench.bench.registries.source_files import SourceResolver
from consistency_bench.builders.cache import entries
from consistency_bench.builders.salad.constants import PBSMT_VERSION
from consistency_bench.builders.salad.pbsmt.suite_rows import (
    NbestLists,
    PbsmtPart,
    evaluated_records,
    nbest_rows,
    part_nbest,
    pbsmt_inputs,
    pbsmt_pair,
    pbsmt_parts,
)
from consistency_bench.builders.salad.sources import TASK_SOURCES, Record, _resolve
from consistency_bench.builders.suite.spec import KeyedRows, Row, merge_parts

#: Bumped with any change to how the n-best lists are made that :data:`CODE` would not see.
DECODER_VERSION = "3.0.0"
KIND = "pbsmt"
#: The modules whose code makes a part's n-best lists (their bytes are part of the key).
CODE = (
    "consistency_bench.builders.readers",
    "consistency_bench.builders.becel.additive",
    "consistency_bench.builders.salad.sources",
    "consistency_bench.builders.salad.constants",
    "consistency_bench.builders.salad.lexical.transform",
    "consistency_bench.builders.salad.treebank",
    "consistency_bench.builders.salad.degenerate",
    "consistency_bench.builders.salad.pbsmt.suite_rows",
    "consistency_bench.builders.salad.pbsmt.phrase_table",
    "consistency_bench.builders.salad.pbsmt.language_model",
    "consistency_bench.builders.salad.pbsmt.decode",
    "consistency_bench.builders.salad.pbsmt.decoder_constants",
    "consistency_bench.builders.salad.pbsmt.stack_decoder",
)
#: Distributions whose version is part of the key.
LIBRARIES = ("nltk", "numba", "numpy")


@cache
def code_digest() -> str:
    """sha256 of the files of :data:`CODE` and the Python and library versions."""
    digest = hashlib.sha256()
    for name in CODE:
        spec = importlib.util.find_spec(name)  # found without importing it (numba stays out)
        origin = spec.origin if spec is not None else None
        digest.update(name.encode() + b"\x1f")
        digest.update(Path(origin).read_bytes() if origin else b"?")
    for library in LIBRARIES:
        try:
            version = metadata.version(library)
        except metadata.PackageNotFoundError:
            version = "-"
        digest.update(f"{library}={version}\x1f".encode())
    digest.update(sys.version.encode())
    return digest.hexdigest()


def part_key(task: str, label: int, resolver: SourceResolver) -> str:
    """The cache key of one part's n-best lists (the module docstring lists what is in it)."""
    source = TASK_SOURCES[task]
    paths = [p for p in (source.path, source.train_path) if p is not None]
    files = {p: file_sha256(Path(str(_resolve(resolver, p)))) for p in paths}
    return entries.key_of(DECODER_VERSION, PBSMT_VERSION, task, label, files, code_digest())


def _encode(nbest: NbestLists | None) -> dict[str, object]:
    """The JSON form: tokens joined by spaces (a Penn-Treebank token holds no space)."""
    if nbest is None:
        return {"system": False, "nbest": {}}
    return {"system": True,
            "nbest": {" ".join(s): [" ".join(o) for o in outs] for s, outs in nbest.items()}}


def _decode(value: object, sources: set[tuple[str, ...]]) -> tuple[bool, NbestLists | None]:
    """``(hit, lists)``: ``hit`` is false when ``value`` is not a whole entry for ``sources``."""
    if not isinstance(value, dict) or not isinstance(value.get("nbest"), dict):
        return False, None
    if value.get("system") is False:
        return True, None
    stored = value["nbest"]
    out: NbestLists = {}
    for source in sources:
        outputs = stored.get(" ".join(source))
        if not isinstance(outputs, list) or not all(isinstance(o, str) for o in outputs):
            return False, None
        out[source] = [o.split(" ") if o else [] for o in outputs]
    return True, out


#: Reads a suite's evaluated and training records (:func:`pbsmt_inputs`) when they are needed.
Inputs = Callable[[], tuple[list[Record], list[Record]]]


def cached_nbest(task: str, resolver: SourceResolver, records: list[Record], label: int,
                 inputs: Inputs | None = None) -> NbestLists | None:
    """The n-best lists of the records of ``label``: from the cache, or trained and decoded.

    ``records``: the evaluated records
    (:func:`consistency_bench.builders.salad.pbsmt.suite_rows.evaluated_records`).
    On a miss the part's training records are read (``inputs``, default
    :func:`pbsmt_inputs`), its system trained, its sources decoded, and the entry stored for
    the next build.
    """
    key = part_key(task, label, resolver)
    sources = {tuple(pbsmt_pair(r)[0]) for r in records if r.label == label}
    hit, found = _decode(entries.load(KIND, key), sources)
    if hit:
        return found
    evaluated, train = inputs() if inputs is not None else pbsmt_inputs(task, resolver)
    nbest = part_nbest(evaluated, train, label)
    entries.store(KIND, key, _encode(nbest))
    return nbest


def cached_part_rows(task: str, resolver: SourceResolver, part: PbsmtPart,
                     records: list[Record] | None = None,
                     inputs: Inputs | None = None) -> KeyedRows:
    """Rows of one part of ``<task>_salad_pbsmt``, keyed by record position (cached lists).

    ``records`` and ``inputs``: the evaluated records and the reader of the training records
    when the caller shares them among the parts (:func:`statistical_rows`); read here if not.
    """
    _, label = part
    records = evaluated_records(task, resolver) if records is None else records
    return nbest_rows(task, records, label,
                      cached_nbest(task, resolver, records, label, inputs))


def statistical_rows(task: str) -> Callable[[SourceResolver], Iterator[Row]]:
    """Rows of ``<task>_salad_pbsmt``: the transformed text comes from the per-label system.

    Pair tasks replace the second text; SST-2 replaces the sentence by the translation of its
    first half. Systems train on data disjoint from the evaluated rows
    (:func:`pbsmt_inputs`). The rows are those of every part (:func:`pbsmt_parts`), merged in
    record order; each part's n-best lists come from the build cache when it has them, and
    the parts that miss share one reading of the training records.
    """

    def build(resolver: SourceResolver) -> Iterator[Row]:
        records = evaluated_records(task, resolver)
        inputs = cache(lambda: pbsmt_inputs(task, resolver))
        yield from merge_parts(cached_part_rows(task, resolver, part, records, inputs)
                               for part in pbsmt_parts(task))

    return build


def statistical_part(task: str) -> Callable[[SourceResolver, PbsmtPart], KeyedRows]:
    """Rows of one part of ``<task>_salad_pbsmt`` (a pool task), keyed by record position."""

    def build_part(resolver: SourceResolver, part: PbsmtPart) -> KeyedRows:
        return cached_part_rows(task, resolver, part)

    return build_part
