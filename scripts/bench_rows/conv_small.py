"""MobileNetV2's 1x1 convolutions (batch 1, 224 x 224 input): small K (16-96 input channels) on
small maps (112 x 112 down to 7 x 7), where a GEMM tile is a few quads deep and per-tile / per-call
costs show (docs/design/gemm.md). Same inputs and baselines as the conv
family. Rate: GOPS = 2 * MACs / time."""

from bench_rows._peak import with_peak_note
from bench_rows.conv import NOTE as _CONV_NOTE
from bench_rows.conv import _conv_case

FAMILY = "conv_small"
ORDER = 62
NOTE = _CONV_NOTE


def cases():
    global NOTE
    NOTE = with_peak_note(NOTE)
    rows = [
        (32, 16, 112),
        (16, 96, 112),
        (96, 24, 56),
        (24, 144, 56),
        (144, 24, 56),
        (32, 192, 28),
        (64, 384, 14),
        (96, 576, 14),
        (576, 96, 14),
        (160, 960, 7),
        (960, 160, 7),
        (320, 1280, 7),
    ]
    return [_conv_case(f"conv2d 1x1 {c}->{oc}", f"[1,{c},{s},{s}]", (1, c, s, s), oc, 1, 1, 0, 1) for c, oc, s in rows]
