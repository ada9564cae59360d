"""``verify``: check a published leaderboard against its own predictions."""

from __future__ import annotations

import argparse


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``verify``."""
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
    parser.add_argument("--data", default="consistency-bench", metavar="DIR",
                        help="built suite folder to score against (the published suites)")
    parser.set_defaults(func=run_verify)


def run_verify(args: argparse.Namespace) -> int:
    """Verify every published entry."""
    from bench.manifest import read_manifest
    from leaderboard.hub_verify import verify_hub
    from leaderboard.publish import check_repo_id

    repo = check_repo_id(args.hub, "--hub")
    read_manifest(args.data)  # a bad --data is refused before the Hub is asked
    sha, findings = verify_hub(repo, args.data)
    for f in findings:
        if f.status == "ok":
            print(f"ok\t{f.slug}")
        elif f.status == "unverifiable":
            print(f"UNVERIFIABLE\t{f.slug}\t{f.reason}")
        else:
            for c in f.changes:
                print(f"DIFFERS\t{f.slug}\t{c.suite}\t{c.what}\tstored {c.before} -> "
                      f"re-scored {c.after}")
    counts = {s: sum(f.status == s for f in findings) for s in ("ok", "differs", "unverifiable")}
    print(f"verified {len(findings)} entries of {repo} at commit {sha}: {counts['ok']} ok, "
          f"{counts['differs']} differ, {counts['unverifiable']} unverifiable")
    return 0 if counts["ok"] == len(findings) else 1
