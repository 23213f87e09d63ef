"""What a float model to quantize is written with: QuantStub / DeQuantStub / QuantWrapper mark
where tensors enter and leave quantized code, FloatFunctional the tensor ops (add, cat, ...) to
quantize.

Before convert they compute in float (observed by ``activation_post_process``); convert swaps them
for the plain (or quantized-tier) Quantize / DeQuantize / QFunctional. Plain PyTorch only: they
import and work in a torch without quantized dtypes.
"""

from typing import Any, List

import torch
from torch import Tensor, nn

__all__ = ["QuantStub", "DeQuantStub", "QuantWrapper", "FloatFunctional"]


class QuantStub(nn.Module):
    def __init__(self, qconfig: Any = None) -> None:
        super().__init__()
        if qconfig:
            self.qconfig = qconfig

    def forward(self, x: Tensor) -> Tensor:
        return x


class DeQuantStub(nn.Module):
    def __init__(self, qconfig: Any = None) -> None:
        super().__init__()
        if qconfig:
            self.qconfig = qconfig

    def forward(self, x: Tensor) -> Tensor:
        return x


class QuantWrapper(nn.Module):
    """``quant -> module -> dequant``: makes a float module a quantizable unit."""

    def __init__(self, module: nn.Module) -> None:
        super().__init__()
        qconfig = getattr(module, "qconfig", None)
        self.add_module("quant", QuantStub(qconfig))
        self.add_module("dequant", DeQuantStub(qconfig))
        self.add_module("module", module)
        self.train(module.training)

    def forward(self, X: Tensor) -> Tensor:
        return self.dequant(self.module(self.quant(X)))


class FloatFunctional(nn.Module):
    """Float add/cat/mul/... whose outputs an observer sees (``activation_post_process``);
    ``convert`` turns it into QFunctional. Use it for tensor ops inside a model to quantize."""

    def __init__(self) -> None:
        super().__init__()
        self.activation_post_process = nn.Identity()

    def forward(self, x: Tensor) -> Tensor:
        raise RuntimeError("FloatFunctional is not intended to use the 'forward'. Please use the underlying operation")

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
