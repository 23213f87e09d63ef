"""torch_qplugin.nn: quantized modules running on qplugin kernels."""
from . import quantized  # noqa: F401
from . import intrinsic  # noqa: F401
