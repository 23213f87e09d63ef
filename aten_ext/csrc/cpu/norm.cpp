// CPU glue for layer_norm / group_norm / instance_norm / batch_norm2d / 3d: fold the float parameters into the
// kernels' per-element / per-channel constants, lay out, call kernels/.
#include "utils/torch_api.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "cpu/activation.h"
#include "kernels/dispatch.h"
#include "kernels/norm_kernel.h"
#include "utils/checks.h"
#include "utils/layout.h"

namespace qplugin {
namespace cpu {
namespace {

// The n values of a float32 / float64 parameter (check_norm_param) read in place: a converted
// copy (tensor::to(t, kDouble)) would cost an allocation and an elementwise pass per parameter per
// call, a sizeable share of a small batch_norm.
std::vector<double> to_doubles(const Tensor& t, int64_t n, double fill) {
  if (!t.defined()) return std::vector<double>(n, fill);
  const Tensor c = t.is_contiguous() ? t : tensor::contiguous(t);
  if (tensor::dtype(c) == kFloat) return std::vector<double>(tensor::data<float>(c), tensor::data<float>(c) + n);
  const Tensor d = tensor::to(c, kDouble);
  return std::vector<double>(tensor::data<double>(d), tensor::data<double>(d) + n);
}

// weight / bias folded with out_scale for the kernels (n entries each, float64 and float32).
struct FoldedNorm {
  std::vector<double> wq, bq;
  std::vector<float> wqf, bqf;
  double in_scale, eps;
  int32_t out_zp;

  FoldedNorm(const Tensor& weight, const Tensor& bias, int64_t n, double eps_, double in_scale_, double out_scale,
             int64_t out_zp_)
      : wq(to_doubles(weight, n, 1.0)),
        bq(to_doubles(bias, n, 0.0)),
        // The kernel's float64 steps: x = (q - zp) * s exactly, statistics of q.
        in_scale(static_cast<double>(static_cast<float>(in_scale_))),
        eps(eps_),
        out_zp(static_cast<int32_t>(out_zp_)) {
    for (int64_t j = 0; j < n; ++j) {
      wq[j] /= out_scale;
      bq[j] /= out_scale;
    }
    wqf.assign(wq.begin(), wq.end());
    bqf.assign(bq.begin(), bq.end());
  }
  kernels::LayerNormSpec spec() const {
    // NaN when a weight or bias is NaN (std::max would drop it): the kernel then runs the rows in
    // float64, where a NaN goes to the zero point on every path.
    double wmax = 0;
    for (size_t j = 0; j < wq.size(); ++j) {
      const double w = std::fabs(wq[j]), b = std::fabs(bq[j]);
      if (std::isnan(w) || std::isnan(b)) {
        wmax = std::numeric_limits<double>::quiet_NaN();
        break;
      }
      wmax = std::max({wmax, w, b});
    }
    return {in_scale, eps, wq.data(), bq.data(), wqf.data(), bqf.data(), out_zp, wmax};
  }
};

// Rows of m elements of x (contiguous) -> out, blocks of rows across threads:
// call(x_row_b, y_row_b, b, e) for rows [b, e). out may be strided (a copy at the end).
template <typename Call>
void for_row_blocks(const Tensor& x, const Tensor& out, int64_t rows, int64_t m, const Call& call) {
  const bool direct = out.is_contiguous();
  Tensor y = direct ? out : tensor::empty(x.sizes(), tensor::dtype(x));
  const char* xp = static_cast<const char*>(x.const_data_ptr());
  char* yp = static_cast<char*>(y.mutable_data_ptr());
  const int64_t row_bytes = m * static_cast<int64_t>(x.element_size());
  tensor::parallel_for(0, rows, std::max<int64_t>(1, (1 << 14) / m), [&](int64_t b, int64_t e) {
    call(xp + b * row_bytes, yp + b * row_bytes, b, e);
  });
  if (!direct) {
    tensor::copy_(out, y);
  }
}

// name##_u8 / _s8 / _s32 on the dtype of the data.
#define QPLUGIN_NORM_ROWS_CALL(dt, name, xp, yp, ...)                                                        \
  do {                                                                                                       \
    if ((dt) == kByte) {                                                                                     \
      QPLUGIN_ISA_CALL(name##_u8, static_cast<const uint8_t*>(xp), static_cast<uint8_t*>(yp), __VA_ARGS__);  \
    } else if ((dt) == kChar) {                                                                              \
      QPLUGIN_ISA_CALL(name##_s8, static_cast<const int8_t*>(xp), static_cast<int8_t*>(yp), __VA_ARGS__);    \
    } else {                                                                                                 \
      QPLUGIN_ISA_CALL(name##_s32, static_cast<const int32_t*>(xp), static_cast<int32_t*>(yp), __VA_ARGS__); \
    }                                                                                                        \
  } while (0)

// Per-channel loops over a tensor dense in its kept format (split sp around dim 1, C channels):
// call(offset, outer, channels, inner, first_channel) on blocks across threads.
template <typename Call>
void for_channel_blocks(const AxisSplit& sp, int64_t C, const Call& call) {
  constexpr int64_t kGrain = 1 << 15;  // elements per task
  if (sp.inner == 1) {
    // channels_last (or no spatial extent): blocks of whole pixels.
    tensor::parallel_for(0, sp.outer, std::max<int64_t>(1, kGrain / C), [&](int64_t b, int64_t e) {
      call(b * C, e - b, C, 1, 0);
    });
  } else {
    // contiguous: one row of the spatial extent per (n, c).
    tensor::parallel_for(0, sp.outer * C, std::max<int64_t>(1, kGrain / sp.inner), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) call(r * sp.inner, 1, 1, sp.inner, r % C);
    });
  }
}

}  // namespace

void layer_norm_int_out(const Tensor& data, const Tensor& out, IntArrayRef normalized_shape, const Tensor& weight,
                        const Tensor& bias, double eps, double in_scale, int64_t in_zp, double out_scale,
                        int64_t out_zp) {
  const Tensor x = tensor::contiguous(data);
  QP_ASSERT(out.sizes() == x.sizes() && tensor::dtype(out) == tensor::dtype(x));
  if (x.numel() == 0) return;
  int64_t m = 1;
  for (int64_t s : normalized_shape) m *= s;
  const int64_t rows = x.numel() / m;
  const FoldedNorm folded(weight, bias, m, eps, in_scale, out_scale, out_zp);
  const kernels::LayerNormSpec spec = folded.spec();
  const ScalarType dt = tensor::dtype(x);
  for_row_blocks(x, out, rows, m, [&](const void* xb, void* yb, int64_t b, int64_t e) {
    QPLUGIN_NORM_ROWS_CALL(dt, layer_norm, xb, yb, e - b, m, &spec);
  });
}

void batch_norm_int_out(const char* op, const Tensor& data, const Tensor& out, const Tensor& weight, const Tensor& bias,
                        const Tensor& mean, const Tensor& var, double eps, double in_scale, int64_t in_zp,
                        double out_scale, int64_t out_zp, bool relu) {
  const MemoryFormat fmt = kept_format(data);
  const Tensor x = tensor::contiguous(data, fmt);
  QP_ASSERT(x.dim() >= 2 && tensor::is_contiguous(out, fmt) && out.sizes() == x.sizes() &&
            tensor::dtype(out) == tensor::dtype(x));
  const int64_t C = x.size(1);
  const std::vector<double> w = to_doubles(weight, C, 1.0), bi = to_doubles(bias, C, 0.0);
  const std::vector<double> mu = to_doubles(mean, C, 0.0), va = to_doubles(var, C, 1.0);
  // y / out_scale + out_zp = q * A + B with
  //   g = w / sqrt(var + eps), A = s * g / out_scale, B = (bias - mean * g - zp * s * g) / out_scale + out_zp.
  const double s = static_cast<double>(static_cast<float>(in_scale));
  std::vector<double> A(C), B(C);
  for (int64_t c = 0; c < C; ++c) {
    const double g = w[c] / std::sqrt(va[c] + eps);
    check_requant_multiplier(op, "output_scale", out_scale, s * std::fabs(g),
                             "input scale * |weight| / sqrt(var + eps)");
    A[c] = s * g / out_scale;
    B[c] = (bi[c] - mu[c] * g - static_cast<double>(in_zp) * s * g) / out_scale + static_cast<double>(out_zp);
  }
  if (x.numel() == 0) return;
  const AxisSplit sp = axis_split(x.sizes(), 1, fmt);
  const ScalarType dt = tensor::dtype(x);
  std::vector<float> Af(A.begin(), A.end()), Bf(B.begin(), B.end());
  const void* xp = x.const_data_ptr();
  void* yp = out.mutable_data_ptr();
  const int32_t lo = relu ? static_cast<int32_t>(out_zp) : std::numeric_limits<int32_t>::min();
  auto call = [&](int64_t off, int64_t outer, int64_t channels, int64_t inner, int64_t c0) {
    if (dt == kByte) {
      QPLUGIN_ISA_CALL(channel_affine_u8, static_cast<const uint8_t*>(xp) + off, static_cast<uint8_t*>(yp) + off, outer,
                       channels, inner, Af.data() + c0, Bf.data() + c0, lo);
    } else if (dt == kChar) {
      QPLUGIN_ISA_CALL(channel_affine_s8, static_cast<const int8_t*>(xp) + off, static_cast<int8_t*>(yp) + off, outer,
                       channels, inner, Af.data() + c0, Bf.data() + c0, lo);
    } else {
      QPLUGIN_ISA_CALL(channel_affine_s32, static_cast<const int32_t*>(xp) + off, static_cast<int32_t*>(yp) + off,
                       outer, channels, inner, A.data() + c0, B.data() + c0, lo);
    }
  };
  for_channel_blocks(sp, C, call);
}

void group_norm_int_out(const Tensor& data, const Tensor& out, int64_t groups, const Tensor& weight, const Tensor& bias,
                        double eps, double in_scale, int64_t in_zp, double out_scale, int64_t out_zp) {
  const Tensor x = tensor::contiguous(data);
  QP_ASSERT(x.dim() >= 2 && out.sizes() == x.sizes() && tensor::dtype(out) == tensor::dtype(x));
  if (x.numel() == 0) return;
  const int64_t C = x.size(1);
  QP_ASSERT(groups > 0 && C % groups == 0);
  const int64_t inner = x.numel() / (x.size(0) * C);
  const FoldedNorm folded(weight, bias, C, eps, in_scale, out_scale, out_zp);
  const kernels::GroupNormSpec spec{folded.spec(), groups, C / groups, inner};
  const int64_t m = (C / groups) * inner;
  const ScalarType dt = tensor::dtype(x);
  for_row_blocks(x, out, x.size(0) * groups, m, [&](const void* xb, void* yb, int64_t b, int64_t e) {
    QPLUGIN_NORM_ROWS_CALL(dt, group_norm, xb, yb, b, e - b, &spec);
  });
}

void prelu_int_out(const char* op, const Tensor& data, const Tensor& out, const std::vector<double>& slopes,
                   double in_scale, int64_t in_zp, double out_scale, int64_t out_zp) {
  double steepest = 1.0;  // the larger of the identity branch and the slopes
  for (double a : slopes) steepest = std::max(steepest, std::fabs(a));
  check_requant_multiplier(op, "output_scale", out_scale, in_scale * steepest, "input scale * max(1, |slope|)");
  const MemoryFormat fmt = kept_format(data);
  const Tensor x = tensor::contiguous(data, fmt);
  QP_ASSERT(tensor::is_contiguous(out, fmt) && out.sizes() == x.sizes() && tensor::dtype(out) == tensor::dtype(x) &&
            (tensor::dtype(x) == kByte || tensor::dtype(x) == kChar));
  if (x.numel() == 0) return;
  // One slope for every element: a single "channel" over the flat data.
  const bool shared = slopes.size() == 1;
  const int64_t C = shared ? 1 : x.size(1);
  const double s = static_cast<double>(static_cast<float>(in_scale));
  const float ap = static_cast<float>(s / out_scale);
  std::vector<float> an(C);
  for (int64_t c = 0; c < C; ++c) an[c] = static_cast<float>(s * slopes[c] / out_scale);
  const void* xp = x.const_data_ptr();
  void* yp = out.mutable_data_ptr();
  const bool u8 = tensor::dtype(x) == kByte;
  const int32_t zp = static_cast<int32_t>(in_zp), oz = static_cast<int32_t>(out_zp);
  auto call = [&](int64_t off, int64_t outer, int64_t channels, int64_t inner, int64_t c0) {
    if (u8) {
      QPLUGIN_ISA_CALL(channel_prelu_u8, static_cast<const uint8_t*>(xp) + off, static_cast<uint8_t*>(yp) + off, outer,
                       channels, inner, zp, ap, an.data() + c0, oz);
    } else {
      QPLUGIN_ISA_CALL(channel_prelu_s8, static_cast<const int8_t*>(xp) + off, static_cast<int8_t*>(yp) + off, outer,
                       channels, inner, zp, ap, an.data() + c0, oz);
    }
  };
  if (shared) {
    // flat blocks of one "channel"
    tensor::parallel_for(0, x.numel(), 1 << 15, [&](int64_t b, int64_t e) {
      call(b, 1, 1, e - b, 0);
    });
  } else {
    for_channel_blocks(axis_split(x.sizes(), 1, fmt), C, call);
  }
}

// A float parameter tensor of the given shape (undefined allowed when optional).
void check_norm_param(const char* op, const char* arg, const Tensor& t, IntArrayRef shape) {
  if (!t.defined()) return;
  QP_CHECK(tensor::dtype(t) == kFloat || tensor::dtype(t) == kDouble, "qplugin::", op, ": ", arg,
           " should be a float32 or float64 tensor, got dtype ", tensor::dtype(t));
  QP_CHECK_VALUE(t.sizes() == shape, "qplugin::", op, ": ", arg, " should have shape ", shape, ", got ", t.sizes());
}

void check_norm_qparams(const char* op, double in_scale, int64_t in_zp, double eps, double out_scale, int64_t out_zp,
                        ScalarType t) {
  check_scale(op, "input scale", in_scale);
  check_zero_point(op, "input zero_point", in_zp, t);
  check_scale(op, "output_scale", out_scale);
  check_zero_point(op, "output_zero_point", out_zp, t);
  QP_CHECK_VALUE(std::isfinite(eps) && eps >= 0, "qplugin::", op, ": eps should be a finite non-negative number, got ",
                 eps);
}

int64_t check_group_norm_args(const char* op, const char* arg, IntArrayRef sizes, std::optional<int64_t> num_groups,
                              const Tensor& weight, const Tensor& bias) {
  QP_CHECK_VALUE(sizes.size() >= 2, "qplugin::", op, ": ", arg, " should have at least 2 dims [N, C, ...], got ",
                 sizes.size(), " dims (shape ", sizes, ")");
  const int64_t C = sizes[1];
  const int64_t groups = num_groups.has_value() ? *num_groups : C;
  if (num_groups.has_value()) {
    QP_CHECK_VALUE(groups > 0 && C % groups == 0, "qplugin::", op,
                   ": num_groups should be positive and divide the number of channels ", C, ", got ", groups);
  }
  check_norm_param(op, "weight", weight, {C});
  check_norm_param(op, "bias", bias, {C});
  return groups;
}

std::vector<double> prelu_slopes(const char* op, const char* arg, IntArrayRef x_sizes, const Tensor& w) {
  const int64_t C = x_sizes.size() >= 2 ? x_sizes[1] : 1;
  QP_CHECK_VALUE(w.numel() == 1 || (x_sizes.size() >= 2 && w.numel() == C), "qplugin::", op,
                 ": weight should "
                 "have 1 or ",
                 C, " (", arg, ".size(1)) elements, got ", w.numel());
  const Tensor wd = tensor::contiguous(tensor::to(w, kDouble));
  std::vector<double> slopes(tensor::data<double>(wd), tensor::data<double>(wd) + wd.numel());
  for (double v : slopes) {
    QP_CHECK_VALUE(std::isfinite(v), "qplugin::", op, ": weight should be finite, got ", v);
  }
  return slopes;
}

void check_layer_norm_args(const char* op, const char* arg, IntArrayRef sizes, IntArrayRef normalized_shape,
                           const Tensor& weight, const Tensor& bias) {
  const int64_t k = static_cast<int64_t>(normalized_shape.size());
  const int64_t dim = static_cast<int64_t>(sizes.size());
  QP_CHECK_VALUE(k <= dim && sizes.slice(dim - k) == normalized_shape, "qplugin::", op,
                 ": normalized_shape should match the last dims of ", arg, " (shape ", sizes, "), got ",
                 normalized_shape);
  check_norm_param(op, "weight", weight, normalized_shape);
  check_norm_param(op, "bias", bias, normalized_shape);
}

void check_batch_norm_args(const char* op, const char* arg, IntArrayRef sizes, int64_t dims, const Tensor& weight,
                           const Tensor& bias, const Tensor& mean, const Tensor& var, double eps) {
  QP_CHECK_VALUE(static_cast<int64_t>(sizes.size()) == dims, "qplugin::", op, ": ", arg, " should be ", dims, "-D ",
                 dims == 4 ? "[N, C, H, W]" : "[N, C, D, H, W]", ", got ", sizes.size(), " dims (shape ", sizes, ")");
  const int64_t C = sizes[1];
  check_norm_param(op, "weight", weight, {C});
  check_norm_param(op, "bias", bias, {C});
  QP_CHECK(mean.defined() && var.defined(), "qplugin::", op, ": mean and var should be defined");
  check_norm_param(op, "mean", mean, {C});
  check_norm_param(op, "var", var, {C});
  const std::vector<double> vd = to_doubles(var, C, 1.0);
  for (int64_t c = 0; c < C; ++c) {
    const double v = vd[c];
    QP_CHECK_VALUE(v + eps > 0 && std::isfinite(v), "qplugin::", op,
                   ": var + eps should be positive and "
                   "finite for every channel, got var[",
                   c, "] = ", v, " and eps ", eps);
  }
}

}  // namespace cpu

}  // namespace qplugin
