"""torch_qplugin.nn.quantized: drop-in counterparts of torch.ao.nn.quantized on qplugin kernels."""

from ... import _ops
from ..._lazy import lazy_attributes

# the ops on quantized tensors live in the quantized library (absent from a plain-only build)
_ops.require_quantized("torch_qplugin.nn.quantized")
from .modules import *  # noqa: E402,F401,F403
from .modules import __all__ as _modules_all  # noqa: E402
from . import functional  # noqa: E402,F401
from . import dynamic  # noqa: E402,F401

# The fused modules of torch_qplugin.nn.intrinsic.quantized, re-exported on first use: they build on
# this package's modules, so importing them here would make an import cycle.
_INTRINSIC = (
    "LinearReLU",
    "ConvReLU1d",
    "ConvReLU2d",
    "ConvReLU3d",
    "ConvAdd2d",
    "ConvAddReLU2d",
    "BNReLU2d",
    "BNReLU3d",
)
__getattr__, __dir__ = lazy_attributes(
    __name__, globals(), {n: ("torch_qplugin.nn.intrinsic.quantized", n) for n in _INTRINSIC}
)
__all__ = list(_modules_all) + list(_INTRINSIC) + ["functional", "dynamic"]
