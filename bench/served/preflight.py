"""What the endpoint serves, checked before any request of a run is sent.

``GET /models`` must answer (else: unreachable, or the key refused with 401/403) and list the
model; one small probe request then shows that the endpoint can serve the mode: the
completions endpoint must echo the prompt's log-probabilities (``loglikelihood``), the chat
endpoint must answer (``generate``, and whether it returns ``top_logprobs``). Every failure is
one line (``ServedError``, exit 2). The probe is the run's first request, sent alone and
cached like the others when valid, so it costs nothing extra and a re-run does not send it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from consistency_bench.bench.served.cache import RequestCache, request_key
from consistency_bench.bench.served.client import (
    ClientOptions,
    ServedError,
    Usage,
    _server_message,
    run_requests,
)
from consistency_bench.bench.served.endpoint import Endpoint

#: Seconds the ``/models`` check may take (a dead host fails fast).
MODELS_TIMEOUT = 20.0
#: Fields of the ``/models`` entry kept in the run record (vLLM adds ``root``,
#: ``max_model_len``; every server has ``id``).
MODEL_FIELDS = ("id", "root", "parent", "owned_by", "created", "max_model_len")


@dataclass
class ServerInfo:
    """What the server reports about the served model.

    Attributes:
        model: The ``/models`` entry's fields of :data:`MODEL_FIELDS` that it has.
        max_model_len: The context window it reports (vLLM), or None.
        top_logprobs: ``generate``: whether the chat endpoint returns ``top_logprobs``.
        fingerprints: ``system_fingerprint`` values seen in responses.

    """

    model: dict = field(default_factory=dict)
    max_model_len: int | None = None
    top_logprobs: bool = False
    fingerprints: set[str] = field(default_factory=set)


def list_models(endpoint: Endpoint, timeout: float = MODELS_TIMEOUT) -> ServerInfo:
    """``GET /models``: the endpoint answers, accepts the key and lists the model.

    Raises:
        ServedError: Unreachable, key refused, an error status, not a model list, or the
            model not listed (the message lists what is served).

    """
    import httpx

    url = endpoint.url("/models")
    try:
        resp = httpx.get(url, headers=endpoint.headers(), timeout=timeout)
    except httpx.TimeoutException:
        raise ServedError(f"{url}: no answer within {timeout:g}s; is the server up?") from None
    except httpx.TransportError as exc:
        raise ServedError(f"{url}: cannot reach the endpoint ({type(exc).__name__}: "
                          f"{endpoint.redact(str(exc))[:120]}); is the server up?") from None
    if resp.status_code in (401, 403):
        has = "set" if endpoint.key else "not set"
        raise ServedError(f"{url}: HTTP {resp.status_code}: the endpoint refused the key "
                          f"(${endpoint.key_env}, {has}): {_server_message(endpoint, resp.text)}")
    if resp.status_code != 200:
        raise ServedError(f"{url}: HTTP {resp.status_code}: "
                          f"{_server_message(endpoint, resp.text)}")
    try:
        data = resp.json()["data"]
        ids = [m["id"] for m in data]
    except (ValueError, KeyError, TypeError):
        raise ServedError(f"{url}: not an OpenAI model list (expected {{\"data\": [{{\"id\": "
                          "...}]}})") from None
    if endpoint.model not in ids:
        served = ", ".join(map(str, ids[:20])) or "none"
        raise ServedError(f"--model {endpoint.model}: not served at {endpoint.base_url} "
                          f"(served: {served})")
    entry = data[ids.index(endpoint.model)]
    info = ServerInfo(model={k: entry[k] for k in MODEL_FIELDS if k in entry})
    window = entry.get("max_model_len")
    if isinstance(window, int) and not isinstance(window, bool) and window > 0:
        info.max_model_len = window
    return info


def probe(endpoint: Endpoint, path: str, body: dict, options: ClientOptions,
          cache: RequestCache, validate: Callable[[dict], str | None], cannot: str
          ) -> tuple[dict, Usage]:
    """Send the run's first request alone and check that the endpoint serves the mode.

    The response is cached only when ``validate`` finds nothing wrong with it, so a server
    that cannot serve the mode today is asked again on the next run. A cached response was
    valid: nothing is sent.

    Raises:
        ServedError: ``cannot`` formatted with what went wrong (``{why}``).

    """
    key = request_key(endpoint.url(path), endpoint.model, body)
    found = cache.get(key)
    if found is not None:
        usage = Usage(cached=1)
        return found, usage
    try:
        (resp,), usage = run_requests(endpoint, path, [body], options, RequestCache(None))
    except ServedError as exc:
        raise ServedError(cannot.format(why=f"failed ({exc})")) from None
    problem = validate(resp)
    if problem is not None:
        raise ServedError(cannot.format(why=problem))
    cache.put(key, endpoint.url(path), endpoint.model, body, resp)
    return resp, usage


def loglikelihood_problem(tokens: int):
    """What is wrong with a completions response whose first prompt has ``tokens`` tokens."""

    def problem(resp: dict) -> str | None:
        try:
            logprobs = resp["choices"][0]["logprobs"]["token_logprobs"]
            ok = len(logprobs) >= tokens and all(
                isinstance(x, (int, float)) for x in logprobs[1:tokens])
        except (KeyError, IndexError, TypeError):
            ok = False
        return None if ok else "returned no log-probability for the prompt's tokens with echo"

    return problem


def cannot_serve(endpoint: Endpoint, mode: str) -> str:
    """The message of a mode the endpoint cannot serve (``{why}`` left to fill)."""
    if mode == "loglikelihood":
        return (f"{endpoint.base_url} cannot serve --mode loglikelihood: the completions "
                "endpoint {why}; serve the model with vLLM (or another engine that returns "
                "echo log-probabilities) or use --mode generate")
    return (f"{endpoint.base_url} cannot serve --mode generate with these options: the chat "
            "endpoint {why}")


def has_top_logprobs(resp: dict) -> bool:
    """Whether a chat response carries ``top_logprobs`` for its first answer token."""
    try:
        first = resp["choices"][0]["logprobs"]["content"][0]
        return isinstance(first.get("top_logprobs"), list) and bool(first["top_logprobs"])
    except (KeyError, IndexError, TypeError, AttributeError):
        return False
