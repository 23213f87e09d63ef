"""torch_qplugin.nn.quantized: drop-in counterparts of torch.ao.nn.quantized on qplugin kernels."""
from .modules import *  # noqa: F401,F403
from .modules import __all__ as _modules_all
from . import functional  # noqa: F401
from . import dynamic  # noqa: F401
from ..intrinsic.quantized import (BNReLU2d, BNReLU3d, ConvAdd2d, ConvAddReLU2d, ConvReLU1d,  # noqa: F401
                                   ConvReLU2d, ConvReLU3d, LinearReLU)

__all__ = list(_modules_all) + ["LinearReLU", "ConvReLU1d", "ConvReLU2d", "ConvReLU3d", "ConvAdd2d",
                                "ConvAddReLU2d", "BNReLU2d", "BNReLU3d", "functional", "dynamic"]
