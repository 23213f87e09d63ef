// LinearWeights: packing from int8 or float weights, the epilogue constants, unpacking.
#include "cpu/linear_weights.h"

#include <algorithm>
#include <string>

#include "kernels/linear_fp16_kernel.h"
#include "utils/checks.h"

namespace qplugin {

namespace gemm = kernels::gemm;

namespace {

// The bias of either weight kind: float32 [N], kept contiguous (shared with the caller).
std::optional<Tensor> checked_bias(const char* op, const std::optional<Tensor>& bias, int64_t N) {
  if (!bias.has_value() || !bias->defined()) return std::nullopt;
  const Tensor& b = *bias;
  QP_CHECK(tensor::dtype(b) == kFloat, "qplugin::", op, ": B should be a float32 tensor, got dtype ", tensor::dtype(b));
  QP_CHECK_VALUE(b.dim() == 1 && b.size(0) == N, "qplugin::", op, ": B should have shape [", N,
                 "] (out_features), got ", b.sizes());
  return tensor::contiguous(b);
}

constexpr float kFp16Max = 65504.0f;

}  // namespace

void LinearWeights::check_int8(const char* op) const {
  QP_CHECK(!fp16, "qplugin::", op,
           ": W_prepack should hold qint8 weights (from linear_prepack), got float16 weights "
           "(from linear_prepack_fp16; use linear_dynamic_fp16 / linear_unpack_fp16)");
}

void LinearWeights::check_fp16(const char* op) const {
  QP_CHECK(fp16, "qplugin::", op,
           ": W_prepack should hold float16 weights (from linear_prepack_fp16), got qint8 weights "
           "(from linear_prepack; use linear_dynamic / linear_unpack)");
}

void LinearWeights::init_fp16(const char* op, const Tensor& weight, const std::optional<Tensor>& bias) {
  QP_CHECK(weight.defined() && (tensor::dtype(weight) == kFloat || tensor::dtype(weight) == kHalf), "qplugin::", op,
           ": W should be a float32 or float16 tensor, got ",
           weight.defined() ? "dtype " + std::string(dtype_name(tensor::dtype(weight)))
                            : std::string("an undefined tensor"));
  QP_CHECK_VALUE(weight.dim() == 2, "qplugin::", op, ": W should be 2-D [out_features, in_features], got shape ",
                 weight.sizes());
  const int64_t N = weight.size(0);
  const int64_t K = weight.size(1);
  LinearWeights* p = this;  // the fields (locals and arguments share their names)
  p->N = N;
  p->K = K;
  p->fp16 = true;
  p->bias = checked_bias(op, bias, N);
  Tensor w16;
  if (tensor::dtype(weight) == kHalf) {
    w16 = tensor::contiguous(weight);
  } else {
    // torch's HandleWeightsSaturation: clamp to the float16 range (a warning when it changes a value)
    const Tensor w = tensor::contiguous(weight);
    Tensor clamped = tensor::empty(w.sizes(), kFloat);
    const float* wp = tensor::data<float>(w);
    float* cp = tensor::mutable_data<float>(clamped);
    bool saturates = false;
    for (int64_t i = 0; i < w.numel(); ++i) {
      const float v = wp[i];  // NaN stays NaN, bit for bit
      saturates = saturates || v > kFp16Max || v < -kFp16Max;
      cp[i] = v > kFp16Max ? kFp16Max : v < -kFp16Max ? -kFp16Max : v;
    }
    if (saturates) {
      QP_WARN("qplugin::", op,
              ": W has values outside the float16 range [-65504, 65504]; they saturate to "
              "+-65504 (as torch's linear_prepack_fp16)");
    }
    w16 = tensor::to(clamped, kHalf);  // round to nearest even
  }
  const int64_t P = (N + kernels::kFp16Panel - 1) / kernels::kFp16Panel;
  p->fp16_panels.assign(static_cast<size_t>(P * K * kernels::kFp16Panel), 0);
  const uint16_t* src = reinterpret_cast<const uint16_t*>(tensor::data<Half>(w16));
  for (int64_t n = 0; n < N; ++n) {
    const int64_t panel = n / kernels::kFp16Panel, j = n % kernels::kFp16Panel;
    uint16_t* dst = p->fp16_panels.data() + panel * K * kernels::kFp16Panel + j;
    for (int64_t k = 0; k < K; ++k) dst[k * kernels::kFp16Panel] = src[n * K + k];
  }
}

int64_t LinearWeights::packed_bytes() const {
  const auto nbytes = [](const Tensor& t) -> int64_t {
    return t.defined() ? t.numel() * static_cast<int64_t>(t.element_size()) : 0;
  };
  int64_t n = packed.nbytes() + nbytes(scales) + nbytes(zero_points) +
              static_cast<int64_t>(fp16_panels.size() * sizeof(uint16_t));
  n += static_cast<int64_t>(w_scale.size() * sizeof(double) + w_zp.size() * sizeof(int32_t));
  return n;
}

Tensor LinearWeights::weight_fp16() const {
  Tensor w = tensor::empty(std::vector<int64_t>{N, K}, kHalf);
  uint16_t* dst = reinterpret_cast<uint16_t*>(tensor::mutable_data<Half>(w));
  for (int64_t n = 0; n < N; ++n) {
    const int64_t panel = n / kernels::kFp16Panel, j = n % kernels::kFp16Panel;
    const uint16_t* src = fp16_panels.data() + panel * K * kernels::kFp16Panel + j;
    for (int64_t k = 0; k < K; ++k) dst[n * K + k] = src[k * kernels::kFp16Panel];
  }
  return w;
}

std::shared_ptr<const LinearWeights::StaticEpilogue> LinearWeights::static_epilogue(double x_scale,
                                                                                    double y_scale) const {
  // the bias tensor is shared with the caller (as torch's packed weights do): an in-place
  // change bumps its version counter and refreshes the cache
  // (inference tensors have no version counter: then the constants are recomputed per call)
  const std::optional<int64_t> version = bias.has_value() ? tensor::version(*bias) : std::optional<int64_t>(0);
  const bool cacheable = version.has_value();
  const int64_t bias_version = cacheable ? *version : 0;
  if (cacheable) {
    std::lock_guard<std::mutex> lock(epilogue_mu_);
    if (epilogue_ && epilogue_->x_scale == x_scale && epilogue_->y_scale == y_scale &&
        epilogue_->bias_version == bias_version) {
      return epilogue_;
    }
  }
  auto e = std::make_shared<StaticEpilogue>();
  e->x_scale = x_scale;
  e->y_scale = y_scale;
  e->bias_version = bias_version;
  e->mult.resize(N);
  if (bias.has_value()) e->bias.resize(N);
  epilogue_constants(x_scale, y_scale, w_scale.data(), bias.has_value() ? tensor::data<float>(*bias) : nullptr, N,
                     e->mult.data(), e->bias.data());
  std::shared_ptr<const StaticEpilogue> r = std::move(e);
  if (cacheable) {
    std::lock_guard<std::mutex> lock(epilogue_mu_);
    epilogue_ = r;
  }
  return r;
}

void LinearWeights::epilogue_constants(double x_scale, double y_scale, const double* w_scale, const float* bias,
                                       int64_t N, float* mult, float* bias_out) {
  // double math, one rounding to float each (multiplications by double reciprocals: the
  // difference from dividing is far below float resolution)
  const double ratio = x_scale / y_scale;
  const double inv_y = 1.0 / y_scale;
  for (int64_t n = 0; n < N; ++n) mult[n] = static_cast<float>(ratio * w_scale[n]);
  if (bias != nullptr) {
    for (int64_t n = 0; n < N; ++n) bias_out[n] = static_cast<float>(static_cast<double>(bias[n]) * inv_y);
  }
}

void LinearWeights::init_int8(const char* op, const Tensor& w_int8, const Tensor& scales, const Tensor& zero_points,
                              bool per_channel, const std::optional<Tensor>& bias) {
  QP_CHECK(w_int8.defined() && tensor::dtype(w_int8) == kChar, "qplugin::", op,
           ": weight data should be an int8 tensor, got ",
           w_int8.defined() ? dtype_name(tensor::dtype(w_int8)) : "an undefined tensor");
  QP_CHECK_VALUE(w_int8.dim() == 2, "qplugin::", op, ": W should be 2-D [out_features, in_features], got shape ",
                 w_int8.sizes());
  const int64_t N = w_int8.size(0);
  const int64_t K = w_int8.size(1);
  QP_CHECK_VALUE(K <= gemm::kMaxK, "qplugin::", op, ": in_features should be at most ", gemm::kMaxK,
                 " (int32 accumulation stays exact up to there), got ", K);
  const int64_t nq = per_channel ? N : 1;
  QP_CHECK(scales.defined() && tensor::dtype(scales) == kDouble, "qplugin::", op,
           ": scales should be a float64 tensor, got ",
           scales.defined() ? dtype_name(tensor::dtype(scales)) : "an undefined tensor");
  QP_CHECK(zero_points.defined() && tensor::dtype(zero_points) == kLong, "qplugin::", op,
           ": zero_points should be an int64 tensor, got ",
           zero_points.defined() ? dtype_name(tensor::dtype(zero_points)) : "an undefined tensor");
  QP_CHECK_VALUE(scales.dim() == 1 && scales.numel() == nq, "qplugin::", op, ": scales should have shape [", nq,
                 "], got ", scales.sizes());
  QP_CHECK_VALUE(zero_points.dim() == 1 && zero_points.numel() == nq, "qplugin::", op,
                 ": zero_points should have shape [", nq, "], got ", zero_points.sizes());
  LinearWeights* p = this;  // the fields (locals and arguments share their names)
  p->N = N;
  p->K = K;
  p->per_channel = per_channel;
  p->scales = tensor::clone(tensor::contiguous(scales));
  p->zero_points = tensor::clone(tensor::contiguous(zero_points));
  const double* s = tensor::data<double>(p->scales);
  const int64_t* z = tensor::data<int64_t>(p->zero_points);
  for (int64_t i = 0; i < nq; ++i) {
    // the rule of every scale (a float32 reciprocal too: 1e-45 is rejected as elsewhere)
    check_scale(op, per_channel ? ("W scales[" + std::to_string(i) + "]").c_str() : "W scale", s[i]);
    QP_CHECK_VALUE(z[i] >= -128 && z[i] <= 127, "qplugin::", op, ": W zero_point",
                   per_channel ? "s[" + std::to_string(i) + "]" : std::string(),
                   " should be in [-128, 127] for torch.qint8, got ", z[i]);
  }
  p->w_scale.resize(N);
  p->w_zp.resize(N);
  for (int64_t n = 0; n < N; ++n) {
    p->w_scale[n] = s[per_channel ? n : 0];
    p->w_scale_max = std::max(p->w_scale_max, p->w_scale[n]);
    p->w_scale_f.push_back(static_cast<float>(p->w_scale[n]));
    p->w_zp[n] = static_cast<int32_t>(z[per_channel ? n : 0]);
    if (p->w_zp[n] != 0) p->w_zp_all_zero = false;
  }
  p->bias = checked_bias(op, bias, N);
  const Tensor w = tensor::contiguous(w_int8);
  p->packed.pack(tensor::data<int8_t>(w), K, 1, K, N);
}

Tensor LinearWeights::weight_int8() const {
  Tensor w = tensor::empty(std::vector<int64_t>{N, K}, kChar);
  if (N * K > 0) gemm::unpack_b(view(), tensor::mutable_data<int8_t>(w));
  return w;
}

}  // namespace qplugin
