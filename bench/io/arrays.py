"""Arrow <-> numpy conversions that do not import pandas.

pyarrow imports pandas (0.3 s CPU and 40 MiB; a whole ``score`` of BECEL takes 0.8 s CPU) the
first time a process calls ``pa.array``, ``pa.scalar``, ``Array.to_numpy`` or a compute
function with a Python scalar argument. These helpers go through the buffers instead, so the
scoring path can stay free of it (docs/benchmarks.md has the measurement).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa


def int64(array: pa.Array | pa.ChunkedArray, null: int = -1) -> np.ndarray:
    """An integer Arrow array as int64 numpy; nulls become ``null``."""
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    start, n = array.offset, len(array)
    _validity, data = array.buffers()[:2]
    if data is None or n == 0:
        return np.full(n, null, dtype=np.int64)
    kind = "u" if pa.types.is_unsigned_integer(array.type) else "i"
    dtype = np.dtype(f"<{kind}{array.type.bit_width // 8}")
    values = np.frombuffer(data, dtype=dtype, count=start + n)[start:].astype(np.int64)
    if array.null_count:
        values[~valid(array)] = null
    return values


def valid(array: pa.Array) -> np.ndarray:
    """Boolean numpy mask of the non-null entries."""
    start, n = array.offset, len(array)
    validity = array.buffers()[0]
    if validity is None:
        return np.ones(n, dtype=bool)
    bits = np.unpackbits(np.frombuffer(validity, dtype=np.uint8), bitorder="little")
    return bits[start : start + n].astype(bool)


def indices(values: np.ndarray) -> pa.Array:
    """An int64 Arrow array of ``values`` (for ``take``), without ``pa.array``."""
    values = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(values), [None, pa.py_buffer(values)])


def float64(array: pa.Array) -> np.ndarray | None:
    """A numeric Arrow array (floating or integer, no nulls) as float64 numpy.

    Returns:
        The values (a read-only view for float64 input), or ``None`` when the array has nulls
        or another type, for the caller to handle.

    """
    if array.null_count:
        return None
    if pa.types.is_integer(array.type):
        return int64(array).astype(np.float64)
    if not pa.types.is_floating(array.type) or array.type.bit_width == 16:
        return None
    start, n = array.offset, len(array)
    data = array.buffers()[1]
    if data is None or n == 0:
        return np.zeros(n, dtype=np.float64)
    dtype = np.dtype(f"<f{array.type.bit_width // 8}")
    return np.frombuffer(data, dtype=dtype, count=start + n)[start:].astype(np.float64, copy=False)


def offsets(array: pa.Array) -> np.ndarray:
    """The ``len(array) + 1`` value offsets of a string, binary or list array, as int64.

    Row ``i`` holds child values ``offsets[i]:offsets[i + 1]`` (of ``array.values`` for a list
    array; for a null row the segment is meaningless).
    """
    large = pa.types.is_large_string(array.type) or pa.types.is_large_binary(array.type) or (
        pa.types.is_large_list(array.type))
    start, n = array.offset, len(array)
    buffer = array.buffers()[1]
    if buffer is None:
        return np.zeros(n + 1, dtype=np.int64)
    dtype = np.dtype("<i8" if large else "<i4")
    return np.frombuffer(buffer, dtype=dtype, count=start + n + 1)[start:].astype(np.int64)
