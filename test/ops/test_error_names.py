"""Plain ops report errors under their own names and argument names (`qplugin::plain_add: b_zero_point
...`, never the quantized twin's `qplugin::add: qb zero_point ...`): the shared entry points of the
elementwise family take the calling op's names (cpu/elementwise.h Names). Complex Scalars where a
real number is wanted, and the embedding ops' wrong bit width, are named too."""

import pytest
import torch

import torch_qplugin  # noqa: F401

q = torch.ops.qplugin


def _qu8(shape=(2, 3)):
    return torch._make_per_tensor_quantized_tensor(torch.randint(0, 255, shape, dtype=torch.uint8), 0.1, 3)


@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda u8, i8: q.plain_add(u8, 0.1, 0, i8, 0.1, 0, 0.1, 0),
            r"qplugin::plain_add: b should have the dtype of a",
        ),
        (
            lambda u8, i8: q.plain_mul_relu(u8, 0.1, 0, u8, 0.1, 300, 0.1, 0),
            r"qplugin::plain_mul_relu: b_zero_point should be in \[0, 255\]",
        ),
        (
            lambda u8, i8: q.plain_add_relu(u8, -1.0, 0, u8, 0.1, 0, 0.1, 0),
            r"qplugin::plain_add_relu: a_scale should be a positive finite number",
        ),
        (
            # a float argument in the schema: torch's argument check names the op and the argument
            lambda u8, i8: q.plain_add_scalar(u8, 0.1, 0, 1j),
            r"qplugin::plain_add_scalar\(\) Expected a value of type 'float' for argument 'b' but instead found "
            r"type 'complex'",
        ),
        (
            lambda u8, i8: q.plain_add_scalar(u8, 0.1, 0, float("inf")),
            r"qplugin::plain_add_scalar: b should be a finite",
        ),
        (
            lambda u8, i8: q.plain_matmul(u8, 0.1, 0, u8, 0.1, 0, 0.1, 0),
            r"qplugin::plain_matmul: a's last dim \(3\) should equal b's second-to-last dim",
        ),
        (
            lambda u8, i8: q.plain_cat([u8, i8], [0.1, 0.1], [0, 0], 0, 0.1, 0),
            r"qplugin::plain_cat: xs\[1\] should have the dtype of xs\[0\]",
        ),
        (
            lambda u8, i8: q.plain_cat([u8, u8], [0.1, 0.0], [0, 0], 0, 0.1, 0),
            r"qplugin::plain_cat: scales\[1\] should be a positive finite number, got 0",
        ),
        (lambda u8, i8: q.plain_eq(u8, 0.1, 0, u8, 0.1, 999), r"qplugin::plain_eq: other_zero_point should be in"),
        (lambda u8, i8: q.plain_lt.Scalar(u8, 0.0, 0, 1.0), r"qplugin::plain_lt: self_scale should be a positive"),
        (
            lambda u8, i8: q.plain_threshold(u8, 0.1, 0, 0.5, float("nan")),
            r"qplugin::plain_threshold: value should be a finite number, got nan",
        ),
    ],
)
def test_plain_ops_report_under_their_own_names(call, message):
    u8, i8 = torch.zeros(2, 3, dtype=torch.uint8), torch.zeros(2, 3, dtype=torch.int8)
    with pytest.raises((RuntimeError, ValueError), match=message):
        call(u8, i8)


def test_quantized_ops_keep_their_names():
    with pytest.raises(RuntimeError, match=r"qplugin::add: qb should have the dtype of qa"):
        q.add(_qu8(), torch._make_per_tensor_quantized_tensor(torch.zeros(2, 3, dtype=torch.int8), 0.1, 0), 0.1, 0)
    with pytest.raises(RuntimeError, match=r"qplugin::threshold: value should be a real number"):
        q.threshold(_qu8(), 0.5, 1j)


def test_embedding_wrong_bit_width_names_the_other_op():
    w8 = q.embedding_bag_prepack(
        torch._make_per_channel_quantized_tensor(
            torch.randint(0, 255, (5, 4), dtype=torch.uint8), torch.full((5,), 0.1), torch.zeros(5), 0
        )
    )
    with pytest.raises(
        ValueError,
        match=r"qplugin::embedding_bag_4bit: weight should hold 4-bit rows \(quint4x2\), "
        r"got 8-bit rows \(use qplugin::embedding_bag_byte\)",
    ):
        q.embedding_bag_4bit(w8, torch.tensor([0, 1]), torch.tensor([0]), False, 0, False, None, None, False)
    with pytest.raises(ValueError, match=r"use qplugin::embedding_byte\)"):
        q.embedding_4bit(w8, torch.tensor([0, 1]), False)
