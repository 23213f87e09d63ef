"""Regenerates the inline-assembly bodies of aten_ext/csrc/kernels/gemm/qgemm_kernel.cpp
(the text between `// BEGIN GENERATED <name>` and `// END GENERATED <name>`).

    python scripts/gen_qgemm_asm.py          # rewrite in place
    python scripts/gen_qgemm_asm.py --check  # exit 1 if the file is out of date

The bodies use GNU as `.if` blocks on the template's immediate operands (%c[mr], %c[nv],
%c[zi]) so one text serves every tile shape; see the comments above each tile_loop.
"""

import re
import sys
from pathlib import Path

PATH = Path(__file__).resolve().parent.parent / "aten_ext/csrc/kernels/gemm/qgemm_kernel.cpp"

BLOAD = ["(%[b])", "(%[b],%[ps],1)", "(%[b],%[ps],2)", "(%[b],%[ps3],1)"]
ALOAD = [
    "(%[a])",
    "(%[a],%[lda],1)",
    "(%[a],%[lda],2)",
    "(%[a3])",
    "(%[a3],%[lda],1)",
    "(%[a3],%[lda],2)",
    "(%[a3],%[lda3],1)",
    "(%[a3],%[lda],4)",
]


# GEMV (batch 1) prefetch distance in bytes per weight stream: the weights come from L3 or
# DRAM (they are read once per call), so the distance must cover the miss latency.
GEMV_PF = 2048
GEMV_PF2 = 8192
# Register-tile prefetch distance per weight stream (a small-M tile, e.g. M = 8, reads every
# weight once per call, from L3).
TILE_PF = 1024
# AVX2 1-3 row tile (one weight stream, read from L3 or DRAM at batch 1): L1 and L2 leads.
AVX2_PF = 1024
AVX2_PF2 = 4096


class Body:
    def __init__(self):
        self.lines = []

    def __call__(self, *xs):
        for x in xs:
            self.lines.append('      "' + x + '\\n"')

    def text(self):
        return "\n".join(self.lines)


def tile512(S, RMAX, VMAX):
    """RMAX rows x VMAX panels; accumulator of (r, v) is zmm(S*r + v)."""
    L = Body()
    for r in range(RMAX):
        for v in range(VMAX):
            n = S * r + v
            L(
                f".if ({r} < %c[mr]) && ({v} < %c[nv])",
                ".if %c[zi]",
                f"vpxord %%zmm{n}, %%zmm{n}, %%zmm{n}",
                ".else",
                f"vmovdqu64 {r * 256 + v * 64}(%[acc]), %%zmm{n}",
                ".endif",
                ".endif",
            )
    L("test %[n], %[n]", "jz 3f", "1:")
    for v in range(VMAX):
        L(f".if {v} < %c[nv]", f"vmovdqu64 {BLOAD[v]}, %%zmm{24 + v}", f"prefetcht0 {TILE_PF}{BLOAD[v]}", ".endif")
    for r in range(RMAX):
        areg = 28 + (r % 2)
        L(f".if {r} < %c[mr]", f"vpbroadcastd {ALOAD[r]}, %%zmm{areg}")
        for v in range(VMAX):
            L(f".if {v} < %c[nv]", f"vpdpbusd %%zmm{24 + v}, %%zmm{areg}, %%zmm{S * r + v}", ".endif")
        L(".endif")
    L("add $4, %[a]", "add $4, %[a3]", "add $64, %[b]", "dec %[n]", "jnz 1b", "3:")
    for r in range(RMAX):
        for v in range(VMAX):
            L(
                f".if ({r} < %c[mr]) && ({v} < %c[nv])",
                f"vmovdqu64 %%zmm{S * r + v}, {r * 256 + v * 64}(%[acc])",
                ".endif",
            )
    return L.text()


def gemv512():
    L = Body()
    for v in range(4):
        L(
            f".if {v} < %c[nv]",
            ".if %c[zi]",
            f"vpxord %%zmm{v}, %%zmm{v}, %%zmm{v}",
            ".else",
            f"vmovdqu64 {v * 64}(%[acc]), %%zmm{v}",
            ".endif",
            f"vpxord %%zmm{4 + v}, %%zmm{4 + v}, %%zmm{4 + v}",
            ".endif",
        )
    L("mov %[n], %[n2]", "shr $1, %[n2]", "jz 2f", "1:")
    for v in range(4):
        L(
            f".if {v} < %c[nv]",
            f"prefetcht0 {GEMV_PF}{BLOAD[v]}",
            f"prefetcht0 {GEMV_PF + 64}{BLOAD[v]}",
            f"prefetcht1 {GEMV_PF2}{BLOAD[v]}",
            f"prefetcht1 {GEMV_PF2 + 64}{BLOAD[v]}",
            f"vmovdqu64 {BLOAD[v]}, %%zmm{24 + v}",
            f"vmovdqu64 64{BLOAD[v]}, %%zmm{8 + v}",
            ".endif",
        )
    L("vpbroadcastd (%[a]), %%zmm28", "vpbroadcastd 4(%[a]), %%zmm29")
    for v in range(4):
        L(
            f".if {v} < %c[nv]",
            f"vpdpbusd %%zmm{24 + v}, %%zmm28, %%zmm{v}",
            f"vpdpbusd %%zmm{8 + v}, %%zmm29, %%zmm{4 + v}",
            ".endif",
        )
    L("add $8, %[a]", "add $128, %[b]", "dec %[n2]", "jnz 1b", "2:", "test $1, %[n]", "jz 3f")
    for v in range(4):
        L(f".if {v} < %c[nv]", f"vmovdqu64 {BLOAD[v]}, %%zmm{24 + v}", ".endif")
    L("vpbroadcastd (%[a]), %%zmm28")
    for v in range(4):
        L(f".if {v} < %c[nv]", f"vpdpbusd %%zmm{24 + v}, %%zmm28, %%zmm{v}", ".endif")
    L("3:")
    for v in range(4):
        L(
            f".if {v} < %c[nv]",
            f"vpaddd %%zmm{4 + v}, %%zmm{v}, %%zmm{v}",
            f"vmovdqu64 %%zmm{v}, {v * 64}(%[acc])",
            ".endif",
        )
    return L.text()


def tile_avx2():
    L = Body()
    for i in range(8):
        L(f".if {i // 4} < %c[mr]", f"vpxor %%xmm{i}, %%xmm{i}, %%xmm{i}", ".endif")
    L(
        "test %[n], %[n]",
        "jz 3f",
        "1:",
        "vpbroadcastd (%[a]), %%xmm9",
        "vpmovzxbw %%xmm9, %%ymm9",
        ".if 1 < %c[mr]",
        "vpbroadcastd (%[a],%[lda],1), %%xmm10",
        "vpmovzxbw %%xmm10, %%ymm10",
        ".endif",
    )
    for j in range(4):
        L(
            f"vpmovsxbw {16 * j}(%[b]), %%ymm8",
            "vpmaddwd %%ymm8, %%ymm9, %%ymm11",
            f"vpaddd %%ymm11, %%ymm{j}, %%ymm{j}",
            ".if 1 < %c[mr]",
            "vpmaddwd %%ymm8, %%ymm10, %%ymm12",
            f"vpaddd %%ymm12, %%ymm{4 + j}, %%ymm{4 + j}",
            ".endif",
        )
    L(
        f"prefetcht0 {AVX2_PF}(%[b])",
        f"prefetcht1 {AVX2_PF2}(%[b])",
        "add $4, %[a]",
        "add $64, %[b]",
        "dec %[n]",
        "jnz 1b",
        "3:",
    )
    for i in range(8):
        L(f".if {i // 4} < %c[mr]", f"vmovdqu %%ymm{i}, {32 * i}(%[raw])", ".endif")
    return L.text()


# AVX-VNNI: VEX-encoded vpdpbusd on ymm0-15 ("{vex}": the assembler would pick the EVEX
# AVX512-VL form otherwise, which an AVX-VNNI-only CPU cannot run).
VNNI = "%{vex%} vpdpbusd"
VNNI_PF = 2048  # the tall tile's panel is read from L3 by the first row tile of a chunk, from L1 by the rest
AVNNI = ["(%[a])", "(%[a],%[lda],1)", "(%[a],%[lda],2)", "(%[a3])", "(%[a3],%[lda],1)", "(%[a3],%[lda],2)"]


def tile_vnni_tall():
    """Up to 6 rows x one panel (16 columns): accumulators ymm(2r), ymm(2r+1); the panel's
    quad in ymm12-13; the broadcast activation quad in ymm14 / ymm15 (alternating rows).
    For each of %[nt] taps the rows start at %[base] + tap_off[t] (%[tp] walks tap_off), %[nq]
    quads each; the weight runs on through the taps (dense rows: one tap at offset 0)."""
    L = Body()
    for r in range(6):
        L(
            f".if {r} < %c[mr]",
            ".if %c[zi]",
            f"vpxor %%xmm{2 * r}, %%xmm{2 * r}, %%xmm{2 * r}",
            f"vpxor %%xmm{2 * r + 1}, %%xmm{2 * r + 1}, %%xmm{2 * r + 1}",
            ".else",
            f"vmovdqu {64 * r}(%[acc]), %%ymm{2 * r}",
            f"vmovdqu {64 * r + 32}(%[acc]), %%ymm{2 * r + 1}",
            ".endif",
            ".endif",
        )
    L(
        "test %[nt], %[nt]",
        "jz 3f",
        "4:",
        "mov (%[tp]), %[a]",
        "add %[base], %[a]",
        "lea (%[a],%[lda],2), %[a3]",
        "add %[lda], %[a3]",
        "mov %[nq], %[n]",
    )
    L(
        "test %[n], %[n]",
        "jz 5f",
        ".p2align 5",
        "1:",
        "vmovdqu (%[b]), %%ymm12",
        "vmovdqu 32(%[b]), %%ymm13",
        f"prefetcht0 {VNNI_PF}(%[b])",
    )
    for r in range(6):
        a = 14 + r % 2
        L(
            f".if {r} < %c[mr]",
            f"vpbroadcastd {AVNNI[r]}, %%ymm{a}",
            f"{VNNI} %%ymm12, %%ymm{a}, %%ymm{2 * r}",
            f"{VNNI} %%ymm13, %%ymm{a}, %%ymm{2 * r + 1}",
            ".endif",
        )
    L("add $4, %[a]", "add $4, %[a3]", "add $64, %[b]", "dec %[n]", "jnz 1b")
    L("5:", "add $8, %[tp]", "dec %[nt]", "jnz 4b", "3:")
    for r in range(6):
        L(
            f".if {r} < %c[mr]",
            f"vmovdqu %%ymm{2 * r}, {64 * r}(%[acc])",
            f"vmovdqu %%ymm{2 * r + 1}, {64 * r + 32}(%[acc])",
            ".endif",
        )
    return L.text()


def tile_vnni_wide():
    """1-2 rows x up to 3 panels (few rows: the weights stream from L2 / L3, so more
    independent accumulators per activation): accumulator of (row r, panel v, half h) is
    ymm(6r + 2v + h), row r's activation quad in ymm(14 + r). One row reads the weights as
    vpdpbusd's memory operand; two rows load each half once into ymm12-13."""
    L = Body()
    for r in range(2):
        for v in range(3):
            for h in range(2):
                n = 6 * r + 2 * v + h
                L(
                    f".if ({r} < %c[mr]) && ({v} < %c[nv])",
                    ".if %c[zi]",
                    f"vpxor %%xmm{n}, %%xmm{n}, %%xmm{n}",
                    ".else",
                    f"vmovdqu {192 * r + 64 * v + 32 * h}(%[acc]), %%ymm{n}",
                    ".endif",
                    ".endif",
                )
    L(
        "test %[n], %[n]",
        "jz 3f",
        ".p2align 5",
        "1:",
        "vpbroadcastd (%[a]), %%ymm14",
        ".if 1 < %c[mr]",
        "vpbroadcastd (%[a],%[lda],1), %%ymm15",
        ".endif",
    )
    for v in range(3):
        L(f".if {v} < %c[nv]", f"prefetcht0 {AVX2_PF}{BLOAD[v]}", f"prefetcht1 {AVX2_PF2}{BLOAD[v]}", ".if %c[mr] == 1")
        for h in range(2):
            L(f"{VNNI} {32 * h if h else ''}{BLOAD[v]}, %%ymm14, %%ymm{2 * v + h}")
        L(".else", f"vmovdqu {BLOAD[v]}, %%ymm12", f"vmovdqu 32{BLOAD[v]}, %%ymm13")
        for r in range(2):
            for h in range(2):
                L(f"{VNNI} %%ymm{12 + h}, %%ymm{14 + r}, %%ymm{6 * r + 2 * v + h}")
        L(".endif", ".endif")
    L("add $4, %[a]", "add $64, %[b]", "dec %[n]", "jnz 1b", "3:")
    for r in range(2):
        for v in range(3):
            for h in range(2):
                n = 6 * r + 2 * v + h
                L(
                    f".if ({r} < %c[mr]) && ({v} < %c[nv])",
                    f"vmovdqu %%ymm{n}, {192 * r + 64 * v + 32 * h}(%[acc])",
                    ".endif",
                )
    return L.text()


BODIES = {
    "avx512_gemv": gemv512,
    "avx512_tile_s4": lambda: tile512(4, 6, 4),
    "avx512_tile_s3": lambda: tile512(3, 8, 3),
    "avx2_tile": tile_avx2,
    "avxvnni_tall_taps": tile_vnni_tall,
    "avxvnni_wide": tile_vnni_wide,
}


def render(src):
    for name, fn in BODIES.items():
        pat = re.compile(rf"(// BEGIN GENERATED {name} [^\n]*\n).*?(\n\s*// END GENERATED {name})", re.S)
        assert pat.search(src), name
        src = pat.sub(lambda m: m.group(1) + fn() + m.group(2), src)
    return src


def main():
    src = PATH.read_text()
    new = render(src)
    if "--check" in sys.argv:
        sys.exit(0 if new == src else 1)
    PATH.write_text(new)


if __name__ == "__main__":
    main()
