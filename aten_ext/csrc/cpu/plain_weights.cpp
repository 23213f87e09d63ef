// The plain tier's weighted ops (qplugin::plain_linear* / plain_conv*, CPU key): uint8 activations
// with explicit qparams, the weight as plain tensors (int8 data, float64 scales, int64 zero
// points, float32 bias) plus its packed buffer (packed_params/plain_buffer.h). No TorchScript
// object and no quantized-tensor API (the wall, docs/design.md). Fakes: torch_qplugin/_fakes.py.
#include "utils/torch_api.h"

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "cpu/conv.h"
#include "cpu/linear.h"
#include "kernels/linear_fp16_kernel.h"
#include "packed_params/plain_buffer.h"
#include "utils/checks.h"

namespace qplugin {
namespace cpu {
namespace {

void check_u8(const char* op, const char* arg, const Tensor& x) {
  QP_CHECK(tensor::dtype(x) == kByte, "qplugin::", op, ": ", arg, " should be a uint8 tensor, got dtype ",
           tensor::dtype(x));
}

// w_scales (float64) / w_zero_points (int64): 1-D with 1 (per tensor) or n entries.
void check_w_qparams(const char* op, const Tensor& s, const Tensor& z, int64_t n) {
  QP_CHECK(tensor::dtype(s) == kDouble && tensor::dtype(z) == kLong, "qplugin::", op,
           ": w_scales and w_zero_points should be float64 and int64 tensors, got ", tensor::dtype(s), " and ",
           tensor::dtype(z));
  QP_CHECK_VALUE(s.dim() == 1 && z.dim() == 1 && s.numel() == z.numel() && (s.numel() == 1 || s.numel() == n),
                 "qplugin::", op, ": w_scales and w_zero_points should be 1-D with 1 or ", n, " entries, got shapes ",
                 s.sizes(), " and ", z.sizes());
}

// The linear weights of one call: the buffer's view, or (buffer packed for another ISA path)
// LinearWeights packed from w now (kept alive in `owner`). The per-channel scales are read in
// place from w_scales where it holds N contiguous entries, else from `scales`.
struct LinearCall {
  LinearWeightsView view;
  std::shared_ptr<LinearWeights> owner;
  std::vector<double> scales;      // N entries, where w_scales is not read in place
  std::optional<Tensor> w_scales;  // contiguous float64 (set by linear_call)
  std::optional<Tensor> bias;      // contiguous float32, or none
};

// `scale_max`: the op needs view.w_scale_max (static linear's requantize check). The scales'
// range checks run until the buffer has been checked in full with these tensors
// (plain_buffer::weights_checked), and again whenever one of them changes in place.
void linear_call(const char* op, const Tensor& w, const Tensor& w_scales, const Tensor& w_zps,
                 const std::optional<Tensor>& bias, const Tensor& packed, bool scale_max, LinearCall* c) {
  QP_CHECK(tensor::dtype(w) == kChar, "qplugin::", op, ": w should be an int8 tensor, got dtype ", tensor::dtype(w));
  QP_CHECK_VALUE(w.dim() == 2, "qplugin::", op, ": w should be 2-D [out_features, in_features], got shape ", w.sizes());
  const int64_t N = w.size(0);
  check_w_qparams(op, w_scales, w_zps, N);
  if (bias.has_value() && bias->defined()) {
    QP_CHECK(tensor::dtype(*bias) == kFloat, "qplugin::", op, ": bias should be a float32 tensor, got dtype ",
             tensor::dtype(*bias));
    QP_CHECK_VALUE(bias->dim() == 1 && bias->size(0) == N, "qplugin::", op, ": bias should have shape [", N, "], got ",
                   bias->sizes());
    c->bias = tensor::contiguous(*bias);
  }
  const bool checked = plain_buffer::weights_checked(packed, w, w_scales, w_zps);
  c->w_scales = tensor::contiguous(w_scales);
  const double* sp = tensor::data<double>(*c->w_scales);
  if (c->w_scales->numel() != N) {  // one scale for every channel
    c->scales.assign(N, sp[0]);
    sp = c->scales.data();
  }
  if (!checked) {
    for (int64_t n = 0; n < c->w_scales->numel(); ++n) check_scale(op, "w_scales", sp[n]);
  }
  double w_scale_max = 0.0;
  if (scale_max) {
    for (int64_t n = 0; n < N; ++n) w_scale_max = std::max(w_scale_max, sp[n]);
  }
  if (!plain_buffer::view_linear(op, packed, w, w_scales, w_zps, checked, &c->view)) {
    c->owner = std::make_shared<LinearWeights>();
    c->owner->init_int8(op, w, w_scales, w_zps, w_scales.numel() != 1, std::nullopt);
    c->view = linear_weights_view(*c->owner);
  }
  c->view.w_scale_max = w_scale_max;
  c->view.w_scale = sp;
  c->view.bias = c->bias.has_value() ? tensor::data<float>(*c->bias) : nullptr;
}

template <bool kRelu>
Tensor p_linear(const Tensor& x, double x_scale, int64_t x_zp, const Tensor& w, const Tensor& w_scales,
                const Tensor& w_zps, const std::optional<Tensor>& bias, const Tensor& packed, double y_scale,
                int64_t y_zp) {
  const char* op = kRelu ? "plain_linear_relu" : "plain_linear";
  check_u8(op, "x", x);
  LinearCall c;
  linear_call(op, w, w_scales, w_zps, bias, packed, true, &c);
  QP_CHECK_VALUE(x.dim() >= 1 && x.size(-1) == c.view.b.K, "qplugin::", op, ": x should have last dimension ",
                 c.view.b.K, " (w's in_features), got shape ", x.sizes());
  std::vector<int64_t> ys = x.sizes().vec();
  ys.back() = c.view.b.N;
  Tensor y = tensor::empty(ys, tensor::dtype(x));
  const Tensor xc = tensor::contiguous(x);
  const int64_t M = c.view.b.N > 0 ? y.numel() / c.view.b.N : 0;
  linear_u8_view(op, tensor::data<uint8_t>(xc), M, x_scale, x_zp, c.view, y_scale, y_zp, kRelu,
                 tensor::mutable_data<uint8_t>(y));
  return y;
}

template <bool kRelu>
Tensor p_linear_dynamic(const Tensor& x, const Tensor& w, const Tensor& w_scales, const Tensor& w_zps,
                        const std::optional<Tensor>& bias, const Tensor& packed, bool reduce_range) {
  const char* op = kRelu ? "plain_linear_relu_dynamic" : "plain_linear_dynamic";
  QP_CHECK(tensor::dtype(x) == kFloat, "qplugin::", op, ": x should be a float32 tensor, got dtype ", tensor::dtype(x));
  LinearCall c;
  linear_call(op, w, w_scales, w_zps, bias, packed, false, &c);
  QP_CHECK_VALUE(x.dim() >= 1 && x.size(-1) == c.view.b.K, "qplugin::", op, ": x should have last dimension ",
                 c.view.b.K, " (w's in_features), got shape ", x.sizes());
  return linear_dynamic_view(op, x, c.view, reduce_range, kRelu);
}

// fp16 dynamic linear on a plain float16 weight: packed into kernels/linear_fp16_kernel.h's
// panels per call (O(N K), no stored packed form) and run by the same kernel as
// linear_dynamic_fp16, so the outputs are bit-identical to it.
// The fp16 weights of one call: a float16 w [N, K] (+ float32 bias [N] or None) and its panels
// (kernels/linear_fp16_kernel.h's layout as a float16 [P, K, 16] tensor from
// plain_linear_prepack_fp16; the layout is the same on every kernel path), or, packed empty, the
// panels packed from w now (kept alive in `owner`).
struct Fp16Call {
  LinearWeightsView view;
  std::shared_ptr<LinearWeights> owner;
  std::optional<Tensor> bias;  // contiguous float32, or none
};

void check_fp16_w(const char* op, const char* arg, const Tensor& w) {
  QP_CHECK(tensor::dtype(w) == kHalf, "qplugin::", op, ": ", arg, " should be a float16 tensor, got dtype ",
           tensor::dtype(w));
  QP_CHECK_VALUE(w.dim() == 2, "qplugin::", op, ": ", arg, " should be 2-D [out_features, in_features], got shape ",
                 w.sizes());
}

void fp16_call(const char* op, const char* arg, const Tensor& w, const char* bias_arg,
               const std::optional<Tensor>& bias, const char* packed_arg, const Tensor& packed, Fp16Call* c) {
  check_fp16_w(op, arg, w);
  const int64_t N = w.size(0), K = w.size(1);
  if (bias.has_value() && bias->defined()) {
    QP_CHECK(tensor::dtype(*bias) == kFloat, "qplugin::", op, ": ", bias_arg, " should be a float32 tensor, got dtype ",
             tensor::dtype(*bias));
    QP_CHECK_VALUE(bias->dim() == 1 && bias->size(0) == N, "qplugin::", op, ": ", bias_arg, " should have shape [", N,
                   "], got ", bias->sizes());
    c->bias = tensor::contiguous(*bias);
  }
  if (packed.numel() == 0) {
    c->owner = std::make_shared<LinearWeights>();
    c->owner->init_fp16(op, w, c->bias);
    c->view = linear_weights_view(*c->owner);
    return;
  }
  const int64_t P = (N + kernels::kFp16Panel - 1) / kernels::kFp16Panel;
  QP_CHECK_VALUE(tensor::dtype(packed) == kHalf && packed.dim() == 3 && packed.size(0) == P && packed.size(1) == K &&
                     packed.size(2) == kernels::kFp16Panel && packed.is_contiguous(),
                 "qplugin::", op, ": ", packed_arg, " should be the contiguous float16 [", P, ", ", K, ", ",
                 kernels::kFp16Panel, "] panels of plain_linear_prepack_fp16(", arg, ") or empty, got ",
                 tensor::dtype(packed), " of shape ", packed.sizes());
  plain_buffer::check_fp16_panels(op, packed_arg, packed, arg, w);
  c->view.b.N = N;
  c->view.b.K = K;
  c->view.fp16 = true;
  c->view.fp16_panels = reinterpret_cast<const uint16_t*>(tensor::data<Half>(packed));
  c->view.bias = c->bias.has_value() ? tensor::data<float>(*c->bias) : nullptr;
}

Tensor p_linear_prepack_fp16(const Tensor& w) {
  constexpr const char* op = "plain_linear_prepack_fp16";
  check_fp16_w(op, "w", w);
  const auto p = std::make_shared<LinearWeights>();
  p->init_fp16(op, w, std::nullopt);
  const int64_t P = (w.size(0) + kernels::kFp16Panel - 1) / kernels::kFp16Panel;
  Tensor out = tensor::empty(std::vector<int64_t>{P, w.size(1), kernels::kFp16Panel}, kHalf);
  std::copy(p->fp16_panels.begin(), p->fp16_panels.end(), reinterpret_cast<uint16_t*>(tensor::mutable_data<Half>(out)));
  return out;
}

template <bool kRelu>
Tensor p_linear_dynamic_fp16(const Tensor& x, const Tensor& w, const std::optional<Tensor>& bias,
                             const Tensor& packed) {
  const char* op = kRelu ? "plain_linear_relu_dynamic_fp16" : "plain_linear_dynamic_fp16";
  QP_CHECK(tensor::dtype(x) == kFloat, "qplugin::", op, ": x should be a float32 tensor, got dtype ", tensor::dtype(x));
  Fp16Call c;
  fp16_call(op, "w", w, "bias", bias, "packed", packed, &c);
  return linear_fp16_view(op, x, c.view, kRelu);
}

std::tuple<Tensor, Tensor, Tensor> p_rnn_layer_dynamic_fp16(const Tensor& input, const Tensor& h0, const Tensor& c0,
                                                            const Tensor& w_ih, const std::optional<Tensor>& b_ih,
                                                            const Tensor& packed_ih, const Tensor& w_hh,
                                                            const std::optional<Tensor>& b_hh, const Tensor& packed_hh,
                                                            int64_t num_gates, bool reverse) {
  constexpr const char* op = "plain_rnn_layer_dynamic_fp16";
  Fp16Call ih, hh;
  fp16_call(op, "w_ih", w_ih, "b_ih", b_ih, "packed_ih", packed_ih, &ih);
  fp16_call(op, "w_hh", w_hh, "b_hh", b_hh, "packed_hh", packed_hh, &hh);
  return rnn_layer_dynamic_view(op, input, h0, c0, ih.view, hh.view, num_gates, reverse);
}

std::tuple<Tensor, Tensor, Tensor> p_rnn_layer_dynamic(const Tensor& input, const Tensor& h0, const Tensor& c0,
                                                       const Tensor& w_ih, const Tensor& w_ih_scales,
                                                       const Tensor& w_ih_zps, const std::optional<Tensor>& b_ih,
                                                       const Tensor& packed_ih, const Tensor& w_hh,
                                                       const Tensor& w_hh_scales, const Tensor& w_hh_zps,
                                                       const std::optional<Tensor>& b_hh, const Tensor& packed_hh,
                                                       int64_t num_gates, bool reverse) {
  constexpr const char* op = "plain_rnn_layer_dynamic";
  LinearCall ih, hh;
  linear_call(op, w_ih, w_ih_scales, w_ih_zps, b_ih, packed_ih, false, &ih);
  linear_call(op, w_hh, w_hh_scales, w_hh_zps, b_hh, packed_hh, false, &hh);
  return rnn_layer_dynamic_view(op, input, h0, c0, ih.view, hh.view, num_gates, reverse);
}

Tensor p_linear_prepack(const Tensor& w, const Tensor& w_scales, const Tensor& w_zps) {
  constexpr const char* op = "plain_linear_prepack";
  QP_CHECK(tensor::dtype(w) == kChar, "qplugin::", op, ": w should be an int8 tensor, got dtype ", tensor::dtype(w));
  QP_CHECK_VALUE(w.dim() == 2, "qplugin::", op, ": w should be 2-D [out_features, in_features], got shape ", w.sizes());
  check_w_qparams(op, w_scales, w_zps, w.size(0));
  return plain_buffer::pack_linear(op, w, w_scales, w_zps);
}

// ---- conv ----
const char* conv_kind(int64_t spatial) { return spatial == 1 ? "conv1d" : spatial == 2 ? "conv2d" : "conv3d"; }

Tensor p_conv_prepack(const Tensor& w, const Tensor& w_scales, const Tensor& w_zps, const std::optional<Tensor>& bias,
                      IntListArg stride, IntListArg padding, IntListArg dilation, int64_t groups) {
  constexpr const char* op = "plain_conv_prepack";
  QP_CHECK_VALUE(w.dim() >= 3 && w.dim() <= 5, "qplugin::", op,
                 ": w should have 3 to 5 dims (out_channels, in_channels / groups, kernel...), got shape ", w.sizes());
  check_w_qparams(op, w_scales, w_zps, w.size(0));
  return plain_buffer::pack_conv(op, conv_kind(w.dim() - 2), w, w_scales, w_zps, bias, stride, padding, dilation,
                                 groups);
}

// The conv of one call: its description from the op's arguments and the kernel layouts of the
// running path, read from `packed` (or, for a buffer without them, packed from w now and kept
// alive in `p`). The path is read once: the layouts and the kernels must agree.
struct ConvCall {
  std::shared_ptr<ConvWeights> p;
  ConvPackedView k;
};

ConvCall conv_call(const char* op, const std::string& kind, const Tensor& w, const Tensor& w_scales,
                   const Tensor& w_zps, const std::optional<Tensor>& bias, const Tensor& packed, IntArrayRef stride,
                   IntArrayRef padding, IntArrayRef output_padding, IntArrayRef dilation, int64_t groups) {
  plain_buffer::check_conv(op, packed, w, groups, is_conv_transpose_kind(kind));
  const bool checked = plain_buffer::weights_checked(packed, w, w_scales, w_zps);
  ConvCall c;
  c.p = conv_describe_int(op, kind, w, w_scales, w_zps, bias, stride, padding, output_padding, dilation, groups,
                          !checked);
  plain_buffer::check_conv_geometry(op, packed, *c.p);
  const kernels::Isa path = kernels::active_isa();
  if (!plain_buffer::view_conv(op, packed, *c.p, w, w_scales, w_zps, path, checked, &c.k)) {
    c.p =
        conv_prepack_int_of_kind(op, kind, w, w_scales, w_zps, bias, stride, padding, output_padding, dilation, groups);
    c.k = c.p->packed_view(path);
  }
  return c;
}

Tensor conv_impl(const char* op, int64_t spatial, const Tensor& x, double x_scale, int64_t x_zp, const Tensor* accum,
                 double a_scale, int64_t a_zp, const Tensor& w, const Tensor& w_scales, const Tensor& w_zps,
                 const std::optional<Tensor>& bias, const Tensor& packed, IntArrayRef stride, IntArrayRef padding,
                 IntArrayRef dilation, int64_t groups, double y_scale, int64_t y_zp, bool relu) {
  check_u8(op, "x", x);
  if (accum != nullptr) check_u8(op, "accum", *accum);
  QP_CHECK(tensor::dtype(w) == kChar, "qplugin::", op, ": w should be an int8 tensor, got dtype ", tensor::dtype(w));
  QP_CHECK_VALUE(w.dim() == spatial + 2, "qplugin::", op, ": w should have ", spatial + 2, " dims, got shape ",
                 w.sizes());
  check_w_qparams(op, w_scales, w_zps, w.size(0));
  const ConvCall c =
      conv_call(op, conv_kind(spatial), w, w_scales, w_zps, bias, packed, stride, padding, {}, dilation, groups);
  Tensor y = conv_empty_output(conv_output_sizes(op, x.sizes(), *c.p), tensor::dtype(x));
  conv_forward_view(op, x, x_scale, x_zp, *c.p, c.k, y_scale, y_zp, relu, accum, a_scale, a_zp, y);
  return y;
}

template <int64_t kSpatial, bool kRelu>
Tensor p_conv(const Tensor& x, double x_scale, int64_t x_zp, const Tensor& w, const Tensor& w_scales,
              const Tensor& w_zps, const std::optional<Tensor>& bias, const Tensor& packed, IntListArg stride,
              IntListArg padding, IntListArg dilation, int64_t groups, double y_scale, int64_t y_zp) {
  static const std::string name = std::string("plain_") + conv_kind(kSpatial) + (kRelu ? "_relu" : "");
  return conv_impl(name.c_str(), kSpatial, x, x_scale, x_zp, nullptr, 1.0, 0, w, w_scales, w_zps, bias, packed, stride,
                   padding, dilation, groups, y_scale, y_zp, kRelu);
}

template <bool kRelu>
Tensor p_conv2d_add(const Tensor& x, double x_scale, int64_t x_zp, const Tensor& accum, double a_scale, int64_t a_zp,
                    const Tensor& w, const Tensor& w_scales, const Tensor& w_zps, const std::optional<Tensor>& bias,
                    const Tensor& packed, IntListArg stride, IntListArg padding, IntListArg dilation, int64_t groups,
                    double y_scale, int64_t y_zp) {
  return conv_impl(kRelu ? "plain_conv2d_add_relu" : "plain_conv2d_add", 2, x, x_scale, x_zp, &accum, a_scale, a_zp, w,
                   w_scales, w_zps, bias, packed, stride, padding, dilation, groups, y_scale, y_zp, kRelu);
}

// ---- transposed conv: w (IC, OC / groups, kernel...), qparams with 1 or OC entries (per output channel) ----
const char* conv_transpose_kind(int64_t spatial) {
  return spatial == 1 ? "conv_transpose1d" : spatial == 2 ? "conv_transpose2d" : "conv_transpose3d";
}

void check_wt(const char* op, const Tensor& w, const Tensor& w_scales, const Tensor& w_zps, int64_t groups) {
  QP_CHECK(tensor::dtype(w) == kChar, "qplugin::", op, ": w should be an int8 tensor, got dtype ", tensor::dtype(w));
  QP_CHECK_VALUE(w.dim() >= 3, "qplugin::", op,
                 ": w should have 3 to 5 dims (in_channels, out_channels / groups, kernel...), got shape ", w.sizes());
  check_transpose_groups(op, w.size(0), groups);
  check_w_qparams(op, w_scales, w_zps, w.size(1) * groups);
}

Tensor p_conv_transpose_prepack(const Tensor& w, const Tensor& w_scales, const Tensor& w_zps,
                                const std::optional<Tensor>& bias, IntListArg stride, IntListArg padding,
                                IntListArg output_padding, IntListArg dilation, int64_t groups) {
  constexpr const char* op = "plain_conv_transpose_prepack";
  QP_CHECK_VALUE(w.dim() >= 3 && w.dim() <= 5, "qplugin::", op,
                 ": w should have 3 to 5 dims (in_channels, out_channels / groups, kernel...), got shape ", w.sizes());
  check_wt(op, w, w_scales, w_zps, groups);
  return plain_buffer::pack_conv(op, conv_transpose_kind(w.dim() - 2), w, w_scales, w_zps, bias, stride, padding,
                                 dilation, groups, output_padding);
}

template <int64_t kSpatial>
Tensor p_conv_transpose(const Tensor& x, double x_scale, int64_t x_zp, const Tensor& w, const Tensor& w_scales,
                        const Tensor& w_zps, const std::optional<Tensor>& bias, const Tensor& packed, IntListArg stride,
                        IntListArg padding, IntListArg output_padding, IntListArg dilation, int64_t groups,
                        double y_scale, int64_t y_zp) {
  static const std::string name = std::string("plain_") + conv_transpose_kind(kSpatial);
  const char* op = name.c_str();
  check_u8(op, "x", x);
  QP_CHECK_VALUE(w.dim() == kSpatial + 2, "qplugin::", op, ": w should have ", kSpatial + 2, " dims, got shape ",
                 w.sizes());
  check_wt(op, w, w_scales, w_zps, groups);
  const ConvCall c = conv_call(op, conv_transpose_kind(kSpatial), w, w_scales, w_zps, bias, packed, stride, padding,
                               output_padding, dilation, groups);
  Tensor y = conv_empty_output(conv_transpose_output_sizes(op, x.sizes(), *c.p), tensor::dtype(x));
  conv_transpose_forward_view(op, x, x_scale, x_zp, *c.p, c.k, y_scale, y_zp, y);
  return y;
}

}  // namespace

QPLUGIN_LIBRARY_IMPL(qplugin, CPU, m) {
  m.impl("plain_linear", QPLUGIN_FN((&p_linear<false>)));
  m.impl("plain_linear_relu", QPLUGIN_FN((&p_linear<true>)));
  m.impl("plain_linear_dynamic", QPLUGIN_FN((&p_linear_dynamic<false>)));
  m.impl("plain_linear_relu_dynamic", QPLUGIN_FN((&p_linear_dynamic<true>)));
  m.impl("plain_linear_dynamic_fp16", QPLUGIN_FN((&p_linear_dynamic_fp16<false>)));
  m.impl("plain_linear_relu_dynamic_fp16", QPLUGIN_FN((&p_linear_dynamic_fp16<true>)));
  m.impl("plain_linear_prepack", QPLUGIN_FN(&p_linear_prepack));
  m.impl("plain_linear_prepack_fp16", QPLUGIN_FN(&p_linear_prepack_fp16));
  m.impl("plain_rnn_layer_dynamic", QPLUGIN_FN(&p_rnn_layer_dynamic));
  m.impl("plain_rnn_layer_dynamic_fp16", QPLUGIN_FN(&p_rnn_layer_dynamic_fp16));
  m.impl("plain_conv_prepack", QPLUGIN_FN(&p_conv_prepack));
  m.impl("plain_conv1d", QPLUGIN_FN((&p_conv<1, false>)));
  m.impl("plain_conv1d_relu", QPLUGIN_FN((&p_conv<1, true>)));
  m.impl("plain_conv2d", QPLUGIN_FN((&p_conv<2, false>)));
  m.impl("plain_conv2d_relu", QPLUGIN_FN((&p_conv<2, true>)));
  m.impl("plain_conv3d", QPLUGIN_FN((&p_conv<3, false>)));
  m.impl("plain_conv3d_relu", QPLUGIN_FN((&p_conv<3, true>)));
  m.impl("plain_conv2d_add", QPLUGIN_FN((&p_conv2d_add<false>)));
  m.impl("plain_conv2d_add_relu", QPLUGIN_FN((&p_conv2d_add<true>)));
  m.impl("plain_conv_transpose_prepack", QPLUGIN_FN(&p_conv_transpose_prepack));
  m.impl("plain_conv_transpose1d", QPLUGIN_FN((&p_conv_transpose<1>)));
  m.impl("plain_conv_transpose2d", QPLUGIN_FN((&p_conv_transpose<2>)));
  m.impl("plain_conv_transpose3d", QPLUGIN_FN((&p_conv_transpose<3>)));
}

}  // namespace cpu
}  // namespace qplugin
