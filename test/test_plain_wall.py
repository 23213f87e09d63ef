"""The wall between the tiers (issue 14, STYLE.md "Two tiers, one engine"): the plain tier uses no
quantized-tensor API and no torch.ao, so that removing torch's quantized dtypes means deleting the
QuantizedCPU adapters and quantization/_compat.py, nothing else. Read from the sources.

Covered: the kernels, the plain ops (cpu/plain.cpp, cpu/plain_weights.cpp), the plain packed buffers
(packed_params/plain_buffer.*), their fakes, the Quantizer objects, QTensor, the plain modules
(torch_qplugin/nn/plain/) and the workflow's plain path (quantization/plain.py). Not covered: the cpu/
glue shared with the quantized adapters (it still names quantized dtypes as range tags) and
quantization/_to_plain.py (the migration reader of quantized-dtype models: the compat side).
"""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CSRC = ROOT / "aten_ext" / "csrc"
PKG = ROOT / "torch_qplugin"

CPP_FORBIDDEN = re.compile(r"kQUInt8|kQInt8|kQInt32|_affine_quantized|\bq_scale\(\)|\bq_zero_point\(\)|"
                           r"q_per_channel_\w+\(\)|\bint_view\(|qscheme\(\)|is_quantized\(\)|"
                           r"TORCH_LIBRARY_IMPL\(qplugin,\s*QuantizedCPU")
PY_FORBIDDEN = re.compile(r"torch\.(quint8|qint8|qint32)\b|torch\.ao\b|_empty_affine_quantized|"
                          r"\bquantize_per_(tensor|channel)(_dynamic)?\(|\.q_scale\(\)|\.q_zero_point\(\)|"
                          r"\bqplugin\.(quantize_per_tensor|quantize_per_channel|make_per_\w+)\b|is_quantized")

PLAIN_CPP = sorted((CSRC / "kernels").rglob("*.[ch]*")) + [
    CSRC / "cpu" / "plain.cpp", CSRC / "cpu" / "plain_weights.cpp", CSRC / "packed_params" / "plain_buffer.h",
    CSRC / "packed_params" / "plain_buffer.cpp"]
PLAIN_PY = [PKG / "_fakes.py", PKG / "quantizer.py", PKG / "qtensor.py", PKG / "quantization" / "plain.py"] + \
    sorted((PKG / "nn" / "plain").glob("*.py"))


def _code_lines(path, comment):
    for n, line in enumerate(path.read_text().splitlines(), 1):
        code = line.split(comment, 1)[0]
        if code.strip():
            yield n, code


@pytest.mark.parametrize("path", PLAIN_CPP, ids=lambda p: str(p.relative_to(ROOT)))
def test_plain_cpp_uses_no_quantized_tensor_api(path):
    bad = [f"{path.name}:{n}: {code.strip()}" for n, code in _code_lines(path, "//") if CPP_FORBIDDEN.search(code)]
    assert not bad, "quantized-tensor API in the plain tier:\n" + "\n".join(bad)


@pytest.mark.parametrize("path", PLAIN_PY, ids=lambda p: str(p.relative_to(ROOT)))
def test_plain_python_uses_no_quantized_tensor_api(path):
    bad = [f"{path.name}:{n}: {code.strip()}" for n, code in _code_lines(path, "#") if PY_FORBIDDEN.search(code)]
    assert not bad, "quantized-tensor API or torch.ao in the plain tier:\n" + "\n".join(bad)


def test_wall_patterns_catch_what_they_should():
    """The patterns are not vacuous: each forbidden use is caught, plain code is not."""
    for code in ("at::kQUInt8", "at::_empty_affine_quantized(s, o, 1.0, 0)", "x.q_scale()", "int_view(q)",
                 "TORCH_LIBRARY_IMPL(qplugin, QuantizedCPU, m) {"):
        assert CPP_FORBIDDEN.search(code), code
    for code in ("torch.quint8", "import torch.ao.quantization", "torch.quantize_per_tensor(x, 1.0, 0, d)",
                 "t.q_zero_point()", "x.is_quantized"):
        assert PY_FORBIDDEN.search(code), code
    assert not CPP_FORBIDDEN.search("at::kByte; plain_quantize_per_tensor(x, s, z, at::kByte)")
    assert not PY_FORBIDDEN.search('getattr(torch, "quint8", None); q.plain_quantize_per_tensor(x, s, z, d)')
