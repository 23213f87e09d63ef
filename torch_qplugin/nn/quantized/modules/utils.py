"""Helpers shared by the quantized modules (no torch.ao imports)."""
import inspect
from typing import Tuple

import torch
from torch import Tensor
from torch.nn.modules.module import _addindent

_PER_TENSOR = (torch.per_tensor_affine, torch.per_tensor_symmetric)
_PER_CHANNEL = (torch.per_channel_affine, torch.per_channel_symmetric)


def _require_quantized(x: Tensor, who: str) -> None:
    """The error a float tensor reaching a quantized module gets (scriptable)."""
    if not x.is_quantized:
        raise RuntimeError(
            who + ": expected a quantized input tensor, got a float tensor. Quantized modules take "
            "quantized tensors: insert a QuantStub (torch_qplugin.quantization.QuantStub) where float "
            "data enters the quantized part of the model (and a DeQuantStub where it leaves), then "
            "prepare / calibrate / convert again")


def _zeros_qint8(shape):
    return torch.ops.qplugin.quantize_per_tensor(torch.zeros(shape, dtype=torch.float), 1.0, 0, torch.qint8)


def _observer_of(mod, who):
    obs = getattr(mod, "activation_post_process", None)
    if obs is None:
        raise RuntimeError(
            f"{who}.from_float: {type(mod).__name__} has no activation_post_process (observer). "
            "Give the model a qconfig and run torch_qplugin.quantization.prepare(model) (or "
            "prepare_qat) and calibrate it before convert()")
    return obs


def _never_reached(obs) -> bool:
    """The observer recorded nothing and calibration never called it: the module it watches sits
    on a path no calibration batch took (e.g. the ``skip_add`` of a block without a residual
    connection). ``prepare`` counts calls in ``_qplugin_calls``; an observer prepared elsewhere
    (torch.ao.quantization) has no counter, and one that recorded nothing counts as never reached."""
    from ....quantization.observer import observer_state  # local: avoid an import cycle
    return observer_state(obs)[0] == "untouched" and not obs.__dict__.get("_qplugin_calls", 0)


def _act_qparams(mod, who):
    """(scale, zero_point) of the observer on ``mod``'s output, with clear errors. An observer
    that calibration never reached gives the placeholder (1.0, 0); ``from_float`` then passes its
    result through ``_guard_never_calibrated``, which makes it raise if it is ever called."""
    obs = _observer_of(mod, who)
    from ....quantization.observer import observer_state
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
            "such as inf); run calibration batches with real data through the prepared model before convert()")
    raise RuntimeError(
        f"{who}.from_float: the observer on {type(mod).__name__} has seen only part of the data it "
        f"needs: {why}; run calibration batches through the prepared model before convert()")


def _never_calibrated_message(qmod, path, float_name):
    where = (f"'{path}'" if path else "(name unknown: converted by from_float outside a convert() call)")
    return (f"torch_qplugin: the quantized module {where} ({qmod._get_name()}, converted from "
            f"{float_name}) was called, but no calibration batch reached it before convert(), so it "
            "has no output scale / zero point (torch would silently use 1.0 / 0). Run calibration "
            "data that takes this path through the prepared model, then convert again")


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
    from ....quantization import _compat as C
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


def _clamp_int(qw, obs, scale, zp):
    dtype = qw.dtype
    info = torch.iinfo(dtype)
    qmin, qmax = getattr(obs, "quant_min", info.min), getattr(obs, "quant_max", info.max)
    if qmin is None or qmax is None or (qmin <= info.min and qmax >= info.max):
        return qw
    ints = torch.ops.qplugin.int_repr(qw).clamp(qmin, qmax)
    if obs.qscheme in _PER_TENSOR:
        return torch.ops.qplugin.make_per_tensor_quantized_tensor(ints, float(scale), int(zp))
    return torch.ops.qplugin.make_per_channel_quantized_tensor(
        ints, scale.to(torch.double), zp.to(torch.long), obs.ch_axis)


def _quantize_weight(w, obs):
    """Quantizes a float weight with a (run) weight observer's qparams, on qplugin kernels."""
    obs = getattr(obs, "activation_post_process", obs) if not hasattr(obs, "calculate_qparams") else obs
    scale, zp = obs.calculate_qparams()
    dtype = obs.dtype
    if dtype != torch.qint8:
        raise ValueError(f"weight observer dtype should be torch.qint8, got {dtype}")
    w = w.detach().float()
    if obs.qscheme in _PER_TENSOR:
        qw = torch.ops.qplugin.quantize_per_tensor(w, float(scale), int(zp), torch.qint8)
    elif obs.qscheme in _PER_CHANNEL:
        qw = torch.ops.qplugin.quantize_per_channel(w, scale.to(torch.double), zp.to(torch.long),
                                                    int(obs.ch_axis), torch.qint8)
    else:
        raise ValueError(f"weight qscheme should be per-tensor or per-channel affine/symmetric, got {obs.qscheme}")
    return _clamp_int(qw, obs, scale, zp)


def _weight_observer(mod, who):
    """The (run) weight observer or fake-quant for ``mod``: QAT modules carry one."""
    if hasattr(mod, "weight_fake_quant"):
        return mod.weight_fake_quant, True
    qconfig = getattr(mod, "qconfig", None)
    if qconfig is None:
        raise RuntimeError(f"{who}.from_float: {type(mod).__name__} has no qconfig; set model.qconfig "
                           "(e.g. torch_qplugin.quantization.default_qconfig) and prepare the model first")
    return qconfig.weight(), False


def _hide_packed_params_repr(self, params_cls):
    extra_lines = self.extra_repr().split("\n") if self.extra_repr() else []
    child_lines = []
    for key, module in self._modules.items():
        if isinstance(module, params_cls):
            continue
        child_lines.append("(" + key + "): " + _addindent(repr(module), 2))
    lines = extra_lines + child_lines
    main = self._get_name() + "("
    if lines:
        if len(extra_lines) == 1 and not child_lines:
            main += extra_lines[0]
        else:
            main += "\n  " + "\n  ".join(lines) + "\n"
    return main + ")"


def _to_plain(obj):
    """Quantized tensors -> plain (int_repr, qparams) records, recursively through tuples.
    Pickles without torch's quantized-tensor rebuild path (and its storage warnings)."""
    if isinstance(obj, torch.Tensor) and obj.is_quantized:
        ints = torch.ops.qplugin.int_repr(obj).clone()
        if obj.qscheme() in _PER_TENSOR:
            return ("__qplugin_qtensor__", "per_tensor", ints, float(obj.q_scale()), int(obj.q_zero_point()))
        return ("__qplugin_qtensor__", "per_channel", ints, obj.q_per_channel_scales().clone(),
                obj.q_per_channel_zero_points().clone(), int(obj.q_per_channel_axis()))
    if isinstance(obj, torch.Tensor):
        return obj.detach().clone()
    if isinstance(obj, tuple):
        return tuple(_to_plain(o) for o in obj)
    return obj


def _from_plain(obj):
    if isinstance(obj, tuple) and len(obj) > 0 and isinstance(obj[0], str) and obj[0] == "__qplugin_qtensor__":
        if obj[1] == "per_tensor":
            return torch.ops.qplugin.make_per_tensor_quantized_tensor(obj[2], obj[3], obj[4])
        return torch.ops.qplugin.make_per_channel_quantized_tensor(obj[2], obj[3], obj[4], obj[5])
    if isinstance(obj, tuple):
        return tuple(_from_plain(o) for o in obj)
    return obj


class _PackedPickle:
    """Pickle / deepcopy through the unpacked (weight, bias), never the packed C++ object.

    Whole-module ``torch.save`` / ``torch.load`` and ``copy.deepcopy`` go through here; TorchScript
    serialisation uses the packed classes' own versioned pickle."""

    _PACKED_ATTRS = ("_packed_params",)

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_qplugin_weight_bias"] = _to_plain(self._weight_bias())
        for name in self._PACKED_ATTRS:
            state.pop(name, None)
        return state

    def __setstate__(self, state):
        state = dict(state)
        wb = _from_plain(state.pop("_qplugin_weight_bias"))
        torch.nn.Module.__setstate__(self, state)
        self.set_weight_bias(*wb)

    def __deepcopy__(self, memo):
        import copy
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        state = self.__getstate__()
        wb = state.pop("_qplugin_weight_bias")  # already fresh copies
        state = copy.deepcopy(state, memo)
        state["_qplugin_weight_bias"] = wb
        new.__setstate__(state)
        return new

    def __copy__(self):
        return self.__deepcopy__({})
