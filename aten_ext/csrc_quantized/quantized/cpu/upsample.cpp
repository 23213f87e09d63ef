// QuantizedCPU adapters for nearest-neighbour and bilinear 2-D upsampling: output keeps the
// input's qparams and memory format.
#include <ATen/ATen.h>
#include <torch/library.h>

#include <cmath>

#include "cpu/pool.h"
#include "cpu/upsample.h"
#include "utils/checks.h"
#include "utils/qtensor.h"

namespace qplugin {
namespace {

at::Tensor upsample_nearest2d_q(const at::Tensor& qx, at::IntArrayRef output_size) {
  constexpr const char* op = "upsample_nearest2d";
  check_quantized_input(op, "qx", qx);
  TORCH_CHECK(qx.qscheme() == at::kPerTensorAffine, "qplugin::", op,
              ": qx should be per_tensor_affine quantized, got qscheme ", toString(qx.qscheme()));
  check_qparams(op, "qx", qx);
  const auto sizes = cpu::upsample_nearest2d_output_sizes(op, qx.sizes(), output_size);
  at::Tensor out =
      at::_empty_affine_quantized(sizes, qx.options(), qx.q_scale(), qx.q_zero_point(), cpu::pool_format(qx));
  cpu::upsample_nearest2d_int_out(int_view(qx), int_view(out));
  return out;
}

at::Tensor upsample_bilinear2d_q(const at::Tensor& qx, at::IntArrayRef output_size, bool align_corners,
                                 c10::optional<double> scales_h, c10::optional<double> scales_w) {
  constexpr const char* op = "upsample_bilinear2d";
  check_quantized_input(op, "qx", qx);
  TORCH_CHECK(qx.qscheme() == at::kPerTensorAffine, "qplugin::", op,
              ": qx should be per_tensor_affine quantized, got qscheme ", toString(qx.qscheme()));
  TORCH_CHECK(qx.scalar_type() == at::kQUInt8 || qx.scalar_type() == at::kQInt8, "qplugin::", op,
              ": qx should be quint8 or qint8, got ", qx.scalar_type());
  check_qparams(op, "qx", qx);
  for (const auto& s : {scales_h, scales_w}) {
    TORCH_CHECK_VALUE(!s.has_value() || (std::isfinite(*s) && *s > 0), "qplugin::", op,
                      ": scales_h / scales_w should be positive finite numbers or None, got ", *s);
  }
  const auto sizes = cpu::upsample_nearest2d_output_sizes(op, qx.sizes(), output_size);
  at::Tensor out =
      at::_empty_affine_quantized(sizes, qx.options(), qx.q_scale(), qx.q_zero_point(), cpu::pool_format(qx));
  cpu::upsample_bilinear2d_int_out(int_view(qx), int_view(out), align_corners, scales_h, scales_w);
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(qplugin, QuantizedCPU, m) {
  m.impl("upsample_nearest2d", TORCH_FN(upsample_nearest2d_q));
  m.impl("upsample_bilinear2d", TORCH_FN(upsample_bilinear2d_q));
}

// ---- The CPU key: these ops take quantized tensors; a plain one is refused by name ----
namespace {

at::Tensor upsample_nearest2d_cpu_error(const at::Tensor& qx, at::IntArrayRef) {
  refuse_non_quantized("upsample_nearest2d", "qx", qx);
  return qx;
}

at::Tensor upsample_bilinear2d_cpu_error(const at::Tensor& qx, at::IntArrayRef, bool, c10::optional<double>,
                                         c10::optional<double>) {
  refuse_non_quantized("upsample_bilinear2d", "qx", qx);
  return qx;
}

}  // namespace

TORCH_LIBRARY_IMPL(qplugin, CPU, m) {
  m.impl("upsample_nearest2d", TORCH_FN(upsample_nearest2d_cpu_error));
  m.impl("upsample_bilinear2d", TORCH_FN(upsample_bilinear2d_cpu_error));
}

}  // namespace qplugin
