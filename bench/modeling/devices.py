"""Devices, dtypes and per-device memory limits, from their command-line names."""

from __future__ import annotations

import re

from consistency_bench.bench.errors import ConfigError


def resolve_dtype(dtype):
    """A ``torch.dtype`` from a name (``"bfloat16"``, ``"float16"``, ``"float32"``) or None."""
    if dtype is None or dtype == "auto":
        return None
    import torch

    if isinstance(dtype, torch.dtype):
        return dtype
    names = {"float32": torch.float32, "fp32": torch.float32, "bfloat16": torch.bfloat16,
             "bf16": torch.bfloat16, "float16": torch.float16, "fp16": torch.float16}
    try:
        return names[str(dtype)]
    except KeyError:
        raise ConfigError(f"unknown dtype {dtype!r}; use one of {', '.join(names)}") from None


#: Device types ``--device`` accepts.
DEVICE_TYPES = ("cpu", "cuda", "mps")


def resolve_device(device=None):
    """``torch.device`` from a name; default: ``cuda`` when available, else ``cpu``.

    Raises:
        ConfigError: An unknown device type (``tpu``), or CUDA asked for where there is none.

    """
    import torch

    if device is None or device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    name = device
    try:
        device = torch.device(device)
    except (RuntimeError, TypeError, ValueError):
        device = None
    if device is None or device.type not in DEVICE_TYPES:
        raise ConfigError(
            f"--device {name!s}: unknown device; use {', '.join(DEVICE_TYPES)} or cuda:N"
        )
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ConfigError(f"device {device} requested but CUDA is not available on this machine")
    return device


def parse_max_memory(spec: str | None) -> dict | None:
    """``--max-memory 0=20GiB,1=20GiB,cpu=60GiB`` -> ``{0: "20GiB", 1: "20GiB", "cpu": "60GiB"}``.

    Raises:
        ConfigError: A malformed part (names it and says what is accepted).

    """
    if not spec:
        return None
    out: dict = {}
    for part in (p.strip() for p in spec.split(",")):
        key, eq, value = part.partition("=")
        key, value = key.strip(), value.strip().replace(" ", "")
        size = re.fullmatch(r"\d+(\.\d+)?([KMGT]i?B|B)?", value, flags=re.IGNORECASE)
        if not eq or not (key.isdigit() or key in ("cpu", "mps")) or size is None:
            raise ConfigError(
                f"--max-memory part {part!r}: use DEVICE=SIZE with DEVICE a GPU index, cpu or "
                "mps and SIZE like 20GiB (e.g. 0=20GiB,1=20GiB,cpu=60GiB)"
            )
        out[int(key) if key.isdigit() else key] = value
    return out
