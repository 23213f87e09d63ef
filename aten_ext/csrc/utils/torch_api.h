// The torch the plain library is written against: one vocabulary for tensors, errors, allocation,
// views and threads, over either of torch's two C++ APIs.
//
//  * ATen (the default): at::Tensor, TORCH_CHECK, at::empty, at::parallel_for; built per torch
//    version, and what the quantized tier (csrc_quantized/) shares with the plain library.
//  * torch's stable ABI (QPLUGIN_STABLE_ABI, with TORCH_TARGET_VERSION): torch::stable::Tensor,
//    the C shim (aoti_torch_*, torch_call_dispatcher) and torch/headeronly; one build loads under
//    every later torch (docs/design/plain.md "The plain library on torch's stable ABI").
//
// Glue code names only what is here: `Tensor`, `IntArrayRef`, `ScalarType`, `MemoryFormat`, the
// dtype constants, the QP_CHECK* macros, the `tensor::` functions (allocation, views, copies,
// parallel_for) and the argument types of registered ops (`IntListArg`, ...). Tensor methods common
// to both APIs (sizes, strides, size, stride, dim, numel, element_size, defined, storage_offset,
// is_contiguous(), the untyped const_data_ptr() / mutable_data_ptr()) are used directly; dtypes
// and typed data pointers go through tensor::dtype / tensor::data<T> / tensor::mutable_data<T>.
#pragma once

#include <cstdint>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#ifdef QPLUGIN_STABLE_ABI
#include <torch/csrc/inductor/aoti_torch/c/shim.h>
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>
#include <torch/csrc/stable/tensor.h>
#include <torch/headeronly/core/MemoryFormat.h>
#include <torch/headeronly/core/ScalarType.h>
#include <torch/headeronly/util/Half.h>
#include <torch/headeronly/util/HeaderOnlyArrayRef.h>
#else
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/library.h>
#endif

namespace qplugin {

#ifdef QPLUGIN_STABLE_ABI
using Tensor = torch::stable::Tensor;
using IntArrayRef = torch::headeronly::IntHeaderOnlyArrayRef;
using ScalarType = torch::headeronly::ScalarType;
using MemoryFormat = torch::headeronly::MemoryFormat;
using Half = torch::headeronly::Half;
// Argument types of registered ops: what TORCH_BOX converts a schema's lists to.
using IntListArg = const std::vector<int64_t>&;                    // int[]
using OptIntListArg = const std::optional<std::vector<int64_t>>&;  // int[]?
using FloatListArg = const std::vector<double>&;                   // float[]
using TensorListArg = const std::vector<Tensor>&;                  // Tensor[]
#else
using Tensor = at::Tensor;
using IntArrayRef = at::IntArrayRef;
using ScalarType = at::ScalarType;
using MemoryFormat = at::MemoryFormat;
using Half = at::Half;
using IntListArg = at::IntArrayRef;
using OptIntListArg = at::OptionalIntArrayRef;
using FloatListArg = at::ArrayRef<double>;
using TensorListArg = at::TensorList;
#endif

constexpr ScalarType kByte = ScalarType::Byte;
constexpr ScalarType kChar = ScalarType::Char;
constexpr ScalarType kInt = ScalarType::Int;
constexpr ScalarType kLong = ScalarType::Long;
constexpr ScalarType kHalf = ScalarType::Half;
constexpr ScalarType kFloat = ScalarType::Float;
constexpr ScalarType kDouble = ScalarType::Double;
constexpr ScalarType kBool = ScalarType::Bool;

// ---- errors -----------------------------------------------------------------------------------
// QP_CHECK: RuntimeError; QP_CHECK_VALUE: ValueError; QP_CHECK_INDEX: IndexError;
// QP_CHECK_NOT_IMPLEMENTED: NotImplementedError; QP_ASSERT: an internal invariant (RuntimeError).
// The message is the arguments streamed one after another.
#ifdef QPLUGIN_STABLE_ABI
namespace detail {
inline void put(std::ostream& os, const IntArrayRef& a) {
  os << '[';
  for (size_t i = 0; i < a.size(); ++i) os << (i ? ", " : "") << a[i];
  os << ']';
}
inline void put(std::ostream& os, const std::vector<int64_t>& a) { put(os, IntArrayRef(a)); }
inline void put(std::ostream& os, ScalarType t) { os << torch::headeronly::toString(t); }
template <typename T>
void put(std::ostream& os, const T& v) {
  os << v;
}
template <typename... Args>
std::string message(const Args&... args) {
  std::ostringstream os;
  (put(os, args), ...);
  return os.str();
}
// torch's stable boundary turns std::invalid_argument into ValueError (2.13, 2.14; RuntimeError
// from 2.15), std::out_of_range into IndexError and any other std::exception into RuntimeError.
template <typename E, typename... Args>
[[noreturn]] void fail(const Args&... args) {
  throw E(message(args...));
}
}  // namespace detail
#define QP_FAIL_IF_NOT_(E, cond, ...)                                          \
  do {                                                                         \
    if (__builtin_expect(!(cond), 0)) ::qplugin::detail::fail<E>(__VA_ARGS__); \
  } while (0)
#define QP_CHECK(cond, ...) QP_FAIL_IF_NOT_(std::runtime_error, cond, __VA_ARGS__)
#define QP_CHECK_VALUE(cond, ...) QP_FAIL_IF_NOT_(std::invalid_argument, cond, __VA_ARGS__)
#define QP_CHECK_INDEX(cond, ...) QP_FAIL_IF_NOT_(std::out_of_range, cond, __VA_ARGS__)
// torch's stable boundary has no exception that becomes NotImplementedError: a RuntimeError (its base)
#define QP_CHECK_NOT_IMPLEMENTED(cond, ...) QP_FAIL_IF_NOT_(std::runtime_error, cond, __VA_ARGS__)
#define QP_ASSERT(cond, ...)                                                                                      \
  QP_FAIL_IF_NOT_(std::logic_error, cond, "qplugin internal error: ", #cond, " (", __FILE__, ":", __LINE__, ") ", \
                  ##__VA_ARGS__)
#else
#define QP_CHECK(cond, ...) TORCH_CHECK(cond, __VA_ARGS__)
#define QP_CHECK_VALUE(cond, ...) TORCH_CHECK_VALUE(cond, __VA_ARGS__)
#define QP_CHECK_INDEX(cond, ...) TORCH_CHECK_INDEX(cond, __VA_ARGS__)
#define QP_CHECK_NOT_IMPLEMENTED(cond, ...) TORCH_CHECK_NOT_IMPLEMENTED(cond, __VA_ARGS__)
#define QP_ASSERT(cond, ...) TORCH_INTERNAL_ASSERT(cond, ##__VA_ARGS__)
#endif

// A warning (a Python UserWarning), its message streamed as the checks' are.
#ifdef QPLUGIN_STABLE_ABI
#define QP_WARN(...) \
  aoti_torch_warn(__func__, __FILE__, static_cast<uint32_t>(__LINE__), ::qplugin::str(__VA_ARGS__).c_str())
#else
#define QP_WARN(...) TORCH_WARN(__VA_ARGS__)
#endif

// The message the checks build, as a string ("a", 1, sizes -> "a1[2, 3]").
template <typename... Args>
std::string str(const Args&... args) {
#ifdef QPLUGIN_STABLE_ABI
  return detail::message(args...);
#else
  return c10::str(args...);
#endif
}

// ---- op registration ----------------------------------------------------------------------------
// QPLUGIN_LIBRARY(qplugin, m) { m.def("schema"); }  QPLUGIN_LIBRARY_IMPL(qplugin, CPU, m) {
// m.impl("name", QPLUGIN_FN(&fn)); }: torch/library.h's TORCH_LIBRARY / TORCH_FN, or the stable
// ABI's STABLE_TORCH_LIBRARY / TORCH_BOX.
#ifdef QPLUGIN_STABLE_ABI
#define QPLUGIN_LIBRARY(ns, m) STABLE_TORCH_LIBRARY(ns, m)
#define QPLUGIN_LIBRARY_IMPL(ns, key, m) STABLE_TORCH_LIBRARY_IMPL(ns, key, m)
#define QPLUGIN_FN(...) TORCH_BOX(__VA_ARGS__)
#else
#define QPLUGIN_LIBRARY(ns, m) TORCH_LIBRARY(ns, m)
#define QPLUGIN_LIBRARY_IMPL(ns, key, m) TORCH_LIBRARY_IMPL(ns, key, m)
#define QPLUGIN_FN(...) TORCH_FN(__VA_ARGS__)
#endif

// torch's is_floating_point: float64, float32 and the reduced float dtypes.
inline bool is_floating_dtype(ScalarType t) {
#ifdef QPLUGIN_STABLE_ABI
  switch (t) {
    case ScalarType::Double:
    case ScalarType::Float:
    case ScalarType::Half:
    case ScalarType::BFloat16:
    case ScalarType::Float8_e5m2:
    case ScalarType::Float8_e4m3fn:
    case ScalarType::Float8_e5m2fnuz:
    case ScalarType::Float8_e4m3fnuz:
    case ScalarType::Float8_e8m0fnu:
    case ScalarType::Float4_e2m1fn_x2: return true;
    default: return false;
  }
#else
  return at::isFloatingType(t);
#endif
}

// torch's isIntegralType(t, /*includeBool=*/false): the signed and unsigned integer types.
inline bool is_integral_dtype(ScalarType t) {
#ifdef QPLUGIN_STABLE_ABI
  switch (t) {
    case ScalarType::Byte:
    case ScalarType::Char:
    case ScalarType::Short:
    case ScalarType::Int:
    case ScalarType::Long:
    case ScalarType::UInt16:
    case ScalarType::UInt32:
    case ScalarType::UInt64: return true;
    default: return false;
  }
#else
  return at::isIntegralType(t, /*includeBool=*/false);
#endif
}

// The name torch prints for a dtype ("Byte", "Float", ...).
inline const char* dtype_name(ScalarType t) {
#ifdef QPLUGIN_STABLE_ABI
  return torch::headeronly::toString(t);
#else
  return c10::toString(t);
#endif
}

// Memory order of the dims of a tensor contiguous in `fmt`, outermost first.
inline std::vector<int64_t> memory_order(int64_t ndim, MemoryFormat fmt) {
  std::vector<int64_t> order;
  if (fmt == MemoryFormat::ChannelsLast && ndim == 4) {
    order = {0, 2, 3, 1};
  } else if (fmt == MemoryFormat::ChannelsLast3d && ndim == 5) {
    order = {0, 2, 3, 4, 1};
  } else {
    for (int64_t i = 0; i < ndim; ++i) order.push_back(i);
  }
  return order;
}

// ---- tensors: allocation, views, copies, threads ----------------------------------------------
namespace tensor {

#ifdef QPLUGIN_STABLE_ABI
namespace detail {
inline int32_t shim_dtype(ScalarType t) {
  switch (t) {
    case ScalarType::Byte: return aoti_torch_dtype_uint8();
    case ScalarType::Char: return aoti_torch_dtype_int8();
    case ScalarType::Short: return aoti_torch_dtype_int16();
    case ScalarType::Int: return aoti_torch_dtype_int32();
    case ScalarType::Long: return aoti_torch_dtype_int64();
    case ScalarType::Half: return aoti_torch_dtype_float16();
    case ScalarType::Float: return aoti_torch_dtype_float32();
    case ScalarType::Double: return aoti_torch_dtype_float64();
    case ScalarType::Bool: return aoti_torch_dtype_bool();
    default: QP_ASSERT(false, "no shim dtype for ", t);
  }
}
// Calls aten::<name> through the dispatcher with `args` and returns its first output.
template <typename R, typename... Args>
R call(const char* name, const char* overload, const Args&... args) {
  StableIValue stack[sizeof...(Args) > 0 ? sizeof...(Args) : 1] = {torch::stable::detail::from(args)...};
  STABLE_TORCH_ERROR_CODE_CHECK(torch_call_dispatcher(name, overload, stack, TORCH_ABI_VERSION));
  return torch::stable::detail::to<R>(stack[0]);
}
}  // namespace detail
#endif

// t's dtype as an integer, equal for equal dtypes (the C shim's code on the stable ABI).
inline int32_t dtype_code(const Tensor& t) {
#ifdef QPLUGIN_STABLE_ABI
  int32_t code = 0;
  STABLE_TORCH_ERROR_CODE_CHECK(aoti_torch_get_dtype(t.get(), &code));
  return code;
#else
  return static_cast<int32_t>(t.scalar_type());
#endif
}

// The bytes per element of the dtype whose dtype_code is `code`.
inline int64_t element_size_of_code(int32_t code) {
#ifdef QPLUGIN_STABLE_ABI
  return static_cast<int64_t>(aoti_torch_dtype_element_size(code));
#else
  return static_cast<int64_t>(c10::elementSize(static_cast<ScalarType>(code)));
#endif
}

#ifdef QPLUGIN_STABLE_ABI
namespace detail {
// The shim's codes of the dtypes the plain library reads, asked once.
struct DtypeCodes {
  static constexpr ScalarType kTypes[] = {kByte, kChar, kLong, kFloat, kDouble, kInt, kHalf, kBool, ScalarType::Short};
  static constexpr int kCount = sizeof(kTypes) / sizeof(kTypes[0]);
  int32_t code[kCount];
  DtypeCodes() {
    for (int i = 0; i < kCount; ++i) code[i] = shim_dtype(kTypes[i]);
  }
};
inline const DtypeCodes& dtype_codes() {
  static const DtypeCodes codes;
  return codes;
}
}  // namespace detail
#endif

// t's dtype. The glue reads dtypes and typed data pointers through these three, never through
// the tensor's scalar_type() / const_data_ptr<T>() / mutable_data_ptr<T>(): on the stable ABI
// those compare the C shim's dtype code against each dtype's code in turn, one shim call apiece
// (about 20 ns for float64 against 2.5 ns for the code read).
inline ScalarType dtype(const Tensor& t) {
#ifdef QPLUGIN_STABLE_ABI
  const int32_t code = dtype_code(t);
  const detail::DtypeCodes& c = detail::dtype_codes();
  for (int i = 0; i < detail::DtypeCodes::kCount; ++i) {
    if (c.code[i] == code) return detail::DtypeCodes::kTypes[i];
  }
  return t.scalar_type();  // a dtype the plain library does not read: torch's own mapping
#else
  return t.scalar_type();
#endif
}

#ifdef QPLUGIN_STABLE_ABI
namespace detail {
// The dtype whose elements are T.
template <typename T>
constexpr ScalarType dtype_of() {
  constexpr std::pair<bool, ScalarType> types[] = {
      {std::is_same_v<T, uint8_t>, kByte},  {std::is_same_v<T, int8_t>, kChar}, {std::is_same_v<T, int32_t>, kInt},
      {std::is_same_v<T, int64_t>, kLong},  {std::is_same_v<T, Half>, kHalf},   {std::is_same_v<T, float>, kFloat},
      {std::is_same_v<T, double>, kDouble}, {std::is_same_v<T, bool>, kBool}};
  for (const auto& [match, type] : types) {
    if (match) return type;
  }
  return ScalarType::Undefined;
}
template <typename T>
void check_data_dtype(const Tensor& t) {
  static_assert(dtype_of<T>() != ScalarType::Undefined, "no dtype for this element type");
  const ScalarType d = dtype(t);
  QP_CHECK(d == dtype_of<T>(), "expected scalar type ", dtype_of<T>(), " but found ", d);
}
}  // namespace detail
#endif

// t's data as T (t's dtype), read-only / writable.
template <typename T>
const T* data(const Tensor& t) {
#ifdef QPLUGIN_STABLE_ABI
  detail::check_data_dtype<T>(t);
  return static_cast<const T*>(t.const_data_ptr());
#else
  return t.const_data_ptr<T>();
#endif
}
template <typename T>
T* mutable_data(const Tensor& t) {
#ifdef QPLUGIN_STABLE_ABI
  detail::check_data_dtype<T>(t);
  return static_cast<T*>(t.mutable_data_ptr());
#else
  return t.mutable_data_ptr<T>();
#endif
}

// st[0, sizes.size()): the strides of a tensor of `sizes` dense in `fmt`, in memory_order's order
// (channels_last: 4-d; channels_last_3d: 5-d; otherwise the default order).
inline void dense_strides_into(IntArrayRef sizes, MemoryFormat fmt, int64_t* st) {
  const int64_t n = static_cast<int64_t>(sizes.size());
  int64_t s = 1;
  const auto put = [&](int64_t d) {
    st[d] = s;
    s *= sizes[d] > 1 ? sizes[d] : 1;
  };
  if ((fmt == MemoryFormat::ChannelsLast && n == 4) || (fmt == MemoryFormat::ChannelsLast3d && n == 5)) {
    put(1);
    for (int64_t d = n - 1; d >= 2; --d) put(d);
    put(0);
  } else {
    for (int64_t d = n - 1; d >= 0; --d) put(d);
  }
}

// Room for the strides of an n-d tensor: on the stack up to 8 dims.
class StridesBuffer {
 public:
  explicit StridesBuffer(size_t n) : heap_(n > kInline ? n : 0) {}
  int64_t* data() { return heap_.empty() ? inline_ : heap_.data(); }

 private:
  static constexpr size_t kInline = 8;
  int64_t inline_[kInline];
  std::vector<int64_t> heap_;
};

// An uninitialized CPU tensor of `sizes`, dense in `fmt`.
inline Tensor empty(IntArrayRef sizes, ScalarType dtype, MemoryFormat fmt = MemoryFormat::Contiguous) {
#ifdef QPLUGIN_STABLE_ABI
  StridesBuffer st(sizes.size());
  dense_strides_into(sizes, fmt, st.data());
  AtenTensorHandle h = nullptr;
  STABLE_TORCH_ERROR_CODE_CHECK(aoti_torch_empty_strided(static_cast<int64_t>(sizes.size()), sizes.data(), st.data(),
                                                         detail::shim_dtype(dtype), aoti_torch_device_type_cpu(), 0,
                                                         &h));
  return Tensor(h);
#else
  return at::empty(sizes, at::TensorOptions().dtype(dtype), fmt);
#endif
}

// zero_ / copy_ write into t's data (the handle is not changed, as ATen's const methods).
inline void zero_(const Tensor& t) {
#ifdef QPLUGIN_STABLE_ABI
  Tensor self = t;
  torch::stable::zero_(self);
#else
  t.zero_();
#endif
}

inline Tensor zeros(IntArrayRef sizes, ScalarType dtype) {
  Tensor t = tensor::empty(sizes, dtype);
  tensor::zero_(t);
  return t;
}

inline bool is_contiguous(const Tensor& t, MemoryFormat fmt) {
#ifdef QPLUGIN_STABLE_ABI
  if (fmt == MemoryFormat::Contiguous) return t.is_contiguous();
  // torch's rule: every dim of size > 1 has the dense stride of its place in `fmt`'s order
  const auto sizes = t.sizes();
  if ((fmt == MemoryFormat::ChannelsLast && sizes.size() != 4) ||
      (fmt == MemoryFormat::ChannelsLast3d && sizes.size() != 5)) {
    return false;
  }
  const auto strides = t.strides();
  StridesBuffer dense(sizes.size());
  dense_strides_into(sizes, fmt, dense.data());
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] != 1 && strides[d] != dense.data()[d]) return false;
  }
  return true;
#else
  return t.is_contiguous(fmt);
#endif
}

// `t` itself when it is dense in `fmt`, else a dense copy.
inline Tensor contiguous(const Tensor& t, MemoryFormat fmt = MemoryFormat::Contiguous) {
#ifdef QPLUGIN_STABLE_ABI
  if (tensor::is_contiguous(t, fmt)) return t;
  return torch::stable::contiguous(t, fmt);
#else
  return t.contiguous(fmt);
#endif
}

inline Tensor view(const Tensor& t, IntArrayRef sizes) {
#ifdef QPLUGIN_STABLE_ABI
  return torch::stable::view(t, sizes);
#else
  return t.view(sizes);
#endif
}

inline Tensor reshape(const Tensor& t, IntArrayRef sizes) {
#ifdef QPLUGIN_STABLE_ABI
  return torch::stable::reshape(t, sizes);
#else
  return t.reshape(sizes);
#endif
}

// A copy of `t` converted to `dtype` (`t` itself when it has that dtype).
inline Tensor to(const Tensor& t, ScalarType dtype) {
  if (tensor::dtype(t) == dtype) return t;
#ifdef QPLUGIN_STABLE_ABI
  return torch::stable::to(t, dtype);
#else
  return t.to(dtype);
#endif
}

inline Tensor clone(const Tensor& t) {
#ifdef QPLUGIN_STABLE_ABI
  return torch::stable::clone(t);
#else
  return t.clone();
#endif
}

inline void copy_(const Tensor& dst, const Tensor& src) {
#ifdef QPLUGIN_STABLE_ABI
  Tensor self = dst;
  torch::stable::copy_(self, src);
#else
  dst.copy_(src);
#endif
}

inline Tensor narrow(const Tensor& t, int64_t dim, int64_t start, int64_t length) {
#ifdef QPLUGIN_STABLE_ABI
  Tensor self = t;
  return torch::stable::narrow(self, dim, start, length);
#else
  return t.narrow(dim, start, length);
#endif
}

inline Tensor unsqueeze(const Tensor& t, int64_t dim) {
#ifdef QPLUGIN_STABLE_ABI
  return torch::stable::unsqueeze(t, dim);
#else
  return t.unsqueeze(dim);
#endif
}

inline Tensor squeeze(const Tensor& t, int64_t dim) {
#ifdef QPLUGIN_STABLE_ABI
  return torch::stable::squeeze(t, dim);
#else
  return t.squeeze(dim);
#endif
}

inline Tensor permute(const Tensor& t, IntArrayRef dims) {
#ifdef QPLUGIN_STABLE_ABI
  return detail::call<Tensor>("aten::permute", "", t, std::vector<int64_t>(dims.begin(), dims.end()));
#else
  return t.permute(dims);
#endif
}

// torch.movedim(t, src, dst) for one dim (src, dst in [-dim, dim)).
inline Tensor movedim(const Tensor& t, int64_t src, int64_t dst) {
  const int64_t n = t.dim();
  if (src < 0) src += n;
  if (dst < 0) dst += n;
  std::vector<int64_t> order;
  for (int64_t d = 0; d < n; ++d) {
    if (d != src) order.push_back(d);
  }
  order.insert(order.begin() + dst, src);
  return tensor::permute(t, order);
}

inline Tensor index_select(const Tensor& t, int64_t dim, const Tensor& index) {
#ifdef QPLUGIN_STABLE_ABI
  return detail::call<Tensor>("aten::index_select", "", t, dim, index);
#else
  return t.index_select(dim, index);
#endif
}

inline Tensor gather(const Tensor& t, int64_t dim, const Tensor& index) {
#ifdef QPLUGIN_STABLE_ABI
  return detail::call<Tensor>("aten::gather", "", t, dim, index, false);
#else
  return at::gather(t, dim, index);
#endif
}

inline Tensor matmul(const Tensor& a, const Tensor& b) {
#ifdef QPLUGIN_STABLE_ABI
  return torch::stable::matmul(a, b);
#else
  return at::matmul(a, b);
#endif
}

// The storage under a tensor: its data pointer (null for a storage with no data behind it, as
// torch's loader makes from an emptied record) and its size in bytes.
struct StorageView {
  bool exists;
  const void* data;
  int64_t nbytes;
};
// The byte size of t's storage (0 without one).
inline int64_t storage_nbytes(const Tensor& t) {
#ifdef QPLUGIN_STABLE_ABI
  int64_t nbytes = 0;
  STABLE_TORCH_ERROR_CODE_CHECK(aoti_torch_get_storage_size(t.get(), &nbytes));
  return nbytes;
#else
  return t.has_storage() ? static_cast<int64_t>(t.storage().nbytes()) : 0;
#endif
}

inline StorageView storage_of(const Tensor& t) {
#ifdef QPLUGIN_STABLE_ABI
  // every CPU tensor made from Python has a storage (has_storage is a 2.14 addition)
  const auto p = reinterpret_cast<uintptr_t>(t.const_data_ptr());
  const auto base = p - static_cast<uintptr_t>(t.storage_offset()) * t.element_size();
  return {true, reinterpret_cast<const void*>(base), storage_nbytes(t)};
#else
  if (!t.has_storage()) return {false, nullptr, 0};
  return {true, t.storage().data(), storage_nbytes(t)};
#endif
}

// A tensor's version counter (bumped by every in-place write), or nullopt for an inference
// tensor, which has none. On the stable ABI both are reads through the dispatcher (~0.4 us).
inline std::optional<int64_t> version(const Tensor& t) {
#ifdef QPLUGIN_STABLE_ABI
  if (detail::call<bool>("aten::is_inference", "", t)) return std::nullopt;
  return detail::call<int64_t>("aten::_version", "", t);
#else
  if (t.is_inference()) return std::nullopt;
  return t._version();
#endif
}

inline int64_t num_threads() {
#ifdef QPLUGIN_STABLE_ABI
  return static_cast<int64_t>(torch::stable::get_num_threads());
#else
  return at::get_num_threads();
#endif
}

// f over [begin, end) in chunks of at least `grain` (at::parallel_for's contract). On the stable ABI
// a range torch would run in one piece on this thread (one chunk, or one thread) runs here directly,
// without the callback through the C shim.
template <class F>
inline void parallel_for(int64_t begin, int64_t end, int64_t grain, const F& f) {
#ifdef QPLUGIN_STABLE_ABI
  if (begin >= end) return;
  if (end - begin <= grain || num_threads() == 1) {
    f(begin, end);
    return;
  }
  torch::stable::parallel_for(begin, end, grain, f);
#else
  at::parallel_for(begin, end, grain, f);
#endif
}

}  // namespace tensor
}  // namespace qplugin
