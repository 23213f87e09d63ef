"""The wall between the tiers (STYLE.md "Two tiers, one engine"): the plain tier uses no
quantized-tensor API and no torch.ao, so that removing torch's quantized dtypes means deleting the
QuantizedCPU adapters and quantization/_compat.py, nothing else.

The build enforces it for the C++ (docs/design/plain.md, "Two libraries"): the plain library is
compiled from aten_ext/csrc alone, with only that directory on its include path; the quantized
tier lives under aten_ext/csrc_quantized and its own library. Read from the sources here: every
C++ file under aten_ext/csrc (kernels, the cpu/ glue and plain ops, utils, the plain packed
buffers, library.cpp), new files included; and in Python the fakes, the Quantizer objects, QTensor,
the plain modules (torch_qplugin/nn/plain/) and the workflow's plain path (quantization/plain.py).
The Python compat side is quantization/_compat.py and quantization/_to_plain.py (the migration
reader of quantized-dtype models). Read from the built plain library: its symbols and strings name
no quantized-tier class, schema or source.
"""

import re
from pathlib import Path

import pytest

import torch_qplugin

ROOT = Path(__file__).resolve().parent.parent
CSRC = ROOT / "aten_ext" / "csrc"
CSRC_QUANTIZED = ROOT / "aten_ext" / "csrc_quantized"
PKG = ROOT / "torch_qplugin"

CPP_FORBIDDEN = re.compile(
    r"kQUInt8|kQInt8|kQInt32|kQUInt4x2|kQUInt2x4|_affine_quantized|\bq_scale\(\)|"
    r"\bq_zero_point\(\)|q_per_channel_\w+\(\)|\bint_view\(|qscheme\(\)|is_quantized\(\)|"
    r"\b_make_per_\w+_quantized_tensor\(|TORCH_LIBRARY_IMPL\(qplugin,\s*QuantizedCPU|"
    r"utils/qtensor\.h"
)
PY_FORBIDDEN = re.compile(
    r"torch\.(quint8|qint8|qint32)\b|torch\.ao\b|_empty_affine_quantized|"
    r"\bquantize_per_(tensor|channel)(_dynamic)?\(|\.q_scale\(\)|\.q_zero_point\(\)|"
    r"\bqplugin\.(quantize_per_tensor|quantize_per_channel|make_per_\w+)\b|is_quantized"
)

# What the quantized tier's names look like inside a shared library: its TorchScript classes (in
# mangled symbols, type names and schemas), the schema prefix of a custom class, and the
# __FILE__ of any of its sources (every TORCH_LIBRARY_IMPL block records where it was registered).
SO_FORBIDDEN = (
    b"LinearPackedParams",
    b"ConvPackedParams",
    b"Conv2dPackedParams",
    b"Conv3dPackedParams",
    b"EmbeddingPackedParams",
    b"__torch__.torch.classes.qplugin",
    b"csrc_quantized",
)

PLAIN_CPP = sorted(p for p in CSRC.rglob("*") if p.suffix in (".cpp", ".h"))
PLAIN_PY = [PKG / "_fakes.py", PKG / "quantizer.py", PKG / "qtensor.py", PKG / "quantization" / "plain.py"] + sorted(
    (PKG / "nn" / "plain").glob("*.py")
)


def _violations(text, pattern, comment):
    """(line number, code) of each line of ``text`` whose code (comments stripped) matches."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        code = line.split(comment, 1)[0]
        if code.strip() and pattern.search(code):
            out.append((n, code.strip()))
    return out


@pytest.mark.parametrize("path", PLAIN_CPP, ids=lambda p: str(p.relative_to(ROOT)))
def test_plain_cpp_uses_no_quantized_tensor_api(path):
    bad = [f"{path.name}:{n}: {code}" for n, code in _violations(path.read_text(), CPP_FORBIDDEN, "//")]
    assert not bad, "quantized-tensor API in the plain tier:\n" + "\n".join(bad)


# Dtypes and typed data pointers go through utils/torch_api.h (tensor::dtype / data<T> /
# mutable_data<T>): on the stable ABI the tensor's own scalar_type() and typed data pointers walk
# the C shim's dtype codes one call at a time.
CPP_DTYPE_READS = re.compile(r"\.scalar_type\(\)|->scalar_type\(\)|(const|mutable)_data_ptr<")


@pytest.mark.parametrize(
    "path", [p for p in PLAIN_CPP if p.name != "torch_api.h"], ids=lambda p: str(p.relative_to(ROOT))
)
def test_plain_cpp_reads_dtypes_through_torch_api(path):
    bad = [f"{path.name}:{n}: {code}" for n, code in _violations(path.read_text(), CPP_DTYPE_READS, "//")]
    assert not bad, "read the dtype through tensor::dtype / tensor::data<T> (utils/torch_api.h):\n" + "\n".join(bad)


def test_dtype_read_pattern_catches_what_it_should():
    for code in (
        "x.scalar_type() == kByte",
        "bias->scalar_type()",
        "t.const_data_ptr<float>()",
        "o.mutable_data_ptr<T>()",
    ):
        assert CPP_DTYPE_READS.search(code), code
    for code in ("tensor::dtype(x) == kByte", "t.const_data_ptr()", "tensor::data<float>(t)"):
        assert not CPP_DTYPE_READS.search(code), code


@pytest.mark.parametrize("path", PLAIN_PY, ids=lambda p: str(p.relative_to(ROOT)))
def test_plain_python_uses_no_quantized_tensor_api(path):
    bad = [f"{path.name}:{n}: {code}" for n, code in _violations(path.read_text(), PY_FORBIDDEN, "#")]
    assert not bad, "quantized-tensor API or torch.ao in the plain tier:\n" + "\n".join(bad)


def test_the_plain_tier_is_what_the_plain_ops_use():
    """The glue and the plain ops are read (not only the kernels); the quantized tier is not there."""
    names = {p.relative_to(CSRC).as_posix() for p in PLAIN_CPP}
    for f in (
        "cpu/plain.cpp",
        "cpu/plain_weights.cpp",
        "cpu/add.cpp",
        "cpu/conv.cpp",
        "cpu/quantize.cpp",
        "cpu/pool.cpp",
        "cpu/activation.cpp",
        "cpu/elementwise.h",
        "utils/checks.h",
        "utils/layout.h",
        "packed_params/plain_buffer.cpp",
        "library.cpp",
        "kernels/gemm/requant.h",
        "cpu/linear_weights.cpp",
        "cpu/conv_weights.cpp",
        "cpu/embedding.cpp",
    ):
        assert f in names, f
    assert not any(n.startswith("quantized/") or n == "utils/qtensor.h" for n in names)
    # the quantized tier is under its own include root, out of the plain build's sight
    for k in (
        "quantized/cpu/add.cpp",
        "utils/qtensor.h",
        "utils/class_check.h",
        "packed_params/linear_packed_params.cpp",
        "packed_params/conv_packed_params.cpp",
        "packed_params/embedding_packed_params.cpp",
        "library.cpp",
    ):
        assert (CSRC_QUANTIZED / k).exists(), k


def test_a_planted_violation_fails_the_wall():
    """The check reads the real files: a quantized-dtype name planted in a plain-tier file is found."""
    text = (CSRC / "cpu" / "add.cpp").read_text()
    assert _violations(text, CPP_FORBIDDEN, "//") == []
    planted = text + "\nconst auto t = at::kQUInt8;  // a range tag again\n"
    assert [n for n, _ in _violations(planted, CPP_FORBIDDEN, "//")] == [len(planted.splitlines())]
    assert _violations(text + "\n// at::kQUInt8 in a comment is fine\n", CPP_FORBIDDEN, "//") == []
    py = (PKG / "nn" / "plain" / "modules.py").read_text()
    assert _violations(py, PY_FORBIDDEN, "#") == []
    assert len(_violations(py + "\nx = torch.quint8\n", PY_FORBIDDEN, "#")) == 1


def test_wall_patterns_catch_what_they_should():
    """The patterns are not vacuous: each forbidden use is caught, plain code is not."""
    for code in (
        "at::kQUInt8",
        "at::_empty_affine_quantized(s, o, 1.0, 0)",
        "x.q_scale()",
        "int_view(q)",
        "TORCH_LIBRARY_IMPL(qplugin, QuantizedCPU, m) {",
    ):
        assert CPP_FORBIDDEN.search(code), code
    for code in (
        "torch.quint8",
        "import torch.ao.quantization",
        "torch.quantize_per_tensor(x, 1.0, 0, d)",
        "t.q_zero_point()",
        "x.is_quantized",
    ):
        assert PY_FORBIDDEN.search(code), code
    assert not CPP_FORBIDDEN.search("at::kByte; plain_quantize_per_tensor(x, s, z, at::kByte)")
    assert not PY_FORBIDDEN.search('getattr(torch, "quint8", None); q.plain_quantize_per_tensor(x, s, z, d)')


def _so_violations(data):
    return sorted({bad.decode() for bad in SO_FORBIDDEN if bad in data})


def test_plain_library_names_no_quantized_tier():
    """The built plain library (symbols, type names, schemas, recorded source paths) holds nothing
    of the quantized tier."""
    plain = Path(torch_qplugin._ops.plain_library_path())
    assert plain.is_file(), plain
    assert _so_violations(plain.read_bytes()) == []


def test_library_check_finds_the_quantized_tier():
    """The check above is not vacuous: it finds the quantized tier's names in the quantized library,
    and a planted name."""
    if not torch_qplugin._ops.has_quantized():
        pytest.skip("plain-only build: no quantized library")
    data = Path(torch_qplugin._ops.library_path()).read_bytes()
    found = _so_violations(data)
    for name in ("LinearPackedParams", "EmbeddingPackedParams", "__torch__.torch.classes.qplugin", "csrc_quantized"):
        assert name in found, (name, found)
    assert _so_violations(b"\0qplugin::LinearPackedParamsBase\0") == ["LinearPackedParams"]
