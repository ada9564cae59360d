"""The plans of a leaderboard publish and a suites publish (:mod:`consistency_bench.leaderboard.publish`).

The files sent: a rendered site's own files (its record), each entry's results and the card;
a built folder's verified Parquet files, manifest and ``eval.yaml``. Nothing is followed
through a symbolic link.
"""  # noqa: E501

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from consistency_bench.bench.errors import ConfigError, DataError
from consistency_bench.bench.io.digest import file_sha256
from consistency_bench.leaderboard.publish.commit import Plan


def _folder_files(root: Path, prefix: str = "") -> dict[str, Path]:
    """Every regular file under ``root`` (dot-files left out); a symbolic link is refused.

    Raises:
        ConfigError: A file or folder to be sent is a symbolic link (its bytes could be any
            file of the machine: a token) or not a regular file.

    """
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(dirnames + filenames):
            if name.startswith("."):
                continue
            path = here / name
            if path.is_symlink():
                raise ConfigError(
                    f"{path}: is a symbolic link (to {os.readlink(path)}); a publish sends only "
                    "the folder's own regular files. Nothing was sent"
                )
            if name in filenames:
                if not path.is_file():
                    raise ConfigError(f"{path}: not a regular file; nothing was sent")
                out[prefix + path.relative_to(root).as_posix()] = path
    return dict(sorted(out.items()))


def site_files(site: Path) -> dict[str, Path]:
    """The files of a rendered site that ``leaderboard`` wrote (its record), no others.

    ``leaderboard`` keeps files a user added to its folder (``thesis.tex``, ``CNAME``); a
    publish sent them too, to a public repo. They are left out, with one line on stderr.
    A site without a record (rendered before it existed) sends every file, as before.
    """
    import sys

    from consistency_bench.bench.io.output_checks import read_owned

    files = _folder_files(site)
    record = read_owned(site)
    if record is None or record.get("command") != "leaderboard":
        return files
    owned = set(record["files"])
    foreign = sorted(k for k in files if k not in owned)
    if foreign:
        more = f" (and {len(foreign) - 5} more)" if len(foreign) > 5 else ""
        print(f"note: {site}: not sent, not written by `consistency-bench leaderboard`: "
              f"{', '.join(foreign[:5])}{more}", file=sys.stderr)
    return {k: v for k, v in files.items() if k in owned}


def _parquet(config: Mapping) -> bool:
    """Whether every data file pattern of a ``configs:`` entry names Parquet files."""
    files = config.get("data_files")
    items = files if isinstance(files, list) else [files]
    paths = [i.get("path") if isinstance(i, Mapping) else i for i in items]
    return all(isinstance(p, str) and p.endswith(".parquet") for p in paths)


def leaderboard_card(site: Path, repo_id: str, configs: Sequence[Mapping] = (),
                     sections: Sequence[str] = ()) -> str:
    """Dataset card of the results repo: YAML header (its ``configs:`` list), table, layout.

    Args:
        site: The rendered site (its ``leaderboard.md`` is the table).
        repo_id: The dataset repo.
        configs: More ``configs:`` entries after ``card_configs()`` (the ``results`` config,
            leaderboard/dataset/records.py): one list that every publish part appends to
            (the details config, leaderboard/details/).
        sections: Markdown paragraphs appended to the card.

    """
    import yaml

    from consistency_bench.leaderboard.dataset.records import RESULTS_FILE, card_configs

    table = (site / "leaderboard.md").read_text(encoding="utf-8")
    # `datasets` infers ONE builder for every config of a repo from the first config's data
    # files (datasets 5.2.0, load.py l. 440-451): a Parquet config listed after a JSON one is
    # read as JSON and fails. So Parquet configs are listed first (a stable sort, the given
    # order otherwise); every config of this repo should be Parquet (issue 27 item 10).
    ordered = sorted([*card_configs(), *map(dict, configs)], key=lambda c: not _parquet(c))
    header = {"license": "apache-2.0", "pretty_name": "consistency-bench leaderboard",
              "tags": ["leaderboard", "consistency"], "configs": ordered}
    return (
        "---\n" + yaml.safe_dump(header, sort_keys=False, allow_unicode=True) + "---\n\n"
        f"# consistency-bench leaderboard ({repo_id})\n\n"
        + table
        + f"\nFiles: `{RESULTS_FILE}` (config `results`: one row per view and entry, "
        "`load_dataset(\"" + repo_id + "\", \"results\", split=\"train\")`), "
        "`leaderboard.json` (everything), `index.html` (sortable page), "
        "`heatmap.png`, `submissions/<entry>/` (metadata, results and `predictions.jsonl.gz` "
        "of each entry: `consistency-bench verify` re-scores them; `run.json`, how the "
        "predictions were made, and `reproduction.json`, what `consistency-bench reproduce` "
        "found, where the entry has them).\n"
        + "".join("\n" + section.rstrip("\n") + "\n"
                  for section in (*_plot_sections(site), *sections))
    )


def _plot_sections(site: Path) -> list[str]:
    """The card's plots (leaderboard/plots/), when the site has them."""
    from consistency_bench.leaderboard.plots.png import PROFILE, SCATTER

    shown = [(SCATTER, "Accuracy against consistency per view (95% intervals; hollow grey: "
                       "reference rows)"),
             (PROFILE, "Per-kind profile of an entry beside the #1 of all suites")]
    lines = [f"![{alt}]({path})\n" for path, alt in shown if (site / path).is_file()]
    return ["## Plots\n\n" + "\n".join(lines)] if lines else []


def plan_leaderboard(site: str | os.PathLike, submissions: str | os.PathLike | None,
                     repo_id: str) -> Plan:
    """Files of a leaderboard publish: the rendered site, each entry's results, the card.

    The entries sent are exactly those the site was rendered from (its record, written by
    ``leaderboard``), checked by hash against ``submissions``; nothing is followed through a
    symbolic link.
    """
    site = Path(site)
    if not (site / "leaderboard.md").is_file():
        raise ConfigError(
            f"{site}: no rendered leaderboard; run `consistency-bench leaderboard --out {site}`"
        )
    if site.is_symlink():
        raise ConfigError(f"--site {site}: is a symbolic link; name the folder itself")
    files: dict[str, Path | bytes] = {
        k: v for k, v in site_files(site).items() if not k.startswith("submissions/")
    }
    if submissions is not None:
        from consistency_bench.bench.io.output_checks import read_owned
        from consistency_bench.leaderboard.submissions.reader import site_entries

        root = Path(submissions)
        if root.is_symlink() or not root.is_dir():
            raise ConfigError(f"--submissions {submissions}: no such folder (or a link)")
        record = read_owned(site)
        for name, d in site_entries(record, site, root).items():
            shown = (record or {}).get("entries", {}).get(name) or {}
            for file in ("meta.yaml", "results.json", *_optional_files(shown)):
                files[f"submissions/{name}/{file}"] = d / file
    files["README.md"] = leaderboard_card(site, repo_id).encode("utf-8")
    return Plan(repo_id, "dataset", dict(sorted(files.items())), "Update leaderboard")


def _optional_files(shown: Mapping) -> list[str]:
    """The run record and reproduction of an entry, when the site was rendered with them."""
    from consistency_bench.leaderboard.reproduce.run_records import REPRODUCTION, RUN

    return [n for n in (RUN, REPRODUCTION) if n in shown]


def verified_suite_files(root: Path) -> tuple[dict[str, dict], dict[str, Path]]:
    """The manifest and the files of a built folder, every Parquet file checked first.

    Every suite's file and every few-shot pool (``suites.json``'s ``fewshot``) must exist and
    match its ``suites.json`` sha256, and the folder may hold no file besides those,
    ``suites.json`` and ``README.md`` (dot-files are never sent), so what is published is
    exactly what was built. All problems are reported at once.

    Raises:
        DataError: A file is missing, changed after the build, or not in ``suites.json``.

    """
    from consistency_bench.bench.io.manifest import MANIFEST, SPLIT, read_manifest
    from consistency_bench.bench.prompting.demonstrations import read_pools

    manifest = read_manifest(root)
    files = _folder_files(root)
    expected = {
        (info.get("path") if isinstance(info, dict) else None) or f"{suite}/{SPLIT}.parquet": suite
        for suite, info in manifest.items()
    }
    pools = {f"fewshot pool {name}": info for name, info in read_pools(root).items()}
    expected.update({info.get("path") or name: name for name, info in pools.items()})
    entries = {**manifest, **pools}
    problems = []
    for rel, suite in sorted(expected.items()):
        want = entries[suite].get("sha256") if isinstance(entries[suite], dict) else None
        if not isinstance(want, str):
            problems.append(f"{MANIFEST}: suite {suite!r} has no sha256")
        elif rel not in files:
            problems.append(f"{rel}: missing")
        elif (digest := file_sha256(files[rel])) != want:
            problems.append(f"{rel}: sha256 {digest[:12]}... is not suites.json's "
                            f"{want[:12]}... (changed after the build)")
    extra = sorted(set(files) - set(expected) - {MANIFEST, "README.md"})
    problems += [f"{rel}: not in suites.json" for rel in extra]
    if problems:
        more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
        raise DataError(
            f"{root}: {len(problems)} file(s) do not match suites.json, nothing was sent: "
            + "; ".join(problems[:5]) + more + "; rebuild with `consistency-bench build`"
        )
    return manifest, files


def plan_suites(data_dir: str | os.PathLike, repo_id: str, *,
                framework: str | None = None) -> Plan:
    """Files of a suites publish: card, manifest, verified Parquet files and ``eval.yaml``."""
    from consistency_bench.leaderboard.hub.eval_results import FRAMEWORK, eval_yaml

    root = Path(data_dir)
    if not (root / "suites.json").is_file() or not (root / "README.md").is_file():
        raise ConfigError(
            f"{root}: not a built suite folder (suites.json / README.md missing); run "
            "`consistency-bench build --out DIR` first"
        )
    manifest, files = verified_suite_files(root)
    out: dict[str, Path | bytes] = dict(files)
    out["eval.yaml"] = eval_yaml(manifest, framework=framework or FRAMEWORK).encode("utf-8")
    return Plan(repo_id, "dataset", dict(sorted(out.items())), "Update consistency-bench suites")
