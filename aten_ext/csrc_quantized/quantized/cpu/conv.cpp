// QuantizedCPU adapters for convolution: unwrap qx / qaccum into integer views
// + qparams, call cpu::conv_forward_int, wrap the channels_last output. The
// same functions are registered for CPU so a float tensor gets a clear error.
#include <ATen/ATen.h>
#include <torch/library.h>

#include "cpu/conv.h"
#include "packed_params/conv_packed_params.h"
#include "utils/checks.h"
#include "utils/class_check.h"
#include "utils/qtensor.h"

namespace qplugin {
namespace {

void check_activation(const char* op, const char* arg, const at::Tensor& t) {
  TORCH_CHECK(t.is_quantized(), "qplugin::", op, ": ", arg,
              " should be a quantized quint8 tensor, got a non-quantized tensor of dtype ", t.scalar_type());
  TORCH_CHECK(t.scalar_type() == at::kQUInt8, "qplugin::", op, ": ", arg, " should be a quint8 tensor, got ",
              t.scalar_type());
  TORCH_CHECK(t.qscheme() == at::kPerTensorAffine, "qplugin::", op, ": ", arg,
              " should be per_tensor_affine, got qscheme ", c10::toString(t.qscheme()));
  check_qparams(op, arg, t);
}

// A quint8 output of sizes ys in conv's layout (channels_last; 1-d: the squeezed 4-d tensor).
at::Tensor empty_output(const std::vector<int64_t>& ys, const at::Tensor& qx, double y_scale, int64_t y_zp) {
  if (ys.size() == 3) {
    return at::_empty_affine_quantized({ys[0], ys[1], 1, ys[2]}, qx.options().dtype(at::kQUInt8), y_scale, y_zp,
                                       at::MemoryFormat::ChannelsLast)
        .squeeze(2);
  }
  return at::_empty_affine_quantized(ys, qx.options().dtype(at::kQUInt8), y_scale, y_zp,
                                     cpu::conv_memory_format(static_cast<int64_t>(ys.size())));
}

at::Tensor conv_impl(const char* op, const at::Tensor& qx, const at::Tensor* qaccum, ConvWeights& p, double y_scale,
                     int64_t y_zp, bool relu) {
  check_activation(op, "qx", qx);
  if (qaccum != nullptr) check_activation(op, "qaccum", *qaccum);
  check_scale(op, "output_scale", y_scale);
  check_zero_point(op, "output_zero_point", y_zp, at::kByte);
  at::Tensor y = empty_output(cpu::conv_output_sizes(op, qx.sizes(), p), qx, y_scale, y_zp);
  at::Tensor yi = int_view(y);
  at::Tensor ai;
  if (qaccum != nullptr) ai = int_view(*qaccum);
  cpu::conv_forward_int(op, int_view(qx), qx.q_scale(), qx.q_zero_point(), p, y_scale, y_zp, relu,
                        qaccum != nullptr ? &ai : nullptr, qaccum != nullptr ? qaccum->q_scale() : 1.0,
                        qaccum != nullptr ? qaccum->q_zero_point() : 0, yi);
  return y;
}

ConvWeights& checked(const char* op, const std::shared_ptr<ConvWeights>& p, const char* kind) {
  TORCH_CHECK(p->kind == kind, "qplugin::", op, ": packed_weight should come from ", kind,
              "_prepack, got packed params of ", p->kind, p->transpose ? " (transposed)" : "");
  return *p;
}

at::Tensor conv_transpose_impl(const char* op, const at::Tensor& qx, ConvWeights& p, double y_scale, int64_t y_zp) {
  check_activation(op, "qx", qx);
  check_scale(op, "output_scale", y_scale);
  check_zero_point(op, "output_zero_point", y_zp, at::kByte);
  at::Tensor y = empty_output(cpu::conv_transpose_output_sizes(op, qx.sizes(), p), qx, y_scale, y_zp);
  at::Tensor yi = int_view(y);
  cpu::conv_transpose_forward_int(op, int_view(qx), qx.q_scale(), qx.q_zero_point(), p, y_scale, y_zp, yi);
  return y;
}

using P2 = c10::intrusive_ptr<Conv2dPackedParamsBase>;
using P3 = c10::intrusive_ptr<Conv3dPackedParamsBase>;

#define QPLUGIN_CONV_OP_(name, P, kind, relu)                                              \
  at::Tensor name(const at::Tensor& qx, const P& w, double y_scale, int64_t y_zp) {        \
    return conv_impl(#name, qx, nullptr, checked(#name, w->p, kind), y_scale, y_zp, relu); \
  }
QPLUGIN_CONV_OP_(conv1d, P2, "conv1d", false)
QPLUGIN_CONV_OP_(conv1d_relu, P2, "conv1d", true)
QPLUGIN_CONV_OP_(conv2d, P2, "conv2d", false)
QPLUGIN_CONV_OP_(conv2d_relu, P2, "conv2d", true)
QPLUGIN_CONV_OP_(conv3d, P3, "conv3d", false)
QPLUGIN_CONV_OP_(conv3d_relu, P3, "conv3d", true)
#undef QPLUGIN_CONV_OP_

#define QPLUGIN_CONV_T_OP_(name, P)                                                                                \
  at::Tensor name(const at::Tensor& qx, const P& w, double y_scale, int64_t y_zp) {                                \
    return conv_transpose_impl(#name, qx, checked(#name, w->p, #name), y_scale, y_zp);                             \
  }                                                                                                                \
  P name##_prepack(const at::Tensor& w, const c10::optional<at::Tensor>& b, at::IntArrayRef s, at::IntArrayRef pd, \
                   at::IntArrayRef op, at::IntArrayRef d, int64_t g) {                                             \
    return c10::make_intrusive<typename P::element_type>(                                                          \
        conv_transpose_prepack_impl(#name "_prepack", #name, w, b, s, pd, op, d, g));                              \
  }
QPLUGIN_CONV_T_OP_(conv_transpose1d, P2)
QPLUGIN_CONV_T_OP_(conv_transpose2d, P2)
QPLUGIN_CONV_T_OP_(conv_transpose3d, P3)
#undef QPLUGIN_CONV_T_OP_

at::Tensor conv2d_add(const at::Tensor& qx, const at::Tensor& qaccum, const P2& w, double y_scale, int64_t y_zp) {
  return conv_impl("conv2d_add", qx, &qaccum, checked("conv2d_add", w->p, "conv2d"), y_scale, y_zp, false);
}
at::Tensor conv2d_add_relu(const at::Tensor& qx, const at::Tensor& qaccum, const P2& w, double y_scale, int64_t y_zp) {
  return conv_impl("conv2d_add_relu", qx, &qaccum, checked("conv2d_add_relu", w->p, "conv2d"), y_scale, y_zp, true);
}

template <typename Holder>
c10::intrusive_ptr<Holder> prepack(const char* op, const char* kind, const at::Tensor& weight,
                                   const c10::optional<at::Tensor>& bias, at::IntArrayRef stride,
                                   at::IntArrayRef padding, at::IntArrayRef dilation, int64_t groups) {
  return c10::make_intrusive<Holder>(conv_prepack_impl(op, kind, weight, bias, stride, padding, dilation, groups));
}

P2 conv1d_prepack(const at::Tensor& w, const c10::optional<at::Tensor>& b, at::IntArrayRef s, at::IntArrayRef pd,
                  at::IntArrayRef d, int64_t g) {
  return prepack<Conv2dPackedParamsBase>("conv1d_prepack", "conv1d", w, b, s, pd, d, g);
}
P2 conv2d_prepack(const at::Tensor& w, const c10::optional<at::Tensor>& b, at::IntArrayRef s, at::IntArrayRef pd,
                  at::IntArrayRef d, int64_t g) {
  return prepack<Conv2dPackedParamsBase>("conv2d_prepack", "conv2d", w, b, s, pd, d, g);
}
P3 conv3d_prepack(const at::Tensor& w, const c10::optional<at::Tensor>& b, at::IntArrayRef s, at::IntArrayRef pd,
                  at::IntArrayRef d, int64_t g) {
  return prepack<Conv3dPackedParamsBase>("conv3d_prepack", "conv3d", w, b, s, pd, d, g);
}

}  // namespace

// Quantized inputs run; float inputs reach the same functions through CPU and
// get "qx should be a quantized quint8 tensor" / "weight should be a quantized
// qint8 tensor".
#define QPLUGIN_CONV_IMPLS_(m)                                                                         \
  m.impl("conv1d_prepack", TORCH_FN(conv1d_prepack));                                                  \
  m.impl("conv2d_prepack", TORCH_FN(conv2d_prepack));                                                  \
  m.impl("conv3d_prepack", TORCH_FN(conv3d_prepack));                                                  \
  m.impl("conv1d", with_class_check<Conv2dPackedParamsBase, 1>(TORCH_FN(conv1d)));                     \
  m.impl("conv1d_relu", with_class_check<Conv2dPackedParamsBase, 1>(TORCH_FN(conv1d_relu)));           \
  m.impl("conv2d", with_class_check<Conv2dPackedParamsBase, 1>(TORCH_FN(conv2d)));                     \
  m.impl("conv2d_relu", with_class_check<Conv2dPackedParamsBase, 1>(TORCH_FN(conv2d_relu)));           \
  m.impl("conv3d", with_class_check<Conv3dPackedParamsBase, 1>(TORCH_FN(conv3d)));                     \
  m.impl("conv3d_relu", with_class_check<Conv3dPackedParamsBase, 1>(TORCH_FN(conv3d_relu)));           \
  m.impl("conv2d_add", with_class_check<Conv2dPackedParamsBase, 2>(TORCH_FN(conv2d_add)));             \
  m.impl("conv2d_add_relu", with_class_check<Conv2dPackedParamsBase, 2>(TORCH_FN(conv2d_add_relu)));   \
  m.impl("conv_transpose1d_prepack", TORCH_FN(conv_transpose1d_prepack));                              \
  m.impl("conv_transpose2d_prepack", TORCH_FN(conv_transpose2d_prepack));                              \
  m.impl("conv_transpose3d_prepack", TORCH_FN(conv_transpose3d_prepack));                              \
  m.impl("conv_transpose1d", with_class_check<Conv2dPackedParamsBase, 1>(TORCH_FN(conv_transpose1d))); \
  m.impl("conv_transpose2d", with_class_check<Conv2dPackedParamsBase, 1>(TORCH_FN(conv_transpose2d))); \
  m.impl("conv_transpose3d", with_class_check<Conv3dPackedParamsBase, 1>(TORCH_FN(conv_transpose3d)));

TORCH_LIBRARY_IMPL(qplugin, QuantizedCPU, m){QPLUGIN_CONV_IMPLS_(m)}

TORCH_LIBRARY_IMPL(qplugin, CPU, m) {
  QPLUGIN_CONV_IMPLS_(m)
}

}  // namespace qplugin
