"""The int8 GEMM on every kernel path the CPU runs: bit-identical to the scalar reference over
every tile shape each path has (rows 1-13 cover the AVX-512 6/8-row tiles, AVX2's 1-6-row int16
tiles and the AVX-VNNI tall 1-6-row / wide 1-2-row x 1-3-panel tiles; column counts around the
16-column panels and 48 / 64-column strips; K with and without a tail quad), per-channel weight
zero points (the row-sum term), and the three outputs: uint8 (linear), float (dynamic linear)
and int32 (transposed conv's GEMM + col2im).
"""

import shutil
import subprocess

import pytest
import torch

import torch_qplugin
from torch_qplugin import _isa

q = torch.ops.qplugin

ROWS = list(range(1, 14))
COLS = [1, 15, 16, 17, 33, 47, 48, 49, 64, 100]
DEPTHS = [1, 3, 4, 5, 64, 67]


def _operands(M, K, N, g, wzp):
    w = torch.randint(-128, 128, (N, K), dtype=torch.int8, generator=g)
    zps = torch.randint(-wzp, wzp + 1, (N,), generator=g) if wzp else torch.zeros(N, dtype=torch.long)
    wq = torch._make_per_channel_quantized_tensor(
        w, torch.rand(N, dtype=torch.double, generator=g) * 0.01 + 1e-3, zps, 0
    )
    x = torch.randint(0, 256, (M, K), dtype=torch.uint8, generator=g)
    xq = torch._make_per_tensor_quantized_tensor(x, 0.05, int(torch.randint(0, 256, (1,), generator=g)))
    return xq, wq, torch.randn(N, generator=g)


@pytest.mark.parametrize("wzp", [0, 3])
def test_linear_tiles_bit_identical_to_scalar(isa, wzp):
    g = torch.Generator().manual_seed(11 + wzp)
    for K in DEPTHS:
        for N in COLS:
            for M in ROWS:
                xq, wq, bias = _operands(M, K, N, g, wzp)
                p = q.linear_prepack(wq, bias)
                xf = xq.dequantize() + 0.01 * torch.randn(M, K, generator=g)
                y, yr, yd = q.linear(xq, p, 0.5, 100), q.linear_relu(xq, p, 0.5, 100), q.linear_dynamic(xf, p)
                with torch_qplugin.kernel_isa("scalar"):
                    y0, yr0, yd0 = q.linear(xq, p, 0.5, 100), q.linear_relu(xq, p, 0.5, 100), q.linear_dynamic(xf, p)
                what = f"{isa} M={M} K={K} N={N} wzp={wzp}"
                assert torch.equal(y.int_repr(), y0.int_repr()), what
                assert torch.equal(yr.int_repr(), yr0.int_repr()), what
                assert torch.equal(yd, yd0), what


def test_int32_output_bit_identical_to_scalar(isa):
    """Transposed conv runs the GEMM with int32 output (then col2im): every shape class."""
    g = torch.Generator().manual_seed(5)
    for C, OC, W in [(3, 5, 7), (16, 17, 2), (33, 48, 9), (64, 40, 1)]:
        w = torch.randint(-128, 128, (C, OC, 3), dtype=torch.int8, generator=g)
        wq = torch._make_per_channel_quantized_tensor(
            w,
            torch.rand(OC, dtype=torch.double, generator=g) * 0.01 + 1e-3,
            torch.randint(-2, 3, (OC,), generator=g),
            1,
        )
        x = torch.randint(0, 256, (2, C, W), dtype=torch.uint8, generator=g)
        xq = torch._make_per_tensor_quantized_tensor(x, 0.05, 120)
        p = q.conv_transpose1d_prepack(wq, None, [2], [1], [1], [1], 1)
        y = q.conv_transpose1d(xq, p, 0.3, 90)
        with torch_qplugin.kernel_isa("scalar"):
            y0 = q.conv_transpose1d(xq, p, 0.3, 90)
        assert torch.equal(y.int_repr(), y0.int_repr()), f"{isa} C={C} OC={OC} W={W}"


def test_avxvnni_named_and_refused_where_absent():
    """avxvnni is a path of its own: forced where the CPU has AVX-VNNI, refused with the CPU's
    best path named where it does not, and named by `python -m torch_qplugin`."""
    feats = set(torch.ops.qplugin._cpu_features())
    assert ("avxvnni" in _isa.supported_isas()) == ("avxvnni" in feats and "avx2" in feats)
    if "avxvnni" in _isa.supported_isas():
        with torch_qplugin.kernel_isa("avxvnni"):
            assert torch_qplugin.active_isa() == "avxvnni"
    else:
        with pytest.raises(RuntimeError, match=r"qplugin::_set_isa: isa 'avxvnni' is not supported by this CPU"):
            torch_qplugin.set_isa("avxvnni")
    assert "avxvnni" in __import__("torch_qplugin._build_info", fromlist=["x"]).COMPILED_ISAS


def test_avxvnni_code_is_vex_only():
    """The avxvnni kernels run on CPUs without AVX-512: no EVEX instruction (zmm, mask or
    ymm16-31 registers, EVEX-only forms) in any function of that namespace, and their
    vpdpbusd is the VEX form."""
    objdump = shutil.which("objdump")
    if objdump is None:
        pytest.skip("objdump (binutils) is not installed")
    lib = torch_qplugin._ops.plain_library_path()  # the kernels are the plain library's
    out = subprocess.run(
        [objdump, "-d", "--no-show-raw-insn", "-C", lib], capture_output=True, text=True, check=True
    ).stdout
    funcs, cur, body = {}, None, []
    for line in out.splitlines():
        if line.endswith(">:"):
            if cur is not None:
                funcs[cur] = body
            cur, body = line, []
        elif cur is not None:
            body.append(line)
    if cur is not None:
        funcs[cur] = body
    vnni = {name: body for name, body in funcs.items() if "qplugin::kernels::avxvnni::" in name}
    assert any("qgemm_block" in name for name in vnni), "no avxvnni::qgemm_block in the library"
    dots = 0
    import re

    evex = re.compile(r"%zmm|%k[0-7]|%[xy]mm(1[6-9]|2[0-9]|3[01])\b|\{1to")
    for name, body in vnni.items():
        for ins in body:
            assert not evex.search(ins), f"EVEX instruction in {name}: {ins.strip()}"
            if "vpdpbusd" in ins:
                dots += 1
                assert "{vex}" in ins, f"vpdpbusd not VEX-encoded in {name}: {ins.strip()}"
    assert dots > 0, "no vpdpbusd in the avxvnni kernels"


@pytest.mark.parametrize("stride, pad, k", [(1, 1, 3), (2, 1, 3), (1, 0, 3), (1, 2, 5), (2, 1, 4)])
def test_depthwise_bit_identical_to_scalar(isa, stride, pad, k):
    """Depthwise conv: the VNNI kernels (AVX-512: 64-channel zmm blocks + a ymm tail; AVX-VNNI:
    32-channel ymm blocks, partial blocks through a buffer) and the generic loops, against the
    scalar reference, over channel counts around the block widths."""
    g = torch.Generator().manual_seed(7 + k)
    for C in (8, 31, 32, 33, 64, 65, 96, 100, 144):
        w = torch.randint(-128, 128, (C, 1, k, k), dtype=torch.int8, generator=g)
        wq = torch._make_per_channel_quantized_tensor(
            w, torch.rand(C, dtype=torch.double, generator=g) * 0.01 + 1e-3, torch.zeros(C, dtype=torch.long), 0
        )
        x = torch.randint(0, 256, (2, C, 9, 11), dtype=torch.uint8, generator=g)
        xq = torch._make_per_tensor_quantized_tensor(x, 0.05, 117).contiguous(memory_format=torch.channels_last)
        p = q.conv2d_prepack(wq, torch.randn(C, generator=g), [stride] * 2, [pad] * 2, [1, 1], C)
        y, yr = q.conv2d(xq, p, 0.4, 100), q.conv2d_relu(xq, p, 0.4, 100)
        with torch_qplugin.kernel_isa("scalar"):
            y0, yr0 = q.conv2d(xq, p, 0.4, 100), q.conv2d_relu(xq, p, 0.4, 100)
        assert torch.equal(y.int_repr(), y0.int_repr()), f"{isa} C={C}"
        assert torch.equal(yr.int_repr(), yr0.int_repr()), f"{isa} C={C}"
