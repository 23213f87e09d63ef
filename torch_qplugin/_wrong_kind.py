"""Kernels for the wrong kind of tensor (STYLE.md, C++ idiom 2): a quantized tensor passed to an op
that takes plain tensors (every ``plain_*`` op, the float / uint8 embedding ops, ...), or a plain
tensor passed to an op that takes only quantized ones, gets a WrongKindError (a TypeError and a
RuntimeError) naming the op, the argument and both kinds, instead of the dispatcher's "Could not
run 'qplugin::X' with arguments from the 'QuantizedCPU' backend" and its list of every backend.

Registered by ``register()`` (at ``import torch_qplugin``) for every qplugin op that has a kernel
for one of the two keys and none for the other (the C++ files register the raising kernels they
already have, e.g. the CPU kernels of relu / threshold; those ops are left alone). This is the
quantized tier's side of the wall: it is the one place that looks at ``is_quantized`` for the plain
ops, and goes when torch's quantized dtypes go.
"""

import torch


class WrongKindError(TypeError, RuntimeError):
    """A tensor of the wrong kind: a TypeError, and a RuntimeError as API.md section 1 promises for
    it (and as the C++ refusals of the quantized ops raise)."""


_PLAIN = "a plain uint8 / int8 / int32 / float tensor (CPU)"
_QUANTIZED = "a quantized tensor (quint8 / qint8 / qint32 / quint4x2: QuantizedCPU)"
_LIB = None


def _tensor_args(schema, args, kwargs):
    """(argument name, tensor) of each tensor argument of a call, list elements as name[i]."""
    for i, a in enumerate(schema.arguments):
        v = args[i] if i < len(args) else kwargs.get(a.name)
        if isinstance(v, torch.Tensor):
            yield a.name, v
        elif isinstance(v, (list, tuple)):
            for j, t in enumerate(v):
                if isinstance(t, torch.Tensor):
                    yield f"{a.name}[{j}]", t


def _refuse_quantized(qualname, schema):
    def kernel(*args, **kwargs):
        for name, t in _tensor_args(schema, args, kwargs):
            if t.is_quantized:
                raise WrongKindError(
                    f"{qualname}: {name} should be {_PLAIN}, got {_QUANTIZED} of dtype {t.dtype}; "
                    "pass its int_repr() and its qparams (or use the quantized op)"
                )
        raise WrongKindError(f"{qualname}: its tensor arguments should be {_PLAIN[2:]}s, got a quantized one")

    return kernel


def _refuse_plain(qualname, schema):
    def kernel(*args, **kwargs):
        for name, t in _tensor_args(schema, args, kwargs):
            if not t.is_quantized:
                raise WrongKindError(
                    f"{qualname}: {name} should be {_QUANTIZED}, got {_PLAIN} of dtype {t.dtype}; "
                    "use the plain_ op on plain tensors"
                )
        raise WrongKindError(f"{qualname}: its tensor arguments should be quantized tensors, got a plain one")

    return kernel


def register():
    global _LIB
    if _LIB is not None:  # once: a second Library would drop the first's kernels when it is freed
        return
    _LIB = torch.library.Library("qplugin", "IMPL")  # noqa: TOR901 - kept alive: holds the registrations
    has = torch._C._dispatch_has_kernel_for_dispatch_key
    for qualname in sorted(torch._C._dispatch_get_all_op_names()):
        if not qualname.startswith("qplugin::"):
            continue
        if any(has(qualname, k) for k in ("CompositeImplicitAutograd", "CompositeExplicitAutograd")):
            continue
        name, _, overload = qualname[len("qplugin::") :].partition(".")
        packet = getattr(torch.ops.qplugin, name)
        schema = getattr(packet, overload or "default")._schema
        cpu, quantized = has(qualname, "CPU"), has(qualname, "QuantizedCPU")
        if cpu and not quantized:
            _LIB.impl(qualname[len("qplugin::") :], _refuse_quantized(qualname, schema), "QuantizedCPU")
        elif quantized and not cpu:
            _LIB.impl(qualname[len("qplugin::") :], _refuse_plain(qualname, schema), "CPU")
