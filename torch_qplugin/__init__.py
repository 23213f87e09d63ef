"""torch_qplugin: int8 quantized CPU kernels for PyTorch as the ``qplugin::`` op library.

``import torch_qplugin`` loads the op library; the ops are then available as
``torch.ops.qplugin.*`` (eager and TorchScript) and through the typed wrappers in
``torch_qplugin.ops``.
"""
from . import _ops

_ops.load()

from . import _fakes  # noqa: E402

_fakes.register()

from . import ops  # noqa: E402
from ._isa import active_isa, cpu_isa, kernel_isa, set_isa  # noqa: E402
from ._build_info import TORCH_VERSION as _BUILT_TORCH_VERSION  # noqa: E402

__version__ = "0.1.0"

__all__ = ["ops", "active_isa", "cpu_isa", "kernel_isa", "set_isa", "__version__"]
