"""torch_qplugin.QTensor: a quantized tensor without a quantized dtype.

A torch.Tensor wrapper subclass holding a plain integer tensor (uint8 / int8 / int32; `int_repr()`)
and its Quantizer (PerTensorAffine / PerChannelAffine). It answers what a quantized tensor answers
(dequantize, qscheme, q_scale, ...), and torch ops on it run the plain tier's ops
(``qplugin::plain_*``) through ``__torch_dispatch__``: view ops, slicing, index_select, cat /
stack, copy_ / fill_, comparators, sort / topk / max / min / argmax / mean / sum, relu / clamp
(and in place), sigmoid / hardsigmoid / hardswish / leaky_relu / tanh, add / mul by a number,
pooling 1-3d, upsample nearest / nearest-exact 1-3d and bilinear, and every ``qplugin::`` op (so
``torch_qplugin.nn.quantized.functional`` accepts it). Any other op raises NotImplementedError
naming it: a QTensor is never silently dequantized.

Tracing (docs/deploy.md). A QTensor made inside the traced code (plain modules make one per layer)
never reaches a graph: the graphs hold the plain ops on its integers and aten views of them.

* torch.compile / strict export (dynamo): ``QTensor(data, scale, zero_point)`` (a tensor and two
  constants) is a constructor dynamo can put in its graph, and the per-tensor quantizer is an opaque
  value constant (quantizer.py), so ``x.quantizer.scale`` is a constant too. AOTAutograd then runs
  the ops on the QTensor through ``__torch_dispatch__``, which calls the plain ops on ``_data``.
* torch.export (pre-dispatch, strict or not): its proxy mode sits at the PreDispatch key, above the
  Python key where ``__torch_dispatch__`` runs, and cannot handle a subclass it did not make (torch
  answers "Unable to cast NotImplemented to Tensor"). ``__torch_function__`` therefore runs a torch
  call that has such a QTensor argument with PreDispatch excluded, down to ``__torch_dispatch__``,
  which lifts the exclusion again while its handler calls the plain ops, so the proxy mode records
  those. (A QTensor input of the exported program is known to the proxy mode: its ops are recorded
  as they are, and torch's subclass handling runs ``__torch_dispatch__`` later.)
* ``__tensor_flatten__`` / ``__tensor_unflatten__`` let a QTensor be a traced input or output.
"""

import threading
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import torch
from torch._ops import OpOverload
from torch.utils._mode_utils import no_dispatch

from . import _composed, _ops
from . import quantizer as _quantizer
from .quantizer import PerChannelAffine, PerTensorAffine, Quantizer

aten = torch.ops.aten
_q = torch.ops.qplugin


class QTensor(torch.Tensor):
    """QTensor(data, quantizer), or QTensor(data, scale, zero_point) for a per-tensor affine one
    (the form torch.compile can build inside a graph; data of dtype uint8 / int8 / int32)."""

    @staticmethod
    def __new__(
        cls: type, data: torch.Tensor, quantizer: Union[Quantizer, float], zero_point: Optional[int] = None
    ) -> "QTensor":
        return torch.Tensor._make_wrapper_subclass(
            cls,
            data.shape,
            strides=data.stride(),
            storage_offset=data.storage_offset(),
            dtype=data.dtype,
            device=data.device,
            requires_grad=False,
        )

    def __init__(
        self, data: torch.Tensor, quantizer: Union[Quantizer, float], zero_point: Optional[int] = None
    ) -> None:
        if zero_point is not None:
            quantizer = _checked_per_tensor(quantizer, zero_point, data.dtype)
        if not isinstance(quantizer, Quantizer):
            raise TypeError(f"torch_qplugin.QTensor: quantizer should be a Quantizer, got {type(quantizer).__name__}")
        if data.dtype != quantizer.dtype:
            raise TypeError(
                f"torch_qplugin.QTensor: data should have the quantizer's dtype {quantizer.dtype}, got {data.dtype}"
            )
        self._data = data
        self.quantizer = quantizer

    # ---- what a quantized tensor answers ----
    def int_repr(self) -> torch.Tensor:
        return self._data

    def dequantize(self) -> torch.Tensor:
        return self.quantizer.dequantize(self._data)

    def qscheme(self) -> torch.qscheme:
        return self.quantizer.qscheme

    def _per_tensor(self, what: str) -> PerTensorAffine:
        if not isinstance(self.quantizer, PerTensorAffine):
            raise RuntimeError(
                f"torch_qplugin.QTensor.{what}: the tensor should be per-tensor affine, got {self.quantizer!r}"
            )
        return self.quantizer

    def _per_channel(self, what: str) -> PerChannelAffine:
        if not isinstance(self.quantizer, PerChannelAffine):
            raise RuntimeError(
                f"torch_qplugin.QTensor.{what}: the tensor should be per-channel affine, got {self.quantizer!r}"
            )
        return self.quantizer

    def q_scale(self) -> float:
        return self._per_tensor("q_scale").scale

    def q_zero_point(self) -> int:
        return self._per_tensor("q_zero_point").zero_point

    def q_per_channel_scales(self) -> torch.Tensor:
        return self._per_channel("q_per_channel_scales").scales

    def q_per_channel_zero_points(self) -> torch.Tensor:
        return self._per_channel("q_per_channel_zero_points").zero_points

    def q_per_channel_axis(self) -> int:
        return self._per_channel("q_per_channel_axis").axis

    def __repr__(self) -> str:
        return f"QTensor({self._data!r}, quantizer={self.quantizer!r})"

    # ---- tracing (torch.compile / torch.export) ----
    def __tensor_flatten__(self) -> Tuple[List[str], Tuple[Any, ...]]:
        qz = self.quantizer
        if isinstance(qz, PerTensorAffine):
            return ["_data"], ("tensor", qz.scale, qz.zero_point, qz.dtype)
        return ["_data", "_scales", "_zero_points"], ("channel", qz.axis, qz.dtype)

    @property
    def _scales(self):
        return self.quantizer.scales

    @property
    def _zero_points(self):
        return self.quantizer.zero_points

    @staticmethod
    def __tensor_unflatten__(
        inner: Dict[str, torch.Tensor], ctx: Tuple[Any, ...], outer_size: Sequence[int], outer_stride: Sequence[int]
    ) -> "QTensor":
        if ctx[0] == "tensor":
            qz = PerTensorAffine.__new__(PerTensorAffine)  # already checked when first made
            qz.scale, qz.zero_point, qz.dtype = ctx[1], ctx[2], ctx[3]
        else:
            qz = PerChannelAffine.__new__(PerChannelAffine)
            qz.scales, qz.zero_points, qz.axis, qz.dtype = inner["_scales"], inner["_zero_points"], ctx[1], ctx[2]
        return QTensor(inner["_data"], qz)

    @classmethod
    def __torch_function__(
        cls,
        func: Callable[..., Any],
        types: Tuple[type, ...],
        args: Tuple[Any, ...] = (),
        kwargs: Optional[Dict[str, Any]] = None,
    ) -> Any:
        # torch's default without converting results to QTensor (they come from __torch_dispatch__),
        # and under torch.export's pre-dispatch tracing, below its proxy mode (module docstring).
        kwargs = kwargs or {}
        with torch._C.DisableTorchFunctionSubclass():
            if (
                torch.compiler.is_dynamo_compiling()
                or not torch._C._dispatch_tls_is_dispatch_key_included(_PRE)
                or _all_traced(args, kwargs)
            ):
                return func(*args, **kwargs)
            return _below_pre_dispatch(func, args, kwargs)

    @classmethod
    def __torch_dispatch__(
        cls,
        func: OpOverload,
        types: Tuple[type, ...],
        args: Tuple[Any, ...] = (),
        kwargs: Optional[Dict[str, Any]] = None,
    ) -> Any:
        kwargs = kwargs or {}
        if _TLS.below_pre_dispatch:
            return _with_pre_dispatch(func, args, kwargs)
        handler = _HANDLERS.get(func)
        if handler is None:
            handler = _HANDLERS.get(func.overloadpacket)
        if handler is None:
            raise NotImplementedError(
                f"torch_qplugin.QTensor: {func} is not supported on a QTensor (dequantize() it first, "
                f"or use a torch_qplugin op)"
            )
        return handler(func, args, kwargs)


_quantizer._QTENSOR.append(QTensor)  # what Quantizer.quantize() returns

_PRE = torch._C.DispatchKey.PreDispatch


class _State(threading.local):
    below_pre_dispatch = False  # inside _below_pre_dispatch, PreDispatch excluded by it


_TLS = _State()


def _all_traced(args: Tuple[Any, ...], kwargs: Dict[str, Any]):
    """Whether torch.export's pre-dispatch proxy mode knows every QTensor argument (a QTensor input
    of the exported program: the mode records ops on it as they are)."""
    from torch.fx.experimental.proxy_tensor import has_proxy_slot

    mode = torch._ops.mode_stack_state_for_pre_dispatch().get(0)
    qts = [a for a in torch.utils._pytree.tree_leaves((args, kwargs)) if isinstance(a, QTensor)]
    return mode is not None and all(has_proxy_slot(a, mode.tracer) for a in qts)


def _set_pre_dispatch_excluded(excluded: bool):
    torch._C._dispatch_tls_set_dispatch_key_excluded(_PRE, excluded)


def _below_pre_dispatch(func: Callable[..., Any], args: Tuple[Any, ...], kwargs: Dict[str, Any]):
    """func(*args, **kwargs) with the PreDispatch key (torch.export's proxy mode) excluded, so that
    its QTensor arguments reach __torch_dispatch__ (through autograd's decompositions and the fake
    mode, which both pass a QTensor on)."""
    was_excluded = torch._C._dispatch_tls_is_dispatch_key_excluded(_PRE)
    was_below = _TLS.below_pre_dispatch
    _set_pre_dispatch_excluded(True)
    _TLS.below_pre_dispatch = True
    try:
        return func(*args, **kwargs)
    finally:
        _TLS.below_pre_dispatch = was_below
        _set_pre_dispatch_excluded(was_excluded)


def _with_pre_dispatch(func: OpOverload, args: Tuple[Any, ...], kwargs: Dict[str, Any]):
    """QTensor's handler for func, PreDispatch included again: the plain ops it calls on the
    integers are what torch.export's proxy mode records."""
    _set_pre_dispatch_excluded(False)
    _TLS.below_pre_dispatch = False
    try:
        return QTensor.__torch_dispatch__(func, (), args, kwargs)
    finally:
        _TLS.below_pre_dispatch = True
        _set_pre_dispatch_excluded(True)


# ---- handlers ----------------------------------------------------------------------------------
_HANDLERS = {}


def _register(*funcs: Any):
    def deco(fn: Callable[..., Any]):
        for f in funcs:
            _HANDLERS[f] = fn
        return fn

    return deco


def _unwrap(x: Any):
    return x._data if isinstance(x, QTensor) else x


def _qp(x: Any, func: OpOverload):
    """(data, scale, zero_point) of a per-tensor QTensor argument of func."""
    if not isinstance(x, QTensor):
        raise TypeError(f"torch_qplugin.QTensor: {func} expects QTensor inputs, got {type(x).__name__}")
    if not isinstance(x.quantizer, PerTensorAffine):
        raise NotImplementedError(
            f"torch_qplugin.QTensor: {func} is supported on per-tensor QTensors only, got {x.quantizer!r}"
        )
    return x._data, x.quantizer.scale, x.quantizer.zero_point


def _wrap(data: torch.Tensor, qz: Quantizer):
    return QTensor(data, qz)


def _like(x: QTensor, data: torch.Tensor):
    return QTensor(data, x.quantizer)


_RANGES = {torch.uint8: (0, 255), torch.int8: (-128, 127), torch.int32: (-(2**31), 2**31 - 1)}


def _checked_per_tensor(scale: float, zero_point: int, dtype: torch.dtype):
    """PerTensorAffine of QTensor(data, scale, zero_point): the ops' checks in Python (no op call
    per layer; plain modules make one QTensor per layer)."""
    try:
        s, z = float(scale), int(zero_point)
    except (TypeError, ValueError, OverflowError):
        s, z = float("nan"), None
    if not 0 < s < float("inf"):
        raise ValueError(f"torch_qplugin.QTensor: scale should be a positive finite number, got {scale!r}")
    lo, hi = _RANGES.get(dtype, (0, -1))
    if lo > hi:
        raise TypeError(f"torch_qplugin.QTensor: data should have dtype uint8, int8 or int32, got {dtype}")
    if z is None or z != zero_point or not lo <= z <= hi:
        raise ValueError(
            f"torch_qplugin.QTensor: zero_point should be an int in [{lo}, {hi}] for {dtype}, got {zero_point!r}"
        )
    return _per_tensor(s, z, dtype)


# The per-tensor quantizers plain modules' outputs carry, checked once per (scale, zero_point,
# dtype): a module's output qparams are constants, so each layer reuses one immutable quantizer.
_OUT_QUANTIZERS: Dict[Tuple[float, int, torch.dtype], PerTensorAffine] = {}
_make_wrapper = torch.Tensor._make_wrapper_subclass


def _out_quantizer(scale: float, zero_point: int, dtype: torch.dtype) -> PerTensorAffine:
    """The shared, checked quantizer of a plain module's output at (scale, zero_point, dtype)."""
    key = (scale, zero_point, dtype)
    qz = _OUT_QUANTIZERS.get(key)
    if qz is None:
        qz = _checked_per_tensor(scale, zero_point, dtype)
        if len(_OUT_QUANTIZERS) >= 4096:  # scales computed per call (add_scalar) must not pile up
            _OUT_QUANTIZERS.clear()
        _OUT_QUANTIZERS[key] = qz
    return qz


def _wrap_out(data: torch.Tensor, scale: float, zero_point: int) -> "QTensor":
    """QTensor(data, scale, zero_point) for a plain module's output, without QTensor.__init__'s
    per-call checks (the quantizer is checked when first made). Traced (torch.compile /
    torch.export), the public constructor, which tracing knows."""
    if torch.compiler.is_compiling():
        return QTensor(data, scale, zero_point)
    dtype = data.dtype
    qz = _OUT_QUANTIZERS.get((scale, zero_point, dtype))
    return _wrap_eager(data, _out_quantizer(scale, zero_point, dtype) if qz is None else qz)


def _wrap_eager(data: torch.Tensor, qz: PerTensorAffine) -> "QTensor":
    """QTensor(data, qz) in eager mode (not traced) for a checked per-tensor ``qz`` (one of data's
    dtype, else the one of data's dtype at qz's scale and zero point)."""
    dtype = data.dtype
    if dtype is not qz.dtype:
        return _wrap_eager(data, _out_quantizer(qz.scale, qz.zero_point, dtype))
    offset = data.storage_offset()  # passed only where nonzero: each keyword costs in the call
    if offset:
        out = _make_wrapper(
            QTensor, data.shape, strides=data.stride(), storage_offset=offset, dtype=dtype, device=data.device
        )
    else:
        out = _make_wrapper(QTensor, data.shape, strides=data.stride(), dtype=dtype, device=data.device)
    attrs = out.__dict__
    attrs["_data"] = data
    attrs["quantizer"] = qz
    return out


def _per_tensor(scale: float, zero_point: int, dtype: torch.dtype):
    qz = PerTensorAffine.__new__(PerTensorAffine)  # values come from a checked op
    qz.scale, qz.zero_point, qz.dtype = float(scale), int(zero_point), dtype
    return qz


# Ops that only move, view or copy the integers: the same op on the data, the same quantizer.
# Per-channel tensors keep their quantizer only where the channel axis stays put (copies).
_MOVE = [
    aten.view.default,
    aten._unsafe_view.default,
    aten.permute.default,
    aten.select.int,
    aten.slice.Tensor,
    aten.t.default,
    aten.transpose.int,
    aten.unsqueeze.default,
    aten.squeeze.dim,
    aten.squeeze.dims,
    aten.squeeze.default,
    aten.expand.default,
    aten.alias.default,
    aten._reshape_alias.default,
    aten.unfold.default,
    aten.as_strided.default,
    aten.split.Tensor,
    aten.split_with_sizes.default,
    aten.unbind.int,
    aten.chunk.default,
    aten.narrow.default,
    aten.flip.default,
    aten.roll.default,
    aten.repeat.default,
    aten.channel_shuffle.default,
    # composite view ops reach __torch_dispatch__ undecomposed under torch.inference_mode
    aten.flatten.using_ints,
    aten.reshape.default,
    aten.unflatten.int,
    aten.movedim.int,
    aten.index_select.default,
]
_COPY = [aten.clone.default, aten.detach.default, aten._to_copy.default, aten.contiguous.default]


@_register(*_MOVE)
def _move(func: OpOverload, args: Tuple[Any, ...], kwargs: Dict[str, Any]):
    x = args[0]
    if not isinstance(x.quantizer, PerTensorAffine):
        raise NotImplementedError(
            f"torch_qplugin.QTensor: {func} on a per-channel QTensor is not supported (it may move the channel axis)"
        )
    out = func(x._data, *args[1:], **kwargs)
    if isinstance(out, (list, tuple)):
        return type(out)(_like(x, o) for o in out)
    return _like(x, out)


@_register(aten.as_strided_.default)
def _as_strided_(func: OpOverload, args: Tuple[Any, ...], kwargs: Dict[str, Any]):
    # torch's decompositions restride their results in place (adaptive_avg_pool2d to 1x1 of a
    # channels_last input ends in as_strided_ of the mean): the integers and the wrapper's own
    # sizes and strides, which the Python key excluded lets the CPU kernel set.
    x = args[0]
    if not isinstance(x.quantizer, PerTensorAffine):
        raise NotImplementedError(
            f"torch_qplugin.QTensor: {func} on a per-channel QTensor is not supported (it may move the channel axis)"
        )
    func(x._data, *args[1:], **kwargs)
    with no_dispatch():
        func(x, *args[1:], **kwargs)
    return x


@_register(*_COPY)
def _copy(func: OpOverload, args: Tuple[Any, ...], kwargs: Dict[str, Any]):
    x = args[0]
    if func is aten._to_copy.default and kwargs.get("dtype", x.dtype) != x.dtype:
        raise NotImplementedError(
            f"torch_qplugin.QTensor: {func} to dtype {kwargs['dtype']} is not supported "
            f"(dequantize() or int_repr() first)"
        )
    return _like(x, func(x._data, *args[1:], **kwargs))


def _cmp(plain: Callable[..., Any]):
    def handler(func: OpOverload, args: Tuple[Any, ...], kwargs: Dict[str, Any]):
        a, other = args[0], args[1]
        da, sa, za = _qp(a, func)
        if isinstance(other, QTensor):
            db, sb, zb = _qp(other, func)
            return plain.default(da, sa, za, db, sb, zb)
        if torch.is_tensor(other):
            raise NotImplementedError(f"torch_qplugin.QTensor: {func} between a QTensor and a plain tensor")
        return plain.Scalar(da, sa, za, other)

    return handler


for _name in ("eq", "ne", "ge", "le", "gt", "lt"):
    _register(getattr(aten, _name).Tensor, getattr(aten, _name).Scalar)(_cmp(getattr(_q, "plain_" + _name)))


@_register(aten.max.default, aten.min.default)
def _max_all(func: OpOverload, args: Tuple[Any, ...], kwargs: Dict[str, Any]):
    d, s, z = _qp(args[0], func)
    op = _q.plain_max if func is aten.max.default else _q.plain_min
    return _like(args[0], op.default(d, s, z))


@_register(aten.max.dim, aten.min.dim)
def _max_dim(func: OpOverload, args: Tuple[Any, ...], kwargs: Dict[str, Any]):
    d, s, z = _qp(args[0], func)
    op = _q.plain_max if func is aten.max.dim else _q.plain_min
    v, i = op.dim(d, s, z, *args[1:], **kwargs)
    return _like(args[0], v), i


@_register(aten.argmax.default, aten.argmin.default)
def _argmax(func: OpOverload, args: Tuple[Any, ...], kwargs: Dict[str, Any]):
    d, s, z = _qp(args[0], func)
    op = _q.plain_argmax if func is aten.argmax.default else _q.plain_argmin
    return op(d, s, z, *args[1:], **kwargs)


@_register(aten.mean.dim, aten.mean.default)
def _mean(func: OpOverload, args: Tuple[Any, ...], kwargs: Dict[str, Any]):
    d, _, _ = _qp(args[0], func)
    if kwargs.get("dtype") is not None:
        raise NotImplementedError(f"torch_qplugin.QTensor: {func} with a dtype is not supported")
    kw = {k: v for k, v in kwargs.items() if k != "dtype"}
    return _like(args[0], _q.plain_mean(d, *args[1:], **kw))


@_register(aten.relu.default)
def _relu(func: OpOverload, args: Tuple[Any, ...], kwargs: Dict[str, Any]):
    return _like(args[0], _q.plain_relu(*_qp(args[0], func)))


# torch's fixed output qparams of the [0, 1]-valued activations on quantized tensors: scale 1 / 256
# over the dtype's 256 steps
_UNIT_INTERVAL_ZERO_POINT = {torch.uint8: 0, torch.int8: -128}


@_register(aten.sigmoid.default, aten.hardsigmoid.default)
def _unit_interval(func: OpOverload, args: Tuple[Any, ...], kwargs: Dict[str, Any]):
    d, s, z = _qp(args[0], func)
    if d.dtype not in _UNIT_INTERVAL_ZERO_POINT:
        raise NotImplementedError(
            f"torch_qplugin.QTensor: {func} of a {d.dtype} QTensor is not supported (uint8 or int8)"
        )
    plain = _q.plain_sigmoid if func is aten.sigmoid.default else _q.plain_hardsigmoid
    zo = _UNIT_INTERVAL_ZERO_POINT[d.dtype]
    return _wrap(plain(d, s, z, 1.0 / 256, zo), _per_tensor(1.0 / 256, zo, d.dtype))


@_register(aten.hardswish.default, aten.leaky_relu.default)
def _same_qparams_activation(func: OpOverload, args: Tuple[Any, ...], kwargs: Dict[str, Any]):
    d, s, z = _qp(args[0], func)
    if func is aten.hardswish.default:
        return _like(args[0], _q.plain_hardswish(d, s, z, s, z))
    slope = args[1] if len(args) > 1 else kwargs.get("negative_slope", 0.01)
    return _like(args[0], _q.plain_leaky_relu(d, s, z, slope, s, z))


@_register(aten.hardtanh.default, aten.clamp.default)
def _clamp(func: OpOverload, args: Tuple[Any, ...], kwargs: Dict[str, Any]):
    d, s, z = _qp(args[0], func)
    lo = args[1] if len(args) > 1 else kwargs.get("min", -1.0 if func is aten.hardtanh.default else None)
    hi = args[2] if len(args) > 2 else kwargs.get("max", 1.0 if func is aten.hardtanh.default else None)
    return _like(args[0], _q.plain_clamp(d, s, z, lo, hi))


def _pair(v: Union[int, Sequence[int]]):
    v = list(v) if isinstance(v, (list, tuple)) else [v]
    return v * 2 if len(v) == 1 else v


def _pool_args(args: Tuple[Any, ...], kwargs: Dict[str, Any]):
    names = ("kernel_size", "stride", "padding", "dilation", "ceil_mode")
    vals = dict(zip(names, args[1:]), **kwargs)
    kernel = _pair(vals["kernel_size"])
    stride = _pair(vals["stride"]) if vals.get("stride") else kernel
    return kernel, stride, _pair(vals.get("padding", 0)), _pair(vals.get("dilation", 1)), vals.get("ceil_mode", False)


@_register(aten.max_pool2d.default)
def _max_pool2d(func: OpOverload, args: Tuple[Any, ...], kwargs: Dict[str, Any]):
    d, _, _ = _qp(args[0], func)
    return _like(args[0], _q.plain_max_pool2d(d, *_pool_args(args, kwargs)))


@_register(aten.max_pool2d_with_indices.default)
def _max_pool2d_with_indices(func: OpOverload, args: Tuple[Any, ...], kwargs: Dict[str, Any]):
    # F.max_pool2d reaches here (torch's max_pool2d decomposes). The indices of the largest
    # integers are those of the largest real values (scale > 0); torch finds them on the exact
    # float copy of the integers.
    d, _, _ = _qp(args[0], func)
    pool = _pool_args(args, kwargs)
    indices = aten.max_pool2d_with_indices.default(d.float(), *pool)[1]
    return _like(args[0], _q.plain_max_pool2d(d, *pool)), indices


@_register(aten.avg_pool2d.default)
def _avg_pool2d(func: OpOverload, args: Tuple[Any, ...], kwargs: Dict[str, Any]):
    d, _, z = _qp(args[0], func)
    names = ("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override")
    vals = dict(zip(names, args[1:]), **kwargs)
    kernel = _pair(vals["kernel_size"])
    stride = _pair(vals["stride"]) if vals.get("stride") else kernel
    return _like(
        args[0],
        _q.plain_avg_pool2d(
            d,
            z,
            kernel,
            stride,
            _pair(vals.get("padding", 0)),
            vals.get("ceil_mode", False),
            vals.get("count_include_pad", True),
            vals.get("divisor_override"),
        ),
    )


@_register(aten._adaptive_avg_pool2d.default, aten.adaptive_avg_pool2d.default)
def _adaptive(func: OpOverload, args: Tuple[Any, ...], kwargs: Dict[str, Any]):
    d, _, _ = _qp(args[0], func)
    return _like(args[0], _q.plain_adaptive_avg_pool2d(d, list(args[1])))


@_register(aten.upsample_nearest2d.default, aten.upsample_nearest2d.vec)
def _upsample(func: OpOverload, args: Tuple[Any, ...], kwargs: Dict[str, Any]):
    d, _, _ = _qp(args[0], func)
    size = args[1]
    if size is None:
        raise NotImplementedError(
            f"torch_qplugin.QTensor: {func} needs an output size (scale factors are not supported)"
        )
    return _like(args[0], _q.plain_upsample_nearest2d(d, list(size)))


def _n(v: Union[int, Sequence[int]], n: int):
    v = list(v) if isinstance(v, (list, tuple)) else [v]
    return v * n if len(v) == 1 else v


@_register(aten.max_pool3d_with_indices.default)
def _max_pool3d_with_indices(func: OpOverload, args: Tuple[Any, ...], kwargs: Dict[str, Any]):
    # values: the 2-D kernel, separably (torch_qplugin._composed); indices as max_pool2d's
    d, _, _ = _qp(args[0], func)
    names = ("kernel_size", "stride", "padding", "dilation", "ceil_mode")
    vals = dict(zip(names, args[1:]), **kwargs)
    kernel = _n(vals["kernel_size"], 3)
    pool = (
        kernel,
        _n(vals["stride"], 3) if vals.get("stride") else kernel,
        _n(vals.get("padding", 0), 3),
        _n(vals.get("dilation", 1), 3),
        vals.get("ceil_mode", False),
    )
    x = d if d.is_contiguous() or _composed.is_channels_last_3d(d) else d.contiguous()
    values = _composed.max_pool3d(x, *pool, _q.plain_max_pool2d)
    return _like(args[0], values), aten.max_pool3d_with_indices.default(d.float(), *pool)[1]


@_register(aten.avg_pool3d.default)
def _avg_pool3d(func: OpOverload, args: Tuple[Any, ...], kwargs: Dict[str, Any]):
    d, _, z = _qp(args[0], func)
    names = ("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override")
    vals = dict(zip(names, args[1:]), **kwargs)
    kernel = _n(vals["kernel_size"], 3)
    stride = _n(vals["stride"], 3) if vals.get("stride") else kernel
    return _like(
        args[0],
        _q.plain_avg_pool3d(
            d,
            z,
            kernel,
            stride,
            _n(vals.get("padding", 0), 3),
            vals.get("ceil_mode", False),
            vals.get("count_include_pad", True),
            vals.get("divisor_override"),
        ),
    )


@_register(aten._adaptive_avg_pool3d.default, aten.adaptive_avg_pool3d.default)
def _adaptive3d(func: OpOverload, args: Tuple[Any, ...], kwargs: Dict[str, Any]):
    d, _, _ = _qp(args[0], func)
    return _like(args[0], _q.plain_adaptive_avg_pool3d(d, _n(args[1], 3)))


def _output_size(func: OpOverload, args: Tuple[Any, ...], n: int):
    size = args[1]
    if size is None:
        raise NotImplementedError(
            f"torch_qplugin.QTensor: {func} needs an output size (scale factors are not supported)"
        )
    return _n(size, n)


@_register(aten.upsample_nearest1d.default, aten.upsample_nearest1d.vec)
def _upsample1d(func: OpOverload, args: Tuple[Any, ...], kwargs: Dict[str, Any]):
    d, _, _ = _qp(args[0], func)
    return _like(args[0], _composed.upsample_nearest1d(d, _output_size(func, args, 1), _q.plain_upsample_nearest2d))


@_register(aten.upsample_nearest3d.default, aten.upsample_nearest3d.vec)
def _upsample3d(func: OpOverload, args: Tuple[Any, ...], kwargs: Dict[str, Any]):
    d, _, _ = _qp(args[0], func)
    x = d if d.is_contiguous() or _composed.is_channels_last_3d(d) else d.contiguous()
    return _like(args[0], _composed.upsample_nearest3d(x, _output_size(func, args, 3), _q.plain_upsample_nearest2d))


@_register(
    aten._upsample_nearest_exact1d.default,
    aten._upsample_nearest_exact2d.default,
    aten._upsample_nearest_exact3d.default,
)
def _upsample_nearest_exact(func: OpOverload, args: Tuple[Any, ...], kwargs: Dict[str, Any]):
    d, _, _ = _qp(args[0], func)
    return _like(args[0], _composed.nearest_exact(d, list(args[1]), list(args[2:]) + list(kwargs.values())))


@_register(aten.upsample_bilinear2d.default)
def _upsample_bilinear(func: OpOverload, args: Tuple[Any, ...], kwargs: Dict[str, Any]):
    d, _, _ = _qp(args[0], func)
    return _like(args[0], _q.plain_upsample_bilinear2d(d, *args[1:], **kwargs))


@_register(aten.tanh.default)
def _tanh(func: OpOverload, args: Tuple[Any, ...], kwargs: Dict[str, Any]):
    # torch's fixed output qparams of a quantized tanh: scale 2 / 256 over the dtype's 256 steps
    d, s, z = _qp(args[0], func)
    zo = {torch.uint8: 128, torch.int8: 0}.get(d.dtype)
    if zo is None:
        raise NotImplementedError(
            f"torch_qplugin.QTensor: {func} of a {d.dtype} QTensor is not supported (uint8 or int8)"
        )
    out = torch.empty_like(d)
    _composed.look_up(_composed.table_of(torch.tanh, d.dtype, s, z, 2.0 / 256, zo), d, out)
    return _wrap(out, _per_tensor(2.0 / 256, zo, d.dtype))


@_register(aten.sum.dim_IntList, aten.sum.default)
def _sum(func: OpOverload, args: Tuple[Any, ...], kwargs: Dict[str, Any]):
    # N times the mean: the mean's integers with the scale times N (as the quantized tier's aten::sum)
    d, s, z = _qp(args[0], func)
    if kwargs.get("dtype") is not None:
        raise NotImplementedError(f"torch_qplugin.QTensor: {func} with a dtype is not supported")
    dim = args[1] if len(args) > 1 else kwargs.get("dim")
    keepdim = args[2] if len(args) > 2 else kwargs.get("keepdim", False)
    n = _composed.reduced_count(f"torch_qplugin.QTensor: {func}", d.shape, dim)
    return _wrap(_q.plain_mean(d, None if dim is None else list(dim), keepdim), _per_tensor(s * n, z, d.dtype))


@_register(aten.stack.default)
def _stack(func: OpOverload, args: Tuple[Any, ...], kwargs: Dict[str, Any]):
    xs = list(args[0])  # not empty: a QTensor brought the call here
    dim = args[1] if len(args) > 1 else kwargs.get("dim", 0)
    dim = dim + xs[0].dim() + 1 if dim < 0 else dim
    return _HANDLERS[_q.cat.default](func, ([x.unsqueeze(dim) for x in xs], dim, None, None), {})


def _in_place(x: QTensor, out: QTensor):
    """x's integers set to out's; x keeps its quantizer."""
    x._data.copy_(out._data)
    return x


@_register(aten.copy_.default)
def _copy_(func: OpOverload, args: Tuple[Any, ...], kwargs: Dict[str, Any]):
    # torch's semantics: from a quantized source, its integers and its quantizer (no requantizing);
    # from a float32 one, quantized with self's per-tensor qparams
    x, src = args[0], args[1]
    if not isinstance(x, QTensor):
        raise NotImplementedError(
            f"torch_qplugin.QTensor: {func} of a QTensor into a {x.dtype} tensor is not "
            f"supported (dequantize() it first)"
        )
    if isinstance(src, QTensor):
        if src.dtype != x.dtype:
            raise TypeError(f"torch_qplugin.QTensor: {func}: src should have self's dtype {x.dtype}, got {src.dtype}")
        if isinstance(src.quantizer, PerChannelAffine) != isinstance(x.quantizer, PerChannelAffine):
            raise TypeError(
                f"torch_qplugin.QTensor: {func}: src should have self's qscheme, got {src.quantizer!r} "
                f"into {x.quantizer!r}"
            )
        x._data.copy_(src._data)
        x.quantizer = src.quantizer
        return x
    d, s, z = _qp(x, func)
    if src.dtype != torch.float32:
        raise TypeError(f"torch_qplugin.QTensor: {func}: src should be float32 or a QTensor, got {src.dtype}")
    d.copy_(_q.plain_quantize_per_tensor(src.expand_as(d), s, z, d.dtype))
    return x


@_register(aten.fill_.Scalar, aten.fill_.Tensor)
def _fill_(func: OpOverload, args: Tuple[Any, ...], kwargs: Dict[str, Any]):
    d, s, z = _qp(args[0], func)
    value = args[1]
    if torch.is_tensor(value):
        if isinstance(value, QTensor) or value.dim() != 0:
            raise NotImplementedError(
                f"torch_qplugin.QTensor: {func}: value should be a number or a 0-dim float "
                f"tensor, got a {type(value).__name__} of shape {tuple(value.shape)}"
            )
        value = value.item()
    d.fill_(_q.plain_quantize_per_tensor(torch.tensor([value], dtype=torch.float32), s, z, d.dtype).item())
    return args[0]


@_register(aten.clamp_min.default, aten.clamp_max.default)
def _clamp_one_side(func: OpOverload, args: Tuple[Any, ...], kwargs: Dict[str, Any]):
    d, s, z = _qp(args[0], func)
    bounds = (args[1], None) if func is aten.clamp_min.default else (None, args[1])
    return _like(args[0], _q.plain_clamp(d, s, z, *bounds))


@_register(aten.clamp_.default, aten.hardtanh_.default, aten.relu_.default)
def _clamp_in_place(func: OpOverload, args: Tuple[Any, ...], kwargs: Dict[str, Any]):
    out_of_place = {
        aten.clamp_.default: aten.clamp.default,
        aten.hardtanh_.default: aten.hardtanh.default,
        aten.relu_.default: aten.relu.default,
    }[func]
    return _in_place(args[0], _HANDLERS[out_of_place](out_of_place, args, kwargs))


# ---- qplugin:: ops on QTensors: the plain twin with the QTensor's qparams ------------------------
def _plain_same_qparams(plain: Callable[..., Any]):
    """Ops whose output keeps the input's qparams (clamp family, pooling): args after the input as given."""

    def handler(func: OpOverload, args: Tuple[Any, ...], kwargs: Dict[str, Any]):
        d, s, z = _qp(args[0], func)
        return _like(args[0], plain(d, s, z, *args[1:], **kwargs))

    return handler


def _plain_out_qparams(plain: Callable[..., Any], out_at: int):
    """Ops with explicit output qparams at positions out_at (scale, zero_point) of the quantized schema."""

    def handler(func: OpOverload, args: Tuple[Any, ...], kwargs: Dict[str, Any]):
        d, s, z = _qp(args[0], func)
        out = plain(d, s, z, *args[1:], **kwargs)
        return _wrap(out, _per_tensor(args[out_at], args[out_at + 1], d.dtype))

    return handler


def _binary(plain: Callable[..., Any]):
    def handler(func: OpOverload, args: Tuple[Any, ...], kwargs: Dict[str, Any]):
        da, sa, za = _qp(args[0], func)
        db, sb, zb = _qp(args[1], func)
        return _wrap(plain(da, sa, za, db, sb, zb, args[2], args[3]), _per_tensor(args[2], args[3], da.dtype))

    return handler


def _scalar(plain: Callable[..., Any], plain_qparams: Callable[..., Any]):
    def handler(func: OpOverload, args: Tuple[Any, ...], kwargs: Dict[str, Any]):
        d, s, z = _qp(args[0], func)
        so, zo = plain_qparams(s, z, d.dtype, args[1])
        return _wrap(plain(d, s, z, args[1]), _per_tensor(so, zo, d.dtype))

    return handler


def _with_number(plain: Callable[..., Any], plain_qparams: Callable[..., Any]):
    """aten add / mul of a QTensor and a number (which torch hands over as a 0-dim tensor)."""
    scalar = _scalar(plain, plain_qparams)

    def handler(func: OpOverload, args: Tuple[Any, ...], kwargs: Dict[str, Any]):
        other = args[1]
        if isinstance(other, QTensor) or (torch.is_tensor(other) and other.dim() != 0):
            raise NotImplementedError(
                f"torch_qplugin.QTensor: {func} of a QTensor and a tensor is not supported "
                f"(it needs the output's qparams: use torch_qplugin.ops or FloatFunctional)"
            )
        value = other.item() if torch.is_tensor(other) else other
        return scalar(func, (args[0], value * kwargs.get("alpha", args[2] if len(args) > 2 else 1)), {})

    return handler


def _register_qplugin_ops():
    # aten ops on QTensors: onto the plain ops
    for f, plain, qp in (
        (aten.add.Tensor, _q.plain_add_scalar, _q.plain_add_scalar_qparams),
        (aten.add.Scalar, _q.plain_add_scalar, _q.plain_add_scalar_qparams),
        (aten.mul.Tensor, _q.plain_mul_scalar, _q.plain_mul_scalar_qparams),
        (aten.mul.Scalar, _q.plain_mul_scalar, _q.plain_mul_scalar_qparams),
    ):
        _HANDLERS[f] = _with_number(plain, qp)
    cat = _qplugin_cat(_q.plain_cat)
    _HANDLERS[aten.cat.default] = lambda f, a, k: cat(
        f, (a[0], a[1] if len(a) > 1 else k.get("dim", 0), None, None), {}
    )
    for f, plain in (
        (aten.sort.default, _q.plain_sort),
        (aten.sort.stable, _q.plain_sort),
        (aten.topk.default, _q.plain_topk),
    ):
        _HANDLERS[f] = _values_indices(plain)
    # the quantized tier's qplugin ops on QTensors (absent from a plain-only build): onto the plain ops
    if not _ops.has_quantized():
        return
    for name in ("add", "add_relu", "mul", "mul_relu", "matmul"):
        _HANDLERS[getattr(_q, name).default] = _binary(getattr(_q, "plain_" + name))
    for name, qp in (
        ("add_scalar", _q.plain_add_scalar_qparams),
        ("add_scalar_relu", _q.plain_add_scalar_qparams),
        ("mul_scalar", _q.plain_mul_scalar_qparams),
    ):
        _HANDLERS[getattr(_q, name).default] = _scalar(getattr(_q, "plain_" + name), qp)
    _HANDLERS[_q.cat.default] = cat
    _HANDLERS[_q.cat_relu.default] = _qplugin_cat(_q.plain_cat_relu)
    _HANDLERS[_q.relu.default] = lambda f, a, k: _like(a[0], _q.plain_relu(*_qp(a[0], f)))
    _HANDLERS[_q.relu6.default] = _relu6_q
    _HANDLERS[_q.clamp.default] = _plain_same_qparams(_q.plain_clamp)
    # (quantized schema: qx, negative_slope, inplace, output_scale, output_zero_point)
    _HANDLERS[_q.leaky_relu.default] = _leaky
    for name in ("hardswish", "hardsigmoid", "sigmoid", "elu"):
        _HANDLERS[getattr(_q, name).default] = _plain_out_qparams(getattr(_q, "plain_" + name), 1)
    _HANDLERS[_q.softmax.default] = _plain_out_qparams(_q.plain_softmax, 2)
    _HANDLERS[_q.layer_norm.default] = _plain_out_qparams(_q.plain_layer_norm, 5)
    _HANDLERS[_q.batch_norm2d.default] = _plain_out_qparams(_q.plain_batch_norm2d, 6)
    _HANDLERS[_q.max_pool2d.default] = lambda f, a, k: _like(a[0], _q.plain_max_pool2d(_qp(a[0], f)[0], *a[1:]))
    _HANDLERS[_q.avg_pool2d.default] = lambda f, a, k: _like(
        a[0], _q.plain_avg_pool2d(_qp(a[0], f)[0], _qp(a[0], f)[2], *a[1:])
    )
    _HANDLERS[_q.adaptive_avg_pool2d.default] = lambda f, a, k: _like(
        a[0], _q.plain_adaptive_avg_pool2d(_qp(a[0], f)[0], *a[1:])
    )
    _HANDLERS[_q.upsample_nearest2d.default] = lambda f, a, k: _like(
        a[0], _q.plain_upsample_nearest2d(_qp(a[0], f)[0], *a[1:])
    )
    _HANDLERS[_q.dequantize.default] = lambda f, a, k: a[0].dequantize()
    _HANDLERS[_q.int_repr.default] = lambda f, a, k: a[0].int_repr().clone()
    _HANDLERS[_q.mean.default] = lambda f, a, k: _like(a[0], _q.plain_mean(_qp(a[0], f)[0], *a[1:], **k))
    _HANDLERS[_q.sort.default] = _values_indices(_q.plain_sort)
    _HANDLERS[_q.topk.default] = _values_indices(_q.plain_topk)
    for name in ("eq", "ne", "ge", "le", "gt", "lt"):
        _HANDLERS[getattr(_q, name).default] = _cmp(getattr(_q, "plain_" + name))
        _HANDLERS[getattr(_q, name).Scalar] = _cmp(getattr(_q, "plain_" + name))


def _qplugin_cat(plain: Callable[..., Any]):
    """qplugin::cat(qx, dim, scale, zero_point): None keeps the first input's qparams."""

    def handler(func: OpOverload, args: Tuple[Any, ...], kwargs: Dict[str, Any]):
        xs, dim = args[0], args[1]
        parts = [_qp(x, func) for x in xs]
        s = parts[0][1] if args[2] is None else args[2]
        z = parts[0][2] if args[3] is None else args[3]
        data = plain([p[0] for p in parts], [p[1] for p in parts], [p[2] for p in parts], dim, s, z)
        return _wrap(data, _per_tensor(s, z, data.dtype))

    return handler


def _values_indices(plain: Callable[..., Any]):
    """sort / topk: (values with the input's qparams, indices)."""

    def handler(func: OpOverload, args: Tuple[Any, ...], kwargs: Dict[str, Any]):
        d, s, z = _qp(args[0], func)
        v, i = plain(d, s, z, *args[1:], **kwargs)
        return _like(args[0], v), i

    return handler


def _relu6_q(func: OpOverload, args: Tuple[Any, ...], kwargs: Dict[str, Any]):
    if args[1] if len(args) > 1 else kwargs.get("inplace", False):
        raise NotImplementedError(f"torch_qplugin.QTensor: {func} with inplace=True is not supported")
    return _like(args[0], _q.plain_relu6(*_qp(args[0], func)))


def _leaky(func: OpOverload, args: Tuple[Any, ...], kwargs: Dict[str, Any]):
    d, s, z = _qp(args[0], func)
    qx, slope, inplace, so, zo = args
    if inplace:
        raise NotImplementedError(f"torch_qplugin.QTensor: {func} with inplace=True is not supported")
    return _wrap(_q.plain_leaky_relu(d, s, z, slope, so, zo), _per_tensor(so, zo, d.dtype))


_register_qplugin_ops()
