"""The plain workflow in a process where torch's quantized tensors cannot be made.

A subprocess first computes each model's quantized-dtype outputs (the reference), then makes
torch's quantized-tensor creation functions raise (torch.quantize_per_tensor / _per_channel /
_per_tensor_dynamic, torch._empty_affine_quantized, torch._empty_per_channel_affine_quantized,
torch._make_per_tensor_quantized_tensor / _per_channel_) and runs everything under a
TorchDispatchMode that raises as soon as any op (aten or qplugin, called from Python) takes or
returns a quantized-dtype tensor. Under that regime the plain workflow prepares, calibrates (or
trains, QAT), converts, saves, loads and runs the demo's digits CNN (static / dynamic / QAT) and
examples/models (ResNet-18, MobileNetV2, LSTM, Transformer), plus the later modules (embeddings at 8
and 4 bits, the dynamic LSTM / GRU / RNN cells, 3-d average pooling), with outputs bit-identical to the
reference. (The torch.quint8 / qint8 / qint32 attributes stay here; test_no_quantized_dtypes.py
runs the workflow with them deleted from torch.)
"""

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_SCRIPT = textwrap.dedent(r'''
    import copy, io, sys, warnings
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten
    warnings.simplefilter("ignore")
    sys.path.insert(0, sys.argv[1])
    import torch_qplugin
    import torch_qplugin.quantization as tq
    from models import DigitsCNN
    from models.mobilenet import MobileNetV2
    from models.resnet import resnet18
    from models.sequence import LSTMClassifier, TransformerClassifier

    torch.set_num_threads(1)

    def batches(shape, n, seed=1):
        g = torch.Generator().manual_seed(seed)
        return [torch.randn(*shape, generator=g) for _ in range(n)]

    def static(make, shape, qconfig, plain):
        torch.manual_seed(0)
        m = make().eval()
        m.fuse_model()
        m.qconfig = qconfig
        p = tq.prepare(m)
        tq.calibrate(p, batches(shape, 2))
        return tq.convert(p, plain=plain)

    def qat(plain):
        torch.manual_seed(0)
        m = DigitsCNN().train()
        m.fuse_model(tq.fuse_modules_qat)
        m.qconfig = tq.default_qat_qconfig

        def train(model, data):
            opt = torch.optim.SGD(model.parameters(), lr=1e-3)
            for b in data:
                opt.zero_grad()
                model(b).square().mean().backward()
                opt.step()
        return tq.quantize_qat(m, train, (batches((8, 1, 8, 8), 2),), plain=plain)

    def dynamic(make, plain):
        torch.manual_seed(0)
        return tq.quantize_dynamic(make().eval(), plain=plain)

    class Extras(torch.nn.Module):  # the late modules: embeddings (8 / 4 bit) and dynamic cells
        def __init__(self):
            super().__init__()
            self.emb, self.bag = torch.nn.Embedding(50, 8), torch.nn.EmbeddingBag(50, 6, mode="mean")
            self.lstm, self.gru, self.rnn = torch.nn.LSTMCell(8, 5), torch.nn.GRUCell(5, 4), torch.nn.RNNCell(4, 3)

        def forward(self, t):
            h, c = self.lstm(self.emb(t).mean(1))
            return torch.cat([self.rnn(self.gru(h)), c, self.bag(t)], 1)

    def extras(plain):
        torch.manual_seed(0)
        d = tq.default_dynamic_qconfig
        spec = {torch.nn.Embedding: tq.float_qparams_weight_only_qconfig,
                torch.nn.EmbeddingBag: tq.float_qparams_weight_only_qconfig_4bit,
                torch.nn.LSTMCell: d, torch.nn.GRUCell: d, torch.nn.RNNCell: d}
        return tq.quantize_dynamic(Extras().eval(), spec, plain=plain)

    def pool3d(plain):
        torch.manual_seed(0)
        m = torch.nn.Sequential(tq.QuantStub(), torch.nn.Conv3d(2, 3, 1), torch.nn.AvgPool3d(2),
                                torch.nn.AdaptiveAvgPool3d((1, 2, 1)), tq.DeQuantStub()).eval()
        m.qconfig = tq.default_qconfig
        p = tq.prepare(m)
        tq.calibrate(p, batches((2, 2, 4, 6, 4), 2))
        return tq.convert(p, plain=plain)

    tokens = torch.randint(0, 50, (2, 9), generator=torch.Generator().manual_seed(2))
    CASES = {
        "digits_static": (lambda plain: static(DigitsCNN, (16, 1, 8, 8), tq.default_qconfig, plain),
                          batches((4, 1, 8, 8), 1, 3)[0]),
        "digits_dynamic": (lambda plain: dynamic(DigitsCNN, plain), batches((4, 1, 8, 8), 1, 3)[0]),
        "digits_qat": (qat, batches((4, 1, 8, 8), 1, 3)[0]),
        "resnet18": (lambda plain: static(lambda: resnet18(num_classes=10), (2, 3, 32, 32),
                                          tq.default_per_channel_qconfig, plain), batches((2, 3, 32, 32), 1, 3)[0]),
        "mobilenet_v2": (lambda plain: static(lambda: MobileNetV2(num_classes=10), (2, 3, 32, 32),
                                              tq.default_per_channel_qconfig, plain),
                         batches((2, 3, 32, 32), 1, 3)[0]),
        "lstm": (lambda plain: dynamic(lambda: LSTMClassifier(vocab=50, embed=16, hidden=24), plain), tokens),
        "transformer": (lambda plain: dynamic(lambda: TransformerClassifier(vocab=50, d_model=32, nhead=4, ff=64,
                                                                            layers=2), plain), tokens),
        "extras": (extras, tokens),
        "pool3d": (pool3d, batches((2, 2, 4, 6, 4), 1, 3)[0]),
    }

    # 1. the reference: the quantized-dtype form
    want = {name: make(False)(x) for name, (make, x) in CASES.items()}

    # 2. no quantized tensors from here on
    def refuse(name):
        def f(*args, **kwargs):
            raise RuntimeError(f"quantized tensor creation: torch.{name}")
        return f

    for name in ("quantize_per_tensor", "quantize_per_channel", "quantize_per_tensor_dynamic",
                 "_empty_affine_quantized", "_empty_per_channel_affine_quantized",
                 "_make_per_tensor_quantized_tensor", "_make_per_channel_quantized_tensor"):
        setattr(torch, name, refuse(name))

    class NoQuantizedTensors(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            for t in tree_flatten((args, kwargs, out))[0]:
                if isinstance(t, torch.Tensor) and not isinstance(t, torch_qplugin.QTensor) and t.is_quantized:
                    raise RuntimeError(f"{func} took or made a quantized-dtype tensor")
            return out

    # the regime works: both the patched functions and the mode refuse
    with NoQuantizedTensors():
        for bad in (lambda: torch.quantize_per_tensor(torch.ones(2), 1.0, 0, torch.quint8),
                    lambda: torch.ops.qplugin.quantize_per_tensor(torch.ones(2), 1.0, 0, torch.quint8),
                    lambda: CASES["digits_static"][0](False)):  # the quantized-dtype workflow
            try:
                bad()
            except RuntimeError as e:
                print("refused:", str(e).splitlines()[0][:60])
            else:
                raise SystemExit("a quantized tensor was made")

    with NoQuantizedTensors():
        for name, (make, x) in CASES.items():
            model = make(True)
            buf = io.BytesIO()
            torch.save(model, buf)
            buf.seek(0)
            loaded = torch.load(buf, weights_only=False)
            sd = io.BytesIO()
            torch.save(model.state_dict(), sd)
            sd.seek(0)
            fresh = copy.deepcopy(model)
            fresh.load_state_dict(torch.load(sd, weights_only=True))
            for m in (model, loaded, fresh):
                got = m(x)
                assert torch.equal(got, want[name]), name
            print("OK", name)
''')


def test_plain_workflow_without_quantized_tensors(tmp_path):
    r = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(ROOT / "examples")], capture_output=True, text=True, timeout=900
    )
    assert r.returncode == 0, (r.stdout, r.stderr[-3000:])
    lines = r.stdout.splitlines()
    assert sum(line.startswith("refused:") for line in lines) == 3, r.stdout
    for name in (
        "digits_static",
        "digits_dynamic",
        "digits_qat",
        "resnet18",
        "mobilenet_v2",
        "lstm",
        "transformer",
        "extras",
        "pool3d",
    ):
        assert f"OK {name}" in lines, r.stdout
