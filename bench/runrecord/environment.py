"""Where a run computed its numbers: the device, the precision, the library versions."""

from __future__ import annotations

import platform
import sys
from importlib import metadata

#: Libraries whose versions a run record lists (those that compute or tokenise).
PACKAGES = ("torch", "transformers", "tokenizers", "safetensors", "accelerate", "numpy",
            "scikit-learn", "vaderSentiment")


def package_versions(names: tuple[str, ...] = PACKAGES) -> dict[str, str | None]:
    """``name -> version`` of the installed libraries (None: not installed), and Python's."""
    from consistency_bench.bench import __version__

    out: dict[str, str | None] = {"consistency-bench": __version__,
                                  "python": platform.python_version()}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def cpu_name() -> str:
    """The CPU model (``/proc/cpuinfo``'s ``model name``), else the platform's machine type."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def compute_precision(device_type: str, weights_dtype: str | None, amp: bool) -> str | None:
    """The precision the forward pass computes in.

    The weights' dtype, except on CUDA with float32 weights and autocast on (``predict``'s
    default), where matrix products run in bfloat16 (float16 without bf16 support), as
    :mod:`consistency_bench.bench.runner.forward` and :mod:`consistency_bench.bench.runner.causal`
    set it.
    """
    if device_type == "cuda" and amp and weights_dtype == "float32":
        import torch

        return "bfloat16" if torch.cuda.is_bf16_supported() else "float16"
    return weights_dtype


def device_info(device, weights_dtype: str | None, amp: bool,
                device_map: str | None = None) -> dict:
    """The ``device`` block of a run record for a model whose first weights are on ``device``.

    Args:
        device: A ``torch.device`` (the loaded model's).
        weights_dtype: The weights' dtype name (``float32``, ``bfloat16``).
        amp: Whether autocast was asked for (``--no-amp`` turns it off).
        device_map: ``auto`` when the layers were spread over several devices.

    """
    import torch

    info: dict = {"type": device.type, "device_map": device_map,
                  "weights_dtype": weights_dtype, "amp": amp,
                  "precision": compute_precision(device.type, weights_dtype, amp),
                  "cuda": torch.version.cuda, "platform": sys.platform}
    if device.type == "cuda":
        index = device.index if device.index is not None else torch.cuda.current_device()
        info["name"] = torch.cuda.get_device_name(index)
        info["capability"] = ".".join(map(str, torch.cuda.get_device_capability(index)))
        info["count"] = torch.cuda.device_count()
    else:
        info["name"] = cpu_name()
        info["threads"] = torch.get_num_threads()
    return info
