"""Typed Python wrappers over ``torch.ops.qplugin`` (same names and arguments).

They exist for discoverability and docstrings; TorchScript code should call
``torch.ops.qplugin.*`` directly.
"""

from typing import Any, Callable, Optional

import torch
from torch import Tensor

from . import _ops as _lib

_q = torch.ops.qplugin


def quantize_per_tensor(x: Tensor, scale: float, zero_point: int, dtype: torch.dtype) -> Tensor:
    """q = clamp(round_half_even(float32(x * inv_scale)) + zero_point, qmin, qmax), inv_scale =
    1 / float32(scale): torch's FakeQuantize rule (qint32: round_half_even(x / scale) in float64)."""
    return _q.quantize_per_tensor(x, scale, zero_point, dtype)


def quantize_per_tensor_dynamic(x: Tensor, dtype: torch.dtype, reduce_range: bool = False) -> Tensor:
    """Quantizes with qparams chosen from x's range (torch's choose_qparams rule)."""
    return _q.quantize_per_tensor_dynamic(x, dtype, reduce_range)


def quantize_per_channel(x: Tensor, scales: Tensor, zero_points: Tensor, axis: int, dtype: torch.dtype) -> Tensor:
    return _q.quantize_per_channel(x, scales, zero_points, axis, dtype)


def dequantize(q: Tensor) -> Tensor:
    return _q.dequantize(q)


def int_repr(q: Tensor) -> Tensor:
    return _q.int_repr(q)


def make_per_tensor_quantized_tensor(data: Tensor, scale: float, zero_point: int) -> Tensor:
    return _q.make_per_tensor_quantized_tensor(data, scale, zero_point)


def make_per_channel_quantized_tensor(data: Tensor, scales: Tensor, zero_points: Tensor, axis: int) -> Tensor:
    return _q.make_per_channel_quantized_tensor(data, scales, zero_points, axis)


__all__ = [
    "quantize_per_tensor",
    "quantize_per_tensor_dynamic",
    "quantize_per_channel",
    "dequantize",
    "int_repr",
    "make_per_tensor_quantized_tensor",
    "make_per_channel_quantized_tensor",
]
_ = Optional  # later families add optional arguments


def _refusal(name: str) -> Callable[..., Any]:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        _lib.require_quantized(f"torch_qplugin.ops.{name}")

    refuse.__name__ = refuse.__qualname__ = name
    return refuse


# With the plain library alone these ops are not registered: calling one says which library is
# missing rather than torch's "no attribute" of the op namespace.
if not _lib.has_quantized():
    for _name in __all__:
        if not hasattr(_q, _name):
            globals()[_name] = _refusal(_name)
