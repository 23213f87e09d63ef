"""QFunctional: the quantized form of FloatFunctional (torch_qplugin.quantization.stubs; also
exported here, where torch has it)."""

from typing import List

import torch
from torch import Tensor

from ...plain import _base as B
from ....quantization.stubs import FloatFunctional

__all__ = ["FloatFunctional", "QFunctional"]


class QFunctional(B.QFunctional):
    """Quantized add/cat/mul/... at ``scale``/``zero_point`` on qplugin kernels (state and
    from_float: torch_qplugin.nn.plain._base)."""

    def add(self, x: Tensor, y: Tensor) -> Tensor:
        return self.activation_post_process(torch.ops.qplugin.add(x, y, self.scale, self.zero_point))

    def add_scalar(self, x: Tensor, y: float) -> Tensor:
        return torch.ops.qplugin.add_scalar(x, y)

    def mul(self, x: Tensor, y: Tensor) -> Tensor:
        return self.activation_post_process(torch.ops.qplugin.mul(x, y, self.scale, self.zero_point))

    def mul_scalar(self, x: Tensor, y: float) -> Tensor:
        return torch.ops.qplugin.mul_scalar(x, y)

    def cat(self, x: List[Tensor], dim: int = 0) -> Tensor:
        return self.activation_post_process(torch.ops.qplugin.cat(x, dim, self.scale, self.zero_point))

    def add_relu(self, x: Tensor, y: Tensor) -> Tensor:
        return self.activation_post_process(torch.ops.qplugin.add_relu(x, y, self.scale, self.zero_point))

    def matmul(self, x: Tensor, y: Tensor) -> Tensor:
        return self.activation_post_process(torch.ops.qplugin.matmul(x, y, self.scale, self.zero_point))


class NeverCalibratedQFunctional(QFunctional):
    """The QFunctional of a FloatFunctional that no calibration batch reached (torchvision's
    pattern: every InvertedResidual owns a ``skip_add``, only the residual blocks call it).
    Converts, scripts, saves and loads like QFunctional (same state); its ops that need output
    qparams raise ``_qplugin_uncalibrated``, a message naming the module. ``add_scalar`` and
    ``mul_scalar`` keep working: their output qparams follow from the input's."""

    def extra_repr(self) -> str:
        return super().extra_repr() + ", never calibrated (raises if called)"

    def add(self, x: Tensor, y: Tensor) -> Tensor:
        raise RuntimeError(self._qplugin_uncalibrated)

    def mul(self, x: Tensor, y: Tensor) -> Tensor:
        raise RuntimeError(self._qplugin_uncalibrated)

    def cat(self, x: List[Tensor], dim: int = 0) -> Tensor:
        raise RuntimeError(self._qplugin_uncalibrated)

    def add_relu(self, x: Tensor, y: Tensor) -> Tensor:
        raise RuntimeError(self._qplugin_uncalibrated)

    def matmul(self, x: Tensor, y: Tensor) -> Tensor:
        raise RuntimeError(self._qplugin_uncalibrated)


QFunctional._NEVER_CALIBRATED_CLS = NeverCalibratedQFunctional
