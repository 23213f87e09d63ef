"""What the plain modules and their quantized-tier twins share, owned by the plain tier.

* Readers of an observed (prepared / calibrated) float module: its output qparams, its weight
  observer, the guard of a module no calibration batch reached.
* The weightless modules' bases (activations, pooling, norms, Quantize / DeQuantize, QFunctional,
  Dropout): constructor, attributes, state_dict and ``from_float``, everything but ``forward``.
  torch_qplugin.nn.plain and torch_qplugin.nn.quantized each subclass them with their own
  ``forward`` (QTensor in / out, or quantized tensors), so both tiers load the same state dicts.
* The dynamic LSTM / GRU's sequence loop and forward over a list of per-direction modules.

No quantized dtype, no quantized-tensor API and no import of the quantized tier here: the quantized
tier builds on this file, never the reverse (test/test_import_graph.py).
"""

import inspect
from typing import List, Optional, Tuple

import torch
import torch.nn as nn
from torch import Tensor
from torch.nn.modules.utils import _ntuple, _pair

from ...quantization import _compat as C
from ...quantization.observer import observer_state
from ...quantizer import plain_dtype

_PER_TENSOR = (torch.per_tensor_affine, torch.per_tensor_symmetric)
_PER_CHANNEL = (torch.per_channel_affine, torch.per_channel_symmetric)


def who(cls):
    """The public name of a module class for messages: torch_qplugin.nn.<tier>.<Name>."""
    return cls.__module__.split(".modules", 1)[0] + "." + cls.__name__


# ---- reading observed float modules -------------------------------------------------------------
def _observer_of(mod, who):
    obs = getattr(mod, "activation_post_process", None)
    if obs is None:
        raise RuntimeError(
            f"{who}.from_float: {type(mod).__name__} has no activation_post_process (observer). "
            "Give the model a qconfig and run torch_qplugin.quantization.prepare(model) (or "
            "prepare_qat) and calibrate it before convert()"
        )
    return obs


def _never_reached(obs) -> bool:
    """The observer recorded nothing and calibration never called it: the module it watches sits
    on a path no calibration batch took (e.g. the ``skip_add`` of a block without a residual
    connection). ``prepare`` counts calls in ``_qplugin_calls``; an observer prepared elsewhere
    (torch's ao.quantization) has no counter, and one that recorded nothing counts as never reached."""
    return observer_state(obs)[0] == "untouched" and not obs.__dict__.get("_qplugin_calls", 0)


def _act_qparams(mod, who):
    """(scale, zero_point) of the observer on ``mod``'s output, with clear errors. An observer
    that calibration never reached gives the placeholder (1.0, 0); ``from_float`` then passes its
    result through ``_guard_never_calibrated``, which makes it raise if it is ever called."""
    obs = _observer_of(mod, who)
    state, why = observer_state(obs)
    if state == "calibrated":
        scale, zp = obs.calculate_qparams()
        return float(scale), int(zp)
    if _never_reached(obs):
        return 1.0, 0
    if state == "untouched":
        calls = obs.__dict__.get("_qplugin_calls", 0)
        raise RuntimeError(
            f"{who}.from_float: the observer on {type(mod).__name__} has seen no data although "
            f"calibration reached it {calls} time(s) (only empty tensors, or only values it ignores "
            "such as inf); run calibration batches with real data through the prepared model before convert()"
        )
    raise RuntimeError(
        f"{who}.from_float: the observer on {type(mod).__name__} has seen only part of the data it "
        f"needs: {why}; run calibration batches through the prepared model before convert()"
    )


def _never_calibrated_message(qmod, path, float_name):
    where = f"'{path}'" if path else "(name unknown: converted by from_float outside a convert() call)"
    return (
        f"torch_qplugin: the quantized module {where} ({qmod._get_name()}, converted from "
        f"{float_name}) was called, but no calibration batch reached it before convert(), so it "
        "has no output scale / zero point (torch would silently use 1.0 / 0). Run calibration "
        "data that takes this path through the prepared model, then convert again"
    )


def _raise_never_calibrated(self, input: Tuple[Tensor]) -> None:
    raise RuntimeError(self._qplugin_uncalibrated)


def _raise_never_calibrated2(self, input: Tuple[Tensor, Tensor]) -> None:
    raise RuntimeError(self._qplugin_uncalibrated)


_NEVER_CALIBRATED_HOOKS = (_raise_never_calibrated, _raise_never_calibrated2)


def _guard_never_calibrated(qmod, mod):
    """``qmod`` (just made from the float module ``mod``), made to raise a clear error naming it
    when called if calibration never reached ``mod``'s observer. Modules called through forward
    get a forward pre-hook (scriptable, so the check survives torch.jit.script / save / load and
    costs nothing on calibrated modules); a QFunctional becomes its never-calibrated subclass,
    whose ops raise."""
    obs = getattr(mod, "activation_post_process", None)
    if obs is None or not _never_reached(obs):
        return qmod
    qmod._qplugin_uncalibrated = _never_calibrated_message(qmod, C.torch_convert_path(), type(mod).__name__)
    never_cls = getattr(type(qmod), "_NEVER_CALIBRATED_CLS", None)
    if never_cls is not None:  # QFunctional: called through its ops (add, cat, ...), not forward
        qmod.__class__ = never_cls
    else:
        nargs = len(inspect.signature(type(qmod).forward).parameters) - 1
        qmod.register_forward_pre_hook(_NEVER_CALIBRATED_HOOKS[nargs - 1])
    return qmod


def _name_never_calibrated(qmod, path, float_name):
    """convert() knows the module's qualified name: put it in the error message."""
    if isinstance(qmod.__dict__.get("_qplugin_uncalibrated"), str):
        qmod._qplugin_uncalibrated = _never_calibrated_message(qmod, path, float_name)


def _weight_observer(mod, who):
    """The (run) weight observer or fake-quant for ``mod``: QAT modules carry one."""
    if hasattr(mod, "weight_fake_quant"):
        return mod.weight_fake_quant, True
    qconfig = getattr(mod, "qconfig", None)
    if qconfig is None:
        raise RuntimeError(
            f"{who}.from_float: {type(mod).__name__} has no qconfig; set model.qconfig "
            "(e.g. torch_qplugin.quantization.default_qconfig) and prepare the model first"
        )
    return qconfig.weight(), False


def _linear_from_float_parts(cls, mod):
    """(linear module holding weight/bias, activation module, weight observer, observer ran) of an
    observed Linear / LinearReLU or a QAT one (LinearBn1d folded), for ``cls.from_float``."""
    name = who(cls)
    if hasattr(mod, "weight_fake_quant"):  # QAT module
        if isinstance(mod, C.present(getattr(C.intrinsic_qat, "LinearBn1d", None))):
            mod.weight, mod.bias = torch.nn.utils.fusion.fuse_linear_bn_weights(
                mod.weight, mod.bias, mod.bn.running_mean, mod.bn.running_var, mod.bn.eps, mod.bn.weight, mod.bn.bias
            )
        return mod, mod, mod.weight_fake_quant, True
    allowed = cls._FLOAT_MODULE if isinstance(cls._FLOAT_MODULE, tuple) else (cls._FLOAT_MODULE,)
    if type(mod) not in allowed:
        raise TypeError(
            f"{name}.from_float only works for {', '.join(t.__name__ for t in allowed)}, but got: {type(mod).__name__}"
        )
    act = mod
    if isinstance(mod, C._FusedModule):
        mod = mod[0]
    wobs, ran = _weight_observer(mod, name)
    return mod, act, wobs, ran


def _per_output_channel(obs):
    """A per-channel weight observer of a transposed conv observes axis 1 (the output channels of
    a group), not torch's default axis 0 (the input channels), which no kernel can use."""
    target = getattr(obs, "activation_post_process", obs)
    if getattr(target, "qscheme", None) in _PER_CHANNEL and getattr(target, "ch_axis", 1) != 1:
        target.ch_axis = 1
        if hasattr(obs, "ch_axis"):
            obs.ch_axis = 1


def _dynamic_weight_observer(mod):
    """The weight observer factory of a module to quantize dynamically (default_dynamic_qconfig's
    when it has no qconfig)."""
    qconfig = getattr(mod, "qconfig", None)
    if qconfig is not None and qconfig.weight is not None:
        return qconfig.weight
    from ...quantization.qconfig import default_dynamic_qconfig

    return default_dynamic_qconfig.weight


def _weight_dtype(obs, who):
    """torch.int8 or torch.float16 (the fp16 scheme), from a dynamic weight observer's dtype."""
    dtype = plain_dtype(getattr(obs, "dtype", torch.int8))
    if dtype not in (torch.int8, torch.float16):
        raise ValueError(f"{who}: weight dtype should be torch.int8 (qint8) or torch.float16, got {dtype}")
    return dtype


def _weight_only_observer(mod, who):
    """The (fresh) weight observer of an embedding: its qconfig's, or float_qparams_weight_only_qconfig's."""
    if hasattr(mod, "weight_fake_quant"):
        raise NotImplementedError(f"{who}.from_float: QAT embeddings are not supported yet")
    qconfig = getattr(mod, "qconfig", None)
    if qconfig is not None and qconfig.weight is not None:
        return qconfig.weight()
    from ...quantization.qconfig import float_qparams_weight_only_qconfig

    return float_qparams_weight_only_qconfig.weight()


# ---- weightless modules: everything but forward -------------------------------------------------
class QParamsState:
    """state_dict entries ``scale`` / ``zero_point`` (torch keeps them as buffers on these
    modules), while forward reads plain float / int attributes."""

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "scale"] = torch.tensor(self.scale, dtype=torch.double)
        destination[prefix + "zero_point"] = torch.tensor(self.zero_point)

    def _load_from_state_dict(
        self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
    ):
        for key in ("scale", "zero_point"):
            if prefix + key not in state_dict:
                missing_keys.append(prefix + key)
                return
        self.scale = float(state_dict.pop(prefix + "scale"))
        self.zero_point = int(state_dict.pop(prefix + "zero_point"))
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
        )


class Quantize(nn.Module):
    """float -> quantized (per tensor) with ``scale``, ``zero_point``, ``dtype``."""

    scale: Tensor
    zero_point: Tensor

    def __init__(self, scale, zero_point, dtype, factory_kwargs=None):
        factory_kwargs = nn.factory_kwargs(factory_kwargs)
        super().__init__()
        self.register_buffer("scale", torch.tensor([scale], **factory_kwargs))
        self.register_buffer(
            "zero_point",
            torch.tensor([zero_point], dtype=torch.long, **{k: v for k, v in factory_kwargs.items() if k != "dtype"}),
        )
        self.dtype = dtype

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        scale, zp = _act_qparams(mod, who(cls))
        return _guard_never_calibrated(cls(scale, zp, mod.activation_post_process.dtype), mod)

    def extra_repr(self):
        return f"scale={self.scale}, zero_point={self.zero_point}, dtype={self.dtype}"


class DeQuantize(nn.Module):
    """quantized -> float."""

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        return cls()


class ReLU(nn.ReLU):
    """max(x, zero_point): keeps the input's qparams (bit-exact)."""

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        return cls(mod.inplace)


class ReLU6(nn.ReLU):
    """min(max(x, 0), 6) keeping the input's qparams."""

    def __init__(self, inplace=False):
        super().__init__(inplace)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        return cls(mod.inplace)


class Hardswish(QParamsState, nn.Hardswish):
    def __init__(self, scale, zero_point, device=None, dtype=None):
        super().__init__()
        self.scale = float(scale)
        self.zero_point = int(zero_point)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        scale, zp = _act_qparams(mod, who(cls))
        return _guard_never_calibrated(cls(scale, zp), mod)


class ELU(nn.ELU):
    def __init__(self, scale, zero_point, alpha=1.0):
        super().__init__(alpha)
        self.scale = float(scale)
        self.zero_point = int(zero_point)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        scale, zp = _act_qparams(mod, who(cls))
        return _guard_never_calibrated(cls(scale, zp, mod.alpha), mod)


class LeakyReLU(QParamsState, nn.LeakyReLU):
    def __init__(
        self,
        scale: float,
        zero_point: int,
        negative_slope: float = 1e-2,
        inplace: bool = False,
        device=None,
        dtype=None,
    ):
        super().__init__(negative_slope, inplace)
        self.scale = float(scale)
        self.zero_point = int(zero_point)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        scale, zp = _act_qparams(mod, who(cls))
        return _guard_never_calibrated(cls(scale, zp, mod.negative_slope, mod.inplace), mod)


class _FixedOrObservedQParams:
    """from_float: the output qparams the float module's observer chose, if it has one, else the
    class's fixed defaults."""

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        if getattr(mod, "activation_post_process", None) is not None:
            scale, zp = _act_qparams(mod, who(cls))
            return _guard_never_calibrated(cls(scale, zp), mod)
        return cls()


class Sigmoid(_FixedOrObservedQParams, nn.Sigmoid):
    """Output qparams default to the fixed 1/256, 0 (uint8) torch uses for sigmoid."""

    def __init__(self, output_scale: float = 1.0 / 256.0, output_zero_point: int = 0):
        super().__init__()
        self.output_scale = float(output_scale)
        self.output_zero_point = int(output_zero_point)


class Hardsigmoid(_FixedOrObservedQParams, nn.Hardsigmoid):
    """relu6(x + 3) / 6. Output qparams default to the fixed ones torch's quantized hardsigmoid uses
    (its eager convert leaves nn.Hardsigmoid float and runs that kernel): scale 1/256 with zero
    point 0 for uint8 input, -128 for int8 input. MobileNetV3's squeeze-excitation uses it as
    ``scale_activation``."""

    output_zero_point: Optional[int]

    def __init__(
        self, output_scale: float = 1.0 / 256.0, output_zero_point: Optional[int] = None, inplace: bool = False
    ):
        super().__init__(inplace)
        self.output_scale = float(output_scale)
        self.output_zero_point = None if output_zero_point is None else int(output_zero_point)

    def extra_repr(self):
        return f"output_scale={self.output_scale}, output_zero_point={self.output_zero_point}"


class Softmax(nn.Softmax):
    """softmax over ``dim`` requantized to (scale, zero_point); dim None picks torch's legacy
    default (0 for 0-, 1- and 3-d inputs, else 1), as torch's quantized Softmax."""

    def __init__(self, dim=None, scale=1.0, zero_point=0):
        super().__init__(dim)
        self.scale = float(scale)
        self.zero_point = int(zero_point)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        scale, zp = _act_qparams(mod, who(cls))
        return cls(mod.dim, scale, zp)

    @classmethod
    def from_reference(cls, mod, scale, zero_point):
        return cls(mod.dim, float(scale), int(zero_point))


def _ints2(v) -> List[int]:
    return list(_pair(v))


class MaxPool2d(nn.MaxPool2d):
    """Max pooling (bit-exact, keeps qparams)."""

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        if return_indices:
            raise ValueError(f"{who(type(self))}: return_indices=True is not supported")
        super().__init__(kernel_size, stride, padding, dilation, return_indices, ceil_mode)
        self._k = _ints2(kernel_size)
        self._s = _ints2(stride if stride is not None else kernel_size)
        self._p = _ints2(padding)
        self._d = _ints2(dilation)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        return cls(mod.kernel_size, mod.stride, mod.padding, mod.dilation, mod.return_indices, mod.ceil_mode)


class _AvgPoolNd:
    """Average pooling (keeps the input's qparams) over ``_DIMS`` spatial dimensions."""

    _DIMS = 2

    def __init__(
        self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None
    ):
        super().__init__(kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
        t = _ntuple(self._DIMS)
        self._k = list(t(kernel_size))
        self._s = list(t(stride if stride is not None else kernel_size))
        self._p = list(t(padding))

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        return cls(mod.kernel_size, mod.stride, mod.padding, mod.ceil_mode, mod.count_include_pad, mod.divisor_override)


class _AdaptiveAvgPoolNd:
    """Adaptive average pooling (keeps qparams) over ``_DIMS`` spatial dimensions. ``None`` in
    output_size keeps that input dimension."""

    _DIMS = 2

    def __init__(self, output_size):
        super().__init__(output_size)
        self._size = [-1 if s is None else int(s) for s in _ntuple(self._DIMS)(output_size)]  # -1: the input's

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        return cls(mod.output_size)


class AvgPool2d(_AvgPoolNd, nn.AvgPool2d):
    pass


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd, nn.AdaptiveAvgPool2d):
    pass


class AvgPool3d(_AvgPoolNd, nn.AvgPool3d):
    _DIMS = 3


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd, nn.AdaptiveAvgPool3d):
    _DIMS = 3


class BatchNorm(QParamsState, nn.modules.batchnorm._BatchNorm):
    """BatchNorm2d / 3d (and fused BNReLU): running statistics folded into one per-channel affine
    requantize. Constructor and state_dict (weight, bias, running_mean, running_var,
    num_batches_tracked, scale, zero_point) as torch's quantized modules'."""

    _NAME = ""
    _DIMS = 4

    def __init__(self, num_features, eps=1e-5, momentum=0.1, device=None, dtype=None):
        super().__init__(num_features, eps, momentum, True, True, device=device, dtype=dtype)
        self.scale = 1.0
        self.zero_point = 0

    def _check_input_dim(self, input):
        if input.dim() != self._DIMS:
            raise ValueError(f"{self._NAME}: input should be {self._DIMS}-D, got {input.dim()} dims")

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        scale, zp = _act_qparams(mod, who(cls))
        if isinstance(mod, C._FusedModule):  # BNReLU2d / 3d: (bn, relu)
            mod = mod[0]
        return cls._from_bn(mod, scale, zp)

    @classmethod
    def from_reference(cls, bn, output_scale, output_zero_point):
        return cls._from_bn(bn, float(output_scale), int(output_zero_point))

    @classmethod
    def _from_bn(cls, bn, scale, zp):
        if bn.running_mean is None or bn.running_var is None:
            raise ValueError(
                f"{who(cls)}.from_float: the float BatchNorm should track running statistics (track_running_stats=True)"
            )
        new = cls(bn.num_features, bn.eps, bn.momentum if bn.momentum is not None else 0.1)
        with torch.no_grad():
            if bn.affine:
                new.weight.copy_(bn.weight)
                new.bias.copy_(bn.bias)
            new.running_mean.copy_(bn.running_mean)
            new.running_var.copy_(bn.running_var)
            if bn.num_batches_tracked is not None:
                new.num_batches_tracked.copy_(bn.num_batches_tracked)
        new.weight.requires_grad_(False)
        new.bias.requires_grad_(False)
        new.scale = float(scale)
        new.zero_point = int(zp)
        return new


def _param(t: Optional[Tensor]) -> Optional[nn.Parameter]:
    """A float weight / bias as a frozen Parameter (None stays None)."""
    if t is None:
        return None
    return nn.Parameter(t.detach().clone().float(), requires_grad=False)


def _set_affine(m, weight, bias, scale, zero_point):
    """A norm's frozen affine weight / bias and its output qparams."""
    m.weight, m.bias = _param(weight), _param(bias)
    m.scale, m.zero_point = float(scale), int(zero_point)


class LayerNorm(QParamsState, nn.LayerNorm):
    """Constructor arguments and state_dict keys (weight, bias, scale, zero_point) as
    torch's quantized modules'."""

    def __init__(
        self,
        normalized_shape,
        weight,
        bias,
        scale,
        zero_point,
        eps=1e-5,
        elementwise_affine=True,
        device=None,
        dtype=None,
    ):
        super().__init__(normalized_shape, eps=eps, elementwise_affine=elementwise_affine, device=device, dtype=dtype)
        _set_affine(self, weight, bias, scale, zero_point)
        self._shape: List[int] = [int(s) for s in self.normalized_shape]

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        scale, zp = _act_qparams(mod, who(cls))
        return cls(mod.normalized_shape, mod.weight, mod.bias, scale, zp, mod.eps, mod.elementwise_affine)

    @classmethod
    def from_reference(cls, mod, scale, zero_point):
        return cls(
            mod.normalized_shape, mod.weight, mod.bias, float(scale), int(zero_point), mod.eps, mod.elementwise_affine
        )


class GroupNorm(QParamsState, nn.GroupNorm):
    __constants__ = ["num_groups", "num_channels", "eps", "affine"]

    def __init__(
        self, num_groups, num_channels, weight, bias, scale, zero_point, eps=1e-5, affine=True, device=None, dtype=None
    ):
        super().__init__(num_groups, num_channels, eps, affine, device=device, dtype=dtype)
        _set_affine(self, weight, bias, scale, zero_point)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        scale, zp = _act_qparams(mod, who(cls))
        return cls(mod.num_groups, mod.num_channels, mod.weight, mod.bias, scale, zp, mod.eps, mod.affine)


class InstanceNorm(QParamsState):
    """Statistics of each (n, c) plane in every mode (as torch's quantized InstanceNorm: running
    statistics, if tracked by the float module, are not used)."""

    _NAME = ""

    def __init__(
        self,
        num_features,
        weight,
        bias,
        scale,
        zero_point,
        eps=1e-5,
        momentum=0.1,
        affine=False,
        track_running_stats=False,
        device=None,
        dtype=None,
    ):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device=device, dtype=dtype)
        _set_affine(self, weight, bias, scale, zero_point)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        scale, zp = _act_qparams(mod, who(cls))
        return cls.from_reference(mod, scale, zp)

    @classmethod
    def from_reference(cls, mod, scale, zero_point):
        # keywords: torch's from_float passes affine positionally into momentum's place
        return cls(
            mod.num_features,
            mod.weight,
            mod.bias,
            float(scale),
            int(zero_point),
            eps=mod.eps,
            momentum=mod.momentum,
            affine=mod.affine,
            track_running_stats=mod.track_running_stats,
        )


class Dropout(nn.Dropout):
    """The identity in eval (quantized models run inference only), as torch's."""

    def forward(self, input: Tensor) -> Tensor:
        return input

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        return cls(mod.p, mod.inplace)

    @classmethod
    def from_reference(cls, mod, scale, zero_point):
        return cls(mod.p, mod.inplace)


class QFunctional(nn.Module):
    """add / cat / mul / ... at ``scale`` / ``zero_point``: state and from_float (the ops are the
    tiers')."""

    _version = 1

    def __init__(self):
        super().__init__()
        self.scale = 1.0
        self.zero_point = 0
        self.activation_post_process = nn.Identity()

    def _get_name(self):
        return "QFunctional"

    def extra_repr(self):
        return f"scale={self.scale}, zero_point={self.zero_point}"

    def forward(self, x):
        raise RuntimeError("Functional is not intended to use the 'forward'. Please use the underlying operation")

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "scale"] = torch.tensor(self.scale, dtype=torch.double)  # exact round trip
        destination[prefix + "zero_point"] = torch.tensor(self.zero_point)

    def _load_from_state_dict(
        self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
    ):
        self.scale = float(state_dict.pop(prefix + "scale"))
        self.zero_point = int(state_dict.pop(prefix + "zero_point"))
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, False, missing_keys, unexpected_keys, error_msgs
        )

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        scale, zp = _act_qparams(mod, who(cls))
        new = cls()
        new.scale, new.zero_point = scale, zp
        return _guard_never_calibrated(new, mod)


# ---- dynamic LSTM / GRU over per-direction modules ``_dirs`` ----------------------------------------
class RecurrentBase:
    """The sequence loop, repr and from_float shape of a dynamic LSTM / GRU whose ``_dirs`` (one
    module a layer and direction) each run a whole sequence: ``d(x, h, c) -> (out, h, c)``."""

    _CHUNKS = 4
    _FLOAT_MODULE = nn.LSTM

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.batch_first:
            s += ", batch_first=True"
        if self.bidirectional:
            s += ", bidirectional=True"
        return s

    def _run(self, input: Tensor, h0: Tensor, c0: Tensor) -> Tuple[Tensor, Tensor, Tensor]:
        x = input.transpose(0, 1) if self.batch_first else input
        hs: List[Tensor] = []
        cs: List[Tensor] = []
        layer_out: List[Tensor] = []
        for i, mod in enumerate(self._dirs):
            out, h, c = mod(x, h0[i], c0[i])
            hs.append(h)
            cs.append(c)
            layer_out.append(out)
            if len(layer_out) == self.num_directions:
                x = layer_out[0] if self.num_directions == 1 else torch.cat(layer_out, 2)
                layer_out = []
        if self.batch_first:
            x = x.transpose(0, 1)
        return x, torch.stack(hs, 0), torch.stack(cs, 0)

    @classmethod
    def _new_from_float(cls, mod, who):
        """(an empty module shaped like the float LSTM / GRU ``mod``, its weight observer factory)."""
        if type(mod) is not cls._FLOAT_MODULE:
            raise TypeError(
                f"{who}.{cls.__name__}.from_float only works "
                f"for {cls._FLOAT_MODULE.__name__}, but got: {type(mod).__name__}"
            )
        if getattr(mod, "proj_size", 0):
            raise ValueError(f"{who}.{cls.__name__}: proj_size is not supported")
        factory = _dynamic_weight_observer(mod)
        dtype = _weight_dtype(factory(), f"{who}.{cls.__name__}")
        return (
            cls(
                mod.input_size,
                mod.hidden_size,
                mod.num_layers,
                mod.bias,
                mod.batch_first,
                mod.dropout,
                mod.bidirectional,
                dtype=dtype,
            ),
            factory,
        )


class LSTMForward(RecurrentBase):
    _CHUNKS = 4
    _FLOAT_MODULE = nn.LSTM

    def forward(
        self, input: Tensor, hx: Optional[Tuple[Tensor, Tensor]] = None
    ) -> Tuple[Tensor, Tuple[Tensor, Tensor]]:
        unbatched = input.dim() == 2
        if unbatched:
            input = input.unsqueeze(1)
            if hx is not None:
                hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
        if hx is None:
            b = input.size(0) if self.batch_first else input.size(1)
            z = torch.zeros(self.num_layers * self.num_directions, b, self.hidden_size, dtype=input.dtype)
            hx = (z, z)
        out, h, c = self._run(input, hx[0], hx[1])
        if unbatched:
            return out.squeeze(1), (h.squeeze(1), c.squeeze(1))
        return out, (h, c)


class GRUForward(RecurrentBase):
    _CHUNKS = 3
    _FLOAT_MODULE = nn.GRU

    def forward(self, input: Tensor, hx: Optional[Tensor] = None) -> Tuple[Tensor, Tensor]:
        unbatched = input.dim() == 2
        if unbatched:
            input = input.unsqueeze(1)
            if hx is not None:
                hx = hx.unsqueeze(1)
        if hx is None:
            b = input.size(0) if self.batch_first else input.size(1)
            hx = torch.zeros(self.num_layers * self.num_directions, b, self.hidden_size, dtype=input.dtype)
        out, h, _ = self._run(input, hx, hx)
        if unbatched:
            return out.squeeze(1), h.squeeze(1)
        return out, h
