"""torchvision's quantizable model definitions (torchvision.models.quantization), loaded with or
without torchvision's C++ ops.

torchvision's compiled ops load only into the torch release they were built for (0.29 with torch
2.14); ``import torchvision`` elsewhere fails while registering them ("operator torchvision::nms
does not exist"). The model definitions are plain Python and need none of them, so with another
torch the ``torchvision`` and ``torchvision.models`` packages are set up without running their
``__init__`` (which loads the ops and every model family) and the quantization models are imported
from them. torchvision is a test-only dependency (scripts/test.sh, scripts/setup_env.sh).
"""

import importlib
import importlib.util
import pathlib
import sys
import types

import torch
import torch.nn as nn

NAMES = (
    "resnet18",
    "resnet50",
    "resnext101_32x8d",
    "mobilenet_v2",
    "mobilenet_v3_large",
    "googlenet",
    "inception_v3",
    "shufflenet_v2_x1_0",
)


def _native_ops_load(package_dir):
    libs = sorted(package_dir.glob("_C*.so"))
    if not libs:
        return False
    try:
        torch.ops.load_library(str(libs[0]))
    except (OSError, RuntimeError):  # built for another torch: undefined or mismatched symbols
        return False
    return True


def load():
    """(torchvision.models.quantization, whether torchvision's C++ ops loaded)."""
    loaded = sys.modules.get("torchvision.models.quantization")
    if loaded is not None:
        return loaded, hasattr(torch.ops.torchvision, "nms")
    spec = importlib.util.find_spec("torchvision")
    if spec is None or spec.origin is None:
        raise ImportError(
            "torchvision is not installed; the test venvs get torchvision==0.29.1 from "
            "scripts/test.sh / scripts/setup_env.sh"
        )
    package_dir = pathlib.Path(spec.origin).parent
    native = _native_ops_load(package_dir)
    if not native:
        for name, sub in (("torchvision", package_dir), ("torchvision.models", package_dir / "models")):
            module = types.ModuleType(name)
            module.__path__ = [str(sub)]
            module.__file__ = str(sub / "__init__.py")
            sys.modules[name] = module
    return importlib.import_module("torchvision.models.quantization"), native


def settle(model, data):
    """Random-init nets have identity batch norms; give them real statistics (and affine
    parameters) from the calibration data so activations are well scaled, as in a trained net."""
    g = torch.Generator().manual_seed(7)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.reset_running_stats()
            m.momentum = None
            with torch.no_grad():
                m.weight.copy_(torch.rand(m.weight.shape, generator=g) + 0.5)
                m.bias.copy_(torch.rand(m.bias.shape, generator=g) * 0.4 - 0.2)
    model.train()
    with torch.no_grad():
        for x in data:
            model(x)
    return model.eval()


def build(name):
    """A random-weight fp32 quantizable model (QuantStub / DeQuantStub inside, fuse_model()),
    seeded, in eval mode."""
    q, _ = load()
    torch.manual_seed(0)
    kwargs = {"weights": None, "quantize": False}
    if name in ("googlenet", "inception_v3"):
        kwargs.update(init_weights=False, aux_logits=False)  # torch's default init; the aux head is training-only
    return getattr(q, name)(**kwargs).eval()
