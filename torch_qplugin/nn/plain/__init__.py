"""torch_qplugin.nn.plain: the plain forms of the quantized modules (no quantized dtypes).

Made by ``convert(prepared, plain=True)`` / ``quantize(..., plain=True)`` /
``quantize_dynamic(..., plain=True)`` / ``quantize_qat(..., plain=True)`` or
``torch_qplugin.quantization.to_plain(model)``. See modules.py and docs/design/plain.md.
"""

from .modules import *  # noqa: F401,F403
from .modules import __all__  # noqa: F401
