"""Fake (meta) kernels of the plain tier's ops (``qplugin::plain_*``), registered when the library loads.

A fake kernel gives the output's shape, dtype and strides without computing it, so FakeTensor,
torch.compile and torch.export can trace the plain ops. Each mirrors the allocation its C++ op
(aten_ext/csrc/cpu/plain.cpp) makes: outputs keep the input's suggested memory format
(channels_last stays channels_last, everything else is contiguous). Output shapes come from torch's
own meta functions of the matching float op where one exists (pooling, upsample, matmul, cat), so
no shape rule is written twice. Argument errors are the real kernels' job; the fakes only need the
metadata of a valid call.
"""

import torch
import torch.nn.functional as F
from torch._prims_common import suggest_memory_format

_LIB = "qplugin::"


def _fake(name):
    return torch.library.register_fake(_LIB + name)


def _like(x, dtype=None, shape=None, memory_format=None):
    return torch.empty(
        x.shape if shape is None else shape,
        dtype=x.dtype if dtype is None else dtype,
        device=x.device,
        memory_format=suggest_memory_format(x) if memory_format is None else memory_format,
    )


def _binary_out(a, b, dtype):
    shape = torch.broadcast_shapes(a.shape, b.shape)
    if a.shape == shape:
        fmt = suggest_memory_format(a)
    elif b.shape == shape:
        fmt = suggest_memory_format(b)
    else:
        fmt = torch.contiguous_format
    return torch.empty(shape, dtype=dtype, device=a.device, memory_format=fmt)


def _pool_out(x, float_out):
    fmt = suggest_memory_format(x) if x.dim() == 4 else torch.contiguous_format
    return torch.empty(float_out.shape, dtype=x.dtype, device=x.device, memory_format=fmt)


def _pool3d_out(x, float_out):
    fmt = suggest_memory_format(x) if x.dim() == 5 else torch.contiguous_format
    return torch.empty(float_out.shape, dtype=x.dtype, device=x.device, memory_format=fmt)


def _float(x):
    return torch.empty(x.shape, dtype=torch.float32, device=x.device)


def _reduced(x, dim, keepdim):
    if x.dim() == 0:
        return []
    d = dim % x.dim()
    shape = list(x.shape)
    if keepdim:
        shape[d] = 1
    else:
        del shape[d]
    return shape


def register():
    @_fake("plain_quantize_per_tensor")
    def _(self, scale, zero_point, dtype):
        return _like(self, dtype=dtype)

    @_fake("plain_quantize_per_channel")
    def _(self, scales, zero_points, axis, dtype):
        return _like(self, dtype=dtype)

    @_fake("plain_dequantize_per_tensor")
    def _(self, scale, zero_point):
        return _like(self, dtype=torch.float32)

    @_fake("plain_dequantize_per_channel")
    def _(self, scales, zero_points, axis):
        return _like(self, dtype=torch.float32)

    for name in ("plain_add", "plain_add_relu", "plain_mul", "plain_mul_relu"):

        @_fake(name)
        def _(a, a_scale, a_zero_point, b, b_scale, b_zero_point, scale, zero_point):
            return _binary_out(a, b, a.dtype)

    @_fake("plain_matmul")
    def _(a, a_scale, a_zero_point, b, b_scale, b_zero_point, scale, zero_point):
        r = torch.matmul(_float(a), _float(b))
        return _like(r, dtype=a.dtype)

    for name in ("plain_add_scalar", "plain_add_scalar_relu", "plain_mul_scalar"):

        @_fake(name)
        def _(a, a_scale, a_zero_point, b):
            return _like(a)

    for name in ("plain_cat", "plain_cat_relu"):

        @_fake(name)
        def _(xs, scales, zero_points, dim, scale, zero_point):
            kept = [x for x in xs if not (x.dim() == 1 and x.numel() == 0)]
            fmts = {suggest_memory_format(x) for x in kept}
            fmt = fmts.pop() if len(fmts) == 1 else torch.contiguous_format
            shape = torch.cat([_float(x) for x in xs], dim).shape
            return torch.empty(shape, dtype=xs[0].dtype, device=xs[0].device, memory_format=fmt)

    for name in ("plain_eq", "plain_ne", "plain_ge", "plain_le", "plain_gt", "plain_lt"):

        @_fake(name)
        def _(self, self_scale, self_zero_point, other, other_scale, other_zero_point):
            return _binary_out(self, other, torch.bool)

        @_fake(name + ".Scalar")
        def _(self, self_scale, self_zero_point, other):
            return _like(self, dtype=torch.bool)

    @_fake("plain_sort")
    def _(self, scale, zero_point, dim=-1, descending=False, *, stable=None):
        return (
            _like(self, memory_format=torch.contiguous_format),
            _like(self, dtype=torch.int64, memory_format=torch.contiguous_format),
        )

    @_fake("plain_argsort")
    def _(self, scale, zero_point, dim=-1, descending=False):
        return _like(self, dtype=torch.int64, memory_format=torch.contiguous_format)

    @_fake("plain_topk")
    def _(self, scale, zero_point, k, dim=-1, largest=True, sorted=True):
        shape = list(self.shape)
        if self.dim() > 0:
            shape[dim % self.dim()] = k
        return (self.new_empty(shape), self.new_empty(shape, dtype=torch.int64))

    for name in ("plain_max", "plain_min"):

        @_fake(name)
        def _(self, scale, zero_point):
            return self.new_empty([])

        @_fake(name + ".dim")
        def _(self, scale, zero_point, dim, keepdim=False):
            shape = _reduced(self, dim, keepdim)
            return self.new_empty(shape), self.new_empty(shape, dtype=torch.int64)

    for name in ("plain_argmax", "plain_argmin"):

        @_fake(name)
        def _(self, scale, zero_point, dim=None, keepdim=False):
            if dim is None:
                shape = [1] * self.dim() if keepdim else []
            else:
                shape = _reduced(self, dim, keepdim)
            return self.new_empty(shape, dtype=torch.int64)

    @_fake("plain_mean")
    def _(self, dim=None, keepdim=False):
        nd = self.dim()
        reduce = set(range(nd)) if not dim else {d % nd for d in dim} if nd else set()
        shape = [(1 if i in reduce else s) for i, s in enumerate(self.shape) if keepdim or i not in reduce]
        return self.new_empty(shape)

    @_fake("plain_relu")
    def _(x, x_scale, x_zero_point):
        return _like(x)

    @_fake("plain_relu6")
    def _(x, x_scale, x_zero_point):
        return _like(x)

    @_fake("plain_clamp")
    def _(x, x_scale, x_zero_point, min=None, max=None):
        return _like(x)

    @_fake("plain_leaky_relu")
    def _(x, x_scale, x_zero_point, negative_slope, output_scale, output_zero_point):
        return _like(x)

    for name in ("plain_hardswish", "plain_hardsigmoid", "plain_sigmoid"):

        @_fake(name)
        def _(x, x_scale, x_zero_point, output_scale, output_zero_point):
            return _like(x)

    @_fake("plain_elu")
    def _(x, x_scale, x_zero_point, output_scale, output_zero_point, alpha=1, scale=1, input_scale=1):
        return _like(x)

    @_fake("plain_softmax")
    def _(x, x_scale, x_zero_point, dim, output_scale, output_zero_point):
        return _like(x)

    @_fake("plain_layer_norm")
    def _(x, x_scale, x_zero_point, normalized_shape, weight, bias, eps, output_scale, output_zero_point):
        return _like(x)

    @_fake("plain_batch_norm2d")
    def _(x, x_scale, x_zero_point, weight, bias, mean, var, eps, output_scale, output_zero_point):
        return _like(x)

    @_fake("plain_max_pool2d")
    def _(x, kernel_size, stride, padding, dilation, ceil_mode):
        return _pool_out(x, F.max_pool2d(_float(x), kernel_size, stride, padding, dilation, ceil_mode))

    @_fake("plain_avg_pool2d")
    def _(x, x_zero_point, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
        return _pool_out(
            x, F.avg_pool2d(_float(x), kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
        )

    @_fake("plain_adaptive_avg_pool2d")
    def _(x, output_size):
        return _pool_out(x, F.adaptive_avg_pool2d(_float(x), output_size))

    @_fake("plain_avg_pool3d")
    def _(x, x_zero_point, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
        return _pool3d_out(
            x,
            F.avg_pool3d(
                _float(x), kernel_size, stride or kernel_size, padding, ceil_mode, count_include_pad, divisor_override
            ),
        )

    @_fake("plain_adaptive_avg_pool3d")
    def _(x, output_size):
        return _pool3d_out(x, F.adaptive_avg_pool3d(_float(x), output_size))

    @_fake("plain_upsample_nearest2d")
    def _(x, output_size):
        shape = list(x.shape[:-2]) + list(output_size)
        fmt = suggest_memory_format(x) if x.dim() == 4 else torch.contiguous_format
        return torch.empty(shape, dtype=x.dtype, device=x.device, memory_format=fmt)

    @_fake("plain_upsample_bilinear2d")
    def _(x, output_size, align_corners, scales_h=None, scales_w=None):
        shape = list(x.shape[:-2]) + list(output_size)
        fmt = suggest_memory_format(x) if x.dim() == 4 else torch.contiguous_format
        return torch.empty(shape, dtype=x.dtype, device=x.device, memory_format=fmt)

    for name in ("plain_batch_norm2d_relu", "plain_batch_norm3d", "plain_batch_norm3d_relu"):

        @_fake(name)
        def _(x, x_scale, x_zero_point, weight, bias, mean, var, eps, output_scale, output_zero_point):
            return _like(x)

    @_fake("plain_group_norm")
    def _(x, x_scale, x_zero_point, num_groups, weight, bias, eps, output_scale, output_zero_point):
        return _like(x)

    @_fake("plain_instance_norm")
    def _(x, x_scale, x_zero_point, weight, bias, eps, output_scale, output_zero_point):
        return _like(x)

    @_fake("plain_prelu")
    def _(x, x_scale, x_zero_point, weight, output_scale, output_zero_point):
        return _like(x)

    @_fake("plain_celu")
    def _(x, x_scale, x_zero_point, output_scale, output_zero_point, alpha=1):
        return _like(x)

    @_fake("plain_threshold")
    def _(x, x_scale, x_zero_point, threshold, value):
        return _like(x)

    _register_weighted()


# ---- plain linear / conv (aten_ext/csrc/cpu/plain_weights.cpp) ----

_HEADER_BYTES = 192  # packed_params/plain_buffer.h kHeaderBytes (format version 2)
_ALIGN = 64


def _round_up(n, m):
    return (n + m - 1) // m * m


def linear_buffer_bytes(n, k, isa):
    """Bytes of plain_linear_prepack's buffer for an [n, k] weight packed for kernel path ``isa``
    (the section sizes of packed_params/plain_buffer.cpp pack_linear: kernels/gemm's packed int8,
    column sums, zero points, and on avx2 the int16 layout)."""
    pn = _round_up(n, 16)
    sizes = [_round_up(k, 4) * pn, pn * 4, n * 4, _round_up(k, 2) * pn * 2 if isa == "avx2" and n * k > 0 else 0]
    end = _HEADER_BYTES
    for s in sizes:
        end = _round_up(end, _ALIGN) + s
    return end


def _conv_buffer_bytes(prepack, w, *geometry):
    """Bytes of a conv buffer: they depend on the weight's shape, the geometry and the kernel path
    alone (packed_params/plain_buffer.cpp), so the real prepack of a zero weight of that shape tells
    them, whatever the traced weight holds."""
    from torch._subclasses.fake_tensor import unset_fake_temporarily

    with unset_fake_temporarily():
        zero = torch.zeros([int(s) for s in w.shape], dtype=torch.int8)
        one, z0 = torch.ones(1, dtype=torch.double), torch.zeros(1, dtype=torch.long)
        return getattr(torch.ops.qplugin, prepack)(zero, one, z0, None, *geometry).numel()


def _conv_out(x, w, stride, padding, dilation, groups, output_padding=None):
    """conv's (or, with output_padding, the transposed conv's: weight (IC, OC / groups, k...))
    output in the C++ layout. The output size by its formula, not by running aten's conv on fakes:
    that one picks a conv backend by batch size and so guards on the batch (a dynamic batch would
    recompile at 16)."""
    spatial = x.dim() - 2
    at = lambda v, i: v[i] if len(v) > 1 else v[0]  # noqa: E731 - a list of one applies to every dim
    if output_padding is None:
        shape = [x.shape[0], w.shape[0]] + [
            (x.shape[2 + i] + 2 * at(padding, i) - at(dilation, i) * (w.shape[2 + i] - 1) - 1) // at(stride, i) + 1
            for i in range(spatial)
        ]
    else:
        shape = [x.shape[0], w.shape[1] * groups] + [
            (x.shape[2 + i] - 1) * at(stride, i)
            - 2 * at(padding, i)
            + at(dilation, i) * (w.shape[2 + i] - 1)
            + at(output_padding, i)
            + 1
            for i in range(spatial)
        ]
    if x.dim() == 3:  # the C++ allocates (N, C, 1, W) channels_last and squeezes
        return torch.empty(
            (shape[0], shape[1], 1, shape[2]), dtype=x.dtype, device=x.device, memory_format=torch.channels_last
        ).squeeze(2)
    fmt = torch.channels_last if x.dim() == 4 else torch.channels_last_3d
    return torch.empty(shape, dtype=x.dtype, device=x.device, memory_format=fmt)


def _register_weighted():
    from torch_qplugin import _isa

    @_fake("plain_linear_prepack")
    def _(w, w_scales, w_zero_points):
        return w.new_empty([linear_buffer_bytes(w.shape[0], w.shape[1], _isa.active_isa())], dtype=torch.uint8)

    @_fake("plain_conv_prepack")
    def _(w, w_scales, w_zero_points, bias, stride, padding, dilation, groups):
        return w.new_empty(
            [_conv_buffer_bytes("plain_conv_prepack", w, stride, padding, dilation, groups)], dtype=torch.uint8
        )

    @_fake("plain_conv_transpose_prepack")
    def _(w, w_scales, w_zero_points, bias, stride, padding, output_padding, dilation, groups):
        n = _conv_buffer_bytes("plain_conv_transpose_prepack", w, stride, padding, output_padding, dilation, groups)
        return w.new_empty([n], dtype=torch.uint8)

    for name in ("plain_conv_transpose1d", "plain_conv_transpose2d", "plain_conv_transpose3d"):

        @_fake(name)
        def _(
            x,
            x_scale,
            x_zero_point,
            w,
            w_scales,
            w_zero_points,
            bias,
            packed,
            stride,
            padding,
            output_padding,
            dilation,
            groups,
            output_scale,
            output_zero_point,
        ):
            return _conv_out(x, w, stride, padding, dilation, groups, output_padding)

    for name in ("plain_linear", "plain_linear_relu"):

        @_fake(name)
        def _(x, x_scale, x_zero_point, w, w_scales, w_zero_points, bias, packed, output_scale, output_zero_point):
            return x.new_empty(list(x.shape[:-1]) + [w.shape[0]])

    for name in ("plain_linear_dynamic", "plain_linear_relu_dynamic"):

        @_fake(name)
        def _(x, w, w_scales, w_zero_points, bias, packed, reduce_range=False):
            return x.new_empty(list(x.shape[:-1]) + [w.shape[0]])

    @_fake("plain_embedding_prepack")
    def _(fused_rows, bits=8):
        return fused_rows.new_empty([_HEADER_BYTES + fused_rows.numel()], dtype=torch.uint8)

    @_fake("plain_embedding_unpack")
    def _(packed):  # the table's shape is in the buffer's header: data-dependent sizes
        ctx = torch.library.get_ctx()
        return packed.new_empty([ctx.new_dynamic_size(), ctx.new_dynamic_size()])

    @_fake("plain_embedding_bag")
    def _(
        packed,
        num_embeddings,
        embedding_dim,
        indices,
        offsets=None,
        mode=0,
        pruned_weights=False,
        per_sample_weights=None,
        compressed_indices_mapping=None,
        include_last_offset=False,
    ):
        if offsets is None:
            bags = indices.shape[0]
        else:
            bags = offsets.shape[0] - 1 if include_last_offset else offsets.shape[0]
        return indices.new_empty([bags, embedding_dim], dtype=torch.float32)

    @_fake("plain_linear_prepack_fp16")
    def _(w):
        return w.new_empty([(w.shape[0] + 15) // 16, w.shape[1], 16], dtype=torch.float16)

    for name in ("plain_linear_dynamic_fp16", "plain_linear_relu_dynamic_fp16"):

        @_fake(name)
        def _(x, w, bias, packed):
            return x.new_empty(list(x.shape[:-1]) + [w.shape[0]])

    def _rnn_layer(input, h0, c0, w_hh):
        t, b = input.shape[0], input.shape[1]
        return (
            input.new_empty([t, b, w_hh.shape[1]], dtype=torch.float32),
            torch.empty_like(h0, memory_format=torch.contiguous_format),
            torch.empty_like(c0, memory_format=torch.contiguous_format),
        )

    @_fake("plain_rnn_layer_dynamic")
    def _(
        input,
        h0,
        c0,
        w_ih,
        w_ih_scales,
        w_ih_zero_points,
        b_ih,
        packed_ih,
        w_hh,
        w_hh_scales,
        w_hh_zero_points,
        b_hh,
        packed_hh,
        num_gates,
        reverse,
    ):
        return _rnn_layer(input, h0, c0, w_hh)

    @_fake("plain_rnn_layer_dynamic_fp16")
    def _(input, h0, c0, w_ih, b_ih, packed_ih, w_hh, b_hh, packed_hh, num_gates, reverse):
        return _rnn_layer(input, h0, c0, w_hh)

    for name in (
        "plain_conv1d",
        "plain_conv1d_relu",
        "plain_conv2d",
        "plain_conv2d_relu",
        "plain_conv3d",
        "plain_conv3d_relu",
    ):

        @_fake(name)
        def _(
            x,
            x_scale,
            x_zero_point,
            w,
            w_scales,
            w_zero_points,
            bias,
            packed,
            stride,
            padding,
            dilation,
            groups,
            output_scale,
            output_zero_point,
        ):
            return _conv_out(x, w, stride, padding, dilation, groups)

    for name in ("plain_conv2d_add", "plain_conv2d_add_relu"):

        @_fake(name)
        def _(
            x,
            x_scale,
            x_zero_point,
            accum,
            accum_scale,
            accum_zero_point,
            w,
            w_scales,
            w_zero_points,
            bias,
            packed,
            stride,
            padding,
            dilation,
            groups,
            output_scale,
            output_zero_point,
        ):
            return _conv_out(x, w, stride, padding, dilation, groups)
