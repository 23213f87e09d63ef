// CPU glue for the comparators. The represented real value of q is
// deq(q) = float(q - zp) * float(scale) (aten's dequantize), non-decreasing in q,
// so every comparison becomes an exact integer test (kernels/compare_kernel.h):
//  - tensor vs scalar: the set of q with deq(q) OP c is an interval of q's grid,
//    found by binary search with deq itself (no tolerance, no whole-tensor dequantize);
//  - tensor vs tensor, 8-bit: each side's 256 values get their rank in the sorted
//    union of both sides' values, so deq_a(a) OP deq_b(b) <=> rank_a(a) OP rank_b(b);
//    when both rank maps are shifts of q (e.g. equal scales) no table is needed;
//  - qint32 (either side, or the tensor of a .Scalar form): float32 dequantize is not
//    injective once |q - zp| > 2^24, so values compare exactly instead: (q - zp) * scale
//    with the double scale, against the other side's exact value or the scalar as a
//    double (utils/exact_real.h); the .Scalar interval is found by the same binary search.
//    8-bit values are compared as torch compares x.dequantize() (exact in q: float32
//    represents every q - zp, and the product is monotone).
#include "utils/torch_api.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "cpu/elementwise.h"
#include "cpu/tensor_iter.h"
#include "kernels/compare_kernel.h"
#include "kernels/dispatch.h"
#include "kernels/quantize_math.h"
#include "utils/checks.h"
#include "utils/exact_real.h"
#include "utils/layout.h"

namespace qplugin {
namespace cpu {
namespace {

constexpr int64_t kGrain = 1 << 15;

struct Deq {
  float scale;
  int64_t zp;
  float operator()(int64_t q) const { return static_cast<float>(q - zp) * scale; }
};

// {lo, hi, invert} on d for "d OP 0" where d = key_a - key_b.
kernels::CmpRange diff_range(CmpOp op) {
  constexpr int32_t kMin = std::numeric_limits<int32_t>::min(), kMax = std::numeric_limits<int32_t>::max();
  switch (op) {
    case CmpOp::kEq: return {0, 0, false};
    case CmpOp::kNe: return {0, 0, true};
    case CmpOp::kGe: return {0, kMax, false};
    case CmpOp::kLe: return {kMin, 0, false};
    case CmpOp::kGt: return {1, kMax, false};
    default: return {kMin, -1, false};
  }
}

// x OP y from c = sign(x - y).
bool cmp_sign(CmpOp op, int c) {
  switch (op) {
    case CmpOp::kEq: return c == 0;
    case CmpOp::kNe: return c != 0;
    case CmpOp::kGe: return c >= 0;
    case CmpOp::kLe: return c <= 0;
    case CmpOp::kGt: return c > 0;
    default: return c < 0;
  }
}

// First q in [qmin, qmax] with pred(q) true (pred monotone false..true), or qmax + 1.
template <typename P>
int64_t first_true(int64_t qmin, int64_t qmax, P pred) {
  int64_t lo = qmin, hi = qmax + 1;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (pred(mid)) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return lo;
}

// c: the scalar as float32 for 8-bit data (torch's float32 comparison), as a double for qint32
// (exact comparison).
kernels::CmpRange scalar_range(CmpOp op, QP qa, ScalarType qt, double c) {
  const auto r = qrange(qt);
  const Deq deq{static_cast<float>(qa.scale), qa.zero_point};
  kernels::CmpRange empty{1, 0, false};
  if (std::isnan(c)) {
    empty.invert = op == CmpOp::kNe;
    return empty;
  }
  const bool exact = qt == kInt;
  const float cf = static_cast<float>(c);
  const ExactReal ce{c, 0.0};
  // sign of value(q) - c
  auto cmp = [&](int64_t q) -> int {
    if (exact) {
      if (std::isinf(c)) return c > 0 ? -1 : 1;
      return exact_cmp(exact_real(q - qa.zero_point, qa.scale), ce);
    }
    const float v = deq(q);
    return v < cf ? -1 : (v > cf ? 1 : 0);
  };
  const int64_t A = first_true(r.first, r.second, [&](int64_t q) {
    return cmp(q) >= 0;
  });
  const int64_t B = first_true(r.first, r.second, [&](int64_t q) {
    return cmp(q) > 0;
  });
  int64_t lo, hi;
  bool invert = false;
  switch (op) {
    case CmpOp::kEq:
      lo = A;
      hi = B - 1;
      break;
    case CmpOp::kNe:
      lo = A;
      hi = B - 1;
      invert = true;
      break;
    case CmpOp::kGe:
      lo = A;
      hi = r.second;
      break;
    case CmpOp::kGt:
      lo = B;
      hi = r.second;
      break;
    case CmpOp::kLe:
      lo = r.first;
      hi = B - 1;
      break;
    default:
      lo = r.first;
      hi = A - 1;
      break;
  }
  if (lo > hi) return {1, 0, invert};
  return {static_cast<int32_t>(lo), static_cast<int32_t>(hi), invert};
}

Tensor bool_out(IntArrayRef shape, MemoryFormat fmt) { return tensor::empty(shape, kBool, fmt); }

// Value of the byte pattern b for a dtype (uint8 / int8).
int64_t byte_value(ScalarType dt, int b) {
  return dt == kChar ? static_cast<int64_t>(static_cast<int8_t>(static_cast<uint8_t>(b))) : b;
}

}  // namespace

const char* cmp_name(CmpOp op) {
  switch (op) {
    case CmpOp::kEq: return "eq";
    case CmpOp::kNe: return "ne";
    case CmpOp::kGe: return "ge";
    case CmpOp::kLe: return "le";
    case CmpOp::kGt: return "gt";
    default: return "lt";
  }
}

Tensor compare_scalar_int(const Names& nm, CmpOp op, const Tensor& a, QP qa, double other) {
  const char* name = nm.op;
  const ScalarType qt = int_dtype_of(name, nm.a, a);
  check_scale(name, nm.scale(nm.a).c_str(), qa.scale);
  check_zero_point(name, nm.zero_point(nm.a).c_str(), qa.zero_point, qt);
  const kernels::CmpRange range = scalar_range(op, qa, qt, other);
  const MemoryFormat fmt = kept_format(a);
  Tensor out = bool_out(a.sizes(), fmt);
  if (a.numel() == 0) return out;
  const ScalarType dt = tensor::dtype(a);
  const int64_t es = static_cast<int64_t>(a.element_size());
  auto call = [&](const char* q, int64_t qs, uint8_t* y, int64_t ys, int64_t n) {
    if (dt == kByte) {
      QPLUGIN_ISA_CALL(cmp_range_u8, reinterpret_cast<const uint8_t*>(q), qs, y, ys, n, range);
    } else if (dt == kChar) {
      QPLUGIN_ISA_CALL(cmp_range_s8, reinterpret_cast<const int8_t*>(q), qs, y, ys, n, range);
    } else {
      QPLUGIN_ISA_CALL(cmp_range_s32, reinterpret_cast<const int32_t*>(q), qs, y, ys, n, range);
    }
  };
  if (tensor::is_contiguous(a, fmt)) {
    const char* qp = static_cast<const char*>(a.const_data_ptr());
    uint8_t* yp = reinterpret_cast<uint8_t*>(tensor::mutable_data<bool>(out));
    tensor::parallel_for(0, a.numel(), kGrain, [&](int64_t b, int64_t e) {
      call(qp + b * es, 1, yp + b, 1, e - b);
    });
    return out;
  }
  for_each_row<2>(
      name, out, {&a},
      [&](char** data, const int64_t* strides, int64_t n) {
        call(data[1], strides[1] / es, reinterpret_cast<uint8_t*>(data[0]), strides[0], n);
      },
      kGrain);
  return out;
}

Tensor compare_int(const Names& nm, CmpOp op, const Tensor& a, QP qa, const Tensor& b, QP qb) {
  const char* name = nm.op;
  const ScalarType ta = int_dtype_of(name, nm.a, a);
  const ScalarType tb = int_dtype_of(name, nm.b, b);
  check_scale(name, nm.scale(nm.a).c_str(), qa.scale);
  check_scale(name, nm.scale(nm.b).c_str(), qb.scale);
  check_zero_point(name, nm.zero_point(nm.a).c_str(), qa.zero_point, ta);
  check_zero_point(name, nm.zero_point(nm.b).c_str(), qb.zero_point, tb);
  const auto shape = broadcast_shape(name, a.sizes(), b.sizes());
  Tensor out = bool_out(shape, binary_format(a, b, shape));
  if (out.numel() == 0) return out;
  const kernels::CmpRange range = diff_range(op);
  const bool eight = ta != kInt && tb != kInt;

  // Keys for 8-bit sides: ranks in the sorted union of both sides' values.
  std::array<int32_t, 256> rank_a{}, rank_b{};
  std::array<int16_t, 256> rank_a16{}, rank_b16{};
  bool affine = false;
  int32_t off = 0;
  if (eight) {
    const Deq da{static_cast<float>(qa.scale), qa.zero_point}, db{static_cast<float>(qb.scale), qb.zero_point};
    std::vector<float> vals;
    vals.reserve(512);
    for (int v = 0; v < 256; ++v) {
      vals.push_back(da(byte_value(tensor::dtype(a), v)));
      vals.push_back(db(byte_value(tensor::dtype(b), v)));
    }
    std::sort(vals.begin(), vals.end());
    vals.erase(std::unique(vals.begin(), vals.end(),
                           [](float x, float y) {
                             return x == y;
                           }),
               vals.end());
    auto rank = [&](float x) {
      return static_cast<int32_t>(std::lower_bound(vals.begin(), vals.end(), x) - vals.begin());
    };
    bool shift_a = true, shift_b = true;
    const int32_t ca =
        rank(da(byte_value(tensor::dtype(a), 0))) - static_cast<int32_t>(byte_value(tensor::dtype(a), 0));
    const int32_t cb =
        rank(db(byte_value(tensor::dtype(b), 0))) - static_cast<int32_t>(byte_value(tensor::dtype(b), 0));
    for (int v = 0; v < 256; ++v) {
      const int64_t qva = byte_value(tensor::dtype(a), v), qvb = byte_value(tensor::dtype(b), v);
      rank_a[v] = rank(da(qva));
      rank_b[v] = rank(db(qvb));
      shift_a = shift_a && rank_a[v] == qva + ca;
      shift_b = shift_b && rank_b[v] == qvb + cb;
    }
    affine = shift_a && shift_b;
    for (int v = 0; v < 256; ++v) {
      rank_a16[v] = static_cast<int16_t>(rank_a[v]);
      rank_b16[v] = static_cast<int16_t>(rank_b[v]);
    }
    off = ca - cb;
  }
  const int64_t ea = static_cast<int64_t>(a.element_size()), eb = static_cast<int64_t>(b.element_size());
  auto value = [](const char* p, ScalarType dt) -> int64_t {
    if (dt == kByte) return *reinterpret_cast<const uint8_t*>(p);
    if (dt == kChar) return *reinterpret_cast<const int8_t*>(p);
    return *reinterpret_cast<const int32_t*>(p);
  };
  const ScalarType dta = tensor::dtype(a), dtb = tensor::dtype(b);
  for_each_row<3>(
      name, out, {&a, &b},
      [&](char** data, const int64_t* strides, int64_t n) {
        uint8_t* y = reinterpret_cast<uint8_t*>(data[0]);
        if (eight) {
          const kernels::Cmp2 c{data[1],
                                strides[1] / ea,
                                dta == kChar ? 1 : 0,
                                data[2],
                                strides[2] / eb,
                                dtb == kChar ? 1 : 0,
                                y,
                                strides[0],
                                affine ? nullptr : rank_a.data(),
                                affine ? nullptr : rank_b.data(),
                                rank_a16.data(),
                                rank_b16.data(),
                                off,
                                static_cast<float>(qa.scale),
                                static_cast<float>(qb.scale),
                                static_cast<int32_t>(qa.zero_point),
                                static_cast<int32_t>(qb.zero_point)};
          QPLUGIN_ISA_CALL(cmp_pair8, c, n, range);
          return;
        }
        // A qint32 side: the exact represented values, element by element.
        for (int64_t i = 0; i < n; ++i) {
          const int c = exact_cmp(exact_real(value(data[1] + i * strides[1], dta) - qa.zero_point, qa.scale),
                                  exact_real(value(data[2] + i * strides[2], dtb) - qb.zero_point, qb.scale));
          y[i * strides[0]] = cmp_sign(op, c);
        }
      },
      kGrain);
  return out;
}

}  // namespace cpu

}  // namespace qplugin
