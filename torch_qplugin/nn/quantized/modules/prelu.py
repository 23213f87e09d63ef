"""Quantized PReLU on qplugin::prelu (slopes: 1 or one per channel of dim 1)."""

from typing import Any, Dict

import torch
import torch.nn as nn
from torch import Tensor

from .utils import _PER_CHANNEL, _act_qparams, _from_plain, _require_quantized, _to_plain, quantized_dtype

__all__ = ["PReLU"]

_WHO = "torch_qplugin.nn.quantized.PReLU"


class PReLU(nn.Module):
    """Constructor as torch.ao.nn.quantized.PReLU(output_scale, output_zero_point, num_parameters).

    Like torch's, the weight (a per-tensor quantized tensor) is a plain attribute, not a state_dict
    entry. from_float quantizes the float slopes with the qconfig's weight observer in the observer's
    own dtype (torch forces quint8, which clips negative slopes of a symmetric qint8 observer to 0)."""

    def __init__(self, output_scale: float, output_zero_point: int, num_parameters: int = 1) -> None:
        super().__init__()
        self.num_parameters = int(num_parameters)
        self.scale = float(output_scale)
        self.zero_point = int(output_zero_point)
        w = torch.full((self.num_parameters,), 0.25)
        self.set_weight(torch.ops.qplugin.quantize_per_tensor(w, 1.0 / 128, 0, quantized_dtype(torch.int8, _WHO)))

    def set_weight(self, w: Tensor) -> None:
        if w.numel() != self.num_parameters:
            raise ValueError(
                f"torch_qplugin.nn.quantized.PReLU.set_weight: weight should have "
                f"{self.num_parameters} elements, got {w.numel()}"
            )
        self.weight = w

    def _get_name(self):
        return "QuantizedPReLU"

    # whole-module torch.save / deepcopy: the weight as plain integers + qparams (no quantized-tensor
    # storage pickling)
    def __getstate__(self) -> Dict[str, Any]:
        state = self.__dict__.copy()
        state["weight"] = _to_plain(self.weight)
        return state

    def __setstate__(self, state: Dict[str, Any]) -> None:
        state = dict(state)
        state["weight"] = _from_plain(state["weight"])
        nn.Module.__setstate__(self, state)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}, scale={self.scale}, zero_point={self.zero_point}"

    def forward(self, input: Tensor) -> Tensor:
        _require_quantized(input, "torch_qplugin.nn.quantized.PReLU")
        return torch.ops.qplugin.prelu(input, self.weight, self.scale, self.zero_point)

    @classmethod
    def from_float(cls, mod: nn.Module, use_precomputed_fake_quant: bool = False) -> "PReLU":
        scale, zp = _act_qparams(mod, "torch_qplugin.nn.quantized.PReLU")
        return cls.from_reference(mod, scale, zp)

    @classmethod
    def from_reference(cls, mod: nn.Module, scale: float, zero_point: int) -> "PReLU":
        q = cls(float(scale), int(zero_point), mod.num_parameters)
        w = mod.weight.detach().float()
        qconfig = getattr(mod, "qconfig", None)
        obs = qconfig.weight() if qconfig is not None else None
        if obs is None or obs.qscheme in _PER_CHANNEL:
            # the op takes one per-tensor quantized weight: symmetric qint8 over the slopes' range
            ws, wz, dtype = max(float(w.abs().max()), 1e-8) / 127.0, 0, torch.int8
        else:
            obs(w)
            ws, wz = obs.calculate_qparams()
            dtype = obs.dtype
        dtype = quantized_dtype(dtype, _WHO)
        q.set_weight(torch.ops.qplugin.quantize_per_tensor(w, float(ws), int(wz), dtype))
        return q
