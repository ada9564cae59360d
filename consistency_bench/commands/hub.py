"""``review`` and ``verify``: the leaderboard on the Hub, from the maintainer's side."""

from __future__ import annotations

import argparse
import sys

from consistency_bench.arguments import add_data, add_dry_run, add_site, add_submissions


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``review`` and ``verify``."""
    parser = subparsers.add_parser(
        "review",
        help="review the open pull requests that submit entries to a leaderboard on the Hub",
        description="For each open pull request on the leaderboard dataset repo: check that it "
        "adds exactly requests/<name>/predictions.jsonl.gz and meta.yaml under a free name, "
        "validate and score them as submit does, check the suites' content hashes against "
        "--suites-repo, and comment the per-view results or the reason for refusing. A pull "
        "request reviewed before and unchanged since is skipped. With --merge: store each "
        "accepted entry in --submissions, merge its pull request, render --site again and "
        "republish the dataset repo (and --space). One pull request's failure never stops the "
        "others. Exit 0: every pull request handled; 1: some failed (named; run again); 2: "
        "nothing reviewed (bad arguments, another review running, stale --data, the Hub "
        "unreadable) or the republish failed. Token: HF_TOKEN (write access to the repos); "
        "HF_ENDPOINT selects another Hub.",
    )
    parser.add_argument("--hub", required=True, metavar="ORG/LEADERBOARD",
                        help="leaderboard dataset repo that receives the pull requests")
    parser.add_argument("--suites-repo", required=True, metavar="ORG/NAME",
                        help="dataset repo of the published suites (its suites.json)")
    add_data(parser, "built suite folder (the published suites)")
    add_submissions(parser)
    add_site(parser, "site folder rendered again after a merge")
    parser.add_argument("--space", metavar="ORG/NAME",
                        help="static Space republished after a merge")
    parser.add_argument("--merge", action="store_true",
                        help="store accepted entries, merge their pull requests, republish")
    # 120.0 = consistency_bench.leaderboard.review.loop.DEFAULT_TIMEOUT (not imported here: the CLI
    # starts light)
    parser.add_argument("--timeout", type=float, default=120.0, metavar="SECONDS",
                        help="most seconds to wait for one answer of the Hub; a pull request "
                        "whose call runs out of time fails, the others go on")
    parser.add_argument("--reproduce", type=int, default=None, metavar="N",
                        help="reproduce each accepted request whose run.json names an open, "
                        "loadable model (or a baseline) on N groups per suite, on --device, "
                        "and report the figures in the comment; a failed reproduction refuses "
                        "the request (docs/maintain.md, Reproduction)")
    parser.add_argument("--device", default=None,
                        help="with --reproduce: cpu, cuda, cuda:1 (default: auto)")
    add_dry_run(parser, "review and print the comments; comment, merge and write nothing")
    parser.set_defaults(func=run_review)

    parser = subparsers.add_parser(
        "verify",
        help="re-score every entry a leaderboard dataset repo publishes, from its predictions",
        description="Download each submissions/<slug>/results.json and predictions.jsonl.gz "
        "of the leaderboard dataset repo (one commit of main), score the predictions against "
        "the built suites as rescore does, and report every entry whose stored results "
        "differ. Exit 0 when all are verified, 1 when any differs or cannot be verified. "
        "Reads only; HF_ENDPOINT selects another Hub.",
    )
    parser.add_argument("--hub", required=True, metavar="ORG/LEADERBOARD",
                        help="leaderboard dataset repo (what `publish --repo` pushed)")
    add_data(parser, "built suite folder to score against (the published suites)")
    parser.set_defaults(func=run_verify)


def run_review(args: argparse.Namespace) -> int:
    """Review the open requests; exit 1 when any of them failed."""
    from consistency_bench.bench.errors import ConfigError
    from consistency_bench.bench.io.manifest import read_manifest
    from consistency_bench.leaderboard.publish.commit import check_repo_id
    from consistency_bench.leaderboard.reproduce.review_step import ReproduceStep
    from consistency_bench.leaderboard.review.loop import run_review as review

    repo = check_repo_id(args.hub, "--hub")
    suites = check_repo_id(args.suites_repo, "--suites-repo")
    space = check_repo_id(args.space, "--space") if args.space else None
    read_manifest(args.data)  # a bad --data is refused before the Hub is asked
    if not 0 < args.timeout <= 3600:
        raise ConfigError(f"--timeout {args.timeout}: expected seconds in (0, 3600]")
    if args.reproduce is not None and args.reproduce < 1:
        raise ConfigError(f"--reproduce {args.reproduce}: use 1 or more groups per suite")
    step = (None if args.reproduce is None
            else ReproduceStep(args.data, args.reproduce, device=args.device))
    reviews = review(repo, args.data, suites, submissions=args.submissions, site=args.site,
                     space=space, merge=args.merge, dry_run=args.dry_run, timeout=args.timeout,
                     reproduce=step)
    counts = {v: sum(r.verdict == v for r in reviews)
              for v in ("accepted", "refused", "unchanged", "other", "changed", "failed")}
    merged = sum(r.merged for r in reviews)
    print(f"reviewed {len(reviews)} open pull request(s) on {repo}: {counts['accepted']} "
          f"accepted, {counts['refused']} refused, {counts['unchanged']} unchanged, "
          f"{counts['other']} not submissions, {counts['changed']} pushed to since their "
          f"review, {counts['failed']} failed" + (f"; {merged} merged" if args.merge else ""))
    failed = [r for r in reviews if r.verdict == "failed"]
    if failed:
        print(f"error: {len(failed)} of {len(reviews)} pull request(s) failed ("
              + "; ".join(f"#{r.num}: {r.reason}" for r in failed[:3])
              + (" ..." if len(failed) > 3 else "") + "); the others were handled. Run "
              "review again", file=sys.stderr)
        return 1
    return 0


def _shown(value: object) -> str:
    """A number as printed before; anything else cut to a short repr (a 5 MB string)."""
    from consistency_bench.bench.errors import shorten

    if value is None or (isinstance(value, (int, float)) and not isinstance(value, bool)):
        return str(value)
    return shorten(value)


def run_verify(args: argparse.Namespace) -> int:
    """Verify every published entry."""
    from consistency_bench.bench.io.manifest import read_manifest
    from consistency_bench.leaderboard.hub.verify_published import verify_hub
    from consistency_bench.leaderboard.publish.commit import check_repo_id

    repo = check_repo_id(args.hub, "--hub")
    read_manifest(args.data)  # a bad --data is refused before the Hub is asked
    sha, findings = verify_hub(repo, args.data)
    for f in findings:
        if f.status == "ok":
            print(f"ok\t{f.slug}")
        elif f.status == "unverifiable":
            print(f"UNVERIFIABLE\t{f.slug}\t{f.reason}")
        else:
            for c in f.changes:  # stored values come from the repo: shown cut (shorten)
                print(f"DIFFERS\t{f.slug}\t{c.suite}\t{c.what}\tstored {_shown(c.before)} -> "
                      f"re-scored {_shown(c.after)}")
    counts = {s: sum(f.status == s for f in findings) for s in ("ok", "differs", "unverifiable")}
    print(f"verified {len(findings)} entries of {repo} at commit {sha}: {counts['ok']} ok, "
          f"{counts['differs']} differ, {counts['unverifiable']} unverifiable")
    return 0 if counts["ok"] == len(findings) else 1
