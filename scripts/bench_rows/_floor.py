"""Floor kernels (_floor.cpp) for the running kernel path, built on first use.

The source is compiled once per ISA with the flags of CMakeLists.txt's avx2 / avx512 objects (never
-march=native; -ffp-contract=off as the kernels: a floor whose float steps the compiler fused into
FMAs did less work than any exact kernel) into a folder of torch's extension cache per ISA and torch
version (~30 s the first time); `floor()` returns the module of torch_qplugin.active_isa(), so
under QPLUGIN_ISA=avx2 the floors run at AVX2 width. None on the scalar path (no vector floor to
show).
"""

import functools
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_FLAGS = {
    "avx2": ["-mavx2", "-mfma", "-mf16c", "-mbmi2"],
    "avx512": [
        "-mavx512f",
        "-mavx512bw",
        "-mavx512vl",
        "-mavx512dq",
        "-mavx512vnni",
        "-mavx2",
        "-mfma",
        "-mf16c",
        "-mbmi2",
        "-mprefer-vector-width=512",
    ],
}


def _build_dir(isa):
    """The floor module's build folder: one per ISA and torch version (a module built against
    another torch must not load), in torch's extension cache."""
    import torch
    from torch.utils.cpp_extension import get_default_build_root

    root = Path(os.environ.get("TORCH_EXTENSIONS_DIR") or get_default_build_root())
    d = root / f"qplugin_floor_{isa}_torch{torch.__version__.replace('+', '_')}"
    d.mkdir(parents=True, exist_ok=True)
    # A build killed midway leaves torch's lock file behind, and load() would wait on it forever
    # (a build takes well under a minute).
    lock = d / "lock"
    if lock.exists() and time.time() - lock.stat().st_mtime > 600:
        print(f"bench floors: removing {lock}, left by a build that did not finish", file=sys.stderr)
        lock.unlink(missing_ok=True)
    return str(d)


@functools.lru_cache(None)
def floor():
    import torch_qplugin
    from torch.utils.cpp_extension import load

    isa = torch_qplugin.active_isa()
    if isa not in _FLAGS:
        return None
    return load(
        name=f"qplugin_floor_{isa}",
        sources=[str(Path(__file__).with_name("_floor.cpp"))],
        extra_cflags=["-O3", "-ffp-contract=off", f"-DQPLUGIN_ISA_{isa.upper()}"] + _FLAGS[isa],
        extra_include_paths=[str(ROOT / "aten_ext" / "csrc")],
        build_directory=_build_dir(isa),
        verbose=False,
    )


def _u8(n, seed=0):
    import torch

    return torch.randint(0, 256, (n,), dtype=torch.uint8, generator=torch.Generator().manual_seed(seed))


class Floors:
    """Callables timing one floor kernel on preallocated buffers of a row's size (Case.floor)."""

    def __init__(self, m):
        self.m = m

    def chain(self, n, ops):
        x, y = _u8(n), _u8(n)
        return lambda: self.m.chain(x, y, ops)

    def affine2(self, n, is_mul):
        x, z, y = _u8(n), _u8(n, 1), _u8(n)
        return lambda: self.m.affine2(x, z, y, is_mul)

    def fixed16(self, n):
        x, y = _u8(n), _u8(n)
        return lambda: self.m.fixed16(x, y, 200, 3)

    def taps(self, n_out, K, stride):
        x, y = _u8(n_out + (K - 1) * stride), _u8(n_out)
        return lambda: self.m.taps(x, y, K, stride, 1.0 / K)

    def maxtaps(self, n_out, K, stride):
        x, y = _u8(n_out + (K - 1) * stride), _u8(n_out)
        return lambda: self.m.maxtaps(x, y, K, stride)

    def bilinear(self, n_out, stride):
        x, y = _u8(n_out + 3 * stride), _u8(n_out)
        return lambda: self.m.bilinear(x, y, stride)

    def lut(self, n):
        x, y, t = _u8(n), _u8(n), _u8(256, 2)
        return lambda: self.m.lut(x, y, t)

    def quant(self, n, inner, per_row):
        import torch

        x = torch.randn(n)
        inv = torch.rand(n // inner if per_row else inner) * 10 + 1
        y = _u8(n)
        return lambda: self.m.quant(x, y, inv, inner, per_row)

    def widen(self, n):
        import torch

        x, y = _u8(n), torch.empty(n)
        return lambda: self.m.widen(x, y)

    def widen_d(self, n):
        import torch

        x, y = _u8(n), torch.empty(n)
        return lambda: self.m.widen_d(x, y, 0.0123)

    def seq(self, *fns):
        """Several floors one after the other (a statistics read, then the map)."""
        return lambda: [f() for f in fns]

    def stats_then_chain(self, rows, cols, ops):
        """The norms with statistics: each row's integer sum and sum of squares, then the rule's
        `ops` steps."""
        return self.seq(self.sumsq(rows, cols), self.chain(rows * cols, ops))

    def sumsq(self, rows, cols):
        import torch

        x, out = _u8(rows * cols).view(rows, cols), torch.empty(rows, 2, dtype=torch.int64)
        return lambda: self.m.sumsq(x, out)

    def rowmax(self, rows, cols):
        x, y = _u8(rows * cols).view(rows, cols), _u8(rows)
        return lambda: self.m.rowmax(x, y)

    def write(self, nbytes):
        y = _u8(nbytes)
        return lambda: self.m.write(y)

    def bcast_copy(self, nbytes):
        src, y = _u8(4096), _u8(nbytes)
        return lambda: self.m.bcast_copy(src, y)

    def copy(self, nbytes):
        """A plain copy of the bytes (torch's copy_, a memcpy)."""
        x, y = _u8(nbytes), _u8(nbytes)
        return lambda: y.copy_(x)

    def bag(self, rows, D, bits, bags, per):
        import torch

        g = torch.Generator().manual_seed(4)
        table = torch.randint(0, 256, (rows, D * bits // 8 + 8), dtype=torch.uint8, generator=g)
        table[:, D * bits // 8 :] = torch.tensor([0.01, 0.5]).view(torch.uint8)
        idx = torch.randint(0, rows, (bags * per,), generator=g)
        out = torch.empty(bags, D)
        return lambda: self.m.bag(table, idx, out, per, bits)


def floors():
    """Floors for the running kernel path, or None on the scalar path."""
    m = floor()
    return Floors(m) if m is not None else None


def floor_of(kind, *args):
    """Case.floor for a row: Floors().<kind>(*args), or None on the scalar path."""
    f = floors()
    return getattr(f, kind)(*args) if f is not None else None
