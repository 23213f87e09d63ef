"""Quantization stubs used by the example models.

The models are written once and quantized by two toolkits: torch_qplugin's
workflow and torch.ao.quantization's (the baseline). torch_qplugin's default
mappings also accept torch.ao's stub classes (API.md section 3: its mappings plug
into torch.ao.quantization.convert), so the models take the torch.ao classes, and
the fp32 models import without a built plugin. This is the only file of the
models that imports torch.ao.
"""

import warnings

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from torch.ao.nn.quantized import FloatFunctional
    from torch.ao.quantization import DeQuantStub, QuantStub
    from torch.ao.quantization import fuse_modules as _torch_fuse_modules


def default_fuse_fn():
    """torch_qplugin's fuse_modules when importable, else torch.ao's."""
    try:
        from torch_qplugin.quantization import fuse_modules  # type: ignore

        return fuse_modules
    except Exception:  # noqa: BLE001 - any import failure means "not available"
        return _torch_fuse_modules


__all__ = ["QuantStub", "DeQuantStub", "FloatFunctional", "default_fuse_fn"]
