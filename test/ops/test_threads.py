"""Packed params under concurrent use: two threads making the first call on a fresh
packed-params object get the same bytes as one thread; switching the kernel path (_set_isa) while
convs / linears run on another thread never corrupts memory and never changes a result (all paths
are bit-identical). The stress test runs in a child process so a crash fails the test instead of
killing the run."""

import os
import subprocess
import sys
import textwrap
import threading

import pytest
import torch

import torch_qplugin  # noqa: F401

q = torch.ops.qplugin


def _qx(shape, g, scale=0.05, zp=3):
    return torch._make_per_tensor_quantized_tensor(
        torch.randint(0, 256, shape, dtype=torch.uint8, generator=g), scale, zp
    )


def _qw(shape, g):
    data = torch.randint(-128, 128, shape, dtype=torch.int8, generator=g)
    scales = torch.rand(shape[0], dtype=torch.double, generator=g) * 0.02 + 0.001
    return torch._make_per_channel_quantized_tensor(data, scales, torch.zeros(shape[0], dtype=torch.long), 0)


def _families(g):
    """(name, make_packed(), call(packed)) for every packed-params family: a fresh packed object
    per make_packed() call, inputs fixed."""
    fams = []
    # conv: im2col (C = 5), indirect (C = 8, ICg % 4 == 0), stem rows (C = 3), depthwise
    conv_cases = [
        ("conv1d", 1, (2, 5, 17), (6, 5, 3)),
        ("conv2d", 2, (1, 5, 9, 11), (7, 5, 3, 3)),
        ("conv2d_c8", 2, (1, 8, 9, 9), (16, 8, 3, 3)),
        ("conv2d_stem", 2, (1, 3, 12, 12), (8, 3, 3, 3)),
        ("conv3d", 3, (1, 4, 5, 6, 7), (6, 4, 3, 3, 3)),
    ]
    for name, dims, xs, ws in conv_cases:
        qx, qw, b = _qx(xs, g), _qw(ws, g), torch.randn(ws[0], generator=g)
        prep = getattr(q, f"conv{dims}d_prepack")
        op = getattr(q, f"conv{dims}d")
        fams.append(
            (
                name,
                lambda prep=prep, qw=qw, b=b, dims=dims: prep(qw, b, [1] * dims, [1] * dims, [1] * dims, 1),
                lambda pk, op=op, qx=qx: op(qx, pk, 0.3, 100).int_repr(),
            )
        )
    qx, qw = _qx((1, 6, 8, 8), g), _qw((6, 1, 3, 3), g)
    fams.append(
        (
            "conv2d_depthwise",
            lambda qw=qw: q.conv2d_prepack(qw, None, [1, 1], [1, 1], [1, 1], 6),
            lambda pk, qx=qx: q.conv2d(qx, pk, 0.3, 100).int_repr(),
        )
    )
    qx, qa, qw = _qx((1, 5, 8, 8), g), _qx((1, 6, 8, 8), g, 0.1, 7), _qw((6, 5, 3, 3), g)
    fams.append(
        (
            "conv2d_add",
            lambda qw=qw: q.conv2d_prepack(qw, None, [1, 1], [1, 1], [1, 1], 1),
            lambda pk, qx=qx, qa=qa: q.conv2d_add(qx, qa, pk, 0.3, 100).int_repr(),
        )
    )
    qx, qw, b = _qx((9, 40), g), _qw((33, 40), g), torch.randn(33, generator=g)
    fams.append(
        ("linear", lambda qw=qw, b=b: q.linear_prepack(qw, b), lambda pk, qx=qx: q.linear(qx, pk, 0.2, 120).int_repr())
    )
    x = torch.randn(9, 40, generator=g)
    fams.append(
        ("linear_dynamic", lambda qw=qw, b=b: q.linear_prepack(qw, b), lambda pk, x=x: q.linear_dynamic(x, pk, False))
    )
    xs, h0, c0 = torch.randn(3, 2, 40, generator=g), torch.randn(2, 8, generator=g), torch.randn(2, 8, generator=g)
    wih, whh = _qw((32, 40), g), _qw((32, 8), g)
    fams.append(
        (
            "rnn_layer_dynamic",
            lambda: (q.linear_prepack(wih), q.linear_prepack(whh)),
            lambda pk: torch.cat([t.flatten() for t in q._rnn_layer_dynamic(xs, h0, c0, pk[0], pk[1], 4, False)]),
        )
    )
    wf, bf = torch.randn(33, 40, generator=g), torch.randn(33, generator=g)
    fams.append(
        ("linear_dynamic_fp16", lambda: q.linear_prepack_fp16(wf, bf), lambda pk, x=x: q.linear_dynamic_fp16(x, pk))
    )
    wih16, whh16 = torch.randn(24, 40, generator=g), torch.randn(24, 8, generator=g)
    fams.append(
        (
            "rnn_layer_dynamic_fp16",
            lambda: (q.linear_prepack_fp16(wih16), q.linear_prepack_fp16(whh16)),
            lambda pk: torch.cat([t.flatten() for t in q._rnn_layer_dynamic(xs, h0, c0, pk[0], pk[1], 3, True)]),
        )
    )
    return fams


FAMILIES = [f[0] for f in _families(torch.Generator().manual_seed(0))]


@pytest.mark.parametrize("family", FAMILIES)
def test_two_threads_first_call(isa, family):
    g = torch.Generator().manual_seed(17)
    name, make, call = next(f for f in _families(g) if f[0] == family)
    expected = call(make())  # one thread, its own packed object
    for _ in range(20):
        pk = make()  # fresh: nothing built yet
        barrier = threading.Barrier(2)
        out, errors = [None, None], []

        def run(i):
            try:
                barrier.wait()
                out[i] = call(pk)
            except Exception as e:  # reported below
                errors.append(e)

        ts = [threading.Thread(target=run, args=(i,)) for i in range(2)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        assert not errors, errors
        assert torch.equal(out[0], expected) and torch.equal(out[1], expected), name


_STRESS = textwrap.dedent("""
    import sys, threading, time
    import torch
    sys.path.insert(0, sys.argv[1])
    import torch_qplugin
    from test_threads import _families
    from torch_qplugin import _isa
    isas = _isa.supported_isas()
    fams = _families(torch.Generator().manual_seed(5))
    expected = {name: call(make()) for name, make, call in fams}
    stop = time.monotonic() + float(sys.argv[2])
    bad = []
    out_lock = threading.Lock()

    def switcher():
        i = 0
        while time.monotonic() < stop:
            _isa.set_isa(isas[i % len(isas)])
            i += 1

    def worker():
        calls = 0
        while time.monotonic() < stop:
            for name, make, call in fams:
                out = call(make())  # fresh packed params: first use races with the switch
                if not torch.equal(out, expected[name]):
                    bad.append(name)
                calls += 1
        with out_lock:  # two workers: print's separate writes could interleave ("calls calls 12")
            print("calls", calls, flush=True)

    ts = [threading.Thread(target=switcher), threading.Thread(target=worker), threading.Thread(target=worker)]
    for t in ts: t.start()
    for t in ts: t.join()
    print("mismatches", sorted(set(bad)))
    sys.exit(1 if bad else 0)
""")


def test_set_isa_while_ops_run():
    here = os.path.dirname(os.path.abspath(__file__))
    r = subprocess.run([sys.executable, "-c", _STRESS, here, "1.5"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, (r.returncode, r.stdout, r.stderr[-2000:])
    assert "mismatches []" in r.stdout
    assert sum(int(l.split()[1]) for l in r.stdout.splitlines() if l.startswith("calls")) > 10
