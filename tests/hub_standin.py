"""A stand-in for the Hugging Face Hub on 127.0.0.1 (the real Hub is unreachable here).

Implements only the endpoints ``huggingface_hub`` 2.x calls for ``create_repo`` and
``create_commit`` with small files: ``POST /api/repos/create``, ``POST /api/validate-yaml``,
``POST /api/{type}s/{repo}/preupload/{rev}`` (answers ``regular`` for every file, so no LFS /
Xet upload happens) and ``POST /api/{type}s/{repo}/commit/{rev}`` (ndjson). Every request is
recorded; unknown ones get 500 and are recorded as unexpected.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOKEN = "hf_standin_secret_token_123"


class Hub:
    def __init__(self, mode: str = "ok"):
        self.mode = mode  # ok | ratelimit | noauth | missing
        self.repos: dict[str, dict] = {}
        self.commits: list[dict] = []
        self.requests: list[tuple[str, str]] = []
        self.unexpected: list[str] = []
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                hub.unexpected.append(f"GET {self.path}")
                self._send(500, {"error": "not implemented in the stand-in"})

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                body = self.rfile.read(length)
                hub.requests.append(("POST", self.path.split("?")[0]))
                hub.handle(self, body)

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

    def handle(self, req, body: bytes) -> None:
        path = req.path.split("?")[0]
        if req.headers.get("Authorization") != f"Bearer {TOKEN}" or self.mode == "noauth":
            return req._send(401, {"error": "Invalid credentials in Authorization header"})
        if self.mode == "ratelimit":
            return req._send(429, {"error": "Too many requests"})
        if path == "/api/repos/create":
            payload = json.loads(body)
            repo = f"{payload['organization']}/{payload['name']}"
            if self.mode == "missing":
                return req._send(404, {"error": "Organization not found"},
                                 {"X-Error-Code": "RepoNotFound"})
            if repo in self.repos:
                return req._send(409, {"error": "You already created this repo",
                                       "url": f"{self.url}/datasets/{repo}"})
            self.repos[repo] = {"type": payload.get("type"), "files": {}}
            return req._send(200, {"url": f"{self.url}/datasets/{repo}"})
        if path == "/api/validate-yaml":
            return req._send(200, {"errors": [], "warnings": []})
        m = re.fullmatch(r"/api/(\w+)s/([^/]+/[^/]+)/(preupload|commit)/([^/]+)", path)
        if m and m.group(2) not in self.repos:
            return req._send(404, {"error": "Repository not found"},
                             {"X-Error-Code": "RepoNotFound"})
        if m and m.group(3) == "preupload":
            files = json.loads(body)["files"]
            return req._send(200, {"files": [
                {"path": f["path"], "uploadMode": "regular", "shouldIgnore": False}
                for f in files]})
        if m and m.group(3) == "commit":
            lines = [json.loads(x) for x in body.decode().splitlines() if x.strip()]
            header = lines[0]
            files = {}
            for item in lines[1:]:
                assert item["key"] == "file", item
                files[item["value"]["path"]] = base64.b64decode(item["value"]["content"])
            oid = hashlib.sha1(body).hexdigest()
            self.commits.append({"repo": m.group(2), "type": m.group(1),
                                 "revision": m.group(4), "header": header, "files": files,
                                 "oid": oid})
            self.repos[m.group(2)]["files"].update(files)
            return req._send(200, {"commitUrl": f"{self.url}/{m.group(2)}/commit/{oid}",
                                   "commitOid": oid})
        self.unexpected.append(f"POST {path}")
        return req._send(500, {"error": "not implemented in the stand-in"})
