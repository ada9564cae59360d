"""Several processes of one prediction run: ``torchrun`` / ``accelerate launch``, and shards.

Two ways to split a run (docs/runner.md, "Several GPUs and machines"):

* **Processes** (``torchrun --nproc_per_node 8 -m consistency_bench predict ...``, or ``accelerate
  launch``, on one or several nodes): the launcher sets ``WORLD_SIZE``, ``RANK`` and
  ``LOCAL_RANK``. Each process loads the model on ``cuda:{LOCAL_RANK}`` (CPU without
  CUDA), runs its share of the batches, and the results are gathered to rank 0 with
  ``torch.distributed`` on the gloo backend, which writes the one prediction file.
* **Shards** (``--shard i/N``, one command per machine, no network or shared disk needed):
  each writes a part file; ``merge-predictions`` joins them.

Why gather over gloo rather than part files in a shared folder: the results are small
(a few floats per distinct input), gloo runs over TCP on CPU-only and GPU machines alike and
needs no NCCL, and several nodes need no shared file system. Each rank still writes its
resume files (``<out>.parts/``) on its own disk.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from consistency_bench.bench.errors import ConfigError, shorten

#: How long a rank waits for the others at a collective (the slowest rank's share).
TIMEOUT_HOURS = 6
#: Most parts ``--shard i/N`` splits a run into. Each part is a command of its own on a
#: machine of its own; the largest suite (``mnli_calm``, 117,780 rows) split 4,096 ways leaves
#: about 29 rows a part, so a larger N is a typo.
MAX_SHARDS = 4096


@dataclass(frozen=True)
class Shard:
    """Part ``index`` of ``count`` of a run (``--shard index/count``)."""

    index: int = 0
    count: int = 1

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str | None) -> Shard | None:
    """``--shard i/N`` -> ``Shard(i, N)`` with ``0 <= i < N <= MAX_SHARDS``.

    ASCII digits only, no leading zero, nothing around them: ``\\d`` also matched
    Arabic-Indic digits (``١/٢``) and spaces were skipped (``' 0/2'``), so one part could be
    written under several spellings; and ``0/99999999999999999999999`` was accepted.

    Raises:
        ConfigError: Malformed or out of range (says what is accepted).

    """
    if text is None:
        return None
    match = re.fullmatch(r"(0|[1-9][0-9]{0,8})/([1-9][0-9]{0,8})", text)
    if (match is None or not 1 <= int(match[2]) <= MAX_SHARDS
            or int(match[1]) >= int(match[2])):
        raise ConfigError(
            f"--shard {shorten(text)}: use INDEX/COUNT in ASCII digits with 0 <= INDEX < COUNT "
            f"<= {MAX_SHARDS} (0/2 and 1/2 split a run in two)"
        )
    return Shard(int(match[1]), int(match[2]))


@dataclass(frozen=True)
class Processes:
    """Where a process stands among the launched ones (from the launcher's environment)."""

    rank: int
    world: int
    local_rank: int
    local_world: int

    @property
    def is_main(self) -> bool:
        """Whether this is rank 0 (the one that writes the output)."""
        return self.rank == 0


def from_env(environ=None) -> Processes | None:
    """The launched processes, or None for a single process (``WORLD_SIZE`` unset or 1).

    Raises:
        ConfigError: ``WORLD_SIZE`` > 1 without a valid ``RANK``.

    """
    env = os.environ if environ is None else environ
    world = int(env.get("WORLD_SIZE", "1") or 1)
    if world <= 1:
        return None
    try:
        rank = int(env["RANK"])
    except (KeyError, ValueError):
        raise ConfigError(
            f"WORLD_SIZE={world} but RANK is {env.get('RANK')!r}: launch with torchrun or "
            "accelerate launch"
        ) from None
    local_rank = int(env.get("LOCAL_RANK", rank))
    local_world = int(env.get("LOCAL_WORLD_SIZE", world))
    return Processes(rank, world, local_rank, local_world)


def process_device(device, procs: Processes | None, device_map: str | None = None):
    """The ``--device`` a process loads on: ``cuda:{LOCAL_RANK}`` under a launcher.

    A single process keeps ``device``. Launched processes with ``--device`` unset, ``auto``
    or ``cuda`` get ``cuda:{LOCAL_RANK}`` when CUDA is available (never plain ``cuda``, which
    is GPU 0 for every process), CPU otherwise.

    Raises:
        ConfigError: ``--device cuda:N`` under several processes (each needs its own GPU), or
            ``--device-map`` with several processes on one node.

    """
    if procs is None:
        return device
    if device_map is not None:
        if procs.local_world > 1:
            raise ConfigError(
                f"--device-map {device_map} with {procs.local_world} processes per node: each "
                "would spread the model over every GPU; launch one process per node "
                "(--nproc_per_node 1) or drop --device-map"
            )
        return device
    import torch

    if device in (None, "auto", "cuda"):
        if torch.cuda.is_available():
            if procs.local_rank >= torch.cuda.device_count():
                raise ConfigError(
                    f"LOCAL_RANK {procs.local_rank}, but this node has "
                    f"{torch.cuda.device_count()} CUDA devices: launch at most that many "
                    "processes per node"
                )
            torch.cuda.set_device(procs.local_rank)
            return f"cuda:{procs.local_rank}"
        if device == "cuda":
            raise ConfigError("--device cuda requested but CUDA is not available on this machine")
        return "cpu"
    if str(device).startswith("cuda:"):
        raise ConfigError(
            f"--device {device} under {procs.world} processes: every process would use that "
            "GPU; leave --device out (each process takes cuda:LOCAL_RANK)"
        )
    return device


def init(procs: Processes) -> None:
    """Join the process group (gloo, ``env://``), unless the launcher's code already did."""
    import datetime

    import torch.distributed as dist

    if not dist.is_initialized():
        dist.init_process_group(backend="gloo",
                                timeout=datetime.timedelta(hours=TIMEOUT_HOURS))


def _group():
    """A gloo group over every rank (the default group when it is gloo already)."""
    import torch.distributed as dist

    if dist.get_backend() == "gloo":
        return None
    global _GLOO
    if _GLOO is None:
        _GLOO = dist.new_group(backend="gloo")
    return _GLOO


_GLOO = None


def all_gather(obj) -> list:
    """Every rank's ``obj``, in rank order, on every rank."""
    import torch.distributed as dist

    out: list = [None] * dist.get_world_size()
    dist.all_gather_object(out, obj, group=_group())
    return out


def gather(obj) -> list | None:
    """Every rank's ``obj`` in rank order on rank 0; None on the others."""
    import torch.distributed as dist

    out = [None] * dist.get_world_size() if dist.get_rank() == 0 else None
    dist.gather_object(obj, out, dst=0, group=_group())
    return out


def barrier() -> None:
    """Wait for every rank."""
    import torch.distributed as dist

    dist.barrier(group=_group())


def finish() -> None:
    """Leave the process group (quietly: no warning at exit)."""
    import torch.distributed as dist

    if dist.is_initialized():
        dist.destroy_process_group()
