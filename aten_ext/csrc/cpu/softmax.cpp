// CPU glue for quantized softmax: lay out, build the exp table, call kernels/.
#include "utils/torch_api.h"

#include <cmath>

#include "cpu/activation.h"
#include "kernels/dispatch.h"
#include "kernels/softmax_kernel.h"
#include "utils/checks.h"
#include "utils/layout.h"

namespace qplugin {
namespace cpu {

void softmax_int_out(const Tensor& data, const Tensor& out, int64_t dim, double in_scale, int64_t in_zp,
                     double out_scale, int64_t out_zp) {
  const MemoryFormat fmt = kept_format(data);
  const Tensor x = tensor::contiguous(data, fmt);
  QP_ASSERT(tensor::is_contiguous(out, fmt) && out.sizes() == x.sizes() && tensor::dtype(out) == tensor::dtype(x));
  if (x.numel() == 0) return;
  // 0-dim: one element along a dim of size 1.
  const AxisSplit sp = x.dim() == 0 ? AxisSplit{1, 1, 1} : axis_split(x.sizes(), dim, fmt);
  double table[256];
  kernels::SoftmaxSpec spec{in_scale, table, out_scale, static_cast<int32_t>(out_zp)};
  const ScalarType dt = tensor::dtype(x);
  if (dt != kInt) {
    for (int k = 0; k < 256; ++k) table[k] = std::exp(-static_cast<double>(k) * in_scale);
  }
  const void* xp = x.const_data_ptr();
  void* yp = out.mutable_data_ptr();
  auto call = [&](int64_t off, int64_t outer, int64_t count) {
    if (dt == kByte) {
      QPLUGIN_ISA_CALL(softmax_u8, static_cast<const uint8_t*>(xp) + off, static_cast<uint8_t*>(yp) + off, outer,
                       sp.channels, count, sp.inner, &spec);
    } else if (dt == kChar) {
      QPLUGIN_ISA_CALL(softmax_s8, static_cast<const int8_t*>(xp) + off, static_cast<int8_t*>(yp) + off, outer,
                       sp.channels, count, sp.inner, &spec);
    } else {
      QPLUGIN_ISA_CALL(softmax_s32, static_cast<const int32_t*>(xp) + off, static_cast<int32_t*>(yp) + off, outer,
                       sp.channels, count, sp.inner, &spec);
    }
  };
  const int64_t per_outer = sp.channels * sp.inner;
  constexpr int64_t kGrain = 1 << 14;  // elements per task
  if (sp.outer >= 2 * tensor::num_threads() || sp.inner == 1) {
    tensor::parallel_for(0, sp.outer, std::max<int64_t>(1, kGrain / per_outer), [&](int64_t b, int64_t e) {
      call(b * per_outer, e - b, sp.inner);
    });
  } else {
    // Few outer blocks: split the positions along the inner dims instead.
    for (int64_t o = 0; o < sp.outer; ++o) {
      tensor::parallel_for(0, sp.inner, std::max<int64_t>(16, kGrain / sp.channels), [&](int64_t b, int64_t e) {
        call(o * per_outer + b, 1, e - b);
      });
    }
  }
}

}  // namespace cpu

}  // namespace qplugin
