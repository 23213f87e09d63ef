// CPU glue for linear: argument checks, per-call epilogue constants, the GEMM
// (kernels/gemm/qgemm.h), the dynamic (float in, float out) linear.
#include "cpu/linear.h"

#include "utils/torch_api.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "cpu/quantize.h"
#include "kernels/dispatch.h"
#include "kernels/gemm/driver.h"
#include "kernels/quantize_kernel.h"
#include "kernels/quantize_math.h"
#include "utils/checks.h"

namespace qplugin {
namespace cpu {

namespace gemm = kernels::gemm;

std::vector<int64_t> linear_out_sizes(const char* op, IntArrayRef x_sizes, const LinearWeights& w) {
  w.check_int8(op);
  QP_CHECK_VALUE(!x_sizes.empty(), "qplugin::", op, ": X should have at least 1 dimension, got a 0-dim tensor");
  QP_CHECK_VALUE(x_sizes.back() == w.K, "qplugin::", op, ": X should have last dimension ", w.K,
                 " (W's in_features), got shape ", x_sizes);
  std::vector<int64_t> out(x_sizes.begin(), x_sizes.end());
  out.back() = w.N;
  return out;
}

namespace {

void check_linear_qparams(const char* op, double x_scale, int64_t x_zero_point, double w_scale_max, double y_scale,
                          int64_t y_zero_point) {
  check_scale(op, "X scale", x_scale);
  check_zero_point(op, "X zero_point", x_zero_point, kByte);
  check_scale(op, "Y_scale_i", y_scale);
  check_zero_point(op, "Y_zero_point_i", y_zero_point, kByte);
  check_requant_multiplier(op, "Y_scale_i", y_scale, x_scale * w_scale_max, "X scale * W scale");
}

// The kU8 GEMM with epilogue constants mult / bias (N entries each, bias may be null).
void gemm_u8(const uint8_t* x, int64_t M, int64_t x_zero_point, const gemm::PackedB& pb, const int32_t* w_zp,
             bool w_zp_all_zero, const float* mult, const float* bias, int64_t y_zero_point, bool relu, uint8_t* out) {
  gemm::QGemmParams p;
  p.M = M;
  p.a = x;
  p.lda = pb.K;
  p.a_zero_point = static_cast<int32_t>(x_zero_point);
  p.b = &pb;
  p.b_zero_points = w_zp;
  p.b_zero_points_all_zero = w_zp_all_zero;
  p.multipliers = mult;
  p.bias = bias;
  p.kind = gemm::OutKind::kU8;
  p.out = out;
  p.ldc = pb.N;
  p.out_zero_point = static_cast<int32_t>(y_zero_point);
  p.out_min = relu ? static_cast<int32_t>(y_zero_point) : 0;
  p.out_max = 255;
  gemm::qgemm(p);
}

// min / max of x[0..n) (n >= 1) over threads, in blocks of kernels' minmax_f32: both NaN if any
// x is NaN (as torch.aminmax), else the exact extremes (the order of the blocks changes no value).
void minmax_f32_parallel(const float* x, int64_t n, float* mn, float* mx) {
  constexpr int64_t kBlock = int64_t{1} << 16;
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<float> lo(static_cast<size_t>(blocks)), hi(static_cast<size_t>(blocks));
  tensor::parallel_for(0, blocks, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t i = b * kBlock;
      QPLUGIN_ISA_CALL(minmax_f32, x + i, std::min(kBlock, n - i), &lo[b], &hi[b]);
    }
  });
  float l = lo[0], h = hi[0];
  for (int64_t b = 1; b < blocks; ++b) {  // a NaN, once met, stays
    if (std::isnan(lo[b]) || lo[b] < l) l = lo[b];
    if (std::isnan(hi[b]) || hi[b] > h) h = hi[b];
  }
  *mn = l;
  *mx = h;
}

}  // namespace

void linear_u8(const char* op, const uint8_t* x, int64_t M, double x_scale, int64_t x_zero_point,
               const LinearWeights& w, double y_scale, int64_t y_zero_point, bool relu, uint8_t* out) {
  check_linear_qparams(op, x_scale, x_zero_point, w.w_scale_max, y_scale, y_zero_point);
  if (M <= 0 || w.N <= 0) return;
  // mult[n] = float((sx / sy) * sw[n]), bias[n] = float(bias[n] / sy): cached per (sx, sy)
  const auto epi = w.static_epilogue(x_scale, y_scale);
  const gemm::PackedB pb = w.view(kernels::active_isa() == kernels::Isa::kAvx2);
  gemm_u8(x, M, x_zero_point, pb, w.w_zp.data(), w.w_zp_all_zero, epi->mult.data(),
          epi->bias.empty() ? nullptr : epi->bias.data(), y_zero_point, relu, out);
}

LinearWeightsView linear_weights_view(const LinearWeights& w) {
  LinearWeightsView v;
  if (w.fp16) {
    v.b.N = w.N;
    v.b.K = w.K;
    v.bias = w.bias.has_value() ? tensor::data<float>(*w.bias) : nullptr;
    v.fp16 = true;
    v.fp16_panels = w.fp16_panels.data();
    return v;
  }
  v.b = w.view(kernels::active_isa() == kernels::Isa::kAvx2);
  v.w_scale = w.w_scale.data();
  v.w_scale_max = w.w_scale_max;
  v.w_zp = w.w_zp.data();
  v.w_zp_all_zero = w.w_zp_all_zero;
  v.bias = w.bias.has_value() ? tensor::data<float>(*w.bias) : nullptr;
  return v;
}

void linear_u8_view(const char* op, const uint8_t* x, int64_t M, double x_scale, int64_t x_zero_point,
                    const LinearWeightsView& w, double y_scale, int64_t y_zero_point, bool relu, uint8_t* out) {
  check_linear_qparams(op, x_scale, x_zero_point, w.w_scale_max, y_scale, y_zero_point);
  const int64_t N = w.b.N;
  if (M <= 0 || N <= 0) return;
  thread_local std::vector<float> mult, bias;
  mult.resize(N);
  if (w.bias != nullptr) bias.resize(N);
  LinearWeights::epilogue_constants(x_scale, y_scale, w.w_scale, w.bias, N, mult.data(), bias.data());
  gemm_u8(x, M, x_zero_point, w.b, w.w_zp, w.w_zp_all_zero, mult.data(), w.bias != nullptr ? bias.data() : nullptr,
          y_zero_point, relu, out);
}

Tensor linear_dynamic_view(const char* op, const Tensor& x_in, const LinearWeightsView& w, bool reduce_range,
                           bool relu) {
  if (w.fp16) return linear_fp16_view(op, x_in, w, relu);
  const int64_t N = w.b.N;
  const int64_t K = w.b.K;
  std::vector<int64_t> out_sizes = x_in.sizes().vec();
  out_sizes.back() = N;
  Tensor out = tensor::empty(out_sizes, kFloat);
  if (out.numel() == 0) return out;
  const int64_t M = out.numel() / N;
  const int64_t numel = M * K;
  const Tensor x = tensor::contiguous(x_in);
  const float* xp = tensor::data<float>(x);
  // Activations up to 2^18 elements (1 MB of floats; e.g. 128 x 1024): min/max and
  // quantization in this thread, into a reused per-thread buffer: no ATen ops, no allocation,
  // and the GEMM is the call's only parallel region (torch's fbgemm path also finds min/max
  // serially). Each extra parallel region is a fork/join (on a loaded machine, a wait for a
  // descheduled worker: 128x1024x1024 measured 3x torch's time at 2 threads with three regions).
  // Larger activations: threaded min/max and quantization passes.
  constexpr int64_t kSmall = int64_t{1} << 18;
  const bool small = numel <= kSmall;
  // Activation qparams: torch's choice (fbgemm ChooseQuantizationParams) on [min, max] of X
  // (both NaN if X holds a NaN, as torch's aminmax).
  float xmin = 0.0f, xmax = 0.0f;
  if (numel > 0) {
    if (small) {
      QPLUGIN_ISA_CALL(minmax_f32, xp, numel, &xmin, &xmax);
    } else {
      minmax_f32_parallel(xp, numel, &xmin, &xmax);
    }
  }
  const QParams qp = choose_qparams(xmin, xmax, 0, 255, reduce_range);
  const float x_scale = static_cast<float>(qp.scale);
  const float inv = kernels::inv_scale_of(qp.scale);
  const int32_t zp = qp.zero_point;
  thread_local std::vector<uint8_t> small_xq;
  thread_local std::vector<float> mult;
  std::optional<Tensor> xq_big;
  uint8_t* qptr = nullptr;
  if (small) {
    if (static_cast<int64_t>(small_xq.size()) < numel) small_xq.resize(numel);
    qptr = small_xq.data();
    QPLUGIN_ISA_CALL(quantize_u8, xp, qptr, numel, inv, zp);
  } else {
    qptr = tensor::mutable_data<uint8_t>(xq_big.emplace(tensor::empty(std::vector<int64_t>{M, K}, kByte)));
    tensor::parallel_for(0, numel, 1 << 15, [&](int64_t b, int64_t e) {
      QPLUGIN_ISA_CALL(quantize_u8, xp + b, qptr + b, e - b, inv, zp);
    });
  }
  mult.resize(N);
  // float(w_scale[n]) as the packed params' w_scale_f
  for (int64_t n = 0; n < N; ++n) mult[n] = x_scale * static_cast<float>(w.w_scale[n]);
  gemm::QGemmParams p;
  p.M = M;
  p.a = qptr;
  p.lda = K;
  p.a_zero_point = zp;
  p.b = &w.b;
  p.b_zero_points = w.w_zp;
  p.b_zero_points_all_zero = w.w_zp_all_zero;
  p.multipliers = mult.data();
  p.bias = w.bias;
  p.kind = gemm::OutKind::kF32;
  p.out = tensor::mutable_data<float>(out);
  p.ldc = N;
  p.out_fmin = relu ? 0.0f : -std::numeric_limits<float>::infinity();
  gemm::qgemm(p);
  return out;
}

}  // namespace cpu
}  // namespace qplugin
