"""The plain tier in a torch without quantized dtypes: the day torch drops them, nothing changes.

Three processes:

1. the reference, with the dtypes: each model of the workflow converted to the quantized tier
   (plain=False), its outputs saved;
2. the dtype-free run: torch.quint8 / qint8 / qint32 / quint4x2 / quint2x4 are deleted from
   ``torch`` and every quantized-tensor creation function of torch (found by name: quantize_per_*,
   *empty*_quantized, _make_per_*_quantized_tensor) made to raise, all BEFORE ``import
   torch_qplugin``; a TorchDispatchMode then refuses any op that takes or makes a quantized-dtype
   tensor. There the whole workflow runs with the defaults (``convert`` gives plain models when the
   dtypes are absent): static (fuse, prepare, calibrate, convert), QAT, dynamic int8 (Linear, LSTM,
   GRU), fp16 dynamic, embeddings (8 and 4 bits); the models are saved whole and as state dicts,
   the static one also exported (torch.export.save), compiled (torch.compile) and packaged
   (AOTInductor). The quantized tier (torch_qplugin.nn.quantized / nn.intrinsic) is never imported;
   constructing one of its modules afterwards raises an error saying to use the plain form;
3. a fresh dtype-free process loads what process 2 saved and runs it.

Every output is bit-identical (torch.equal) to the reference of process 1. The C++ op library
needs nothing of the deleted attributes: it names the quantized dtypes only as C++ ScalarTypes,
which exist whatever ``torch``'s Python module holds (it loads in process 2 before any check).
"""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import torch_qplugin

PKG_PARENT = Path(torch_qplugin.__file__).resolve().parent.parent

_MODELS = r'''
import torch
import torch.nn as nn

torch.set_num_threads(1)
QDTYPES = ("quint8", "qint8", "qint32", "quint4x2", "quint2x4")


def batches(shape, n, seed):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(*shape, generator=g) for _ in range(n)]


class Net(nn.Module):
    """conv-bn-relu, a FloatFunctional add, max pool, conv-relu, hardswish, adaptive pool, linear."""

    def __init__(self, tq):
        super().__init__()
        self.quant, self.dequant = tq.QuantStub(), tq.DeQuantStub()
        self.conv1, self.bn1, self.relu1 = nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU()
        self.conv2, self.relu2 = nn.Conv2d(4, 4, 1), nn.ReLU()
        self.skip = torch_qplugin.nn.FloatFunctional()
        self.pool, self.act, self.gap = nn.MaxPool2d(2), nn.Hardswish(), nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(4, 5)

    def forward(self, x):
        x = self.relu1(self.bn1(self.conv1(self.quant(x))))
        x = self.pool(self.skip.add(x, self.relu2(self.conv2(x))))
        return self.dequant(self.fc(torch.flatten(self.gap(self.act(x)), 1)))

    def fuse(self, fuse):
        return fuse(self, [["conv1", "bn1", "relu1"], ["conv2", "relu2"]])


class Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc, self.lstm, self.gru = nn.Linear(6, 5), nn.LSTM(5, 4, num_layers=2, bidirectional=True), nn.GRU(8, 3)

    def forward(self, x):
        y, _ = self.lstm(torch.relu(self.fc(x)))
        return self.gru(y)


class Tables(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb, self.bag = nn.Embedding(30, 8), nn.EmbeddingBag(30, 6, mode="mean")

    def forward(self, t):
        return torch.cat([self.emb(t).sum(1), self.bag(t)], 1)


def static(tq, **kw):
    torch.manual_seed(0)
    m = Net(tq).eval().fuse(tq.fuse_modules)
    m.qconfig = tq.default_qconfig
    p = tq.prepare(m)
    for b in batches((4, 2, 8, 8), 3, 1):
        p(b)
    return tq.convert(p, **kw)


def qat(tq, **kw):
    torch.manual_seed(0)
    m = Net(tq).train().fuse(tq.fuse_modules_qat)
    m.qconfig = tq.default_qat_qconfig
    p = tq.prepare_qat(m)
    opt = torch.optim.SGD(p.parameters(), lr=1e-2)
    for b in batches((4, 2, 8, 8), 2, 1):
        opt.zero_grad()
        p(b).square().mean().backward()
        opt.step()
    return tq.convert(p.eval(), **kw)


def dynamic(tq, **kw):
    torch.manual_seed(0)
    return tq.quantize_dynamic(Seq().eval(), **kw)


def fp16(tq, **kw):
    torch.manual_seed(0)
    return tq.quantize_dynamic(Seq().eval(), dtype=torch.float16, **kw)


def tables(tq, **kw):
    torch.manual_seed(0)
    spec = {nn.Embedding: tq.float_qparams_weight_only_qconfig, nn.EmbeddingBag: tq.float_qparams_weight_only_qconfig_4bit}
    return tq.quantize_dynamic(Tables().eval(), spec, **kw)


CASES = {"static": (static, batches((3, 2, 8, 8), 1, 7)[0]), "qat": (qat, batches((3, 2, 8, 8), 1, 7)[0]),
         "dynamic": (dynamic, batches((7, 2, 6), 1, 7)[0]), "fp16": (fp16, batches((7, 2, 6), 1, 7)[0]),
         "tables": (tables, torch.randint(0, 30, (3, 5), generator=torch.Generator().manual_seed(7)))}


def flat(out):
    return [out] if isinstance(out, torch.Tensor) else [t for o in out for t in flat(o)]
'''

_REFERENCE = r'''
import sys
import torch_qplugin
import torch_qplugin.quantization as tq
{models}
want = {{name: flat(make(tq, plain=False)(x)) for name, (make, x) in CASES.items()}}
assert type(CASES["static"][0](tq, plain=False).fc).__module__.startswith("torch_qplugin.nn.quantized")
torch.save(want, sys.argv[1])
'''

# Runs before torch_qplugin is imported: no quantized dtype, no way for torch to make a quantized tensor.
_NO_DTYPES = r'''
import re
import torch

# torch 2.13's own code names the quantized dtypes at import time (torch.onnx's type tables, which
# dynamo imports) and in cached tables (serialization's storage type names, the weights-only
# unpickler's allowed globals, torch.overrides' list of torch's functions). They are imported and
# built here, before the dtypes go, as a torch without them has them without them: torch's code,
# not qplugin's, which imports after the dtypes are gone.
import torch._dynamo
import torch._inductor.compile_fx
import torch.export
import torch.onnx._internal.torchscript_exporter.symbolic_helper
torch.storage._dtype_to_storage_type_map(), torch.storage._storage_type_to_dtype_map()
torch._weights_only_unpickler._get_allowed_globals()
torch.overrides._get_overridable_functions()
for name in ("quint8", "qint8", "qint32", "quint4x2", "quint2x4"):
    delattr(torch, name)
CREATORS = sorted(n for n in dir(torch) if re.fullmatch(r"_?(quantize_per_\w+|_?empty\w*_quantized|_?make_per_\w+_quantized_tensor)", n))
assert {"quantize_per_tensor", "quantize_per_channel", "quantize_per_tensor_dynamic", "_empty_affine_quantized",
        "_empty_per_channel_affine_quantized", "_make_per_tensor_quantized_tensor",
        "_make_per_channel_quantized_tensor", "empty_quantized"} <= set(CREATORS), CREATORS


def _refuse(name):
    def f(*args, **kwargs):
        raise RuntimeError(f"quantized tensor creation: torch.{name}")
    return f


for name in CREATORS:
    setattr(torch, name, _refuse(name))
# (torch._C._VariableFunctions is read-only; a direct aten call that makes a quantized tensor meets
# the dispatch mode below)

from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten


class NoQuantizedTensors(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in tree_flatten((args, kwargs, out))[0]:
            if isinstance(t, torch.Tensor) and t.is_quantized and type(t).__name__ != "QTensor":
                raise RuntimeError(f"{func} took or made a quantized-dtype tensor")
        return out


import warnings
warnings.filterwarnings("error", module="torch_qplugin")  # ours must not warn
import torch_qplugin
'''

_DTYPE_FREE = r'''
import copy, sys
from pathlib import Path
{no_dtypes}
import torch_qplugin.quantization as tq
from torch_qplugin import deploy
{models}
out_dir, want = Path(sys.argv[1]), torch.load(sys.argv[2], weights_only=True)
QUANTIZED_TIER = ("torch_qplugin.nn.quantized", "torch_qplugin.nn.intrinsic")
report = {{"creators": CREATORS}}

for bad in (lambda: torch.quantize_per_tensor(torch.ones(2), 1.0, 0, torch.uint8), lambda: torch.quint8):
    try:
        bad()
    except (RuntimeError, AttributeError) as e:
        report.setdefault("refused", []).append(type(e).__name__)

with NoQuantizedTensors():
    for name, (make, x) in CASES.items():
        model = make(tq)  # the defaults: plain, as torch has no quantized dtypes
        kinds = {{type(m).__module__ for m in model.modules()}}
        assert "torch_qplugin.nn.plain.modules" in kinds, (name, kinds)
        assert not [k for k in kinds if k.startswith(QUANTIZED_TIER)], (name, kinds)
        assert all(torch.equal(a, b) for a, b in zip(flat(model(x)), want[name], strict=True)), name
        torch.save(model, out_dir / f"{{name}}.pt")
        torch.save(model.state_dict(), out_dir / f"{{name}}.sd.pt")
        again = copy.deepcopy(model)
        again.load_state_dict(torch.load(out_dir / f"{{name}}.sd.pt", weights_only=True))
        assert all(torch.equal(a, b) for a, b in zip(flat(again(x)), want[name], strict=True)), name
        report.setdefault("eager", []).append(name)

model, x = torch.load(out_dir / "static.pt", weights_only=False), CASES["static"][1]
ep = deploy.export(model, (x,))
torch.export.save(ep, out_dir / "static.pt2")
assert torch.equal(deploy.compile(model)(x), want["static"][0])
deploy.aoti_package(ep, out_dir / "static_aoti.pt2")
report["deployed"] = True
report["quantized_tier_imported"] = sorted(m for m in sys.modules if m.startswith(QUANTIZED_TIER))

# the quantized tier itself: imports, and says what to use instead
import torch_qplugin.nn.quantized as nnq
for make in (lambda: nnq.Linear(2, 2), lambda: nnq.Quantize(1.0, 0, torch.uint8),
             lambda: static(tq, plain=False)):
    try:
        make()
    except RuntimeError as e:
        assert "use the plain form" in str(e), e
        report.setdefault("quantized_tier_refused", []).append(str(e).split(":")[0])
print(json.dumps(report))
'''

_FRESH = r'''
import sys
from pathlib import Path
{no_dtypes}
{models}
out_dir, want = Path(sys.argv[1]), torch.load(sys.argv[2], weights_only=True)
done = []
with NoQuantizedTensors():
    for name, (make, x) in CASES.items():
        model = torch.load(out_dir / f"{{name}}.pt", weights_only=False)
        model.load_state_dict(torch.load(out_dir / f"{{name}}.sd.pt", weights_only=True))
        assert all(torch.equal(a, b) for a, b in zip(flat(model(x)), want[name], strict=True)), name
        done.append(name)
x = CASES["static"][1]
assert torch.equal(torch.export.load(out_dir / "static.pt2").module()(x), want["static"][0])
assert torch.equal(torch._inductor.aoti_load_package(str(out_dir / "static_aoti.pt2"))(x), want["static"][0])
done += ["export", "aoti"]
assert not [m for m in sys.modules if m.startswith(("torch_qplugin.nn.quantized", "torch_qplugin.nn.intrinsic"))]
print(json.dumps(done))
'''


def _run(script, *args):
    env = dict(os.environ, PYTHONPATH=str(PKG_PARENT), OMP_NUM_THREADS="1")
    r = subprocess.run(
        [sys.executable, "-c", "import json\n" + script, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=1500,
        env=env,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-6000:]
    return r.stdout


def test_the_plain_workflow_runs_without_quantized_dtypes(tmp_path):
    models = textwrap.dedent(_MODELS)
    ref = tmp_path / "reference.pt"
    _run(textwrap.dedent(_REFERENCE).format(models=models), ref)

    no_dtypes = textwrap.dedent(_NO_DTYPES)
    out = json.loads(
        _run(textwrap.dedent(_DTYPE_FREE).format(no_dtypes=no_dtypes, models=models), tmp_path, ref).splitlines()[-1]
    )
    assert out["refused"] == ["RuntimeError", "AttributeError"]
    assert out["eager"] == ["static", "qat", "dynamic", "fp16", "tables"]
    assert out["deployed"] and out["quantized_tier_imported"] == []
    assert out["quantized_tier_refused"] == [
        "qplugin Linear",
        "torch_qplugin.nn.quantized.Quantize",
        "torch_qplugin.nn.quantized.Quantize",
    ]

    done = json.loads(
        _run(textwrap.dedent(_FRESH).format(no_dtypes=no_dtypes, models=models), tmp_path, ref).splitlines()[-1]
    )
    assert done == ["static", "qat", "dynamic", "fp16", "tables", "export", "aoti"]
