// QuantizedCPU adapter for nearest-neighbour 2-D upsampling: output keeps the
// input's qparams and memory format.
#include <ATen/ATen.h>
#include <torch/library.h>

#include "cpu/pool.h"
#include "cpu/upsample.h"
#include "utils/checks.h"
#include "utils/qtensor.h"

namespace qplugin {
namespace {

at::Tensor upsample_nearest2d_q(const at::Tensor& qx, at::IntArrayRef output_size) {
  constexpr const char* op = "upsample_nearest2d";
  check_quantized_input(op, "qx", qx);
  TORCH_CHECK(qx.qscheme() == at::kPerTensorAffine, "qplugin::", op,
              ": qx should be per_tensor_affine quantized, got qscheme ", toString(qx.qscheme()));
  check_qparams(op, "qx", qx);
  const auto sizes = cpu::upsample_nearest2d_output_sizes(op, qx.sizes(), output_size);
  at::Tensor out = at::_empty_affine_quantized(sizes, qx.options(), qx.q_scale(), qx.q_zero_point(),
                                               cpu::pool_format(qx));
  cpu::upsample_nearest2d_int_out(int_view(qx), int_view(out));
  return out;
}

} // namespace

TORCH_LIBRARY_IMPL(qplugin, QuantizedCPU, m) {
  m.impl("upsample_nearest2d", TORCH_FN(upsample_nearest2d_q));
}

} // namespace qplugin
