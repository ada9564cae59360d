"""Read API, pull requests and discussions of the stand-in Hub (a mixin of ``Hub``).

Endpoints read from ``huggingface_hub`` 2.4 (``hf_api.py``: ``repo_info``, ``list_repo_tree``,
``get_paths_info``, ``list_repo_refs``, ``get_repo_discussions``, ``get_discussion_details``,
``comment_discussion``, ``change_discussion_status``, ``merge_pull_request``;
``file_download.py``: ``get_hf_file_metadata`` and the download) and from what ``datasets`` 5.2
calls through them and ``HfFileSystem``:

- ``GET /api/{type}s/{repo}`` and ``GET /api/{type}s/{repo}/revision/{rev}``: repo info with
  ``sha``, ``siblings``, ``cardData`` (the README's YAML header) and, for a Space, ``sdk``;
- ``GET /api/{type}s/{repo}/tree/{rev}[/{path}]`` (``recursive``, ``expand``) and
  ``POST /api/{type}s/{repo}/paths-info/{rev}`` (form ``paths``): git ``oid``, ``size`` and the
  ``lfs`` block (sha256) of LFS files;
- ``GET /api/{type}s/{repo}/refs``: ``main`` and, with ``include_prs=1``, ``refs/pr/N``;
- ``HEAD``/``GET /{prefix}{repo}/resolve/{rev}/{path}``: ``X-Repo-Commit``, ``ETag`` (and
  ``X-Linked-Etag``/``X-Linked-Size`` for LFS files), ``Range`` requests answered with 206;
- ``POST /api/{type}s/{repo}/commit/main?create_pr=1``: a new pull request, ``refs/pr/N`` =
  ``main`` at that moment plus the commit; ``POST .../commit/refs%2Fpr%2FN`` and
  ``POST .../preupload/refs%2Fpr%2FN`` commit to that branch;
- ``GET /api/{type}s/{repo}/discussions`` (``p``, ``type``, ``status``, ``author``),
  ``GET .../discussions/{num}`` (with ``diff``: one ``diff --git`` header per changed file),
  ``POST .../discussions/{num}/comment``,
  ``POST .../discussions/{num}/status`` and ``POST .../discussions/{num}/merge`` (409 when
  ``main`` changed a file the pull request changes since it was opened);
- ``GET /api/whoami-v2``.

Revisions: ``main``, ``refs/pr/N`` and any commit sha the stand-in has served (``main`` is
snapshotted each time it is read, so a client that resolves ``main`` to a sha and then reads by
sha sees that commit's files). Repos are public: reads need no token, but a wrong token is
refused (401) as the Hub does. ``faults`` injects failures: ``(METHOD, path regex, status)``
entries, each answered once, in order, before anything else.

Several users: each token of ``tests.hub_standin.USERS`` is one account (the maintainer's
``TOKEN``, a submitter's, a third party's). ``whoami-v2`` answers the token's user, and every
discussion, comment and commit event records the user whose token made it, as the Hub shows
its author.
"""

from __future__ import annotations

import hashlib
import json
import re
from urllib.parse import parse_qs, unquote

USER = "standin-user"
DATE = "2026-01-01T00:00:00.000Z"
POINTER_SIZE = 134


class _Capture:
    """A request stand-in that keeps what the base handler would have sent."""

    def __init__(self, req):
        self.headers = req.headers
        self.command = req.command
        self.sent: tuple[int, dict, dict | None] | None = None

    def _send(self, code, payload, headers=None):
        self.sent = (code, payload, headers)


def _front_matter(data: bytes | None) -> dict | None:
    import yaml

    text = (data or b"").decode("utf-8", "replace")
    if not text.startswith("---\n") or (end := text.find("\n---", 4)) == -1:
        return None
    try:
        meta = yaml.safe_load(text[4:end])
    except yaml.YAMLError:
        return None
    return meta if isinstance(meta, dict) else None


class HubReads:
    """Mixin: the routes of this module; ``Hub.handle`` calls :meth:`route_extra` first."""

    def _init_reads(self) -> None:
        self.snapshots: dict[tuple[str, str], tuple[dict, set]] = {}
        self.pr_refs: dict[str, dict[int, dict]] = {}
        self.discussions: dict[str, list[dict]] = {}
        self.created: dict[str, dict] = {}  # repo -> the create_repo payload
        self.faults: list[tuple[str, str, int]] = []
        self.current_user = USER  # the author of what the request being handled writes

    # -- helpers for tests -------------------------------------------------------------
    def files_at(self, repo: str, revision: str = "main") -> dict[str, bytes]:
        """The files of ``repo`` at ``main``, ``refs/pr/N`` or a served sha."""
        state = self._state(repo, revision)
        return dict(state[0]) if state else {}

    def pull_requests(self, repo: str) -> list[dict]:
        """The pull requests of ``repo`` (``num``, ``title``, ``status``, ``events``, ...)."""
        return [d for d in self.discussions.get(repo, []) if d["isPullRequest"]]

    def comments(self, repo: str, num: int) -> list[str]:
        """The text of every comment on discussion ``num``."""
        return [e["data"]["latest"]["raw"] for e in self.discussions[repo][num - 1]["events"]
                if e["type"] == "comment"]

    # -- routing -------------------------------------------------------------------------
    def route_extra(self, req, path: str, query: dict, body: bytes) -> bool:
        """Answer the routes of this module; False leaves the request to ``Hub.handle``."""
        self.current_user = self._user(req) or USER  # requests are handled one at a time
        for i, (method, pattern, status) in enumerate(self.faults):
            if req.command == method and re.fullmatch(pattern, path):
                del self.faults[i]
                self._error(req, status, "injected fault", "")
                return True
        if path == "/api/agent-harnesses":  # huggingface_hub's user-agent registry: none here
            self._error(req, 404, "not served by the stand-in", "")
            return True
        if path == "/api/repos/create" and req.command == "POST":
            payload = json.loads(body)
            self.created.setdefault(f"{payload.get('organization')}/{payload['name']}", payload)
            return False
        m = re.fullmatch(r"/(datasets/|spaces/)?([^/]+/[^/]+)/resolve/([^/]+)/(.+)", path)
        if m and req.command in ("GET", "HEAD"):
            type_ = {"datasets/": "dataset", "spaces/": "space"}.get(m.group(1) or "", "model")
            return self._resolve(req, type_, m.group(2), unquote(m.group(3)),
                                 unquote(m.group(4)))
        m = re.fullmatch(r"/api/(model|dataset|space)s/([^/]+/[^/]+)(/.*)?", path)
        if path == "/api/whoami-v2":
            if not self._gate(req, write=True):
                self._json(req, 200, {"type": "user", "name": self.current_user,
                                      "auth": {"accessToken": {"role": "write"}}})
            return True
        if not m:
            return False
        type_, repo, rest = m.group(1), m.group(2), m.group(3) or ""
        if req.command == "GET" and (rest == "" or rest.startswith("/revision/")):
            return self._info(req, type_, repo, unquote(rest[len("/revision/"):]) or "main")
        if (t := re.fullmatch(r"/tree/([^/]+)(?:/(.+))?", rest)) and req.command == "GET":
            return self._tree(req, type_, repo, unquote(t.group(1)), unquote(t.group(2) or ""),
                              query)
        if (t := re.fullmatch(r"/paths-info/([^/]+)", rest)) and req.command == "POST":
            form = parse_qs(body.decode())
            return self._paths_info(req, type_, repo, unquote(t.group(1)), form.get("paths", []),
                                    form.get("expand", ["False"])[0])
        if rest == "/refs" and req.command == "GET":
            return self._refs(req, type_, repo, query)
        if rest.startswith("/discussions"):
            return self._discussion_route(req, type_, repo, rest, query, body)
        if (t := re.fullmatch(r"/(commit|preupload)/([^/]+)", rest)) and req.command == "POST":
            revision = unquote(t.group(2))
            if t.group(1) == "commit" and query.get("create_pr") == ["1"]:
                return self._open_pr(req, type_, repo, query, body)
            if (pr := re.fullmatch(r"refs/pr/(\d+)", revision)):
                return self._pr_branch_write(req, t.group(1), type_, repo, int(pr.group(1)),
                                             query, body)
        return False

    # -- reads ---------------------------------------------------------------------------
    def _gate(self, req, *, write: bool) -> bool:
        """Send 401/429 when this request may not go on; True when an error was sent."""
        auth = req.headers.get("Authorization")
        if self.mode == "noauth" or (auth is not None and self._user(req) is None) \
                or (write and auth is None):
            self._error(req, 401, "Invalid credentials in Authorization header", "")
            return True
        if self.mode == "ratelimit":
            self._error(req, 429, "Too many requests", "")
            return True
        return False

    @staticmethod
    def _user(req) -> str | None:
        """The user whose token the request carries (``None``: no token or an unknown one)."""
        from tests.hub_standin import USERS

        auth = req.headers.get("Authorization") or ""
        return USERS.get(auth[len("Bearer "):]) if auth.startswith("Bearer ") else None

    def _json(self, req, code: int, payload, headers: dict | None = None) -> None:
        data = json.dumps(payload).encode()
        req._send_raw(code, data, {"Content-Type": "application/json", **(headers or {})})

    def _error(self, req, code: int, message: str, error_code: str) -> None:
        headers = {"X-Error-Message": message}
        if error_code:
            headers["X-Error-Code"] = error_code
        self._json(req, code, {"error": message}, headers)

    def _repo(self, req, type_: str, repo: str) -> dict | None:
        found = self.repos.get(repo)
        if found is None or found["type"] != type_:
            self._error(req, 404, "Repository not found", "RepoNotFound")
            return None
        return found

    def _state(self, repo: str, revision: str) -> tuple[dict, set, str] | None:
        """(files, lfs paths, commit sha) of ``repo`` at ``revision``, or None."""
        main = self.repos.get(repo)
        if main is None:
            return None
        if revision in ("main", "refs/heads/main", main["head"]):
            self.snapshots[(repo, main["head"])] = (dict(main["files"]), set(main["lfs"]))
            return main["files"], main["lfs"], main["head"]
        if (pr := re.fullmatch(r"refs/pr/(\d+)", revision)):
            ref = self.pr_refs.get(repo, {}).get(int(pr.group(1)))
            return (ref["files"], ref["lfs"], ref["head"]) if ref else None
        for ref in self.pr_refs.get(repo, {}).values():
            if ref["head"] == revision:
                return ref["files"], ref["lfs"], ref["head"]
        snap = self.snapshots.get((repo, revision))
        return (snap[0], snap[1], revision) if snap else None

    def _at(self, req, type_: str, repo: str, revision: str):
        if self._gate(req, write=False) or self._repo(req, type_, repo) is None:
            return None
        state = self._state(repo, revision)
        if state is None:
            self._error(req, 404, f"Invalid rev id: {revision}", "RevisionNotFound")
        return state

    def _info(self, req, type_: str, repo: str, revision: str) -> bool:
        state = self._at(req, type_, repo, revision)
        if state is None:
            return True
        files, _, sha = state
        info = {"id": repo, "_id": hashlib.sha1(repo.encode()).hexdigest()[:24],
                "author": repo.split("/")[0], "sha": sha, "private": False, "disabled": False,
                "gated": False, "lastModified": DATE, "createdAt": DATE, "tags": [],
                "downloads": 0, "likes": 0,
                "siblings": [{"rfilename": p} for p in sorted(files)]}
        card = _front_matter(files.get("README.md"))
        if card is not None:
            info["cardData"] = card
        if type_ == "space":
            info["sdk"] = self.created.get(repo, {}).get("sdk")
        self._json(req, 200, info)
        return True

    def _entry(self, path: str, files: dict, lfs: set, sha: str, expand: bool) -> dict:
        if path in files:
            data = files[path]
            out = {"type": "file", "path": path, "size": len(data), "oid": git_sha1(data)}
            if path in lfs:
                out["lfs"] = {"oid": hashlib.sha256(data).hexdigest(), "size": len(data),
                              "pointerSize": POINTER_SIZE}
        else:
            out = {"type": "directory", "path": path,
                   "oid": hashlib.sha1(f"tree {path} {sha}".encode()).hexdigest()}
        if expand:
            out["lastCommit"] = {"id": sha, "title": "commit", "date": DATE}
        return out

    @staticmethod
    def _folders(files: dict) -> set[str]:
        return {"/".join(p.split("/")[:i]) for p in files for i in range(1, p.count("/") + 1)}

    def _tree(self, req, type_: str, repo: str, revision: str, folder: str, query: dict) -> bool:
        state = self._at(req, type_, repo, revision)
        if state is None:
            return True
        files, lfs, sha = state
        folders = self._folders(files)
        if folder and folder not in folders:
            self._error(req, 404, f"{folder} does not exist on {revision}", "EntryNotFound")
            return True
        recursive = query.get("recursive", ["False"])[0].lower() == "true"
        expand = query.get("expand", ["False"])[0].lower() == "true"
        prefix = f"{folder}/" if folder else ""
        paths = [p for p in sorted(set(files) | folders) if p.startswith(prefix)
                 and (recursive or "/" not in p[len(prefix):])]
        self._json(req, 200, [self._entry(p, files, lfs, sha, expand) for p in paths])
        return True

    def _paths_info(self, req, type_: str, repo: str, revision: str, paths: list[str],
                    expand: str) -> bool:
        state = self._at(req, type_, repo, revision)
        if state is None:
            return True
        files, lfs, sha = state
        known = set(files) | self._folders(files)
        self._json(req, 200, [self._entry(p.strip("/"), files, lfs, sha, expand == "True")
                              for p in paths if p.strip("/") in known])
        return True

    def _refs(self, req, type_: str, repo: str, query: dict) -> bool:
        state = self._at(req, type_, repo, "main")
        if state is None:
            return True
        out = {"branches": [{"name": "main", "ref": "refs/heads/main", "targetCommit": state[2]}],
               "converts": [], "tags": []}
        if query.get("include_prs") in (["1"], ["True"], ["true"]):
            out["pullRequests"] = [{"name": f"refs/pr/{n}", "ref": f"refs/pr/{n}",
                                    "targetCommit": ref["head"]}
                                   for n, ref in sorted(self.pr_refs.get(repo, {}).items())]
        self._json(req, 200, out)
        return True

    def _resolve(self, req, type_: str, repo: str, revision: str, path: str) -> bool:
        state = self._at(req, type_, repo, revision)
        if state is None:
            return True
        files, lfs, sha = state
        if path not in files:
            self._error(req, 404, "Entry not found", "EntryNotFound")
            return True
        data = files[path]
        headers = {"X-Repo-Commit": sha, "Content-Type": "application/octet-stream",
                   "Accept-Ranges": "bytes"}
        if path in lfs:
            digest = hashlib.sha256(data).hexdigest()
            headers.update({"ETag": f'"{digest}"', "X-Linked-Etag": f'"{digest}"',
                            "X-Linked-Size": str(len(data))})
        else:
            headers["ETag"] = f'"{git_sha1(data)}"'
        rng = re.fullmatch(r"bytes=(\d+)-(\d*)", req.headers.get("Range") or "")
        if rng and data:
            start = int(rng.group(1))
            end = min(int(rng.group(2)) if rng.group(2) else len(data) - 1, len(data) - 1)
            if start >= len(data):
                req._send_raw(416, b"", {"Content-Range": f"bytes */{len(data)}"})
                return True
            headers["Content-Range"] = f"bytes {start}-{end}/{len(data)}"
            req._send_raw(206, data[start:end + 1], headers)
            return True
        req._send_raw(200, data, headers)
        return True

    # -- pull requests -------------------------------------------------------------------
    def _discussion(self, type_: str, repo: str, num: int, title: str, pr: bool) -> dict:
        found = {"num": num, "title": title, "author": {"name": self.current_user},
                 "createdAt": DATE,
                 "status": "open", "isPullRequest": pr, "repo": {"name": repo, "type": type_},
                 "events": [], "filesWithConflicts": [], "diff": "",
                 "changes": {"base": "refs/heads/main"} if pr else {}}
        self.discussions.setdefault(repo, []).append(found)
        return found

    def _event(self, discussion: dict, type_: str, data: dict) -> dict:
        n = sum(len(d["events"]) for ds in self.discussions.values() for d in ds)
        event = {"id": f"{n + 1:024x}", "type": type_, "createdAt": DATE,
                 "author": {"name": self.current_user}, "data": data}
        discussion["events"].append(event)
        return event

    def _comment(self, discussion: dict, text: str) -> dict:
        return self._event(discussion, "comment", {"edited": False, "hidden": False,
                                                   "latest": {"raw": text, "html": text}})

    def _run_commit(self, req, state: dict, type_: str, repo: str, revision: str, query: dict,
                    body: bytes) -> tuple[int, dict, dict | None]:
        """``Hub._commit`` applied to ``state`` (a branch) instead of ``main``."""
        capture = _Capture(req)
        saved = self.repos[repo]
        self.repos[repo] = state
        try:
            self._commit(capture, type_, repo, revision, query, body)
        finally:
            self.repos[repo] = saved
        return capture.sent

    def _open_pr(self, req, type_: str, repo: str, query: dict, body: bytes) -> bool:
        if self._gate(req, write=True) or (main := self._repo(req, type_, repo)) is None:
            return True
        header = json.loads(body.decode().splitlines()[0])["value"]
        num = len(self.discussions.get(repo, [])) + 1
        branch = {"type": type_, "files": dict(main["files"]), "lfs": set(main["lfs"]),
                  "head": main["head"], "prs": [], "base": dict(main["files"])}
        code, payload, headers = self._run_commit(req, branch, type_, repo, "main", {}, body)
        if code != 200:
            self._json(req, code, payload, headers)
            return True
        self.pr_refs.setdefault(repo, {})[num] = branch
        self.commits[-1].update(revision=f"refs/pr/{num}", pr=num)
        found = self._discussion(type_, repo, num, header.get("summary", ""), True)
        if header.get("description"):
            self._comment(found, header["description"])
        self._event(found, "commit", {"subject": header.get("summary", ""),
                                      "oid": payload["commitOid"]})
        payload["pullRequestUrl"] = f"{self.url}/{PREFIX[type_]}{repo}/discussions/{num}"
        self._json(req, 200, payload)
        return True

    def _pr_branch_write(self, req, kind: str, type_: str, repo: str, num: int, query: dict,
                         body: bytes) -> bool:
        if self._gate(req, write=True) or self._repo(req, type_, repo) is None:
            return True
        branch = self.pr_refs.get(repo, {}).get(num)
        found = self.discussions[repo][num - 1] if branch else None
        if branch is None or found["status"] != "open":
            self._error(req, 404 if branch is None else 403,
                        f"refs/pr/{num} is not an open pull request", "RevisionNotFound")
            return True
        if kind == "preupload":
            self._preupload(req, branch, json.loads(body)["files"])
            return True
        code, payload, headers = self._run_commit(req, branch, type_, repo, f"refs/pr/{num}",
                                                  query, body)
        if code == 200:
            header = json.loads(body.decode().splitlines()[0])["value"]
            self.commits[-1]["pr"] = num
            self._event(found, "commit", {"subject": header.get("summary", ""),
                                          "oid": payload["commitOid"]})
        self._json(req, code, payload, headers)
        return True

    def _discussion_route(self, req, type_: str, repo: str, rest: str, query: dict,
                          body: bytes) -> bool:
        write = req.command != "GET"
        if self._gate(req, write=write) or self._repo(req, type_, repo) is None:
            return True
        found = self.discussions.get(repo, [])
        if rest == "/discussions" and req.command == "GET":
            kind = (query.get("type") or ["all"])[0]
            status = (query.get("status") or ["all"])[0]
            author = (query.get("author") or [None])[0]
            rows = [d for d in reversed(found)
                    if kind in ("all", "pull_request" if d["isPullRequest"] else "discussion")
                    and (status == "all" or (status == "open") == (d["status"] == "open"))
                    and author in (None, d["author"]["name"])]
            page = int((query.get("p") or ["0"])[0])
            size = 50
            public = [{k: v for k, v in d.items() if k not in ("events", "diff", "changes",
                                                                 "filesWithConflicts")}
                      for d in rows[page * size:(page + 1) * size]]
            self._json(req, 200, {"discussions": public, "count": len(rows),
                                  "start": page * size})
            return True
        m = re.fullmatch(r"/discussions/(\d+)(?:/(comment|status|merge))?", rest)
        if not m or not 1 <= int(m.group(1)) <= len(found):
            self._error(req, 404, "Discussion not found", "")
            return True
        num, action = int(m.group(1)), m.group(2)
        discussion = found[num - 1]
        if action is None and req.command == "GET":
            self._json(req, 200, {**discussion, "diff": self._diff(repo, num)})
            return True
        payload = json.loads(body) if body else {}
        if action == "comment":
            self._json(req, 200, {"newMessage": self._comment(discussion, payload["comment"])})
            return True
        if action == "status":
            discussion["status"] = payload["status"]
            event = self._event(discussion, "status-change", {"status": payload["status"]})
            if payload.get("comment"):
                self._comment(discussion, payload["comment"])
            self._json(req, 200, {"newStatus": event})
            return True
        return self._merge(req, type_, repo, num, discussion, payload)

    def _diff(self, repo: str, num: int) -> str:
        """A git diff of pull request ``num`` against its base: the headers, one per file."""
        branch = self.pr_refs.get(repo, {}).get(num)
        if branch is None:
            return ""
        base, files = branch["base"], branch["files"]
        out = []
        for path in sorted(set(base) | set(files)):
            if base.get(path) == files.get(path):
                continue
            out.append(f"diff --git {git_quote('a/' + path)} {git_quote('b/' + path)}")
            if path not in base:
                out.append("new file mode 100644")
            elif path not in files:
                out.append("deleted file mode 100644")
            out.append(f"--- {'a/' + path if path in base else '/dev/null'}")
            out.append(f"+++ {'b/' + path if path in files else '/dev/null'}")
        return "\n".join(out) + ("\n" if out else "")

    def _merge(self, req, type_: str, repo: str, num: int, discussion: dict,
               payload: dict) -> bool:
        branch = self.pr_refs.get(repo, {}).get(num)
        if branch is None or discussion["status"] != "open":
            self._error(req, 403, "This pull request is not open", "")
            return True
        main = self.repos[repo]
        base = branch["base"]
        changed = {p: d for p, d in branch["files"].items() if base.get(p) != d}
        conflicts = sorted(p for p in changed if main["files"].get(p) != base.get(p)
                           and main["files"].get(p) != changed[p])
        if conflicts:
            discussion["filesWithConflicts"] = conflicts
            self._error(req, 409, f"merge conflict in {conflicts}", "")
            return True
        main["files"].update(changed)
        main["lfs"] |= {p for p in changed if p in branch["lfs"]}
        main["head"] = hashlib.sha1(f"merge {repo} {num} {main['head']}".encode()).hexdigest()
        self.commits.append({"repo": repo, "type": type_, "revision": "main",
                             "header": {"value": {"summary": f"Merge refs/pr/{num}"}},
                             "files": changed, "lfs": set(), "oid": main["head"], "pr": None,
                             "merge": num})
        discussion["status"] = "merged"
        discussion["changes"]["mergeCommitId"] = main["head"]
        self._event(discussion, "status-change", {"status": "merged"})
        if payload.get("comment"):
            self._comment(discussion, payload["comment"])
        self._json(req, 200, {"newStatus": discussion["events"][-1]})
        return True


def git_quote(path: str) -> str:
    """``path`` as git writes it in a diff header: quoted, with octal escapes, when it holds
    a byte outside printable ASCII, a double quote or a backslash (``core.quotePath``)."""
    special = {9: "\\t", 10: "\\n", 34: '\\"', 92: "\\\\"}
    data = path.encode("utf-8")
    if all(32 <= b < 127 and b not in special for b in data):
        return path
    return '"' + "".join(special.get(b) or (chr(b) if 32 <= b < 127 else f"\\{b:03o}")
                         for b in data) + '"'


def git_sha1(data: bytes) -> str:
    """The git object id of a regular file."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


PREFIX = {"dataset": "datasets/", "model": "", "space": "spaces/"}
