"""The served client reaches the endpoint through the environment's proxy, looked up once."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest

from consistency_bench.bench.errors import ConfigError
from consistency_bench.bench.served import client
from consistency_bench.bench.served.cache import RequestCache
from consistency_bench.bench.served.client import ClientOptions, env_proxy, run_requests
from consistency_bench.bench.served.endpoint import Endpoint

PROXY_VARS = ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "NO_PROXY",
              "no_proxy", "ALL_PROXY", "all_proxy")


@pytest.fixture
def clean_env(monkeypatch):
    for name in PROXY_VARS:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_env_proxy_reads_the_variables_and_no_proxy(clean_env):
    assert env_proxy("http://api.example.com/v1/completions") == (None, None)
    clean_env.setenv("HTTP_PROXY", "http://user:pw@proxy.example:3128")
    proxy, auth = env_proxy("http://api.example.com/v1/completions")
    assert str(proxy) == "http://proxy.example:3128"
    assert (auth.login, auth.password) == ("user", "pw")
    assert env_proxy("https://api.example.com/v1/completions") == (None, None)  # HTTPS_PROXY
    clean_env.setenv("NO_PROXY", "api.example.com")
    assert env_proxy("http://api.example.com/v1/completions") == (None, None)


class _Proxy(BaseHTTPRequestHandler):
    """Answers every POST itself, recording the request line (a proxy sees absolute URLs)."""

    protocol_version = "HTTP/1.1"
    seen: ClassVar[list[str]] = []

    def log_message(self, *args) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        type(self).seen.append(self.path)
        raw = json.dumps({"ok": True}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)


def test_requests_go_through_the_proxy_with_one_lookup(clean_env, tmp_path):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Proxy)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    lookups = []
    real = client.env_proxy
    clean_env.setattr(client, "env_proxy", lambda url: lookups.append(url) or real(url))
    clean_env.setenv("HTTP_PROXY", f"http://127.0.0.1:{server.server_address[1]}")
    try:
        endpoint = Endpoint("http://api.invalid/v1", "m")
        bodies = [{"model": "m", "prompt": f"p{i}"} for i in range(6)]
        responses, usage = run_requests(endpoint, "/completions", bodies,
                                        ClientOptions(concurrency=3, retries=0),
                                        RequestCache(tmp_path / "cache"))
    finally:
        server.shutdown()
        server.server_close()
    assert responses == [{"ok": True}] * 6 and usage.sent == 6
    assert _Proxy.seen == ["http://api.invalid/v1/completions"] * 6
    assert lookups == ["http://api.invalid/v1/completions"]  # once a run, not once a request


def test_requests_run_with_the_heap_frozen_and_unfrozen_after(clean_env, tmp_path):
    """The collector skips what existed before the requests (client.frozen_heap)."""
    import gc

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Proxy)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    clean_env.setenv("HTTP_PROXY", f"http://127.0.0.1:{server.server_address[1]}")
    seen = []
    assert gc.get_freeze_count() == 0
    try:
        run_requests(Endpoint("http://api.invalid/v1", "m"), "/completions",
                     [{"prompt": "a"}, {"prompt": "b"}], ClientOptions(concurrency=2, retries=0),
                     RequestCache(None), check=lambda i, data: seen.append(gc.get_freeze_count()))
        assert gc.get_freeze_count() == 0  # unfrozen after
        gc.freeze()  # a caller's own freeze is left alone
        frozen = gc.get_freeze_count()
        run_requests(Endpoint("http://api.invalid/v1", "m"), "/completions",
                     [{"prompt": "c"}], ClientOptions(concurrency=1, retries=0),
                     RequestCache(None))
        assert gc.get_freeze_count() > frozen // 2  # still frozen (a few frozen objects died)
    finally:
        gc.unfreeze()
        server.shutdown()
        server.server_close()
    assert len(seen) == 2 and min(seen) > 0  # frozen while the responses came


@pytest.mark.parametrize("value", ["not a url", "ftp://proxy.example:21", "http://",
                                   "http://proxy.example:99999"])
def test_a_bad_proxy_variable_is_one_clear_error(clean_env, value):
    clean_env.setenv("HTTP_PROXY", value)
    with pytest.raises(ConfigError, match="HTTP_PROXY") as caught:
        env_proxy("http://api.example.com/v1/completions")
    assert "\n" not in str(caught.value)
