"""Build the few-shot demonstration pools of a built folder from training data in the mirror.

One pool per prompt key (``consistency_bench.bench.prompting.demonstrations``). Every pool is
declared
here: its
source file
(optionally one fixed half, ``consistency_bench.bench.scoring.contamination.half_of``), how labels
are read,
and the
mirror files whose texts a demonstration must not share (the files the task's suites are built
from). The candidates left are taken in the order of ``sha256(f"{file}#{row}")`` and a
candidate is dropped when it is a test row of *any* suite of the folder, exactly or as a near
duplicate (issue 32, item 9; ``consistency_bench.builders.overlap``): one of its texts, or its two
texts
together, is a text of a test row (stripped) or has a word-set Jaccard of at least 0.8 with
a text of a test row, or with a test row's two texts together. The first ``POOL_SIZE`` left
are the pool. So a pool depends on its declaration, the source bytes and the suites of the
folder (recorded as ``checked_against``,
:func:`consistency_bench.builders.overlap.folder_texts.suites_digest`);
a pool with no candidate left is not written, and its suites have no demonstrations.
``tests/test_fewshot.py`` checks every pool of a full build against every suite.

Tasks without a pool (no labelled rows in the mirror that are not test rows): QNLI, KorNLI
and KLUE-NLI (CALM); in a full build also SNLI, MultiNLI and RTE (their sources, MultiNLI
dev-matched and SNLI dev, are test rows of ``mnli_calm``, ``mnli_salad_*`` and
``snli_salad_*``). ART takes dev stories the annotated test records do not come from,
ConvEnt its train dialogs.

RTE's own train file cannot be used: its 1,241 ``not_entailment`` rows are the test rows of
``rte_symmetric``, which would leave a pool of one label; RTE demonstrations are MultiNLI
dev-matched half 0 pairs (neutral and contradiction as ``not_entailment``) instead, in a
folder without MultiNLI suites. MRPC and WiC train files are wholly test rows of their
symmetric suites: their pools come from MRPC test (GLUE, labelled in BECEL's copy) and WiC
dev.
"""

from __future__ import annotations

import csv
import hashlib
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import datasets

import consistency_bench.builders.catalog  # noqa: F401  (registers every task: klue_sts, ...)
from consistency_bench.bench.errors import SourceError
from consistency_bench.bench.io.manifest import MANIFEST, read_manifest
from consistency_bench.bench.io.tsv import read_tsv
from consistency_bench.bench.prompting.demonstrations import FOLDER, pool_name
from consistency_bench.bench.registries.source_files import SOURCES, SourceResolver
from consistency_bench.bench.registries.tasks import get_task
from consistency_bench.bench.scoring.contamination import half_of
from consistency_bench.builders.overlap.near_duplicates import TextIndex
from consistency_bench.builders.overlap.words import word_sets

#: Demonstrations kept per pool (``--num-fewshot`` may ask for at most this many).
POOL_SIZE = 64
#: Version of the pool rules; changes when the same sources can give other demonstrations
#: (2.0.0: deduplicated against every suite of the folder, exactly and near-duplicate).
POOL_VERSION = "2.0.0"
#: Candidates checked against the folder's test texts at a time (in hash order).
CHECK_BATCH = 1024
MNLI_DEV = "mnli/dev_matched.generative-nli.jsonl"
SNLI_DEV = "snli/dev.generative-nli.jsonl"

FEATURES = datasets.Features({
    "id": datasets.Value("string"),
    "pool": datasets.Value("string"),
    "task": datasets.Value("string"),
    "text": datasets.Value("string"),
    "text_pair": datasets.Value("string"),
    "word": datasets.Value("string"),
    "label": datasets.Value("int64"),
    "source_file": datasets.Value("string"),
    "source_row": datasets.Value("int64"),
})


@dataclass(frozen=True)
class Candidate:
    """One labelled source row: texts in the row contract's columns."""

    row: int
    text: str
    text_pair: str | None
    label: int
    word: str | None = None


@dataclass(frozen=True)
class PoolSpec:
    """A declared pool.

    Attributes:
        family: The prompt family (``calm``) or None for the task's default prompt.
        task: The task whose label names the labels index.
        path: Mirror path of the source file.
        columns: ``(text, text_pair)`` column names (``text_pair`` None for single texts).
        half: Keep only rows in this fixed half of ``path`` (``half_of``), or None.
        labels: Source label value -> label name of ``task`` (default: the value is a name or
            an index).
        word: Column of the WiC target word.
        exclude: Mirror files (TSV) whose texts no demonstration may share.
        calm: Render ``text``/``text_pair`` in CALM's indicator format for this task.
        why: One line for docs and the manifest.
        reader: Reads the candidates itself (the source is not a plain labelled table: ART),
            excluding the test rows on its own; None for the generic reader.
        also_reads: Further mirror files ``reader`` reads.

    """

    family: str | None
    task: str
    path: str
    columns: tuple[str, str | None]
    why: str
    half: int | None = None
    labels: tuple[tuple[str, str], ...] = ()
    word: str | None = None
    exclude: tuple[tuple[str, tuple[str, ...]], ...] = ()
    calm: bool = False
    reader: Callable[[SourceResolver], Iterator[Candidate]] | None = None
    also_reads: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        """File stem of the pool."""
        return pool_name(self.family, self.task)

    @property
    def sources(self) -> tuple[str, ...]:
        """Every mirror file the pool reads."""
        return (self.path, *self.also_reads, *(path for path, _ in self.exclude))


ART_DEV = "art/dev.jsonl"
ART_LABELS = "art/dev-labels.lst"
ART_ANNOTATION = "coherence/art/ART_test_rand200_annotation_merged2.json"


def art_candidates(resolver: SourceResolver) -> Iterator[Candidate]:
    """ART dev stories no ``art_coherence`` row comes from, as whole-story pairs.

    ``art_coherence`` uses the annotated records (``val_<line>``) of the dev file; a dev line
    is a candidate when it is not one of them and shares neither observation with one (ART
    has several lines per story). ``text`` / ``text_pair`` are the story with hypothesis 1 / 2
    (the suite's full-span ``original`` row), ``label`` the plausible one (``dev-labels.lst``).
    """
    annotations = json.loads(resolver.path(ART_ANNOTATION).read_text(encoding="utf-8"))
    used = {int(str(r["id"])[4:]) for r in annotations}
    banned = {str(r[k]).strip() for r in annotations for k in ("observation_1", "observation_2")}
    lines = resolver.path(ART_DEV).read_text(encoding="utf-8").splitlines()
    labels = resolver.path(ART_LABELS).read_text(encoding="utf-8").splitlines()
    for row, line in enumerate(lines):
        record = json.loads(line)
        obs1, obs2 = record["obs1"].strip(), record["obs2"].strip()
        if row in used or obs1 in banned or obs2 in banned or labels[row].strip() not in ("1", "2"):
            continue
        story = [" ".join(p for p in (obs1, record[h].strip(), obs2) if p)
                 for h in ("hyp1", "hyp2")]
        yield Candidate(row, story[0], story[1], int(labels[row]) - 1)


CONV_ENT_TRAIN = "coherence/conv_ent/ConvEnt_train_resplit.json"
CONV_ENT_TEST = "coherence/conv_ent/ConvEnt_test_annotation_merged2.json"


def conv_ent_candidates(resolver: SourceResolver) -> Iterator[Candidate]:
    """ConvEnt train dialogs (whole) from no conversation or hypothesis of the test file.

    ``text`` is the whole dialog written as ``conv_ent_coherence`` writes its full-span row
    (``SpeakerA: ... SpeakerB: ...``), ``text_pair`` the hypothesis, ``label`` 1 = entailment.
    A train record is dropped when its Switchboard conversation (``dialog_source``) or its
    hypothesis appears in the test annotations.
    """
    test = json.loads(resolver.path(CONV_ENT_TEST).read_text(encoding="utf-8"))
    conversations = {r.get("dialog_source") for r in test}
    hypotheses = {str(r.get("hypothesis", "")).strip() for r in test}
    train = json.loads(resolver.path(CONV_ENT_TRAIN).read_text(encoding="utf-8"))
    for row, record in enumerate(train):
        if (record.get("dialog_source") in conversations or record.get("label") not in (0, 1)
                or str(record["hypothesis"]).strip() in hypotheses):
            continue
        dialog = " ".join(f"Speaker{t['speaker']}: {t['text']}" for t in record["turns"])
        yield Candidate(row, dialog, record["hypothesis"], record["label"])


_NLI2 = (("entailment", "entailment"), ("neutral", "not_entailment"),
         ("contradiction", "not_entailment"))
_BECEL = "becel/{}/{}.tsv"


def _ex(task: str, *files: tuple[str, tuple[str, ...]]) -> tuple:
    return tuple((_BECEL.format(task, f), cols) for f, cols in files)


_S12 = ("sentence1", "sentence2")
_MRPC_EX = _ex("mrpc", ("train", _S12), ("validation", _S12), ("symmetric", _S12),
               ("semantic", (*_S12, "sentence2_paraphrase")),
               ("negational", (*_S12, "sentence2_neg")))
_POOLS: tuple[PoolSpec, ...] = (
    PoolSpec(None, "sst2", "sst2/glue_train.tsv", ("sentence", None),
             "GLUE SST-2 train (no suite tests its rows)",
             exclude=_ex("sst2", ("validation", ("sentence",)),
                         ("semantic", ("sentence", "sentence_paraphrase")))),
    PoolSpec(None, "rte", MNLI_DEV, ("premise", "hypothesis"),
             "MultiNLI dev-matched half 0, neutral/contradiction as not_entailment (RTE train's "
             "not_entailment rows are rte_symmetric's test rows)", half=0, labels=_NLI2),
    PoolSpec(None, "mrpc", "becel/mrpc/test.tsv", _S12,
             "MRPC test (GLUE; no suite reads it)", exclude=_MRPC_EX),
    PoolSpec(None, "wic", "becel/wic/validation.tsv", _S12,
             "WiC dev (no suite reads it; WiC train is wholly wic_symmetric's test rows)",
             word="word",
             exclude=_ex("wic", ("train", _S12), ("semantic", (*_S12, "sentence2_paraphrase")))),
    PoolSpec(None, "snli", MNLI_DEV, ("premise", "hypothesis"),
             "MultiNLI dev-matched half 0 (the project's NLI training half)", half=0),
    PoolSpec(None, "mnli", SNLI_DEV, ("premise", "hypothesis"),
             "SNLI dev (every MultiNLI dev-matched row is a test row of an MNLI suite)"),
    PoolSpec(None, "boolq", "becel/boolq/validation.tsv", ("question", "passage"),
             "BoolQ dev rows whose question and passage no BoolQ suite holds",
             exclude=_ex("boolq", ("semantic", ("passage", "question", "question_paraphrase")),
                         ("negational", ("passage", "question")))),
    PoolSpec(None, "ag_news", "becel/ag_news/validation.tsv", ("text", None),
             "BECEL's AG News validation half (disjoint from the evaluated half)",
             exclude=_ex("ag_news", ("test", ("text",)),
                         ("semantic", ("text", "text_paraphrase")))),
    PoolSpec(None, "art", ART_DEV, ("obs1", None),
             "ART dev stories none of art_coherence's 189 annotated records comes from (whole "
             "stories, hypothesis 1 / 2)", reader=art_candidates,
             also_reads=(ART_LABELS, ART_ANNOTATION)),
    PoolSpec(None, "conv_ent", CONV_ENT_TRAIN, ("turns", "hypothesis"),
             "ConvEnt train dialogs (whole) sharing no conversation or hypothesis with the "
             "test annotations", reader=conv_ent_candidates, also_reads=(CONV_ENT_TEST,)),
    PoolSpec("calm", "mnli", SNLI_DEV, ("premise", "hypothesis"),
             "SNLI dev in CALM's MNLI format", calm=True),
    PoolSpec("calm", "rte", MNLI_DEV, ("premise", "hypothesis"),
             "MultiNLI dev-matched half 0 in CALM's RTE format", half=0, labels=_NLI2,
             calm=True),
    PoolSpec("calm", "mrpc", "becel/mrpc/test.tsv", _S12,
             "MRPC test in CALM's MRPC format", exclude=_MRPC_EX, calm=True),
    PoolSpec("calm", "klue_sts", "korsts/sts-train.tsv", _S12,
             "KorSTS train (score >= 3.0 as paraphrase) in CALM's KLUE-STS format",
             calm=True),
)
#: Pool name -> declaration.
POOLS: dict[str, PoolSpec] = {p.name: p for p in _POOLS}


def _label(spec: PoolSpec, value: str, where: str) -> int | None:
    names = get_task(spec.task).label_names
    value = value.strip()
    if spec.path.startswith("korsts/"):
        try:
            return int(float(value) >= 3.0)
        except ValueError:
            raise SourceError(f"{where}: score {value!r} is not a number") from None
    mapped = dict(spec.labels).get(value, value)
    if mapped.isdigit() and int(mapped) < len(names):
        return int(mapped)
    if mapped in names:
        return names.index(mapped)
    return None  # unlabelled (SNLI "-") rows are not demonstrations


def candidates(spec: PoolSpec, resolver: SourceResolver) -> Iterator[Candidate]:
    """Labelled rows of the pool's file (and half), in file order."""
    if spec.reader is not None:
        yield from spec.reader(resolver)
        return
    path = resolver.path(spec.path)
    text_col, pair_col = spec.columns
    if spec.path.endswith(".jsonl"):
        records: list[dict] = [json.loads(line) for line in
                               path.read_text(encoding="utf-8").splitlines() if line.strip()]
        label_col = "label"
    else:
        quoting = csv.QUOTE_NONE if spec.path.startswith("korsts/") else csv.QUOTE_MINIMAL
        records = read_tsv(path, quoting=quoting)
        label_col = "score" if spec.path.startswith("korsts/") else "label"
    for row, record in enumerate(records):
        if spec.half is not None and half_of(spec.path, row) != spec.half:
            continue
        label = _label(spec, str(record[label_col]), f"{spec.path}:{row}")
        if label is None:
            continue
        yield Candidate(row, record[text_col], record[pair_col] if pair_col else None, label,
                        record[spec.word] if spec.word else None)


def excluded_texts(spec: PoolSpec, resolver: SourceResolver) -> set[str]:
    """Every text of the files a demonstration may not share (stripped)."""
    out: set[str] = set()
    for path, columns in spec.exclude:
        for record in read_tsv(resolver.path(path)):
            out.update(record[c].strip() for c in columns if record.get(c))
    return out


def _rank(spec: PoolSpec, row: int) -> bytes:
    return hashlib.sha256(f"{spec.path}#{row}".encode()).digest()


@dataclass
class PoolCheck:
    """What checking a pool's candidates against the folder's test rows dropped.

    Attributes:
        examined: Candidates checked (in hash order, until the pool was full).
        exact: Dropped: a text of theirs is a test row's text.
        near_duplicate: Dropped: a near duplicate of a test row (word-set Jaccard >= 0.8).
        examples: The first few dropped, ``id: reason``, for the build log.

    """

    examined: int = 0
    exact: int = 0
    near_duplicate: int = 0
    examples: list[str] = field(default_factory=list)

    def entry(self) -> dict:
        """The ``suites.json`` record of the check."""
        return {"examined": self.examined, "exact": self.exact,
                "near_duplicate": self.near_duplicate}


def _exact_reason(candidate: Candidate, index: TextIndex) -> str | None:
    """Why the candidate is exactly a test row's text, or None."""
    for text in (candidate.text, candidate.text_pair):
        if text is not None and index.exact(text):
            return f"text {text[:50]!r} is a test row's text"
    return None


def _near_reason(words: list[frozenset[str]], index: TextIndex) -> str | None:
    """Why a candidate with these word sets (one per text) is a near duplicate, or None."""
    units = [*words, frozenset().union(*words)] if len(words) > 1 else words
    for unit in units:
        found = index.find(unit)
        if found is not None:
            return found.describe()
    return None


def checked(candidates: list[Candidate], index: TextIndex | None, spec: PoolSpec,
            check: PoolCheck) -> list[Candidate]:
    """The first ``POOL_SIZE`` candidates that are no test row of the folder, in order.

    Exact matches are found first (a set lookup); only the others are split into words.
    """
    if index is None:
        return candidates[:POOL_SIZE]
    kept: list[Candidate] = []
    for start in range(0, len(candidates), CHECK_BATCH):
        batch = candidates[start:start + CHECK_BATCH]
        exact = [_exact_reason(c, index) for c in batch]
        texts = [[t for t in (c.text, c.text_pair) if t is not None]
                 for c, why in zip(batch, exact, strict=True) if why is None]
        sets = iter(word_sets([t for group in texts for t in group]))
        for candidate, why in zip(batch, exact, strict=True):
            check.examined += 1
            kind = "exact"
            if why is None:
                n = 1 if candidate.text_pair is None else 2
                why, kind = _near_reason([next(sets) for _ in range(n)], index), "near_duplicate"
            if why is None:
                kept.append(candidate)
                if len(kept) == POOL_SIZE:
                    return kept
                continue
            setattr(check, kind, getattr(check, kind) + 1)
            if len(check.examples) < 3:
                check.examples.append(f"{spec.path}#{candidate.row}: {why}")
    return kept


def pool_rows(spec: PoolSpec, resolver: SourceResolver, index: TextIndex | None = None,
              check: PoolCheck | None = None) -> list[dict]:
    """The pool's rows: candidates sharing no excluded text, in hash order, none a test row.

    ``index``: the folder's test texts
    (:func:`consistency_bench.builders.overlap.folder_texts.folder_index`);
    ``None`` checks nothing beyond the declared files. ``check`` receives the counts.
    """
    banned = excluded_texts(spec, resolver)
    kept = [c for c in candidates(spec, resolver)
            if c.text.strip() not in banned
            and (c.text_pair is None or c.text_pair.strip() not in banned)]
    kept.sort(key=lambda c: _rank(spec, c.row))
    kept = checked(kept, index, spec, check if check is not None else PoolCheck())
    render = _calm_renderer(spec.task) if spec.calm else None
    rows = []
    for c in kept:
        text, pair = (render(c), None) if render else (c.text, c.text_pair)
        rows.append({"id": f"{FOLDER}/{spec.name}/{c.row:06d}", "pool": spec.name,
                     "task": spec.task, "text": text, "text_pair": pair, "word": c.word,
                     "label": c.label, "source_file": spec.path, "source_row": c.row})
    return rows


def _calm_renderer(task: str) -> Callable[[Candidate], str]:
    from consistency_bench.builders.calm import calm_input, render

    return lambda c: render(calm_input(task, c))


def build_pools(resolver: SourceResolver, root: Path,
                log: Callable[[str], None] = print,
                suites: Mapping[str, dict] | None = None) -> dict[str, dict]:
    """Write every declared pool whose sources are available; return the manifest entries.

    ``suites``: the folder's ``suites.json`` entries (every suite under ``root``); no
    demonstration is a test row of any of them (exactly or as a near duplicate). ``None``
    reads them from ``root``. A pool left with no candidate is logged and not written.

    ``root`` is the folder being built (``build`` stages it beside the real one, holding links
    to the files kept): a pool not written this time has its earlier file removed there, so
    the folder never holds a pool file ``suites.json`` does not list (one left from a build
    before a pool emptied made ``publish-suites`` refuse the folder, and building again kept it).
    """
    from consistency_bench.bench.errors import SourceUnavailableError
    from consistency_bench.builders.freshness import code_version
    from consistency_bench.builders.overlap.folder_texts import folder_index, suites_digest
    from consistency_bench.builders.table_io import contract_table, write_parquet

    if suites is None:
        suites = read_manifest(root) if (root / MANIFEST).is_file() else {}
    index = folder_index(root, suites) if suites else None
    digest = suites_digest(suites)
    entries: dict[str, dict] = {}
    for name, spec in sorted(POOLS.items()):
        check = PoolCheck()
        try:
            rows = pool_rows(spec, resolver, index, check)
        except SourceUnavailableError as exc:
            log(f"few-shot pool {name}: skipped ({str(exc).split('; ')[0]})")
            _drop_earlier(root, name, log)
            continue
        dropped = check.exact + check.near_duplicate
        if dropped:
            log(f"few-shot pool {name}: {check.exact} exact and {check.near_duplicate} "
                f"near-duplicate test rows dropped of {check.examined} candidates examined "
                f"(e.g. {check.examples[0]})")
        if not rows:
            log(f"few-shot pool {name}: none (every candidate is a test row of this folder's "
                "suites); its suites have no demonstrations")
            _drop_earlier(root, name, log)
            continue
        target = root / FOLDER / f"{name}.parquet"
        target.parent.mkdir(parents=True, exist_ok=True)
        table = write_parquet(contract_table(FEATURES, rows, f"{FOLDER}/{name}"), target)
        entries[name] = {
            "family": spec.family, "task": spec.task, "rows": len(rows), "sha256": table,
            "path": f"{FOLDER}/{name}.parquet", "why": spec.why,
            "half": spec.half, "version": POOL_VERSION,
            "checked_against": digest, "test_rows_dropped": check.entry(),
            "sources": [{"path": p, "md5": SOURCES[p].md5} for p in spec.sources],
            "bytes": target.stat().st_size, "code_version": code_version(),
        }
    return entries


def _drop_earlier(root: Path, name: str, log: Callable[[str], None]) -> None:
    """Remove an earlier build's file of pool ``name`` (its own path; a link is left alone)."""
    earlier = root / FOLDER / f"{name}.parquet"
    if earlier.is_file() and not earlier.is_symlink() and not earlier.parent.is_symlink():
        earlier.unlink()
        log(f"few-shot pool {name}: the earlier build's {FOLDER}/{name}.parquet removed")


def recheck_pools(root: Path, suites: Mapping[str, dict], pools: Mapping[str, dict],
                  log: Callable[[str], None] = print) -> dict[str, dict]:
    """Drop the demonstrations that became test rows when the folder's suites changed.

    For writers that add suites to a built folder without its sources (``generate``, the
    rating import): pools checked against other suites are checked again, exactly and for
    near duplicates, and a demonstration that is now a test row is dropped (nothing takes
    its place: refilling needs the sources; ``build`` does it). CALM pool rows hold their
    sentences rendered, so they are compared as rendered (the indicator words included).
    A pool left empty is removed. Returns the updated entries.
    """
    from consistency_bench.bench.prompting.demonstrations import load_pool
    from consistency_bench.builders.overlap.folder_texts import folder_index, suites_digest
    from consistency_bench.builders.table_io import contract_table, write_parquet

    digest = suites_digest(suites)
    stale = {n: e for n, e in pools.items() if e.get("checked_against") != digest}
    if not stale:
        return dict(pools)
    index = folder_index(root, suites) if suites else None
    out = dict(pools)
    for name, entry in sorted(stale.items()):
        rows = load_pool(root, name, entry)
        check = PoolCheck(examined=len(rows))
        keep = []
        for row in rows:
            demo = Candidate(row["source_row"], row["text"], row["text_pair"], row["label"])
            found = _exact_reason(demo, index) if index is not None else None
            kind = "exact"
            if found is None and index is not None:
                texts = [t for t in (demo.text, demo.text_pair) if t is not None]
                found, kind = _near_reason(word_sets(texts), index), "near_duplicate"
            if found is None:
                keep.append(row)
            else:
                setattr(check, kind, getattr(check, kind) + 1)
        target = root / entry["path"]
        if not keep:
            target.unlink()
            del out[name]
            log(f"few-shot pool {name}: every demonstration is now a test row; removed")
            continue
        updated = {**entry, "checked_against": digest}
        if len(keep) < len(rows):
            log(f"few-shot pool {name}: {len(rows) - len(keep)} of {len(rows)} demonstrations "
                "are now test rows of this folder's suites; dropped (`build` refills the pool)")
            updated["sha256"] = write_parquet(contract_table(FEATURES, keep, f"{FOLDER}/{name}"),
                                              target)
            updated["rows"], updated["bytes"] = len(keep), target.stat().st_size
            previous = entry.get("test_rows_dropped", {})
            updated["test_rows_dropped"] = {
                k: int(previous.get(k, 0)) + v for k, v in check.entry().items()}
        out[name] = updated
    return out
