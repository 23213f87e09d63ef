"""Loads the qplugin op libraries into torch's dispatcher.

Two shared libraries under lib/ (docs/design/plain.md, "Two libraries"):
  libtorch_qplugin_plain.so  the plain tier: kernels, the plain_* ops, the kernel-path hooks;
                             TORCH_LIBRARY(qplugin). Always present.
  libtorch_qplugin.so        the quantized tier: ops on quantized tensors, the packed-params
                             classes; TORCH_LIBRARY_FRAGMENT(qplugin). Links the plain one. Absent
                             from a build with QPLUGIN_PLAIN_ONLY=ON.
The plain library loads first, then the quantized one when it is there. Raises ImportError, never
a half-import: the plain library must exist, be built for the running torch, and register its ops.
"""

import os

import torch

_PLAIN_LIB_NAME = "libtorch_qplugin_plain.so"
_LIB_NAME = "libtorch_qplugin.so"
_loaded = False
_has_quantized = False


def _release(version: str) -> str:
    """major.minor.patch of a torch version string: 2.14.1+cu130 and 2.14.1+cpu are one release
    (the library links only libc10 / libtorch_cpu, which both builds ship)."""
    return version.split("+")[0]


def _release_tuple(version: str) -> tuple:
    """(major, minor, patch) of a torch version string, for ordering releases."""
    return tuple(int("".join(c for c in part if c.isdigit()) or 0) for part in _release(version).split(".")[:3])


def _lib_dir() -> str:
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib")


def plain_library_path() -> str:
    """The plain library (always built)."""
    return os.path.join(_lib_dir(), _PLAIN_LIB_NAME)


def library_path() -> str:
    """The library a C++ deployment links or dlopens: the quantized one, which pulls in the plain
    one (DT_NEEDED); the plain one in a plain-only build."""
    path = os.path.join(_lib_dir(), _LIB_NAME)
    if os.path.exists(path) or not os.path.exists(plain_library_path()):
        return path
    return plain_library_path()


def library_paths() -> list:
    """The libraries present, in load order (plain first)."""
    return [p for p in (plain_library_path(), os.path.join(_lib_dir(), _LIB_NAME)) if os.path.exists(p)]


def has_quantized() -> bool:
    """Whether the quantized tier's library (ops on quantized tensors, packed-params classes) is loaded."""
    load()
    return _has_quantized


def require_quantized(what: str) -> None:
    """ImportError naming ``what`` and the missing library unless the quantized tier is loaded."""
    if not has_quantized():
        raise ImportError(
            f"{what} needs torch_qplugin's quantized tier: {os.path.join(_lib_dir(), _LIB_NAME)} is "
            f"not installed (this build has only the plain library {_PLAIN_LIB_NAME}, as "
            f"QPLUGIN_PLAIN_ONLY=ON builds it). The plain tier works without it: torch_qplugin.nn.plain, "
            f"torch_qplugin.quantization.plain, Quantizer / QTensor, torch.ops.qplugin.plain_*. Rebuild "
            f"without QPLUGIN_PLAIN_ONLY for the quantized modules and ops."
        )


def _load_one(path: str) -> None:
    try:
        torch.ops.load_library(path)
    except (OSError, RuntimeError) as e:
        raise ImportError(f"torch_qplugin: failed to load {path}: {e}") from e


def load() -> None:
    global _loaded, _has_quantized
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
    stable = getattr(_build_info, "STABLE_ABI", False)
    if stable and _release_tuple(running) < _release_tuple(built):
        raise ImportError(
            f"torch_qplugin's plain library was built on torch's stable ABI against torch {built}: it "
            f"loads under torch {_release(built)} and later, but torch {running} is running. Install "
            f"torch>={_release(built)} or rebuild against the running torch"
        )
    if not stable and _release(built) != _release(running):
        # Checked before the library loads: a C++ library built against another torch's headers
        # can fail with an undefined symbol, crash, or load and compute with the wrong layout.
        raise ImportError(
            f"torch_qplugin was built against torch {built} but torch {running} is running. Rebuild "
            f"it against the running torch: `pip install --no-build-isolation --no-deps "
            f"--force-reinstall <torch_qplugin source dir>` (or `pip install --no-build-isolation -e .` "
            f"in a checkout), or install torch=={_release(built)}"
        )
    plain = plain_library_path()
    if not os.path.exists(plain):
        raise ImportError(f"torch_qplugin: op library not found at {plain}; rebuild the package")
    _load_one(plain)
    if not hasattr(torch.ops.qplugin, "plain_quantize_per_tensor"):
        raise ImportError(f"torch_qplugin: {plain} loaded but registered no qplugin ops")
    quantized = os.path.join(_lib_dir(), _LIB_NAME)
    if os.path.exists(quantized):
        _load_one(quantized)
        if not hasattr(torch.ops.qplugin, "quantize_per_tensor"):
            raise ImportError(f"torch_qplugin: {quantized} loaded but registered no quantized-tier ops")
        _has_quantized = True
    _loaded = True
