"""qplugin's kernels for aten ops on quantized tensors: the functional calls eager int8 models make
between their quantized modules (``F.adaptive_avg_pool2d``, ``F.avg_pool2d`` / ``F.max_pool2d``,
``x.mean(dims)``, ``.contiguous()``, ``torch.cat``, ``F.interpolate``, ...), which no module
conversion sees. Each is a few lines onto a ``qplugin::`` op (same kernels as everywhere else, so
results are bit-identical to the qplugin op and the plain tier); the 1-D / 3-D max pools and
nearest upsamplings are the 2-D kernels composed (_composed.py), tanh a 256-entry table made by
qplugin's dequantize / quantize, and the pure data movement (clone, copy_, index_select, fill_,
nearest-exact upsampling) copies the integers.

* ``register()`` (at ``import torch_qplugin``) gives every op of the table that torch has no
  kernel for (argmax, sum, clamp_, upsample_nearest1d, ... in torch 2.13: ``table()`` says which;
  all once torch deletes its quantized kernels) ours, for good. aten's own copy_ and stack (its
  composite kernels) run quantized tensors: those stay torch's unless use_for_aten.
* ``use_for_aten(True)`` (or ``QPLUGIN_USE_FOR_ATEN=1`` at import) registers the rest over torch's
  kernels, so models run on qplugin kernels alone today; ``use_for_aten(False)`` frees those
  registrations, and the dispatcher goes back to torch's kernels.

View ops (view, reshape, flatten, permute, transpose, select, slice, chunk, split, ...) and the
quantized tensors' factories and qparams reads stay torch's: they move no data. torch has no
aten::add / aten::mul of two quantized tensors (they need the output's qparams): ours refuses
them and names qplugin::add / FloatFunctional. The quantized
tier's side of the wall (like _wrong_kind.py): it goes when torch's quantized dtypes go.
"""

import os
import warnings

import torch

from . import _composed, _ops

_q = torch.ops.qplugin

ENV = "QPLUGIN_USE_FOR_ATEN"
_TABLE = {}  # aten overload name -> (dispatch key, kernel)
_VIA = {}  # aten overload name -> the qplugin op(s) its kernel runs (docs/ops.md)
_MISSING_LIB = None  # the ops torch has no kernel for: registered for good
_OVERRIDE_LIB = None  # the ops torch has a kernel for: while use_for_aten(True)
_MISSING = []  # names of the ops in _MISSING_LIB


def _kernel(*names, via, key="QuantizedCPU"):
    def deco(fn):
        for n in names:
            _TABLE[n] = (key, fn)
            _VIA[n] = via
        return fn

    return deco


def _list(v, n):
    v = [v] if isinstance(v, int) else list(v)
    return v * n if len(v) == 1 else v


_INT_OF = {}  # filled on first use: nothing here names a quantized dtype at import


def _int_view(q):
    """The integers of a quantized tensor as a plain tensor on the same storage (no copy)."""
    if not _INT_OF:
        _INT_OF.update({torch.quint8: torch.uint8, torch.qint8: torch.int8, torch.qint32: torch.int32})
    return torch.empty(0, dtype=_INT_OF[q.dtype]).set_(q.untyped_storage(), q.storage_offset(), q.size(), q.stride())


def _suggested_format(q, memory_format):
    """The memory format torch's quantized clone gives: contiguous by default, the input's own
    (channels_last when it is) for preserve_format."""
    if memory_format is None:
        return torch.contiguous_format
    if memory_format is not torch.preserve_format:
        return memory_format
    return _composed.memory_format_of(q)


def _empty_like(q, memory_format):
    if q.qscheme() in (torch.per_tensor_affine, torch.per_tensor_symmetric):
        return torch._empty_affine_quantized(
            q.size(), scale=q.q_scale(), zero_point=q.q_zero_point(), dtype=q.dtype, memory_format=memory_format
        )
    return torch._empty_per_channel_affine_quantized(
        q.size(),
        scales=q.q_per_channel_scales(),
        zero_points=q.q_per_channel_zero_points(),
        axis=q.q_per_channel_axis(),
        dtype=q.dtype,
        memory_format=memory_format,
    )


def _in_place(self, out):
    """self's integers set to out's (an in-place op whose result keeps self's qparams)."""
    _int_view(self).copy_(_int_view(out))
    return self


def _quantizer_of(q, scale=None, zero_point=None):
    """An empty quantized tensor holding q's quantizer (or per-tensor (scale, zero_point) of q's dtype)."""
    if scale is not None:
        return torch._empty_affine_quantized([0], scale=scale, zero_point=zero_point, dtype=q.dtype)
    if q.qscheme() in (torch.per_tensor_affine, torch.per_tensor_symmetric):
        return torch._empty_affine_quantized([0], scale=q.q_scale(), zero_point=q.q_zero_point(), dtype=q.dtype)
    scales, axis = q.q_per_channel_scales(), q.q_per_channel_axis()
    return torch._empty_per_channel_affine_quantized(
        [1] * axis + [scales.numel()],
        scales=scales,
        zero_points=q.q_per_channel_zero_points(),
        axis=axis,
        dtype=q.dtype,
    )


def _on(quantizer, t):
    """quantizer (from _quantizer_of) made to read t's storage with t's sizes and strides (no copy)."""
    return quantizer.set_(t.untyped_storage(), t.storage_offset(), t.size(), t.stride())


def _with_qparams(q, scale, zero_point):
    """q's integers read with other per-tensor qparams."""
    return _on(_quantizer_of(q, scale, zero_point), q)


def _fail(exc, op, what):
    return exc(f"aten::{op} (qplugin kernel): {what}")


# ---- pooling ----------------------------------------------------------------------------------
@_kernel("_adaptive_avg_pool2d", via="qplugin::adaptive_avg_pool2d")
def _adaptive_avg_pool2d(self, output_size):
    return _q.adaptive_avg_pool2d(self, list(output_size))


@_kernel("_adaptive_avg_pool3d", via="qplugin::adaptive_avg_pool3d")
def _adaptive_avg_pool3d(self, output_size):
    return _q.adaptive_avg_pool3d(self, list(output_size))


def _avg_pool(n, name):
    # the op is looked up when the kernel runs: a plain-only build imports this module without it
    def kernel(self, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None):
        k = _list(kernel_size, n)
        return getattr(_q, name)(
            self,
            k,
            _list(stride, n) if len(stride) else k,
            _list(padding, n),
            ceil_mode,
            count_include_pad,
            divisor_override,
        )

    return kernel


_kernel("avg_pool2d", via="qplugin::avg_pool2d")(_avg_pool(2, "avg_pool2d"))
_kernel("avg_pool3d", via="qplugin::avg_pool3d")(_avg_pool(3, "avg_pool3d"))


def _max_pool_args(n, kernel_size, stride, padding, dilation):
    k = _list(kernel_size, n)
    return k, _list(stride, n) if len(stride) else k, _list(padding, n), _list(dilation, n)


@_kernel("quantized_max_pool2d", via="qplugin::max_pool2d")
def _max_pool2d(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return _q.max_pool2d(self, *_max_pool_args(2, kernel_size, stride, padding, dilation), ceil_mode)


@_kernel("quantized_max_pool1d", via="qplugin::max_pool2d")
def _max_pool1d(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return _composed.max_pool1d(
        self, *_max_pool_args(1, kernel_size, stride, padding, dilation), ceil_mode, _q.max_pool2d
    )


@_kernel("quantized_max_pool3d", via="qplugin::max_pool2d")
def _max_pool3d(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    x = self if self.is_contiguous() or _composed.is_channels_last_3d(self) else _clone(self)
    return _composed.max_pool3d(x, *_max_pool_args(3, kernel_size, stride, padding, dilation), ceil_mode, _q.max_pool2d)


# ---- reductions, sorting ---------------------------------------------------------------------
@_kernel("mean.dim", via="qplugin::mean")
def _mean_dim(self, dim, keepdim=False, *, dtype=None):
    _no_dtype("mean.dim", dtype)
    return _q.mean(self, None if dim is None else list(dim), keepdim)


@_kernel("mean", via="qplugin::mean")
def _mean(self, *, dtype=None):
    _no_dtype("mean", dtype)
    return _q.mean(self)


def _no_dtype(op, dtype):
    if dtype is not None:
        raise TypeError(f"aten::{op} (qplugin kernel): dtype should be None for a quantized input, got {dtype}")


def _sum(op, self, dim, keepdim, dtype):
    """The sum is N times the mean: qplugin::mean's integers with the scale times N (the same zero
    point), so the result is the exact sum rounded to the nearest multiple of N * scale and never
    saturates. torch has no quantized sum."""
    _no_dtype(op, dtype)
    n = _composed.reduced_count(f"aten::{op} (qplugin kernel)", self.shape, dim)
    mean = _q.mean(self, None if dim is None else list(dim), keepdim)
    return _with_qparams(mean, mean.q_scale() * n, mean.q_zero_point())


@_kernel("sum.dim_IntList", via="qplugin::mean")
def _sum_dim(self, dim, keepdim=False, *, dtype=None):
    return _sum("sum.dim_IntList", self, dim, keepdim, dtype)


@_kernel("sum", via="qplugin::mean")
def _sum_all(self, *, dtype=None):
    return _sum("sum", self, None, False, dtype)


@_kernel("sort.stable", via="qplugin::sort")
def _sort_stable(self, *, stable, dim=-1, descending=False):
    return _q.sort(self, dim, descending, stable=stable)


@_kernel("sort", via="qplugin::sort")
def _sort(self, dim=-1, descending=False):
    return _q.sort(self, dim, descending)


def _same_arguments(qname):
    packet, _, overload = qname.partition(".")
    op = None

    def kernel(*args, **kwargs):
        nonlocal op
        if op is None:  # looked up on first call: a plain-only build imports this module without it
            op = getattr(getattr(_q, packet), overload or "default")
        return op(*args, **kwargs)

    return kernel


# aten ops whose qplugin op takes the same arguments (API.md section 1 mirrors aten's schemas)
_SAME_ARGUMENTS = [
    ("topk", "topk"),
    ("max", "max"),
    ("min", "min"),
    ("max.dim", "max.dim"),
    ("min.dim", "min.dim"),
    ("argmax", "argmax"),
    ("argmin", "argmin"),
    ("equal", "equal"),
    ("relu", "relu"),
    ("clamp", "clamp"),
    ("dequantize.self", "dequantize"),
    ("int_repr", "int_repr"),
]
_SAME_ARGUMENTS += [
    (f"{c}.{o}", c + (".Scalar" if o == "Scalar" else ""))
    for c in ("eq", "ne", "ge", "le", "gt", "lt")
    for o in ("Tensor", "Scalar")
]
for _aten_name, _qname in _SAME_ARGUMENTS:
    _kernel(_aten_name, via="qplugin::" + _qname)(_same_arguments(_qname))
for _qname in ("quantize_per_tensor", "quantize_per_channel"):  # float input: the CPU key
    _kernel(_qname, via="qplugin::" + _qname, key="CPU")(_same_arguments(_qname))


# ---- data movement -----------------------------------------------------------------------------
@_kernel("clone", via="aten::copy_ of the integers")
def _clone(self, *, memory_format=None):
    out = _empty_like(self, _suggested_format(self, memory_format))
    _int_view(out).copy_(_int_view(self))
    return out


@_kernel("channel_shuffle", via="aten::copy_ of the integers")
def _channel_shuffle(self, groups):
    if self.dim() < 3 or groups <= 0 or self.shape[1] % groups:
        raise ValueError(
            f"aten::channel_shuffle (qplugin kernel): self should have 3 or more dims and channels "
            f"divisible by groups, got shape {tuple(self.shape)} and groups {groups}"
        )
    n, c = self.shape[:2]
    grouped = self.reshape(n, groups, c // groups, *self.shape[2:]).transpose(1, 2)
    out = _clone(grouped).reshape(self.shape)
    memory_format = _suggested_format(self, torch.preserve_format)  # torch's: the input's
    return out if memory_format is torch.contiguous_format else _clone(out, memory_format=memory_format)


@_kernel("cat", via="qplugin::cat")
def _cat(tensors, dim=0):
    # torch's quantized cat: the first input's qparams (the others requantized to them)
    return _q.cat(list(tensors), dim, None, None)


@_kernel("stack", via="qplugin::cat")
def _stack(tensors, dim=0):
    tensors = list(tensors)  # not empty: a quantized tensor brought the call here
    d = dim + tensors[0].dim() + 1 if dim < 0 else dim
    return _q.cat([t.unsqueeze(d) for t in tensors], d, None, None)


def _per_tensor_only(op, q, arg="self"):
    if q.qscheme() not in (torch.per_tensor_affine, torch.per_tensor_symmetric):
        raise _fail(NotImplementedError, op, f"{arg} should be per-tensor quantized, got {q.qscheme()}")


@_kernel("index_select", via="aten::index_select of the integers")
def _index_select(self, dim, index):
    _per_tensor_only("index_select", self)
    return _on(_quantizer_of(self), torch.index_select(_int_view(self), dim, index))


@_kernel("copy_", via="aten::copy_ of the integers; qplugin::quantize_per_* from float32")
def _copy_(self, src, non_blocking=False):
    """torch's semantics: from a quantized src, src's integers and src's qparams (no requantizing;
    the same dtype and qscheme); from a float32 src, src quantized with self's qparams. A quantized
    src into a float self is refused (dequantize() it). Unlike torch's, a float src may broadcast
    and have any strides."""
    if not self.is_quantized:
        raise _fail(
            RuntimeError,
            "copy_",
            f"self should be quantized when src is, got a {self.dtype} tensor; "
            f"dequantize() src to copy it into a float tensor",
        )
    if src.dim() > self.dim() or any(n not in (1, m) for n, m in zip(src.shape[::-1], self.shape[::-1])):
        raise _fail(
            RuntimeError,
            "copy_",
            f"src should broadcast to self's shape {tuple(self.shape)}, got shape {tuple(src.shape)}",
        )
    if not src.is_quantized:
        if src.dtype != torch.float32:
            raise _fail(TypeError, "copy_", f"src should be float32 or quantized, got {src.dtype}")
        _int_view(self).copy_(_int_view(_quantize_like(self, src.expand_as(self))))
        return self
    if src.dtype != self.dtype or src.qscheme() != self.qscheme():
        raise _fail(
            TypeError,
            "copy_",
            f"src should have self's dtype and qscheme ({self.dtype}, "
            f"{self.qscheme()}), got ({src.dtype}, {src.qscheme()})",
        )
    _int_view(self).copy_(_int_view(src))
    if not _same_qparams(self, src):
        # the integers stay in self's storage; self's tensor takes src's quantizer (from a tensor
        # of self's kind: an inference tensor only for one)
        with torch.inference_mode(self.is_inference()):
            self.data = _on(_quantizer_of(src), self)
    return self


def _quantize_like(q, x):
    """Float x quantized with q's qparams."""
    if q.qscheme() in (torch.per_tensor_affine, torch.per_tensor_symmetric):
        return _q.quantize_per_tensor(x, q.q_scale(), q.q_zero_point(), q.dtype)
    return _q.quantize_per_channel(
        x, q.q_per_channel_scales(), q.q_per_channel_zero_points(), q.q_per_channel_axis(), q.dtype
    )


def _same_qparams(a, b):
    if a.qscheme() in (torch.per_tensor_affine, torch.per_tensor_symmetric):
        return a.q_scale() == b.q_scale() and a.q_zero_point() == b.q_zero_point()
    return (
        a.q_per_channel_axis() == b.q_per_channel_axis()
        and torch.equal(a.q_per_channel_scales(), b.q_per_channel_scales())
        and torch.equal(a.q_per_channel_zero_points(), b.q_per_channel_zero_points())
    )


@_kernel("fill_.Scalar", "fill_.Tensor", via="qplugin::quantize_per_tensor / _per_channel")
def _fill_(self, value):
    # torch's: the value quantized with self's qparams
    if isinstance(value, torch.Tensor):
        if value.dim() != 0 or value.is_quantized:
            raise _fail(
                RuntimeError,
                "fill_",
                f"value should be a number or a 0-dim float tensor, got a "
                f"{value.dtype} tensor of shape {tuple(value.shape)}",
            )
        value = value.item()
    filled = torch.full(self.shape, value, dtype=torch.float32)
    _int_view(self).copy_(_int_view(_quantize_like(self, filled)))
    return self


def _nearest_size(op, self, output_size, scales):
    """output_size, after checking each scale factor given is output size / input size (the index
    rule the kernels use)."""
    sizes = self.shape[-len(output_size) :]
    for scale, size, n in zip(scales, output_size, sizes):
        if scale is not None and scale * n != size:
            raise _fail(
                ValueError,
                op,
                f"a scale factor ({scale}) that is not output size / input size "
                f"({size} / {n}) is not supported; pass the output size",
            )
    return list(output_size)


@_kernel("upsample_nearest2d", via="qplugin::upsample_nearest2d")
def _upsample_nearest2d(self, output_size, scales_h=None, scales_w=None):
    return _q.upsample_nearest2d(self, _nearest_size("upsample_nearest2d", self, output_size, (scales_h, scales_w)))


@_kernel("upsample_nearest1d", via="qplugin::upsample_nearest2d")
def _upsample_nearest1d(self, output_size, scales=None):
    if self.dim() != 3:
        raise _fail(ValueError, "upsample_nearest1d", f"self should be 3-D (N, C, W), got shape {tuple(self.shape)}")
    size = _nearest_size("upsample_nearest1d", self, output_size, (scales,))
    return _composed.upsample_nearest1d(self, size, _q.upsample_nearest2d)


@_kernel("upsample_nearest3d", via="qplugin::upsample_nearest2d")
def _upsample_nearest3d(self, output_size, scales_d=None, scales_h=None, scales_w=None):
    if self.dim() != 5:
        raise _fail(
            ValueError, "upsample_nearest3d", f"self should be 5-D (N, C, D, H, W), got shape {tuple(self.shape)}"
        )
    size = _nearest_size("upsample_nearest3d", self, output_size, (scales_d, scales_h, scales_w))
    x = self if self.is_contiguous() or _composed.is_channels_last_3d(self) else _clone(self)
    return _composed.upsample_nearest3d(x, size, _q.upsample_nearest2d)


def _nearest_exact(op, n):
    def kernel(self, output_size, *scales):
        if self.dim() != n + 2:
            raise _fail(ValueError, op, f"self should be {n + 2}-D, got shape {tuple(self.shape)}")
        _per_tensor_only(op, self)
        ints = _composed.nearest_exact(_int_view(self), list(output_size), scales)
        return _on(_quantizer_of(self), ints)

    return kernel


for _n in (1, 2, 3):
    _kernel(f"_upsample_nearest_exact{_n}d", via="aten::index_select of the integers")(
        _nearest_exact(f"_upsample_nearest_exact{_n}d", _n)
    )


@_kernel("upsample_bilinear2d", via="qplugin::upsample_bilinear2d")
def _upsample_bilinear2d(self, output_size, align_corners, scales_h=None, scales_w=None):
    return _q.upsample_bilinear2d(self, list(output_size), align_corners, scales_h, scales_w)


def _number(op, self, other):
    """The Python number of ``self <op> other``'s scalar operand (a number, or the 0-dim tensor
    torch wraps one in). RuntimeError: Tensor.__add__ turns a TypeError into Python's own
    "unsupported operand type(s)", which would hide the message."""
    if not self.is_quantized:
        raise RuntimeError(
            f"aten::{op} (qplugin kernel): self should be the quantized operand, got a "
            f"{self.dtype} tensor; write the quantized tensor first"
        )
    if isinstance(other, torch.Tensor):
        if other.dim() != 0 or other.is_quantized:
            raise RuntimeError(
                f"aten::{op} (qplugin kernel): other should be a number, got a "
                f"{other.dtype} tensor of shape {tuple(other.shape)}; between quantized tensors use "
                f"torch.ops.qplugin.{op}(a, b, scale, zero_point) or FloatFunctional (it needs the "
                f"output's qparams)"
            )
        return other.item()
    return other


@_kernel("add.Tensor", "add.Scalar", via="qplugin::add_scalar")
def _add(self, other, alpha=1):
    return _q.add_scalar(self, _number("add", self, other) * alpha)


@_kernel("mul.Tensor", "mul.Scalar", via="qplugin::mul_scalar")
def _mul(self, other):
    return _q.mul_scalar(self, _number("mul", self, other))


# ---- activations -------------------------------------------------------------------------------
@_kernel("relu_", via="qplugin::relu")
def _relu_(self):
    return _in_place(self, _q.relu(self))


@_kernel("hardtanh", via="qplugin::clamp")
def _hardtanh(self, min_val=-1, max_val=1):
    return _q.clamp(self, min_val, max_val)


@_kernel("hardtanh_", via="qplugin::clamp")
def _hardtanh_(self, min_val=-1, max_val=1):
    return _in_place(self, _q.clamp(self, min_val, max_val))


@_kernel("clamp_", via="qplugin::clamp")
def _clamp_(self, min=None, max=None):
    return _in_place(self, _q.clamp(self, min, max))


@_kernel("clamp_min", via="qplugin::clamp")
def _clamp_min(self, min):
    return _q.clamp(self, min, None)


@_kernel("clamp_max", via="qplugin::clamp")
def _clamp_max(self, max):
    return _q.clamp(self, None, max)


@_kernel("hardswish", via="qplugin::hardswish")
def _hardswish(self):
    return _q.hardswish(self, self.q_scale(), self.q_zero_point())


@_kernel("leaky_relu", via="qplugin::leaky_relu")
def _leaky_relu(self, negative_slope=0.01):
    return _q.leaky_relu(self, negative_slope, False, self.q_scale(), self.q_zero_point())


def _unit_interval_zero_point(op, q):
    """torch's fixed output qparams of the [0, 1]-valued activations: scale 1 / 256 and this zero
    point (the dtype's 256 steps over [0, 1])."""
    zero_point = {torch.quint8: 0, torch.qint8: -128}.get(q.dtype)
    if zero_point is None:
        raise TypeError(f"aten::{op} (qplugin kernel): self should be quint8 or qint8, got {q.dtype}")
    return zero_point


@_kernel("sigmoid", via="qplugin::sigmoid")
def _sigmoid(self):
    return _q.sigmoid(self, 1.0 / 256, _unit_interval_zero_point("sigmoid", self))


@_kernel("hardsigmoid", via="qplugin::hardsigmoid")
def _hardsigmoid(self):
    return _q.hardsigmoid(self, 1.0 / 256, _unit_interval_zero_point("hardsigmoid", self))


@_kernel("tanh", via="qplugin::plain_dequantize_per_tensor, qplugin::plain_quantize_per_tensor (a table)")
def _tanh(self):
    # torch's fixed output qparams: scale 2 / 256, the dtype's 256 steps over [-1, 1]
    zero_point = {torch.quint8: 128, torch.qint8: 0}.get(self.dtype)
    if zero_point is None:
        raise _fail(TypeError, "tanh", f"self should be quint8 or qint8, got {self.dtype}")
    _per_tensor_only("tanh", self)
    ints = _int_view(self)
    table = _composed.table_of(torch.tanh, ints.dtype, self.q_scale(), self.q_zero_point(), 2.0 / 256, zero_point)
    out = torch._empty_affine_quantized(
        self.shape,
        scale=2.0 / 256,
        zero_point=zero_point,
        dtype=self.dtype,
        memory_format=_suggested_format(self, torch.preserve_format),
    )
    _composed.look_up(table, ints, _int_view(out))
    return out


# ---- registration ------------------------------------------------------------------------------
# torch's composite kernels that run quantized tensors (aten's copy_ has quantized branches; stack
# is cat): torch has a kernel for these. Other composites (argmax, clamp_, sum, ...) cover the key
# on paper and fail on quantized inputs.
_COMPOSITE_RUNS_QUANTIZED = ("copy_", "stack")


def _torch_has(name, key):
    if torch._C._dispatch_has_kernel_for_dispatch_key("aten::" + name, key):
        return True
    return name in _COMPOSITE_RUNS_QUANTIZED and torch._C._dispatch_has_kernel_for_dispatch_key(
        "aten::" + name, "CompositeExplicitAutograd"
    )


def register():
    """At import: ours for every op of the table torch has no kernel for; use_for_aten(True) when
    the environment asks for it."""
    global _MISSING_LIB
    if _MISSING_LIB is not None:
        return
    _MISSING_LIB = torch.library.Library("aten", "IMPL")  # noqa: TOR901 - kept alive: holds the registrations
    for name, (key, fn) in sorted(_TABLE.items()):
        if not _torch_has(name, key):
            _MISSING_LIB.impl(name, fn, key)
            _MISSING.append(name)
    value = os.environ.get(ENV, "0")
    if value not in ("0", "1"):
        raise ValueError(f"torch_qplugin: {ENV} should be 0 or 1, got {value!r}")
    if value == "1":
        use_for_aten(True)


def use_for_aten(enable=True):
    """Whether qplugin's kernels replace torch's for the aten ops on quantized tensors that torch
    still has kernels for (docs/ops.md lists the ops). Returns the previous setting."""
    global _OVERRIDE_LIB
    if not isinstance(enable, bool):
        raise TypeError(f"torch_qplugin.use_for_aten: enable should be a bool, got {type(enable).__name__}")
    was = _OVERRIDE_LIB is not None
    if enable and not was:
        _ops.require_quantized("torch_qplugin.use_for_aten")
        lib = torch.library.Library("aten", "IMPL")  # noqa: TOR901 - kept alive: holds the registrations
        with warnings.catch_warnings():
            # the dispatcher warns on purpose that a kernel replaces torch's
            warnings.filterwarnings("ignore", message=r"(?s).*Overriding a previously registered kernel")
            for name, (key, fn) in sorted(_TABLE.items()):
                if name not in _MISSING:
                    lib.impl(name, fn, key)
        _OVERRIDE_LIB = lib
    elif not enable and was:
        _OVERRIDE_LIB._destroy()
        _OVERRIDE_LIB = None
    return was


def table():
    """[(aten op, dispatch key, the qplugin op(s) its kernel runs, torch has a kernel for it)]"""
    return [(name, key, _VIA[name], name not in _MISSING) for name, (key, _) in sorted(_TABLE.items())]


def aten_kernels():
    """{aten op: 'qplugin' (ours for good: torch has none), 'qplugin (use_for_aten)' or 'torch'}
    for every aten op qplugin has a kernel for, as the dispatcher runs them now."""
    return {
        name: "qplugin" if name in _MISSING else ("qplugin (use_for_aten)" if _OVERRIDE_LIB else "torch")
        for name in sorted(_TABLE)
    }
