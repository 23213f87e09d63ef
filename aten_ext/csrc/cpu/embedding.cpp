// CPU glue for embeddings on row-wise quantized weights: torch's quantized::embedding_bag_*
// schemas on fused rows under qplugin, and the plain tier's tables. Three weight forms, one kernel
// (kernels/embedding_kernel.h):
//   * EmbeddingPackedParamsBase (quantized/cpu/embedding.cpp, on the bag glue of cpu/embedding.h);
//   * torch's fused row-wise uint8 tensors (embedding_bag_byte_prepack: codes then float32 scale
//     and bias per row; embedding_bag_4bit_prepack: nibbles then fp16 scale and bias):
//     embedding_bag_{byte,4bit}_rowwise_offsets, and the prepack / unpack ops of that format;
//   * the plain tier's checked buffer around 8-bit fused rows (plain_embedding_prepack: header,
//     size and checksum, packed_params/plain_buffer.h): plain_embedding_bag, plain_embedding_unpack.
// Here: argument and index checks, bag boundaries, pruned-row mapping, threads.
#include "utils/torch_api.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <utility>

#include "cpu/embedding.h"
#include "kernels/dispatch.h"
#include "kernels/embedding_kernel.h"
#include "packed_params/plain_buffer.h"
#include "utils/checks.h"

namespace qplugin {
namespace {

constexpr int64_t kGrain = 1 << 15;  // output floats (x rows) per task, roughly

// 0, step, 2 * step, ... (n values)
std::vector<int64_t> ramp(int64_t n, int64_t step) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = i * step;
  return v;
}

Tensor index_tensor(const char* op, const char* arg, const Tensor& t) {
  QP_CHECK_VALUE(tensor::dtype(t) == kLong || tensor::dtype(t) == kInt, "qplugin::", op, ": ", arg,
                 " should be an int64 or int32 tensor, got dtype ", tensor::dtype(t));
  return tensor::contiguous(tensor::to(t, kLong));
}

// [min, max] of a non-empty int64 tensor (one vectorised pass; at::aminmax costs several times more
// than the bag kernel's per-row work at recommendation sizes).
std::pair<int64_t, int64_t> index_range(const Tensor& t) {
  int64_t lo = 0, hi = 0;
  QPLUGIN_ISA_CALL(index_range, tensor::data<int64_t>(t), t.numel(), &lo, &hi);
  return {lo, hi};
}

// The error for indices outside [0, rows), once the kernel found one (it skipped them unread).
[[noreturn]] void bad_indices(const char* op, const Tensor& idx, int64_t rows) {
  const auto [lo, hi] = index_range(idx);
  QP_CHECK_INDEX(false, "qplugin::", op, ": indices should be in [0, ", rows, ") (num_embeddings), got values in [", lo,
                 ", ", hi, "]");
  std::abort();  // (unreachable: QP_CHECK_INDEX(false, ...) throws)
}

}  // namespace

namespace cpu {

// Maps indices to rows (pruned weights: through compressed_indices_mapping, whose range is checked
// here). Unmapped indices are checked by the kernel as it reads them (run_bags raises).
Tensor rows_of(const char* op, const Tensor& indices, int64_t rows, bool pruned_weights,
               const std::optional<Tensor>& mapping) {
  const Tensor idx = index_tensor(op, "indices", indices);
  if (pruned_weights) {
    QP_CHECK_VALUE(mapping.has_value() && mapping->defined(), "qplugin::", op,
                   ": compressed_indices_mapping should be given with pruned_weights=True");
    const Tensor map = index_tensor(op, "compressed_indices_mapping", *mapping);
    QP_CHECK_VALUE(map.dim() == 1, "qplugin::", op, ": compressed_indices_mapping should be 1-D, got shape ",
                   map.sizes());
    const int64_t m = map.numel();
    if (idx.numel() > 0) {
      const auto [lo, hi] = index_range(idx);
      QP_CHECK_INDEX(lo >= 0 && hi < m, "qplugin::", op, ": indices should be in [0, ", m,
                     ") (compressed_indices_mapping's size), got values in [", lo, ", ", hi, "]");
    }
    if (m > 0) {
      const auto [lo, hi] = index_range(map);
      QP_CHECK_INDEX(lo >= -1 && hi < rows, "qplugin::", op, ": compressed_indices_mapping should hold rows in [-1, ",
                     rows, "), got values in [", lo, ", ", hi, "]");
    }
    return idx.numel() > 0 ? tensor::index_select(map, 0, tensor::reshape(idx, std::vector<int64_t>{-1})) : idx;
  }
  return idx;
}

Bags bags_of(const char* op, const Tensor& indices, const std::optional<Tensor>& offsets, int64_t mode,
             bool pruned_weights, const std::optional<Tensor>& per_sample_weights, const std::optional<Tensor>& mapping,
             bool include_last_offset, int64_t rows, int64_t dim) {
  QP_CHECK_VALUE(mode >= 0 && mode <= 2, "qplugin::", op, ": mode should be 0 (sum), 1 (mean) or 2 (max), got ", mode);
  const bool has_offsets = offsets.has_value() && offsets->defined();
  if (has_offsets) {
    QP_CHECK_VALUE(indices.dim() == 1, "qplugin::", op, ": indices should be 1-D when offsets are given, got shape ",
                   indices.sizes());
  } else {
    QP_CHECK_VALUE(indices.dim() == 2, "qplugin::", op,
                   ": indices should be 2-D [bags, indices per bag] when offsets is None, got shape ", indices.sizes());
  }
  Bags b(rows_of(op, indices, rows, pruned_weights, mapping));
  b.pruned = pruned_weights;
  const int64_t n = b.idx.numel();
  if (has_offsets) {
    Tensor off = index_tensor(op, "offsets", *offsets);
    QP_CHECK_VALUE(off.dim() == 1, "qplugin::", op, ": offsets should be 1-D, got shape ", off.sizes());
    QP_CHECK_VALUE(!include_last_offset || off.numel() >= 1, "qplugin::", op,
                   ": offsets should have at least 1 entry with include_last_offset=True, got 0");
    const int64_t nbags = include_last_offset ? off.numel() - 1 : off.numel();
    b.nbags = nbags;
    b.starts.resize(static_cast<size_t>(nbags + 1));
    int64_t* s = b.starts.data();
    const int64_t* o = tensor::data<int64_t>(off);
    std::copy(o, o + nbags, s);
    s[nbags] = include_last_offset ? o[nbags] : n;
    QP_CHECK_VALUE(nbags == 0 || s[0] == 0, "qplugin::", op, ": offsets should start at 0, got ", s[0]);
    const bool ok = QPLUGIN_ISA_CALL(bag_bounds_ok, s, nbags, n);  // the first bad pair is looked for only to name it
    for (int64_t i = 0; !ok && i < nbags; ++i) {
      QP_CHECK_VALUE(s[i] <= s[i + 1] && s[i + 1] <= n, "qplugin::", op,
                     ": offsets should be non-decreasing and at most the number of indices (", n, "), got offsets[", i,
                     "] = ", s[i], " then ", s[i + 1]);
    }
  } else {
    const int64_t per = indices.size(1);
    b.nbags = indices.size(0);
    b.starts = ramp(b.nbags + 1, per);  // bag i starts at i * per (all 0 for per = 0)
  }
  if (per_sample_weights.has_value() && per_sample_weights->defined()) {
    const Tensor& w = *per_sample_weights;
    QP_CHECK_VALUE(mode == 0, "qplugin::", op, ": per_sample_weights should only be given with mode 0 (sum), got mode ",
                   mode);
    QP_CHECK_VALUE(is_floating_dtype(tensor::dtype(w)) && w.numel() == n, "qplugin::", op,
                   ": per_sample_weights should be a float tensor with one weight an index (", n, "), got ",
                   tensor::dtype(w), " of shape ", w.sizes());
    b.psw = tensor::contiguous(tensor::to(w, kFloat));
  }
  b.out_sizes = {b.nbags, dim};
  check_output_size(op, b.out_sizes, 4);
  return b;
}

Tensor run_bags(const char* op, const kernels::EmbRows& w, const Bags& b, int64_t mode) {
  Tensor out = tensor::empty(b.out_sizes, kFloat);
  const int64_t n = b.idx.numel();
  const int64_t* idx = tensor::data<int64_t>(b.idx);
  const int64_t* starts = b.starts.data();
  // Indices the kernel will not read (no output, or past include_last_offset's last offset) are
  // checked here, so a bad one raises whatever the bags.
  if (!b.pruned && n > 0 && (out.numel() == 0 || starts[b.nbags] < n)) {
    const auto [lo, hi] = index_range(b.idx);
    if (lo < 0 || hi >= w.rows) bad_indices(op, b.idx, w.rows);
  }
  if (out.numel() == 0) return out;
  const float* psw = b.psw.has_value() ? tensor::data<float>(*b.psw) : nullptr;
  float* o = tensor::mutable_data<float>(out);
  const int64_t per_bag = std::max<int64_t>(1, (n / std::max<int64_t>(b.nbags, 1)) * std::max<int64_t>(w.D, 1));
  std::atomic<bool> ok{true};
  tensor::parallel_for(0, b.nbags, std::max<int64_t>(1, kGrain / per_bag), [&](int64_t b0, int64_t b1) {
    if (!QPLUGIN_ISA_CALL(embedding_bag_rows, w, idx, starts, psw, static_cast<int>(mode), b.pruned, b0, b1, o))
      ok.store(false, std::memory_order_relaxed);
  });
  if (!ok.load()) bad_indices(op, b.idx, w.rows);
  return out;
}

}  // namespace cpu

namespace {

using cpu::Bags;
using cpu::bags_of;
using cpu::run_bags;

// ---- torch's fused row-wise format --------------------------------------------------------

// The kernel's view of `rows` fused rows of `cols` bytes at base: 8-bit rows = D codes + float32
// scale + float32 bias; 4-bit rows = D / 2 bytes + fp16 scale + fp16 bias.
kernels::EmbRows fused_rows(const uint8_t* base, int64_t rows, int64_t cols, int64_t bits) {
  const int64_t tail = bits == 8 ? 8 : 4;
  return kernels::EmbRows{
      base,      cols, bits == 8 ? cols - 8 : 2 * (cols - 4), static_cast<int>(bits), base + cols - tail, cols,
      bits == 4, rows};
}

// The kernel's view of a fused weight tensor (kept contiguous in *keep).
kernels::EmbRows fused_view(const char* op, const Tensor& weight, int64_t bits, std::optional<Tensor>* keep) {
  const int64_t tail = bits == 8 ? 8 : 4;
  QP_CHECK_VALUE(tensor::dtype(weight) == kByte && weight.dim() == 2 && weight.size(1) >= tail, "qplugin::", op,
                 ": weight should be a 2-D uint8 tensor of fused rows (",
                 bits == 8 ? "codes, "
                             "float32 scale, float32 bias: embedding_bag_byte_prepack"
                           : "nibbles, fp16 scale, fp16 bias: "
                             "embedding_bag_4bit_prepack",
                 ") with at least ", tail, " columns, got ", "dtype ", tensor::dtype(weight), " of shape ",
                 weight.sizes());
  const Tensor& w = keep->emplace(tensor::contiguous(weight));
  return fused_rows(tensor::data<uint8_t>(w), w.size(0), w.size(1), bits);
}

// embedding_bag over the fused rows w (the arguments after the weight: QPLUGIN_EMBEDDING_BAG_ARGS).
Tensor embedding_bag_over(const char* op, const kernels::EmbRows& w, QPLUGIN_EMBEDDING_BAG_ARGS) {
  const Bags b = bags_of(op, indices, offsets, mode, pruned_weights, per_sample_weights, compressed_indices_mapping,
                         include_last_offset, w.rows, w.D);
  return run_bags(op, w, b, mode);
}

Tensor embedding_bag_rowwise(const char* op, int64_t bits, const Tensor& weight, QPLUGIN_EMBEDDING_BAG_ARGS) {
  std::optional<Tensor> keep;
  return embedding_bag_over(op, fused_view(op, weight, bits, &keep), indices, offsets, scale_grad_by_freq, mode,
                            pruned_weights, per_sample_weights, compressed_indices_mapping, include_last_offset);
}

Tensor embedding_bag_byte_rowwise_offsets(const Tensor& weight, QPLUGIN_EMBEDDING_BAG_ARGS) {
  return embedding_bag_rowwise("embedding_bag_byte_rowwise_offsets", 8, weight, indices, offsets, scale_grad_by_freq,
                               mode, pruned_weights, per_sample_weights, compressed_indices_mapping,
                               include_last_offset);
}
Tensor embedding_bag_4bit_rowwise_offsets(const Tensor& weight, QPLUGIN_EMBEDDING_BAG_ARGS) {
  return embedding_bag_rowwise("embedding_bag_4bit_rowwise_offsets", 4, weight, indices, offsets, scale_grad_by_freq,
                               mode, pruned_weights, per_sample_weights, compressed_indices_mapping,
                               include_last_offset);
}

// ---- the plain tier's checked tables (packed_params/plain_buffer.h, kind kEmbedding) ----------

Tensor plain_embedding_prepack(const Tensor& fused_rows, int64_t bits) {
  return plain_buffer::pack_embedding("plain_embedding_prepack", fused_rows, bits);
}

Tensor plain_embedding_unpack(const Tensor& packed) {
  const plain_buffer::EmbeddingRows r = plain_buffer::view_embedding("plain_embedding_unpack", packed);
  Tensor out = tensor::empty(std::vector<int64_t>{r.rows, r.D + 8}, kByte);
  if (out.numel() > 0) std::memcpy(tensor::mutable_data<uint8_t>(out), r.data, static_cast<size_t>(out.numel()));
  return out;
}

Tensor plain_embedding_bag(const Tensor& packed, int64_t num_embeddings, int64_t embedding_dim, const Tensor& indices,
                           const std::optional<Tensor>& offsets, int64_t mode, bool pruned_weights,
                           const std::optional<Tensor>& per_sample_weights,
                           const std::optional<Tensor>& compressed_indices_mapping, bool include_last_offset) {
  constexpr const char* op = "plain_embedding_bag";
  const plain_buffer::EmbeddingRows r = plain_buffer::view_embedding(op, packed);
  const int64_t n = r.rows, D = r.D;
  QP_CHECK_VALUE(n == num_embeddings && D == embedding_dim, "qplugin::", op, ": packed should hold a [", num_embeddings,
                 ", ", embedding_dim, "] table (num_embeddings, embedding_dim), got [", n, ", ", D, "]");
  return embedding_bag_over(op, fused_rows(r.data, n, D + 8, 8), indices, offsets, false, mode, pruned_weights,
                            per_sample_weights, compressed_indices_mapping, include_last_offset);
}

// Float rows [..., D] (float32 or float16) as a contiguous float32 [rows, D].
Tensor float_rows(const char* op, const Tensor& weight) {
  QP_CHECK_VALUE(tensor::dtype(weight) == kFloat || tensor::dtype(weight) == kHalf, "qplugin::", op,
                 ": weight should be a float32 or float16 tensor, got dtype ", tensor::dtype(weight));
  QP_CHECK_VALUE(weight.dim() >= 2, "qplugin::", op, ": weight should have at least 2 dims [..., rows, D], got shape ",
                 weight.sizes());
  // rows counted, not inferred: reshape({-1, 0}) is ambiguous for D = 0 (fuzzer seed 707)
  const IntArrayRef sizes = weight.sizes();
  const int64_t D = weight.size(-1);
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < sizes.size(); ++d) rows *= sizes[d];
  return tensor::reshape(tensor::contiguous(tensor::to(weight, kFloat)), std::vector<int64_t>{rows, D});
}

std::vector<int64_t> with_last(IntArrayRef sizes, int64_t last) {
  std::vector<int64_t> s = sizes.vec();
  s.back() = last;
  return s;
}

// torch's FloatToFused8BitRowwiseQuantized: scale = range / 255, bias = min,
// code = lrintf((x - min) * (255 / (range + 1e-8))).
Tensor embedding_bag_byte_prepack(const Tensor& weight) {
  constexpr const char* op = "embedding_bag_byte_prepack";
  const Tensor x = float_rows(op, weight);
  const int64_t rows = x.size(0), D = x.size(1);
  Tensor out = tensor::empty(with_last(weight.sizes(), D + 8), kByte);
  const float* xp = tensor::data<float>(x);
  uint8_t* op_ = tensor::mutable_data<uint8_t>(out);
  tensor::parallel_for(0, rows, std::max<int64_t>(1, kGrain / std::max<int64_t>(D, 1)), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* in = xp + r * D;
      uint8_t* o = op_ + r * (D + 8);
      float lo = D > 0 ? in[0] : 0.0f, hi = lo;
      for (int64_t j = 1; j < D; ++j) {
        lo = std::min(lo, in[j]);
        hi = std::max(hi, in[j]);
      }
      const float range = hi - lo;
      const float scale = range / 255.0f, inv = 255.0f / (range + 1e-8f);
      for (int64_t j = 0; j < D; ++j) {
        const long q = std::lrintf((in[j] - lo) * inv);
        o[j] = static_cast<uint8_t>(std::min<long>(255, std::max<long>(0, q)));
      }
      std::memcpy(o + D, &scale, 4);
      std::memcpy(o + D + 4, &lo, 4);
    }
  });
  return out;
}

// torch's FloatToFusedNBitRowwiseQuantizedSBHalf at 4 bits: bias = fp16(min), scale =
// fp16(range / 15) (1 where that is 0 or its reciprocal overflows), code = clamp(lrintf((x -
// bias) / scale), 0, 15), element 2j in the low nibble.
Tensor embedding_bag_4bit_prepack(const Tensor& weight, bool optimized_qparams, int64_t nbins, double ratio) {
  constexpr const char* op = "embedding_bag_4bit_prepack";
  QP_CHECK_NOT_IMPLEMENTED(!optimized_qparams, "qplugin::", op,
                           ": optimized_qparams=True (the greedy range search) is not supported; pass False");
  const Tensor x = float_rows(op, weight);
  const int64_t rows = x.size(0), D = x.size(1), nb = (D + 1) / 2;
  Tensor out = tensor::empty(with_last(weight.sizes(), nb + 4), kByte);
  const float* xp = tensor::data<float>(x);
  uint8_t* op_ = tensor::mutable_data<uint8_t>(out);
  tensor::parallel_for(0, rows, std::max<int64_t>(1, kGrain / std::max<int64_t>(D, 1)), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* in = xp + r * D;
      uint8_t* o = op_ + r * (nb + 4);
      float lo = D > 0 ? in[0] : 0.0f, hi = lo;
      for (int64_t j = 1; j < D; ++j) {
        lo = std::min(lo, in[j]);
        hi = std::max(hi, in[j]);
      }
      const Half lo_h(lo);
      lo = static_cast<float>(lo_h);
      const float range = hi - lo;
      float scale = range == 0 ? 1.0f : range / 15.0f;
      Half scale_h(scale);
      scale = static_cast<float>(scale_h);
      if (scale == 0) {
        scale = 1.0f;
        scale_h = Half(1.0f);
      }
      float inv = 1.0f / scale;
      if (std::isinf(inv)) {
        scale_h = Half(1.0f);
        inv = 1.0f;
      }
      std::memset(o, 0, nb);
      for (int64_t j = 0; j < D; ++j) {
        const long q = std::min<long>(15, std::max<long>(0, std::lrintf((in[j] - lo) * inv)));
        o[j / 2] |= static_cast<uint8_t>(q << ((j % 2) * 4));
      }
      std::memcpy(o + nb, &scale_h.x, 2);
      std::memcpy(o + nb + 2, &lo_h.x, 2);
    }
  });
  return out;
}

// Fused rows back to float: v = fma(scale, code, bias), the kernel's value.
Tensor fused_unpack(const char* op, const Tensor& weight, int64_t bits) {
  const int64_t tail = bits == 8 ? 8 : 4;
  QP_CHECK_VALUE(tensor::dtype(weight) == kByte && weight.dim() >= 1 && weight.size(-1) >= tail, "qplugin::", op,
                 ": weight should be a uint8 tensor of fused rows with at least ", tail, " columns, got dtype ",
                 tensor::dtype(weight), " of shape ", weight.sizes());
  const Tensor w2 = tensor::reshape(tensor::contiguous(weight), std::vector<int64_t>{-1, weight.size(-1)});
  std::optional<Tensor> keep;
  const kernels::EmbRows w = fused_view(op, w2, bits, &keep);
  Bags b(tensor::empty(std::vector<int64_t>{w.rows}, kLong));
  b.nbags = w.rows;
  std::iota(tensor::mutable_data<int64_t>(b.idx), tensor::mutable_data<int64_t>(b.idx) + b.nbags, int64_t{0});
  b.starts = ramp(b.nbags + 1, 1);
  b.out_sizes = {b.nbags, w.D};
  return tensor::reshape(run_bags(op, w, b, 0), with_last(weight.sizes(), w.D));
}

Tensor embedding_bag_byte_unpack(const Tensor& weight) { return fused_unpack("embedding_bag_byte_unpack", weight, 8); }
Tensor embedding_bag_4bit_unpack(const Tensor& weight) { return fused_unpack("embedding_bag_4bit_unpack", weight, 4); }

}  // namespace

QPLUGIN_LIBRARY_IMPL(qplugin, CPU, m) {
  m.impl("embedding_bag_byte_rowwise_offsets", QPLUGIN_FN(&embedding_bag_byte_rowwise_offsets));
  m.impl("embedding_bag_4bit_rowwise_offsets", QPLUGIN_FN(&embedding_bag_4bit_rowwise_offsets));
  m.impl("embedding_bag_byte_prepack", QPLUGIN_FN(&embedding_bag_byte_prepack));
  m.impl("embedding_bag_4bit_prepack", QPLUGIN_FN(&embedding_bag_4bit_prepack));
  m.impl("embedding_bag_byte_unpack", QPLUGIN_FN(&embedding_bag_byte_unpack));
  m.impl("embedding_bag_4bit_unpack", QPLUGIN_FN(&embedding_bag_4bit_unpack));
  m.impl("plain_embedding_prepack", QPLUGIN_FN(&plain_embedding_prepack));
  m.impl("plain_embedding_unpack", QPLUGIN_FN(&plain_embedding_unpack));
  m.impl("plain_embedding_bag", QPLUGIN_FN(&plain_embedding_bag));
}

}  // namespace qplugin
