"""Which kernel path the ops run.

The paths of this build, in ``ISAS`` order: scalar / avx2 / avxvnni / avx512 on x86-64,
scalar / neon / dotprod / i8mm on aarch64. The best path the CPU supports is chosen at
load time; the environment variable ``QPLUGIN_ISA`` caps it (the best path the CPU runs
at or below the one named, in the order of ``ISAS``), and :func:`kernel_isa` forces one
the CPU runs for a block (tests use it to run every path the CPU has).

The dot-product paths (``DOT_ISAS``) change only the int8 GEMM families (linear, conv,
transposed conv, the RNN layers); every other family runs its base path's kernels there.
``avxvnni`` is the AVX2 path with 256-bit VNNI: Intel Core 12th gen and later, Intel's
E-core Xeons, AMD Zen 5. A CPU may have avx512 without avxvnni (AMD Zen 4, Intel Ice
Lake). ``dotprod`` is the NEON path with ARMv8.2 sdot (Neoverse N1 / Graviton2 and
later, Apple M1 and later), ``i8mm`` adds ARMv8.6's mixed-sign sudot (Neoverse V1 / N2,
Graviton3 and later, Apple M2 and later).
"""

import contextlib
from typing import Iterator, List

import torch

from torch_qplugin import _build_info

ISAS = tuple(_build_info.COMPILED_ISAS)
DOT_ISAS = tuple(p for p in ISAS if p in ("avxvnni", "dotprod", "i8mm"))
BASE_ISAS = tuple(p for p in ISAS if p not in DOT_ISAS)


def active_isa() -> str:
    return torch.ops.qplugin._active_isa()


def cpu_isa() -> str:
    return torch.ops.qplugin._cpu_isa()


def supported_isas() -> List[str]:
    """The paths this CPU runs, in ISAS order (scalar first)."""
    return list(torch.ops.qplugin._supported_isas())


def set_isa(isa: str) -> str:
    """Forces kernel path ``isa``; returns the previous one."""
    return torch.ops.qplugin._set_isa(isa)


@contextlib.contextmanager
def kernel_isa(isa: str) -> Iterator[None]:
    previous = set_isa(isa)
    try:
        yield
    finally:
        set_isa(previous)
