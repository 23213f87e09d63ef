"""The ONLY place torch_qplugin touches ``torch.ao.*``.

torch 2.13 deprecates torch.ao.quantization (pytorch issue #184982). torch_qplugin's workflow
is written without it; this module borrows a few *module classes* from torch.ao.nn (float fused
modules and QAT modules, which carry no deprecation warning) and, when torch.ao.quantization is
importable, the classes of torch's own stubs / FloatFunctional so that models written or prepared
with torch.ao.quantization convert onto qplugin kernels. When torch removes them, this file is the
one-file change: every name below falls back to a local definition or ``None``.

Nothing here calls a deprecated torch.ao.quantization function (prepare/convert/... warn), except
graph mode: ``quantize_jit`` / ``quantize_dynamic_jit`` (quantization/quantize_jit.py) run torch's
graph-mode passes and rewrite their result onto qplugin; when torch removes those passes, they raise.
"""

import contextlib
import sys
import warnings

import torch.nn as nn

# ---- float fused modules (results of fuse_modules) -----------------------------------------
try:  # torch.ao.nn.intrinsic: plain nn.Sequential subclasses
    import torch.ao.nn.intrinsic as nni  # noqa: F401

    _FusedModule = nni._FusedModule
    LinearReLU = nni.LinearReLU
    LinearBn1d = nni.LinearBn1d
    ConvReLU1d, ConvReLU2d, ConvReLU3d = nni.ConvReLU1d, nni.ConvReLU2d, nni.ConvReLU3d
    ConvBn1d, ConvBn2d, ConvBn3d = nni.ConvBn1d, nni.ConvBn2d, nni.ConvBn3d
    ConvBnReLU1d, ConvBnReLU2d, ConvBnReLU3d = nni.ConvBnReLU1d, nni.ConvBnReLU2d, nni.ConvBnReLU3d
    BNReLU2d, BNReLU3d = nni.BNReLU2d, nni.BNReLU3d
    ConvAdd2d, ConvAddReLU2d = nni.ConvAdd2d, nni.ConvAddReLU2d
except ImportError:  # pragma: no cover - torch without torch.ao.nn.intrinsic

    class _FusedModule(nn.Sequential):
        pass

    def _fused(name, n):
        def __init__(self, *mods):
            assert len(mods) == n, f"{name} takes {n} modules"
            _FusedModule.__init__(self, *mods)

        return type(name, (_FusedModule,), {"__init__": __init__})

    LinearReLU, LinearBn1d = _fused("LinearReLU", 2), _fused("LinearBn1d", 2)
    ConvReLU1d, ConvReLU2d, ConvReLU3d = (_fused(f"ConvReLU{d}d", 2) for d in (1, 2, 3))
    ConvBn1d, ConvBn2d, ConvBn3d = (_fused(f"ConvBn{d}d", 2) for d in (1, 2, 3))
    ConvBnReLU1d, ConvBnReLU2d, ConvBnReLU3d = (_fused(f"ConvBnReLU{d}d", 3) for d in (1, 2, 3))
    BNReLU2d, BNReLU3d = _fused("BNReLU2d", 2), _fused("BNReLU3d", 2)

    class ConvAdd2d(_FusedModule):
        def __init__(self, conv, add):
            super().__init__(conv)
            self.add = add

        def forward(self, x1, x2):
            return self.add(self[0](x1), x2)

    class ConvAddReLU2d(_FusedModule):
        def __init__(self, conv, add, relu):
            super().__init__(conv)
            self.add = add
            self.relu = relu

        def forward(self, x1, x2):
            return self.relu(self.add(self[0](x1), x2))


# ---- QAT modules (weights fake-quantized through qconfig.weight()) ---------------------------
try:
    import torch.ao.nn.qat as nnqat
    import torch.ao.nn.intrinsic.qat as nniqat

    QAT_AVAILABLE = True
    qat = nnqat
    intrinsic_qat = nniqat
except ImportError:  # pragma: no cover
    QAT_AVAILABLE = False
    qat = None
    intrinsic_qat = None

# ---- torch.ao.quantization classes, only to recognise models built with them ---------------
# (importing the package emits no warning; its prepare/convert functions do, and are never called)
try:
    from torch.ao.quantization.stubs import QuantStub as TorchQuantStub
    from torch.ao.quantization.stubs import DeQuantStub as TorchDeQuantStub
    from torch.ao.quantization.stubs import QuantWrapper as TorchQuantWrapper
    from torch.ao.quantization.observer import ObserverBase as TorchObserverBase
    from torch.ao.quantization.fake_quantize import FakeQuantizeBase as TorchFakeQuantizeBase
except ImportError:  # pragma: no cover
    TorchQuantStub = TorchDeQuantStub = TorchQuantWrapper = None
    TorchObserverBase = TorchFakeQuantizeBase = None

try:
    from torch.ao.nn.quantized.modules.functional_modules import FloatFunctional as TorchFloatFunctional
    from torch.ao.nn.quantized.modules.functional_modules import FXFloatFunctional as TorchFXFloatFunctional
except ImportError:  # pragma: no cover
    TorchFloatFunctional = TorchFXFloatFunctional = None


def torch_convert_path():
    """While torch.ao.quantization.convert swaps a module (our ``from_float`` runs inside it): that
    module's qualified name in the model, read from the loop variable ``name`` of torch's
    recursive ``_convert`` frames on the stack. None outside torch's convert, or if its
    ``_convert`` changes shape (the name only feeds an error message)."""
    mod = sys.modules.get("torch.ao.quantization.quantize")
    code = getattr(getattr(mod, "_convert", None), "__code__", None)
    if code is None:
        return None
    names = []
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code is code:
            name = frame.f_locals.get("name")
            if not isinstance(name, str):
                return None
            names.append(name)
        frame = frame.f_back
    return ".".join(reversed(names)) or None


# ---- graph mode (quantization/quantize_jit.py): torch's passes, then qplugin rewrites the graph ---------
def _graph_mode(who):
    try:
        import torch.ao.quantization as taq
        import torch.ao.quantization.observer as tobs

        fns = (taq.quantize_jit, taq.quantize_dynamic_jit)
    except (ImportError, AttributeError) as e:
        raise RuntimeError(
            f"{who}: this torch has no graph-mode quantization passes "
            "(torch.ao.quantization.quantize_jit), which qplugin's graph mode rewrites; use "
            "eager mode (torch_qplugin.quantization.quantize / quantize_dynamic) on the "
            "float nn.Module, then torch.jit.script the result"
        ) from e
    return taq, tobs, fns


@contextlib.contextmanager
def quiet_torch_graph_mode():
    """Hides what torch's own graph-mode passes and observers warn about (their deprecation;
    reduce_range's; convert_jit's ``model.cpu()`` reading ``.grad`` of the scripted model's non-leaf
    tensors): not the user's code."""
    with warnings.catch_warnings():
        for msg in (
            r".*torch\.ao\.quantization.*deprecated",
            r".*quantized tensor creation functions.*deprecated",
            r".*torch\.jit\.\w+.* is deprecated",
            r".*deprecated.*quantiz",
            r"Please use quant_min and quant_max to specify the range",
            r"The \.grad attribute of a Tensor that is not a leaf Tensor",
        ):
            warnings.filterwarnings("ignore", message=msg)
        yield


def torch_quantize_jit(model, qconfig_dict, run_fn, run_args, inplace, who):
    _, _, (quantize_jit, _) = _graph_mode(who)
    with quiet_torch_graph_mode():
        return quantize_jit(model, qconfig_dict, run_fn, run_args, inplace=inplace, debug=False)


def torch_quantize_dynamic_jit(model, qconfig_dict, inplace, who):
    _, _, (_, quantize_dynamic_jit) = _graph_mode(who)
    with quiet_torch_graph_mode():
        return quantize_dynamic_jit(model, qconfig_dict, inplace=inplace, debug=False)


def torch_observer_factory(name, kwargs, who):
    """torch.ao.quantization.observer.<name>.with_args(**kwargs) (graph mode scripts torch's observers)."""
    _, tobs, _ = _graph_mode(who)
    cls = getattr(tobs, name, None)
    if cls is None:
        raise RuntimeError(f"{who}: observer {name} has no torch counterpart for graph mode")
    return cls.with_args(**kwargs)


def is_torch_observer(obs):
    return any(isinstance(obs, t) for t in torch_observer_types()) or type(obs).__module__.startswith("torch.ao.")


try:
    from torch.ao.quantization.qconfig import QConfig as TorchQConfig
except ImportError:  # pragma: no cover
    TorchQConfig = None


def present(*classes):
    """The classes that exist in this torch (drops the ``None`` fallbacks)."""
    return tuple(c for c in classes if c is not None)


def torch_observer_types():
    return present(TorchObserverBase, TorchFakeQuantizeBase)


__all__ = [n for n in dir() if not n.startswith("__") and n not in ("sys", "torch", "nn", "warnings", "contextlib")]
