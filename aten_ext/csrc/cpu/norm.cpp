// CPU glue for layer_norm / batch_norm2d: fold the float parameters into the
// kernels' per-element / per-channel constants, lay out, call kernels/.
#include <ATen/Parallel.h>
#include <torch/library.h>

#include <cmath>
#include <vector>

#include "cpu/activation.h"
#include "kernels/dispatch.h"
#include "kernels/norm_kernel.h"
#include "utils/checks.h"
#include "utils/qtensor.h"

namespace qplugin {
namespace cpu {
namespace {

std::vector<double> to_doubles(const at::Tensor& t, int64_t n, double fill) {
  if (!t.defined()) return std::vector<double>(n, fill);
  const at::Tensor c = t.to(at::kDouble).contiguous();
  return std::vector<double>(c.const_data_ptr<double>(), c.const_data_ptr<double>() + n);
}

} // namespace

void layer_norm_int_out(const at::Tensor& data, const at::Tensor& out, at::IntArrayRef normalized_shape,
                        const at::Tensor& weight, const at::Tensor& bias, double eps, double in_scale,
                        int64_t in_zp, double out_scale, int64_t out_zp) {
  const at::Tensor x = data.contiguous();
  TORCH_INTERNAL_ASSERT(out.sizes() == x.sizes() && out.scalar_type() == x.scalar_type());
  if (x.numel() == 0) return;
  int64_t m = 1;
  for (int64_t s : normalized_shape) m *= s;
  const int64_t rows = x.numel() / m;
  std::vector<double> wq = to_doubles(weight, m, 1.0);
  std::vector<double> bq = to_doubles(bias, m, 0.0);
  for (int64_t j = 0; j < m; ++j) {
    wq[j] /= out_scale;
    bq[j] /= out_scale;
  }
  // The kernel's float64 steps: x = (q - zp) * s exactly, statistics of q.
  const double s = static_cast<double>(static_cast<float>(in_scale));
  const std::vector<float> wqf(wq.begin(), wq.end()), bqf(bq.begin(), bq.end());
  const kernels::LayerNormSpec spec{s, eps, wq.data(), bq.data(), wqf.data(), bqf.data(),
                                    static_cast<int32_t>(out_zp)};
  const bool direct = out.is_contiguous();
  at::Tensor y = direct ? out : at::empty(x.sizes(), x.options());
  const void* xp = x.const_data_ptr();
  void* yp = y.data_ptr();
  const at::ScalarType dt = x.scalar_type();
  at::parallel_for(0, rows, std::max<int64_t>(1, (1 << 14) / m), [&](int64_t b, int64_t e) {
    const int64_t off = b * m;
    if (dt == at::kByte) {
      QPLUGIN_ISA_CALL(layer_norm_u8, static_cast<const uint8_t*>(xp) + off, static_cast<uint8_t*>(yp) + off, e - b, m, &spec);
    } else if (dt == at::kChar) {
      QPLUGIN_ISA_CALL(layer_norm_s8, static_cast<const int8_t*>(xp) + off, static_cast<int8_t*>(yp) + off, e - b, m, &spec);
    } else {
      QPLUGIN_ISA_CALL(layer_norm_s32, static_cast<const int32_t*>(xp) + off, static_cast<int32_t*>(yp) + off, e - b, m, &spec);
    }
  });
  if (!direct) out.copy_(y);
}

void batch_norm_int_out(const at::Tensor& data, const at::Tensor& out, const at::Tensor& weight,
                        const at::Tensor& bias, const at::Tensor& mean, const at::Tensor& var,
                        double eps, double in_scale, int64_t in_zp, double out_scale, int64_t out_zp) {
  const at::MemoryFormat fmt = kept_format(data);
  const at::Tensor x = data.contiguous(fmt);
  TORCH_INTERNAL_ASSERT(x.dim() == 4 && out.is_contiguous(fmt) && out.sizes() == x.sizes() &&
                        out.scalar_type() == x.scalar_type());
  const int64_t C = x.size(1);
  const std::vector<double> w = to_doubles(weight, C, 1.0), bi = to_doubles(bias, C, 0.0);
  const std::vector<double> mu = to_doubles(mean, C, 0.0), va = to_doubles(var, C, 1.0);
  // y / out_scale + out_zp = q * A + B with
  //   g = w / sqrt(var + eps), A = s * g / out_scale, B = (bias - mean * g - zp * s * g) / out_scale + out_zp.
  const double s = static_cast<double>(static_cast<float>(in_scale));
  std::vector<double> A(C), B(C);
  for (int64_t c = 0; c < C; ++c) {
    const double g = w[c] / std::sqrt(va[c] + eps);
    check_requant_multiplier("batch_norm2d", "output_scale", out_scale, s * std::fabs(g),
                             "input scale * |weight| / sqrt(var + eps)");
    A[c] = s * g / out_scale;
    B[c] = (bi[c] - mu[c] * g - static_cast<double>(in_zp) * s * g) / out_scale + static_cast<double>(out_zp);
  }
  if (x.numel() == 0) return;
  const AxisSplit sp = axis_split(x.sizes(), 1, fmt);
  const at::ScalarType dt = x.scalar_type();
  std::vector<float> Af(A.begin(), A.end()), Bf(B.begin(), B.end());
  const void* xp = x.const_data_ptr();
  void* yp = out.data_ptr();
  auto call = [&](int64_t off, int64_t outer, int64_t channels, int64_t inner, int64_t c0) {
    if (dt == at::kByte) {
      QPLUGIN_ISA_CALL(channel_affine_u8, static_cast<const uint8_t*>(xp) + off, static_cast<uint8_t*>(yp) + off,
                       outer, channels, inner, Af.data() + c0, Bf.data() + c0);
    } else if (dt == at::kChar) {
      QPLUGIN_ISA_CALL(channel_affine_s8, static_cast<const int8_t*>(xp) + off, static_cast<int8_t*>(yp) + off,
                       outer, channels, inner, Af.data() + c0, Bf.data() + c0);
    } else {
      QPLUGIN_ISA_CALL(channel_affine_s32, static_cast<const int32_t*>(xp) + off, static_cast<int32_t*>(yp) + off,
                       outer, channels, inner, A.data() + c0, B.data() + c0);
    }
  };
  constexpr int64_t kGrain = 1 << 15;  // elements per task
  if (sp.inner == 1) {
    // channels_last (or H = W = 1): blocks of whole pixels.
    at::parallel_for(0, sp.outer, std::max<int64_t>(1, kGrain / C), [&](int64_t b, int64_t e) {
      call(b * C, e - b, C, 1, 0);
    });
  } else {
    // NCHW: one row of H * W per (n, c).
    at::parallel_for(0, sp.outer * C, std::max<int64_t>(1, kGrain / sp.inner), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) call(r * sp.inner, 1, 1, sp.inner, r % C);
    });
  }
}

} // namespace cpu

namespace {

at::Tensor layer_norm_cpu_error(const at::Tensor& input, at::IntArrayRef, const c10::optional<at::Tensor>&,
                                const c10::optional<at::Tensor>&, double, double, int64_t) {
  check_quantized_input("layer_norm", "input", input);
  return input;
}
at::Tensor batch_norm2d_cpu_error(const at::Tensor& qx, const c10::optional<at::Tensor>&,
                                  const c10::optional<at::Tensor>&, const at::Tensor&, const at::Tensor&,
                                  double, double, int64_t) {
  check_quantized_input("batch_norm2d", "qx", qx);
  return qx;
}

} // namespace

TORCH_LIBRARY_IMPL(qplugin, CPU, m) {
  m.impl("layer_norm", TORCH_FN(layer_norm_cpu_error));
  m.impl("batch_norm2d", TORCH_FN(batch_norm2d_cpu_error));
}

} // namespace qplugin
