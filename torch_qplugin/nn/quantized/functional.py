"""Functional quantized ops (mirror torch.ao.nn.quantized.functional) on qplugin kernels."""

from typing import Optional, Sequence, Union

import torch
from torch import Tensor
from torch.nn.modules.utils import _pair, _single, _triple

from .modules.utils import _require_quantized, plain_dtype

__all__ = [
    "linear",
    "conv1d",
    "conv2d",
    "conv3d",
    "max_pool2d",
    "avg_pool2d",
    "adaptive_avg_pool2d",
    "interpolate",
    "upsample_nearest",
    "hardswish",
    "hardsigmoid",
    "elu",
    "leaky_relu",
    "relu6",
    "clamp",
    "max_pool1d",
    "hardtanh",
    "threshold",
    "celu",
    "upsample",
    "upsample_bilinear",
    "avg_pool3d",
    "adaptive_avg_pool3d",
]

_q = torch.ops.qplugin

# a size argument: one int for every dim, or one per dim (what _pair / _single / _triple take)
_IntOrSeq = Union[int, Sequence[int]]


def linear(
    input: Tensor,
    weight: Tensor,
    bias: Optional[Tensor] = None,
    scale: Optional[float] = None,
    zero_point: Optional[int] = None,
) -> Tensor:
    """Quantized linear; packs ``weight`` (qint8) on every call — use nn.quantized.Linear in models.
    Output qparams default to the input's."""
    _require_quantized(input, "torch_qplugin.nn.quantized.functional.linear")
    if scale is None:
        scale = input.q_scale()
    if zero_point is None:
        zero_point = input.q_zero_point()
    return _q.linear(input, _q.linear_prepack(weight, bias), scale, zero_point)


def _check_conv(input: Tensor, dims: int, padding_mode: str, dtype: torch.dtype, who: str):
    _require_quantized(input, who)
    if padding_mode != "zeros":
        raise NotImplementedError(f"{who}: only zero padding is supported, got '{padding_mode}'")
    if plain_dtype(dtype) != torch.uint8:
        raise NotImplementedError(f"{who}: only torch.uint8 (quint8) output is supported, got {dtype}")
    if input.dim() != dims:
        raise ValueError(f"{who}: input should be {dims}-d, got {input.dim()}-d")


def conv1d(
    input: Tensor,
    weight: Tensor,
    bias: Optional[Tensor],
    stride: _IntOrSeq = 1,
    padding: _IntOrSeq = 0,
    dilation: _IntOrSeq = 1,
    groups: int = 1,
    padding_mode: str = "zeros",
    scale: float = 1.0,
    zero_point: int = 0,
    dtype: torch.dtype = torch.uint8,
) -> Tensor:
    _check_conv(input, 3, padding_mode, dtype, "torch_qplugin.nn.quantized.functional.conv1d")
    packed = _q.conv1d_prepack(
        weight, bias, list(_single(stride)), list(_single(padding)), list(_single(dilation)), groups
    )
    return _q.conv1d(input, packed, scale, zero_point)


def conv2d(
    input: Tensor,
    weight: Tensor,
    bias: Optional[Tensor],
    stride: _IntOrSeq = 1,
    padding: _IntOrSeq = 0,
    dilation: _IntOrSeq = 1,
    groups: int = 1,
    padding_mode: str = "zeros",
    scale: float = 1.0,
    zero_point: int = 0,
    dtype: torch.dtype = torch.uint8,
) -> Tensor:
    _check_conv(input, 4, padding_mode, dtype, "torch_qplugin.nn.quantized.functional.conv2d")
    packed = _q.conv2d_prepack(weight, bias, list(_pair(stride)), list(_pair(padding)), list(_pair(dilation)), groups)
    return _q.conv2d(input, packed, scale, zero_point)


def conv3d(
    input: Tensor,
    weight: Tensor,
    bias: Optional[Tensor],
    stride: _IntOrSeq = 1,
    padding: _IntOrSeq = 0,
    dilation: _IntOrSeq = 1,
    groups: int = 1,
    padding_mode: str = "zeros",
    scale: float = 1.0,
    zero_point: int = 0,
    dtype: torch.dtype = torch.uint8,
) -> Tensor:
    _check_conv(input, 5, padding_mode, dtype, "torch_qplugin.nn.quantized.functional.conv3d")
    packed = _q.conv3d_prepack(
        weight, bias, list(_triple(stride)), list(_triple(padding)), list(_triple(dilation)), groups
    )
    return _q.conv3d(input, packed, scale, zero_point)


def max_pool2d(
    input: Tensor,
    kernel_size: _IntOrSeq,
    stride: Optional[_IntOrSeq] = None,
    padding: _IntOrSeq = 0,
    dilation: _IntOrSeq = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Tensor:
    if return_indices:
        raise NotImplementedError("torch_qplugin max_pool2d: return_indices=True is not supported")
    if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0):
        stride = kernel_size
    return _q.max_pool2d(
        input, list(_pair(kernel_size)), list(_pair(stride)), list(_pair(padding)), list(_pair(dilation)), ceil_mode
    )


def max_pool1d(
    input: Tensor,
    kernel_size: _IntOrSeq,
    stride: Optional[_IntOrSeq] = None,
    padding: _IntOrSeq = 0,
    dilation: _IntOrSeq = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Tensor:
    """Max pooling over the last dim of a 2-d / 3-d quantized tensor: qplugin::max_pool2d on a
    [.., 1, L] view (bit-exact, keeps qparams)."""
    if return_indices:
        raise NotImplementedError("torch_qplugin max_pool1d: return_indices=True is not supported")
    if input.dim() not in (2, 3):
        raise ValueError(f"torch_qplugin max_pool1d: input should be 2-d or 3-d, got {input.dim()}-d")
    if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0):
        stride = kernel_size
    out = _q.max_pool2d(
        input.unsqueeze(-2),
        [1, _single(kernel_size)[0]],
        [1, _single(stride)[0]],
        [0, _single(padding)[0]],
        [1, _single(dilation)[0]],
        ceil_mode,
    )
    return out.squeeze(-2)


def avg_pool2d(
    input: Tensor,
    kernel_size: _IntOrSeq,
    stride: Optional[_IntOrSeq] = None,
    padding: _IntOrSeq = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: Optional[int] = None,
) -> Tensor:
    if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0):
        stride = kernel_size
    return _q.avg_pool2d(
        input,
        list(_pair(kernel_size)),
        list(_pair(stride)),
        list(_pair(padding)),
        ceil_mode,
        count_include_pad,
        divisor_override,
    )


def adaptive_avg_pool2d(input: Tensor, output_size: Union[int, None, Sequence[Optional[int]]]) -> Tensor:
    size = _pair(output_size)
    out = [input.size(-2 + i) if s is None else int(s) for i, s in enumerate(size)]
    return _q.adaptive_avg_pool2d(input, out)


def avg_pool3d(
    input: Tensor,
    kernel_size: _IntOrSeq,
    stride: Optional[_IntOrSeq] = None,
    padding: _IntOrSeq = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: Optional[int] = None,
) -> Tensor:
    """3-d average pooling of a 4-d / 5-d quantized tensor (qplugin::avg_pool3d; keeps qparams,
    within a step of the float64 average; channels_last_3d stays channels_last_3d)."""
    if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0):
        stride = kernel_size
    return _q.avg_pool3d(
        input,
        list(_triple(kernel_size)),
        list(_triple(stride)),
        list(_triple(padding)),
        ceil_mode,
        count_include_pad,
        divisor_override,
    )


def adaptive_avg_pool3d(input: Tensor, output_size: Union[int, None, Sequence[Optional[int]]]) -> Tensor:
    """Adaptive 3-d average pooling (qplugin::adaptive_avg_pool3d); ``None`` keeps that input dim."""
    size = _triple(output_size)
    out = [input.size(-3 + i) if s is None else int(s) for i, s in enumerate(size)]
    return _q.adaptive_avg_pool3d(input, out)


def interpolate(
    input: Tensor,
    size: Optional[_IntOrSeq] = None,
    scale_factor: Optional[Union[float, Sequence[float]]] = None,
    mode: str = "nearest",
    align_corners: Optional[bool] = None,
) -> Tensor:
    """Resize of a 4-d quantized tensor keeping its qparams: 'nearest' (bit-exact) or 'bilinear'
    (qplugin::upsample_bilinear2d, torch's source-index rule, within a step of the float64 result)."""
    if mode not in ("nearest", "bilinear"):
        raise NotImplementedError(f"torch_qplugin interpolate: mode should be 'nearest' or 'bilinear', got '{mode}'")
    if input.dim() != 4:
        raise NotImplementedError(f"torch_qplugin interpolate: input should be 4-d, got {input.dim()}-d")
    if (size is None) == (scale_factor is None):
        raise ValueError("torch_qplugin interpolate: give exactly one of size and scale_factor")
    if mode == "nearest" and align_corners is not None:
        raise ValueError("torch_qplugin interpolate: align_corners is only for mode='bilinear'")
    scales = [None, None]
    if size is None:
        sf = _pair(scale_factor)
        size = [int(input.size(2 + i) * float(sf[i])) for i in range(2)]  # floor, as torch
        scales = [float(sf[0]), float(sf[1])]
    if mode == "nearest":
        return _q.upsample_nearest2d(input, list(_pair(size)))
    return _q.upsample_bilinear2d(input, list(_pair(size)), bool(align_corners), scales[0], scales[1])


def upsample(
    input: Tensor,
    size: Optional[_IntOrSeq] = None,
    scale_factor: Optional[Union[float, Sequence[float]]] = None,
    mode: str = "nearest",
    align_corners: Optional[bool] = None,
) -> Tensor:
    """torch.ao.nn.quantized.functional.upsample: interpolate under its old name."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(
    input: Tensor, size: Optional[_IntOrSeq] = None, scale_factor: Optional[Union[float, Sequence[float]]] = None
) -> Tensor:
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(
    input: Tensor, size: Optional[_IntOrSeq] = None, scale_factor: Optional[Union[float, Sequence[float]]] = None
) -> Tensor:
    """Bilinear upsampling with align_corners=True (torch.ao's upsample_bilinear)."""
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# int8 data: a QTensor's dtype, or the qint8 of a quantized-dtype tensor while torch has it.
_SIGNED_8BIT = (torch.int8, getattr(torch, "qint8", torch.int8))


def hardswish(input: Tensor, scale: float, zero_point: int) -> Tensor:
    return _q.hardswish(input, scale, zero_point)


def hardsigmoid(
    input: Tensor, inplace: bool = False, scale: Optional[float] = None, zero_point: Optional[int] = None
) -> Tensor:
    """Output qparams default to 1/256 with zero point 0 (quint8) or -128 (qint8), as torch's."""
    if scale is None:
        scale = 1.0 / 256.0
    if zero_point is None:
        zero_point = -128 if input.dtype in _SIGNED_8BIT else 0
    return _q.hardsigmoid(input, scale, zero_point)


def elu(input: Tensor, scale: float, zero_point: int, alpha: float = 1.0) -> Tensor:
    return _q.elu(input, scale, zero_point, alpha)


def leaky_relu(
    input: Tensor,
    negative_slope: float = 0.01,
    inplace: bool = False,
    scale: Optional[float] = None,
    zero_point: Optional[int] = None,
) -> Tensor:
    """Output qparams default to the input's."""
    if scale is None:
        scale = input.q_scale()
    if zero_point is None:
        zero_point = input.q_zero_point()
    return _q.leaky_relu(input, negative_slope, inplace, scale, zero_point)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    return _q.relu6(input, inplace)


def clamp(input: Tensor, min_: float, max_: float) -> Tensor:
    return _q.clamp(input, min_, max_)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    """clamp(x, min_val, max_val) on the integers (keeps the input's qparams, bit-exact)."""
    if min_val > max_val:
        raise ValueError(f"torch_qplugin hardtanh: min_val should be <= max_val, got {min_val} > {max_val}")
    out = _q.clamp(input, min_val, max_val)
    if inplace:
        input.copy_(out)
        return input
    return out


def threshold(input: Tensor, threshold: float, value: float) -> Tensor:
    """x where x > threshold, else value (keeps the input's qparams)."""
    if threshold is None or value is None:
        raise ValueError("torch_qplugin threshold: threshold and value should be numbers, got None")
    return _q.threshold(input, threshold, value)


def celu(input: Tensor, scale: float, zero_point: int, alpha: float = 1.0) -> Tensor:
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)) requantized to (scale, zero_point)."""
    return _q.celu(input, scale, zero_point, alpha)
