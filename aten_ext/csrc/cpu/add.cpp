// CPU glue for add / add_relu / mul / mul_relu and the scalar variants:
// validate, broadcast, keep the memory format, call kernels/add_kernel.h.
#include "utils/torch_api.h"

#include <algorithm>
#include <cmath>

#include "cpu/activation.h"
#include "cpu/elementwise.h"
#include "cpu/tensor_iter.h"
#include "kernels/add_kernel.h"
#include "kernels/dispatch.h"
#include "utils/checks.h"
#include "utils/layout.h"

namespace qplugin {
namespace cpu {
namespace {

constexpr int64_t kGrain = 1 << 15;  // elements per task

kernels::BinaryParams binary_params(BinaryKind kind, bool relu, ScalarType qt, QP qa, QP qb, QP qo) {
  kernels::BinaryParams p{};
  p.za = static_cast<int32_t>(qa.zero_point);
  p.zb = static_cast<int32_t>(qb.zero_point);
  p.zo = static_cast<int32_t>(qo.zero_point);
  if (kind == BinaryKind::kAdd) {
    p.da = qa.scale / qo.scale;
    p.db = qb.scale / qo.scale;
  } else {
    p.da = qa.scale * qb.scale / qo.scale;
    p.db = 0.0;
  }
  p.fa = static_cast<float>(p.da);
  p.fb = static_cast<float>(p.db);
  const auto r = qrange(qt);
  p.lo = static_cast<int32_t>(relu ? std::max<int64_t>(r.first, qo.zero_point) : r.first);
  p.hi = static_cast<int32_t>(r.second);
  return p;
}

void run_binary(BinaryKind kind, ScalarType qt, const kernels::Strided& s, int64_t n, const kernels::BinaryParams& p) {
  const bool add = kind == BinaryKind::kAdd;
  if (qt == kByte) {
    add ? QPLUGIN_ISA_CALL(add_u8, s, n, p) : QPLUGIN_ISA_CALL(mul_u8, s, n, p);
  } else if (qt == kChar) {
    add ? QPLUGIN_ISA_CALL(add_s8, s, n, p) : QPLUGIN_ISA_CALL(mul_s8, s, n, p);
  } else {
    add ? QPLUGIN_ISA_CALL(add_s32, s, n, p) : QPLUGIN_ISA_CALL(mul_s32, s, n, p);
  }
}

}  // namespace

ScalarType int_dtype_of(const char* op, const char* arg, const Tensor& t) {
  const ScalarType dt = tensor::dtype(t);
  QP_CHECK(is_plain_int_dtype(dt), "qplugin::", op, ": ", arg, " should be a uint8, int8 or int32 tensor, got dtype ",
           dt);
  return dt;
}

std::vector<int64_t> broadcast_shape(const char* op, IntArrayRef a, IntArrayRef b) {
  const size_t n = std::max(a.size(), b.size());
  std::vector<int64_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    QP_CHECK(da == db || da == 1 || db == 1, "qplugin::", op,
             ": the shapes of the two inputs should be broadcastable, got ", a, " and ", b);
    out[i] = da == 1 ? db : da;
  }
  return out;
}

MemoryFormat binary_format(const Tensor& a, const Tensor& b, IntArrayRef out) {
  if (a.sizes() == out) return kept_format(a);
  if (b.sizes() == out) return kept_format(b);
  return MemoryFormat::Contiguous;
}

void binary_into(const Names& nm, BinaryKind kind, bool relu, const Tensor& a, QP qa, const Tensor& b, QP qb, QP qo,
                 const Tensor& out) {
  const char* op = nm.op;
  const ScalarType qt = int_dtype_of(op, nm.a, a);
  QP_ASSERT(tensor::dtype(b) == tensor::dtype(a) && tensor::dtype(out) == tensor::dtype(a));
  if (kind == BinaryKind::kAdd) {
    check_requant_multiplier(op, "scale", qo.scale, qa.scale, nm.scale(nm.a).c_str());
    check_requant_multiplier(op, "scale", qo.scale, qb.scale, nm.scale(nm.b).c_str());
  } else {
    check_requant_multiplier(op, "scale", qo.scale, qa.scale * qb.scale,
                             (nm.scale(nm.a) + " * " + nm.scale(nm.b)).c_str());
  }
  const int64_t n = out.numel();
  if (n == 0) return;
  const kernels::BinaryParams p = binary_params(kind, relu, qt, qa, qb, qo);
  const MemoryFormat fmt = kept_format(out);
  const bool dense_out = tensor::is_contiguous(out, fmt);
  const bool dense_a = a.sizes() == out.sizes() && tensor::is_contiguous(a, fmt);
  const bool dense_b = b.sizes() == out.sizes() && tensor::is_contiguous(b, fmt);
  const size_t es = a.element_size();
  if (dense_out && (dense_a || a.numel() == 1) && (dense_b || b.numel() == 1)) {
    // Flat walk: both dense in the output's layout, or one a single value.
    const char* ap = static_cast<const char*>(a.const_data_ptr());
    const char* bp = static_cast<const char*>(b.const_data_ptr());
    char* yp = static_cast<char*>(out.mutable_data_ptr());
    const int64_t as = dense_a ? 1 : 0, bs = dense_b ? 1 : 0;
    tensor::parallel_for(0, n, kGrain, [&](int64_t lo, int64_t hi) {
      const kernels::Strided s{ap + lo * as * es, as, bp + lo * bs * es, bs, yp + lo * es, 1};
      run_binary(kind, qt, s, hi - lo, p);
    });
    return;
  }
  const int64_t esz = static_cast<int64_t>(es);
  for_each_row<3>(
      op, out, {&a, &b},
      [&](char** data, const int64_t* strides, int64_t len) {
        const kernels::Strided s{data[1], strides[1] / esz, data[2], strides[2] / esz, data[0], strides[0] / esz};
        run_binary(kind, qt, s, len, p);
      },
      kGrain);
}

namespace {

Tensor binary_int(const Names& nm, BinaryKind kind, bool relu, const Tensor& a, QP qa, const Tensor& b, QP qb, QP qo) {
  const char* op = nm.op;
  const ScalarType qt = int_dtype_of(op, nm.a, a);
  QP_CHECK(tensor::dtype(b) == tensor::dtype(a), "qplugin::", op, ": ", nm.b, " should have the dtype of ", nm.a, " (",
           tensor::dtype(a), "), got ", tensor::dtype(b));
  check_scale(op, nm.scale(nm.a).c_str(), qa.scale);
  check_scale(op, nm.scale(nm.b).c_str(), qb.scale);
  check_scale(op, "scale", qo.scale);
  check_zero_point(op, nm.zero_point(nm.a).c_str(), qa.zero_point, qt);
  check_zero_point(op, nm.zero_point(nm.b).c_str(), qb.zero_point, qt);
  check_zero_point(op, "zero_point", qo.zero_point, qt);
  const auto shape = broadcast_shape(op, a.sizes(), b.sizes());
  Tensor out = tensor::empty(shape, tensor::dtype(a), binary_format(a, b, shape));
  binary_into(nm, kind, relu, a, qa, b, qb, qo, out);
  return out;
}

}  // namespace

Tensor add_int(const Names& nm, const Tensor& a, QP qa, const Tensor& b, QP qb, QP qo, bool relu) {
  return binary_int(nm, BinaryKind::kAdd, relu, a, qa, b, qb, qo);
}
Tensor mul_int(const Names& nm, const Tensor& a, QP qa, const Tensor& b, QP qb, QP qo, bool relu) {
  return binary_int(nm, BinaryKind::kMul, relu, a, qa, b, qb, qo);
}

// ---- scalar variants (torch's quantized::add_scalar / mul_scalar qparams) ----

namespace {

int64_t scalar_in_steps(const char* op, QP qx, double c) {
  const double steps = std::nearbyint(c / qx.scale);
  QP_CHECK_VALUE(std::abs(steps) < 2147483648.0, "qplugin::", op, ": b / scale should be within the int32 range, got ",
                 c, " / ", qx.scale);
  return static_cast<int64_t>(steps);
}

// Runs fn(x_ptr, y_ptr, len) over the flat data of x (made dense in out's format).
template <typename F>
void unary_walk(const Tensor& x, const Tensor& out, F fn) {
  const Tensor xc = tensor::contiguous(x, kept_format(out));
  QP_ASSERT(tensor::is_contiguous(out, kept_format(out)) && xc.sizes() == out.sizes());
  const char* xp = static_cast<const char*>(xc.const_data_ptr());
  char* yp = static_cast<char*>(out.mutable_data_ptr());
  const int64_t es = static_cast<int64_t>(xc.element_size());
  tensor::parallel_for(0, xc.numel(), kGrain, [&](int64_t lo, int64_t hi) {
    fn(xp + lo * es, yp + lo * es, hi - lo);
  });
}

void flip_clamp_into(const Tensor& x, const Tensor& out, bool flip, int32_t k, int32_t lo, int32_t hi) {
  const ScalarType dt = tensor::dtype(x);
  unary_walk(x, out, [&](const char* xp, char* yp, int64_t n) {
    if (dt == kByte) {
      QPLUGIN_ISA_CALL(flip_clamp_u8, reinterpret_cast<const uint8_t*>(xp), reinterpret_cast<uint8_t*>(yp), n, flip, k,
                       lo, hi);
    } else if (dt == kChar) {
      QPLUGIN_ISA_CALL(flip_clamp_s8, reinterpret_cast<const int8_t*>(xp), reinterpret_cast<int8_t*>(yp), n, flip, k,
                       lo, hi);
    } else {
      QPLUGIN_ISA_CALL(flip_clamp_s32, reinterpret_cast<const int32_t*>(xp), reinterpret_cast<int32_t*>(yp), n, flip, k,
                       lo, hi);
    }
  });
}

}  // namespace

QP add_scalar_qparams(const char* op, QP qx, ScalarType qt, double b) {
  const double c = finite_scalar(op, "b", b);
  const int64_t c_q = scalar_in_steps(op, qx, c);
  const auto r = qrange(qt);
  const int64_t qmin = r.first, qmax = r.second, z = qx.zero_point;
  QP out;
  if (qmin > z - c_q) {
    out = {(static_cast<double>(qmax) - (z - c_q)) / (static_cast<double>(qmax) - qmin) * qx.scale, qmin};
  } else if (qmax < z - c_q) {
    out = {(static_cast<double>(z - c_q) - qmin) / (static_cast<double>(qmax) - qmin) * qx.scale, qmax};
  } else {
    out = {qx.scale, z - c_q};
  }
  check_scale(op, "the output scale", out.scale);
  return out;
}

void add_scalar_into(const Names& nm, const Tensor& x, QP qx, double b, bool relu, const Tensor& out) {
  const char* op = nm.op;
  const ScalarType qt = int_dtype_of(op, nm.a, x);
  const QP qo = add_scalar_qparams(op, qx, qt, b);
  if (x.numel() == 0) return;
  const auto r = qrange(qt);
  const int32_t lo = static_cast<int32_t>(relu ? std::max<int64_t>(r.first, qo.zero_point) : r.first);
  const int32_t hi = static_cast<int32_t>(r.second);
  if (qo.scale == qx.scale) {  // only the zero point moves: a copy (+ relu)
    flip_clamp_into(x, out, false, 0, lo, hi);
    return;
  }
  const int64_t c_q = scalar_in_steps(op, qx, finite_scalar(op, "b", b));
  const float m = static_cast<float>(qx.scale) * (1.0f / static_cast<float>(qo.scale));
  const int32_t zi = static_cast<int32_t>(qx.zero_point), zo = static_cast<int32_t>(qo.zero_point);
  const ScalarType dt = tensor::dtype(x);
  unary_walk(x, out, [&](const char* xp, char* yp, int64_t n) {
    if (dt == kByte) {
      QPLUGIN_ISA_CALL(add_scalar_requant_u8, reinterpret_cast<const uint8_t*>(xp), reinterpret_cast<uint8_t*>(yp), n,
                       zi, c_q, m, zo, lo, hi);
    } else if (dt == kChar) {
      QPLUGIN_ISA_CALL(add_scalar_requant_s8, reinterpret_cast<const int8_t*>(xp), reinterpret_cast<int8_t*>(yp), n, zi,
                       c_q, m, zo, lo, hi);
    } else {
      QPLUGIN_ISA_CALL(add_scalar_requant_s32, reinterpret_cast<const int32_t*>(xp), reinterpret_cast<int32_t*>(yp), n,
                       zi, c_q, qx.scale / qo.scale, zo, lo, hi);
    }
  });
}

QP mul_scalar_qparams(const char* op, QP qx, ScalarType qt, double b) {
  const double c = finite_scalar(op, "b", b);
  const auto r = qrange(qt);
  QP out;
  if (c > 0.0) {
    out = {c * qx.scale, qx.zero_point};
  } else if (c == 0.0) {
    out = {1.0, 0};
  } else {
    out = {std::abs(c) * qx.scale, r.second - (qx.zero_point - r.first)};
  }
  check_scale(op, "the output scale (scale * |b|)", out.scale);
  return out;
}

void mul_scalar_into(const Names& nm, const Tensor& x, QP qx, double b, bool relu, const Tensor& out) {
  const char* op = nm.op;
  const ScalarType qt = int_dtype_of(op, nm.a, x);
  const QP qo = mul_scalar_qparams(op, qx, qt, b);
  if (x.numel() == 0) return;
  const double c = finite_scalar(op, "b", b);
  const auto r = qrange(qt);
  const int32_t lo = static_cast<int32_t>(relu ? std::max<int64_t>(r.first, qo.zero_point) : r.first);
  const int32_t hi = static_cast<int32_t>(r.second);
  if (c == 0.0) {
    tensor::zero_(out);
    return;
  }
  flip_clamp_into(x, out, c < 0.0, static_cast<int32_t>(r.first + r.second), lo, hi);
}

}  // namespace cpu

}  // namespace qplugin
