"""ONNX export of plain models (``torch_qplugin.deploy.export_onnx``; docs/deploy.md "ONNX").

The route, all on torch's own machinery:

1. ``torch.export`` of the plain model (the batch dim dynamic): a graph of ``qplugin::plain_*`` ops.
2. Each plain op is decomposed (``QDQ_DECOMPOSITIONS`` or ``DECOMPOSITIONS``, through
   ``ExportedProgram.run_decompositions``) into ops that have an ONNX form.
3. ``torch.onnx.export(dynamo=True)`` translates the aten ops with torch's own ONNX functions and
   the rest with ``_translations``: quantize / dequantize (QuantizeLinear / DequantizeLinear), the
   integer ops below (ConvInteger, MatMulInteger, Gather), dynamic linear (DynamicQuantizeLinear +
   MatMulInteger).

Two forms, ai.onnx ops only in both:

* QDQ (default): each op is the float op it quantizes between ``plain_dequantize_*`` of its inputs
  and ``plain_quantize_per_tensor`` of its output with the op's own qparams (max pooling, nearest
  upsampling and relu stay on the integers): the pattern ONNX Runtime's graph optimizer fuses into
  its int8 kernels (QLinearConv, QGemm, QLinearAdd, QLinearConcat, ...; a conv's bias quantized to
  int32 with scale x_scale * w_scale, the form its fusion needs). ONNX Runtime requantizes in its
  own order: each op within one output quantization step of eager, a deep model a few steps.
* Exact (``exact=True``): each op with an exact form computes our kernels' definition, every float
  step one float32 ONNX op in our order. Conv: ConvInteger (exact int32; weights as uint8 w + 128
  with zero point + 128, which ONNX Runtime runs on a faster GEMM than int8 weights, and exactly on
  CPUs without VNNI, where its u8 x s8 kernels saturate int16 pair sums), then Cast,
  Mul by the float32 multiplier, Add the float32 bias (conv2d_add: + (float(add) - add_zp) *
  add_mult), relu as Relu, and QuantizeLinear with scale 1 and the output zero point (rounds half
  to even, saturates). Linear: MatMulInteger (uint8 weights as conv's), the same epilogue with linear's constants. Add / mul:
  kernels/add_kernel.h's float steps. Element-wise activations and cat: a 256-entry table of our
  own kernel's results on every code (Gather). Adaptive average pooling with windows of one size:
  the exact window sum (ReduceSum) times our float32 reciprocal. Max pooling: on float copies of
  the codes. Quantize: a Mul by our float32 inverse scale, then QuantizeLinear with scale 1 (ONNX's
  divides by its scale). Ops with no exact form here keep their QDQ decomposition with that
  quantize step (conv_transpose, the norms, softmax, prelu, avg_pool, bilinear upsampling, mean,
  matmul, add_scalar / mul_scalar, 3-d adaptive pooling), as do convs in a model whose weight zero
  points differ between channels (ConvInteger takes one weight zero point).

Embeddings are exported as float tables (their fused rows dequantized once: code * scale + bias),
looked up by ONNX's Gather / embedding-bag translation. Dynamic LSTM / GRU / RNN cells have no
fitting ONNX op with our quantization (ONNX Runtime's DynamicQuantizeLSTM quantizes its weights its
own way and there is no GRU counterpart): export raises naming the module.
"""

import contextlib
import contextvars
import struct
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor

from ._export import batch_oblivious, export

__all__ = ["export_onnx", "decomposed_program", "DECOMPOSITIONS", "QDQ_DECOMPOSITIONS"]

_q = torch.ops.qplugin
_aten = torch.ops.aten


# ---- the integer ONNX ops, as torch ops (each computes its ONNX op's definition) ------------------
@torch.library.custom_op("qplugin_onnx::conv_integer", mutates_args=())
def conv_integer(
    x: Tensor,
    x_zero_point: int,
    w: Tensor,
    w_zero_point: Tensor,
    stride: List[int],
    padding: List[int],
    dilation: List[int],
    groups: int,
) -> Tensor:
    """ONNX ConvInteger: sum of (x - x_zero_point) * (w - w_zero_point) over each window, int32
    (the padding is x_zero_point: a real zero). float64 holds every product and sum exactly."""
    xd = x.double() - x_zero_point
    wd = w.double() - w_zero_point.double()
    y = _aten.convolution(xd, wd, None, stride, padding, dilation, False, [0] * len(stride), groups)
    return y.to(torch.int32)


@conv_integer.register_fake
def _(x, x_zero_point, w, w_zero_point, stride, padding, dilation, groups):
    size = [
        (n + 2 * p - d * (k - 1) - 1) // s + 1
        for n, k, s, p, d in zip(x.shape[2:], w.shape[2:], stride, padding, dilation)
    ]
    return x.new_empty([x.shape[0], w.shape[0], *size], dtype=torch.int32)


@torch.library.custom_op("qplugin_onnx::matmul_integer", mutates_args=())
def matmul_integer(x: Tensor, x_zero_point: int, wt: Tensor, w_zero_points: Tensor) -> Tensor:
    """ONNX MatMulInteger: (x - x_zero_point) @ (wt - w_zero_points), wt (K, N) with a zero point
    per column, int32 (float64 holds it exactly)."""
    return ((x.double() - x_zero_point) @ (wt.double() - w_zero_points.double())).to(torch.int32)


@matmul_integer.register_fake
def _(x, x_zero_point, wt, w_zero_points):
    return x.new_empty([*x.shape[:-1], wt.shape[1]], dtype=torch.int32)


@torch.library.custom_op("qplugin_onnx::lookup", mutates_args=())
def lookup(x: Tensor, table: List[int], signed: bool) -> Tensor:
    """ONNX Gather(table, x): a 256-entry table of int8 (``signed``) or uint8 codes indexed by an
    8-bit code (int8 codes below 0 read its upper half, as Gather's negative indices do). The
    table is an argument, not a tensor: a tensor made inside a decomposition is a constant that
    torch 2.13's run_decompositions does not register."""
    return torch.tensor(table, dtype=torch.int8 if signed else torch.uint8)[x.long()]


@lookup.register_fake
def _(x, table, signed):
    return x.new_empty(x.shape, dtype=torch.int8 if signed else torch.uint8)


def _gather(x: Tensor, table: Tensor) -> Tensor:
    """lookup of x in a 256-entry 8-bit table made by _table."""
    return lookup(x, table.tolist(), table.dtype == torch.int8)


# ---- the boundaries --------------------------------------------------------------------------
def _dq(x: Tensor, scale: float, zero_point: int) -> Tensor:
    return _q.plain_dequantize_per_tensor(x, scale, zero_point)


def _qz(y: Tensor, scale: float, zero_point: int, like: Tensor) -> Tensor:
    return _q.plain_quantize_per_tensor(y, scale, zero_point, like.dtype)


def _dq_weight(w: Tensor, scales: Tensor, zero_points: Tensor) -> Tensor:
    """A conv / linear weight (int8, output channels first), per channel along dim 0 (a per-tensor
    scale repeated: one DequantizeLinear form for both)."""
    n = w.shape[0]
    return _q.plain_dequantize_per_channel(w, scales.expand(n), zero_points.expand(n), 0)


def _dq_bias(bias: Optional[Tensor], x_scale: float, w_scales: Tensor, n: int) -> Optional[Tensor]:
    """The float bias as int32 in units of x_scale * w_scale, dequantized: the bias form ONNX
    Runtime's QDQ fusion turns into QLinearConv's int32 bias (constants: folded at export)."""
    if bias is None:
        return None
    s = w_scales.double().expand(n) * x_scale
    b32 = torch.round(bias.double() / s).clamp(-(2**31), 2**31 - 1).to(torch.int32)
    return _q.plain_dequantize_per_channel(b32, s, torch.zeros(n, dtype=torch.long), 0)


# ---- decompositions: plain op -> float op between its qparams ------------------------------------
def _conv(
    x,
    x_scale,
    x_zero_point,
    w,
    w_scales,
    w_zero_points,
    bias,
    packed,
    stride,
    padding,
    dilation,
    groups,
    output_scale,
    output_zero_point,
    relu=False,
    accum=None,
):
    n = w.shape[0]
    y = _aten.convolution(
        _dq(x, x_scale, x_zero_point),
        _dq_weight(w, w_scales, w_zero_points),
        _dq_bias(bias, x_scale, w_scales, n),
        stride,
        padding,
        dilation,
        False,
        [0] * len(stride),
        groups,
    )
    if accum is not None:
        y = y + _dq(*accum)
    if relu:
        y = _aten.relu(y)
    return _qz(y, output_scale, output_zero_point, x)


def _conv_add(
    x,
    x_scale,
    x_zero_point,
    accum,
    accum_scale,
    accum_zero_point,
    w,
    w_scales,
    w_zero_points,
    bias,
    packed,
    stride,
    padding,
    dilation,
    groups,
    output_scale,
    output_zero_point,
    relu=False,
):
    return _conv(
        x,
        x_scale,
        x_zero_point,
        w,
        w_scales,
        w_zero_points,
        bias,
        packed,
        stride,
        padding,
        dilation,
        groups,
        output_scale,
        output_zero_point,
        relu,
        (accum, accum_scale, accum_zero_point),
    )


def _conv_transpose(
    x,
    x_scale,
    x_zero_point,
    w,
    w_scales,
    w_zero_points,
    bias,
    packed,
    stride,
    padding,
    output_padding,
    dilation,
    groups,
    output_scale,
    output_zero_point,
):
    # w: (in_channels, out_channels / groups, k...), qparams per output channel (group-major)
    ic, ocg, k = w.shape[0], w.shape[1], list(w.shape[2:])
    oc = ocg * groups
    ones = [1] * len(k)
    s = w_scales.float().expand(oc).reshape(groups, 1, ocg, *ones)
    z = w_zero_points.float().expand(oc).reshape(groups, 1, ocg, *ones)
    wf = ((w.float().reshape(groups, ic // groups, ocg, *k) - z) * s).reshape(w.shape)
    y = _aten.convolution(
        _dq(x, x_scale, x_zero_point), wf, bias, stride, padding, dilation, True, output_padding, groups
    )
    return _qz(y, output_scale, output_zero_point, x)


def _linear(
    x, x_scale, x_zero_point, w, w_scales, w_zero_points, bias, packed, output_scale, output_zero_point, relu=False
):
    y = _aten.linear(_dq(x, x_scale, x_zero_point), _dq_weight(w, w_scales, w_zero_points), bias)
    if relu:
        y = _aten.relu(y)
    return _qz(y, output_scale, output_zero_point, x)


def _linear_fp16(x, w, bias, packed, relu=False):
    y = _aten.linear(x, w.float(), bias)
    return _aten.relu(y) if relu else y


def _binary(f, relu=False):
    def run(a, a_scale, a_zero_point, b, b_scale, b_zero_point, scale, zero_point):
        y = f(_dq(a, a_scale, a_zero_point), _dq(b, b_scale, b_zero_point))
        return _qz(_aten.relu(y) if relu else y, scale, zero_point, a)

    return run


def _scalar(f, qparams, relu=False):
    def run(a, a_scale, a_zero_point, b):
        scale, zero_point = qparams(a_scale, a_zero_point, a.dtype, b)
        y = f(_dq(a, a_scale, a_zero_point), b)
        return _qz(_aten.relu(y) if relu else y, scale, zero_point, a)

    return run


def _cat(relu=False):
    def run(xs, scales, zero_points, dim, scale, zero_point):
        y = _aten.cat([_dq(x, s, z) for x, s, z in zip(xs, scales, zero_points)], dim)
        return _qz(_aten.relu(y) if relu else y, scale, zero_point, xs[0])

    return run


def _unary(f):
    """An op whose output keeps the input's qparams: x, x_scale, x_zero_point, then f's arguments."""

    def run(x, x_scale, x_zero_point, *args):
        return _qz(f(_dq(x, x_scale, x_zero_point), *args), x_scale, x_zero_point, x)

    return run


def _requant(f):
    """An op with output qparams last: x, x_scale, x_zero_point, f's arguments, output_scale,
    output_zero_point."""

    def run(x, x_scale, x_zero_point, *args):
        *args, scale, zero_point = args
        return _qz(f(_dq(x, x_scale, x_zero_point), *args), scale, zero_point, x)

    return run


def _requant_then(f):
    """Output qparams right after the input's, f's arguments after them (elu, celu)."""

    def run(x, x_scale, x_zero_point, scale, zero_point, *args):
        return _qz(f(_dq(x, x_scale, x_zero_point), *args), scale, zero_point, x)

    return run


def _same_scale(f):
    """Pooling / resizing / reducing that takes no scale: the codes averaged in the integer domain
    (scale 1, zero point 0; the zero point cancels in an average)."""

    def run(x, *args):
        return _qz(f(_dq(x, 1.0, 0), *args), 1.0, 0, x)

    return run


def _avg_pool(f):
    def run(x, x_zero_point, *args):  # the padding is the real zero: the zero point
        return _qz(f(_dq(x, 1.0, x_zero_point), *args), 1.0, x_zero_point, x)

    return run


def _batch_norm(relu=False):
    def run(x, x_scale, x_zero_point, weight, bias, mean, var, eps, output_scale, output_zero_point):
        y = F.batch_norm(_dq(x, x_scale, x_zero_point), mean, var, weight, bias, False, 0.0, eps)
        return _qz(_aten.relu(y) if relu else y, output_scale, output_zero_point, x)

    return run


def _elu(x, alpha=1.0, scale=1.0, input_scale=1.0):
    return _aten.elu(x, alpha, scale, input_scale)


# ---- exact decompositions: our kernels' steps, each float step one IEEE float32 op ----------------
def _f32(v: float) -> float:
    """v rounded to float32 (as a C++ static_cast<float> of a double)."""
    return struct.unpack("f", struct.pack("f", v))[0]


# False while a model holds a conv whose weight zero points differ between channels (ConvInteger
# takes one weight zero point): its convs then take the float form (_conv).
_UNIFORM_CONV_ZERO_POINTS = contextvars.ContextVar("qplugin_onnx_uniform_conv_zero_points", default=True)


def _conv_exact(
    x,
    x_scale,
    x_zero_point,
    w,
    w_scales,
    w_zero_points,
    bias,
    packed,
    stride,
    padding,
    dilation,
    groups,
    output_scale,
    output_zero_point,
    relu=False,
    accum=None,
):
    """The GEMM epilogue (kernels/gemm/qgemm.h, multiplier and bias as cpu/conv.cpp rounds them):
    v = float(C) * multiplier[n] + bias[n] (+ float(add - add_zp) * add_mult), relu as max(v, 0),
    then round half to even + output zero point, saturated (QuantizeLinear with scale 1)."""
    if x.dtype != torch.uint8:  # ConvInteger here: uint8 activations (ours: quint8)
        return _conv(
            x,
            x_scale,
            x_zero_point,
            w,
            w_scales,
            w_zero_points,
            bias,
            packed,
            stride,
            padding,
            dilation,
            groups,
            output_scale,
            output_zero_point,
            relu,
            accum,
        )
    n = w.shape[0]
    shape = [1, n] + [1] * (w.dim() - 2)
    if not _UNIFORM_CONV_ZERO_POINTS.get():
        return _conv(
            x,
            x_scale,
            x_zero_point,
            w,
            w_scales,
            w_zero_points,
            bias,
            packed,
            stride,
            padding,
            dilation,
            groups,
            output_scale,
            output_zero_point,
            relu,
            accum,
        )
    # uint8 weights (w + 128, zero point + 128: the same differences): ONNX Runtime's ConvInteger
    # runs u8 x u8 on its fast GEMM, u8 x s8 several times slower (measured in docs/deploy.md)
    w_u8 = (w.to(torch.int16) + 128).to(torch.uint8)
    c = conv_integer(x, x_zero_point, w_u8, w_zero_points.reshape(-1)[0] + 128, stride, padding, dilation, groups)
    return _epilogue(c, x, x_scale, w_scales, bias, output_scale, output_zero_point, shape, relu, accum)


def _epilogue(c, x, x_scale, w_scales, bias, output_scale, output_zero_point, shape, relu, accum):
    n = shape[1]
    v = c.float() * (w_scales.double().expand(n) * x_scale / output_scale).float().reshape(shape)
    if bias is not None:
        v = v + (bias.double() / output_scale).float().reshape(shape)
    if accum is not None:
        a, a_scale, a_zero_point = accum
        v = v + (a.float() - a_zero_point) * _f32(a_scale / output_scale)
    if relu:
        v = torch.relu(v)
    return _qz(v, 1.0, output_zero_point, x)


def _conv_add_exact(
    x,
    x_scale,
    x_zero_point,
    accum,
    accum_scale,
    accum_zero_point,
    w,
    w_scales,
    w_zero_points,
    bias,
    packed,
    stride,
    padding,
    dilation,
    groups,
    output_scale,
    output_zero_point,
    relu=False,
):
    return _conv_exact(
        x,
        x_scale,
        x_zero_point,
        w,
        w_scales,
        w_zero_points,
        bias,
        packed,
        stride,
        padding,
        dilation,
        groups,
        output_scale,
        output_zero_point,
        relu,
        (accum, accum_scale, accum_zero_point),
    )


def _linear_exact(
    x, x_scale, x_zero_point, w, w_scales, w_zero_points, bias, packed, output_scale, output_zero_point, relu=False
):
    """linear's epilogue: the conv one with LinearPackedParams::epilogue_constants' rounding
    (multiplier = float((x_scale / y_scale) * w_scale), bias = float(bias * (1 / y_scale)))."""
    if x.dtype != torch.uint8:
        return _linear(
            x, x_scale, x_zero_point, w, w_scales, w_zero_points, bias, packed, output_scale, output_zero_point, relu
        )
    n = w.shape[0]
    # uint8 weights (w + 128, zero points + 128: the same differences), as conv's: ONNX Runtime's
    # u8 x s8 kernels for CPUs without VNNI add product pairs in int16 with saturation, its u8 x u8
    # ones are exact everywhere
    w_u8 = (w.to(torch.int16) + 128).to(torch.uint8)
    c = matmul_integer(x, x_zero_point, w_u8.t(), (w_zero_points.expand(n).to(torch.int16) + 128).to(torch.uint8))
    v = c.float() * (w_scales.double().expand(n) * (x_scale / output_scale)).float()
    if bias is not None:
        v = v + (bias.double() * (1.0 / output_scale)).float()
    if relu:
        v = torch.relu(v)
    return _qz(v, 1.0, output_zero_point, x)


def _binary_exact(mul, relu=False):
    """kernels/add_kernel.h: add v = float(a - za) * (sa / so) + float(b - zb) * (sb / so) + zo,
    mul v = float((a - za) * (b - zb)) * (sa * sb / so) + zo (the factors rounded to float32
    once), relu as max(v, zo), then round half to even, saturated."""
    fallback = _binary(torch.mul if mul else torch.add, relu)

    def run(a, a_scale, a_zero_point, b, b_scale, b_zero_point, scale, zero_point):
        if a.dtype not in (torch.uint8, torch.int8):
            return fallback(a, a_scale, a_zero_point, b, b_scale, b_zero_point, scale, zero_point)
        da, db = a.float() - a_zero_point, b.float() - b_zero_point
        if mul:
            v = da * db * _f32(a_scale * b_scale / scale) + float(zero_point)
        else:
            v = da * _f32(a_scale / scale) + db * _f32(b_scale / scale) + float(zero_point)
        if relu:
            v = torch.clamp(v, min=float(zero_point))
        return _qz(v, 1.0, 0, a)

    return run


@contextlib.contextmanager
def _real_tensors():
    """Computes on real tensors inside a decomposition (which runs under export's fake / proxy
    modes): the tables below are constants."""
    from torch.utils._python_dispatch import _disable_current_modes

    with _disable_current_modes(), torch.no_grad():
        yield


def _table(f: Callable[[Tensor], Tensor], dtype: torch.dtype) -> Tensor:
    """f on every 8-bit code, as a 256-entry constant in Gather's order (code & 255)."""
    with _real_tensors():
        codes = torch.arange(256, dtype=torch.int32).to(torch.uint8)
        return f(codes.view(torch.int8) if dtype == torch.int8 else codes).contiguous()


def _lookup(overload, fallback):
    """An element-wise op on 8-bit codes whose other arguments are numbers: its own kernel run on
    all 256 codes at export, looked up (Gather): exact by construction."""

    def run(x, *args):
        if x.dtype not in (torch.uint8, torch.int8) or any(isinstance(a, Tensor) for a in args):
            return fallback(x, *args)
        return _gather(x, _table(lambda c: overload(c, *args), x.dtype))

    return run


def _cat_exact(relu=False):
    """cat: each input's codes mapped to the output's (its dequantize-then-quantize, relu's
    bound) by a table of plain_cat on that input alone; inputs already in the output's qparams
    pass as they are (without relu)."""
    overload = _q.plain_cat_relu.default if relu else _q.plain_cat.default
    fallback = _cat(relu)

    def run(xs, scales, zero_points, dim, scale, zero_point):
        if any(x.dtype not in (torch.uint8, torch.int8) for x in xs):
            return fallback(xs, scales, zero_points, dim, scale, zero_point)
        parts = []
        for x, s, z in zip(xs, scales, zero_points):
            if s == scale and z == zero_point and not relu:
                parts.append(x)
            else:
                parts.append(
                    _gather(x, _table(lambda c, s=s, z=z: overload([c], [s], [z], 0, scale, zero_point), x.dtype))
                )
        return torch.cat(parts, dim)

    return run


def _adaptive_avg_pool2d_exact(x, output_size):
    """cpu/pool.cpp: q = round_half_even(float(s) * r), s the integer sum of a window's codes,
    r = float(float(1 / kH) / kW); windows of one size (the input a multiple of the output):
    the sum exact in float32 (ReduceSum) while 255 * kH * kW < 2^24."""
    h, w = x.shape[-2], x.shape[-1]
    oh, ow = (h if o is None else o for o in output_size) if len(output_size) == 2 else (output_size[0],) * 2
    if x.dtype not in (torch.uint8, torch.int8) or not oh or not ow or h % oh or w % ow or 255 * h * w >= 2**24:
        return _same_scale(F.adaptive_avg_pool2d)(x, output_size)
    kh, kw = h // oh, w // ow
    r = _f32(_f32(1.0 / kh) / kw)
    xf = x.float()
    if oh == 1 and ow == 1:
        s = xf.sum((-2, -1), keepdim=True)
    else:
        s = xf.reshape(*x.shape[:-2], oh, kh, ow, kw).sum((-3, -1))
    return _qz(s * r, 1.0, 0, x)


def _build_qdq() -> Dict[Any, Callable]:
    """The QDQ form: each op's float op between its dequantizes and its quantize."""
    d = {}
    for nd in (1, 2, 3):
        d[getattr(_q, f"plain_conv{nd}d").default] = _conv
        d[getattr(_q, f"plain_conv{nd}d_relu").default] = lambda *a: _conv(*a, relu=True)
        d[getattr(_q, f"plain_conv_transpose{nd}d").default] = _conv_transpose
    d[_q.plain_conv2d_add.default] = _conv_add
    d[_q.plain_conv2d_add_relu.default] = lambda *a: _conv_add(*a, relu=True)
    d[_q.plain_linear.default] = _linear
    d[_q.plain_linear_relu.default] = lambda *a: _linear(*a, relu=True)
    d[_q.plain_linear_dynamic_fp16.default] = _linear_fp16
    d[_q.plain_linear_relu_dynamic_fp16.default] = lambda *a: _linear_fp16(*a, relu=True)
    d[_q.plain_add.default] = _binary(torch.add)
    d[_q.plain_add_relu.default] = _binary(torch.add, relu=True)
    d[_q.plain_mul.default] = _binary(torch.mul)
    d[_q.plain_mul_relu.default] = _binary(torch.mul, relu=True)
    d[_q.plain_matmul.default] = _binary(torch.matmul)
    d[_q.plain_add_scalar.default] = _scalar(torch.add, _q.plain_add_scalar_qparams)
    d[_q.plain_add_scalar_relu.default] = _scalar(torch.add, _q.plain_add_scalar_qparams, relu=True)
    d[_q.plain_mul_scalar.default] = _scalar(torch.mul, _q.plain_mul_scalar_qparams)
    d[_q.plain_cat.default] = _cat()
    d[_q.plain_cat_relu.default] = _cat(relu=True)
    # integers in, the same integers' order out: exact on the codes
    d[_q.plain_relu.default] = lambda x, s, z: torch.clamp(x, min=z)
    d[_q.plain_max_pool2d.default] = _aten.max_pool2d
    d[_q.plain_upsample_nearest2d.default] = lambda x, size: _aten.upsample_nearest2d(x, size)
    d[_q.plain_relu6.default] = _unary(lambda x: torch.clamp(x, 0.0, 6.0))
    d[_q.plain_clamp.default] = _unary(torch.clamp)
    d[_q.plain_threshold.default] = _unary(F.threshold)
    d[_q.plain_hardswish.default] = _requant(F.hardswish)
    d[_q.plain_hardsigmoid.default] = _requant(F.hardsigmoid)
    d[_q.plain_sigmoid.default] = _requant(torch.sigmoid)
    d[_q.plain_leaky_relu.default] = _requant(F.leaky_relu)
    d[_q.plain_softmax.default] = _requant(lambda x, dim: torch.softmax(x, dim))
    d[_q.plain_layer_norm.default] = _requant(F.layer_norm)
    d[_q.plain_group_norm.default] = _requant(lambda x, g, w, b, eps: F.group_norm(x, g, w, b, eps))
    d[_q.plain_instance_norm.default] = _requant(lambda x, w, b, eps: F.instance_norm(x, weight=w, bias=b, eps=eps))
    d[_q.plain_prelu.default] = _requant(F.prelu)
    d[_q.plain_elu.default] = _requant_then(_elu)
    d[_q.plain_celu.default] = _requant_then(lambda x, alpha=1.0: F.celu(x, alpha))
    d[_q.plain_batch_norm2d.default] = _batch_norm()
    d[_q.plain_batch_norm2d_relu.default] = _batch_norm(relu=True)
    d[_q.plain_batch_norm3d.default] = _batch_norm()
    d[_q.plain_batch_norm3d_relu.default] = _batch_norm(relu=True)
    d[_q.plain_avg_pool2d.default] = _avg_pool(F.avg_pool2d)
    d[_q.plain_avg_pool3d.default] = _avg_pool(F.avg_pool3d)
    d[_q.plain_adaptive_avg_pool2d.default] = _same_scale(F.adaptive_avg_pool2d)
    d[_q.plain_adaptive_avg_pool3d.default] = _same_scale(F.adaptive_avg_pool3d)
    d[_q.plain_upsample_bilinear2d.default] = _same_scale(
        lambda x, size, align_corners, sh=None, sw=None: F.interpolate(
            x, size=size, mode="bilinear", align_corners=align_corners
        )
    )
    d[_q.plain_mean.default] = _same_scale(lambda x, dim=None, keepdim=False: torch.mean(x, dim, keepdim))
    return d


def _build_exact() -> Dict[Any, Callable]:
    """The exact form: the QDQ one with every op that has an exact ONNX form replaced by it."""
    d = _build_qdq()
    for nd in (1, 2, 3):
        d[getattr(_q, f"plain_conv{nd}d").default] = _conv_exact
        d[getattr(_q, f"plain_conv{nd}d_relu").default] = lambda *a: _conv_exact(*a, relu=True)
    d[_q.plain_conv2d_add.default] = _conv_add_exact
    d[_q.plain_conv2d_add_relu.default] = lambda *a: _conv_add_exact(*a, relu=True)
    d[_q.plain_linear.default] = _linear_exact
    d[_q.plain_linear_relu.default] = lambda *a: _linear_exact(*a, relu=True)
    d[_q.plain_add.default] = _binary_exact(mul=False)
    d[_q.plain_add_relu.default] = _binary_exact(mul=False, relu=True)
    d[_q.plain_mul.default] = _binary_exact(mul=True)
    d[_q.plain_mul_relu.default] = _binary_exact(mul=True, relu=True)
    d[_q.plain_cat.default] = _cat_exact()
    d[_q.plain_cat_relu.default] = _cat_exact(relu=True)
    # max pooling on float copies of the codes (exact): ONNX Runtime's uint8 MaxPool outside its
    # QDQ-fused NHWC graphs is several times slower than its float one
    d[_q.plain_max_pool2d.default] = lambda x, *a: _aten.max_pool2d(x.float(), *a).to(x.dtype)
    # element-wise with number arguments: a table of the op's own results (Gather)
    for name, fallback in (
        ("relu6", _unary(lambda x: torch.clamp(x, 0.0, 6.0))),
        ("clamp", _unary(torch.clamp)),
        ("threshold", _unary(F.threshold)),
        ("hardswish", _requant(F.hardswish)),
        ("hardsigmoid", _requant(F.hardsigmoid)),
        ("sigmoid", _requant(torch.sigmoid)),
        ("leaky_relu", _requant(F.leaky_relu)),
        ("elu", _requant_then(_elu)),
        ("celu", _requant_then(lambda x, alpha=1.0: F.celu(x, alpha))),
    ):
        overload = getattr(_q, f"plain_{name}").default
        d[overload] = _lookup(overload, fallback)
    d[_q.plain_adaptive_avg_pool2d.default] = _adaptive_avg_pool2d_exact
    return d


DECOMPOSITIONS = _build_exact()
QDQ_DECOMPOSITIONS = _build_qdq()


# ---- translations of the boundaries to ONNX ------------------------------------------------------
def _translations(exact: bool):
    from onnxscript import ir
    from onnxscript import opset18 as op

    def quantize(x, scale: float, zero_point: int, dtype):
        if not exact:  # QuantizeLinear with the scale: the pattern ONNX Runtime fuses
            return op.QuantizeLinear(
                x, op.Constant(value_float=scale), op.Cast(op.Constant(value_int=zero_point), to=dtype)
            )
        # ours: round_half_even(float32(x * inv_scale)) + zero_point, saturated (inv_scale =
        # float32(1 / float32(scale))); QuantizeLinear divides by its scale: scale 1 after the Mul
        inv = _f32(1.0 / _f32(scale))
        if inv != 1.0:
            x = op.Mul(x, op.Constant(value_float=inv))
        return op.QuantizeLinear(x, op.Constant(value_float=1.0), op.Cast(op.Constant(value_int=zero_point), to=dtype))

    def quantize_channel(x, scales, zero_points, axis: int, dtype):
        return op.QuantizeLinear(x, op.Cast(scales, to=ir.DataType.FLOAT), op.Cast(zero_points, to=dtype), axis=axis)

    def dequantize(x, scale: float, zero_point: int):
        return op.DequantizeLinear(x, op.Constant(value_float=scale), op.CastLike(op.Constant(value_int=zero_point), x))

    def dequantize_channel(x, scales, zero_points, axis: int):
        return op.DequantizeLinear(x, op.Cast(scales, to=ir.DataType.FLOAT), op.CastLike(zero_points, x), axis=axis)

    def linear_dynamic(x, w, w_scales, w_zero_points, bias, packed, reduce_range: bool = False, relu: bool = False):
        # x quantized per call over its own range (uint8), the int8 weights as uint8 w + 128 with
        # zero points + 128 (the same differences; u8 x u8 is exact in ONNX Runtime on every CPU,
        # u8 x s8 saturates int16 pair sums without VNNI): MatMulInteger, then the float epilogue
        xq, xs, xz = op.DynamicQuantizeLinear(x)
        shift = op.Cast(op.Constant(value_int=128), to=ir.DataType.INT32)
        wt = op.Cast(op.Add(op.Cast(op.Transpose(w, perm=[1, 0]), to=ir.DataType.INT32), shift), to=ir.DataType.UINT8)
        wz = op.Cast(op.Add(op.Cast(w_zero_points, to=ir.DataType.INT32), shift), to=ir.DataType.UINT8)
        acc = op.MatMulInteger(xq, wt, xz, wz)
        y = op.Mul(op.Cast(acc, to=ir.DataType.FLOAT), op.Mul(xs, op.Cast(w_scales, to=ir.DataType.FLOAT)))
        if bias is not None:
            y = op.Add(y, bias)
        return op.Relu(y) if relu else y

    def linear_relu_dynamic(x, w, w_scales, w_zero_points, bias, packed, reduce_range: bool = False):
        return linear_dynamic(x, w, w_scales, w_zero_points, bias, packed, reduce_range, True)

    def conv_int(x, x_zero_point: int, w, w_zero_point, stride, padding, dilation, groups: int):
        return op.ConvInteger(
            x,
            w,
            op.CastLike(op.Constant(value_int=x_zero_point), x),
            op.CastLike(w_zero_point, w),
            strides=list(stride),
            pads=list(padding) * 2,
            dilations=list(dilation),
            group=groups,
        )

    def matmul_int(x, x_zero_point: int, wt, w_zero_points):
        return op.MatMulInteger(
            x, wt, op.CastLike(op.Constant(value_int=x_zero_point), x), op.CastLike(w_zero_points, wt)
        )

    def gather(x, table, signed: bool):
        codes = op.Cast(op.Constant(value_ints=list(table)), to=ir.DataType.INT8 if signed else ir.DataType.UINT8)
        return op.Gather(codes, op.Cast(x, to=ir.DataType.INT32), axis=0)

    return {
        torch.ops.qplugin_onnx.conv_integer.default: conv_int,
        torch.ops.qplugin_onnx.matmul_integer.default: matmul_int,
        torch.ops.qplugin_onnx.lookup.default: gather,
        _q.plain_quantize_per_tensor.default: quantize,
        _q.plain_quantize_per_channel.default: quantize_channel,
        _q.plain_dequantize_per_tensor.default: dequantize,
        _q.plain_dequantize_per_channel.default: dequantize_channel,
        _q.plain_linear_dynamic.default: linear_dynamic,
        _q.plain_linear_relu_dynamic.default: linear_relu_dynamic,
    }


# ---- the model side ------------------------------------------------------------------------------
class _FloatTable(torch.nn.Module):
    """A plain Embedding / EmbeddingBag as the float table it reads (embedding_bag_byte_unpack of
    its fused rows: code * scale + bias per row), for ONNX's Gather / embedding-bag translation."""

    def __init__(self, m):
        super().__init__()
        self.register_buffer("weight", _q.embedding_bag_byte_unpack(m.fused_weight()))
        self.bag = hasattr(m, "mode")
        if self.bag:
            self.mode, self.include_last_offset = m.mode, m.include_last_offset

    def forward(
        self,
        indices: Tensor,
        offsets: Optional[Tensor] = None,
        per_sample_weights: Optional[Tensor] = None,
        compressed_indices_mapping: Optional[Tensor] = None,
    ) -> Tensor:
        if not self.bag:
            return F.embedding(indices, self.weight)
        if compressed_indices_mapping is not None:
            raise ValueError(
                "torch_qplugin.deploy.export_onnx: EmbeddingBag with compressed_indices_mapping "
                "(pruned rows) has no ONNX form here"
            )
        return F.embedding_bag(
            indices,
            self.weight,
            offsets,
            mode=self.mode,
            per_sample_weights=per_sample_weights,
            include_last_offset=self.include_last_offset,
        )


def _onnx_ready(model):
    """A copy of the plain model with its embeddings as float tables; raises for modules with no
    ONNX form (dynamic LSTM / GRU / RNN cells), naming them."""
    import copy

    from .nn import plain as nnp

    no_onnx = tuple(getattr(nnp, n) for n in ("LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell") if hasattr(nnp, n))
    for name, m in model.named_modules():
        if isinstance(m, no_onnx):
            raise ValueError(
                f"torch_qplugin.deploy.export_onnx: module '{name}' ({type(m).__module__}."
                f"{type(m).__name__}) has no ONNX form: ONNX has no dynamically quantized "
                f"{type(m).__name__} computing what ours does (ONNX Runtime's DynamicQuantizeLSTM "
                "quantizes its weights its own way; there is no GRU or cell counterpart)"
            )
    model = copy.deepcopy(model)
    for name, m in list(model.named_modules()):
        if isinstance(m, nnp.Embedding):
            parent, _, leaf = name.rpartition(".")
            setattr(model.get_submodule(parent) if parent else model, leaf, _FloatTable(m))
    return model


_QUANTIZED_MODULES = (
    "torch_qplugin.nn.quantized",
    "torch_qplugin.nn.intrinsic.quantized",
    "torch.ao.nn.quantized",
    "torch.ao.nn.intrinsic.quantized",
)


def _as_plain(model):
    """The plain form of a model that holds quantized-tier modules (to_plain); a plain model as is."""
    if any(type(m).__module__.startswith(_QUANTIZED_MODULES) for m in model.modules()):
        from .quantization import to_plain

        return to_plain(model)
    return model


def decomposed_program(model, args: Tuple[Any, ...], *, dynamic_batch: bool = True, exact: bool = False):
    """The ExportedProgram that export_onnx translates: ``model`` exported (through to_plain if it
    holds quantized-tier modules, embeddings as float tables) with every plain op decomposed
    (``DECOMPOSITIONS`` with ``exact``, else ``QDQ_DECOMPOSITIONS``). Running its module() in torch
    computes what the ONNX file computes (the QDQ form: up to ONNX Runtime's own rounding)."""
    if not isinstance(args, tuple):
        raise TypeError(
            f"torch_qplugin.deploy.export_onnx: args should be a tuple of example inputs, got {type(args).__name__}"
        )
    model = _onnx_ready(_as_plain(model).eval())
    if dynamic_batch:
        ep = export(model, args)
    else:
        with torch.no_grad():
            ep = torch.export.export(model, args)
    uniform = all(
        bool((m.w_zero_points == m.w_zero_points.reshape(-1)[0]).all())
        for m in model.modules()
        if isinstance(getattr(m, "w_zero_points", None), Tensor)
        and m.w_zero_points.numel()
        and getattr(m, "weight", None) is not None
        and m.weight.dim() > 2
        and "Transpose" not in type(m).__name__
    )  # the convs ConvInteger runs
    token = _UNIFORM_CONV_ZERO_POINTS.set(uniform)
    try:
        with batch_oblivious():  # retracing must not specialize a batch of 1 either
            return ep.run_decompositions(DECOMPOSITIONS if exact else QDQ_DECOMPOSITIONS)
    finally:
        _UNIFORM_CONV_ZERO_POINTS.reset(token)


def export_onnx(
    model, args: Tuple[Any, ...], f, *, dynamic_batch: bool = True, opset: Optional[int] = None, exact: bool = False
):
    """Writes ``f`` (a path): ``model`` (a plain model, or one converted by torch_qplugin or
    torch.ao.quantization, taken through to_plain) as standard int8 ONNX (module docstring).
    ``args``: example inputs (a tuple); ``dynamic_batch``: dim 0 of every tensor input dynamic;
    ``opset``: the ai.onnx opset (default: torch.onnx's); ``exact``: the exact form (bit-identical
    to eager where every op has one, slower in ONNX Runtime) instead of the QDQ form. Returns the
    ``torch.onnx.ONNXProgram``."""
    ep = decomposed_program(model, args, dynamic_batch=dynamic_batch, exact=exact)
    translations = _translations(exact)
    left = sorted(
        {
            str(n.target)
            for n in ep.graph.nodes
            if n.op == "call_function"
            and isinstance(n.target, torch._ops.OpOverload)
            and n.target.namespace in ("qplugin", "qplugin_onnx")
            and n.target not in translations
        }
    )
    if left:
        raise ValueError(
            f"torch_qplugin.deploy.export_onnx: no ONNX form for {', '.join(left)} "
            "(docs/deploy.md lists the supported modules)"
        )
    kwargs = {} if opset is None else {"opset_version": opset}
    program = torch.onnx.export(
        ep, args, dynamo=True, custom_translation_table=translations, optimize=True, verbose=False, **kwargs
    )
    program.save(str(f))
    return program
