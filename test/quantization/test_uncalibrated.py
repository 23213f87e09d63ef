"""Observers that saw no data at convert: a module no calibration batch reached converts and raises
a clear error naming it if it is ever called (eager, scripted, saved / loaded, deep-copied,
torch.save'd); an observer that was reached but recorded nothing, or recorded only part of a
range, is a calibration mistake that convert reports."""

import copy
import io
import warnings

import pytest
import torch
import torch.nn as nn

import torch_qplugin.nn.quantized as nnq
import torch_qplugin.quantization as tq
from torch_qplugin.quantization import _compat as C
from torch_qplugin.quantization.observer import observer_state

taq = pytest.importorskip("torch.ao.quantization")
tnnq = pytest.importorskip("torch.ao.nn.quantized")

pytestmark = pytest.mark.filterwarnings(r"ignore:`torch\.jit\.\w+` is deprecated")


class Block(nn.Module):
    """torchvision's QuantizableInvertedResidual pattern: every block owns skip_add."""

    def __init__(self, use_res, ff=nnq.FloatFunctional):
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 3, padding=1)
        self.skip_add = ff()
        self.use_res = use_res

    def forward(self, x):
        return self.skip_add.add(x, self.conv(x)) if self.use_res else self.conv(x)


class Net(nn.Module):
    def __init__(self, stubs=tq, ff=nnq.FloatFunctional):
        super().__init__()
        self.quant = stubs.QuantStub()
        self.features = nn.Sequential(Block(True, ff), Block(False, ff), Block(True, ff))
        self.head = nn.Conv2d(4, 4, 1)  # only on the aux path
        self.fused = C.ConvAdd2d(nn.Conv2d(4, 4, 1), torch.add)  # a two-input forward
        self.dequant = stubs.DeQuantStub()

    def forward(self, x, aux: bool = False):
        x = self.features(self.quant(x))
        if aux:
            x = self.head(x)
            x = self.fused(x, x)
        return self.dequant(x)


def _prepared(calib=True):
    torch.manual_seed(0)
    m = Net().eval()
    m.qconfig = tq.default_qconfig
    p = tq.prepare(m)
    if calib:
        tq.calibrate(p, [torch.randn(2, 4, 6, 6) for _ in range(2)])
    return p


def _x():
    return torch.randn(1, 4, 6, 6)


def test_never_reached_modules_convert_and_raise_naming_them_when_called():
    q = tq.convert(_prepared())
    assert isinstance(q.features[1].skip_add, nnq.NeverCalibratedQFunctional)
    assert type(q.features[0].skip_add) is nnq.QFunctional
    assert "never calibrated" in repr(q.features[1].skip_add)
    x = _x()
    out = q(x)  # the calibrated path runs
    assert out.shape == (1, 4, 6, 6)
    with pytest.raises(
        RuntimeError,
        match=r"'head' \(QuantizedConv2d, converted from Conv2d\).*no "
        r"calibration batch reached it",
    ):
        q(x, True)
    qx = torch.ops.qplugin.quantize_per_tensor(torch.randn(1, 4, 6, 6), 0.1, 128, torch.quint8)
    with pytest.raises(RuntimeError, match=r"'fused' \(QuantizedConvAdd2d"):
        q.fused(qx, qx)
    for op in ("add", "mul", "add_relu"):
        with pytest.raises(RuntimeError, match=r"'features\.1\.skip_add' \(QFunctional"):
            getattr(q.features[1].skip_add, op)(qx, qx)
    with pytest.raises(RuntimeError, match=r"'features\.1\.skip_add'"):
        q.features[1].skip_add.cat([qx, qx], 1)
    # ops whose output qparams follow from the input need no calibration
    assert q.features[1].skip_add.add_scalar(qx, 1.0).q_scale() == qx.q_scale()


def test_never_reached_modules_script_save_load_deepcopy_and_pickle():
    q = tq.convert(_prepared())
    x = _x()
    s = torch.jit.script(q)
    assert torch.equal(s(x), q(x))
    buf = io.BytesIO()
    torch.jit.save(s, buf)
    buf.seek(0)
    loaded = torch.jit.load(buf)
    assert torch.equal(loaded(x), q(x))
    for m in (s, loaded):
        with pytest.raises(torch.jit.Error, match=r"'head' \(QuantizedConv2d"):
            m(x, True)
    buf = io.BytesIO()
    torch.save(q, buf)
    buf.seek(0)
    for m in (copy.deepcopy(q), torch.load(buf, weights_only=False)):
        assert torch.equal(m(x), q(x))
        with pytest.raises(RuntimeError, match=r"'head'"):
            m(x, True)


def test_torch_prepared_model_converts_with_our_mapping_and_names_the_modules():
    torch.manual_seed(0)
    m = Net(taq, tnnq.FloatFunctional).eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.ao's own deprecation notices
        m.qconfig = taq.get_default_qconfig("x86")
        p = taq.prepare(m)
        p(torch.randn(2, 4, 6, 6))
        q = taq.convert(p, mapping=tq.get_default_static_quant_module_mappings())
    assert isinstance(q.features[1].skip_add, nnq.NeverCalibratedQFunctional)
    qx = torch.ops.qplugin.quantize_per_tensor(torch.randn(1, 4, 6, 6), 0.1, 128, torch.quint8)
    with pytest.raises(RuntimeError, match=r"'features\.1\.skip_add' \(QFunctional, converted from FloatFunctional"):
        q.features[1].skip_add.add(qx, qx)
    with pytest.raises(torch.jit.Error, match=r"'head' \(QuantizedConv2d"):
        torch.jit.script(q)(_x(), True)


def test_from_float_outside_convert_says_the_name_is_unknown():
    p = _prepared()
    conv = nnq.Conv2d.from_float(p.head)
    with pytest.raises(RuntimeError, match=r"name unknown.*no calibration batch reached it"):
        conv(torch.ops.qplugin.quantize_per_tensor(torch.randn(1, 4, 6, 6), 0.1, 128, torch.quint8))


def test_no_observer_saw_data_is_a_calibration_error():
    with pytest.raises(
        RuntimeError,
        match=r"every observer in the model \(\d+, e\.g\. on 'quant'\) has seen no data; run "
        r"calibration.*calibrate the model it returned",
    ):
        tq.convert(_prepared(calib=False))


def test_reached_with_empty_tensors_only_is_a_calibration_error():
    p = _prepared()
    p.features[2].skip_add.activation_post_process.reset_min_max_vals()
    p.features[2].skip_add.activation_post_process(torch.empty(0))
    with pytest.raises(
        RuntimeError,
        match=r"QFunctional\.from_float: the observer on FloatFunctional has "
        r"seen no data although calibration reached it 3 time\(s\)",
    ):
        tq.convert(p)


@pytest.mark.parametrize(
    "spoil,why",
    [
        (lambda o: o.max_val.fill_(float("-inf")), r"range is not finite \(min_val=.*, max_val=-inf\)"),
        (lambda o: o.min_val.fill_(float("nan")), r"range is not finite \(min_val=nan"),
        (lambda o: (o.min_val.fill_(2.0), o.max_val.fill_(1.0)), r"min_val exceeds its max_val"),
    ],
)
def test_partly_observed_output_is_a_calibration_error(spoil, why):
    p = _prepared()
    spoil(p.features[0].conv.activation_post_process)
    with pytest.raises(
        RuntimeError,
        match=r"Conv2d\.from_float: the observer on Conv2d has seen only "
        r"part of the data it needs: its " + why,
    ):
        tq.convert(p)


def test_observer_state_reads_ours_and_torchs_observers():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for mod in (tq, taq):
            mm = mod.MinMaxObserver()
            assert observer_state(mm) == ("untouched", "")
            mm(torch.empty(0))
            assert observer_state(mm)[0] == "untouched"
            mm(torch.randn(5))
            assert observer_state(mm) == ("calibrated", "")
            pc = mod.PerChannelMinMaxObserver(ch_axis=1)
            assert observer_state(pc)[0] == "untouched"
            pc(torch.randn(3, 4))
            assert observer_state(pc)[0] == "calibrated"
            pc.min_val[2] = float("inf")
            state, why = observer_state(pc)
            assert state == "partial" and "1 of its 4 channels have no finite range (channels [2])" in why
            h = mod.HistogramObserver(bins=16)
            assert observer_state(h)[0] == "untouched"
            h(torch.randn(20))
            assert observer_state(h)[0] == "calibrated"
            h.histogram.zero_()
            assert observer_state(h) == (
                "partial",
                "its histogram is empty or not finite (sum 0) although min_val / max_val are set",
            )
            fq = mod.FakeQuantize()
            assert observer_state(fq)[0] == "untouched"
            fq(torch.randn(4))
            assert observer_state(fq)[0] == "calibrated"
        assert observer_state(tq.PlaceholderObserver())[0] == "calibrated"
