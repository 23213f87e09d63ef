from .activation import (
    ELU,
    AdaptiveAvgPool2d,
    AvgPool2d,
    Hardsigmoid,
    Hardswish,
    LeakyReLU,
    MaxPool2d,
    ReLU,
    ReLU6,
    Sigmoid,
    Softmax,
)
from .activation import AdaptiveAvgPool3d, AvgPool3d
from .dropout import Dropout
from .embedding_ops import Embedding, EmbeddingBag, EmbeddingPackedParams
from .batchnorm import BatchNorm2d, BatchNorm3d
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .functional_modules import FloatFunctional, NeverCalibratedQFunctional, QFunctional
from .linear import Linear, LinearPackedParams
from .normalization import GroupNorm, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, LayerNorm
from .prelu import PReLU
from .quantize import DeQuantize, Quantize

__all__ = [
    "Quantize",
    "DeQuantize",
    "Linear",
    "LinearPackedParams",
    "Conv1d",
    "Conv2d",
    "Conv3d",
    "ReLU",
    "ReLU6",
    "Hardswish",
    "ELU",
    "LeakyReLU",
    "Sigmoid",
    "Hardsigmoid",
    "MaxPool2d",
    "AvgPool2d",
    "AdaptiveAvgPool2d",
    "FloatFunctional",
    "QFunctional",
    "NeverCalibratedQFunctional",
    "BatchNorm2d",
    "BatchNorm3d",
    "GroupNorm",
    "InstanceNorm1d",
    "InstanceNorm2d",
    "InstanceNorm3d",
    "LayerNorm",
    "Dropout",
    "Softmax",
    "PReLU",
]
__all__ += ["AvgPool3d", "AdaptiveAvgPool3d"]
__all__ += ["Embedding", "EmbeddingBag", "EmbeddingPackedParams"]
__all__ += ["ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]
