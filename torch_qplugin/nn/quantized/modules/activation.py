"""Quantized activations and pooling on qplugin kernels (constructor, state and from_float:
torch_qplugin.nn.plain._base, shared with the plain forms)."""

from typing import List, Optional

import torch
from torch import Tensor

from ...plain import _base as B
from .utils import _require_quantized

__all__ = [
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
]


class ReLU(B.ReLU):
    """max(x, zero_point): keeps the input's qparams (bit-exact)."""

    def _get_name(self):
        return "QuantizedReLU"

    def forward(self, input: Tensor) -> Tensor:
        _require_quantized(input, "torch_qplugin.nn.quantized.ReLU")
        return torch.ops.qplugin.relu(input)


class ReLU6(B.ReLU6):
    """min(max(x, 0), 6) keeping the input's qparams."""

    def _get_name(self):
        return "QuantizedReLU6"

    def forward(self, input: Tensor) -> Tensor:
        _require_quantized(input, "torch_qplugin.nn.quantized.ReLU6")
        return torch.ops.qplugin.relu6(input, self.inplace)


class Hardswish(B.Hardswish):
    def _get_name(self):
        return "QuantizedHardswish"

    def forward(self, input: Tensor) -> Tensor:
        _require_quantized(input, "torch_qplugin.nn.quantized.Hardswish")
        return torch.ops.qplugin.hardswish(input, self.scale, self.zero_point)


class ELU(B.ELU):
    def _get_name(self):
        return "QuantizedELU"

    def forward(self, input: Tensor) -> Tensor:
        _require_quantized(input, "torch_qplugin.nn.quantized.ELU")
        return torch.ops.qplugin.elu(input, self.scale, self.zero_point, self.alpha)


class LeakyReLU(B.LeakyReLU):
    def _get_name(self):
        return "QuantizedLeakyReLU"

    def forward(self, input: Tensor) -> Tensor:
        _require_quantized(input, "torch_qplugin.nn.quantized.LeakyReLU")
        return torch.ops.qplugin.leaky_relu(input, self.negative_slope, self.inplace, self.scale, self.zero_point)


class Sigmoid(B.Sigmoid):
    """Output qparams default to the fixed 1/256, 0 (quint8) torch uses for sigmoid."""

    def forward(self, input: Tensor) -> Tensor:
        _require_quantized(input, "torch_qplugin.nn.quantized.Sigmoid")
        return torch.ops.qplugin.sigmoid(input, self.output_scale, self.output_zero_point)


class Hardsigmoid(B.Hardsigmoid):
    """relu6(x + 3) / 6 on qplugin::hardsigmoid (output qparams: see the base)."""

    output_zero_point: Optional[int]  # TorchScript reads the class's own annotations

    def _get_name(self):
        return "QuantizedHardsigmoid"

    def forward(self, input: Tensor) -> Tensor:
        _require_quantized(input, "torch_qplugin.nn.quantized.Hardsigmoid")
        zp = self.output_zero_point
        if zp is None:
            zp = -128 if input.dtype == torch.qint8 else 0
        return torch.ops.qplugin.hardsigmoid(input, self.output_scale, zp)


class Softmax(B.Softmax):
    """softmax over ``dim`` requantized to (scale, zero_point); dim None picks torch's legacy
    default (0 for 0-, 1- and 3-d inputs, else 1), as torch's quantized Softmax."""

    def _get_name(self):
        return "QuantizedSoftmax"

    def forward(self, input: Tensor) -> Tensor:
        _require_quantized(input, "torch_qplugin.nn.quantized.Softmax")
        dim = self.dim
        if dim is None:
            nd = input.dim()
            dim = 0 if nd == 0 or nd == 1 or nd == 3 else 1
        return torch.ops.qplugin.softmax(input, dim, self.scale, self.zero_point)


class MaxPool2d(B.MaxPool2d):
    """Max pooling on quantized tensors (bit-exact, keeps qparams)."""

    def _get_name(self):
        return "QuantizedMaxPool2d"

    def forward(self, input: Tensor) -> Tensor:
        _require_quantized(input, "torch_qplugin.nn.quantized.MaxPool2d")
        return torch.ops.qplugin.max_pool2d(input, self._k, self._s, self._p, self._d, self.ceil_mode)


class AvgPool2d(B.AvgPool2d):
    """Average pooling on quantized tensors (keeps the input's qparams)."""

    def _get_name(self):
        return "QuantizedAvgPool2d"

    def forward(self, input: Tensor) -> Tensor:
        _require_quantized(input, "torch_qplugin.nn.quantized.AvgPool2d")
        return torch.ops.qplugin.avg_pool2d(
            input, self._k, self._s, self._p, self.ceil_mode, self.count_include_pad, self.divisor_override
        )


class AdaptiveAvgPool2d(B.AdaptiveAvgPool2d):
    """Adaptive average pooling on quantized tensors (keeps qparams). ``None`` in output_size
    keeps that input dimension."""

    def _get_name(self):
        return "QuantizedAdaptiveAvgPool2d"

    def forward(self, input: Tensor) -> Tensor:
        _require_quantized(input, "torch_qplugin.nn.quantized.AdaptiveAvgPool2d")
        out: List[int] = []
        for i in range(2):
            s = self._size[i]
            out.append(input.size(input.dim() - 2 + i) if s < 0 else s)
        return torch.ops.qplugin.adaptive_avg_pool2d(input, out)


class AvgPool3d(B.AvgPool3d):
    """3-d average pooling on quantized tensors (qplugin::avg_pool3d; keeps the input's qparams)."""

    def _get_name(self):
        return "QuantizedAvgPool3d"

    def forward(self, input: Tensor) -> Tensor:
        _require_quantized(input, "torch_qplugin.nn.quantized.AvgPool3d")
        return torch.ops.qplugin.avg_pool3d(
            input, self._k, self._s, self._p, self.ceil_mode, self.count_include_pad, self.divisor_override
        )


class AdaptiveAvgPool3d(B.AdaptiveAvgPool3d):
    """Adaptive 3-d average pooling on quantized tensors (keeps qparams). ``None`` in output_size
    keeps that input dimension."""

    def _get_name(self):
        return "QuantizedAdaptiveAvgPool3d"

    def forward(self, input: Tensor) -> Tensor:
        _require_quantized(input, "torch_qplugin.nn.quantized.AdaptiveAvgPool3d")
        out: List[int] = []
        for i in range(3):
            s = self._size[i]
            out.append(input.size(input.dim() - 3 + i) if s < 0 else s)
        return torch.ops.qplugin.adaptive_avg_pool3d(input, out)
