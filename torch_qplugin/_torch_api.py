"""The one place torch_qplugin bridges torch's Python API across the releases it supports (2.13-2.15).

Each helper uses torch's newer API where the running torch has it and the older one where not,
so that no other module checks a torch version or catches a deprecation:

- opaque types for torch.compile: ``register_custom_class(cls, typ="constant")`` (torch >= 2.14)
  or ``register_opaque_type(cls, typ="value")`` (2.13, where the newer names do not exist);
- ``TORCHSCRIPT_DEPRECATION``: the messages torch's TorchScript entry points warn with (a
  DeprecationWarning in 2.13, a FutureWarning from 2.14), as a warnings-filter regex matched by
  message whatever the category (the test suite's filters use it).
"""

from torch._library import opaque_object as _opaque

# `torch.jit.script` / trace / save / load / script_method / ... "is deprecated. Please switch to
# ..." -- matched by message, whatever the warning's category.
TORCHSCRIPT_DEPRECATION = r"`torch\.jit\.\w+` is deprecated"


def register_constant_type(cls, members):
    """Registers ``cls`` as an opaque constant type (dynamo guards it by ``==`` and bakes it into
    the graph); each name in ``members`` is evaluated on the real object."""
    kinds = {name: _opaque.MemberType.USE_REAL for name in members}
    if hasattr(_opaque, "register_custom_class"):
        _opaque.register_custom_class(cls, typ="constant", members=kinds)
    else:
        _opaque.register_opaque_type(cls, typ="value", members=kinds)
