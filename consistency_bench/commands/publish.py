"""``publish``, ``publish-suites`` and ``publish-results``: push to the Hugging Face Hub."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from consistency_bench.arguments import add_data, add_dry_run, add_site, add_submissions

TOKEN_NOTE = ("Token: HF_TOKEN or the stored login (`hf auth login`); never printed. "
              "HF_ENDPOINT selects another Hub.")


def _parser(subparsers, name: str, help: str, description: str) -> argparse.ArgumentParser:
    return subparsers.add_parser(
        name, help=help, description=f"{description} {TOKEN_NOTE}",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``publish``, ``publish-suites`` and ``publish-results``."""
    parser = _parser(
        subparsers, "publish",
        "push the leaderboard data to a dataset repo (one commit) and the page to a Space",
        "Push the leaderboard (card with the table, leaderboard.json, index.html, heatmap, "
        "each entry's meta.yaml, results.json and predictions.jsonl.gz) to a dataset repo in "
        "one commit; with --space, then push the page to a static Space in one commit.",
    )
    parser.add_argument("--repo", required=True, metavar="ORG/NAME",
                        help="dataset repo of the leaderboard (created when missing)")
    add_site(parser, "output folder of `consistency-bench leaderboard`")
    add_submissions(parser, "submissions folder whose entries are published")
    parser.add_argument("--space", metavar="ORG/NAME",
                        help="also push the page to this static Space (created when missing); "
                             "it links to --repo")
    parser.add_argument("--suites-repo", metavar="ORG/NAME",
                        help="dataset repo of the suites (publish-suites), linked from the "
                             "Space card")
    add_dry_run(parser)
    parser.add_argument("--model-card", metavar="PATH",
                        help="also write one entry's scores into this local model card's "
                             "model-index metadata (needs --entry)")
    parser.add_argument("--entry", metavar="SLUG", help="entry whose scores go into --model-card")
    parser.set_defaults(func=run_publish)

    parser = _parser(
        subparsers, "publish-suites",
        "push the built suites and eval.yaml so load_dataset(ORG/NAME, config) works",
        "Push a built suite folder (card, suites.json, every Parquet file) plus a generated "
        "eval.yaml (one Hub Eval Results task per suite) to a dataset repo in one commit. "
        "Every Parquet file is checked against suites.json's sha256 before anything is sent. "
        "Unchanged files are not sent again.",
    )
    parser.add_argument("--repo", required=True, metavar="ORG/NAME",
                        help="dataset repo of the suites (created when missing)")
    add_data(parser, "built suite folder (output of `consistency-bench build`)")
    parser.add_argument("--evaluation-framework", default=None, metavar="NAME",
                        help="evaluation_framework written into eval.yaml: a name the Hub "
                        "lists (leaderboard.hub_eval.HUB_FRAMEWORKS); left out by default, as "
                        "neither consistency-bench nor lm-evaluation-harness is listed")
    add_dry_run(parser)
    parser.set_defaults(func=run_publish_suites)

    parser = _parser(
        subparsers, "publish-results",
        "open a pull request adding an entry's scores to a model repo (.eval_results)",
        "Open a pull request on the model repo that adds "
        ".eval_results/consistency-bench_<setup>.yaml: one Hub Eval Results entry per scored "
        "suite, valued by consistent_accuracy_cc, pointing at the benchmark dataset published "
        "by `publish-suites`. An entry that is degenerate or incomplete on a suite is refused "
        "unless --include-flagged.",
    )
    parser.add_argument("--entry", required=True, metavar="SLUG",
                        help="submission whose results are published")
    parser.add_argument("--model", required=True, metavar="ORG/MODEL",
                        help="model repo on the Hub that gets the pull request")
    parser.add_argument("--dataset", required=True, metavar="ORG/NAME",
                        help="benchmark dataset repo (where publish-suites put eval.yaml)")
    parser.add_argument("--dataset-revision", metavar="SHA",
                        help="git revision of the benchmark dataset the scores refer to")
    parser.add_argument("--setup", required=True, choices=("classifier", "plain", "chat"),
                        help="how the model was run: a classification head, or a causal LM "
                        "with a plain prompt or its chat template (file name and notes)")
    parser.add_argument("--num-fewshot", type=int, default=0, metavar="K",
                        help="few-shot demonstrations of the run (causal LMs)")
    parser.add_argument("--length-norm", choices=("none", "chars", "tokens"), default="none",
                        help="length normalisation of the run (causal LMs)")
    parser.add_argument("--force", action="store_true",
                        help="publish although --model differs from the entry's meta.yaml "
                        "'model' (only when the entry really evaluates that model)")
    parser.add_argument("--include-flagged", action="store_true",
                        help="publish suites the leaderboard flags degenerate (the flag goes "
                        "into notes) and an entry incomplete on some suites")
    parser.add_argument("--leaderboard-url", metavar="URL",
                        help="source.url of every result (default: the benchmark dataset's "
                        "page, where the Hub shows its leaderboard)")
    add_submissions(parser, "submissions folder holding SLUG/results.json")
    add_data(parser, "built suite folder that was published: refuse results scored on other "
             "files, leave out suites it lacks", default=None)
    parser.add_argument("--model-card", metavar="PATH",
                        help="your copy of the model's README.md: the pull request also "
                             "replaces README.md with it plus this entry's model-index "
                             "(the local file is not changed)")
    add_dry_run(parser)
    parser.set_defaults(func=run_publish_results)


def _read_results(submissions: str, entry: str) -> dict:
    """``submissions/entry/results.json``, with one-line errors."""
    from bench.errors import ConfigError
    from leaderboard.stored import check_values
    from leaderboard.submissions import recover

    if not entry or Path(entry).name != entry or entry.startswith("."):
        raise ConfigError(f"--entry {entry!r}: expected the name of a folder in {submissions}")
    root = Path(submissions)
    if root.is_dir() and not root.is_symlink():
        recover(root, lambda line: print(f"warning: {line}", file=sys.stderr))
    path = root / entry / "results.json"
    for link in (root, path.parent, path):
        if link.is_symlink():
            raise ConfigError(f"{link}: is a symbolic link; published results are read only "
                              "from the submissions folder's own files")
    if not path.is_file():
        raise ConfigError(f"{path}: no such submission (--entry {entry!r})")
    from bench.json_input import depth_above, too_deep_message

    try:
        text = path.read_text(encoding="utf-8")
        depth = depth_above(text)
        if depth is not None:
            raise ConfigError(f"{path}: {too_deep_message(depth)}")
        results = json.loads(text)
    except ValueError as exc:  # not JSON, not UTF-8, an integer of more than 4,300 digits
        raise ConfigError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(results, dict):
        raise ConfigError(f"{path}: expected a JSON object")
    if isinstance(results.get("suites"), dict):  # never publish a NaN or hand-edited score
        check_values(results, str(path))
    return results


def run_publish(args: argparse.Namespace) -> int:
    """Publish the leaderboard data (dataset repo) and, with ``--space``, the page (Space)."""
    from bench.errors import ConfigError
    from leaderboard.publish import check_repo_id, plan_leaderboard, write_model_card
    from leaderboard.space import plan_space, with_predictions

    repo = check_repo_id(args.repo)
    if args.suites_repo and not args.space:
        raise ConfigError("--suites-repo is linked from the Space card: it needs --space")
    plans = [with_predictions(plan_leaderboard(args.site, args.submissions, repo),
                              args.submissions)]
    if args.space:  # every plan is made (and checked) before anything is written or sent
        suites = check_repo_id(args.suites_repo, "--suites-repo") if args.suites_repo else None
        plans.append(plan_space(args.site, check_repo_id(args.space, "--space"), repo,
                                suites_repo=suites))
    if args.model_card:
        if not args.entry:
            raise ConfigError("--model-card needs --entry SLUG (the submission to take scores)")
        results = _read_results(args.submissions, args.entry)
        if args.dry_run:
            print(f"would write model-index for {args.entry!r} into {args.model_card}")
        else:
            write_model_card(args.model_card, results, args.entry, repo)
            print(f"wrote model-index for {args.entry!r} into {args.model_card}")
    for plan in plans:
        _go(plan, args.dry_run)
    return 0


def run_publish_suites(args: argparse.Namespace) -> int:
    """Publish the built suites with their eval.yaml."""
    from leaderboard.publish import check_repo_id, plan_suites

    plan = plan_suites(args.data, check_repo_id(args.repo), framework=args.evaluation_framework)
    return _go(plan, args.dry_run, show=("eval.yaml",))


#: A git revision: a hex commit sha (7-64 digits) or a ref name (``main``, ``v1.0``,
#: ``refs/pr/3``): letters, digits, ``. _ - /``, no ``..``, ``//``, leading ``-`` or ``/``,
#: trailing ``/``, ``.`` or ``.lock`` (git check-ref-format, narrowed to safe characters).
_REVISION = re.compile(r"[0-9a-f]{7,64}|[A-Za-z0-9_][A-Za-z0-9._/-]{0,127}")


def check_revision(value: str | None, flag: str = "--dataset-revision") -> str | None:
    """A git revision written into the results file; ``None`` passes.

    Raises:
        ConfigError: Anything but a hex sha or a plain ref name (``main; rm -rf /`` is
            refused, not written verbatim).

    """
    from bench.errors import ConfigError, shorten

    if value is None:
        return None
    if (not _REVISION.fullmatch(value) or ".." in value or "//" in value or "@{" in value
            or value.endswith(("/", ".", ".lock")) or "/." in value):
        raise ConfigError(f"{flag} {shorten(value)}: not a git revision; use a commit sha "
                          "(hex) or a ref name such as main or refs/pr/3 (letters, digits, "
                          ". _ - /)")
    return value


def _read_meta(submissions: str, entry: str) -> dict:
    """``submissions/entry/meta.yaml`` (empty when absent), with one-line errors.

    Read with the submissions' own loader rules (``bench.safe_yaml``: no anchors or aliases,
    size capped) and never through a symbolic link.
    """
    from bench.errors import ConfigError
    from bench.safe_yaml import read_yaml_file

    path = Path(submissions) / entry / "meta.yaml"
    if path.is_symlink():
        raise ConfigError(f"{path}: is a symbolic link; metadata is read only from the "
                          "submissions folder's own files")
    if not path.is_file():
        return {}
    meta = read_yaml_file(path)
    return meta if isinstance(meta, dict) else {}


def check_target_model(model: str, meta: dict, entry: str, force: bool) -> None:
    """``--model`` must be the entry's own ``meta.yaml`` ``model`` unless ``--force``.

    Raises:
        ConfigError: The entry's metadata names another model (or none) and ``force`` is not
            set: the pull request would attach this entry's scores to a different model.

    """
    from bench.errors import ConfigError, shorten

    own = meta.get("model")
    if force or own == model:
        return
    if not own:
        raise ConfigError(f"--model {model}: entry {entry!r} has no 'model' in its meta.yaml, "
                          "so it cannot be checked that these scores are that model's; "
                          "pass --force if they are")
    raise ConfigError(f"--model {model}: entry {entry!r} was submitted for model "
                      f"{shorten(own)} (its meta.yaml); these scores are not {model}'s. "
                      "Pass --force only if the entry really evaluates that model")


def run_publish_results(args: argparse.Namespace) -> int:
    """Open a pull request with an entry's Eval Results on the model repo."""
    from bench.manifest import read_manifest
    from leaderboard.hub_eval import Setup
    from leaderboard.publish import check_repo_id, plan_results

    model = check_repo_id(args.model, "--model")
    dataset = check_repo_id(args.dataset, "--dataset")
    check_revision(args.dataset_revision)
    setup = Setup(args.setup, args.num_fewshot, args.length_norm)
    results = _read_results(args.submissions, args.entry)
    meta = _read_meta(args.submissions, args.entry)
    check_target_model(model, meta, args.entry, args.force)
    manifest = read_manifest(args.data) if args.data else None
    plan, skipped = plan_results(results, args.entry, model, dataset, setup=setup,
                                 dataset_revision=args.dataset_revision, manifest=manifest,
                                 model_card=args.model_card,
                                 meta=meta,
                                 source_url=args.leaderboard_url,
                                 include_flagged=args.include_flagged)
    if skipped:
        print(f"left out {len(skipped)} suite(s): "
              + "; ".join(f"{s}: {why}" for s, why in sorted(skipped.items())))
    return _go(plan, args.dry_run, show=(setup.path,))


def _go(plan, dry_run: bool, show: tuple[str, ...] = ()) -> int:
    from leaderboard.publish import execute

    if dry_run:
        print("\n".join(plan.describe()))
        for path in show:
            print(f"--- {path} ---")
            print(plan.files[path].decode("utf-8"), end="")
        print("dry run: nothing sent")
        return 0
    execute(plan)
    return 0
