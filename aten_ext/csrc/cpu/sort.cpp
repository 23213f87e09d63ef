// CPU glue for sort / argsort / topk on plain-integer data: validate, move the
// sorted dim last, pick the byte (counting) or int32-key path, split rows over
// tensor::parallel_for, call kernels/sort_kernel.
#include "cpu/sort.h"

#include "utils/torch_api.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/dispatch.h"
#include "kernels/sort_kernel.h"
#include "utils/checks.h"

namespace qplugin {
namespace cpu {
namespace {

constexpr int64_t kGrain = 1 << 14;     // elements per task
constexpr int64_t kSplitRow = 1 << 16;  // a row this long is sorted by several threads
constexpr int64_t kChunk = 1 << 15;     // smallest per-thread piece of a split row

void check_int_data(const char* op, const Tensor& data) {
  const auto dt = tensor::dtype(data);
  QP_CHECK(dt == kByte || dt == kChar || dt == kInt, "qplugin::", op,
           ": self should hold uint8, int8 or int32 data, got dtype ", dt);
}

// data viewed as [rows, n] with the op's dim last, contiguous.
struct Rows {
  Tensor x;  // contiguous, dim moved last (sizes: moved_sizes)
  std::vector<int64_t> moved_sizes;
  int64_t rows;
  int64_t n;
  int64_t dim;
  bool last;  // dim already last: outputs need no moving back
};

Rows as_rows(const char* op, const Tensor& data, int64_t dim) {
  Rows r;
  const int64_t nd = data.dim();
  r.dim = wrap_dim(op, dim, nd);
  if (nd == 0) {
    r.x = tensor::contiguous(tensor::reshape(data, std::vector<int64_t>{1}));
    r.moved_sizes = {1};
    r.n = 1;
    r.rows = 1;
    r.last = true;
    return r;
  }
  r.last = r.dim == nd - 1;
  r.x = r.last ? tensor::contiguous(data) : tensor::contiguous(tensor::movedim(data, r.dim, -1));
  r.moved_sizes = r.x.sizes().vec();
  r.n = data.size(r.dim);
  r.rows = r.n > 0 ? data.numel() / r.n : 0;
  return r;
}

// Output in the moved layout [.., n'] back to the caller's layout.
Tensor moved_back(const Rows& r, const Tensor& t, IntArrayRef final_sizes) {
  if (r.last) return tensor::view(t, final_sizes);
  return tensor::contiguous(tensor::movedim(t, -1, r.dim));
}

// Stable counting sort of one long row with several threads: per-chunk
// histograms, per-chunk cursors, parallel scatter.
void sort_row_split(const uint8_t* x, int64_t n, uint8_t mask, uint8_t* values, int64_t* idx) {
  const int64_t chunks = std::max<int64_t>(1, std::min<int64_t>(tensor::num_threads(), n / kChunk));
  const int64_t step = (n + chunks - 1) / chunks;
  std::vector<int64_t> counts(static_cast<size_t>(chunks) * 256, 0);
  tensor::parallel_for(0, chunks, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      const int64_t lo = c * step, hi = std::min(n, lo + step);
      if (hi > lo) QPLUGIN_ISA_CALL(hist_u8, x + lo, hi - lo, mask, counts.data() + c * 256);
    }
  });
  std::vector<int64_t> cursor(counts.size());
  int64_t pos = 0;
  for (int key = 0; key < 256; ++key) {
    int64_t start = pos;
    for (int64_t c = 0; c < chunks; ++c) {
      cursor[c * 256 + key] = pos;
      pos += counts[c * 256 + key];
    }
    if (values && pos > start) std::memset(values + start, key ^ mask, static_cast<size_t>(pos - start));
  }
  if (!idx) return;
  tensor::parallel_for(0, chunks, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      const int64_t lo = c * step, hi = std::min(n, lo + step);
      if (hi > lo) QPLUGIN_ISA_CALL(scatter_u8, x + lo, hi - lo, mask, lo, cursor.data() + c * 256, idx);
    }
  });
}

// Sorts rows of r.x; values (moved layout, may be undefined) and idx [rows, n].
void sort_rows(const Rows& r, const OrderPlan& plan, bool descending, const Tensor& values, const Tensor& idx) {
  const int64_t rows = r.rows, n = r.n;
  if (rows == 0 || n == 0) return;
  int64_t* ip = tensor::mutable_data<int64_t>(idx);
  if (plan.bytes) {
    const uint8_t mask = descending ? plan.mask ^ 0xFF : plan.mask;
    const auto* xp = static_cast<const uint8_t*>(r.x.const_data_ptr());
    auto* vp = values.defined() ? static_cast<uint8_t*>(values.mutable_data_ptr()) : nullptr;
    if (n >= kSplitRow && rows < tensor::num_threads()) {
      for (int64_t row = 0; row < rows; ++row) {
        sort_row_split(xp + row * n, n, mask, vp ? vp + row * n : nullptr, ip + row * n);
      }
      return;
    }
    tensor::parallel_for(0, rows, std::max<int64_t>(1, kGrain / n), [&](int64_t b, int64_t e) {
      QPLUGIN_ISA_CALL(sort_rows_u8, xp + b * n, e - b, n, mask, vp ? vp + b * n : nullptr, ip + b * n);
    });
    return;
  }
  const Tensor keys = order_keys(r.x, plan, descending);
  const int32_t* kp = tensor::data<int32_t>(keys);
  tensor::parallel_for(0, rows, std::max<int64_t>(1, kGrain / n), [&](int64_t b, int64_t e) {
    QPLUGIN_ISA_CALL(sort_rows_s32, kp + b * n, e - b, n, ip + b * n);
  });
  if (values.defined()) tensor::copy_(values, tensor::gather(r.x, -1, idx));
}

}  // namespace

int64_t wrap_dim(const char* op, int64_t dim, int64_t ndim) { return check_dim(op, "dim", dim, ndim); }

ValuesAlloc plain_alloc(const Tensor& data) {
  const ScalarType dtype = tensor::dtype(data);
  return [dtype](IntArrayRef sizes) {
    return tensor::empty(sizes, dtype);
  };
}

OrderPlan plan_order(ScalarType dt, double scale, int64_t zero_point) {
  QP_ASSERT(scale > 0);  // checked by the callers: the order of q is the value order
  (void)zero_point;
  OrderPlan p;
  p.bytes = dt != kInt;
  p.mask = dt == kChar ? 0x80 : 0x00;
  return p;
}

Tensor order_keys(const Tensor& data, const OrderPlan& plan, bool reverse) {
  QP_ASSERT(data.is_contiguous());
  Tensor keys = tensor::empty(data.sizes(), kInt);
  const int64_t n = data.numel();
  int32_t* kp = tensor::mutable_data<int32_t>(keys);
  QP_ASSERT(!plan.bytes && tensor::dtype(data) == kInt);
  const int32_t* xp = tensor::data<int32_t>(data);
  tensor::parallel_for(0, n, 1 << 15, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) kp[i] = reverse ? ~xp[i] : xp[i];  // ~q: strictly decreasing
  });
  return keys;
}

std::tuple<Tensor, Tensor> sort_int(const char* op, const Tensor& data, double scale, int64_t zero_point, int64_t dim,
                                    bool descending, const ValuesAlloc& alloc) {
  check_int_data(op, data);
  const Rows r = as_rows(op, data, dim);
  const OrderPlan plan = plan_order(tensor::dtype(data), scale, zero_point);
  Tensor values = r.last ? alloc(data.sizes()) : tensor::empty(r.moved_sizes, tensor::dtype(data));
  Tensor idx = tensor::empty(r.moved_sizes, kLong);
  sort_rows(r, plan, descending, tensor::view(values, r.moved_sizes), idx);
  if (r.last) return {values, tensor::view(idx, data.sizes())};
  Tensor out = alloc(data.sizes());
  tensor::copy_(out, tensor::movedim(values, -1, r.dim));
  return {out, moved_back(r, idx, data.sizes())};
}

Tensor argsort_int(const char* op, const Tensor& data, double scale, int64_t zero_point, int64_t dim, bool descending) {
  check_int_data(op, data);
  const Rows r = as_rows(op, data, dim);
  const OrderPlan plan = plan_order(tensor::dtype(data), scale, zero_point);
  Tensor idx = tensor::empty(r.moved_sizes, kLong);
  sort_rows(r, plan, descending, Tensor(), idx);
  return moved_back(r, idx, data.sizes());
}

std::tuple<Tensor, Tensor> topk_int(const char* op, const Tensor& data, double scale, int64_t zero_point, int64_t k,
                                    int64_t dim, bool largest, bool sorted, const ValuesAlloc& alloc) {
  check_int_data(op, data);
  const Rows r = as_rows(op, data, dim);
  QP_CHECK_INDEX(k >= 0 && k <= r.n, "qplugin::", op, ": k should be in [0, ", r.n, "] (the size of dim ", dim,
                 "), got ", k);
  (void)sorted;                // results are always sorted, which every `sorted` value allows
  if (data.dim() == 0) k = 1;  // as torch: a 0-dim tensor is its own top-0 and top-1
  std::vector<int64_t> out_sizes = data.sizes().vec();
  if (data.dim() > 0) out_sizes[r.dim] = k;
  std::vector<int64_t> moved = r.moved_sizes;
  moved.back() = k;
  const OrderPlan plan = plan_order(tensor::dtype(data), scale, zero_point);
  Tensor values_out = r.last ? alloc(out_sizes) : Tensor();
  Tensor values = r.last ? tensor::view(values_out, moved) : tensor::empty(moved, tensor::dtype(data));
  Tensor idx = tensor::empty(moved, kLong);
  const int64_t rows = r.rows, n = r.n;
  if (rows > 0 && k > 0) {
    int64_t* ip = tensor::mutable_data<int64_t>(idx);
    const int64_t grain = std::max<int64_t>(1, kGrain / n);
    if (plan.bytes) {
      // k largest keys; smallest = largest of the reversed keys.
      const uint8_t mask = largest ? plan.mask : plan.mask ^ 0xFF;
      const auto* xp = static_cast<const uint8_t*>(r.x.const_data_ptr());
      auto* vp = static_cast<uint8_t*>(values.mutable_data_ptr());
      tensor::parallel_for(0, rows, grain, [&](int64_t b, int64_t e) {
        for (int64_t row = b; row < e; ++row) {
          QPLUGIN_ISA_CALL(topk_u8, xp + row * n, n, k, mask, vp + row * k, ip + row * k);
        }
      });
    } else {
      const Tensor keys = order_keys(r.x, plan, !largest);
      const int32_t* kp = tensor::data<int32_t>(keys);
      tensor::parallel_for(0, rows, grain, [&](int64_t b, int64_t e) {
        for (int64_t row = b; row < e; ++row) QPLUGIN_ISA_CALL(topk_s32, kp + row * n, n, k, ip + row * k);
      });
      tensor::copy_(values, tensor::gather(r.x, -1, idx));
    }
  }
  if (r.last) return {values_out, tensor::view(idx, out_sizes)};
  Tensor out = alloc(out_sizes);
  tensor::copy_(out, tensor::movedim(values, -1, r.dim));
  return {out, tensor::contiguous(tensor::movedim(idx, -1, r.dim))};
}

}  // namespace cpu

}  // namespace qplugin
