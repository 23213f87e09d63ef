"""Quantized Linear on qplugin::linear (mirrors torch.ao.nn.quantized.Linear)."""

from typing import Any, Dict, List, Optional, Tuple

import torch
import torch.nn as nn
from torch import Tensor

from ...plain._base import QParamsState, _linear_from_float_parts
from .utils import (
    _PackedPickle,
    _act_qparams,
    _guard_never_calibrated,
    _hide_packed_params_repr,
    _quantize_weight,
    _require_quantized,
    _zeros_qint8,
    quantized_dtype,
)

__all__ = ["LinearPackedParams", "Linear"]


class LinearPackedParams(_PackedPickle, nn.Module):
    # version history (same as torch's, so its state_dicts load):
    #   1: weight, bias as separate entries   2: + dtype   3: (weight, bias) tuple in _packed_params
    _version = 3

    def __init__(self, dtype: torch.dtype = torch.int8) -> None:
        super().__init__()
        dtype = quantized_dtype(dtype, "qplugin Linear")
        if dtype not in (torch.qint8, torch.float16):
            raise ValueError(f"qplugin Linear: weight dtype should be torch.qint8 or torch.float16, got {dtype}")
        self.dtype = dtype
        self.set_weight_bias(_zeros_qint8([1, 1]) if dtype == torch.qint8 else torch.zeros(1, 1), None)

    @torch.jit.export
    def set_weight_bias(self, weight: Tensor, bias: Optional[Tensor]) -> None:
        # qint8: a qint8 weight (linear_prepack); float16: a float weight, kept as float16
        # (linear_prepack_fp16, the dynamic fp16 scheme), as torch's LinearPackedParams
        if self.dtype == torch.qint8:
            self._packed_params = torch.ops.qplugin.linear_prepack(weight, bias)
        else:
            self._packed_params = torch.ops.qplugin.linear_prepack_fp16(weight, bias)

    @torch.jit.export
    def _weight_bias(self):
        if self.dtype == torch.qint8:
            return torch.ops.qplugin.linear_unpack(self._packed_params)
        return torch.ops.qplugin.linear_unpack_fp16(self._packed_params)

    def forward(self, x: Tensor) -> Tensor:
        return x

    def _save_to_state_dict(self, destination: Dict[str, Any], prefix: str, keep_vars: bool):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "dtype"] = self.dtype
        destination[prefix + "_packed_params"] = self._weight_bias()

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
        version = local_metadata.get("version", None)
        if prefix + "dtype" in state_dict:
            dtype = state_dict.pop(prefix + "dtype")
            if dtype not in (torch.qint8, torch.float16):
                error_msgs.append(f"{prefix}dtype: qplugin supports qint8 and float16 weights, got {dtype}")
                return
            self.dtype = dtype
        if (version is None or version < 3) and prefix + "_packed_params" not in state_dict:
            w, b = state_dict.pop(prefix + "weight", None), state_dict.pop(prefix + "bias", None)
        else:
            if prefix + "_packed_params" not in state_dict:
                missing_keys.append(prefix + "_packed_params")
                return
            w, b = state_dict.pop(prefix + "_packed_params")
        if w is None:
            missing_keys.append(prefix + "weight")
            return
        expected = getattr(self, "_expected_shape", None)
        if expected is not None and tuple(w.shape) != tuple(expected):
            error_msgs.append(
                f"size mismatch for {prefix[: -len('_packed_params.')]}weight: copying a param "
                f"with shape {tuple(w.shape)} from checkpoint, the shape in current model "
                f"is {tuple(expected)}."
            )
            return
        try:
            self.set_weight_bias(w, b)
        except RuntimeError as e:
            error_msgs.append(f"{prefix}: cannot pack the loaded weight/bias: {e}")
            return
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, False, missing_keys, unexpected_keys, error_msgs
        )

    def __repr__(self) -> str:
        return self._weight_bias().__repr__()


class Linear(QParamsState, nn.Module):
    """y = x W^T + b on quantized tensors (quint8 in, quint8 out at ``scale``/``zero_point``).

    Same constructor as torch.ao.nn.quantized.Linear; weights qint8 per-tensor or per-channel."""

    # version history: 1 weight/bias entries, 2 _packed_params module, 3 _packed_params tuple
    _version = 3
    _FLOAT_MODULE = (nn.Linear, nn.modules.linear.NonDynamicallyQuantizableLinear)
    _NAME = "torch_qplugin.nn.quantized.Linear"

    def __init__(
        self, in_features: int, out_features: int, bias_: bool = True, dtype: torch.dtype = torch.int8
    ) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        bias = torch.zeros(out_features, dtype=torch.float) if bias_ else None
        self._packed_params = LinearPackedParams(dtype)
        self._packed_params._expected_shape = (out_features, in_features)
        zeros = (
            _zeros_qint8([out_features, in_features])
            if self._packed_params.dtype == torch.qint8
            else torch.zeros(out_features, in_features)
        )
        self._packed_params.set_weight_bias(zeros, bias)
        self.scale = 1.0
        self.zero_point = 0

    def _get_name(self):
        return "QuantizedLinear"

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, scale={self.scale}, "
            f"zero_point={self.zero_point}, qscheme={self.weight().qscheme()}"
        )

    def __repr__(self) -> str:
        return _hide_packed_params_repr(self, LinearPackedParams)

    def forward(self, x: Tensor) -> Tensor:
        _require_quantized(x, "torch_qplugin.nn.quantized.Linear")
        return torch.ops.qplugin.linear(x, self._packed_params._packed_params, self.scale, self.zero_point)

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
        # scale / zero_point: QParamsState
        version = local_metadata.get("version", None)
        if (version is None or version == 1) and prefix + "weight" in state_dict:
            state_dict[prefix + "_packed_params.weight"] = state_dict.pop(prefix + "weight")
            state_dict[prefix + "_packed_params.bias"] = state_dict.pop(prefix + "bias", None)
        self._packed_params._expected_shape = (self.out_features, self.in_features)
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, False, missing_keys, unexpected_keys, error_msgs
        )

    def _weight_bias(self):
        return self._packed_params._weight_bias()

    def weight(self) -> Tensor:
        return self._weight_bias()[0]

    def bias(self) -> Optional[Tensor]:
        return self._weight_bias()[1]

    def set_weight_bias(self, w: Tensor, b: Optional[Tensor]) -> None:
        self._packed_params.set_weight_bias(w, b)

    @classmethod
    def _from_float_parts(cls, mod: nn.Module) -> Tuple[nn.Module, nn.Module, nn.Module, bool]:
        """(linear module holding weight/bias, activation module, weight observer, observer ran)."""
        return _linear_from_float_parts(cls, mod)

    @classmethod
    def from_float(cls, mod: nn.Module, use_precomputed_fake_quant: bool = False) -> "Linear":
        """Quantized module from an observed float module (or a fused / QAT one)."""
        lin, act, wobs, ran = cls._from_float_parts(mod)
        if not use_precomputed_fake_quant:
            wobs(lin.weight)
        scale, zp = _act_qparams(act, cls._NAME)
        qlinear = cls(lin.in_features, lin.out_features)
        qlinear.set_weight_bias(
            _quantize_weight(lin.weight, wobs), None if lin.bias is None else lin.bias.detach().float()
        )
        qlinear.scale, qlinear.zero_point = scale, zp
        return _guard_never_calibrated(qlinear, act)

    @classmethod
    def from_reference(cls, ref: nn.Module, output_scale: float, output_zero_point: int) -> "Linear":
        q = cls(ref.in_features, ref.out_features)
        q.set_weight_bias(ref.get_quantized_weight(), ref.bias)
        q.scale, q.zero_point = float(output_scale), int(output_zero_point)
        return q
