"""Loads the qplugin op library into torch's dispatcher.

Raises ImportError, never a half-import: the library must exist, be built for the
running torch, and register its ops.
"""
import os

import torch

_LIB_NAME = "libtorch_qplugin.so"
_loaded = False


def library_path() -> str:
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib", _LIB_NAME)


def load() -> None:
    global _loaded
    if _loaded:
        return
    try:
        from . import _build_info
    except ImportError as e:  # not built, or built by a broken checkout
        raise ImportError(
            "torch_qplugin: build info is missing (torch_qplugin/_build_info.py); the C++ library "
            "was not built. Install with `pip install --no-build-isolation -e .`"
        ) from e
    if _build_info.TORCH_VERSION.split("+")[0] != torch.__version__.split("+")[0]:
        raise ImportError(
            f"torch_qplugin was built against torch {_build_info.TORCH_VERSION} but torch "
            f"{torch.__version__} is running; rebuild it (`pip install --no-build-isolation -e .`) "
            f"or install the matching torch"
        )
    path = library_path()
    if not os.path.exists(path):
        raise ImportError(f"torch_qplugin: op library not found at {path}; rebuild the package")
    try:
        torch.ops.load_library(path)
    except (OSError, RuntimeError) as e:
        raise ImportError(f"torch_qplugin: failed to load {path}: {e}") from e
    if not hasattr(torch.ops.qplugin, "quantize_per_tensor"):
        raise ImportError(f"torch_qplugin: {path} loaded but registered no qplugin ops")
    _loaded = True
