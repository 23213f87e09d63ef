"""Fused quantized modules: linear/conv with relu, conv with a residual add."""

import torch
from torch import Tensor

from ....quantization import _compat as C
from ...quantized.modules.batchnorm import BatchNorm2d, BatchNorm3d
from ...quantized.modules.conv import Conv1d, Conv2d, Conv3d
from ...quantized.modules.linear import Linear
from ...quantized.modules.utils import _require_quantized

__all__ = ["LinearReLU", "ConvReLU1d", "ConvReLU2d", "ConvReLU3d", "ConvAdd2d", "ConvAddReLU2d", "BNReLU2d", "BNReLU3d"]


class LinearReLU(Linear):
    """relu(linear(x)) in one qplugin::linear_relu call."""

    _FLOAT_MODULE = (C.LinearReLU,)
    _NAME = "torch_qplugin.nn.intrinsic.quantized.LinearReLU"

    def _get_name(self):
        return "QuantizedLinearReLU"

    def forward(self, x: Tensor) -> Tensor:
        _require_quantized(x, "torch_qplugin.nn.intrinsic.quantized.LinearReLU")
        return torch.ops.qplugin.linear_relu(x, self._packed_params._packed_params, self.scale, self.zero_point)


class ConvReLU1d(Conv1d):
    _FLOAT_MODULE = C.ConvReLU1d
    _NNIQAT_CONV_BN_MODULE = getattr(C.intrinsic_qat, "ConvBnReLU1d", None)
    _NAME = "torch_qplugin.nn.intrinsic.quantized.ConvReLU1d"

    def _get_name(self):
        return "QuantizedConvReLU1d"

    def forward(self, input: Tensor) -> Tensor:
        _require_quantized(input, "torch_qplugin.nn.intrinsic.quantized.ConvReLU1d")
        if input.dim() != 3:
            raise ValueError("Input shape must be `(N, C, L)`!")
        return torch.ops.qplugin.conv1d_relu(self._pad(input), self._packed_params, self.scale, self.zero_point)


class ConvReLU2d(Conv2d):
    _FLOAT_MODULE = C.ConvReLU2d
    _NNIQAT_CONV_BN_MODULE = getattr(C.intrinsic_qat, "ConvBnReLU2d", None)
    _NAME = "torch_qplugin.nn.intrinsic.quantized.ConvReLU2d"

    def _get_name(self):
        return "QuantizedConvReLU2d"

    def forward(self, input: Tensor) -> Tensor:
        _require_quantized(input, "torch_qplugin.nn.intrinsic.quantized.ConvReLU2d")
        if input.dim() != 4:
            raise ValueError("Input shape must be `(N, C, H, W)`!")
        return torch.ops.qplugin.conv2d_relu(self._pad(input), self._packed_params, self.scale, self.zero_point)


class ConvReLU3d(Conv3d):
    _FLOAT_MODULE = C.ConvReLU3d
    _NNIQAT_CONV_BN_MODULE = getattr(C.intrinsic_qat, "ConvBnReLU3d", None)
    _NAME = "torch_qplugin.nn.intrinsic.quantized.ConvReLU3d"

    def _get_name(self):
        return "QuantizedConvReLU3d"

    def forward(self, input: Tensor) -> Tensor:
        _require_quantized(input, "torch_qplugin.nn.intrinsic.quantized.ConvReLU3d")
        if input.dim() != 5:
            raise ValueError("Input shape must be `(N, C, D, H, W)`!")
        return torch.ops.qplugin.conv3d_relu(self._pad(input), self._packed_params, self.scale, self.zero_point)


class ConvAdd2d(Conv2d):
    """conv2d(x) + extra, requantized once (qplugin::conv2d_add)."""

    _FLOAT_MODULE = C.ConvAdd2d
    _NAME = "torch_qplugin.nn.intrinsic.quantized.ConvAdd2d"

    def _get_name(self):
        return "QuantizedConvAdd2d"

    def forward(self, input: Tensor, extra_input: Tensor) -> Tensor:
        _require_quantized(input, "torch_qplugin.nn.intrinsic.quantized.ConvAdd2d")
        if input.dim() != 4:
            raise ValueError("Input shape must be `(N, C, H, W)`!")
        return torch.ops.qplugin.conv2d_add(
            self._pad(input), extra_input, self._packed_params, self.scale, self.zero_point
        )


class ConvAddReLU2d(Conv2d):
    """relu(conv2d(x) + extra) (qplugin::conv2d_add_relu)."""

    _FLOAT_MODULE = C.ConvAddReLU2d
    _NAME = "torch_qplugin.nn.intrinsic.quantized.ConvAddReLU2d"

    def _get_name(self):
        return "QuantizedConvAddReLU2d"

    def forward(self, input: Tensor, extra_input: Tensor) -> Tensor:
        _require_quantized(input, "torch_qplugin.nn.intrinsic.quantized.ConvAddReLU2d")
        if input.dim() != 4:
            raise ValueError("Input shape must be `(N, C, H, W)`!")
        return torch.ops.qplugin.conv2d_add_relu(
            self._pad(input), extra_input, self._packed_params, self.scale, self.zero_point
        )


class BNReLU2d(BatchNorm2d):
    """relu(batch_norm2d(x)) in one qplugin::batch_norm2d_relu call."""

    _NAME = "BNReLU2d"
    _FLOAT_MODULE = C.BNReLU2d

    def forward(self, input: Tensor) -> Tensor:
        _require_quantized(input, "torch_qplugin.nn.intrinsic.quantized.BNReLU2d")
        return torch.ops.qplugin.batch_norm2d_relu(
            input, self.weight, self.bias, self.running_mean, self.running_var, self.eps, self.scale, self.zero_point
        )


class BNReLU3d(BatchNorm3d):
    """relu(batch_norm3d(x)) in one qplugin::batch_norm3d_relu call."""

    _NAME = "BNReLU3d"
    _FLOAT_MODULE = C.BNReLU3d

    def forward(self, input: Tensor) -> Tensor:
        _require_quantized(input, "torch_qplugin.nn.intrinsic.quantized.BNReLU3d")
        return torch.ops.qplugin.batch_norm3d_relu(
            input, self.weight, self.bias, self.running_mean, self.running_var, self.eps, self.scale, self.zero_point
        )
