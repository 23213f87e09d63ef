// Shared argument checks. Every message names the op, the argument and what
// was seen: "qplugin::<op>: <arg> should be <x>, got <v>".
#pragma once
#include <sys/resource.h>
#include <unistd.h>
#include <algorithm>

#include "utils/torch_api.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>

#include "kernels/quantize_math.h"

namespace qplugin {

// The glue (cpu/) and the kernels work on plain integer data: a uint8 / int8 / int32 tensor with
// its scale and zero point beside it. The plain integer dtype is also the range tag (no quantized
// dtype below the QuantizedCPU adapters, which map theirs with underlying_dtype, utils/qtensor.h).
inline std::pair<int64_t, int64_t> qrange(ScalarType t) {
  switch (t) {
    case kByte: return {0, 255};
    case kChar: return {-128, 127};
    case kInt: return {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()};
    default: QP_ASSERT(false, "qplugin: a range tag should be uint8, int8 or int32, got ", t);
  }
}

// The name messages give a range tag: the quantized dtype its values stand for (the messages
// have always said "for QUInt8"; the plain ops share them).
inline const char* range_name(ScalarType t) { return t == kByte ? "QUInt8" : t == kChar ? "QInt8" : "QInt32"; }

// The plain tier's dtypes: uint8, int8, int32 holding quantized values.
inline bool is_plain_int_dtype(ScalarType t) { return t == kByte || t == kChar || t == kInt; }

inline void check_int_dtype(const char* op, const char* arg, ScalarType dtype) {
  QP_CHECK(is_plain_int_dtype(dtype), "qplugin::", op, ": ", arg,
           " should be torch.uint8, torch.int8 or torch.int32, got ", dtype);
}

// A plain-tier input: a uint8 / int8 / int32 tensor (never a quantized one).
inline void check_int_input(const char* op, const char* arg, const Tensor& t) {
  QP_CHECK(is_plain_int_dtype(tensor::dtype(t)), "qplugin::", op, ": ", arg,
           " should be a uint8, int8 or int32 tensor, got dtype ", tensor::dtype(t));
}

// A scale must be positive and finite, and stay so as a float with a finite
// float reciprocal (8-bit quantize multiplies by kernels::inv_scale_of(scale)).
// `what` is appended to `arg` in the message (e.g. arg "qa", what " scale").
inline void check_scale(const char* op, const char* arg, double scale, const char* what = "") {
  QP_CHECK_VALUE(std::isfinite(scale) && scale > 0, "qplugin::", op, ": ", arg, what,
                 " should be a positive finite number, got ", scale);
  const float fs = static_cast<float>(scale);
  QP_CHECK_VALUE(fs > 0.0f && std::isfinite(kernels::inv_scale_of(scale)) && std::isfinite(fs), "qplugin::", op, ": ",
                 arg, what, " should be representable as a float32 with a finite reciprocal, got ", scale);
}

// `dtype`: the range tag (uint8 / int8 / int32, see qrange).
inline void check_zero_point(const char* op, const char* arg, int64_t zero_point, ScalarType dtype,
                             const char* what = "") {
  const auto r = qrange(dtype);
  QP_CHECK_VALUE(zero_point >= r.first && zero_point <= r.second, "qplugin::", op, ": ", arg, what, " should be in [",
                 r.first, ", ", r.second, "] for ", range_name(dtype), ", got ", zero_point);
}

// THE rule for output scales of requantizing ops (add, mul, conv, linear, batch_norm2d: every
// op whose epilogue multiplies an input step by a requantize multiplier
// m = input scale [* weight scale ...] / output scale). Above kMaxRequantMultiplier output
// steps per input step any nonzero 8-bit input difference saturates anyway, and the float32
// epilogues can no longer keep an exact zero at the zero point (255 * m * 2^-24 < 0.5 step
// needs m < 2^15) or overflow float32 (inf * 0 = NaN). Such an output scale is rejected.
constexpr double kMaxRequantMultiplier = 32768.0;  // 2^15

inline void check_requant_multiplier(const char* op, const char* out_arg, double out_scale, double in_scale,
                                     const char* in_what) {
  const double m = in_scale / out_scale;
  QP_CHECK_VALUE(m <= kMaxRequantMultiplier, "qplugin::", op, ": ", out_arg, " should be at least ",
                 in_scale / kMaxRequantMultiplier, " (", in_what, " ", in_scale,
                 " / 2^15: at most 2^15 output steps per input step), got ", out_scale);
}

// Wraps a possibly negative dim into [0, ndim).
inline int64_t check_dim(const char* op, const char* arg, int64_t dim, int64_t ndim) {
  const int64_t lo = ndim > 0 ? -ndim : -1;
  const int64_t hi = ndim > 0 ? ndim - 1 : 0;
  QP_CHECK_INDEX(dim >= lo && dim <= hi, "qplugin::", op, ": ", arg, " should be in [", lo, ", ", hi,
                 "] for a tensor of ", ndim, " dims, got ", dim);
  return dim < 0 ? dim + (ndim > 0 ? ndim : 1) : dim;
}

inline void check_float_input(const char* op, const char* arg, const Tensor& t) {
  QP_CHECK(tensor::dtype(t) == kFloat, "qplugin::", op, ": ", arg, " should be a float32 tensor, got dtype ",
           tensor::dtype(t));
}

// The CPU-key kernel of an op that takes quantized tensors: reached only when no input is one
// (a quantized input dispatches to QuantizedCPU), so it refuses with the op's message.
[[noreturn]] inline void refuse_non_quantized(const char* op, const char* arg, const Tensor& t) {
  QP_CHECK(false, "qplugin::", op, ": ", arg,
           " should be a quantized tensor (quint8, qint8 or qint32), got a non-quantized tensor of dtype ",
           tensor::dtype(t));
}

// Outputs whose size an op computes from its arguments (conv, pools, upsample): the op and the
// shape are named before any allocation, instead of the allocator's "can't allocate memory" or
// "integer multiplication overflow". The bound is the smallest of 64 GiB (far beyond any sane
// output), the machine's physical memory (an output larger than RAM only fails in the allocator)
// and, in a process under an address-space cap (setrlimit RLIMIT_AS: the fuzzer's memory-cap
// mode), what was left of the cap when the bound was first asked for.
// elem_size: the largest element an op's output can have (4 where it may be int32 / qint32).
constexpr int64_t kMaxOutputBytes = int64_t{1} << 36;

inline int64_t max_output_bytes() {
  static const int64_t limit = [] {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    int64_t l = pages > 0 && page > 0 ? std::min<int64_t>(kMaxOutputBytes, int64_t{pages} * page) : kMaxOutputBytes;
    struct rlimit cap;
    if (getrlimit(RLIMIT_AS, &cap) == 0 && cap.rlim_cur != RLIM_INFINITY && page > 0) {
      long mapped_pages = 0;  // the process's virtual size, the first field of /proc/self/statm
      if (FILE* f = std::fopen("/proc/self/statm", "r")) {
        if (std::fscanf(f, "%ld", &mapped_pages) != 1) mapped_pages = 0;
        std::fclose(f);
      }
      l = std::min<int64_t>(l, std::max<int64_t>(0, static_cast<int64_t>(cap.rlim_cur) - int64_t{mapped_pages} * page));
    }
    return l;
  }();
  return limit;
}

inline void check_output_size(const char* op, IntArrayRef sizes, int64_t elem_size) {
  int64_t bytes = elem_size;
  bool over = false;
  bool empty = false;
  for (int64_t s : sizes) {
    QP_CHECK_VALUE(s >= 0, "qplugin::", op, ": output sizes should be non-negative, got ", sizes);
    empty = empty || s == 0;
  }
  // the contiguous strides multiply the sizes (a 0 counted as 1): they must fit in int64 even for
  // an empty output, whose other sizes are otherwise free
  for (int64_t s : sizes) over = over || __builtin_mul_overflow(bytes, std::max<int64_t>(s, 1), &bytes);
  QP_CHECK_VALUE(!(empty && over), "qplugin::", op, ": output of shape ", sizes,
                 " is empty but its strides overflow int64");
  if (empty) return;
  const int64_t limit = max_output_bytes();
  QP_CHECK_VALUE(!over && bytes <= limit, "qplugin::", op, ": output of shape ", sizes, " would take ",
                 over ? std::string("more than 2^63") : "up to " + std::to_string(bytes), " bytes, more than the ",
                 limit,
                 " bytes an op may allocate (the smallest of 64 GiB, "
                 "this machine's memory and the address space left under its limit)");
}

// Conv / pool geometry (stride, dilation, padding, kernel) is bounded so that every size
// computation stays far inside int64 and absurd values get a clear error at prepack.
constexpr int64_t kMaxGeometry = int64_t{1} << 16;

// The bytes a tensor's sizes, strides and offset reach into its storage (0 when it is empty);
// -1 when that count overflows int64.
inline int64_t storage_bytes_needed(const Tensor& t) {
  const auto sizes = t.sizes();
  const auto strides = t.strides();
  int64_t last = t.storage_offset();  // the furthest element, counted in elements
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 0) return 0;
    int64_t reach = 0;
    if (__builtin_mul_overflow(sizes[d] - 1, strides[d], &reach) || __builtin_add_overflow(last, reach, &last)) {
      return -1;
    }
  }
  int64_t bytes = 0;
  if (__builtin_add_overflow(last, 1, &last) ||
      __builtin_mul_overflow(last, static_cast<int64_t>(t.element_size()), &bytes)) {
    return -1;
  }
  return bytes;
}

// A tensor from a loaded file must have the bytes its shape claims: torch's
// unpickler can build a tensor over a truncated or emptied storage record.
inline void check_storage_covers(const char* op, const char* arg, const Tensor& t) {
  if (!t.defined() || t.numel() == 0) return;
  const tensor::StorageView s = tensor::storage_of(t);
  QP_CHECK(s.exists, "qplugin::", op, ": ", arg, " has no storage");
  // torch's loader sizes a storage from the pickled metadata, not from its record: an emptied
  // record gives a storage that claims its bytes but has no data behind it.
  QP_CHECK_VALUE(s.data != nullptr, "qplugin::", op, ": ", arg, " of shape ", t.sizes(), " has a storage of ", s.nbytes,
                 " bytes with no data behind it (emptied or corrupted record)");
  const int64_t need = storage_bytes_needed(t);
  QP_CHECK_VALUE(need >= 0 && s.nbytes >= need, "qplugin::", op, ": ", arg, " of shape ", t.sizes(), " needs ",
                 need >= 0 ? std::to_string(need) : std::string("more than 2^63"), " bytes of storage, got ", s.nbytes,
                 " (truncated or corrupted state)");
}

}  // namespace qplugin
