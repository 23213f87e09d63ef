"""The machine's int8 peak for the GOPS rows (linear, conv): measured once per run with
scripts/peak_int8.py, and a GOPS value that prints with its fraction of that peak."""

import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # scripts/
import peak_int8  # noqa: E402  (scripts/peak_int8.py)

PEAK = {}  # filled by cases(): the machine's int8 peak, measured in the same run


def with_peak_note(note):
    """`note` with the measured peak appended (replacing an earlier one): the rows' NOTE."""
    peak = measure_peak()
    return note.split(" Peak:")[0] + (
        f" Peak: {peak['gops']:.1f} GOPS per core ({peak['name']}, "
        "scripts/peak_int8.py, measured in this run); % of peak is against "
        "threads x that."
    )


def measure_peak():
    """One core's u8*s8 peak (GOPS): the best of the instruction mixes this CPU supports
    (scripts/peak_int8.py: vpdpbusd zmm / ymm with VNNI, else vpmaddubsw + vpmaddwd), and the
    running path's own ceiling where it is narrower (avx2: our int16 tile; avxvnni: VEX
    vpdpbusd ymm)."""
    if not PEAK:
        got = {k: peak_int8.peak_gops(k) for k in ("vnni512", "vnni256", "maddubs")}
        got = {k: v for k, v in got.items() if v}
        best = max(got, key=got.get)
        PEAK.update(name=best, gops=got[best])
        # Our AVX2 path runs exact int16 tiles (vpmaddwd): its own ceiling is the i16tile row;
        # the avxvnni path's is VEX vpdpbusd ymm (an AVX-VNNI CPU without AVX-512 has no more)
        import torch_qplugin

        name = {"avx2": "i16tile", "avxvnni": "avxvnni"}.get(torch_qplugin.active_isa())
        path = peak_int8.peak_gops(name) if name else None
        if path:
            PEAK.update(path_name=name, path_gops=path)
        print(
            f"int8 peak {got[best]:.1f} GOPS per core ({best}; measured: "
            + ", ".join(f"{k} {v:.1f}" for k, v in got.items())
            + (f"; our path's ceiling ({name}) {path:.1f}" if path else "")
            + ")",
            flush=True,
        )
    return PEAK


class Rate(float):
    """GOPS that print with their fraction of the measured peak of the threads in use
    (benchlib.ops formats rates as f"{rate:.1f} {unit}" after torch.set_num_threads)."""

    def __truediv__(self, d):
        return Rate(float(self) / d)

    def __format__(self, spec):
        threads = torch.get_num_threads()
        peak = PEAK["gops"] * threads
        text = f"{format(float(self), spec)} GOPS = {100.0 * float(self) / peak:.1f}% of peak ({threads} x {PEAK['gops']:.0f})"
        if "path_gops" in PEAK:
            text += f", {100.0 * float(self) / (PEAK['path_gops'] * threads):.1f}% of the {PEAK['path_name']} peak"
        return text


class Ops(Rate):
    """2*M*K*N per call; work / time gives a Rate."""
