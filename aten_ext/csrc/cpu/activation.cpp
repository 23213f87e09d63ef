// CPU glue for the activations: validate, lay out, build tables, call kernels/.
#include "cpu/activation.h"

#include "utils/torch_api.h"

#include <atomic>
#include <cmath>
#include <cstring>

#include "kernels/activation_kernel.h"
#include "kernels/dispatch.h"
#include "kernels/quantize_math.h"
#include "utils/checks.h"
#include "utils/layout.h"

namespace qplugin {
namespace cpu {
namespace {

constexpr int64_t kGrainBytes = 1 << 16;  // bytes of input per task

bool cpu_has_vbmi() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512vbmi");
#else
  return false;
#endif
}

std::atomic<bool>& vbmi_slot() {
  static std::atomic<bool> slot{cpu_has_vbmi()};
  return slot;
}

// The dense input the kernels read: `data` itself when it is already dense in
// its kept memory format, else a copy.
Tensor dense_input(const Tensor& data) { return tensor::contiguous(data, kept_format(data)); }

// The 8-bit table of (spec, signedness) on the active kernel path: the calling thread's last one
// when its key matches, else built and kept. The key is every field of the spec by value (the float
// ones by their bits), the signedness and the path.
const uint8_t* act_table8(const kernels::ActSpec& spec, bool is_signed) {
  struct Key {
    int32_t kind, in_zp, out_zp, is_signed, isa;
    uint64_t p0, p1, p2, out_scale;
    uint32_t in_scale;
    bool operator==(const Key& o) const {
      return kind == o.kind && in_zp == o.in_zp && out_zp == o.out_zp && is_signed == o.is_signed && isa == o.isa &&
             p0 == o.p0 && p1 == o.p1 && p2 == o.p2 && out_scale == o.out_scale && in_scale == o.in_scale;
    }
  };
  auto bits64 = [](double v) {
    uint64_t b;
    std::memcpy(&b, &v, 8);
    return b;
  };
  uint32_t in_bits;
  std::memcpy(&in_bits, &spec.in_scale, 4);
  const Key key{static_cast<int32_t>(spec.kind),
                spec.in_zp,
                spec.out_zp,
                is_signed ? 1 : 0,
                static_cast<int32_t>(kernels::active_isa()),
                bits64(spec.p0),
                bits64(spec.p1),
                bits64(spec.p2),
                bits64(spec.out_scale),
                in_bits};
  struct Cached {
    bool valid = false;
    Key key{};
    alignas(64) uint8_t table[256];
  };
  thread_local Cached cached;
  if (!cached.valid || !(cached.key == key)) {
    QPLUGIN_ISA_CALL(build_act_table8, &spec, is_signed, cached.table);
    cached.key = key;
    cached.valid = true;
  }
  return cached.table;
}

template <typename F>
void parallel_elems(int64_t n, int64_t elem_size, F fn) {
  if (n == 0) return;
  tensor::parallel_for(0, n, std::max<int64_t>(1, kGrainBytes / elem_size), fn);
}

}  // namespace

double finite_scalar(const char* op, const char* arg, double v) {
  QP_CHECK_VALUE(std::isfinite(v), "qplugin::", op, ": ", arg, " should be a finite number, got ", v);
  return v;
}

void check_act_qparams(const char* op, double in_scale, int64_t in_zp, double out_scale, int64_t out_zp, ScalarType t) {
  check_scale(op, "input scale", in_scale);
  check_zero_point(op, "input zero_point", in_zp, t);
  check_scale(op, "output_scale", out_scale);
  check_zero_point(op, "output_zero_point", out_zp, t);
}

std::pair<int64_t, int64_t> relu_bounds(int64_t zp, ScalarType t) { return {zp, qrange(t).second}; }

std::pair<int64_t, int64_t> relu6_bounds(double scale, int64_t zp, ScalarType t) {
  return {zp, quantize_bound(6.0, scale, zp, t)};
}

std::pair<int64_t, int64_t> clamp_bounds(const char* op, double scale, int64_t zp, ScalarType t,
                                         std::optional<double> min, std::optional<double> max) {
  QP_CHECK_VALUE(min.has_value() || max.has_value(), "qplugin::", op, ": min and max should not both be None");
  auto r = qrange(t);
  if (min.has_value()) r.first = quantize_bound(finite_scalar(op, "min", *min), scale, zp, t);
  if (max.has_value()) r.second = quantize_bound(finite_scalar(op, "max", *max), scale, zp, t);
  return r;
}

kernels::ActSpec act_spec(kernels::ActKind kind, double in_scale, int64_t in_zp, double out_scale, int64_t out_zp,
                          double p0, double p1, double p2) {
  return kernels::ActSpec{kind,
                          p0,
                          p1,
                          p2,
                          static_cast<float>(in_scale),
                          static_cast<int32_t>(in_zp),
                          out_scale,
                          static_cast<int32_t>(out_zp)};
}

bool act_use_vbmi(std::optional<bool> enable) {
  if (enable.has_value()) vbmi_slot().store(*enable && cpu_has_vbmi());
  return vbmi_slot().load();
}

int64_t quantize_bound(double value, double scale, int64_t zero_point, ScalarType qdtype) {
  // The bound as a float32 value, quantized by the quantize rule (kernels/quantize_math.h).
  const float v = static_cast<float>(value);
  const int32_t zp = static_cast<int32_t>(zero_point);
  switch (qdtype) {  // the range tag: uint8 / int8 / int32
    case kByte: return kernels::quantize_val8<uint8_t>(v, kernels::inv_scale_of(scale), zp);
    case kChar: return kernels::quantize_val8<int8_t>(v, kernels::inv_scale_of(scale), zp);
    default: return kernels::quantize_val32(v, scale, zp);
  }
}

void clamp_raw(const void* xp, void* yp, int64_t n, int64_t elem_size, bool is_signed, int64_t lo, int64_t hi) {
  const int32_t l = static_cast<int32_t>(lo), h = static_cast<int32_t>(hi);
  parallel_elems(n, elem_size, [&](int64_t b, int64_t e) {
    if (elem_size == 4) {
      QPLUGIN_ISA_CALL(clamp_s32, static_cast<const int32_t*>(xp) + b, static_cast<int32_t*>(yp) + b, e - b, l, h);
    } else if (is_signed) {
      QPLUGIN_ISA_CALL(clamp_s8, static_cast<const int8_t*>(xp) + b, static_cast<int8_t*>(yp) + b, e - b, l, h);
    } else {
      QPLUGIN_ISA_CALL(clamp_u8, static_cast<const uint8_t*>(xp) + b, static_cast<uint8_t*>(yp) + b, e - b, l, h);
    }
  });
}

void clamp_int_out(const Tensor& data, const Tensor& out, int64_t lo, int64_t hi) {
  const Tensor x = dense_input(data);
  QP_ASSERT(tensor::is_contiguous(out, kept_format(data)) && out.sizes() == x.sizes() &&
            tensor::dtype(out) == tensor::dtype(x));
  clamp_raw(x.const_data_ptr(), out.mutable_data_ptr(), x.numel(), x.element_size(), tensor::dtype(x) == kChar, lo, hi);
}

void activation_int_out(const Tensor& data, const Tensor& out, const kernels::ActSpec& spec) {
  const Tensor x = dense_input(data);
  QP_ASSERT(tensor::is_contiguous(out, kept_format(data)) && out.sizes() == x.sizes() &&
            tensor::dtype(out) == tensor::dtype(x));
  const ScalarType dt = tensor::dtype(x);
  const int64_t n = x.numel();
  if (n == 0) return;
  if (dt == kInt) {
    const int32_t* xp = tensor::data<int32_t>(x);
    int32_t* yp = tensor::mutable_data<int32_t>(out);
    tensor::parallel_for(0, n, 2048, [&](int64_t b, int64_t e) {
      QPLUGIN_ISA_CALL(act_map_s32, xp + b, yp + b, e - b, &spec);
    });
    return;
  }
  if (n < 128) {
    // Fewer elements than table entries: evaluate them directly (the same values).
    if (dt == kByte) {
      QPLUGIN_ISA_CALL(act_map_u8, tensor::data<uint8_t>(x), tensor::mutable_data<uint8_t>(out), n, &spec);
    } else {
      QPLUGIN_ISA_CALL(act_map_s8, tensor::data<int8_t>(x), tensor::mutable_data<int8_t>(out), n, &spec);
    }
    return;
  }
  // One table entry per byte value, from the float64 definition (256 evaluations: ~1 us for
  // hardswish, several for sigmoid's exp), kept per thread for the next call with the same
  // activation, qparams, dtype and kernel path (a model calls each activation with fixed qparams).
  const uint8_t* table = act_table8(spec, dt == kChar);
  const uint8_t* xp = static_cast<const uint8_t*>(x.const_data_ptr());
  uint8_t* yp = static_cast<uint8_t*>(out.mutable_data_ptr());
  const bool vbmi = vbmi_slot().load();
  parallel_elems(n, 1, [&](int64_t b, int64_t e) {
    QPLUGIN_ISA_CALL(lut_apply8, xp + b, yp + b, e - b, table, vbmi);
  });
}

}  // namespace cpu

}  // namespace qplugin
