"""Plain modules: the converted forms of the quantized modules, without quantized dtypes.

Activations travel between them as ``torch_qplugin.QTensor`` (a uint8 tensor + PerTensorAffine):
a plain module unwraps its input's integers and qparams, runs the plain op (``qplugin::plain_*``)
on them directly and wraps the result, so each layer costs one plain op plus a wrapper (no
``__torch_dispatch__`` round trip per op; docs/design/plain.md). User code between modules
(flatten, view, F.adaptive_avg_pool2d, ...) runs on the QTensor through its dispatch table.

* Weightless modules (activations, pooling, norms, Quantize / DeQuantize, QFunctional) subclass
  their base in _base.py (constructor, attributes, state_dict, ``from_float``, which reads
  observers only) with a plain ``forward``; the quantized twins subclass the same bases, so a
  quantized module becomes plain by a class change (``to_plain``) and both load the same state dicts.
* Linear / Conv keep their weight as plain buffers: ``weight`` (int8), ``w_scales`` (float64,
  1 entry per tensor or one per output channel), ``w_zero_points`` (int64), ``bias`` (float32 or
  None) and ``packed`` (the prepacked uint8 buffer of qplugin::plain_linear_prepack /
  plain_conv_prepack; rebuilt for the running kernel path on load). No TorchScript object:
  state_dict, deepcopy, torch.save and torch.export see tensors only.

No quantized-tensor API and no import of torch's ao package here (test/test_plain_wall.py), and no
import of the quantized tier (test/test_import_graph.py).
"""

from typing import Any, Callable, Dict, List, NoReturn, Optional, Sequence, Tuple, Union

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
from torch.nn.modules.utils import _pair, _single, _triple

__all__ = [
    "Quantize",
    "DeQuantize",
    "ReLU",
    "ReLU6",
    "Hardswish",
    "ELU",
    "LeakyReLU",
    "Sigmoid",
    "Hardsigmoid",
    "Softmax",
    "MaxPool2d",
    "AvgPool2d",
    "AdaptiveAvgPool2d",
    "AvgPool3d",
    "AdaptiveAvgPool3d",
    "BatchNorm2d",
    "BatchNorm3d",
    "BNReLU2d",
    "BNReLU3d",
    "GroupNorm",
    "InstanceNorm1d",
    "InstanceNorm2d",
    "InstanceNorm3d",
    "LayerNorm",
    "PReLU",
    "Dropout",
    "QFunctional",
    "NeverCalibratedQFunctional",
    "Linear",
    "LinearReLU",
    "Conv1d",
    "Conv2d",
    "Conv3d",
    "ConvTranspose1d",
    "ConvTranspose2d",
    "ConvTranspose3d",
    "ConvReLU1d",
    "ConvReLU2d",
    "ConvReLU3d",
    "ConvAdd2d",
    "ConvAddReLU2d",
    "DynamicLinear",
    "DynamicLinearFP16",
    "LSTM",
    "GRU",
    "RNNCell",
    "LSTMCell",
    "GRUCell",
    "Embedding",
    "EmbeddingBag",
    "plain_weight",
]

from ...qtensor import QTensor, _out_quantizer, _wrap_eager, _wrap_out
from ...quantizer import PerTensorAffine, plain_dtype
from ...quantization import _compat as C
from . import _base as B
from ._base import (
    _act_qparams,
    _dynamic_weight_observer,
    _guard_never_calibrated,
    _per_output_channel,
    _weight_observer,
    _weight_only_observer,
)

_q = torch.ops.qplugin
_U8 = torch.uint8
_PER_TENSOR = (torch.per_tensor_affine, torch.per_tensor_symmetric)
_PER_CHANNEL = (torch.per_channel_affine, torch.per_channel_symmetric)
# a size argument: one int for every dim, or one per dim (what _pair / _single / _triple take)
_IntOrSeq = Union[int, Sequence[int]]


# ---- activations in and out ----------------------------------------------------------------
def _in(x: Tensor, who: Union[str, nn.Module]):
    """(integers, scale, zero_point) of a per-tensor QTensor input; ``who``: the caller's name or
    the module itself (named only on error)."""
    if type(x) is not QTensor:
        who = who if isinstance(who, str) else "torch_qplugin.nn.plain." + type(who).__name__
        raise RuntimeError(
            f"{who}: expected a torch_qplugin.QTensor input (plain form), got "
            f"{'a quantized-dtype tensor' if isinstance(x, Tensor) and x.dtype in _quantized_dtypes() else type(x).__name__}"
            f"{'' if not isinstance(x, Tensor) else ' of dtype ' + str(x.dtype)}. Plain modules take QTensors: "
            "a plain Quantize (the converted QuantStub) makes one from float data"
        )
    qz = x.quantizer
    if type(qz) is not PerTensorAffine:
        who = who if isinstance(who, str) else "torch_qplugin.nn.plain." + type(who).__name__
        raise RuntimeError(f"{who}: expected a per-tensor QTensor, got {qz!r}")
    return x._data, qz.scale, qz.zero_point


def _quantized_dtypes():
    return {getattr(torch, n) for n in ("quint8", "qint8", "qint32") if hasattr(torch, n)}


_out = _wrap_out  # (integers, scale, zero_point) -> the output QTensor

_is_compiling = torch.compiler.is_compiling


class _Plain:
    """Mixin: the name shown by repr, and the refusal of torch.jit.script."""

    def _get_name(self):
        return "Plain" + type(self).__name__

    def __prepare_scriptable__(self) -> NoReturn:
        # torch.jit.script calls this on every submodule before compiling any: TorchScript has no
        # QTensor (a torch.Tensor subclass), so a plain model cannot script at all.
        raise RuntimeError(
            f"torch.jit.script: torch_qplugin.nn.plain.{type(self).__name__} is a plain module, and plain models "
            "do not script (TorchScript cannot hold the QTensor activations between them). Deploy a plain model "
            "through torch.export.export, torch_qplugin.deploy.compile or an AOTInductor package "
            "(torch_qplugin.deploy.aoti_package), or script the quantized-dtype form (convert without plain=True)"
        )


class _Retag(_Plain):
    """A weightless plain module: its base in _base.py (constructor, state, from_float, shared
    with the quantized twin) with a plain forward."""

    @classmethod
    def from_quantized(cls, qmod: nn.Module) -> "_Retag":
        """The plain form of a quantized ``qmod`` (same state; qmod itself is left unchanged)."""
        new = cls.__new__(cls)
        new.__dict__ = dict(qmod.__dict__)
        for key in ("_parameters", "_buffers", "_modules", "_forward_pre_hooks", "_forward_hooks"):
            if key in new.__dict__:
                new.__dict__[key] = type(qmod.__dict__[key])(qmod.__dict__[key])
        return new


class Quantize(_Retag, B.Quantize):
    def forward(self, X: Tensor) -> Tensor:
        if type(X) is QTensor:
            raise RuntimeError("torch_qplugin.nn.plain.Quantize: input is already quantized; expected a float tensor")
        scale, zp = self._qparams()
        return _out(_q.plain_quantize_per_tensor(X, scale, zp, plain_dtype(self.dtype)), scale, zp)

    def _qparams(self):
        """(scale, zero_point) as Python numbers, read from the buffers on every eager call. Traced
        (torch.export / torch.compile) the buffers are fake and float() of one cannot be traced:
        the numbers read last are used and become graph constants, like every other plain
        module's qparams (docs/deploy.md)."""
        if not torch.compiler.is_compiling() or "_qp" not in self.__dict__:
            self.__dict__["_qp"] = (float(self.scale), int(self.zero_point))
        return self.__dict__["_qp"]

    def __init__(
        self, scale: float, zero_point: int, dtype: torch.dtype, factory_kwargs: Optional[Dict[str, Any]] = None
    ) -> None:
        super().__init__(scale, zero_point, dtype, factory_kwargs)
        self._qparams()

    @classmethod
    def from_quantized(cls, qmod: nn.Module) -> "Quantize":
        new = super().from_quantized(qmod)
        new._qparams()
        return new

    def _load_from_state_dict(self, *args: Any, **kwargs: Any):
        super()._load_from_state_dict(*args, **kwargs)
        self.__dict__.pop("_qp", None)
        self._qparams()


class DeQuantize(_Retag, B.DeQuantize):
    def forward(self, Xq: Tensor) -> Tensor:
        d, s, z = _in(Xq, "torch_qplugin.nn.plain.DeQuantize")
        return _q.plain_dequantize_per_tensor(d, s, z)


class ReLU(_Retag, B.ReLU):
    def forward(self, input: Tensor) -> Tensor:
        d, s, z = _in(input, "torch_qplugin.nn.plain.ReLU")
        return _out(_q.plain_relu(d, s, z), s, z)


class ReLU6(_Retag, B.ReLU6):
    def forward(self, input: Tensor) -> Tensor:
        d, s, z = _in(input, "torch_qplugin.nn.plain.ReLU6")
        return _out(_q.plain_relu6(d, s, z), s, z)


class Hardswish(_Retag, B.Hardswish):
    def forward(self, input: Tensor) -> Tensor:
        d, s, z = _in(input, "torch_qplugin.nn.plain.Hardswish")
        return _out(_q.plain_hardswish(d, s, z, self.scale, self.zero_point), self.scale, self.zero_point)


class ELU(_Retag, B.ELU):
    def forward(self, input: Tensor) -> Tensor:
        d, s, z = _in(input, "torch_qplugin.nn.plain.ELU")
        return _out(_q.plain_elu(d, s, z, self.scale, self.zero_point, self.alpha), self.scale, self.zero_point)


class LeakyReLU(_Retag, B.LeakyReLU):
    def forward(self, input: Tensor) -> Tensor:
        d, s, z = _in(input, "torch_qplugin.nn.plain.LeakyReLU")
        return _out(
            _q.plain_leaky_relu(d, s, z, self.negative_slope, self.scale, self.zero_point), self.scale, self.zero_point
        )


class Sigmoid(_Retag, B.Sigmoid):
    def forward(self, input: Tensor) -> Tensor:
        d, s, z = _in(input, "torch_qplugin.nn.plain.Sigmoid")
        return _out(
            _q.plain_sigmoid(d, s, z, self.output_scale, self.output_zero_point),
            self.output_scale,
            self.output_zero_point,
        )


class Hardsigmoid(_Retag, B.Hardsigmoid):
    def forward(self, input: Tensor) -> Tensor:
        d, s, z = _in(input, "torch_qplugin.nn.plain.Hardsigmoid")
        zp = 0 if self.output_zero_point is None else self.output_zero_point  # uint8 input
        return _out(_q.plain_hardsigmoid(d, s, z, self.output_scale, zp), self.output_scale, zp)


class Softmax(_Retag, B.Softmax):
    def forward(self, input: Tensor) -> Tensor:
        d, s, z = _in(input, "torch_qplugin.nn.plain.Softmax")
        dim = self.dim
        if dim is None:
            nd = d.dim()
            dim = 0 if nd in (0, 1, 3) else 1
        return _out(_q.plain_softmax(d, s, z, dim, self.scale, self.zero_point), self.scale, self.zero_point)


class MaxPool2d(_Retag, B.MaxPool2d):
    def forward(self, input: Tensor) -> Tensor:
        d, s, z = _in(input, "torch_qplugin.nn.plain.MaxPool2d")
        return _out(_q.plain_max_pool2d(d, self._k, self._s, self._p, self._d, self.ceil_mode), s, z)


class AvgPool2d(_Retag, B.AvgPool2d):
    def forward(self, input: Tensor) -> Tensor:
        d, s, z = _in(input, "torch_qplugin.nn.plain.AvgPool2d")
        return _out(
            _q.plain_avg_pool2d(
                d, z, self._k, self._s, self._p, self.ceil_mode, self.count_include_pad, self.divisor_override
            ),
            s,
            z,
        )


class AdaptiveAvgPool2d(_Retag, B.AdaptiveAvgPool2d):
    def forward(self, input: Tensor) -> Tensor:
        d, s, z = _in(input, "torch_qplugin.nn.plain.AdaptiveAvgPool2d")
        out = [d.size(d.dim() - 2 + i) if self._size[i] < 0 else self._size[i] for i in range(2)]
        return _out(_q.plain_adaptive_avg_pool2d(d, out), s, z)


class AvgPool3d(_Retag, B.AvgPool3d):
    def forward(self, input: Tensor) -> Tensor:
        d, s, z = _in(input, "torch_qplugin.nn.plain.AvgPool3d")
        return _out(
            _q.plain_avg_pool3d(
                d, z, self._k, self._s, self._p, self.ceil_mode, self.count_include_pad, self.divisor_override
            ),
            s,
            z,
        )


class AdaptiveAvgPool3d(_Retag, B.AdaptiveAvgPool3d):
    def forward(self, input: Tensor) -> Tensor:
        d, s, z = _in(input, "torch_qplugin.nn.plain.AdaptiveAvgPool3d")
        out = [d.size(d.dim() - 3 + i) if self._size[i] < 0 else self._size[i] for i in range(3)]
        return _out(_q.plain_adaptive_avg_pool3d(d, out), s, z)


class _BatchNorm(_Retag):
    _OP = ""

    def forward(self, input: Tensor) -> Tensor:
        d, s, z = _in(input, self)
        return _out(
            getattr(_q, self._OP)(
                d,
                s,
                z,
                self.weight,
                self.bias,
                self.running_mean,
                self.running_var,
                self.eps,
                self.scale,
                self.zero_point,
            ),
            self.scale,
            self.zero_point,
        )


class BatchNorm2d(_BatchNorm, B.BatchNorm):
    _NAME, _DIMS = "BatchNorm2d", 4
    _OP = "plain_batch_norm2d"


class BatchNorm3d(_BatchNorm, B.BatchNorm):
    _NAME, _DIMS = "BatchNorm3d", 5
    _OP = "plain_batch_norm3d"


class BNReLU2d(_BatchNorm, B.BatchNorm):
    _NAME, _DIMS = "BNReLU2d", 4
    _OP = "plain_batch_norm2d_relu"


class BNReLU3d(_BatchNorm, B.BatchNorm):
    _NAME, _DIMS = "BNReLU3d", 5
    _OP = "plain_batch_norm3d_relu"


class GroupNorm(_Retag, B.GroupNorm):
    def forward(self, input: Tensor) -> Tensor:
        d, s, z = _in(input, "torch_qplugin.nn.plain.GroupNorm")
        return _out(
            _q.plain_group_norm(
                d, s, z, self.num_groups, self.weight, self.bias, self.eps, self.scale, self.zero_point
            ),
            self.scale,
            self.zero_point,
        )


class _InstanceNorm(_Retag):
    def forward(self, input: Tensor) -> Tensor:
        d, s, z = _in(input, self)
        return _out(
            _q.plain_instance_norm(d, s, z, self.weight, self.bias, self.eps, self.scale, self.zero_point),
            self.scale,
            self.zero_point,
        )


class InstanceNorm1d(_InstanceNorm, B.InstanceNorm, nn.InstanceNorm1d):
    pass


class InstanceNorm2d(_InstanceNorm, B.InstanceNorm, nn.InstanceNorm2d):
    pass


class InstanceNorm3d(_InstanceNorm, B.InstanceNorm, nn.InstanceNorm3d):
    pass


class LayerNorm(_Retag, B.LayerNorm):
    def forward(self, input: Tensor) -> Tensor:
        d, s, z = _in(input, "torch_qplugin.nn.plain.LayerNorm")
        return _out(
            _q.plain_layer_norm(d, s, z, self._shape, self.weight, self.bias, self.eps, self.scale, self.zero_point),
            self.scale,
            self.zero_point,
        )


class PReLU(_Plain, nn.Module):
    """prelu on QTensors (qplugin::plain_prelu); ``weight``: the float slopes, i.e. the dequantized
    int8 weight of the quantized PReLU (same quantization as its from_float)."""

    def __init__(self, output_scale: float, output_zero_point: int, num_parameters: int = 1) -> None:
        super().__init__()
        self.num_parameters = int(num_parameters)
        self.scale, self.zero_point = float(output_scale), int(output_zero_point)
        self.register_buffer("weight", torch.full((self.num_parameters,), 0.25))

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}, scale={self.scale}, zero_point={self.zero_point}"

    def forward(self, input: Tensor) -> Tensor:
        d, s, z = _in(input, "torch_qplugin.nn.plain.PReLU")
        return _out(_q.plain_prelu(d, s, z, self.weight, self.scale, self.zero_point), self.scale, self.zero_point)

    @classmethod
    def from_float(cls, mod: nn.Module, use_precomputed_fake_quant: bool = False) -> "PReLU":
        scale, zp = _act_qparams(mod, "torch_qplugin.nn.plain.PReLU")
        new = cls(scale, zp, mod.num_parameters)
        w = mod.weight.detach().float()
        qconfig = getattr(mod, "qconfig", None)
        obs = qconfig.weight() if qconfig is not None else None
        if obs is None or obs.qscheme in _PER_CHANNEL:  # as the quantized PReLU: symmetric int8 per tensor
            ws, wz, dtype = max(float(w.abs().max()), 1e-8) / 127.0, 0, torch.int8
        else:
            obs(w)
            ws, wz = obs.calculate_qparams()
            dtype = plain_dtype(obs.dtype)
        ints = _q.plain_quantize_per_tensor(w, float(ws), int(wz), dtype)
        new.weight = _q.plain_dequantize_per_tensor(ints, float(ws), int(wz))
        return _guard_never_calibrated(new, mod)


class Dropout(_Retag, B.Dropout):
    def forward(self, input: Tensor) -> Tensor:
        return input


class QFunctional(_Retag, B.QFunctional):
    """add / add_relu / mul / cat / matmul at (scale, zero_point); add_scalar / mul_scalar."""

    def _binary(self, op: Callable[..., Tensor], x: Tensor, y: Tensor):
        a, sa, za = _in(x, "torch_qplugin.nn.plain.QFunctional")
        b, sb, zb = _in(y, "torch_qplugin.nn.plain.QFunctional")
        return _out(op(a, sa, za, b, sb, zb, self.scale, self.zero_point), self.scale, self.zero_point)

    def add(self, x: Tensor, y: Tensor) -> Tensor:
        return self._binary(_q.plain_add, x, y)

    def add_relu(self, x: Tensor, y: Tensor) -> Tensor:
        return self._binary(_q.plain_add_relu, x, y)

    def mul(self, x: Tensor, y: Tensor) -> Tensor:
        return self._binary(_q.plain_mul, x, y)

    def matmul(self, x: Tensor, y: Tensor) -> Tensor:
        return self._binary(_q.plain_matmul, x, y)

    def cat(self, x: List[Tensor], dim: int = 0) -> Tensor:
        parts = [_in(t, "torch_qplugin.nn.plain.QFunctional.cat") for t in x]
        return _out(
            _q.plain_cat(
                [p[0] for p in parts], [p[1] for p in parts], [p[2] for p in parts], dim, self.scale, self.zero_point
            ),
            self.scale,
            self.zero_point,
        )

    def add_scalar(self, x: Tensor, y: float) -> Tensor:
        d, s, z = _in(x, "torch_qplugin.nn.plain.QFunctional.add_scalar")
        so, zo = _q.plain_add_scalar_qparams(s, z, d.dtype, y)
        return _out(_q.plain_add_scalar(d, s, z, y), so, zo)

    def mul_scalar(self, x: Tensor, y: float) -> Tensor:
        d, s, z = _in(x, "torch_qplugin.nn.plain.QFunctional.mul_scalar")
        so, zo = _q.plain_mul_scalar_qparams(s, z, d.dtype, y)
        return _out(_q.plain_mul_scalar(d, s, z, y), so, zo)


class NeverCalibratedQFunctional(QFunctional):
    """The plain QFunctional of a FloatFunctional no calibration batch reached: its ops that need
    output qparams raise the message naming it (as the quantized NeverCalibratedQFunctional)."""

    def extra_repr(self) -> str:
        return super().extra_repr() + ", never calibrated (raises if called)"

    def _binary(self, op: Callable[..., Tensor], x: Tensor, y: Tensor):
        raise RuntimeError(self._qplugin_uncalibrated)

    def cat(self, x: List[Tensor], dim: int = 0) -> Tensor:
        raise RuntimeError(self._qplugin_uncalibrated)


QFunctional._NEVER_CALIBRATED_CLS = NeverCalibratedQFunctional


# ---- weights as plain tensors ----------------------------------------------------------------
def plain_weight(w: Tensor, obs: nn.Module, axis: int = 0, groups: int = 1) -> Tuple[Tensor, Tensor, Tensor]:
    """(int8 weight, float64 scales, int64 zero points) of float ``w`` with a (run) weight
    observer's qparams: the integers quantize_per_tensor / _per_channel + the observer's
    [quant_min, quant_max] clamp give (the quantized modules' _quantize_weight). ``axis`` 1 (a
    transposed conv's output channels): per-channel qparams along axis 1, repeated for each of the
    ``groups`` (one entry per output channel)."""
    obs = getattr(obs, "activation_post_process", obs) if not hasattr(obs, "calculate_qparams") else obs
    scale, zp = obs.calculate_qparams()
    if plain_dtype(obs.dtype) != torch.int8:
        raise ValueError(f"weight observer dtype should be qint8 (int8), got {obs.dtype}")
    w = w.detach().float()
    if obs.qscheme in _PER_TENSOR:
        s = torch.tensor([float(scale)], dtype=torch.float64)
        z = torch.tensor([int(zp)], dtype=torch.int64)
        data = _q.plain_quantize_per_tensor(w, float(s), int(z), torch.int8)
    elif obs.qscheme in _PER_CHANNEL:
        if int(obs.ch_axis) != axis:
            raise ValueError(f"weight observer ch_axis should be {axis} (output channels), got {obs.ch_axis}")
        s = scale.detach().to(torch.float64).reshape(-1).clone()
        z = zp.detach().to(torch.int64).reshape(-1).clone()
        data = _q.plain_quantize_per_channel(w, s, z, axis, torch.int8)
        s, z = s.repeat(groups), z.repeat(groups)
    else:
        raise ValueError(f"weight qscheme should be per-tensor or per-channel affine/symmetric, got {obs.qscheme}")
    qmin, qmax = getattr(obs, "quant_min", None), getattr(obs, "quant_max", None)
    if qmin is not None and qmax is not None and (qmin > -128 or qmax < 127):
        data = data.clamp(qmin, qmax)
    return data, s, z


_CALL_KEYS = frozenset(("weight", "w_scales", "w_zero_points", "bias", "packed", "scale", "zero_point"))


class _Weighted(_Plain, nn.Module):
    """Buffers weight / w_scales / w_zero_points / bias / packed; scale / zero_point attributes
    (saved in state_dict as tensors, as the quantized modules do).

    Speed: the op, its arguments after the input's and the output's checked quantizer are cached
    in ``__dict__['_call']`` (a buffer read through nn.Module.__getattr__ costs about 1 us, five a
    layer); assigning any of them, ``_apply`` (``.to()``, ...) and loading drop the cache. Traced
    (torch.compile / torch.export) they are read afresh, so the graph sees the module's buffers,
    and the output is made by the public QTensor constructor (no quantizer)."""

    _KEYS = ("weight", "w_scales", "w_zero_points", "bias", "packed")

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        if name in _CALL_KEYS:
            self.__dict__.pop("_call", None)

    def _apply(self, fn: Callable[[Tensor], Tensor], recurse: bool = True):
        self.__dict__.pop("_call", None)
        return super()._apply(fn, recurse)

    def _call_args(self):
        """(op, its arguments after the input's, the output's quantizer or None, the callable that
        runs op), cached (see the class doc); the arguments end with the output's scale and zero
        point. Eager, the callable is the op's C++ entry (``OpOverloadPacket._op``, what the
        packet's Python ``__call__`` calls for an op without torchbind overloads): one Python
        frame less a layer. Traced, the op itself."""
        if _is_compiling():
            op, args = self._make_call()
            return op, args, None, op
        call = self.__dict__.get("_call")
        if call is None:
            op, args = self._make_call()
            try:
                qz = _out_quantizer(args[-2], args[-1], _U8)
            except (TypeError, ValueError):  # bad qparams: raised by _wrap_out after the op, as always
                qz = None
            entry = op if getattr(op, "_has_torchbind_op_overload", True) else op._op
            call = self.__dict__["_call"] = (op, args, qz, entry)
        return call

    def _init_weight(self, shape: List[int], bias: bool, out_features: Optional[int] = None):
        self.register_buffer("weight", torch.zeros(shape, dtype=torch.int8))
        self.register_buffer("w_scales", torch.ones(1, dtype=torch.float64))
        self.register_buffer("w_zero_points", torch.zeros(1, dtype=torch.int64))
        self.register_buffer("bias", torch.zeros(shape[0] if out_features is None else out_features) if bias else None)
        # derived from the weight for the running kernel path: not saved (state_dict, pickle),
        # rebuilt on load
        self.register_buffer("packed", torch.empty(0, dtype=_U8), persistent=False)
        self.scale = 1.0
        self.zero_point = 0
        self._repack()

    def set_weight(
        self,
        weight: Tensor,
        w_scales: Union[Tensor, Sequence[float]],
        w_zero_points: Union[Tensor, Sequence[int]],
        bias: Optional[Tensor],
    ) -> None:
        """Sets the plain weight (int8, float64 scales, int64 zero points, float32 bias or None) and
        repacks."""
        self.weight = weight.detach().to(torch.int8).contiguous()
        self.w_scales = torch.as_tensor(w_scales, dtype=torch.float64).detach().reshape(-1).clone()
        self.w_zero_points = torch.as_tensor(w_zero_points, dtype=torch.int64).detach().reshape(-1).clone()
        self.bias = None if bias is None else bias.detach().float().contiguous()
        self._repack()

    def _save_to_state_dict(self, destination: Dict[str, Any], prefix: str, keep_vars: bool):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "scale"] = torch.tensor(self.scale, dtype=torch.double)
        destination[prefix + "zero_point"] = torch.tensor(self.zero_point)

    def __getstate__(self) -> Dict[str, Any]:  # pickle / deepcopy without the packed bytes (rebuilt on load)
        state = self.__dict__.copy()
        state["_buffers"] = dict(state["_buffers"], packed=None)
        state.pop("_call", None)
        return state

    def __setstate__(self, state: Dict[str, Any]) -> None:
        super().__setstate__(state)
        self._repack()

    def _state_of(self, state_dict: Dict[str, Any], prefix: str):
        """(weight int8, w_scales, w_zero_points, bias, scale, zero_point) from ``state_dict``: this
        module's own keys, or the keys of the quantized form (torch_qplugin's or torch's ao Linear /
        Conv state dicts, read by the compat side); popped. None if the keys are missing."""
        own = [prefix + k for k in ("weight", "w_scales", "w_zero_points")]
        if all(k in state_dict for k in own) and state_dict[own[0]].dtype == torch.int8:
            w, s, z = (state_dict.pop(k) for k in own)
            bias = state_dict.pop(prefix + "bias", None)
            state_dict.pop(prefix + "packed", None)  # rebuilt for the running kernel path
            if prefix + "scale" not in state_dict or prefix + "zero_point" not in state_dict:
                return None
            return w, s, z, bias, state_dict.pop(prefix + "scale"), state_dict.pop(prefix + "zero_point")
        from ...quantization import _qweights  # quantized-dtype entries: only when torch has them

        axis = getattr(self, "WEIGHT_AXIS", 0)  # transposed conv: 1, qparams repeated per group
        return _qweights.quantized_state(state_dict, prefix, axis, self.groups if axis else 1)

    def _load_from_state_dict(
        self,
        state_dict: Dict[str, Any],
        prefix: str,
        local_metadata: Dict[str, Any],
        strict: bool,
        missing_keys: List[str],
        unexpected_keys: List[str],
        error_msgs: List[str],
    ):
        state = self._state_of(state_dict, prefix)  # also takes the quantized forms' keys
        if state is None:
            missing_keys.extend(
                prefix + k
                for k in ("weight", "w_scales", "w_zero_points", "scale", "zero_point")
                if prefix + k not in state_dict
            )
            return
        weight, s, z, bias, scale, zp = state
        if tuple(weight.shape) != tuple(self.weight.shape):
            error_msgs.append(
                f"size mismatch for {prefix}weight: copying a param with shape {tuple(weight.shape)} "
                f"from checkpoint, the shape in current model is {tuple(self.weight.shape)}."
            )
            return
        try:
            self.set_weight(weight, s, z, bias)
        except (RuntimeError, ValueError) as e:
            error_msgs.append(f"{prefix}weight: cannot pack the loaded weight: {e}")
            return
        self.scale, self.zero_point = float(scale), int(zp)


class Linear(_Weighted):
    """y = x W^T + b on QTensors (uint8 in, uint8 out at ``scale`` / ``zero_point``)."""

    _FLOAT_MODULE = (nn.Linear, nn.modules.linear.NonDynamicallyQuantizableLinear)
    _RELU = False

    def __init__(self, in_features: int, out_features: int, bias_: bool = True) -> None:
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self._init_weight([out_features, in_features], bias_)

    def _repack(self):
        self.packed = _q.plain_linear_prepack(self.weight, self.w_scales, self.w_zero_points)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, scale={self.scale}, "
            f"zero_point={self.zero_point}"
        )

    def _make_call(self):
        return (
            _q.plain_linear_relu if self._RELU else _q.plain_linear,
            (self.weight, self.w_scales, self.w_zero_points, self.bias, self.packed, self.scale, self.zero_point),
        )

    def forward(self, x: Tensor) -> Tensor:
        d, s, z = _in(x, self)
        _, args, qz, op = self._call_args()
        out = op(d, s, z, *args)
        return _out(out, args[-2], args[-1]) if qz is None else _wrap_eager(out, qz)

    @classmethod
    def from_float(cls, mod: nn.Module, use_precomputed_fake_quant: bool = False) -> "Linear":
        lin, act, wobs, _ = B._linear_from_float_parts(cls, mod)
        if not use_precomputed_fake_quant:
            wobs(lin.weight)
        scale, zp = _act_qparams(act, "torch_qplugin.nn.plain." + cls.__name__)
        new = cls(lin.in_features, lin.out_features, lin.bias is not None)
        new.set_weight(*plain_weight(lin.weight, wobs), None if lin.bias is None else lin.bias)
        new.scale, new.zero_point = scale, zp
        return _guard_never_calibrated(new, act)


class LinearReLU(Linear):
    _FLOAT_MODULE = (C.LinearReLU,)
    _RELU = True


_CONV_OPS = {
    (n, relu): getattr(_q, f"plain_conv{n}d" + ("_relu" if relu else "")) for n in (1, 2, 3) for relu in (False, True)
}


class _ConvNd(_Weighted):
    _SPATIAL = 2
    _RELU = False
    _TUPLE = staticmethod(_pair)

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: _IntOrSeq,
        stride: _IntOrSeq = 1,
        padding: _IntOrSeq = 0,
        dilation: _IntOrSeq = 1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
    ) -> None:
        super().__init__()
        t = self._TUPLE
        if isinstance(padding, str):
            raise ValueError(f"torch_qplugin.nn.plain conv: padding should be a number or tuple, got '{padding}'")
        if in_channels % groups != 0 or out_channels % groups != 0:
            raise ValueError("in_channels and out_channels must be divisible by groups")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride, self.padding, self.dilation = t(kernel_size), t(stride), t(padding), t(dilation)
        self.groups, self.padding_mode = groups, padding_mode
        self._pad_arg = [p for v in reversed(self.padding) for p in (v, v)]
        self._geom = (list(self.stride), self._conv_padding(), list(self.dilation), self.groups)
        self._init_weight([out_channels, in_channels // groups] + list(self.kernel_size), bias)

    def _conv_padding(self):
        return list(self.padding) if self.padding_mode == "zeros" else [0] * self._SPATIAL

    def _repack(self):
        self.packed = _q.plain_conv_prepack(self.weight, self.w_scales, self.w_zero_points, self.bias, *self._geom)

    def extra_repr(self):
        return (
            f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}, "
            f"padding={self.padding}, dilation={self.dilation}, groups={self.groups}, scale={self.scale}, "
            f"zero_point={self.zero_point}"
        )

    def _input(self, x: Tensor):
        d, s, z = _in(x, self)
        if self.padding_mode != "zeros":  # pad the integers (data movement, bit-exact)
            d = F.pad(d, self._pad_arg, mode=self.padding_mode)
        return d, s, z

    def _make_call(self):
        return (
            _CONV_OPS[self._SPATIAL, self._RELU],
            (
                self.weight,
                self.w_scales,
                self.w_zero_points,
                self.bias,
                self.packed,
                *self._geom,
                self.scale,
                self.zero_point,
            ),
        )

    def forward(self, x: Tensor) -> Tensor:
        d, s, z = _in(x, self)  # self._input(x), inline (a call costs per layer)
        if self.padding_mode != "zeros":
            d = F.pad(d, self._pad_arg, mode=self.padding_mode)
        _, args, qz, op = self._call_args()
        out = op(d, s, z, *args)
        return _out(out, args[-2], args[-1]) if qz is None else _wrap_eager(out, qz)

    @classmethod
    def from_float(cls, mod: nn.Module, use_precomputed_fake_quant: bool = False) -> "_ConvNd":
        who = "torch_qplugin.nn.plain." + cls.__name__
        if hasattr(mod, "weight_fake_quant"):  # QAT (ConvBn folded as the quantized from_float does)
            bn_cls = cls._NNIQAT_CONV_BN_MODULE
            if bn_cls is not None and isinstance(mod, bn_cls):
                mod.weight, mod.bias = torch.nn.utils.fuse_conv_bn_weights(
                    mod.weight,
                    mod.bias,
                    mod.bn.running_mean,
                    mod.bn.running_var,
                    mod.bn.eps,
                    mod.bn.weight,
                    mod.bn.bias,
                )
            conv, wobs, act = mod, mod.weight_fake_quant, mod
            if not use_precomputed_fake_quant:
                wobs(conv.weight)
        else:
            allowed = tuple(t for t in (cls._FLOAT_MODULE,) if t is not None)
            if type(mod) not in allowed:
                raise TypeError(
                    f"{who}.from_float only works for {', '.join(t.__name__ for t in allowed)}, "
                    f"but got: {type(mod).__name__}"
                )
            act = mod
            conv = mod[0] if isinstance(mod, nn.Sequential) else mod
            wobs, _ = _weight_observer(conv, who)
            wobs(conv.weight)
        scale, zp = _act_qparams(act, who)
        new = cls(
            conv.in_channels,
            conv.out_channels,
            conv.kernel_size,
            conv.stride,
            conv.padding,
            conv.dilation,
            conv.groups,
            conv.bias is not None,
            conv.padding_mode,
        )
        new.set_weight(*plain_weight(conv.weight, wobs), None if conv.bias is None else conv.bias)
        new.scale, new.zero_point = scale, zp
        return _guard_never_calibrated(new, act)


class Conv1d(_ConvNd):
    _FLOAT_MODULE = nn.Conv1d
    _NNIQAT_CONV_BN_MODULE = getattr(C.intrinsic_qat, "ConvBn1d", None)
    _SPATIAL = 1
    _TUPLE = staticmethod(_single)


class Conv2d(_ConvNd):
    _FLOAT_MODULE = nn.Conv2d
    _NNIQAT_CONV_BN_MODULE = getattr(C.intrinsic_qat, "ConvBn2d", None)


class Conv3d(_ConvNd):
    _FLOAT_MODULE = nn.Conv3d
    _NNIQAT_CONV_BN_MODULE = getattr(C.intrinsic_qat, "ConvBn3d", None)
    _SPATIAL = 3
    _TUPLE = staticmethod(_triple)


_CONVT_OPS = {n: getattr(_q, f"plain_conv_transpose{n}d") for n in (1, 2, 3)}


class _ConvTransposeNd(_Weighted):
    """Transposed conv on QTensors: weight (in_channels, out_channels / groups, kernel...) int8 with
    1 or out_channels scales / zero points (per output channel), run by plain_conv_transpose*d."""

    _SPATIAL = 2
    _TUPLE = staticmethod(_pair)
    WEIGHT_AXIS = 1  # the quantized form's per-channel axis (qparams repeated per group here)

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: _IntOrSeq,
        stride: _IntOrSeq = 1,
        padding: _IntOrSeq = 0,
        output_padding: _IntOrSeq = 0,
        groups: int = 1,
        bias: bool = True,
        dilation: _IntOrSeq = 1,
        padding_mode: str = "zeros",
    ) -> None:
        super().__init__()
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        if in_channels % groups != 0 or out_channels % groups != 0:
            raise ValueError("in_channels and out_channels must be divisible by groups")
        t = self._TUPLE
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride, self.padding = t(kernel_size), t(stride), t(padding)
        self.output_padding, self.dilation = t(output_padding), t(dilation)
        self.groups, self.padding_mode = groups, padding_mode
        self._geom = (list(self.stride), list(self.padding), list(self.output_padding), list(self.dilation), groups)
        self._init_weight([in_channels, out_channels // groups] + list(self.kernel_size), bias, out_channels)

    def _repack(self):
        self.packed = _q.plain_conv_transpose_prepack(
            self.weight, self.w_scales, self.w_zero_points, self.bias, *self._geom
        )

    def extra_repr(self):
        return (
            f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}, "
            f"padding={self.padding}, output_padding={self.output_padding}, dilation={self.dilation}, "
            f"groups={self.groups}, scale={self.scale}, zero_point={self.zero_point}"
        )

    def _make_call(self):
        return (
            _CONVT_OPS[self._SPATIAL],
            (
                self.weight,
                self.w_scales,
                self.w_zero_points,
                self.bias,
                self.packed,
                *self._geom,
                self.scale,
                self.zero_point,
            ),
        )

    def forward(self, x: Tensor) -> Tensor:
        d, s, z = _in(x, self)
        _, args, qz, op = self._call_args()
        out = op(d, s, z, *args)
        return _out(out, args[-2], args[-1]) if qz is None else _wrap_eager(out, qz)

    @classmethod
    def from_float(cls, mod: nn.Module, use_precomputed_fake_quant: bool = False) -> "_ConvTransposeNd":
        who = "torch_qplugin.nn.plain." + cls.__name__
        if type(mod) is not cls._FLOAT_MODULE:
            raise TypeError(
                f"{who}.from_float only works for {cls._FLOAT_MODULE.__name__}, but got: {type(mod).__name__}"
            )
        wobs, _ = _weight_observer(mod, who)
        _per_output_channel(wobs)
        wobs(mod.weight)
        scale, zp = _act_qparams(mod, who)
        new = cls(
            mod.in_channels,
            mod.out_channels,
            mod.kernel_size,
            mod.stride,
            mod.padding,
            mod.output_padding,
            mod.groups,
            mod.bias is not None,
            mod.dilation,
            mod.padding_mode,
        )
        new.set_weight(*plain_weight(mod.weight, wobs, 1, mod.groups), None if mod.bias is None else mod.bias)
        new.scale, new.zero_point = scale, zp
        return _guard_never_calibrated(new, mod)


class ConvTranspose1d(_ConvTransposeNd):
    _FLOAT_MODULE = nn.ConvTranspose1d
    _SPATIAL = 1
    _TUPLE = staticmethod(_single)


class ConvTranspose2d(_ConvTransposeNd):
    _FLOAT_MODULE = nn.ConvTranspose2d


class ConvTranspose3d(_ConvTransposeNd):
    _FLOAT_MODULE = nn.ConvTranspose3d
    _SPATIAL = 3
    _TUPLE = staticmethod(_triple)


class ConvReLU1d(Conv1d):
    _FLOAT_MODULE = C.ConvReLU1d
    _NNIQAT_CONV_BN_MODULE = getattr(C.intrinsic_qat, "ConvBnReLU1d", None)
    _RELU = True


class ConvReLU2d(Conv2d):
    _FLOAT_MODULE = C.ConvReLU2d
    _NNIQAT_CONV_BN_MODULE = getattr(C.intrinsic_qat, "ConvBnReLU2d", None)
    _RELU = True


class ConvReLU3d(Conv3d):
    _FLOAT_MODULE = C.ConvReLU3d
    _NNIQAT_CONV_BN_MODULE = getattr(C.intrinsic_qat, "ConvBnReLU3d", None)
    _RELU = True


class ConvAdd2d(Conv2d):
    """conv2d(x) + extra_input, requantized (fused)."""

    _FLOAT_MODULE = C.ConvAdd2d

    def forward(self, input: Tensor, extra_input: Tensor) -> Tensor:
        d, s, z = self._input(input)
        a, sa, za = _in(extra_input, self)
        _, args, qz, op = self._call_args()
        out = op(d, s, z, a, sa, za, *args)
        return _out(out, args[-2], args[-1]) if qz is None else _wrap_eager(out, qz)

    def _make_call(self):
        return (_q.plain_conv2d_add_relu if self._RELU else _q.plain_conv2d_add, super()._make_call()[1])


class ConvAddReLU2d(ConvAdd2d):
    _FLOAT_MODULE = C.ConvAddReLU2d
    _RELU = True


# ---- embeddings (weight-only, float out) ----------------------------------------------------
_EMB_MODES = {"sum": 0, "mean": 1, "max": 2}


def fused_rows(codes: Tensor, scales: Tensor, zero_points: Tensor) -> Tensor:
    """torch's fused 8-bit row format (embedding_bag_byte_prepack's; plain_embedding_prepack wraps it): per
    row the codes (one a byte, 4-bit codes too), float32 scale, float32 bias = zero_point * scale
    * -1 (the quantized table's own bias: the same floats, so the same lookups)."""
    s = scales.detach().to(torch.float32).reshape(-1, 1)
    b = (zero_points.detach().to(torch.float32).reshape(-1, 1) * s) * -1.0
    return torch.cat([codes.to(_U8), s.view(_U8), b.view(_U8)], 1).contiguous()


def quantize_rows(w: Tensor, obs: nn.Module) -> Tuple[Tensor, Tensor, Tensor]:
    """(codes uint8, scales, zero points) of float rows ``w`` with a run per_channel_affine_float_qparams
    observer: code = clamp(round(w * (1 / scale) + zero_point)) in float32, torch's float-qparams
    rounding (quantize_val_float_qparams)."""
    if obs.qscheme != torch.per_channel_affine_float_qparams:
        raise ValueError(
            f"embedding quantization needs a per_channel_affine_float_qparams weight observer "
            f"(float_qparams_weight_only_qconfig), got qscheme {obs.qscheme}"
        )
    s, z = obs.calculate_qparams()
    s, z = s.detach().to(torch.float32), z.detach().to(torch.float32)
    inv = torch.where(s == 0, torch.ones_like(s), 1.0 / s).reshape(-1, 1)
    q = torch.round(w.detach().float() * inv + z.reshape(-1, 1))
    return q.clamp(int(obs.quant_min), int(obs.quant_max)).to(_U8), s, z


class Embedding(_Plain, nn.Module):
    """nn.quantized.Embedding's lookups on a plain table: ``weight`` is the checked buffer of
    qplugin::plain_embedding_prepack (a header with size and checksum around the fused rows, uint8
    [num_embeddings, embedding_dim + 8], fused_rows), so a damaged or mismatched table raises instead
    of reading as other weights; ``bits`` (8 or 4) is the code width of the table it came from
    (4-bit codes take a byte each here: the same floats out). State dicts and pickles that hold the
    bare fused rows (2-D ``weight``) are wrapped on load."""

    def __init__(self, num_embeddings: int, embedding_dim: int, bits: int = 8) -> None:
        super().__init__()
        if bits not in (8, 4):
            raise ValueError(f"torch_qplugin.nn.plain.{type(self).__name__}: bits should be 8 or 4, got {bits}")
        self.num_embeddings, self.embedding_dim, self.bits = num_embeddings, embedding_dim, bits
        self.register_buffer(
            "weight",
            _q.plain_embedding_prepack(
                fused_rows(
                    torch.zeros(num_embeddings, embedding_dim, dtype=_U8),
                    torch.ones(num_embeddings),
                    torch.zeros(num_embeddings),
                ),
                bits,
            ),
        )

    def extra_repr(self) -> str:
        return f"num_embeddings={self.num_embeddings}, embedding_dim={self.embedding_dim}, bits={self.bits}"

    def set_weight(self, codes: Tensor, scales: Tensor, zero_points: Tensor) -> None:
        """Codes (uint8 [num_embeddings, embedding_dim], one a byte) and float row qparams."""
        if tuple(codes.shape) != (self.num_embeddings, self.embedding_dim):
            raise ValueError(
                f"torch_qplugin.nn.plain.{type(self).__name__}: codes should have shape "
                f"{[self.num_embeddings, self.embedding_dim]}, got {list(codes.shape)}"
            )
        self.weight = _q.plain_embedding_prepack(fused_rows(codes, scales, zero_points), self.bits)

    def fused_weight(self) -> Tensor:
        """The table's fused rows (uint8 [num_embeddings, embedding_dim + 8]), checked."""
        return _q.plain_embedding_unpack(self.weight)

    def _wrap_bare_rows(self, w: Optional[Tensor]):
        if isinstance(w, Tensor) and w.dim() == 2:
            return _q.plain_embedding_prepack(w, self.bits)
        return w

    def _load_from_state_dict(self, state_dict: Dict[str, Any], prefix: str, *args: Any, **kwargs: Any):
        if prefix + "_packed_params._packed_weight" in state_dict:  # a quantized Embedding's (ours / torch.ao's)
            from ...quantization import _qweights  # the compat side: reads the quantized table

            codes, s, z, self.bits = _qweights.embedding_state(state_dict, prefix)
            state_dict[prefix + "weight"] = fused_rows(codes, s, z)
        if prefix + "weight" in state_dict:
            state_dict[prefix + "weight"] = self._wrap_bare_rows(state_dict[prefix + "weight"])
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)

    def __setstate__(self, state: Dict[str, Any]) -> None:
        super().__setstate__(state)
        self._buffers["weight"] = self._wrap_bare_rows(self._buffers.get("weight"))

    def forward(self, indices: Tensor) -> Tensor:
        flat = indices.reshape(-1)
        offsets = torch.arange(flat.numel(), dtype=flat.dtype)
        out = _q.plain_embedding_bag(
            self.weight, self.num_embeddings, self.embedding_dim, flat, offsets, 0, False, None, None, False
        )
        return out.reshape(list(indices.shape) + [self.embedding_dim])

    @classmethod
    def _observed(cls, mod: nn.Module) -> Tuple[nn.Module, int]:
        float_type = nn.EmbeddingBag if cls._BAG else nn.Embedding
        who = f"torch_qplugin.nn.plain.{cls.__name__}"
        if type(mod) is not float_type:
            raise TypeError(
                f"{who}.from_float: module should be a torch.nn.{float_type.__name__}, got {type(mod).__name__}"
            )
        obs = _weight_only_observer(mod, who)
        bits = {torch.uint8: 8, torch.uint4: 4}.get(plain_dtype(obs.dtype))
        if bits is None:
            raise ValueError(
                f"{who}: weight observer dtype should be torch.uint8 or torch.uint4 (quint8 / quint4x2), "
                f"got {obs.dtype}"
            )
        obs(mod.weight.detach().float())
        return obs, bits

    _BAG = False

    @classmethod
    def from_float(cls, mod: nn.Module, use_precomputed_fake_quant: bool = False) -> "Embedding":
        obs, bits = cls._observed(mod)
        new = cls(mod.num_embeddings, mod.embedding_dim, bits)
        new.set_weight(*quantize_rows(mod.weight, obs))
        return new


class EmbeddingBag(Embedding):
    """nn.quantized.EmbeddingBag on a plain table (modes 'sum', 'mean', 'max', per_sample_weights,
    compressed_indices_mapping), qplugin::plain_embedding_bag."""

    _BAG = True

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        mode: str = "sum",
        include_last_offset: bool = False,
        bits: int = 8,
    ) -> None:
        super().__init__(num_embeddings, embedding_dim, bits)
        if mode not in _EMB_MODES:
            raise ValueError(
                f"torch_qplugin.nn.plain.EmbeddingBag: mode should be 'sum', 'mean' or 'max', got '{mode}'"
            )
        self.mode, self._mode, self.include_last_offset = mode, _EMB_MODES[mode], include_last_offset
        self.pruned_weights = False

    def extra_repr(self) -> str:
        return super().extra_repr() + f", mode={self.mode}"

    def forward(
        self,
        indices: Tensor,
        offsets: Optional[Tensor] = None,
        per_sample_weights: Optional[Tensor] = None,
        compressed_indices_mapping: Optional[Tensor] = None,
    ) -> Tensor:
        return _q.plain_embedding_bag(
            self.weight,
            self.num_embeddings,
            self.embedding_dim,
            indices,
            offsets,
            self._mode,
            self.pruned_weights,
            per_sample_weights,
            compressed_indices_mapping,
            self.include_last_offset,
        )

    @classmethod
    def from_float(cls, mod: nn.Module, use_precomputed_fake_quant: bool = False) -> "EmbeddingBag":
        obs, bits = cls._observed(mod)
        new = cls(mod.num_embeddings, mod.embedding_dim, mod.mode, mod.include_last_offset, bits)
        new.set_weight(*quantize_rows(mod.weight, obs))
        return new


# ---- dynamic ---------------------------------------------------------------------------------
class DynamicLinear(Linear):
    """Float in, float out: x is quantized per call (full 8-bit range), int8 weights."""

    _FLOAT_MODULE = (nn.Linear, nn.modules.linear.NonDynamicallyQuantizableLinear)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}"

    def forward(self, x: Tensor) -> Tensor:
        return _q.plain_linear_dynamic(x, *self._call_args()[1][:5], False)

    @classmethod
    def from_float(cls, mod: nn.Module, use_precomputed_fake_quant: bool = False) -> nn.Module:
        allowed = cls._FLOAT_MODULE
        if not (type(mod) in allowed or hasattr(mod, "weight_fake_quant")):
            raise TypeError(
                f"torch_qplugin.nn.plain.DynamicLinear.from_float only works for "
                f"{', '.join(t.__name__ for t in allowed)}, but got: {type(mod).__name__}"
            )
        wobs = mod.weight_fake_quant if hasattr(mod, "weight_fake_quant") else _dynamic_weight_observer(mod)()
        if getattr(wobs, "dtype", None) == torch.float16:
            return DynamicLinearFP16.from_float(mod)
        wobs(mod.weight)
        new = cls(mod.in_features, mod.out_features, mod.bias is not None)
        new.set_weight(*plain_weight(mod.weight, wobs), None if mod.bias is None else mod.bias)
        return new


class DynamicLinearFP16(_Plain, nn.Module):
    """The fp16 dynamic Linear (nn.quantized.dynamic.Linear with dtype=torch.float16): float in,
    float out; buffers ``weight`` (float16), ``bias`` (float32 or None) and ``packed`` (the kernel's
    float16 panels from plain_linear_prepack_fp16: not saved in state_dict, rebuilt on load).
    qplugin::plain_linear_dynamic_fp16 runs linear_dynamic_fp16's kernel: the outputs are
    bit-identical to the quantized-tier module's."""

    _FP16_MAX = 65504.0

    def __init__(self, in_features: int, out_features: int, bias_: bool = True) -> None:
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.register_buffer("weight", torch.zeros(out_features, in_features, dtype=torch.float16))
        self.register_buffer("bias", torch.zeros(out_features) if bias_ else None)
        self.register_buffer("packed", _q.plain_linear_prepack_fp16(self.weight), persistent=False)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, dtype=torch.float16"

    def set_weight(self, weight: Tensor, bias: Optional[Tensor]) -> None:
        """float weight -> float16 (saturated to +-65504, as linear_prepack_fp16), float32 bias or None."""
        w = weight.detach()
        if w.dtype != torch.float16:
            w = w.float().clamp(-self._FP16_MAX, self._FP16_MAX).to(torch.float16)
        self.weight = w.contiguous()
        self.bias = None if bias is None else bias.detach().float().contiguous()
        self.packed = _q.plain_linear_prepack_fp16(self.weight)

    def forward(self, x: Tensor) -> Tensor:
        return _q.plain_linear_dynamic_fp16(x, self.weight, self.bias, self.packed)

    def _load_from_state_dict(
        self,
        state_dict: Dict[str, Any],
        prefix: str,
        local_metadata: Dict[str, Any],
        strict: bool,
        missing_keys: List[str],
        unexpected_keys: List[str],
        error_msgs: List[str],
    ):
        w = state_dict.get(prefix + "weight")
        if w is not None and w.dtype != torch.float16:
            error_msgs.append(
                f"{prefix}weight: torch_qplugin.nn.plain.DynamicLinearFP16 holds a float16 weight, got dtype {w.dtype}"
            )
            return
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
        )
        self.packed = _q.plain_linear_prepack_fp16(self.weight)

    @classmethod
    def from_float(cls, mod: nn.Module, use_precomputed_fake_quant: bool = False) -> "DynamicLinearFP16":
        new = cls(mod.in_features, mod.out_features, mod.bias is not None)
        new.set_weight(mod.weight, mod.bias)
        return new

    @classmethod
    def from_quantized(cls, qmod: nn.Module) -> "DynamicLinearFP16":
        """From an fp16 dynamic Linear (torch_qplugin's or torch's): its unpacked weight / bias."""
        w, b = qmod.weight(), qmod.bias()
        new = cls(w.shape[1], w.shape[0], b is not None)
        new.set_weight(w, b)
        return new


def _holder(in_features: int, out_features: int, bias: bool, dtype: Optional[torch.dtype]):
    """The weight holder of one recurrent projection: DynamicLinear (qint8) or DynamicLinearFP16."""
    return (DynamicLinearFP16 if dtype == torch.float16 else DynamicLinear)(in_features, out_features, bias)


def _set_holder(holder: nn.Module, w: Tensor, b: Optional[Tensor], factory: Callable[[], nn.Module]):
    """Sets a holder from a float weight: float16 as it is, qint8 through a fresh observer of ``factory``."""
    if isinstance(holder, DynamicLinearFP16):
        holder.set_weight(w, b)
        return
    obs = factory()
    obs(w.detach().float())
    holder.set_weight(*plain_weight(w, obs), b)


def _rnn_layer(x: Tensor, h: Tensor, c: Tensor, ih: nn.Module, hh: nn.Module, chunks: int, reverse: bool):
    """One layer, one direction on the holders' plain weights: plain_rnn_layer_dynamic(_fp16)."""
    if isinstance(ih, DynamicLinearFP16):
        return _q.plain_rnn_layer_dynamic_fp16(
            x, h, c, ih.weight, ih.bias, ih.packed, hh.weight, hh.bias, hh.packed, chunks, reverse
        )
    return _q.plain_rnn_layer_dynamic(x, h, c, *ih._call_args()[1][:5], *hh._call_args()[1][:5], chunks, reverse)


class RNNDirection(_Plain, nn.Module):
    """One layer, one direction of a plain LSTM / GRU (qplugin::plain_rnn_layer_dynamic, or
    plain_rnn_layer_dynamic_fp16 for float16 weights): the input and hidden projections as two
    DynamicLinear (DynamicLinearFP16) weight holders."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool,
        chunks: int,
        reverse: bool,
        dtype: Optional[torch.dtype] = None,
    ) -> None:
        super().__init__()
        self.ih = _holder(input_size, chunks * hidden_size, bias, dtype)
        self.hh = _holder(hidden_size, chunks * hidden_size, bias, dtype)
        self._NUM_CHUNKS, self.reverse, self.is_lstm = chunks, reverse, chunks == 4

    def forward(self, x: Tensor, h: Tensor, c: Tensor) -> Tuple[Tensor, Tensor, Tensor]:
        return _rnn_layer(x, h, c, self.ih, self.hh, self._NUM_CHUNKS, self.reverse)


class _CellBase(_Plain, nn.Module):
    """A dynamic RNN / LSTM / GRU cell: the input and hidden projections as two DynamicLinear
    (float16 weights: DynamicLinearFP16) weight holders (``ih``, ``hh``), forward as the quantized
    cell's on the plain ops."""

    _NUM_CHUNKS = 1

    def __init__(
        self, input_size: int, hidden_size: int, bias: bool = True, dtype: Optional[torch.dtype] = None
    ) -> None:
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        self.weight_dtype = dtype
        self.ih = _holder(input_size, self._NUM_CHUNKS * hidden_size, bias, dtype)
        self.hh = _holder(hidden_size, self._NUM_CHUNKS * hidden_size, bias, dtype)

    def extra_repr(self):
        return f"{self.input_size}, {self.hidden_size}"

    def _zeros(self, input: Tensor) -> Tensor:
        return torch.zeros(input.size(0), self.hidden_size, dtype=input.dtype)

    def _layer(self, input: Tensor, h: Tensor, c: Tensor):
        return _rnn_layer(input.unsqueeze(0), h, c, self.ih, self.hh, self._NUM_CHUNKS, False)

    @classmethod
    def from_float(cls, mod: nn.Module, use_precomputed_fake_quant: bool = False) -> "_CellBase":
        if type(mod) is not cls._FLOAT_MODULE:
            raise TypeError(
                f"torch_qplugin.nn.plain.{cls.__name__}.from_float only works for "
                f"{cls._FLOAT_MODULE.__name__}, but got: {type(mod).__name__}"
            )
        factory = _dynamic_weight_observer(mod)
        fp16 = getattr(factory(), "dtype", None) == torch.float16
        kwargs = {"nonlinearity": mod.nonlinearity} if isinstance(mod, nn.RNNCell) else {}
        new = cls(mod.input_size, mod.hidden_size, mod.bias, dtype=torch.float16 if fp16 else None, **kwargs)
        for holder, w, b in ((new.ih, mod.weight_ih, mod.bias_ih), (new.hh, mod.weight_hh, mod.bias_hh)):
            _set_holder(holder, w, b, factory)
        return new


class RNNCell(_CellBase):
    _FLOAT_MODULE = nn.RNNCell

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        nonlinearity: str = "tanh",
        dtype: Optional[torch.dtype] = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, dtype)
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNNCell: nonlinearity should be 'tanh' or 'relu', got '{nonlinearity}'")
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Optional[Tensor] = None) -> Tensor:
        if hx is None:
            hx = self._zeros(input)
        gi, gh = self.ih(input), self.hh(hx)
        return torch.tanh(gi + gh) if self.nonlinearity == "tanh" else torch.relu(gi + gh)


class LSTMCell(_CellBase):
    _FLOAT_MODULE = nn.LSTMCell
    _NUM_CHUNKS = 4

    def forward(self, input: Tensor, hx: Optional[Tuple[Tensor, Tensor]] = None) -> Tuple[Tensor, Tensor]:
        if hx is None:
            z = self._zeros(input)
            hx = (z, z)
        _, h, c = self._layer(input, hx[0], hx[1])
        return h, c


class GRUCell(_CellBase):
    _FLOAT_MODULE = nn.GRUCell
    _NUM_CHUNKS = 3

    def forward(self, input: Tensor, hx: Optional[Tensor] = None) -> Tensor:
        if hx is None:
            hx = self._zeros(input)
        _, h, _ = self._layer(input, hx, hx)
        return h


class _RNNBase(_Plain):
    """The dynamic LSTM / GRU (sequence loop and forward: _base.LSTMForward / GRUForward, shared
    with the quantized tier) over plain directions."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        dtype: Optional[torch.dtype] = None,
    ) -> None:
        nn.Module.__init__(self)
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.dtype = bidirectional, dtype
        self.num_directions = 2 if bidirectional else 1
        self._dirs = nn.ModuleList(
            RNNDirection(
                input_size if layer == 0 else hidden_size * self.num_directions,
                hidden_size,
                bias,
                self._CHUNKS,
                d == 1,
                dtype,
            )
            for layer in range(num_layers)
            for d in range(self.num_directions)
        )

    @classmethod
    def from_float(cls, mod: nn.Module, use_precomputed_fake_quant: bool = False) -> "_RNNBase":
        new, factory = cls._new_from_float(mod, "torch_qplugin.nn.plain")
        for i, d in enumerate(new._dirs):
            layer, rev = divmod(i, new.num_directions)
            sfx = f"_l{layer}" + ("_reverse" if rev else "")
            for holder, kind in ((d.ih, "ih"), (d.hh, "hh")):
                _set_holder(
                    holder, getattr(mod, f"weight_{kind}{sfx}"), getattr(mod, f"bias_{kind}{sfx}", None), factory
                )
        return new


class LSTM(_RNNBase, B.LSTMForward, nn.Module):
    pass


class GRU(_RNNBase, B.GRUForward, nn.Module):
    pass
