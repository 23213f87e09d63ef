"""Loads the qplugin op library into torch's dispatcher.

Raises ImportError, never a half-import: the library must exist, be built for the
running torch, and register its ops.
"""

import os

import torch

_LIB_NAME = "libtorch_qplugin.so"
_loaded = False


def _release(version: str) -> str:
    """major.minor.patch of a torch version string: 2.14.1+cu130 and 2.14.1+cpu are one release
    (the library links only libc10 / libtorch_cpu, which both builds ship)."""
    return version.split("+")[0]


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
    built, running = _build_info.TORCH_VERSION, torch.__version__
    if _release(built) != _release(running):
        # Checked before the library loads: a C++ library built against another torch's headers
        # can fail with an undefined symbol, crash, or load and compute with the wrong layout.
        raise ImportError(
            f"torch_qplugin was built against torch {built} but torch {running} is running. Rebuild "
            f"it against the running torch: `pip install --no-build-isolation --no-deps "
            f"--force-reinstall <torch_qplugin source dir>` (or `pip install --no-build-isolation -e .` "
            f"in a checkout), or install torch=={_release(built)}"
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
