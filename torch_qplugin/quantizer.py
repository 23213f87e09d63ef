"""Quantizer objects (the seeds' design): a quantized tensor holds a Quantizer, which knows how to
quantize and dequantize. Plain tier: no quantized dtype is created here; data is uint8 / int8 /
int32 and the qparams live in the Quantizer (docs/design.md, "Two tiers").

    qz = torch_qplugin.PerTensorAffine(0.05, 128, torch.uint8)
    q = qz.quantize(x)          # torch_qplugin.QTensor
    y = qz.dequantize(q)        # float32

Arguments are checked by the plain ops themselves (qplugin::plain_quantize_per_tensor /
plain_dequantize_per_channel), so a bad scale, zero point or dtype gets the ops' own message.
"""

from typing import Any, Dict, Sequence, Tuple, Union

import torch

from ._torch_api import register_constant_type

_q = torch.ops.qplugin

# The plain dtype of each quantized dtype, by name: torch.quint4x2's 4-bit codes are torch.uint4.
_PLAIN_OF_QUANTIZED = (
    ("quint8", torch.uint8),
    ("qint8", torch.int8),
    ("qint32", torch.int32),
    ("quint4x2", torch.uint4),
)
# The quantized dtypes are accepted as aliases while torch still has them (looked up by name, so
# this file keeps working once they are gone).
_ALIASES = {getattr(torch, qn): dt for qn, dt in _PLAIN_OF_QUANTIZED if hasattr(torch, qn)}


def plain_dtype(dtype: torch.dtype) -> torch.dtype:
    """torch.uint8 / int8 / int32 / uint4 for a plain dtype or its quantized-dtype alias; any other
    dtype as it is."""
    return _ALIASES.get(dtype, dtype)


def quantized_dtype(dtype: torch.dtype, who: str) -> torch.dtype:
    """The quantized dtype (quint8 / qint8 / qint32 / quint4x2) of a plain dtype or of itself,
    for the quantized tier; a clear error naming ``who`` when the running torch has none."""
    for qn, dt in _PLAIN_OF_QUANTIZED:
        if dtype == dt or (hasattr(torch, qn) and dtype == getattr(torch, qn)):
            if not hasattr(torch, qn):
                raise RuntimeError(
                    f"{who}: the running torch has no quantized dtype torch.{qn} (for {dtype}); "
                    "use the plain form (torch_qplugin.nn.plain, convert(..., plain=True))"
                )
            return getattr(torch, qn)
    return dtype


# QTensor (qtensor.py, which builds on the Quantizers) registers its class here, so that quantize()
# can wrap its result without this module importing qtensor.py.
_QTENSOR = []


def _wrap(data: torch.Tensor, quantizer: "Quantizer"):
    return _QTENSOR[0](data, quantizer)


class Quantizer:
    """Base class: maps float tensors to QTensors and back."""

    dtype: torch.dtype

    def quantize(self, x: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def dequantize(self, q: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def _data(self, q: torch.Tensor):
        return q.int_repr() if isinstance(q, _QTENSOR[0]) else q


class PerTensorAffine(Quantizer):
    """q = clamp(round_half_even(x / scale) + zero_point) in dtype's range: 8-bit as torch's
    FakeQuantize, x / scale as float32(x * (1 / float32(scale))); int32 in float64."""

    def __init__(self, scale: float, zero_point: int, dtype: torch.dtype = torch.uint8) -> None:
        self.scale = float(scale)
        self.zero_point = int(zero_point)
        self.dtype = plain_dtype(dtype)
        # The op's checks, once, on an empty tensor: same errors as the ops.
        _q.plain_quantize_per_tensor(torch.empty(0), self.scale, self.zero_point, self.dtype)

    qscheme = torch.per_tensor_affine

    def quantize(self, x: torch.Tensor) -> torch.Tensor:
        return _wrap(_q.plain_quantize_per_tensor(x, self.scale, self.zero_point, self.dtype), self)

    def dequantize(self, q: torch.Tensor) -> torch.Tensor:
        return _q.plain_dequantize_per_tensor(self._data(q), self.scale, self.zero_point)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, PerTensorAffine)
            and self.scale == other.scale
            and self.zero_point == other.zero_point
            and self.dtype == other.dtype
        )

    def __hash__(self) -> int:
        return hash((self.scale, self.zero_point, self.dtype))

    def __repr__(self) -> str:
        return f"PerTensorAffine(scale={self.scale}, zero_point={self.zero_point}, dtype={self.dtype})"

    def __fx_repr__(self) -> Tuple[str, Dict[str, Any]]:
        return (
            f"torch_qplugin.PerTensorAffine({self.scale!r}, {self.zero_point!r}, {self.dtype})",
            {"torch_qplugin": __import__("torch_qplugin"), "torch": torch},
        )


class PerChannelAffine(Quantizer):
    """q[..., c, ...] = clamp(round_half_even(x / scales[c]) + zero_points[c]) along `axis` (x / scale
    as PerTensorAffine computes it)."""

    def __init__(
        self,
        scales: Union[torch.Tensor, Sequence[float]],
        zero_points: Union[torch.Tensor, Sequence[int]],
        axis: int,
        dtype: torch.dtype = torch.int8,
    ) -> None:
        self.scales = torch.as_tensor(scales, dtype=torch.float64)
        self.zero_points = torch.as_tensor(zero_points, dtype=torch.int64)
        self.axis = int(axis)
        self.dtype = plain_dtype(dtype)
        _q.plain_quantize_per_channel(torch.empty(0, self.scales.numel()), self.scales, self.zero_points, 1, self.dtype)

    qscheme = torch.per_channel_affine

    def quantize(self, x: torch.Tensor) -> torch.Tensor:
        return _wrap(_q.plain_quantize_per_channel(x, self.scales, self.zero_points, self.axis, self.dtype), self)

    def dequantize(self, q: torch.Tensor) -> torch.Tensor:
        return _q.plain_dequantize_per_channel(self._data(q), self.scales, self.zero_points, self.axis)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, PerChannelAffine)
            and self.axis == other.axis
            and self.dtype == other.dtype
            and torch.equal(self.scales, other.scales)
            and torch.equal(self.zero_points, other.zero_points)
        )

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return (
            f"PerChannelAffine(scales={self.scales.tolist()}, zero_points={self.zero_points.tolist()}, "
            f"axis={self.axis}, dtype={self.dtype})"
        )


def quantize(x: torch.Tensor, quantizer: Quantizer) -> torch.Tensor:
    """torch_qplugin.quantize(x, quantizer) -> QTensor: the same as quantizer.quantize(x)."""
    return quantizer.quantize(x)


# torch.compile: a per-tensor quantizer is a constant (guarded by ==), so that dynamo can read a
# QTensor's .quantizer and its scale / zero point inside a graph (qtensor.py, docs/deploy.md).
register_constant_type(PerTensorAffine, ("scale", "zero_point", "dtype", "qscheme"))
