"""qplugin's kernels for aten ops on quantized tensors: the functional calls eager int8 models make
between their quantized modules (``F.adaptive_avg_pool2d``, ``F.avg_pool2d`` / ``F.max_pool2d``,
``x.mean(dims)``, ``.contiguous()``, ``torch.cat``, ``F.interpolate``, ...), which no module
conversion sees. Each is a few lines onto a ``qplugin::`` op (same kernels as everywhere else, so
results are bit-identical to the qplugin op and the plain tier).

* ``register()`` (at ``import torch_qplugin``) gives every op of the table that torch has no
  kernel for (argmax, argmin, hardswish, mean, sort in torch 2.14; all once torch deletes its
  quantized kernels) ours, for good.
* ``use_for_aten(True)`` (or ``QPLUGIN_USE_FOR_ATEN=1`` at import) registers the rest over torch's
  kernels, so models run on qplugin kernels alone today; ``use_for_aten(False)`` frees those
  registrations, and the dispatcher goes back to torch's kernels.

View ops (view, reshape, flatten, permute, transpose, select, slice, chunk, split, ...) and the
quantized tensors' factories and qparams reads stay torch's: they move no data. The quantized
tier's side of the wall (like _wrong_kind.py): it goes when torch's quantized dtypes go.
"""
import os
import warnings

import torch

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
    return torch.empty(0, dtype=_INT_OF[q.dtype]).set_(q.untyped_storage(), q.storage_offset(), q.size(),
                                                       q.stride())


def _suggested_format(q, memory_format):
    """The memory format torch's quantized clone gives: contiguous by default, the input's own
    (channels_last when it is) for preserve_format."""
    if memory_format is None:
        return torch.contiguous_format
    if memory_format is not torch.preserve_format:
        return memory_format
    if q.dim() == 4 and q.is_contiguous(memory_format=torch.channels_last) and not q.is_contiguous():
        return torch.channels_last
    if q.dim() == 5 and q.is_contiguous(memory_format=torch.channels_last_3d) and not q.is_contiguous():
        return torch.channels_last_3d
    return torch.contiguous_format


def _empty_like(q, memory_format):
    if q.qscheme() in (torch.per_tensor_affine, torch.per_tensor_symmetric):
        return torch._empty_affine_quantized(q.size(), scale=q.q_scale(), zero_point=q.q_zero_point(),
                                             dtype=q.dtype, memory_format=memory_format)
    return torch._empty_per_channel_affine_quantized(
        q.size(), scales=q.q_per_channel_scales(), zero_points=q.q_per_channel_zero_points(),
        axis=q.q_per_channel_axis(), dtype=q.dtype, memory_format=memory_format)


def _in_place(self, out):
    """self's integers set to out's (an in-place op whose result keeps self's qparams)."""
    _int_view(self).copy_(_int_view(out))
    return self


# ---- pooling ----------------------------------------------------------------------------------
@_kernel("_adaptive_avg_pool2d", via="qplugin::adaptive_avg_pool2d")
def _adaptive_avg_pool2d(self, output_size):
    return _q.adaptive_avg_pool2d(self, list(output_size))


@_kernel("_adaptive_avg_pool3d", via="qplugin::adaptive_avg_pool3d")
def _adaptive_avg_pool3d(self, output_size):
    return _q.adaptive_avg_pool3d(self, list(output_size))


def _avg_pool(n, op):
    def kernel(self, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
        k = _list(kernel_size, n)
        return op(self, k, _list(stride, n) if len(stride) else k, _list(padding, n), ceil_mode, count_include_pad,
                  divisor_override)
    return kernel


_kernel("avg_pool2d", via="qplugin::avg_pool2d")(_avg_pool(2, _q.avg_pool2d))
_kernel("avg_pool3d", via="qplugin::avg_pool3d")(_avg_pool(3, _q.avg_pool3d))


def _max_pool_args(n, kernel_size, stride, padding, dilation):
    k = _list(kernel_size, n)
    return k, _list(stride, n) if len(stride) else k, _list(padding, n), _list(dilation, n)


@_kernel("quantized_max_pool2d", via="qplugin::max_pool2d")
def _max_pool2d(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return _q.max_pool2d(self, *_max_pool_args(2, kernel_size, stride, padding, dilation), ceil_mode)


@_kernel("quantized_max_pool1d", via="qplugin::max_pool2d")
def _max_pool1d(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    # the 2-D kernel over a height of 1 (unsqueeze is a view)
    k, s, p, d = _max_pool_args(1, kernel_size, stride, padding, dilation)
    out = _q.max_pool2d(self.unsqueeze(-2), [1] + k, [1] + s, [0] + p, [1] + d, ceil_mode)
    return out.squeeze(-2)


@_kernel("quantized_max_pool3d", via="qplugin::max_pool2d")
def _max_pool3d(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    # A max is separable: the 2-D kernel over (H, W) of every depth slice, then over (D, 1) of the
    # result seen as (D, H' * W') planes; the windows and their -inf padding are the 3-D ones.
    k, s, p, d = _max_pool_args(3, kernel_size, stride, padding, dilation)
    batched = self.dim() == 5
    x = self if batched else self.unsqueeze(0)
    n, c, depth, h, w = x.shape
    hw = _q.max_pool2d(x.reshape(n * c, depth, h, w), k[1:], s[1:], p[1:], d[1:], ceil_mode)
    h2, w2 = hw.shape[-2:]
    out = _q.max_pool2d(hw.reshape(n * c, 1, depth, h2 * w2), [k[0], 1], [s[0], 1], [p[0], 0], [d[0], 1],
                        ceil_mode)
    out = out.reshape(n, c, out.shape[-2], h2, w2)
    return out if batched else out.squeeze(0)


# ---- reductions, sorting ---------------------------------------------------------------------
@_kernel("mean.dim", via="qplugin::mean")
def _mean_dim(self, dim, keepdim=False, *, dtype=None):
    if dtype is not None:
        raise TypeError(f"aten::mean.dim (qplugin kernel): dtype should be None for a quantized input, got {dtype}")
    return _q.mean(self, None if dim is None else list(dim), keepdim)


@_kernel("mean", via="qplugin::mean")
def _mean(self, *, dtype=None):
    if dtype is not None:
        raise TypeError(f"aten::mean (qplugin kernel): dtype should be None for a quantized input, got {dtype}")
    return _q.mean(self)


@_kernel("sort.stable", via="qplugin::sort")
def _sort_stable(self, *, stable, dim=-1, descending=False):
    return _q.sort(self, dim, descending, stable=stable)


@_kernel("sort", via="qplugin::sort")
def _sort(self, dim=-1, descending=False):
    return _q.sort(self, dim, descending)


def _same_arguments(qname):
    packet, _, overload = qname.partition(".")
    op = getattr(getattr(_q, packet), overload or "default")
    return lambda *args, **kwargs: op(*args, **kwargs)


# aten ops whose qplugin op takes the same arguments (API.md section 1 mirrors aten's schemas)
_SAME_ARGUMENTS = [("topk", "topk"), ("max", "max"), ("min", "min"), ("max.dim", "max.dim"), ("min.dim", "min.dim"),
                   ("argmax", "argmax"), ("argmin", "argmin"), ("equal", "equal"), ("relu", "relu"),
                   ("clamp", "clamp"), ("dequantize.self", "dequantize"), ("int_repr", "int_repr")]
_SAME_ARGUMENTS += [(f"{c}.{o}", c + (".Scalar" if o == "Scalar" else ""))
                    for c in ("eq", "ne", "ge", "le", "gt", "lt") for o in ("Tensor", "Scalar")]
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
        raise ValueError(f"aten::channel_shuffle (qplugin kernel): self should have 3 or more dims and channels "
                         f"divisible by groups, got shape {tuple(self.shape)} and groups {groups}")
    n, c = self.shape[:2]
    grouped = self.reshape(n, groups, c // groups, *self.shape[2:]).transpose(1, 2)
    out = _clone(grouped).reshape(self.shape)
    memory_format = _suggested_format(self, torch.preserve_format)  # torch's: the input's
    return out if memory_format is torch.contiguous_format else _clone(out, memory_format=memory_format)


@_kernel("cat", via="qplugin::cat")
def _cat(tensors, dim=0):
    # torch's quantized cat: the first input's qparams (the others requantized to them)
    return _q.cat(list(tensors), dim, None, None)


@_kernel("upsample_nearest2d", via="qplugin::upsample_nearest2d")
def _upsample_nearest2d(self, output_size, scales_h=None, scales_w=None):
    h, w = self.shape[-2:]
    for scale, size, n in ((scales_h, output_size[0], h), (scales_w, output_size[1], w)):
        if scale is not None and scale * n != size:
            raise ValueError(f"aten::upsample_nearest2d (qplugin kernel): a scale factor ({scale}) that is not "
                             f"output size / input size ({size} / {n}) is not supported; pass the output size")
    return _q.upsample_nearest2d(self, list(output_size))


@_kernel("upsample_bilinear2d", via="qplugin::upsample_bilinear2d")
def _upsample_bilinear2d(self, output_size, align_corners, scales_h=None, scales_w=None):
    return _q.upsample_bilinear2d(self, list(output_size), align_corners, scales_h, scales_w)


def _number(op, self, other):
    """The Python number of ``self <op> other``'s scalar operand (a number, or the 0-dim tensor
    torch wraps one in). RuntimeError: Tensor.__add__ turns a TypeError into Python's own
    "unsupported operand type(s)", which would hide the message."""
    if not self.is_quantized:
        raise RuntimeError(f"aten::{op} (qplugin kernel): self should be the quantized operand, got a "
                        f"{self.dtype} tensor; write the quantized tensor first")
    if isinstance(other, torch.Tensor):
        if other.dim() != 0 or other.is_quantized:
            raise RuntimeError(f"aten::{op} (qplugin kernel): other should be a number, got a "
                            f"{other.dtype} tensor of shape {tuple(other.shape)}; between quantized tensors use "
                            f"torch.ops.qplugin.{op}(a, b, scale, zero_point) or FloatFunctional (it needs the "
                            f"output's qparams)")
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


# ---- registration ------------------------------------------------------------------------------
def _torch_has(name, key):
    # a kernel registered for the key itself: the composite kernels of some ops (argmax, ...)
    # cover the key on paper and fail on quantized inputs
    return torch._C._dispatch_has_kernel_for_dispatch_key("aten::" + name, key)


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
    return {name: "qplugin" if name in _MISSING else ("qplugin (use_for_aten)" if _OVERRIDE_LIB else "torch")
            for name in sorted(_TABLE)}
