"""FloatFunctional (observed float ops in a model) and QFunctional (their quantized form)."""
from typing import List

import torch
import torch.nn as nn
from torch import Tensor

from .utils import _act_qparams, _guard_never_calibrated

__all__ = ["FloatFunctional", "QFunctional"]


class FloatFunctional(nn.Module):
    """Float add/cat/mul/... whose outputs an observer sees (``activation_post_process``);
    ``convert`` turns it into QFunctional. Use it for tensor ops inside a model to quantize."""

    def __init__(self):
        super().__init__()
        self.activation_post_process = nn.Identity()

    def forward(self, x):
        raise RuntimeError("FloatFunctional is not intended to use the 'forward'. Please use the "
                           "underlying operation")

    def add(self, x: Tensor, y: Tensor) -> Tensor:
        return self.activation_post_process(torch.add(x, y))

    def add_scalar(self, x: Tensor, y: float) -> Tensor:
        return torch.add(x, y)  # output qparams follow from the input's: no observer

    def mul(self, x: Tensor, y: Tensor) -> Tensor:
        return self.activation_post_process(torch.mul(x, y))

    def mul_scalar(self, x: Tensor, y: float) -> Tensor:
        return torch.mul(x, y)

    def cat(self, x: List[Tensor], dim: int = 0) -> Tensor:
        return self.activation_post_process(torch.cat(x, dim=dim))

    def add_relu(self, x: Tensor, y: Tensor) -> Tensor:
        return self.activation_post_process(torch.nn.functional.relu(torch.add(x, y)))

    def matmul(self, x: Tensor, y: Tensor) -> Tensor:
        return self.activation_post_process(torch.matmul(x, y))


class QFunctional(nn.Module):
    """Quantized add/cat/mul/... at ``scale``/``zero_point`` on qplugin kernels."""

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
        raise RuntimeError("Functional is not intended to use the 'forward'. Please use the "
                           "underlying operation")

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "scale"] = torch.tensor(self.scale, dtype=torch.double)  # exact round trip
        destination[prefix + "zero_point"] = torch.tensor(self.zero_point)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        self.scale = float(state_dict.pop(prefix + "scale"))
        self.zero_point = int(state_dict.pop(prefix + "zero_point"))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys,
                                      unexpected_keys, error_msgs)

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

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        scale, zp = _act_qparams(mod, "torch_qplugin.nn.quantized.QFunctional")
        new = cls()
        new.scale, new.zero_point = scale, zp
        return _guard_never_calibrated(new, mod)


class NeverCalibratedQFunctional(QFunctional):
    """The QFunctional of a FloatFunctional that no calibration batch reached (torchvision's
    pattern: every InvertedResidual owns a ``skip_add``, only the residual blocks call it).
    Converts, scripts, saves and loads like QFunctional (same state); its ops that need output
    qparams raise ``_qplugin_uncalibrated``, a message naming the module. ``add_scalar`` and
    ``mul_scalar`` keep working: their output qparams follow from the input's."""

    def extra_repr(self):
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
