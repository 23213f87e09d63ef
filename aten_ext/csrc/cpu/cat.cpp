// CPU glue for cat / cat_relu: shape checks, output layout, and a parallel walk
// that copies (shared qparams: bit-exact) or requantizes each input's block
// (kernels/cat_kernel.h) into its slot of the output.
#include "utils/torch_api.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "cpu/activation.h"
#include "cpu/elementwise.h"
#include "kernels/cat_kernel.h"
#include "kernels/dispatch.h"
#include "kernels/quantize_math.h"
#include "utils/checks.h"
#include "utils/layout.h"

namespace qplugin {
namespace cpu {
namespace {

constexpr int64_t kGrain = 1 << 15;  // elements per task
// 8-bit inputs at least this big requantize through a 256-entry table (built
// by the row kernel itself, so the bytes are the same).
constexpr int64_t kTableMin = 1024;

// torch.cat skips legacy 1-D empty tensors (shape [0]) of any other shape.
bool skipped(const Tensor& x) { return x.dim() == 1 && x.numel() == 0; }

// The AVX2 path's fixed-point fit searches up to 17 multipliers over the 256 bytes of a table
// (~1 us an input, a fifth of a 4x[1,64,56,56] cat), twice when no formula is exact (then one
// with a correction map). A model's cat repeats the same qparams
// call after call, so each thread keeps its last few fits (and failures), keyed by everything
// the table and the search read.
struct AffineFit {
  float sx, inv_so;
  int32_t zx, zo, lo;
  bool is_signed;
  double slope;
  bool ok;
  kernels::ByteAffine f;
  bool same_key(const AffineFit& o) const {
    return sx == o.sx && inv_so == o.inv_so && zx == o.zx && zo == o.zo && lo == o.lo && is_signed == o.is_signed &&
           slope == o.slope;
  }
};

// Whether the table of p has a ByteAffine (into *f), from the memo or by building the table
// and fitting.
bool fit_affine_memo(const kernels::CatRequant& p, bool is_signed, double slope, std::array<uint8_t, 256>* table,
                     kernels::ByteAffine* f) {
  constexpr int kSlots = 16;
  thread_local std::array<AffineFit, kSlots> memo;
  thread_local int used = 0, next = 0;
  AffineFit key{p.sx, p.inv_so, p.zx, p.zo, p.lo, is_signed, slope, false, {}};
  for (int i = 0; i < used; ++i) {
    if (memo[i].same_key(key)) {
      *f = memo[i].f;
      return memo[i].ok;
    }
  }
  QPLUGIN_ISA_CALL(cat_requant_table8, p, is_signed, table->data());
  key.ok = QPLUGIN_ISA_CALL(cat_fit_affine8, table->data(), is_signed, p.lo, slope, &key.f);
  memo[next] = key;  // round robin over the slots
  next = (next + 1) % kSlots;
  if (used < kSlots) ++used;
  *f = key.f;
  return key.ok;
}

}  // namespace

MemoryFormat cat_format(const std::vector<Tensor>& xs) {
  MemoryFormat fmt = MemoryFormat::Contiguous;
  bool first = true;
  for (const auto& x : xs) {
    if (skipped(x)) continue;
    const MemoryFormat f = kept_format(x);
    if (first) {
      fmt = f;
      first = false;
    } else if (f != fmt) {
      return MemoryFormat::Contiguous;
    }
  }
  return fmt;
}

std::vector<int64_t> cat_shape(const Names& nm, const std::vector<Tensor>& xs, int64_t* dim) {
  const char* op = nm.op;
  const char* qx = nm.a;
  QP_CHECK_VALUE(!xs.empty(), "qplugin::", op, ": ", qx, " should be a non-empty list of tensors, got an empty list");
  int64_t ref = -1;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (!skipped(xs[i])) {
      ref = static_cast<int64_t>(i);
      break;
    }
  }
  if (ref < 0) {  // only legacy empties
    *dim = check_dim(op, "dim", *dim, 1);
    return {0};
  }
  const Tensor& r = xs[ref];
  QP_CHECK_VALUE(r.dim() > 0, "qplugin::", op, ": ", qx, "[", ref,
                 "] should have at least one dim (zero-dim tensors cannot be concatenated), got a 0-dim tensor");
  const int64_t d = check_dim(op, "dim", *dim, r.dim());
  *dim = d;
  std::vector<int64_t> shape(r.sizes().begin(), r.sizes().end());
  shape[d] = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const Tensor& x = xs[i];
    if (skipped(x)) continue;
    QP_CHECK_VALUE(x.dim() == r.dim(), "qplugin::", op, ": ", qx, "[", i, "] should have ", r.dim(), " dims like ", qx,
                   "[", ref, "], got shape ", x.sizes());
    for (int64_t k = 0; k < r.dim(); ++k) {
      QP_CHECK_VALUE(k == d || x.size(k) == r.size(k), "qplugin::", op, ": ", qx, "[", i, "] should match ", qx, "[",
                     ref, "] (shape ", r.sizes(), ") in every dim but ", d, ", got shape ", x.sizes());
    }
    shape[d] += x.size(d);
  }
  return shape;
}

void cat_into(const Names& nm, const std::vector<Tensor>& xs_in, const std::vector<QP>& qps, int64_t dim, QP qo,
              bool relu, const Tensor& out) {
  QP_ASSERT(xs_in.size() == qps.size());
  const MemoryFormat fmt = kept_format(out);
  QP_ASSERT(tensor::is_contiguous(out, fmt));
  if (out.numel() == 0) return;
  const ScalarType dt = tensor::dtype(out);
  const ScalarType qt = int_dtype_of(nm.op, nm.a, out);
  const auto r = qrange(qt);
  const int32_t lo = static_cast<int32_t>(relu ? std::max<int64_t>(r.first, qo.zero_point) : r.first);
  const int64_t es = static_cast<int64_t>(out.element_size());

  struct Part {
    explicit Part(Tensor t) : x(std::move(t)) {}
    Tensor x;
    int64_t cols;    // elements per row of this input
    int64_t offset;  // element offset of its slot in an output row
    int mode;        // 0 copy, 1 relu, 2 requantize, 3 requantize by table, 4 by fixed-point formula
    kernels::CatRequant p;
    std::array<uint8_t, 256> table;
    kernels::ByteAffine affine;
  };
  const AxisSplit split = axis_split(out.sizes(), dim, fmt);
  const int64_t out_cols = split.channels * split.inner;
  std::vector<Part> parts;
  int64_t c_off = 0;
  for (size_t i = 0; i < xs_in.size(); ++i) {
    if (skipped(xs_in[i]) || xs_in[i].numel() == 0) {
      if (!skipped(xs_in[i])) c_off += xs_in[i].size(dim);
      continue;
    }
    Part pt(tensor::contiguous(xs_in[i], fmt));
    pt.cols = pt.x.size(dim) * split.inner;
    pt.offset = c_off * split.inner;
    c_off += pt.x.size(dim);
    const bool same = qps[i].scale == qo.scale && qps[i].zero_point == qo.zero_point;
    pt.mode = same ? (relu && lo > r.first ? 1 : 0) : 2;
    pt.p = {static_cast<float>(qps[i].scale),
            static_cast<int32_t>(qps[i].zero_point),
            kernels::inv_scale_of(qo.scale),
            static_cast<int32_t>(qo.zero_point),
            lo,
            qps[i].scale,
            qo.scale};
    // 8-bit: a 256-entry table (the same bytes as the row rule). AVX2's widest byte lookup is 16
    // entries (16 VPSHUFB per 32 bytes, slower than the vector float rule): there the table is
    // only the target of a 16-bit fixed-point formula found and checked on all 256 bytes
    // (13 vector ops per 32 bytes, 23 with the correction map of a table no formula gives
    // exactly); without one, the float rule.
    if (pt.mode == 2 && es == 1 && pt.x.numel() >= kTableMin) {
      if (kernels::family_isa(kernels::active_isa()) != kernels::Isa::kAvx2) {
        QPLUGIN_ISA_CALL(cat_requant_table8, pt.p, dt == kChar, pt.table.data());
        pt.mode = 3;
      } else if (fit_affine_memo(pt.p, dt == kChar, qps[i].scale / qo.scale, &pt.table, &pt.affine)) {
        pt.mode = 4;
      }
    }
    parts.push_back(pt);
  }
  const bool vbmi = act_use_vbmi(std::nullopt);
  char* yp = static_cast<char*>(out.mutable_data_ptr());

  // Copies / requantizes rows [r0, r1) of every part, column pieces [p0, p1) of nsplit.
  auto run = [&](int64_t r0, int64_t r1, int64_t p0, int64_t p1, int64_t nsplit) {
    for (const Part& pt : parts) {
      const int64_t c0 = pt.cols * p0 / nsplit, c1 = pt.cols * p1 / nsplit;
      if (c1 <= c0) continue;
      const char* x = static_cast<const char*>(pt.x.const_data_ptr()) + (r0 * pt.cols + c0) * es;
      char* y = yp + (r0 * out_cols + pt.offset + c0) * es;
      const int64_t rows = r1 - r0, cols = c1 - c0;
      if (pt.mode == 0) {
        if (cols == pt.cols && cols == out_cols) {
          std::memcpy(y, x, rows * cols * es);
        } else {
          // Short rows (channels_last along C): full-width vector moves in the kernel.
          QPLUGIN_ISA_CALL(cat_copy_rows, reinterpret_cast<const uint8_t*>(x), pt.cols * es,
                           reinterpret_cast<uint8_t*>(y), out_cols * es, rows, cols * es);
        }
      } else if (pt.mode == 1) {
        if (dt == kByte) {
          QPLUGIN_ISA_CALL(cat_relu_u8, reinterpret_cast<const uint8_t*>(x), pt.cols, reinterpret_cast<uint8_t*>(y),
                           out_cols, rows, cols, lo);
        } else if (dt == kChar) {
          QPLUGIN_ISA_CALL(cat_relu_s8, reinterpret_cast<const int8_t*>(x), pt.cols, reinterpret_cast<int8_t*>(y),
                           out_cols, rows, cols, lo);
        } else {
          QPLUGIN_ISA_CALL(cat_relu_s32, reinterpret_cast<const int32_t*>(x), pt.cols, reinterpret_cast<int32_t*>(y),
                           out_cols, rows, cols, lo);
        }
      } else if (pt.mode == 4) {
        QPLUGIN_ISA_CALL(cat_affine8, reinterpret_cast<const uint8_t*>(x), pt.cols, reinterpret_cast<uint8_t*>(y),
                         out_cols, rows, cols, pt.affine);
      } else if (pt.mode == 3) {
        QPLUGIN_ISA_CALL(cat_lut8, reinterpret_cast<const uint8_t*>(x), pt.cols, reinterpret_cast<uint8_t*>(y),
                         out_cols, rows, cols, pt.table.data(), vbmi);
      } else {
        if (dt == kByte) {
          QPLUGIN_ISA_CALL(cat_requant_u8, reinterpret_cast<const uint8_t*>(x), pt.cols, reinterpret_cast<uint8_t*>(y),
                           out_cols, rows, cols, pt.p);
        } else if (dt == kChar) {
          QPLUGIN_ISA_CALL(cat_requant_s8, reinterpret_cast<const int8_t*>(x), pt.cols, reinterpret_cast<int8_t*>(y),
                           out_cols, rows, cols, pt.p);
        } else {
          QPLUGIN_ISA_CALL(cat_requant_s32, reinterpret_cast<const int32_t*>(x), pt.cols, reinterpret_cast<int32_t*>(y),
                           out_cols, rows, cols, pt.p);
        }
      }
    }
  };

  // Blocks of rows small enough (~16 KiB of output) that all parts fill a block
  // while it is in L1: short rows (channels_last along channels) write sequentially.
  const int64_t block = std::max<int64_t>(1, (16 << 10) / std::max<int64_t>(1, out_cols * es));
  // Every part a plain copy of short rows (channels_last along C with shared
  // qparams): one pass over the output, row by row, each part's bytes in place.
  bool interleave = !parts.empty() && static_cast<int64_t>(parts.size()) <= 64;
  for (const Part& pt : parts) interleave = interleave && pt.mode == 0 && pt.cols * es <= 512;
  std::vector<int64_t> ibytes, ioff;
  if (interleave) {
    for (const Part& pt : parts) {
      ibytes.push_back(pt.cols * es);
      ioff.push_back(pt.offset * es);
    }
  }
  auto run_interleaved = [&](int64_t r0, int64_t r1) {
    const uint8_t* xp[64];
    for (size_t i = 0; i < parts.size(); ++i) {
      xp[i] = static_cast<const uint8_t*>(parts[i].x.const_data_ptr()) + r0 * ibytes[i];
    }
    QPLUGIN_ISA_CALL(cat_interleave_rows, xp, ibytes.data(), ioff.data(), static_cast<int64_t>(parts.size()),
                     reinterpret_cast<uint8_t*>(yp) + r0 * out_cols * es, out_cols * es, r1 - r0);
  };
  auto run_blocked = [&](int64_t r0, int64_t r1) {
    if (interleave) {
      run_interleaved(r0, r1);
      return;
    }
    for (int64_t b = r0; b < r1; b += block) run(b, std::min(r1, b + block), 0, 1, 1);
  };
  const int64_t outer = split.outer;
  const int64_t tasks = std::max<int64_t>(1, out.numel() / kGrain);
  if (outer >= tasks) {
    const int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(1, out_cols));
    tensor::parallel_for(0, outer, grain, [&](int64_t b, int64_t e) {
      run_blocked(b, e);
    });
  } else {
    // Few long rows (e.g. NCHW along channels with N = 1): split columns too.
    const int64_t nsplit = (tasks + outer - 1) / outer;
    // A task's consecutive pieces of one row are one column range (one memcpy per part).
    tensor::parallel_for(0, outer * nsplit, 1, [&](int64_t b, int64_t e) {
      for (int64_t u = b; u < e;) {
        const int64_t row = u / nsplit;
        const int64_t stop = std::min(e, (row + 1) * nsplit);
        run(row, row + 1, u - row * nsplit, stop - row * nsplit, nsplit);
        u = stop;
      }
    });
  }
}

Tensor cat_int(const Names& nm, const std::vector<Tensor>& xs, const std::vector<QP>& qps, int64_t dim, QP qo,
               bool relu) {
  const char* op = nm.op;
  QP_CHECK_VALUE(xs.size() == qps.size(), "qplugin::", op, ": one qparams entry per input expected");
  int64_t d = dim;
  const auto shape = cat_shape(nm, xs, &d);
  const ScalarType qt = int_dtype_of(op, (std::string(nm.a) + "[0]").c_str(), xs[0]);
  for (size_t i = 0; i < xs.size(); ++i) {
    QP_CHECK(tensor::dtype(xs[i]) == tensor::dtype(xs[0]), "qplugin::", op, ": ", nm.a, "[", i,
             "] should have the dtype of ", nm.a, "[0] (", tensor::dtype(xs[0]), "), got ", tensor::dtype(xs[i]));
    // plain: the i-th entries of scales / zero_points; quantized: an input's qparams
    if (nm.plain) {
      std::string at_i = "[";  // appended, not "[" + ...: GCC 12's C++20 string inlining warns falsely
      at_i += std::to_string(i);
      at_i += ']';
      check_scale(op, ("scales" + at_i).c_str(), qps[i].scale);
      check_zero_point(op, ("zero_points" + at_i).c_str(), qps[i].zero_point, qt);
    } else {
      check_scale(op, "input scale", qps[i].scale);
      check_zero_point(op, "input zero_point", qps[i].zero_point, qt);
    }
  }
  check_scale(op, "scale", qo.scale);
  check_zero_point(op, "zero_point", qo.zero_point, qt);
  Tensor out = tensor::empty(shape, tensor::dtype(xs[0]), cat_format(xs));
  cat_into(nm, xs, qps, d, qo, relu, out);
  return out;
}

}  // namespace cpu

}  // namespace qplugin
