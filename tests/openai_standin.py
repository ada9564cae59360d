"""A stand-in OpenAI-compatible server backed by a tiny transformers causal LM (tests only).

What it serves, as vLLM does:

* ``GET /v1/models``: the served name, its ``root`` and ``max_model_len``;
* ``POST /v1/completions``: ``prompt`` as text, token ids or a list of either; ``echo`` with
  ``logprobs`` returns every prompt token's log-probability (``token_logprobs``, the first
  None), ``top_logprobs`` and ``text_offset``; ``max_tokens`` greedy tokens follow;
* ``POST /v1/chat/completions``: the tokenizer's chat template, greedy decoding up to
  ``max_tokens`` and ``stop``, ``logprobs`` / ``top_logprobs`` per answer token, and
  constrained answers for ``structured_outputs.choice``, ``guided_choice`` and a
  ``response_format`` JSON schema with an ``answer`` enum.

Faults to inject (:class:`Faults`): statuses for the next POSTs (429 with ``Retry-After``,
5xx), malformed JSON bodies, latency, an API key to require, no echo log-probabilities, no
chat logprobs, and a gate that holds every request after the first N answered ones (the
resume test kills the client while the gate is shut). :class:`Counter` counts received and
answered requests per path and per body, so a test can assert that nothing was sent twice.

Run it alone (benchmarks): ``python -m tests.openai_standin --model DIR --port 8000
--latency 0.2 [--engine-process]``; with ``--engine-process`` (:class:`EngineProcess`) the model
runs in a process of its own, as vLLM's engine core runs apart from its API server.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import threading
import time
from collections import Counter as _Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


@dataclass
class Faults:
    """What the server does wrong, settable while it runs."""

    statuses: list[int] = field(default_factory=list)  # answer the next POSTs with these
    retry_after: str | None = None  # Retry-After header of those answers
    malformed: int = 0  # next POSTs answered 200 with a body that is not JSON
    latency: float = 0.0  # seconds before each POST is answered
    key: str | None = None  # required bearer token
    echo: bool = True  # completions return echo log-probabilities
    chat_logprobs: bool = True  # chat returns logprobs when asked
    gate_after: int | None = None  # hold every POST after this many answered
    max_logprobs: int = 20  # most top_logprobs allowed (vLLM's default)


@dataclass
class Counter:
    """Requests received and answered, per path and per body."""

    received: _Counter = field(default_factory=_Counter)
    answered: _Counter = field(default_factory=_Counter)
    bodies: _Counter = field(default_factory=_Counter)  # answered, by sha256 of the body
    held: int = 0  # requests waiting at the gate now
    inflight: int = 0  # requests being answered now
    max_inflight: int = 0  # the most at once

    def repeated(self) -> int:
        """Answered bodies answered more than once (extra answers counted)."""
        return sum(n - 1 for n in self.bodies.values() if n > 1)


class StandinModel:
    """The tiny causal LM and its tokenizer, one forward at a time."""

    def __init__(self, path: str | Path, served: str, max_model_len: int | None = None):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        torch.set_num_threads(1)
        self.torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(path)
        self.model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
        self.served = served
        self.root = str(path)
        self.max_model_len = max_model_len or self.model.config.n_positions
        self.lock = threading.Lock()

    def logprobs(self, ids: list[int]):
        """Log-softmax over the vocabulary at every position of ``ids`` (float32)."""
        torch = self.torch
        with self.lock, torch.inference_mode():
            logits = self.model(torch.tensor([ids])).logits[0].float()
        return torch.log_softmax(logits, dim=-1)

    def logprobs_batch(self, seqs: list[list[int]]) -> list:
        """:meth:`logprobs` of several sequences in one right-padded forward (as a serving
        engine batches the prompts of one request); each result keeps its own positions."""
        torch = self.torch
        if len(seqs) == 1:
            return [self.logprobs(seqs[0])]
        width = max(len(s) for s in seqs)
        ids = torch.tensor([s + [0] * (width - len(s)) for s in seqs])
        mask = torch.tensor([[1] * len(s) + [0] * (width - len(s)) for s in seqs])
        with self.lock, torch.inference_mode():
            logits = self.model(ids, attention_mask=mask).logits.float()
        return [torch.log_softmax(logits[i, : len(s)], dim=-1) for i, s in enumerate(seqs)]

    def token_text(self, token: int) -> str:
        if not hasattr(self, "_texts"):
            self._texts = [self.tokenizer.decode([i]) for i in range(len(self.tokenizer))]
        return self._texts[token] if token < len(self._texts) else ""


def _top(row, k: int, model: StandinModel) -> list[tuple[str, float]]:
    values, idx = row.topk(min(k, row.shape[-1]))
    return [(model.token_text(int(i)), float(v)) for v, i in zip(values, idx, strict=True)]


def completion(model: StandinModel, body: dict) -> tuple[int, dict]:
    """A ``/v1/completions`` answer (status, JSON)."""
    prompts = body.get("prompt")
    if isinstance(prompts, str) or (isinstance(prompts, list) and prompts
                                    and isinstance(prompts[0], int)):
        prompts = [prompts]
    max_tokens = int(body.get("max_tokens", 16))
    k = body.get("logprobs")
    choices, used = [], 0
    all_ids = [model.tokenizer(p)["input_ids"] if isinstance(p, str) else list(p)
               for p in prompts]
    for ids in all_ids:
        if len(ids) + max_tokens > model.max_model_len:
            return 400, {"error": {"message": f"This model's maximum context length is "
                                   f"{model.max_model_len} tokens. However, you requested "
                                   f"{len(ids) + max_tokens} tokens", "code": 400}}
    # One token or none: every prompt needs one forward, so the prompts go as one batch.
    first = model.logprobs_batch(all_ids) if max_tokens <= 1 else None
    for index, ids in enumerate(all_ids):
        seq = list(ids)
        for step in range(max(1, max_tokens)):  # the last forward scores every position
            logp = first[index] if first is not None and step == 0 else model.logprobs(seq)
            seq.append(int(logp[-1].argmax()))
        if max_tokens == 0:
            seq.pop()
        start = 0 if body.get("echo") else len(ids)
        choice = {"index": index, "text": model.tokenizer.decode(seq[start:]),
                  "finish_reason": "length", "logprobs": None}
        if k is not None:
            tokens = [model.token_text(t) for t in seq[start:]]
            target = model.torch.tensor(seq[1:])
            picked = logp[: len(seq) - 1].gather(1, target[:, None])[:, 0].tolist()
            values, idx = logp[: len(seq) - 1].topk(max(1, int(k)), dim=-1)
            values, idx = values.tolist(), idx.tolist()
            lps = [None if j == 0 else picked[j - 1] for j in range(start, len(seq))]
            tops = [None if j == 0 else {model.token_text(i): v for i, v in
                                         zip(idx[j - 1], values[j - 1], strict=True)}
                    for j in range(start, len(seq))]
            offsets, pos = [], 0
            for t in tokens:
                offsets.append(pos)
                pos += len(t)
            choice["logprobs"] = {"tokens": tokens, "token_logprobs": lps,
                                  "top_logprobs": tops, "text_offset": offsets}
        choices.append(choice)
        used += len(ids)
    return 200, {"id": "cmpl-standin", "object": "text_completion", "created": 0,
                 "model": model.served, "choices": choices,
                 "usage": {"prompt_tokens": used, "completion_tokens": max_tokens * len(choices),
                           "total_tokens": used + max_tokens * len(choices)}}


def _constrained(model: StandinModel, ids: list[int], choices: list[str]) -> list[int]:
    """Greedy decoding restricted to the token sequences of ``choices``."""
    seqs = [model.tokenizer(c, add_special_tokens=False)["input_ids"] for c in choices]
    out: list[int] = []
    while True:
        allowed = {s[len(out)] for s in seqs if len(s) > len(out) and s[:len(out)] == out}
        if not allowed:
            return out
        row = model.logprobs(ids + out)[-1]
        out.append(max(allowed, key=lambda t: float(row[t])))


def chat(model: StandinModel, body: dict, faults: Faults) -> tuple[int, dict]:
    """A ``/v1/chat/completions`` answer (status, JSON)."""
    text = model.tokenizer.apply_chat_template(body["messages"], tokenize=False,
                                               add_generation_prompt=True)
    ids = model.tokenizer(text)["input_ids"]
    max_tokens = int(body.get("max_tokens") or body.get("max_completion_tokens") or 16)
    k = int(body.get("top_logprobs") or 0)
    if k > faults.max_logprobs:
        return 400, {"error": {"message": f"top_logprobs {k} > max_logprobs "
                               f"{faults.max_logprobs}"}}
    choice_list = (body.get("structured_outputs") or {}).get("choice") or body.get("guided_choice")
    schema = (body.get("response_format") or {}).get("json_schema")
    if schema:
        choice_list = schema["schema"]["properties"]["answer"]["enum"]
    if choice_list:
        out = _constrained(model, ids, list(choice_list))
    else:
        out = []
        for _ in range(max_tokens):
            logp = model.logprobs(ids + out)
            out.append(int(logp[-1].argmax()))
    answer = model.tokenizer.decode(out)
    for stop in body.get("stop") or []:
        if stop in answer:
            answer = answer[:answer.index(stop)]
    if schema:
        answer = json.dumps({"answer": answer})
    message = {"index": 0, "message": {"role": "assistant", "content": answer},
               "finish_reason": "stop", "logprobs": None}
    if body.get("logprobs") and faults.chat_logprobs and out:
        if choice_list:
            logp = model.logprobs(ids + out)
        content = []
        for j, tok in enumerate(out):
            row = logp[len(ids) + j - 1]
            top = [{"token": t, "logprob": v, "bytes": list(t.encode())}
                   for t, v in _top(row, max(1, k), model)] if k else []
            t = model.token_text(tok)
            content.append({"token": t, "logprob": float(row[tok]), "bytes": list(t.encode()),
                            "top_logprobs": top})
        message["logprobs"] = {"content": content}
    return 200, {"id": "chatcmpl-standin", "object": "chat.completion", "created": 0,
                 "model": model.served, "system_fingerprint": "standin-1",
                 "choices": [message],
                 "usage": {"prompt_tokens": len(ids), "completion_tokens": len(out),
                           "total_tokens": len(ids) + len(out)}}


def respond(model: StandinModel, path: str, body: dict, faults: Faults) -> tuple[int, dict]:
    """The answer to a POST of ``body`` to ``path`` (status, JSON)."""
    if path == "/v1/completions":
        if not faults.echo:
            body = {**body, "echo": False}
        return completion(model, body)
    if path == "/v1/chat/completions":
        if not faults.chat_logprobs:
            body = {**body, "logprobs": False}
        return chat(model, body, faults)
    return 404, {"error": {"message": f"no route {path}"}}


class EngineProcess:
    """The model in a process of its own, as vLLM's engine core runs apart from its API server.

    The HTTP threads then only read, wait and write: they never queue for the GIL behind a
    forward pass, which in one process delayed accepting a burst of new connections by up to
    ~0.1 s (``benchmarks/bench_served.py``). Requests are answered one at a time, in the order
    they are handed over, by the same :func:`respond` (the same bytes as in one process).
    """

    def __init__(self, model_dir: str | Path, served: str, max_model_len: int | None):
        import multiprocessing

        context = multiprocessing.get_context("spawn")
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_engine_main, daemon=True,
                                       args=(str(model_dir), served, max_model_len, child))
        self.process.start()
        child.close()
        self.served, self.root, self.max_model_len = self.conn.recv()
        self.lock = threading.Lock()
        self.waiting: dict[int, list] = {}
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def call(self, path: str, body: dict, faults: Faults) -> tuple[int, bytes]:
        """Status and JSON bytes of the engine's answer."""
        done = threading.Event()
        with self.lock:
            rid, self.next_id = self.next_id, self.next_id + 1
            self.waiting[rid] = [done, None]
            self.conn.send((rid, path, body, faults.echo, faults.chat_logprobs,
                            faults.max_logprobs))
        done.wait()
        return self.waiting.pop(rid)[1]

    def _read(self) -> None:
        while True:
            try:
                rid, status, raw = self.conn.recv()
            except (EOFError, OSError):
                break
            entry = self.waiting[rid]
            entry[1] = (status, raw)
            entry[0].set()
        with self.lock:  # the engine is gone: every waiting request fails
            for entry in self.waiting.values():
                entry[1] = (500, b'{"error": {"message": "engine process gone"}}')
                entry[0].set()

    def close(self) -> None:
        self.conn.close()
        self.process.terminate()
        self.process.join(10)


def _engine_main(model_dir: str, served: str, max_model_len: int | None, conn) -> None:
    model = StandinModel(model_dir, served, max_model_len)
    model.token_text(0)  # the token texts once, before the first request
    conn.send((model.served, model.root, model.max_model_len))
    while True:
        try:
            rid, path, body, echo, chat_logprobs, max_logprobs = conn.recv()
        except (EOFError, OSError):
            return
        faults = Faults(echo=echo, chat_logprobs=chat_logprobs, max_logprobs=max_logprobs)
        status, payload = respond(model, path, body, faults)
        conn.send((rid, status, json.dumps(payload).encode()))


class _QuietServer(ThreadingHTTPServer):
    """A client that went away (a timeout, a killed run) is not an error worth a traceback.

    The listen backlog is uvicorn's (2048), not socketserver's 5: a client opening 32
    connections at once would otherwise see SYNs dropped and retried a second later."""

    request_queue_size = 2048

    def handle_error(self, request, client_address) -> None:
        pass


class Standin:
    """The server: ``start()`` in a thread, ``url`` its API root, ``stop()``."""

    def __init__(self, model_dir: str | Path, served: str = "tiny", port: int = 0,
                 max_model_len: int | None = None, faults: Faults | None = None,
                 engine_process: bool = False):
        self.engine = EngineProcess(model_dir, served, max_model_len) if engine_process else None
        self.model = self.engine or StandinModel(model_dir, served, max_model_len)
        self.faults = faults or Faults()
        self.counter = Counter()
        self.gate = threading.Condition()
        self.dropped = 0  # times held requests were dropped
        self.server = _QuietServer(("127.0.0.1", port), self._handler())
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def start(self) -> Standin:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.open_gate()
        self.server.shutdown()
        self.server.server_close()
        if self.engine is not None:
            self.engine.close()

    def open_gate(self, drop_held: bool = False) -> None:
        """Let held requests through; with ``drop_held`` they end unanswered (their client
        is gone, as a server aborts a request whose connection closed)."""
        with self.gate:
            self.faults.gate_after = None
            if drop_held:
                self.dropped += 1
            self.gate.notify_all()

    def _handler(self):
        standin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # TCP_NODELAY, as uvicorn (vLLM) sets it

            def log_message(self, *args) -> None:
                pass

            def _send(self, status: int, payload, headers: dict | None = None) -> None:
                raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(raw)

            def _authorised(self) -> bool:
                key = standin.faults.key
                if key and self.headers.get("Authorization") != f"Bearer {key}":
                    self._send(401, {"error": {"message": "Incorrect API key provided"}})
                    return False
                return True

            def do_GET(self) -> None:
                if not self._authorised():
                    return
                if self.path.rstrip("/") != "/v1/models":
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                m = standin.model
                self._send(200, {"object": "list", "data": [
                    {"id": m.served, "object": "model", "owned_by": "standin", "created": 0,
                     "root": m.root, "max_model_len": m.max_model_len}]})

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                path = self.path.rstrip("/")
                standin.counter.received[path] += 1
                if not self._authorised():
                    return
                counter = standin.counter
                with standin.gate:
                    counter.inflight += 1
                    counter.max_inflight = max(counter.max_inflight, counter.inflight)
                try:
                    self._answer(path, raw)
                finally:
                    with standin.gate:
                        counter.inflight -= 1

            def _answer(self, path: str, raw: bytes) -> None:
                faults, counter = standin.faults, standin.counter
                with standin.gate:
                    epoch = standin.dropped
                    while (faults.gate_after is not None
                           and sum(counter.answered.values()) >= faults.gate_after):
                        counter.held += 1
                        standin.gate.wait()
                        counter.held -= 1
                    if standin.dropped != epoch:
                        self.close_connection = True
                        return
                # The answer leaves `latency` seconds after the request came (or when it is
                # ready, if later): the work runs inside that time, as a serving engine's
                # batched forward does, so requests in flight do not queue their latency
                # behind each other's compute.
                deadline = time.monotonic() + faults.latency

                def wait() -> None:
                    time.sleep(max(0.0, deadline - time.monotonic()))

                with standin.gate:
                    status = faults.statuses.pop(0) if faults.statuses else None
                    malformed = faults.malformed > 0
                    if malformed and status is None:
                        faults.malformed -= 1
                if status is not None:
                    headers = {"Retry-After": faults.retry_after} if faults.retry_after else {}
                    wait()
                    self._send(status, {"error": {"message": f"injected {status}"}}, headers)
                    return
                if malformed:
                    wait()
                    self._send(200, b'{"choices": [ not json')
                    return
                body = json.loads(raw)
                if body.get("model") != standin.model.served:
                    wait()
                    self._send(404, {"error": {"message": f"model {body.get('model')!r} "
                                               "does not exist"}})
                    return
                if standin.engine is not None:
                    status, payload = standin.engine.call(path, body, faults)
                else:
                    status, payload = respond(standin.model, path, body, faults)
                wait()
                if status == 200:
                    with standin.gate:
                        counter.answered[path] += 1
                        counter.bodies[hashlib.sha256(raw).hexdigest()] += 1
                self._send(status, payload)

        return Handler


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="folder of a tiny causal LM")
    parser.add_argument("--served", default="tiny")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--engine-process", action="store_true",
                        help="run the model in a process of its own (as vLLM's engine core)")
    args = parser.parse_args()
    server = Standin(args.model, args.served, args.port, faults=Faults(latency=args.latency),
                     engine_process=args.engine_process)
    print(server.url, flush=True)
    server.server.serve_forever()


if __name__ == "__main__":
    main()
