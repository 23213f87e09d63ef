"""The wrong kind of tensor gets an error naming the op, the argument and both kinds: a quantized
tensor passed to an op on plain tensors (every plain_* op, the fused-row embedding ops), a plain
tensor passed to an op on quantized ones (torch_qplugin/_wrong_kind.py, and the C++ CPU kernels
of the quantized ops that have them)."""

import pytest
import torch

import torch_qplugin  # noqa: F401

q = torch.ops.qplugin


def _qu8(shape=(2, 3)):
    return torch._make_per_tensor_quantized_tensor(torch.randint(0, 255, shape, dtype=torch.uint8), 0.1, 3)


def _ops():
    return sorted(n for n in torch._C._dispatch_get_all_op_names() if n.startswith("qplugin::"))


def test_every_op_has_a_kernel_for_both_kinds():
    has = torch._C._dispatch_has_kernel_for_dispatch_key
    missing = [
        n
        for n in _ops()
        if not any(has(n, k) for k in ("CompositeImplicitAutograd", "CompositeExplicitAutograd"))
        and has(n, "CPU") != has(n, "QuantizedCPU")
    ]
    assert not missing, missing


@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda: q.plain_add(_qu8(), 0.1, 3, torch.zeros(2, 3, dtype=torch.uint8), 0.1, 3, 0.1, 0),
            r"qplugin::plain_add: a should be a plain uint8 / int8 / int32 / float tensor \(CPU\), got a quantized "
            r"tensor \(.*QuantizedCPU\) of dtype torch.quint8",
        ),
        (
            lambda: q.plain_add(torch.zeros(2, 3, dtype=torch.uint8), 0.1, 3, _qu8(), 0.1, 3, 0.1, 0),
            r"qplugin::plain_add: b should be a plain .* got a quantized tensor",
        ),
        # a list argument: the dispatcher picks the CPU kernel, whose dtype check names the quantized dtype
        (
            lambda: q.plain_cat([torch.zeros(2, dtype=torch.uint8), _qu8((2,))], [0.1, 0.1], [0, 0], 0, 0.1, 0),
            r"qplugin::plain_cat: xs\[1\] should be a uint8, int8 or int32 tensor, got dtype QUInt8",
        ),
        (lambda: q.plain_relu(_qu8(), 0.1, 3), r"qplugin::plain_relu: x should be a plain"),
        (
            lambda: q.embedding_bag_byte_prepack(_qu8()),
            r"qplugin::embedding_bag_byte_prepack: weight should be a plain",
        ),
        (
            lambda: q.embedding_bag_4bit_prepack(_qu8()),
            r"qplugin::embedding_bag_4bit_prepack: weight should be a plain",
        ),
        (
            lambda: q.plain_linear_prepack(
                torch._make_per_tensor_quantized_tensor(torch.zeros(2, 2, dtype=torch.int8), 0.1, 0),
                torch.ones(1, dtype=torch.double),
                torch.zeros(1, dtype=torch.long),
            ),
            r"qplugin::plain_linear_prepack: w should be a plain .* of dtype torch.qint8",
        ),
    ],
)
def test_quantized_tensor_to_a_plain_op(call, message):
    with pytest.raises((TypeError, RuntimeError), match=message):
        call()


def test_plain_tensor_to_a_quantized_only_op():
    has = torch._C._dispatch_has_kernel_for_dispatch_key
    # ops whose CPU kernel is the registered refusal: the message names op, argument and both kinds
    for name in ("qplugin::linear", "qplugin::int_repr", "qplugin::equal"):
        assert has(name, "CPU"), name
    with pytest.raises((TypeError, RuntimeError), match=r"qplugin::int_repr: self should be a quantized tensor"):
        q.int_repr(torch.zeros(3, dtype=torch.uint8))


def test_registering_again_keeps_the_kernels():
    from torch_qplugin import _wrong_kind

    _wrong_kind.register()
    with pytest.raises(_wrong_kind.WrongKindError, match=r"qplugin::plain_relu: x should be a plain"):
        q.plain_relu(_qu8(), 0.1, 3)
