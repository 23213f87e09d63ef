"""Helpers shared by the quantized modules (no torch.ao imports). The readers of observed float
modules are the plain tier's (torch_qplugin.nn.plain._base), re-exported here."""

from typing import Any, Dict, List

import torch
from torch import Tensor
from torch.nn.modules.module import _addindent

from ...plain._base import (  # noqa: F401
    _act_qparams,
    _guard_never_calibrated,
    _name_never_calibrated,
    _weight_observer,
)
from ....quantizer import plain_dtype, quantized_dtype

_PER_TENSOR = (torch.per_tensor_affine, torch.per_tensor_symmetric)
_PER_CHANNEL = (torch.per_channel_affine, torch.per_channel_symmetric)


def _require_quantized(x: Tensor, who: str) -> None:
    """The error a float tensor reaching a quantized module gets (scriptable)."""
    if not x.is_quantized:
        raise RuntimeError(
            who + ": expected a quantized input tensor, got a float tensor. Quantized modules take "
            "quantized tensors: insert a QuantStub (torch_qplugin.quantization.QuantStub) where float "
            "data enters the quantized part of the model (and a DeQuantStub where it leaves), then "
            "prepare / calibrate / convert again"
        )


def _zeros_qint8(shape: List[int]):
    return torch.ops.qplugin.quantize_per_tensor(
        torch.zeros(shape, dtype=torch.float), 1.0, 0, quantized_dtype(torch.int8, "torch_qplugin.nn.quantized")
    )


def _clamp_int(qw: Tensor, obs: torch.nn.Module, scale: Tensor, zp: Tensor):
    dtype = qw.dtype
    info = torch.iinfo(dtype)
    qmin, qmax = getattr(obs, "quant_min", info.min), getattr(obs, "quant_max", info.max)
    if qmin is None or qmax is None or (qmin <= info.min and qmax >= info.max):
        return qw
    ints = torch.ops.qplugin.int_repr(qw).clamp(qmin, qmax)
    if obs.qscheme in _PER_TENSOR:
        return torch.ops.qplugin.make_per_tensor_quantized_tensor(ints, float(scale), int(zp))
    return torch.ops.qplugin.make_per_channel_quantized_tensor(
        ints, scale.to(torch.double), zp.to(torch.long), obs.ch_axis
    )


def _quantize_weight(w: Tensor, obs: torch.nn.Module):
    """Quantizes a float weight with a (run) weight observer's qparams, on qplugin kernels."""
    obs = getattr(obs, "activation_post_process", obs) if not hasattr(obs, "calculate_qparams") else obs
    scale, zp = obs.calculate_qparams()
    if plain_dtype(obs.dtype) != torch.int8:
        raise ValueError(f"weight observer dtype should be torch.int8 (qint8), got {obs.dtype}")
    qint8 = quantized_dtype(torch.int8, "torch_qplugin.nn.quantized")
    w = w.detach().float()
    if obs.qscheme in _PER_TENSOR:
        qw = torch.ops.qplugin.quantize_per_tensor(w, float(scale), int(zp), qint8)
    elif obs.qscheme in _PER_CHANNEL:
        qw = torch.ops.qplugin.quantize_per_channel(
            w, scale.to(torch.double), zp.to(torch.long), int(obs.ch_axis), qint8
        )
    else:
        raise ValueError(f"weight qscheme should be per-tensor or per-channel affine/symmetric, got {obs.qscheme}")
    return _clamp_int(qw, obs, scale, zp)


def _hide_packed_params_repr(self: torch.nn.Module, params_cls: type):
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


def _to_plain(obj: Any):
    """Quantized tensors -> plain (int_repr, qparams) records, recursively through tuples.
    Pickles without torch's quantized-tensor rebuild path (and its storage warnings)."""
    if isinstance(obj, torch.Tensor) and obj.is_quantized:
        ints = torch.ops.qplugin.int_repr(obj).clone()
        if obj.qscheme() in _PER_TENSOR:
            return ("__qplugin_qtensor__", "per_tensor", ints, float(obj.q_scale()), int(obj.q_zero_point()))
        return (
            "__qplugin_qtensor__",
            "per_channel",
            ints,
            obj.q_per_channel_scales().clone(),
            obj.q_per_channel_zero_points().clone(),
            int(obj.q_per_channel_axis()),
        )
    if isinstance(obj, torch.Tensor):
        return obj.detach().clone()
    if isinstance(obj, tuple):
        return tuple(_to_plain(o) for o in obj)
    return obj


def _from_plain(obj: Any):
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

    def __getstate__(self) -> Dict[str, Any]:
        state = self.__dict__.copy()
        state["_qplugin_weight_bias"] = _to_plain(self._weight_bias())
        for name in self._PACKED_ATTRS:
            state.pop(name, None)
        return state

    def __setstate__(self, state: Dict[str, Any]) -> None:
        state = dict(state)
        wb = _from_plain(state.pop("_qplugin_weight_bias"))
        torch.nn.Module.__setstate__(self, state)
        self.set_weight_bias(*wb)

    def __deepcopy__(self, memo: Dict[int, Any]) -> "_PackedPickle":
        import copy

        new = type(self).__new__(type(self))
        memo[id(self)] = new
        state = self.__getstate__()
        wb = state.pop("_qplugin_weight_bias")  # already fresh copies
        state = copy.deepcopy(state, memo)
        state["_qplugin_weight_bias"] = wb
        new.__setstate__(state)
        return new

    def __copy__(self) -> "_PackedPickle":
        return self.__deepcopy__({})
