"""The two int8 toolkits the examples compare, behind one small interface.

``TorchAO``: torch's own eager workflow (torch.ao.quantization) on its x86 (fbgemm) engine,
the baseline "where it still runs". ``QPlugin``: torch_qplugin.quantization, whose converted
modules call ``qplugin::`` kernels. Each method raises ``Unavailable`` with a one-line reason
when the toolkit (or a piece of it) is missing, so callers can report what could not run and
why instead of faking numbers.
"""

import copy
import warnings

import torch
import torch.nn as nn


class Unavailable(RuntimeError):
    """A toolkit or one of its pieces cannot run here; str() is the reason."""


def quiet_deprecations():
    """torch 2.13 warns on every torch.ao / torch.jit / quantized-tensor call; silence those only."""
    warnings.filterwarnings("ignore", message=r"torch\.ao\.quantization is deprecated")
    warnings.filterwarnings("ignore", message=r"torch\.quantize_per_tensor, torch\.quantize_per_channel")
    warnings.filterwarnings("ignore", message=r"`torch\.jit\.\w+` is deprecated")
    warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"torch\.")
    warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"torch_qplugin")
    warnings.filterwarnings("ignore", message=r".*TorchScript.*deprecated")
    warnings.filterwarnings("ignore", message=r"Please use quant_min and quant_max")


def short_reason(exc: BaseException) -> str:
    lines = [ln.strip() for ln in str(exc).strip().splitlines() if ln.strip()]
    msg = lines[0] if lines else ""
    if len(msg) > 160:
        msg = msg[:157] + "..."
    return f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__


class Toolkit:
    name = "?"
    label = "?"

    def _tq(self):
        raise NotImplementedError

    # --- qconfigs -------------------------------------------------------------------
    def static_qconfig(self):
        raise NotImplementedError

    def qat_qconfig(self):
        raise NotImplementedError

    # --- workflow --------------------------------------------------------------------
    def fuse(self, model, qat=False):
        """model.fuse_model() with this toolkit's fuser (QAT: keeps BN for training)."""
        tq = self._tq()
        if qat:
            fn = getattr(tq, "fuse_modules_qat", None)
            if fn is None:  # fall back to torch.ao's QAT fuser (produces torch.ao.nn.intrinsic.qat modules)
                fn = TorchAO()._tq().fuse_modules_qat
        else:
            fn = tq.fuse_modules
        return model.fuse_model(fn)

    def prepare_static(self, fp32_model):
        tq = self._tq()
        m = copy.deepcopy(fp32_model).eval()
        self.fuse(m)
        m.qconfig = self.static_qconfig()
        tq.prepare(m, inplace=True)
        return m

    def convert(self, prepared):
        prepared.eval()
        return self._tq().convert(prepared, inplace=False)

    def prepare_qat(self, fp32_model):
        tq = self._tq()
        m = copy.deepcopy(fp32_model).train()
        self.fuse(m, qat=True)
        m.qconfig = self.qat_qconfig()
        tq.prepare_qat(m, inplace=True)
        return m

    def quantize_dynamic(self, fp32_model, types=(nn.Linear,)):
        m = copy.deepcopy(fp32_model).eval()
        return self._tq().quantize_dynamic(m, set(types), dtype=torch.qint8)


class TorchAO(Toolkit):
    name = "torch"
    label = "torch int8 (x86)"

    def __init__(self, engine=None):
        engines = torch.backends.quantized.supported_engines
        self.engine = engine or next((e for e in ("x86", "fbgemm", "onednn", "qnnpack") if e in engines), None)

    def _tq(self):
        if self.engine is None:
            raise Unavailable("torch has no quantized engine on this CPU")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                import torch.ao.quantization as tq
        except Exception as e:  # noqa: BLE001 - removed in a future torch
            raise Unavailable(f"torch.ao.quantization is not importable ({short_reason(e)})") from e
        torch.backends.quantized.engine = self.engine
        return tq

    def static_qconfig(self):
        return self._tq().get_default_qconfig(self.engine)

    def qat_qconfig(self):
        return self._tq().get_default_qat_qconfig(self.engine)


class QPlugin(Toolkit):
    name = "qplugin"
    label = "torch_qplugin int8"

    def _tq(self):
        try:
            import torch_qplugin  # noqa: F401
        except Exception as e:  # noqa: BLE001
            raise Unavailable(f"torch_qplugin is not importable ({short_reason(e)})") from e
        try:
            import torch_qplugin.quantization as tq
        except Exception as e:  # noqa: BLE001
            raise Unavailable(f"torch_qplugin.quantization is not importable ({short_reason(e)})") from e
        return tq

    def static_qconfig(self):
        tq = self._tq()
        for name in ("default_per_channel_qconfig", "default_qconfig"):
            if hasattr(tq, name):
                return getattr(tq, name)
        raise Unavailable("torch_qplugin.quantization has no default_qconfig")

    def qat_qconfig(self):
        tq = self._tq()
        if not hasattr(tq, "default_qat_qconfig"):
            raise Unavailable("torch_qplugin.quantization has no default_qat_qconfig")
        return tq.default_qat_qconfig


def graph_op_counts(scripted) -> dict:
    """Count qplugin:: and quantized:: op calls in a scripted module's inlined graph."""
    g = str(scripted.inlined_graph)
    return {"qplugin": g.count("qplugin::"), "quantized": g.count("quantized::")}
