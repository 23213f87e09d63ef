"""Every quantized module scripts, its graph calls qplugin:: (never quantized::), and it saves /
loads in a fresh process (after ``import torch_qplugin``) with identical outputs."""

import os
import subprocess
import sys

import pytest
import torch
import torch.nn as nn

import torch_qplugin.nn.quantized as nnq
import torch_qplugin.quantization as tq

# TorchScript itself is deprecated in torch 2.13; its warnings are not ours
pytestmark = pytest.mark.filterwarnings(r"ignore:`torch\.jit\.\w+` is deprecated")

Q = torch.ops.qplugin


def qx(shape, scale=0.05, zp=120):
    return Q.quantize_per_tensor(torch.rand(shape) * 8 - 4, scale, zp, torch.quint8)


def _weighted(m):
    w, _ = m._weight_bias()
    shape = tuple(w.shape)
    wf = torch.randn(shape) * 0.2
    scales = (wf.reshape(shape[0], -1).abs().amax(1) / 127).double()
    m.set_weight_bias(
        Q.quantize_per_channel(wf, scales, torch.zeros(shape[0], dtype=torch.long), 0, torch.qint8),
        torch.randn(shape[0]),
    )
    m.scale, m.zero_point = 0.1, 30
    return m


def _bn(m):
    with torch.no_grad():
        m.weight.uniform_(0.5, 1.5)
        m.bias.normal_()
        m.running_mean.normal_()
        m.running_var.uniform_(0.3, 2.0)
    m.scale, m.zero_point = 0.04, 90
    return m


def _prelu():
    m = nnq.PReLU(0.04, 100, 3)
    m.set_weight(Q.quantize_per_tensor(torch.tensor([0.2, -0.5, 1.5]), 0.02, 0, torch.qint8))
    return m


class _Binary(nn.Module):
    def __init__(self, op):
        super().__init__()
        self.f = nnq.QFunctional()
        self.f.scale, self.f.zero_point = 0.07, 90
        self.op = op

    def forward(self, a, b):
        if self.op == "add":
            return self.f.add(a, b)
        if self.op == "mul":
            return self.f.mul(a, b)
        if self.op == "add_relu":
            return self.f.add_relu(a, b)
        return self.f.cat([a, b], 1)


CASES = {
    "Linear": (lambda: _weighted(nnq.Linear(8, 5)), lambda: (qx((3, 8)),), "qplugin::linear"),
    "LinearReLU": (lambda: _weighted(nnq.LinearReLU(8, 5)), lambda: (qx((3, 8)),), "qplugin::linear_relu"),
    "Conv1d": (lambda: _weighted(nnq.Conv1d(3, 4, 3)), lambda: (qx((1, 3, 9)),), "qplugin::conv1d"),
    "Conv2d": (lambda: _weighted(nnq.Conv2d(3, 4, 3, padding=1)), lambda: (qx((1, 3, 6, 6)),), "qplugin::conv2d"),
    "Conv2dReflect": (
        lambda: _weighted(nnq.Conv2d(3, 4, 3, padding=1, padding_mode="reflect")),
        lambda: (qx((1, 3, 6, 6)),),
        "qplugin::conv2d",
    ),
    "Conv3d": (lambda: _weighted(nnq.Conv3d(3, 4, 3)), lambda: (qx((1, 3, 4, 4, 4)),), "qplugin::conv3d"),
    "ConvReLU1d": (lambda: _weighted(nnq.ConvReLU1d(3, 4, 3)), lambda: (qx((1, 3, 9)),), "qplugin::conv1d_relu"),
    "ConvReLU2d": (lambda: _weighted(nnq.ConvReLU2d(3, 4, 3)), lambda: (qx((1, 3, 6, 6)),), "qplugin::conv2d_relu"),
    "ConvReLU3d": (lambda: _weighted(nnq.ConvReLU3d(3, 4, 3)), lambda: (qx((1, 3, 4, 4, 4)),), "qplugin::conv3d_relu"),
    "ConvAdd2d": (
        lambda: _weighted(nnq.ConvAdd2d(3, 4, 3, padding=1)),
        lambda: (qx((1, 3, 6, 6)), qx((1, 4, 6, 6))),
        "qplugin::conv2d_add",
    ),
    "ConvAddReLU2d": (
        lambda: _weighted(nnq.ConvAddReLU2d(3, 4, 3, padding=1)),
        lambda: (qx((1, 3, 6, 6)), qx((1, 4, 6, 6))),
        "qplugin::conv2d_add_relu",
    ),
    "ReLU": (lambda: nnq.ReLU(), lambda: (qx((2, 7)),), "qplugin::relu"),
    "ReLU6": (lambda: nnq.ReLU6(), lambda: (qx((2, 7)),), "qplugin::relu6"),
    "Hardswish": (lambda: nnq.Hardswish(0.05, 10), lambda: (qx((2, 7)),), "qplugin::hardswish"),
    "ELU": (lambda: nnq.ELU(0.05, 80), lambda: (qx((2, 7)),), "qplugin::elu"),
    "LeakyReLU": (lambda: nnq.LeakyReLU(0.05, 80, 0.1), lambda: (qx((2, 7)),), "qplugin::leaky_relu"),
    "Sigmoid": (lambda: nnq.Sigmoid(), lambda: (qx((2, 7)),), "qplugin::sigmoid"),
    "Hardsigmoid": (lambda: nnq.Hardsigmoid(), lambda: (qx((2, 7)),), "qplugin::hardsigmoid"),
    "MaxPool2d": (lambda: nnq.MaxPool2d(2), lambda: (qx((1, 2, 6, 6)),), "qplugin::max_pool2d"),
    "AvgPool2d": (lambda: nnq.AvgPool2d(3, 1, 1), lambda: (qx((1, 2, 6, 6)),), "qplugin::avg_pool2d"),
    "AdaptiveAvgPool2d": (
        lambda: nnq.AdaptiveAvgPool2d((2, 3)),
        lambda: (qx((1, 2, 6, 6)),),
        "qplugin::adaptive_avg_pool2d",
    ),
    "BatchNorm2d": (lambda: _bn(nnq.BatchNorm2d(3)), lambda: (qx((2, 3, 4, 5)),), "qplugin::batch_norm2d"),
    "BatchNorm3d": (lambda: _bn(nnq.BatchNorm3d(3)), lambda: (qx((2, 3, 2, 4, 5)),), "qplugin::batch_norm3d"),
    "BNReLU2d": (lambda: _bn(nnq.BNReLU2d(3)), lambda: (qx((2, 3, 4, 5)),), "qplugin::batch_norm2d_relu"),
    "BNReLU3d": (lambda: _bn(nnq.BNReLU3d(3)), lambda: (qx((2, 3, 2, 4, 5)),), "qplugin::batch_norm3d_relu"),
    "GroupNorm": (
        lambda: nnq.GroupNorm(2, 4, torch.rand(4) + 0.5, torch.randn(4), 0.03, 100),
        lambda: (qx((2, 4, 3, 5)),),
        "qplugin::group_norm",
    ),
    "InstanceNorm1d": (
        lambda: nnq.InstanceNorm1d(4, None, None, 0.03, 100),
        lambda: (qx((2, 4, 9)),),
        "qplugin::instance_norm",
    ),
    "InstanceNorm2d": (
        lambda: nnq.InstanceNorm2d(4, torch.rand(4) + 0.5, torch.randn(4), 0.03, 100, affine=True),
        lambda: (qx((2, 4, 3, 5)),),
        "qplugin::instance_norm",
    ),
    "InstanceNorm3d": (
        lambda: nnq.InstanceNorm3d(4, None, None, 0.03, 100),
        lambda: (qx((2, 4, 2, 3, 5)),),
        "qplugin::instance_norm",
    ),
    "LayerNorm": (
        lambda: nnq.LayerNorm([3, 5], torch.rand(3, 5) + 0.5, torch.randn(3, 5), 0.03, 100),
        lambda: (qx((2, 4, 3, 5)),),
        "qplugin::layer_norm",
    ),
    "Softmax": (lambda: nnq.Softmax(1, 1 / 256, 0), lambda: (qx((2, 5, 3)),), "qplugin::softmax"),
    "SoftmaxDefaultDim": (lambda: nnq.Softmax(None, 1 / 256, 0), lambda: (qx((2, 5, 3, 2)),), "qplugin::softmax"),
    "PReLU": (lambda: _prelu(), lambda: (qx((2, 3, 4, 5)),), "qplugin::prelu"),
    "Quantize": (
        lambda: nnq.Quantize(0.1, 3, torch.quint8),
        lambda: (torch.randn(2, 3),),
        "qplugin::quantize_per_tensor",
    ),
    "DeQuantize": (lambda: nnq.DeQuantize(), lambda: (qx((2, 3)),), "qplugin::dequantize"),
    "QFunctional.add": (lambda: _Binary("add"), lambda: (qx((1, 3, 2)), qx((1, 3, 2))), "qplugin::add"),
    "QFunctional.mul": (lambda: _Binary("mul"), lambda: (qx((1, 3, 2)), qx((1, 3, 2))), "qplugin::mul"),
    "QFunctional.add_relu": (lambda: _Binary("add_relu"), lambda: (qx((1, 3, 2)), qx((1, 3, 2))), "qplugin::add_relu"),
    "QFunctional.cat": (lambda: _Binary("cat"), lambda: (qx((1, 3, 2)), qx((1, 3, 2))), "qplugin::cat"),
    "dynamic.Linear": (
        lambda: tq.quantize_dynamic(nn.Sequential(nn.Linear(6, 4)))[0],
        lambda: (torch.randn(3, 6),),
        "qplugin::linear_dynamic",
    ),
    "dynamic.Linear.fp16": (
        lambda: tq.quantize_dynamic(nn.Sequential(nn.Linear(6, 4)), dtype=torch.float16)[0],
        lambda: (torch.randn(3, 6),),
        "qplugin::linear_dynamic_fp16",
    ),
    "dynamic.LSTM.fp16": (
        lambda: tq.quantize_dynamic(nn.Sequential(nn.LSTM(6, 4, 2, bidirectional=True)), dtype=torch.float16)[0],
        lambda: (torch.randn(3, 2, 6),),
        "qplugin::_rnn_layer_dynamic",
    ),
    "dynamic.GRUCell.fp16": (
        lambda: tq.quantize_dynamic(nn.Sequential(nn.GRUCell(6, 4)), dtype=torch.float16)[0],
        lambda: (torch.randn(3, 6),),
        "qplugin::_rnn_layer_dynamic",
    ),
    "dynamic.RNNCell.fp16": (
        lambda: tq.quantize_dynamic(nn.Sequential(nn.RNNCell(6, 4)), dtype=torch.float16)[0],
        lambda: (torch.randn(3, 6),),
        "qplugin::linear_dynamic_fp16",
    ),
    "dynamic.LSTM": (
        lambda: tq.quantize_dynamic(nn.Sequential(nn.LSTM(6, 4, 2, bidirectional=True)))[0],
        lambda: (torch.randn(3, 2, 6),),
        "qplugin::_rnn_layer_dynamic",
    ),
    "dynamic.GRU": (
        lambda: tq.quantize_dynamic(nn.Sequential(nn.GRU(6, 4)))[0],
        lambda: (torch.randn(3, 2, 6),),
        "qplugin::_rnn_layer_dynamic",
    ),
    "dynamic.LSTMCell": (
        lambda: tq.quantize_dynamic(nn.Sequential(nn.LSTMCell(6, 4)))[0],
        lambda: (torch.randn(3, 6),),
        "qplugin::_rnn_layer_dynamic",
    ),
    "dynamic.GRUCell": (
        lambda: tq.quantize_dynamic(nn.Sequential(nn.GRUCell(6, 4)))[0],
        lambda: (torch.randn(3, 6),),
        "qplugin::_rnn_layer_dynamic",
    ),
    "dynamic.RNNCell": (
        lambda: tq.quantize_dynamic(nn.Sequential(nn.RNNCell(6, 4)))[0],
        lambda: (torch.randn(3, 6),),
        "qplugin::linear_dynamic",
    ),
}

# 3-d average pooling
CASES.update(
    {
        "AvgPool3d": (
            lambda: nnq.AvgPool3d(3, 2, 1, count_include_pad=False),
            lambda: (qx((1, 2, 5, 6, 6)),),
            "qplugin::avg_pool3d",
        ),
        "AdaptiveAvgPool3d": (
            lambda: nnq.AdaptiveAvgPool3d((2, None, 3)),
            lambda: (qx((1, 2, 5, 6, 6)),),
            "qplugin::adaptive_avg_pool3d",
        ),
    }
)


def _emb(cls, dtype, **kw):
    f = (nn.Embedding if cls is nnq.Embedding else nn.EmbeddingBag)(20, 6, **kw)
    f.qconfig = (
        tq.float_qparams_weight_only_qconfig if dtype == torch.quint8 else tq.float_qparams_weight_only_qconfig_4bit
    )
    return cls.from_float(f)


# embeddings
CASES.update(
    {
        "Embedding": (
            lambda: _emb(nnq.Embedding, torch.quint8),
            lambda: (torch.randint(0, 20, (3, 4)),),
            "qplugin::embedding_byte",
        ),
        "Embedding4bit": (
            lambda: _emb(nnq.Embedding, torch.quint4x2),
            lambda: (torch.randint(0, 20, (5,)),),
            "qplugin::embedding_4bit",
        ),
        "EmbeddingBag": (
            lambda: _emb(nnq.EmbeddingBag, torch.quint8, mode="mean"),
            lambda: (torch.randint(0, 20, (7,)), torch.tensor([0, 3])),
            "qplugin::embedding_bag_byte",
        ),
        "EmbeddingBag4bit": (
            lambda: _emb(nnq.EmbeddingBag, torch.quint4x2),
            lambda: (torch.randint(0, 20, (7,)), torch.tensor([0, 3])),
            "qplugin::embedding_bag_4bit",
        ),
    }
)


def _flat(out):
    if isinstance(out, torch.Tensor):
        return [out.int_repr() if out.is_quantized else out]
    return [t for o in out for t in _flat(o)]


_LOAD = r"""
import sys, torch, torch_qplugin
def flat(o):
    if isinstance(o, torch.Tensor):
        return [o.int_repr() if o.is_quantized else o]
    return [t for x in o for t in flat(x)]
bad = []
for model_path, data_path in zip(sys.argv[1::2], sys.argv[2::2]):
    m = torch.jit.load(model_path)
    inputs, expected = torch.load(data_path, weights_only=False)
    got = flat(m(*inputs))
    if len(got) != len(expected) or not all(torch.equal(a, b) for a, b in zip(got, expected)):
        bad.append(model_path)
assert not bad, bad
print("OK", len(sys.argv[1:]) // 2)
"""


def _graph_ops(scripted):
    return scripted.inlined_graph.str() if hasattr(scripted, "inlined_graph") else str(scripted.graph)


def _load_in_fresh_process(pairs):
    args = [str(p) for pair in pairs for p in pair]
    r = subprocess.run([sys.executable, "-c", _LOAD] + args, capture_output=True, text=True, env=dict(os.environ))
    assert r.returncode == 0 and f"OK {len(pairs)}" in r.stdout, r.stderr[-3000:]


def _script_and_save(name, directory):
    make, inputs_fn, op = CASES[name]
    m = make().eval()
    inputs = inputs_fn()
    eager = _flat(m(*inputs))
    s = torch.jit.script(m)
    graph = _graph_ops(s)
    assert op in graph, graph
    assert "quantized::" not in graph
    assert all(torch.equal(a, b) for a, b in zip(_flat(s(*inputs)), eager))
    safe = name.replace(".", "_")
    path, data = directory / f"{safe}.pt", directory / f"{safe}_io.pt"
    torch.jit.save(s, str(path))
    torch.save((inputs, eager), str(data))
    return path, data


@pytest.mark.parametrize("name", list(CASES))
def test_script_graph_calls_qplugin(name, tmp_path):
    _script_and_save(name, tmp_path)


def test_all_modules_load_in_fresh_process(tmp_path):
    _load_in_fresh_process([_script_and_save(name, tmp_path) for name in CASES])


def test_fresh_process_check_can_fail(tmp_path):
    path, data = _script_and_save("dynamic.Linear", tmp_path)  # float io: plain torch.load
    inputs, expected = torch.load(str(data), weights_only=False)
    torch.save((inputs, [expected[0] + 1]), str(data))
    with pytest.raises(AssertionError, match="dynamic_Linear.pt"):
        _load_in_fresh_process([(path, data)])


def test_converted_model_scripts_and_loads(tmp_path):
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.quant = tq.QuantStub()
            self.conv = nn.Conv2d(3, 6, 3, padding=1)
            self.relu = nn.ReLU()
            self.add = nnq.FloatFunctional()
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(6, 4)
            self.dequant = tq.DeQuantStub()

        def forward(self, x):
            x = self.quant(x)
            y = self.relu(self.conv(x))
            y = self.add.add(y, y)
            return self.dequant(self.fc(self.pool(y).flatten(1)))

    m = tq.fuse_modules(Net().eval(), ["conv", "relu"])
    m.qconfig = tq.default_qconfig
    q = tq.quantize(m, tq.calibrate, ([torch.randn(2, 3, 8, 8) for _ in range(3)],))
    x = torch.randn(2, 3, 8, 8)
    s = torch.jit.script(q)
    graph = _graph_ops(s)
    assert "quantized::" not in graph and "qplugin::conv2d_relu" in graph
    assert torch.equal(s(x), q(x))
    path, data = tmp_path / "m.pt", tmp_path / "io.pt"
    torch.jit.save(s, str(path))
    torch.save(((x,), [q(x)]), str(data))
    _load_in_fresh_process([(path, data)])
