"""Async requests to an OpenAI-compatible endpoint: concurrency, rate limit, retries, cache.

``--concurrency N`` workers each take the next request, send it, and commit its response to
the cache before taking another; so when every worker waits on the server, every answered
request is in the cache (what makes a killed run resume without sending one twice).
``--max-rps`` spaces request starts evenly. A 429, a 5xx, a timeout, a dropped connection or
a response that is not the JSON expected is retried with exponential backoff and full jitter
(``uniform(0, min(cap, base * 2**attempt))``), waiting at least ``Retry-After`` when the
server sends one; any other HTTP error stops the run with the server's message. The key is
sent as a header and never appears in a message (``Endpoint.redact``).
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import functools
import gc
import json
import random
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from consistency_bench.bench.errors import BenchError, ConfigError
from consistency_bench.bench.served.cache import RequestCache, request_key
from consistency_bench.bench.served.endpoint import Endpoint

#: HTTP statuses that are retried (besides every 5xx).
RETRY_STATUSES = frozenset({408, 409, 425, 429})


class ServedError(BenchError):
    """A request failed for good, or the endpoint cannot serve the run."""


@dataclass(frozen=True)
class ClientOptions:
    """How requests are sent.

    Attributes:
        concurrency: Requests in flight at once.
        max_rps: Most request starts per second (None: no limit).
        timeout: Seconds one request may take (connect, send, wait, read).
        retries: Further attempts after a retryable failure.
        backoff: Base of the exponential backoff, in seconds.
        max_backoff: Cap of one backoff wait, in seconds (``Retry-After`` may exceed it).

    """

    concurrency: int = 8
    max_rps: float | None = None
    timeout: float = 120.0
    retries: int = 6
    backoff: float = 1.0
    max_backoff: float = 60.0

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ConfigError(f"--concurrency {self.concurrency}: use 1 or more")
        if self.max_rps is not None and not self.max_rps > 0:
            raise ConfigError(f"--max-rps {self.max_rps}: use a positive rate")
        if not self.timeout > 0:
            raise ConfigError(f"--request-timeout {self.timeout}: use a positive number of "
                              "seconds")
        if self.retries < 0:
            raise ConfigError(f"--retries {self.retries}: use 0 or more")
        if not self.backoff >= 0:
            raise ConfigError(f"--backoff {self.backoff}: use 0 or more seconds")


@dataclass
class Usage:
    """Token usage the responses report, and how many requests were sent or cached."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    sent: int = 0
    cached: int = 0
    retried: int = 0

    def add(self, response: dict) -> None:
        """Add the ``usage`` of one response."""
        usage = response.get("usage") if isinstance(response, dict) else None
        if isinstance(usage, dict):
            for name in ("prompt_tokens", "completion_tokens"):
                value = usage.get(name)
                if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                    setattr(self, name, getattr(self, name) + value)

    def as_dict(self) -> dict:
        """JSON form (run record, summary)."""
        return {"prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
                "total_tokens": self.prompt_tokens + self.completion_tokens}


@dataclass
class RateLimiter:
    """Spaces request starts ``1 / max_rps`` seconds apart (one event loop, no lock)."""

    max_rps: float | None
    _next: float = field(default=0.0)

    async def wait(self) -> None:
        """Return when the next request may start."""
        if not self.max_rps:
            return
        now = time.monotonic()
        start = max(now, self._next)
        self._next = start + 1.0 / self.max_rps
        if start > now:
            await asyncio.sleep(start - now)


def retry_after(value: str | None) -> float | None:
    """Seconds a ``Retry-After`` header asks for (delta seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _server_message(endpoint: Endpoint, text: str) -> str:
    """The server's error message, one line, at most 200 characters, the key hidden."""
    try:
        data = json.loads(text)
        error = data.get("error", data) if isinstance(data, dict) else data
        if isinstance(error, dict):
            error = error.get("message", error)
        text = str(error)
    except ValueError:
        pass
    text = " ".join(endpoint.redact(text).split())
    return text[:200] + ("..." if len(text) > 200 else "")


def import_http() -> None:
    """Import the HTTP client library now.

    aiohttp takes ~0.15 s to import: done before a run's request phase starts, the phase
    times requests, not imports.
    """
    import aiohttp  # noqa: F401


@functools.lru_cache(maxsize=8)
def _parsed_url(url: str):
    """The URL parsed once (aiohttp parses a string URL on every request)."""
    from yarl import URL

    return URL(url)


def env_proxy(url: str) -> tuple[object | None, object | None]:
    """The proxy (and its credentials) the environment names for ``url``, or ``(None, None)``.

    ``HTTPS_PROXY`` / ``HTTP_PROXY`` / ``NO_PROXY`` as aiohttp's ``trust_env`` reads them, but
    once per run: with ``trust_env`` aiohttp looks them up (and ``~/.netrc``) on a worker
    thread for every request, two thread hops a request (0.26 s of the 2.5 s that 280
    requests at concurrency 32 took, cProfile). The key comes from ``--api-key-env``, never
    from ``~/.netrc``.
    """
    from aiohttp.helpers import get_env_proxy_for_url

    try:
        proxy, auth = get_env_proxy_for_url(_parsed_url(url))
    except LookupError:
        return None, None
    except ValueError as exc:  # e.g. a port out of range
        raise ConfigError(f"the proxy the environment names for {url} (HTTPS_PROXY / "
                          f"HTTP_PROXY): {exc}") from None
    if proxy.scheme not in ("http", "https") or not proxy.host:
        shown = proxy.with_user(None) if proxy.is_absolute() else proxy  # no credentials
        raise ConfigError(f"the proxy the environment names for {url} (HTTPS_PROXY / "
                          f"HTTP_PROXY) is {str(shown)!r}: use http://HOST:PORT")
    return proxy, auth


async def post(http, endpoint: Endpoint, path: str, body: dict, options: ClientOptions,
               limiter: RateLimiter, check: Callable[[dict], str | None],
               rng: random.Random, usage: Usage,
               proxy: tuple[object | None, object | None] = (None, None)) -> tuple[dict, str]:
    """POST ``body`` to ``path`` until it succeeds; return the response and its JSON text.

    Raises:
        ServedError: A non-retryable HTTP error, or every attempt failed.

    """
    import aiohttp

    url = endpoint.url(path)
    target = _parsed_url(url)
    reason = ""
    payload = json.dumps(body, ensure_ascii=False).encode("utf-8")
    timeout = aiohttp.ClientTimeout(total=options.timeout)
    for attempt in range(options.retries + 1):
        await limiter.wait()
        wait_at_least = None
        try:
            async with http.post(target, data=payload, headers=endpoint.headers(),
                                 timeout=timeout, proxy=proxy[0],
                                 proxy_auth=proxy[1]) as resp:
                status, raw = resp.status, await resp.read()
                header = resp.headers.get("retry-after")
        except asyncio.TimeoutError:
            reason = f"no answer within {options.timeout:g}s"
        except aiohttp.ClientError as exc:
            reason = f"connection failed ({type(exc).__name__})"
        else:
            text = raw.decode("utf-8", "replace")
            if status == 200:
                try:
                    data = json.loads(text)
                except ValueError:
                    data = None
                problem = "not JSON" if data is None else (
                    "not a JSON object" if not isinstance(data, dict) else check(data))
                if problem is None:
                    return data, text
                reason = f"malformed response ({problem})"
            elif status in RETRY_STATUSES or status >= 500:
                reason = f"HTTP {status}: {_server_message(endpoint, text)}"
                wait_at_least = retry_after(header)
            else:
                raise ServedError(f"{url}: HTTP {status}: {_server_message(endpoint, text)}")
        if attempt == options.retries:
            break
        usage.retried += 1
        delay = rng.uniform(0, min(options.max_backoff, options.backoff * 2 ** attempt))
        await asyncio.sleep(max(delay, wait_at_least or 0.0))
    raise ServedError(f"{url}: gave up after {options.retries + 1} attempts; last: {reason}. "
                      "Finished requests are cached: rerun to resume")


def run_requests(endpoint: Endpoint, path: str, bodies: Sequence[dict],
                 options: ClientOptions, cache: RequestCache,
                 check: Callable[[int, dict], str | None] = lambda i, data: None,
                 progress: Callable[[int], None] | None = None) -> tuple[list[dict], Usage]:
    """Send every body not in the cache; return all responses in order and the usage.

    ``check(i, data)`` says what is wrong with the response to body ``i`` (None: nothing); a
    response it refuses is retried as a malformed one and never cached.

    Raises:
        ServedError: A request failed for good (what finished is cached).

    """
    usage = Usage()
    url = endpoint.url(path)
    keys = [request_key(url, endpoint.model, body) for body in bodies]
    results: list[dict | None] = [cache.get(k) for k in keys]
    for found in results:
        if found is not None:
            usage.cached += 1
    todo = [i for i, r in enumerate(results) if r is None]
    if progress is not None and usage.cached:
        progress(usage.cached)
    if todo:
        with frozen_heap():
            asyncio.run(_send_all(endpoint, path, bodies, keys, todo, results, options, cache,
                                  check, usage, progress))
    return results, usage  # type: ignore[return-value]


@contextlib.contextmanager
def frozen_heap() -> Iterator[None]:
    """While the requests run, the cyclic collector skips every object made before them.

    A run holds the suites, the tokenizer and the encoded prompts, and each response's JSON
    makes many small objects, so the collector's full passes during the requests walked the
    whole heap again: two per 280 requests, 0.15-0.2 s of a 2.3 s concurrent phase at 200 ms
    latency (``benchmarks/bench_served.py``; with ``gc.freeze`` 2.11-2.13 s, without
    2.27-2.32 s). ``gc.freeze`` moves what exists to the permanent generation (no copy, no
    pass); ``gc.unfreeze`` after the requests, so all of it is collected as before. A heap
    frozen already (by the caller) is left as it is.
    """
    if gc.get_freeze_count():  # someone froze the heap already: theirs to undo
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


async def _send_all(endpoint, path, bodies, keys, todo, results, options, cache, check, usage,
                    progress) -> None:
    import aiohttp

    queue = list(reversed(todo))
    limiter = RateLimiter(options.max_rps)
    rng = random.Random()  # jitter only: no result depends on it
    url = endpoint.url(path)
    proxy = env_proxy(url)

    async def worker(http) -> None:
        while queue:
            i = queue.pop()
            data, text = await post(http, endpoint, path, bodies[i], options, limiter,
                                    functools.partial(check, i), rng, usage, proxy)
            cache.put(keys[i], url, endpoint.model, bodies[i], text)  # before the next one
            results[i] = data
            usage.sent += 1
            usage.add(data)
            if progress is not None:
                progress(1)

    connector = aiohttp.TCPConnector(limit=options.concurrency)
    async with aiohttp.ClientSession(connector=connector) as http:
        tasks = [asyncio.ensure_future(worker(http))
                 for _ in range(min(options.concurrency, len(todo)))]
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
