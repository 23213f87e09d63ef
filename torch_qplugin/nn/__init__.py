"""torch_qplugin.nn: modules running on qplugin kernels.

``plain`` is the tier without quantized dtypes (QTensor activations, plain integer weights);
``quantized`` and ``intrinsic.quantized`` are the quantized-dtype tier, which builds on it. The
subpackages load on first use, so importing the plain tier never imports the quantized one.
``FloatFunctional`` is the float module a model's tensor ops (add, cat, ...) are written with.
"""

from .._lazy import lazy_attributes
from ..quantization.stubs import FloatFunctional

__all__ = ["FloatFunctional", "plain", "quantized", "intrinsic"]
__getattr__, __dir__ = lazy_attributes(__name__, globals(), {n: (f"{__name__}.{n}", None) for n in __all__[1:]})
