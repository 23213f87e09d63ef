// CPU glue for max / min / max.dim / min.dim / argmax / argmin / mean on
// plain-integer data: validate, view as [outer, n, inner], split over
// tensor::parallel_for, call kernels/reduce_kernel.
#include "utils/torch_api.h"

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "cpu/sort.h"
#include "kernels/dispatch.h"
#include "kernels/reduce_kernel.h"
#include "utils/checks.h"

namespace qplugin {
namespace cpu {
namespace {

constexpr int64_t kGrain = 1 << 15;  // elements per task (row-wise work)
// A single reduction over few bytes runs at ~20 GB/s on one thread; waking a
// second thread costs more than it saves below a few MiB.
constexpr int64_t kFlatGrain = 1 << 22;

void check_int_data(const char* op, const Tensor& data) {
  const auto dt = tensor::dtype(data);
  QP_CHECK(dt == kByte || dt == kChar || dt == kInt, "qplugin::", op,
           ": self should hold uint8, int8 or int32 data, got dtype ", dt);
}

// First index of the largest key along n of x viewed as [outer, n, inner]
// (contiguous); idx is [outer, inner].
void argmax_3d(const Tensor& x, const OrderPlan& plan, bool is_max, int64_t outer, int64_t n, int64_t inner,
               int64_t* idx) {
  if (outer * inner == 0) return;
  const int64_t per = std::max<int64_t>(1, n * inner);
  const int64_t grain = std::max<int64_t>(1, (kGrain * 8) / per);
  if (plan.bytes) {
    const uint8_t mask = is_max ? plan.mask : plan.mask ^ 0xFF;
    const auto* xp = static_cast<const uint8_t*>(x.const_data_ptr());
    tensor::parallel_for(0, outer, grain, [&](int64_t b, int64_t e) {
      QPLUGIN_ISA_CALL(argmax_u8, xp + b * n * inner, e - b, n, inner, mask, idx + b * inner);
    });
  } else {
    const Tensor keys = order_keys(x, plan, !is_max);
    const int32_t* kp = tensor::data<int32_t>(keys);
    tensor::parallel_for(0, outer, grain, [&](int64_t b, int64_t e) {
      QPLUGIN_ISA_CALL(argmax_s32, kp + b * n * inner, e - b, n, inner, idx + b * inner);
    });
  }
}

// Flat index of the first largest key of contiguous x (numel >= 1), chunked
// over threads; ties across chunks go to the earlier chunk.
int64_t argmax_flat(const Tensor& x, const OrderPlan& plan, bool is_max) {
  const int64_t numel = x.numel();
  const int64_t chunks = std::max<int64_t>(1, std::min<int64_t>(tensor::num_threads(), numel / kFlatGrain));
  const int64_t step = (numel + chunks - 1) / chunks;
  std::vector<int64_t> best(static_cast<size_t>(chunks), -1);
  std::optional<Tensor> keys;
  if (!plan.bytes) keys = order_keys(x, plan, !is_max);
  const uint8_t mask = is_max ? plan.mask : plan.mask ^ 0xFF;
  const auto* xp = static_cast<const uint8_t*>(x.const_data_ptr());
  const int32_t* kp = plan.bytes ? nullptr : tensor::data<int32_t>(*keys);
  tensor::parallel_for(0, chunks, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      const int64_t lo = c * step, hi = std::min(numel, lo + step);
      if (hi <= lo) continue;
      int64_t i = 0;
      if (plan.bytes) {
        QPLUGIN_ISA_CALL(argmax_u8, xp + lo, 1, hi - lo, 1, mask, &i);
      } else {
        QPLUGIN_ISA_CALL(argmax_s32, kp + lo, 1, hi - lo, 1, &i);
      }
      best[c] = lo + i;
    }
  });
  auto key_at = [&](int64_t i) -> int32_t {
    return plan.bytes ? (xp[i] ^ mask) : kp[i];
  };
  int64_t win = best[0];
  for (int64_t c = 1; c < chunks; ++c) {
    if (best[c] >= 0 && key_at(best[c]) > key_at(win)) win = best[c];
  }
  return win;
}

std::vector<int64_t> reduced_sizes(IntArrayRef sizes, int64_t dim, bool keepdim) {
  std::vector<int64_t> out;
  for (int64_t d = 0; d < static_cast<int64_t>(sizes.size()); ++d) {
    if (d != dim) {
      out.push_back(sizes[d]);
    } else if (keepdim) {
      out.push_back(1);
    }
  }
  return out;
}

Tensor round_mean(const std::vector<int64_t>& sums, int64_t count, Tensor out) {
  // round_half_even(s / count), exact. Where |s| < 2^52 (exact as a double) the nearest integer of
  // d = s * (1 / count) is the answer unless d lies within 2^-16 of a half-integer: d is within
  // 2^-20 of s / count (|s / count| < 2^31), so further from a tie both round the same way. Near
  // a tie (and for larger sums) the quotient and remainder decide, as an integer division. No 64-bit
  // division per output in the common case: one per output was half of a channel mean's time.
  const double inv = 1.0 / static_cast<double>(count);
  // nearest, ties to even (the default rounding mode), |d| < 2^52
  auto round_even = [](double d) -> int64_t {
#if defined(__x86_64__)
    return _mm_cvtsd_si64(_mm_set_sd(d));
#else
    return std::llrint(d);
#endif
  };
  auto exact = [count](int64_t s) {
    return kernels::round_div_even(s, count);
  };
  auto fill = [&](auto* p) {
    using T = std::remove_pointer_t<decltype(p)>;
    const int64_t* sp = sums.data();  // locals: the byte stores below may alias anything
    const int64_t n = static_cast<int64_t>(sums.size());
    for (int64_t r = 0; r < n; ++r) {
      const int64_t s = sp[r];
      int64_t q;
      if (s > -(int64_t{1} << 52) && s < (int64_t{1} << 52)) {
        const double d = static_cast<double>(s) * inv;
        q = round_even(d);
        if (std::fabs(std::fabs(d - static_cast<double>(q)) - 0.5) < 1.0 / 65536) q = exact(s);
      } else {
        q = exact(s);
      }
      p[r] = static_cast<T>(q);
    }
  };
  switch (tensor::dtype(out)) {
    case kByte: fill(static_cast<uint8_t*>(out.mutable_data_ptr())); break;
    case kChar: fill(static_cast<int8_t*>(out.mutable_data_ptr())); break;
    default: fill(static_cast<int32_t*>(out.mutable_data_ptr())); break;
  }
  return out;
}

}  // namespace

Tensor max_all_int(const char* op, const Tensor& data, double scale, int64_t zero_point, bool is_max,
                   const ValuesAlloc& alloc) {
  check_int_data(op, data);
  QP_CHECK_INDEX(data.numel() > 0, "qplugin::", op,
                 ": self should have at least one element (use the dim overload for empty "
                 "tensors), got shape ",
                 data.sizes());
  const Tensor x = tensor::contiguous(data);
  const OrderPlan plan = plan_order(tensor::dtype(x), scale, zero_point);
  const int64_t i = argmax_flat(x, plan, is_max);
  Tensor out = alloc(IntArrayRef());
  const int64_t es = x.element_size();
  std::memcpy(out.mutable_data_ptr(), static_cast<const char*>(x.const_data_ptr()) + i * es, static_cast<size_t>(es));
  return out;
}

std::tuple<Tensor, Tensor> max_dim_int(const char* op, const Tensor& data, double scale, int64_t zero_point,
                                       int64_t dim, bool keepdim, bool is_max, const ValuesAlloc& alloc) {
  check_int_data(op, data);
  const int64_t d = wrap_dim(op, dim, data.dim());
  const int64_t n = data.dim() > 0 ? data.size(d) : 1;
  QP_CHECK_INDEX(n > 0, "qplugin::", op, ": dim ", dim, " should have a non-zero size to reduce over, got shape ",
                 data.sizes());
  const auto out_sizes = data.dim() > 0 ? reduced_sizes(data.sizes(), d, keepdim) : std::vector<int64_t>{};
  Tensor values = alloc(out_sizes);
  Tensor idx = tensor::empty(out_sizes, kLong);
  if (values.numel() == 0) return {values, idx};
  const Tensor x = tensor::contiguous(data);
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < d; ++k) outer *= x.size(k);
  for (int64_t k = d + 1; k < x.dim(); ++k) inner *= x.size(k);
  const OrderPlan plan = plan_order(tensor::dtype(x), scale, zero_point);
  argmax_3d(x, plan, is_max, outer, n, inner, tensor::mutable_data<int64_t>(idx));
  // values[o, j] = x[o, idx[o, j], j]
  const std::vector<int64_t> rows3{outer, 1, inner};
  const Tensor g = tensor::gather(tensor::view(x, std::vector<int64_t>{outer, n, inner}), 1, tensor::view(idx, rows3));
  tensor::copy_(tensor::view(values, rows3), g);
  return {values, idx};
}

Tensor argmax_int(const char* op, const Tensor& data, double scale, int64_t zero_point, std::optional<int64_t> dim,
                  bool keepdim, bool is_max) {
  check_int_data(op, data);
  if (!dim.has_value()) {
    QP_CHECK_INDEX(data.numel() > 0, "qplugin::", op,
                   ": self should have at least one element when dim is None, got shape ", data.sizes());
    const Tensor x = tensor::contiguous(data);
    const OrderPlan plan = plan_order(tensor::dtype(x), scale, zero_point);
    const int64_t i = argmax_flat(x, plan, is_max);
    std::vector<int64_t> sizes;  // 0-dim, or all ones with keepdim: one element
    if (keepdim) sizes.assign(static_cast<size_t>(data.dim()), 1);
    Tensor out = tensor::empty(sizes, kLong);
    tensor::mutable_data<int64_t>(out)[0] = i;
    return out;
  }
  const int64_t d = wrap_dim(op, *dim, data.dim());
  const int64_t n = data.dim() > 0 ? data.size(d) : 1;
  QP_CHECK_INDEX(n > 0, "qplugin::", op, ": dim ", *dim, " should have a non-zero size to reduce over, got shape ",
                 data.sizes());
  const auto out_sizes = data.dim() > 0 ? reduced_sizes(data.sizes(), d, keepdim) : std::vector<int64_t>{};
  Tensor idx = tensor::empty(out_sizes, kLong);
  if (idx.numel() == 0) return idx;
  const Tensor x = tensor::contiguous(data);
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < d; ++k) outer *= x.size(k);
  for (int64_t k = d + 1; k < x.dim(); ++k) inner *= x.size(k);
  const OrderPlan plan = plan_order(tensor::dtype(x), scale, zero_point);
  argmax_3d(x, plan, is_max, outer, n, inner, tensor::mutable_data<int64_t>(idx));
  return idx;
}

Tensor mean_int(const char* op, const Tensor& data, OptIntListArg dim, bool keepdim, const ValuesAlloc& alloc) {
  check_int_data(op, data);
  const int64_t nd = data.dim();
  std::vector<bool> reduce(static_cast<size_t>(nd), false);
  if (!dim.has_value() || dim->empty()) {
    std::fill(reduce.begin(), reduce.end(), true);
  } else {
    for (int64_t d : *dim) {
      const int64_t w = wrap_dim(op, d, nd);
      if (nd == 0) continue;
      QP_CHECK_VALUE(!reduce[w], "qplugin::", op, ": dim ", w, " should appear once in dim, got ", *dim);
      reduce[w] = true;
    }
  }
  std::vector<int64_t> out_sizes, kept_sizes;
  int64_t rows = 1, count = 1;
  for (int64_t d = 0; d < nd; ++d) {
    if (!reduce[d]) {
      out_sizes.push_back(data.size(d));
      kept_sizes.push_back(data.size(d));
      rows *= data.size(d);
    } else {
      count *= data.size(d);
      if (keepdim) out_sizes.push_back(1);
    }
  }
  Tensor out = alloc(out_sizes);
  if (rows == 0) return out;
  QP_CHECK_VALUE(count > 0, "qplugin::", op,
                 ": the reduced dims should hold at least one element "
                 "(the mean of nothing is undefined), got shape ",
                 data.sizes(), " reducing over ", dim.has_value() ? qplugin::str(*dim) : std::string("all dims"));
  // Walk the data in its memory order (channels_last and permuted views need
  // no copy): order[i] is the original dim at physical position i.
  std::vector<int64_t> order(static_cast<size_t>(nd));
  for (int64_t d = 0; d < nd; ++d) order[d] = d;
  Tensor xs = nd > 0 ? data : tensor::reshape(data, std::vector<int64_t>{1});
  if (nd > 0 && !data.is_contiguous()) {
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return data.stride(a) > data.stride(b);
    });
    xs = tensor::permute(data, order);
    if (!xs.is_contiguous()) {
      for (int64_t d = 0; d < nd; ++d) order[d] = d;
      xs = tensor::contiguous(data);
    }
  }
  // Reduced dims one contiguous block [a, b] in memory order: [outer, n, inner] without a copy.
  int64_t a = -1, b = -1;
  bool block = true;
  for (int64_t i = 0; i < nd; ++i) {
    if (reduce[order[i]]) {
      if (a < 0) a = i;
      else if (b != i - 1) block = false;
      b = i;
    }
  }
  std::vector<int64_t> kept_order;  // original dims of the sums, in the order they come out
  for (int64_t i = 0; i < nd; ++i) {
    if (!reduce[order[i]]) kept_order.push_back(order[i]);
  }
  int64_t inner = 1;
  if (nd > 0 && block) {
    for (int64_t i = b + 1; i < nd; ++i) inner *= xs.size(i);
  } else if (nd > 0) {
    // Scattered reduced dims: move them last (one copy), then rows.
    std::vector<int64_t> perm;
    for (int64_t i = 0; i < nd; ++i)
      if (!reduce[order[i]]) perm.push_back(i);
    for (int64_t i = 0; i < nd; ++i)
      if (reduce[order[i]]) perm.push_back(i);
    xs = tensor::contiguous(tensor::permute(xs, perm));
  }
  const int64_t outer = rows / inner;
  const void* xp = xs.const_data_ptr();
  const ScalarType dt = tensor::dtype(xs);
  const bool in_order = std::is_sorted(kept_order.begin(), kept_order.end());
  // [outer, count, inner] with inner > 1: fn(x offset, column offset o * inner + j0, len) per
  // chunk of at most kCols columns of one outer index, chunks split over the threads.
  auto column_chunks = [&](auto fn) {
    constexpr int64_t kCols = 4096;
    const int64_t col_chunks = (inner + kCols - 1) / kCols;
    const int64_t per_task = count * std::min(inner, kCols);
    tensor::parallel_for(0, outer * col_chunks, std::max<int64_t>(1, (kGrain * 32) / per_task),
                         [&](int64_t b0, int64_t e0) {
                           for (int64_t t = b0; t < e0; ++t) {
                             const int64_t o = t / col_chunks, j0 = (t % col_chunks) * kCols;
                             fn(o * count * inner + j0, o * inner + j0, std::min(kCols, inner - j0));
                           }
                         });
  };
  if (inner > 1 && in_order && dt != kInt && count <= kernels::kMeanMidMaxN) {
    // A middle dim of 8-bit data (a channel mean of NCHW): each column chunk's means rounded in
    // the kernel, straight from its block sums (no int64 sums, no second pass).
    column_chunks([&](int64_t off, int64_t col, int64_t len) {
      if (dt == kByte) {
        QPLUGIN_ISA_CALL(mean_mid_u8, static_cast<const uint8_t*>(xp) + off, count, len, inner,
                         static_cast<uint8_t*>(out.mutable_data_ptr()) + col);
      } else {
        QPLUGIN_ISA_CALL(mean_mid_s8, static_cast<const int8_t*>(xp) + off, count, len, inner,
                         static_cast<int8_t*>(out.mutable_data_ptr()) + col);
      }
    });
    return out;
  }
  std::vector<int64_t> sums(static_cast<size_t>(rows), 0);
  if (inner == 1) {
    auto sum_rows = [&](int64_t off_row, int64_t nrows, int64_t len, int64_t col, int64_t* s) {
      const int64_t off = off_row * count + col;
      if (dt == kByte) {
        QPLUGIN_ISA_CALL(sum_rows_u8, static_cast<const uint8_t*>(xp) + off, nrows, len, s);
      } else if (dt == kChar) {
        QPLUGIN_ISA_CALL(sum_rows_s8, static_cast<const int8_t*>(xp) + off, nrows, len, s);
      } else {
        QPLUGIN_ISA_CALL(sum_rows_s32, static_cast<const int32_t*>(xp) + off, nrows, len, s);
      }
    };
    if (rows == 1 && count >= 2 * kFlatGrain) {
      // One long row: partial sums of chunks in parallel.
      const int64_t chunks = std::max<int64_t>(1, std::min<int64_t>(tensor::num_threads(), count / kFlatGrain));
      const int64_t step = (count + chunks - 1) / chunks;
      std::vector<int64_t> part(static_cast<size_t>(chunks), 0);
      tensor::parallel_for(0, chunks, 1, [&](int64_t b0, int64_t e0) {
        for (int64_t c = b0; c < e0; ++c) {
          const int64_t lo = c * step, hi = std::min(count, lo + step);
          if (hi > lo) sum_rows(0, 1, hi - lo, lo, &part[c]);
        }
      });
      for (int64_t p : part) sums[0] += p;
    } else {
      tensor::parallel_for(0, rows, std::max<int64_t>(1, (kGrain * 32) / count), [&](int64_t b0, int64_t e0) {
        sum_rows(b0, e0 - b0, count, 0, sums.data() + b0);
      });
    }
  } else {
    // [outer, count, inner]: column sums over count, in column chunks per task.
    column_chunks([&](int64_t off, int64_t col, int64_t len) {
      int64_t* s = sums.data() + col;
      if (dt == kByte) {
        QPLUGIN_ISA_CALL(sum_mid_u8, static_cast<const uint8_t*>(xp) + off, count, len, inner, s);
      } else if (dt == kChar) {
        QPLUGIN_ISA_CALL(sum_mid_s8, static_cast<const int8_t*>(xp) + off, count, len, inner, s);
      } else {
        QPLUGIN_ISA_CALL(sum_mid_s32, static_cast<const int32_t*>(xp) + off, count, len, inner, s);
      }
    });
  }
  // Sums come out in kept_order; the output wants the original dim order.
  if (in_order) return round_mean(sums, count, out);
  std::vector<int64_t> tmp_sizes;
  for (int64_t d : kept_order) tmp_sizes.push_back(data.size(d));
  Tensor tmp = round_mean(sums, count, tensor::empty(tmp_sizes, tensor::dtype(out)));
  std::vector<int64_t> back;  // position in kept_order of each kept dim, original order
  std::vector<int64_t> sorted_kept = kept_order;
  std::sort(sorted_kept.begin(), sorted_kept.end());
  for (int64_t d : sorted_kept) {
    back.push_back(std::find(kept_order.begin(), kept_order.end(), d) - kept_order.begin());
  }
  tensor::copy_(tensor::view(out, kept_sizes), tensor::permute(tmp, back));
  return out;
}

}  // namespace cpu

}  // namespace qplugin
