"""QTensors made inside the traced forward (torch_qplugin/qtensor.py, docs/deploy.md): by
PerTensorAffine.quantize and QTensor(data, scale, zero_point), then torch ops on them (relu,
max_pool2d, cat, flatten, slicing, comparison, argmax, dequantize). torch.export (strict and not)
and torch.compile (fullgraph, AOTAutograd) give eager's bytes and graphs of plain ops only."""

import pytest
import torch
import torch.nn.functional as F

import deploy_lib as D
import torch_qplugin as tq


class MadeInside(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.qz = tq.PerTensorAffine(0.05, 128)

    def forward(self, x):
        q = self.qz.quantize(x)
        y = F.max_pool2d(torch.relu(q), 2)
        z = tq.QTensor(torch.ops.qplugin.plain_hardswish(y.int_repr(), 0.05, 128, 0.04, 120), 0.04, 120)
        y = torch.cat([y, z], 1).flatten(1)[:, 3:]
        return y.dequantize(), y > 0.1, torch.argmax(y, 1)


def _inputs(batch):
    return (torch.randn(batch, 3, 8, 8, generator=torch.Generator().manual_seed(batch)) * 2,)


def _eager():
    m = MadeInside()
    return m, {b: m(*_inputs(b)) for b in D.BATCHES}


@pytest.mark.parametrize("strict", [False, True], ids=["non_strict", "strict"])
def test_export_of_qtensors_made_inside_forward(strict):
    model, expected = _eager()
    ep = D.export(model, _inputs(8), strict=strict)
    assert D.graph_problems(ep) == []
    assert {
        "qplugin::plain_quantize_per_tensor",
        "qplugin::plain_relu",
        "qplugin::plain_max_pool2d",
        "qplugin::plain_cat",
        "qplugin::plain_gt",
        "qplugin::plain_argmax",
    } <= set(D.qplugin_calls(ep))
    for b in D.BATCHES:
        D.assert_same(ep.module()(*_inputs(b)), expected[b], f"exported (strict={strict}), batch {b}")


def test_compile_of_qtensors_made_inside_forward():
    model, expected = _eager()
    torch._dynamo.reset()
    compiled = torch.compile(model, fullgraph=True, backend="aot_eager")
    for b in D.BATCHES:
        D.assert_same(compiled(*_inputs(b)), expected[b], f"compiled, batch {b}")


def test_graph_problems_sees_a_qtensor_value():
    """The graph check above can fail: a QTensor input of an exported program stays a QTensor in
    the graph's values (torch's own subclass path) and is reported."""

    class Relu(torch.nn.Module):
        def forward(self, q):
            return torch.relu(q)

    q = tq.PerTensorAffine(0.05, 128).quantize(torch.randn(2, 4))
    ep = torch.export.export(Relu(), (q,))
    assert any("value of type QTensor" in p for p in D.graph_problems(ep)), D.graph_problems(ep)


@pytest.mark.parametrize(
    "data, scale, zero_point, err, match",
    [
        (torch.zeros(2, dtype=torch.uint8), -0.1, 3, ValueError, r"scale should be a positive finite number, got -0.1"),
        (torch.zeros(2, dtype=torch.uint8), float("nan"), 3, ValueError, r"scale should be a positive finite number"),
        (torch.zeros(2, dtype=torch.uint8), 0.1, 256, ValueError, r"zero_point should be an int in \[0, 255\]"),
        (torch.zeros(2, dtype=torch.int8), 0.1, 1.5, ValueError, r"zero_point should be an int in \[-128, 127\]"),
        (torch.zeros(2), 0.1, 0, TypeError, r"data should have dtype uint8, int8 or int32, got torch.float32"),
    ],
)
def test_qtensor_scale_zero_point_form_checks_its_arguments(data, scale, zero_point, err, match):
    with pytest.raises(err, match=f"torch_qplugin.QTensor: {match}"):
        tq.QTensor(data, scale, zero_point)
    ok = tq.QTensor(torch.tensor([0, 200], dtype=torch.uint8), 0.1, 100)
    assert ok.quantizer == tq.PerTensorAffine(0.1, 100) and torch.equal(ok.dequantize(), torch.tensor([-10.0, 10.0]))
