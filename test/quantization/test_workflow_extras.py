"""QConfigDynamic, NoopObserver, RecordingObserver, default_eval_fn, get_observer_dict and
add_observer_: torch.ao.quantization's names and behaviour."""

import pytest
import torch
import torch.nn as nn

import torch_qplugin.nn.quantized.dynamic as nnqd
import torch_qplugin.quantization as tq


def _net():
    return nn.Sequential(tq.QuantStub(), nn.Linear(4, 3), nn.ReLU(), tq.DeQuantStub()).eval()


def test_recording_and_noop_observers():
    rec = tq.RecordingObserver()
    xs = [torch.randn(2, 3) for _ in range(3)]
    for x in xs:
        assert rec(x) is x
    got = rec.get_tensor_value()
    assert len(got) == 3 and all(torch.equal(a, b) for a, b in zip(got, xs))
    xs[0].add_(1)  # recorded copies, not views
    assert not torch.equal(got[0], xs[0])
    with pytest.raises(RuntimeError, match="RecordingObserver has no qparams"):
        rec.calculate_qparams()
    noop = tq.NoopObserver()
    assert noop.dtype == torch.float16 and noop(xs[1]) is xs[1]
    with pytest.raises(RuntimeError, match="NoopObserver has no qparams"):
        noop.calculate_qparams()
    assert tq.NoopObserver.with_args(dtype=torch.float32)().dtype == torch.float32


def test_add_observer_get_observer_dict_default_eval_fn():
    m = _net()
    m.qconfig = tq.default_qconfig
    tq.propagate_qconfig_(m)
    tq.add_observer_(m)
    obs = {}
    tq.get_observer_dict(m, obs)
    assert set(obs) == {"0.activation_post_process", "1.activation_post_process"}
    data = [(torch.randn(5, 4), torch.zeros(5)) for _ in range(2)]
    tq.default_eval_fn(m, data)
    lo = min(float(x.min()) for x, _ in data)
    assert float(obs["0.activation_post_process"].min_val) == lo
    prefixed = {}
    tq.get_observer_dict(m, prefixed, "net")
    assert set(prefixed) == {"net.0.activation_post_process", "net.1.activation_post_process"}
    q = tq.convert(m)
    assert q(data[0][0]).shape == (5, 3)
    with pytest.raises(NotImplementedError, match="custom_module_class_mapping"):
        tq.add_observer_(_net(), custom_module_class_mapping={nn.Linear: nn.Linear})


def test_qconfig_dynamic_in_quantize_dynamic():
    qc = tq.QConfigDynamic(weight=tq.default_weight_observer)
    assert qc.activation is torch.nn.Identity
    f = nn.Sequential(nn.Linear(6, 4)).eval()
    q = tq.quantize_dynamic(f, {nn.Linear: qc})
    assert type(q[0]) is nnqd.Linear
    x = torch.randn(3, 6)
    assert (q(x) - f(x)).abs().max() < 0.05
    with pytest.raises(ValueError, match="QConfigDynamic received observer instance"):
        tq.QConfigDynamic(weight=tq.default_weight_observer())
