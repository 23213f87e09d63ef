"""Benchmark row providers for scripts/bench.py ops: one module per op family."""

from dataclasses import dataclass
from typing import Callable, Optional


@dataclass
class Case:
    op: str  # op name as printed
    shape: str  # shape description
    ours: Callable[[], object]  # qplugin call
    torch: Optional[Callable[[], object]]  # torch's own quantized kernel (same work)
    fp32: Optional[Callable[[], object]]  # an fp32 op of the same size (for scale)
    work: float = 0.0  # bytes moved (unit GB/s) or ops (unit GOPS) per call
    unit: str = "GB/s"
    # The least work an exact kernel of this row must do, at the running kernel path's width
    # (bench_rows._floor): its time is a lower bound for `ours`.
    floor: Optional[Callable[[], object]] = None
