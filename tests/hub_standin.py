"""A stand-in for the Hugging Face Hub on 127.0.0.1 (the real Hub is unreachable here).

Serves the endpoints ``huggingface_hub`` 2.4 calls for ``create_repo``, ``create_commit``
(with and without ``create_pr``) and the empty-commit check, read from its source
(``hf_api.py``, ``_commit_api.py``, ``lfs.py``):

- ``POST /api/repos/create`` (409 when the repo exists);
- ``POST /api/validate-yaml`` (what the client sends before committing a ``README.md``): the
  card's ``model-index`` is checked against the documented schema (:func:`model_index_errors`,
  huggingface/hub-docs ``modelcard.md``) and refused with 400 and the Hub's
  ``{"errors": [{"message"}]}`` body;
- ``POST /api/{type}s/{repo}/preupload/{rev}``: ``lfs`` for the patterns of the Hub's default
  ``.gitattributes`` that we publish (``*.parquet``, ``*.png``, ``*.gz``, ...) and for files of
  10 MiB or more, ``regular`` otherwise; with the ``oid`` of the file already at that path
  (sha256 for LFS, git blob sha1 for regular files), which is how the client drops unchanged
  files from a commit;
- the LFS batch API ``POST /{prefix}{repo}.git/info/lfs/objects/batch`` (``basic`` transfer, or
  ``multipart`` for objects larger than ``multipart_chunk``); an object the store already holds
  gets no ``actions``, so it is not sent again;
- ``PUT /lfs/upload/{oid}`` (basic) and ``PUT /lfs/part/{oid}/{n}`` + ``POST /lfs/complete/{oid}``
  (multipart): the bytes are hashed and refused (400) unless their sha256 is ``oid``;
  ``POST /lfs/verify/{oid}``: 404 unless the object is stored with that size;
- ``POST /api/{type}s/{repo}/commit/{rev}`` (ndjson): ``file`` entries (base64), ``lfsFile``
  entries, which must name a stored, verified object of that size (400 otherwise), and
  ``deletedFile`` entries (404 for a path that is not there); the Hub
  validates ``.eval_results/*.yaml`` and ``eval.yaml`` at push time, and so does the stand-in
  (:func:`eval_results_errors`, :func:`eval_yaml_errors`: huggingface/hub-docs
  ``eval_results.yaml`` and ``docs/hub/eval-results.md``; 400 with the errors);
  ``?create_pr=1`` commits to a new ``refs/pr/N`` and answers ``pullRequestUrl``;
- ``GET /api/{type}s/{repo}/revision/{rev}`` (the client's "nothing changed" path);
- ``/api/{type}s/{repo}/xet-write-token/{rev}``: the Xet token. No Xet storage is served:
  ``xet="forbidden"`` answers 403 (a token without write access), the default 501.

The read API (repo info, tree, paths-info, ``resolve``), pull requests on ``refs/pr/N`` and
discussions are served by ``tests/hub_reads.py`` (a mixin: ``handle`` asks it first).

Every request is recorded as ``(METHOD, path)``; anything else gets 500 and is recorded as
unexpected. Uploads and the multipart completion need no token (``lfs.py`` sends none there:
pre-signed URLs); everything else needs ``Authorization: Bearer TOKEN`` with a token of
:data:`USERS`. ``stalls`` holds ``(METHOD, path regex, seconds)`` entries: the first request
that matches one waits that long before it is handled (outside the server's lock, so other
requests go on), as a server that stalls mid-request; the client's timeout decides.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from tests.hub_reads import HubReads

TOKEN = "hf_standin_secret_token_123"
#: A submitter's and a third party's tokens: every token is one account (``whoami``, authors).
SUBMITTER_TOKEN = "hf_standin_submitter_token_456"
THIRD_PARTY_TOKEN = "hf_standin_third_party_token_789"
USERS = {TOKEN: "standin-user", SUBMITTER_TOKEN: "researcher", THIRD_PARTY_TOKEN: "mallory"}
#: ``EVALUATION_FRAMEWORKS`` of huggingface.js ``packages/tasks/src/eval.ts`` (read 2026-11-25).
HUB_FRAMEWORKS = (
    "exgentic", "inspect-ai", "math-arena", "mteb", "olmocr-bench", "harbor", "archipelago",
    "apex-evals", "screenspot-pro", "swe-bench", "swe-bench-pro", "nemo-evaluator", "yc-bench",
    "open-asr-leaderboard", "mdpbench", "parsebench", "video-mme-v2", "claw-eval",
    "wildclawbench",
)
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?"
                       r"(Z|[+-]\d{2}:?\d{2})?)?$")


def _fields(where: str, value, required: dict, optional: dict) -> list[str]:
    """Errors of a mapping: required and optional keys with their types, no other key."""
    if not isinstance(value, dict):
        return [f"{where}: expected a mapping, got {type(value).__name__}"]
    errors = []
    for key, kind in {**required, **optional}.items():
        if key not in value:
            if key in required:
                errors.append(f"{where}.{key}: required")
        elif not isinstance(value[key], kind) or (isinstance(value[key], bool)
                                                  and kind is not bool):
            name = getattr(kind, "__name__", None) or "/".join(k.__name__ for k in kind)
            errors.append(f"{where}.{key}: {value[key]!r} is not {name}")
    errors += [f"{where}.{key}: unknown field" for key in value
               if key not in required and key not in optional]
    return errors


def eval_results_errors(doc) -> list[str]:
    """Errors of a ``.eval_results/*.yaml`` document (hub-docs ``eval_results.yaml``).

    A list of results; each: ``dataset`` {``id``, ``task_id`` required, ``revision``},
    ``value`` (a number) required, ``verifyToken``, ``date`` (an ISO-8601 date or datetime
    string), ``source`` {``url`` required, ``name``, ``user``, ``org``}, ``notes`` (a string).
    """
    if not isinstance(doc, list) or not doc:
        return ["expected a non-empty list of results"]
    errors = []
    for i, item in enumerate(doc):
        where = f"[{i}]"
        errors += _fields(where, item, {"dataset": dict, "value": (int, float)},
                          {"verifyToken": str, "date": str, "source": dict, "notes": str})
        if not isinstance(item, dict):
            continue
        if isinstance(item.get("dataset"), dict):
            errors += _fields(f"{where}.dataset", item["dataset"],
                              {"id": str, "task_id": str}, {"revision": str})
        if isinstance(item.get("date"), str) and not _ISO_DATE.match(item["date"]):
            errors.append(f"{where}.date: {item['date']!r} is not an ISO-8601 date or datetime")
        if isinstance(item.get("source"), dict):
            errors += _fields(f"{where}.source", item["source"], {"url": str},
                              {"name": str, "user": str, "org": str})
    return errors


def eval_yaml_errors(doc) -> list[str]:
    """Errors of a benchmark's ``eval.yaml`` (hub-docs ``docs/hub/eval-results.md``).

    ``name``, ``description``, ``tasks`` (each: ``id`` required, ``config``, ``split``);
    ``evaluation_framework`` one of :data:`HUB_FRAMEWORKS` when given (``inspect-ai`` also
    needs ``field_spec``, ``solvers`` and ``scorers`` per task).
    """
    errors = _fields("eval.yaml", doc, {"name": str, "description": str, "tasks": list},
                     {"evaluation_framework": str})
    if not isinstance(doc, dict):
        return errors
    framework = doc.get("evaluation_framework")
    if isinstance(framework, str) and framework not in HUB_FRAMEWORKS:
        errors.append(f"eval.yaml.evaluation_framework: {framework!r} is not a supported "
                      "evaluation framework")
    extra = {"field_spec": dict, "solvers": list, "scorers": list}
    for i, task in enumerate(doc.get("tasks") or []):
        need = extra if framework == "inspect-ai" else {}
        errors += _fields(f"eval.yaml.tasks[{i}]", task, {"id": str, **need},
                          {"config": str, "split": str, **({} if need else extra)})
    return errors


def model_index_errors(meta) -> list[str]:
    """Errors of a card's ``model-index`` (hub-docs ``modelcard.md``, "Evaluation Results")."""
    if not isinstance(meta, dict) or "model-index" not in meta:
        return []
    index = meta["model-index"]
    if not isinstance(index, list) or not index:
        return ["model-index: expected a non-empty list"]
    errors = []
    for i, model in enumerate(index):
        where = f"model-index[{i}]"
        errors += _fields(where, model, {"name": str, "results": list}, {})
        for j, result in enumerate((model or {}).get("results") or []
                                   if isinstance(model, dict) else []):
            at = f"{where}.results[{j}]"
            errors += _fields(at, result, {"task": dict, "dataset": dict, "metrics": list},
                              {"source": dict})
            if not isinstance(result, dict):
                continue
            if isinstance(result.get("task"), dict):
                errors += _fields(f"{at}.task", result["task"], {"type": str}, {"name": str})
            if isinstance(result.get("dataset"), dict):
                errors += _fields(f"{at}.dataset", result["dataset"],
                                  {"type": str, "name": str},
                                  {"config": str, "split": str, "revision": str, "args": dict})
            for k, metric in enumerate(result.get("metrics") or []):
                errors += _fields(f"{at}.metrics[{k}]", metric,
                                  {"type": str, "value": (int, float, str)},
                                  {"name": str, "config": str, "args": dict, "verified": bool,
                                   "verifyToken": str})
    return errors


def _front_matter(text: str):
    import yaml

    if not text.startswith("---"):
        return None
    block = text.split("\n---", 1)[0][3:]
    return yaml.safe_load(block)


def pushed_file_errors(path: str, data: bytes) -> list[str]:
    """What the Hub's push-time validation says about one committed file (empty: fine)."""
    import yaml

    if not (path == "eval.yaml" or (path.startswith(".eval_results/")
                                    and path.endswith((".yaml", ".yml")))):
        return []
    try:
        doc = yaml.safe_load(data.decode("utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        return [f"{path}: not valid YAML ({exc})"]
    errors = eval_yaml_errors(doc) if path == "eval.yaml" else eval_results_errors(doc)
    return [f"{path}: {e}" for e in errors]
LFS_PATTERNS = (".parquet", ".png", ".gz", ".arrow", ".bin", ".safetensors", ".zip")
LFS_SIZE = 10 * 1024 * 1024
PREFIX = {"dataset": "datasets/", "model": "", "space": "spaces/"}


def git_blob_sha1(data: bytes) -> str:
    """The git object id of a regular file (what the Hub reports as its ``oid``)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class Hub(HubReads):
    """The stand-in server; use as a context manager.

    Args:
        mode: ``ok``, ``ratelimit`` (429), ``noauth`` (401) or ``missing`` (404 on create).
        multipart_chunk: LFS objects larger than this many bytes use the multipart transfer.
        xet: ``off`` (501 on the Xet token endpoint) or ``forbidden`` (403).
        storage: ``ok``, or ``refuse``: object PUTs answer 403 (an expired pre-signed URL).

    """

    def __init__(self, mode: str = "ok", *, multipart_chunk: int | None = None,
                 xet: str = "off", storage: str = "ok"):
        self.mode = mode
        self.storage = storage
        self.multipart_chunk = multipart_chunk
        self.xet = xet
        # repo -> {"type", "files": {path: bytes}, "lfs": set(paths), "head": oid}
        self.repos: dict[str, dict] = {}
        self.objects: dict[str, bytes] = {}  # LFS store: sha256 hex -> bytes
        self.verified: set[str] = set()
        self.parts: dict[str, dict[int, bytes]] = {}
        self.commits: list[dict] = []
        self.requests: list[tuple[str, str]] = []
        self.unexpected: list[str] = []
        self.validated: list[list[str]] = []  # errors of each validate-yaml request
        self.refused: list[str] = []  # push-time validation errors of refused commits
        self.lock = threading.Lock()
        self.stalls: list[tuple[str, str, float]] = []
        self._init_reads()
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _body(self) -> bytes:
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    out = b""
                    while True:
                        size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                        if size == 0:
                            while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                                pass
                            return out
                        out += self.rfile.read(size)
                        self.rfile.readline()
                return self.rfile.read(int(self.headers.get("Content-Length", 0)))

            def _any(self):
                body = self._body()
                url = urlsplit(self.path)
                hub.stall(self.command, url.path)
                with hub.lock:
                    hub.requests.append((self.command, url.path))
                    hub.handle(self, url.path, parse_qs(url.query), body)

            do_GET = do_POST = do_PUT = _any
            do_HEAD = do_PATCH = do_DELETE = _any

            def _send_raw(self, code, data: bytes, headers=None):
                self.send_response(code)
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            def _send(self, code, payload, headers=None):
                data = json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

    # -- helpers for tests -------------------------------------------------------------
    def add_repo(self, repo: str, repo_type: str = "model", files: dict | None = None) -> None:
        """Create ``repo`` directly (e.g. someone's model repo to open a PR on)."""
        self.repos[repo] = {"type": repo_type, "files": dict(files or {}), "lfs": set(),
                            "head": "0" * 40, "prs": []}

    def stall(self, method: str, path: str) -> None:
        """Wait as the first matching entry of ``stalls`` says (then drop it)."""
        import time

        with self.lock:
            found = next(((i, s) for i, (m, p, s) in enumerate(self.stalls)
                          if m == method and re.fullmatch(p, path)), None)
            if found is not None:
                del self.stalls[found[0]]
        if found is not None:
            time.sleep(found[1])

    def sent(self, method: str) -> list[str]:
        """Paths of the recorded requests with this method."""
        return [p for m, p in self.requests if m == method]

    # -- request handling ----------------------------------------------------------------
    def handle(self, req, path: str, query: dict, body: bytes) -> None:
        if self.route_extra(req, path, query, body):  # reads, pull requests (hub_standin_reads)
            return None
        m = re.fullmatch(r"/lfs/(upload|part|complete|verify)/([0-9a-f]{64})(?:/(\d+))?", path)
        if m and m.group(1) in ("upload", "part"):  # storage URLs: no token, like pre-signed
            return self._store(req, m.group(1), m.group(2), m.group(3), body)
        if m and m.group(1) == "complete":  # the client sends no token here either (lfs.py)
            return self._finish(req, "complete", m.group(2), body)
        if self._user(req) is None or self.mode == "noauth":
            return req._send(401, {"error": "Invalid credentials in Authorization header"})
        if self.mode == "ratelimit":
            return req._send(429, {"error": "Too many requests"})
        if m:
            return self._finish(req, m.group(1), m.group(2), body)
        if path == "/api/repos/create":
            payload = json.loads(body)
            repo = f"{payload['organization']}/{payload['name']}"
            if self.mode == "missing":
                return req._send(404, {"error": "Organization not found"},
                                 {"X-Error-Code": "RepoNotFound"})
            if repo in self.repos:
                return req._send(409, {"error": "You already created this repo",
                                       "url": f"{self.url}/datasets/{repo}"})
            self.add_repo(repo, payload.get("type") or "model")
            return req._send(200, {"url": f"{self.url}/datasets/{repo}"})
        if path == "/api/validate-yaml":
            import yaml

            try:
                errors = model_index_errors(_front_matter(json.loads(body)["content"]))
            except (KeyError, ValueError, yaml.YAMLError) as exc:
                errors = [f"invalid YAML metadata ({exc})"]
            self.validated.append(errors)
            if errors:
                return req._send(400, {"errors": [{"message": e} for e in errors],
                                       "warnings": []})
            return req._send(200, {"errors": [], "warnings": []})
        m = re.fullmatch(r"/(datasets/|spaces/)?([^/]+/[^/]+)\.git/info/lfs/objects/batch", path)
        if m:
            return self._batch(req, m.group(2), json.loads(body))
        m = re.fullmatch(r"/api/(\w+)s/([^/]+/[^/]+)/(preupload|commit|revision|xet-write-token)"
                         r"/([^/]+)", path)
        if m and m.group(3) == "xet-write-token":
            if self.xet == "forbidden":
                return req._send(403, {"error": "You don't have write access to this repo"})
            self.unexpected.append(f"{req.command} {path}")
            return req._send(501, {"error": "the stand-in serves no Xet storage"})
        if m and m.group(2) not in self.repos:
            return req._send(404, {"error": "Repository not found"},
                             {"X-Error-Code": "RepoNotFound"})
        if m and m.group(3) == "revision":
            return req._send(200, {"id": m.group(2), "sha": self.repos[m.group(2)]["head"]})
        if m and m.group(3) == "preupload":
            return self._preupload(req, self.repos[m.group(2)], json.loads(body)["files"])
        if m and m.group(3) == "commit":
            return self._commit(req, m.group(1), m.group(2), m.group(4), query, body)
        self.unexpected.append(f"{req.command} {path}")
        return req._send(500, {"error": "not implemented in the stand-in"})

    def _preupload(self, req, repo: dict, files: list[dict]) -> None:
        out = []
        for f in files:
            lfs = f["path"].endswith(LFS_PATTERNS) or f["size"] >= LFS_SIZE
            old = repo["files"].get(f["path"])
            oid = None
            if old is not None:
                oid = hashlib.sha256(old).hexdigest() if lfs else git_blob_sha1(old)
            out.append({"path": f["path"], "uploadMode": "lfs" if lfs else "regular",
                        "shouldIgnore": False, "oid": oid})
        return req._send(200, {"files": out})

    def _batch(self, req, repo: str, payload: dict) -> None:
        if repo not in self.repos:
            return req._send(404, {"message": "Repository not found"})
        assert payload["operation"] == "upload" and payload["hash_algo"] == "sha256", payload
        transfer = "basic"
        objects = []
        for obj in payload["objects"]:
            oid, size = obj["oid"], obj["size"]
            entry = {"oid": oid, "size": size}
            if oid not in self.objects:
                verify = {"href": f"{self.url}/lfs/verify/{oid}"}
                chunk = self.multipart_chunk
                if chunk is not None and size > chunk and "multipart" in payload["transfers"]:
                    transfer = "multipart"
                    n = -(-size // chunk)
                    header = {"chunk_size": str(chunk)}
                    header.update({str(i): f"{self.url}/lfs/part/{oid}/{i}"
                                   for i in range(1, n + 1)})
                    upload = {"href": f"{self.url}/lfs/complete/{oid}", "header": header}
                else:
                    upload = {"href": f"{self.url}/lfs/upload/{oid}"}
                entry["actions"] = {"upload": upload, "verify": verify}
            objects.append(entry)
        return req._send(200, {"transfer": transfer, "objects": objects},
                         {"Content-Type": "application/vnd.git-lfs+json"})

    def _store(self, req, kind: str, oid: str, part: str | None, body: bytes) -> None:
        if self.storage == "refuse":
            return req._send(403, {"error": "Request has expired"})
        if kind == "part":
            self.parts.setdefault(oid, {})[int(part)] = body
            etag = hashlib.md5(body).hexdigest()
            return req._send(200, {}, {"ETag": f'"{etag}"'})
        if hashlib.sha256(body).hexdigest() != oid:
            return req._send(400, {"error": "sha256 of the uploaded bytes does not match oid"})
        self.objects[oid] = body
        return req._send(200, {})

    def _finish(self, req, kind: str, oid: str, body: bytes) -> None:
        payload = json.loads(body)
        if kind == "complete":
            parts = self.parts.pop(oid, {})
            numbers = [p["partNumber"] for p in payload["parts"]]
            if payload["oid"] != oid or numbers != sorted(parts):
                return req._send(400, {"error": "parts do not match the upload"})
            for p in payload["parts"]:
                if p["etag"].strip('"') != hashlib.md5(parts[p["partNumber"]]).hexdigest():
                    return req._send(400, {"error": f"bad etag for part {p['partNumber']}"})
            data = b"".join(parts[i] for i in sorted(parts))
            if hashlib.sha256(data).hexdigest() != oid:
                return req._send(400, {"error": "sha256 of the assembled parts does not match"})
            self.objects[oid] = data
            return req._send(200, {})
        # verify
        if payload.get("oid") != oid or len(self.objects.get(oid, b"")) != payload.get("size"):
            return req._send(404, {"error": "object not found or wrong size"})
        self.verified.add(oid)
        return req._send(200, {})

    def _commit(self, req, type_: str, repo: str, revision: str, query: dict,
                body: bytes) -> None:
        lines = [json.loads(x) for x in body.decode().splitlines() if x.strip()]
        header = lines[0]
        files, lfs, deleted = {}, set(), set()
        for item in lines[1:]:
            value = item["value"]
            if item["key"] == "deletedFile":
                if value["path"] not in self.repos[repo]["files"]:
                    return req._send(404, {"error": f"{value['path']} does not exist"},
                                     {"X-Error-Code": "EntryNotFound"})
                deleted.add(value["path"])
            elif item["key"] == "file":
                files[value["path"]] = base64.b64decode(value["content"])
            elif item["key"] == "lfsFile":
                oid = value["oid"]
                if oid not in self.verified or len(self.objects[oid]) != value.get("size"):
                    return req._send(400, {"error": f"LFS object {oid} of {value['path']} "
                                                    "was not uploaded and verified"})
                files[value["path"]] = self.objects[oid]
                lfs.add(value["path"])
            else:
                return req._send(400, {"error": f"unexpected commit entry {item['key']}"})
        invalid = [e for path, data in files.items() for e in pushed_file_errors(path, data)]
        if invalid:
            self.refused += invalid
            return req._send(400, {"error": "Invalid evaluation results: " + "; ".join(invalid)})
        oid = hashlib.sha1(body).hexdigest()
        target = self.repos[repo]
        commit = {"repo": repo, "type": type_, "revision": revision, "header": header,
                  "files": files, "lfs": lfs, "oid": oid, "pr": None, "deleted": deleted}
        answer = {"commitUrl": f"{self.url}/{repo}/commit/{oid}", "commitOid": oid}
        if query.get("create_pr") == ["1"]:
            target["prs"].append(files)
            commit["pr"] = len(target["prs"])
            answer["pullRequestUrl"] = f"{self.url}/{repo}/discussions/{commit['pr']}"
        else:
            target["files"].update(files)
            target["lfs"] |= lfs
            target["head"] = oid
            for path in deleted:  # a pull request's branch is ``target`` too (hub_reads)
                target["files"].pop(path, None)
                target["lfs"].discard(path)
        self.commits.append(commit)
        return req._send(200, answer)
