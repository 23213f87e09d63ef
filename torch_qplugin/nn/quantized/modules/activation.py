"""Quantized activations and pooling on qplugin kernels."""
from typing import List, Optional

import torch
import torch.nn as nn
from torch import Tensor
from torch.nn.modules.utils import _pair, _triple

from .utils import _act_qparams, _guard_never_calibrated, _require_quantized

__all__ = ["ReLU", "ReLU6", "Hardswish", "ELU", "LeakyReLU", "Sigmoid", "Hardsigmoid", "Softmax", "MaxPool2d",
           "AvgPool2d", "AdaptiveAvgPool2d", "AvgPool3d", "AdaptiveAvgPool3d"]


class ReLU(nn.ReLU):
    """max(x, zero_point): keeps the input's qparams (bit-exact)."""

    def _get_name(self):
        return "QuantizedReLU"

    def forward(self, input: Tensor) -> Tensor:
        _require_quantized(input, "torch_qplugin.nn.quantized.ReLU")
        return torch.ops.qplugin.relu(input)

    @staticmethod
    def from_float(mod, use_precomputed_fake_quant=False):
        return ReLU(mod.inplace)


class ReLU6(nn.ReLU):
    """min(max(x, 0), 6) keeping the input's qparams."""

    def __init__(self, inplace=False):
        super().__init__(inplace)

    def _get_name(self):
        return "QuantizedReLU6"

    def forward(self, input: Tensor) -> Tensor:
        _require_quantized(input, "torch_qplugin.nn.quantized.ReLU6")
        return torch.ops.qplugin.relu6(input, self.inplace)

    @staticmethod
    def from_float(mod, use_precomputed_fake_quant=False):
        return ReLU6(mod.inplace)


class _QParamsState:
    """state_dict entries ``scale`` / ``zero_point`` (torch keeps them as buffers on these
    modules), while forward reads plain float / int attributes."""

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "scale"] = torch.tensor(self.scale, dtype=torch.double)
        destination[prefix + "zero_point"] = torch.tensor(self.zero_point)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        for key in ("scale", "zero_point"):
            if prefix + key not in state_dict:
                missing_keys.append(prefix + key)
                return
        self.scale = float(state_dict.pop(prefix + "scale"))
        self.zero_point = int(state_dict.pop(prefix + "zero_point"))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)


class Hardswish(_QParamsState, nn.Hardswish):
    def __init__(self, scale, zero_point, device=None, dtype=None):
        super().__init__()
        self.scale = float(scale)
        self.zero_point = int(zero_point)

    def _get_name(self):
        return "QuantizedHardswish"

    def forward(self, input: Tensor) -> Tensor:
        _require_quantized(input, "torch_qplugin.nn.quantized.Hardswish")
        return torch.ops.qplugin.hardswish(input, self.scale, self.zero_point)

    @staticmethod
    def from_float(mod, use_precomputed_fake_quant=False):
        scale, zp = _act_qparams(mod, "torch_qplugin.nn.quantized.Hardswish")
        return _guard_never_calibrated(Hardswish(scale, zp), mod)


class ELU(nn.ELU):
    def __init__(self, scale, zero_point, alpha=1.0):
        super().__init__(alpha)
        self.scale = float(scale)
        self.zero_point = int(zero_point)

    def _get_name(self):
        return "QuantizedELU"

    def forward(self, input: Tensor) -> Tensor:
        _require_quantized(input, "torch_qplugin.nn.quantized.ELU")
        return torch.ops.qplugin.elu(input, self.scale, self.zero_point, self.alpha)

    @staticmethod
    def from_float(mod, use_precomputed_fake_quant=False):
        scale, zp = _act_qparams(mod, "torch_qplugin.nn.quantized.ELU")
        return _guard_never_calibrated(ELU(scale, zp, mod.alpha), mod)


class LeakyReLU(_QParamsState, nn.LeakyReLU):
    def __init__(self, scale: float, zero_point: int, negative_slope: float = 1e-2,
                 inplace: bool = False, device=None, dtype=None):
        super().__init__(negative_slope, inplace)
        self.scale = float(scale)
        self.zero_point = int(zero_point)

    def _get_name(self):
        return "QuantizedLeakyReLU"

    def forward(self, input: Tensor) -> Tensor:
        _require_quantized(input, "torch_qplugin.nn.quantized.LeakyReLU")
        return torch.ops.qplugin.leaky_relu(input, self.negative_slope, self.inplace, self.scale,
                                            self.zero_point)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        scale, zp = _act_qparams(mod, "torch_qplugin.nn.quantized.LeakyReLU")
        return _guard_never_calibrated(cls(scale, zp, mod.negative_slope, mod.inplace), mod)


class Sigmoid(nn.Sigmoid):
    """Output qparams default to the fixed 1/256, 0 (quint8) torch uses for sigmoid."""

    def __init__(self, output_scale: float = 1.0 / 256.0, output_zero_point: int = 0):
        super().__init__()
        self.output_scale = float(output_scale)
        self.output_zero_point = int(output_zero_point)

    def forward(self, input: Tensor) -> Tensor:
        _require_quantized(input, "torch_qplugin.nn.quantized.Sigmoid")
        return torch.ops.qplugin.sigmoid(input, self.output_scale, self.output_zero_point)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        if getattr(mod, "activation_post_process", None) is not None:
            scale, zp = _act_qparams(mod, "torch_qplugin.nn.quantized.Sigmoid")
            return _guard_never_calibrated(cls(scale, zp), mod)
        return cls()


class Hardsigmoid(nn.Hardsigmoid):
    """relu6(x + 3) / 6 on qplugin::hardsigmoid. Output qparams default to the fixed ones torch's
    quantized hardsigmoid uses (its eager convert leaves nn.Hardsigmoid float and runs that
    kernel): scale 1/256 with zero point 0 for quint8 input, -128 for qint8 input. MobileNetV3's
    squeeze-excitation uses it as ``scale_activation``."""

    output_zero_point: Optional[int]

    def __init__(self, output_scale: float = 1.0 / 256.0, output_zero_point: Optional[int] = None,
                 inplace: bool = False):
        super().__init__(inplace)
        self.output_scale = float(output_scale)
        self.output_zero_point = None if output_zero_point is None else int(output_zero_point)

    def _get_name(self):
        return "QuantizedHardsigmoid"

    def extra_repr(self):
        return f"output_scale={self.output_scale}, output_zero_point={self.output_zero_point}"

    def forward(self, input: Tensor) -> Tensor:
        _require_quantized(input, "torch_qplugin.nn.quantized.Hardsigmoid")
        zp = self.output_zero_point
        if zp is None:
            zp = -128 if input.dtype == torch.qint8 else 0
        return torch.ops.qplugin.hardsigmoid(input, self.output_scale, zp)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        if getattr(mod, "activation_post_process", None) is not None:
            scale, zp = _act_qparams(mod, "torch_qplugin.nn.quantized.Hardsigmoid")
            return _guard_never_calibrated(cls(scale, zp), mod)
        return cls()


class Softmax(nn.Softmax):
    """softmax over ``dim`` requantized to (scale, zero_point); dim None picks torch's legacy
    default (0 for 0-, 1- and 3-d inputs, else 1), as torch's quantized Softmax."""

    def __init__(self, dim=None, scale=1.0, zero_point=0):
        super().__init__(dim)
        self.scale = float(scale)
        self.zero_point = int(zero_point)

    def _get_name(self):
        return "QuantizedSoftmax"

    def forward(self, input: Tensor) -> Tensor:
        _require_quantized(input, "torch_qplugin.nn.quantized.Softmax")
        dim = self.dim
        if dim is None:
            nd = input.dim()
            dim = 0 if nd == 0 or nd == 1 or nd == 3 else 1
        return torch.ops.qplugin.softmax(input, dim, self.scale, self.zero_point)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        scale, zp = _act_qparams(mod, "torch_qplugin.nn.quantized.Softmax")
        return cls(mod.dim, scale, zp)

    @classmethod
    def from_reference(cls, mod, scale, zero_point):
        return cls(mod.dim, float(scale), int(zero_point))


def _ints2(v) -> List[int]:
    return list(_pair(v))


class MaxPool2d(nn.MaxPool2d):
    """Max pooling on quantized tensors (bit-exact, keeps qparams)."""

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        if return_indices:
            raise ValueError("torch_qplugin.nn.quantized.MaxPool2d: return_indices=True is not supported")
        super().__init__(kernel_size, stride, padding, dilation, return_indices, ceil_mode)
        self._k = _ints2(kernel_size)
        self._s = _ints2(stride if stride is not None else kernel_size)
        self._p = _ints2(padding)
        self._d = _ints2(dilation)

    def _get_name(self):
        return "QuantizedMaxPool2d"

    def forward(self, input: Tensor) -> Tensor:
        _require_quantized(input, "torch_qplugin.nn.quantized.MaxPool2d")
        return torch.ops.qplugin.max_pool2d(input, self._k, self._s, self._p, self._d, self.ceil_mode)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        return cls(mod.kernel_size, mod.stride, mod.padding, mod.dilation, mod.return_indices, mod.ceil_mode)


class AvgPool2d(nn.AvgPool2d):
    """Average pooling on quantized tensors (keeps the input's qparams)."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__(kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
        self._k = _ints2(kernel_size)
        self._s = _ints2(stride if stride is not None else kernel_size)
        self._p = _ints2(padding)

    def _get_name(self):
        return "QuantizedAvgPool2d"

    def forward(self, input: Tensor) -> Tensor:
        _require_quantized(input, "torch_qplugin.nn.quantized.AvgPool2d")
        return torch.ops.qplugin.avg_pool2d(input, self._k, self._s, self._p, self.ceil_mode,
                                            self.count_include_pad, self.divisor_override)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        return cls(mod.kernel_size, mod.stride, mod.padding, mod.ceil_mode, mod.count_include_pad,
                   mod.divisor_override)


class AdaptiveAvgPool2d(nn.AdaptiveAvgPool2d):
    """Adaptive average pooling on quantized tensors (keeps qparams). ``None`` in output_size
    keeps that input dimension."""

    def __init__(self, output_size):
        super().__init__(output_size)
        size = _pair(output_size)
        self._size = [-1 if s is None else int(s) for s in size]  # -1: keep the input's size

    def _get_name(self):
        return "QuantizedAdaptiveAvgPool2d"

    def forward(self, input: Tensor) -> Tensor:
        _require_quantized(input, "torch_qplugin.nn.quantized.AdaptiveAvgPool2d")
        out: List[int] = []
        for i in range(2):
            s = self._size[i]
            out.append(input.size(input.dim() - 2 + i) if s < 0 else s)
        return torch.ops.qplugin.adaptive_avg_pool2d(input, out)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        return cls(mod.output_size)


class AvgPool3d(nn.AvgPool3d):
    """3-d average pooling on quantized tensors (qplugin::avg_pool3d; keeps the input's qparams)."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__(kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
        self._k = list(_triple(kernel_size))
        self._s = list(_triple(stride if stride is not None else kernel_size))
        self._p = list(_triple(padding))

    def _get_name(self):
        return "QuantizedAvgPool3d"

    def forward(self, input: Tensor) -> Tensor:
        _require_quantized(input, "torch_qplugin.nn.quantized.AvgPool3d")
        return torch.ops.qplugin.avg_pool3d(input, self._k, self._s, self._p, self.ceil_mode,
                                            self.count_include_pad, self.divisor_override)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        return cls(mod.kernel_size, mod.stride, mod.padding, mod.ceil_mode, mod.count_include_pad,
                   mod.divisor_override)


class AdaptiveAvgPool3d(nn.AdaptiveAvgPool3d):
    """Adaptive 3-d average pooling on quantized tensors (keeps qparams). ``None`` in output_size
    keeps that input dimension."""

    def __init__(self, output_size):
        super().__init__(output_size)
        self._size = [-1 if s is None else int(s) for s in _triple(output_size)]  # -1: keep the input's

    def _get_name(self):
        return "QuantizedAdaptiveAvgPool3d"

    def forward(self, input: Tensor) -> Tensor:
        _require_quantized(input, "torch_qplugin.nn.quantized.AdaptiveAvgPool3d")
        out: List[int] = []
        for i in range(3):
            s = self._size[i]
            out.append(input.size(input.dim() - 3 + i) if s < 0 else s)
        return torch.ops.qplugin.adaptive_avg_pool3d(input, out)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        return cls(mod.output_size)
