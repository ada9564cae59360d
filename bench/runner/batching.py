"""Batches: planned longest first under a token budget, run with a retry at half size on OOM."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

from consistency_bench.bench.errors import BenchError


class OutOfMemory(BenchError):
    """A batch of one input still does not fit in memory."""


def is_oom(exc: BaseException) -> bool:
    """Whether ``exc`` is a (CUDA) out-of-memory error."""
    import torch

    if isinstance(exc, torch.cuda.OutOfMemoryError):
        return True
    return isinstance(exc, RuntimeError) and "out of memory" in str(exc).lower()


def plan_rows(length: int, budget: int, max_rows: int) -> int:
    """Inputs in the next batch under a token budget (at least one)."""
    return max(1, min(max_rows, budget // max(1, length)))


def plan_batches(
    order: Sequence[int],
    lengths: Sequence[int],
    *,
    batch_size: int | None,
    token_budget: int,
    max_rows: int,
) -> list[list[int]]:
    """Cut ``order`` (longest first) into batches: fixed size, or filling a token budget."""
    batches, pos = [], 0
    while pos < len(order):
        if batch_size is not None:
            rows = batch_size
        else:
            rows = plan_rows(lengths[order[pos]], token_budget, max_rows)
        batches.append(list(order[pos : pos + rows]))
        pos += rows
    return batches


def run_planned(
    batches: Sequence[Sequence[int]],
    lengths: Sequence[int],
    forward: Callable[[list[int]], list],
    emit: Callable[[list[int], list], None],
    *,
    on_oom: Callable[[], None] = lambda: None,
    progress: Callable[[int], None] = lambda n: None,
) -> int:
    """Run ``forward`` over planned batches, halving a batch on out-of-memory.

    After an out-of-memory error on a batch of n inputs, that batch and every later one run
    in pieces of at most n // 2 inputs.

    Returns:
        The number of out-of-memory retries.

    Raises:
        OutOfMemory: A single input does not fit.

    """
    retries, cap = 0, None
    for planned in batches:
        queue = [list(planned)]
        while queue:
            batch = queue.pop(0)
            if cap is not None and len(batch) > cap:
                queue[:0] = [batch[i : i + cap] for i in range(0, len(batch), cap)]
                continue
            try:
                results = forward(batch)
            except Exception as exc:
                if not is_oom(exc):
                    raise
                on_oom()
                retries += 1
                if len(batch) == 1:
                    raise OutOfMemory(
                        f"out of memory on a single input of {lengths[batch[0]]} tokens; "
                        "lower --max-length or use a larger device"
                    ) from exc
                cap = max(1, len(batch) // 2)
                print(f"out of memory on a batch of {len(batch)}; retrying with {cap}",
                      file=sys.stderr)
                queue.insert(0, batch)
                continue
            emit(batch, results)
            progress(len(batch))
    return retries


def run_batches(
    order: Sequence[int],
    lengths: Sequence[int],
    forward: Callable[[list[int]], list],
    emit: Callable[[list[int], list], None],
    *,
    batch_size: int | None,
    token_budget: int,
    max_rows: int,
    on_oom: Callable[[], None] = lambda: None,
    progress: Callable[[int], None] = lambda n: None,
) -> int:
    """:func:`plan_batches` then :func:`run_planned`.

    Args:
        order: Input indices, longest first.
        lengths: Token length of every input (indexed by input index).
        forward: Batch of input indices -> one result per input.
        emit: Receives each finished batch and its results.
        batch_size: Fixed inputs per batch, or None to fill ``token_budget``.
        token_budget: Padded tokens per batch in automatic mode.
        max_rows: Cap on inputs per batch in automatic mode.
        on_oom: Called after an out-of-memory error (e.g. to empty the CUDA cache).
        progress: Called with the number of inputs finished by each batch.

    Returns:
        The number of out-of-memory retries.

    Raises:
        OutOfMemory: A single input does not fit.

    """
    batches = plan_batches(order, lengths, batch_size=batch_size, token_budget=token_budget,
                           max_rows=max_rows)
    return run_planned(batches, lengths, forward, emit, on_oom=on_oom, progress=progress)
