"""Build the few-shot demonstration pools of a built folder from training data in the mirror.

One pool per prompt key (``bench.fewshot``). Every pool is declared here: its source file
(optionally one fixed half, ``bench.contamination.half_of``), how labels are read, and the
mirror files whose texts a demonstration must not share (the files the task's suites are built
from). Of the candidates left, the ``POOL_SIZE`` with the smallest ``sha256(f"{file}#{row}")``
are kept, in that order, so a pool depends on its declaration and the source bytes only, never
on which suites a build includes. ``tests/test_fewshot.py`` checks every pool against every
suite that uses it (ids, source rows and texts).

Tasks without a pool (no labelled rows in the mirror that are not test rows): QNLI, KorNLI
and KLUE-NLI (CALM). ART takes dev stories the annotated test records do not come from,
ConvEnt its train dialogs.

RTE's own train file cannot be used: its 1,241 ``not_entailment`` rows are the test rows of
``rte_symmetric``, which would leave a pool of one label; RTE demonstrations are MultiNLI
dev-matched half 0 pairs (neutral and contradiction as ``not_entailment``) instead. MRPC and
WiC train files are wholly test rows of their symmetric suites: their pools come from MRPC
test (GLUE, labelled in BECEL's copy) and WiC dev.
"""

from __future__ import annotations

import csv
import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import datasets

import builders.catalog  # noqa: F401  (registers every task: klue_sts, ...)
from bench.contamination import half_of
from bench.errors import SourceError
from bench.fewshot import FOLDER, pool_name
from bench.sources import SOURCES, SourceResolver
from bench.tasks import get_task
from bench.tsv import read_tsv

#: Demonstrations kept per pool (``--num-fewshot`` may ask for at most this many).
POOL_SIZE = 64
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


def pool_rows(spec: PoolSpec, resolver: SourceResolver) -> list[dict]:
    """The pool's rows: ``POOL_SIZE`` candidates sharing no excluded text, by hash rank."""
    banned = excluded_texts(spec, resolver)
    kept = [c for c in candidates(spec, resolver)
            if c.text.strip() not in banned
            and (c.text_pair is None or c.text_pair.strip() not in banned)]
    kept.sort(key=lambda c: _rank(spec, c.row))
    render = _calm_renderer(spec.task) if spec.calm else None
    rows = []
    for c in kept[:POOL_SIZE]:
        text, pair = (render(c), None) if render else (c.text, c.text_pair)
        rows.append({"id": f"{FOLDER}/{spec.name}/{c.row:06d}", "pool": spec.name,
                     "task": spec.task, "text": text, "text_pair": pair, "word": c.word,
                     "label": c.label, "source_file": spec.path, "source_row": c.row})
    return rows


def _calm_renderer(task: str) -> Callable[[Candidate], str]:
    from builders.calm import calm_input, render

    return lambda c: render(calm_input(task, c))


def build_pools(resolver: SourceResolver, root: Path,
                log: Callable[[str], None] = print) -> dict[str, dict]:
    """Write every declared pool whose sources are available; return the manifest entries."""
    from bench.errors import SourceUnavailableError
    from builders.freshness import code_version
    from builders.table_io import contract_table, write_parquet

    entries: dict[str, dict] = {}
    for name, spec in sorted(POOLS.items()):
        try:
            rows = pool_rows(spec, resolver)
        except SourceUnavailableError as exc:
            log(f"few-shot pool {name}: skipped ({str(exc).split('; ')[0]})")
            continue
        target = root / FOLDER / f"{name}.parquet"
        target.parent.mkdir(parents=True, exist_ok=True)
        digest = write_parquet(contract_table(FEATURES, rows, f"{FOLDER}/{name}"), target)
        entries[name] = {
            "family": spec.family, "task": spec.task, "rows": len(rows), "sha256": digest,
            "path": f"{FOLDER}/{name}.parquet", "why": spec.why,
            "half": spec.half,
            "sources": [{"path": p, "md5": SOURCES[p].md5} for p in spec.sources],
            "bytes": target.stat().st_size, "code_version": code_version(),
        }
    return entries
