"""torch_qplugin: int8 quantized CPU kernels for PyTorch as the ``qplugin::`` op library.

``import torch_qplugin`` loads the op library; the ops are then available as
``torch.ops.qplugin.*`` (eager and TorchScript) and through the typed wrappers in
``torch_qplugin.ops``.
"""

from . import _ops

_ops.load()

from . import _fakes  # noqa: E402

_fakes.register()

from . import _wrong_kind  # noqa: E402

_wrong_kind.register()

from . import _aten  # noqa: E402

if _ops.has_quantized():  # the aten kernels for quantized tensors run the quantized tier's ops
    _aten.register()

from . import ops  # noqa: E402
from ._aten import use_for_aten  # noqa: E402
from ._isa import active_isa, cpu_isa, kernel_isa, set_isa  # noqa: E402
from .quantizer import PerChannelAffine, PerTensorAffine, Quantizer, quantize  # noqa: E402
from .qtensor import QTensor  # noqa: E402
from ._build_info import TORCH_VERSION as _BUILT_TORCH_VERSION  # noqa: E402
from ._lazy import lazy_attributes  # noqa: E402

__version__ = "0.1.0"

# Subpackages load on first use (``torch_qplugin.nn.quantized.Linear`` after a bare
# ``import torch_qplugin``, as ``torch.nn`` after ``import torch``) so that importing the op
# library stays cheap; ``quantization`` imports torch.ao's compatibility layer.
__getattr__, __dir__ = lazy_attributes(
    __name__, globals(), {n: (f"{__name__}.{n}", None) for n in ("nn", "quantization")}
)


__all__ = [
    "ops",
    "PerTensorAffine",
    "PerChannelAffine",
    "Quantizer",
    "quantize",
    "QTensor",
    "nn",
    "quantization",
    "active_isa",
    "cpu_isa",
    "kernel_isa",
    "set_isa",
    "use_for_aten",
    "__version__",
]
