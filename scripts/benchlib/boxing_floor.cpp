// The floor of a plain op's per-call cost on either build: ops with the schemas of the plain ops
// timed by `bench.py stable-lib`, each doing only what every such op does besides its work: take
// its arguments and allocate its output (through utils/torch_api.h, the plain library's own
// vocabulary). Compiled twice by scripts/benchlib/stable_lib.py --floor, once on ATen and once on
// torch's stable ABI (QPLUGIN_STABLE_ABI), under the namespace QPLUGIN_FLOOR_NS: the difference of
// the two is what torch's stable boxing and allocation cost an op, before any of the op's code.
// A benchmark's helper: not part of the library.
#include "utils/torch_api.h"

#include <cstdint>
#include <vector>

namespace {

using qplugin::FloatListArg;
using qplugin::IntListArg;
using qplugin::Tensor;
using qplugin::TensorListArg;
namespace tensor = qplugin::tensor;

Tensor like(const Tensor& x) { return tensor::empty(x.sizes(), tensor::dtype(x)); }
Tensor sized(std::vector<int64_t> sizes, qplugin::ScalarType dtype) { return tensor::empty(sizes, dtype); }

Tensor relu(const Tensor& x, double, int64_t) { return like(x); }
Tensor add(const Tensor& a, double, int64_t, const Tensor&, double, int64_t, double, int64_t) { return like(a); }
Tensor quantize(const Tensor& x, double, int64_t, qplugin::ScalarType dtype) { return sized(x.sizes().vec(), dtype); }
Tensor dequantize(const Tensor& x, double, int64_t) { return sized(x.sizes().vec(), qplugin::kFloat); }
Tensor max_pool2d(const Tensor& x, IntListArg, IntListArg, IntListArg, IntListArg, bool) { return like(x); }
Tensor cat(TensorListArg xs, FloatListArg, IntListArg, int64_t, double, int64_t) { return like(xs[0]); }
Tensor linear(const Tensor& x, double, int64_t, const Tensor& w, const Tensor&, const Tensor&,
              const std::optional<Tensor>&, const Tensor&, double, int64_t) {
  return sized({x.size(0), w.size(0)}, qplugin::kByte);
}
Tensor linear_dynamic(const Tensor& x, const Tensor& w, const Tensor&, const Tensor&, const std::optional<Tensor>&,
                      const Tensor&, bool) {
  return sized({x.size(0), w.size(0)}, qplugin::kFloat);
}
Tensor conv2d(const Tensor& x, double, int64_t, const Tensor&, const Tensor&, const Tensor&,
              const std::optional<Tensor>&, const Tensor&, IntListArg, IntListArg, IntListArg, int64_t, double,
              int64_t) {
  return tensor::empty(x.sizes(), tensor::dtype(x), qplugin::MemoryFormat::ChannelsLast);
}
Tensor embedding_bag(const Tensor&, int64_t, int64_t embedding_dim, const Tensor&, const std::optional<Tensor>& offsets,
                     int64_t, bool, const std::optional<Tensor>&, const std::optional<Tensor>&, bool) {
  return sized({offsets.has_value() ? offsets->numel() : 1, embedding_dim}, qplugin::kFloat);
}

}  // namespace

QPLUGIN_LIBRARY(QPLUGIN_FLOOR_NS, m) {
  m.def("relu(Tensor x, float x_scale, int x_zero_point) -> Tensor");
  m.def(
      "add(Tensor a, float a_scale, int a_zero_point, Tensor b, float b_scale, int b_zero_point, float scale, "
      "int zero_point) -> Tensor");
  m.def("quantize_per_tensor(Tensor self, float scale, int zero_point, ScalarType dtype) -> Tensor");
  m.def("dequantize_per_tensor(Tensor self, float scale, int zero_point) -> Tensor");
  m.def(
      "max_pool2d(Tensor x, int[] kernel_size, int[] stride, int[] padding, int[] dilation, bool ceil_mode) -> "
      "Tensor");
  m.def("cat(Tensor[] xs, float[] scales, int[] zero_points, int dim, float scale, int zero_point) -> Tensor");
  m.def(
      "linear(Tensor x, float x_scale, int x_zero_point, Tensor w, Tensor w_scales, Tensor w_zero_points, "
      "Tensor? bias, Tensor packed, float output_scale, int output_zero_point) -> Tensor");
  m.def(
      "linear_dynamic(Tensor x, Tensor w, Tensor w_scales, Tensor w_zero_points, Tensor? bias, Tensor packed, "
      "bool reduce_range=False) -> Tensor");
  m.def(
      "conv2d(Tensor x, float x_scale, int x_zero_point, Tensor w, Tensor w_scales, Tensor w_zero_points, "
      "Tensor? bias, Tensor packed, int[] stride, int[] padding, int[] dilation, int groups, float output_scale, "
      "int output_zero_point) -> Tensor");
  m.def(
      "embedding_bag(Tensor packed, int num_embeddings, int embedding_dim, Tensor indices, Tensor? offsets=None, "
      "int mode=0, bool pruned_weights=False, Tensor? per_sample_weights=None, "
      "Tensor? compressed_indices_mapping=None, bool include_last_offset=False) -> Tensor");
}

QPLUGIN_LIBRARY_IMPL(QPLUGIN_FLOOR_NS, CPU, m) {
  m.impl("relu", QPLUGIN_FN(&relu));
  m.impl("add", QPLUGIN_FN(&add));
  m.impl("quantize_per_tensor", QPLUGIN_FN(&quantize));
  m.impl("dequantize_per_tensor", QPLUGIN_FN(&dequantize));
  m.impl("max_pool2d", QPLUGIN_FN(&max_pool2d));
  m.impl("cat", QPLUGIN_FN(&cat));
  m.impl("linear", QPLUGIN_FN(&linear));
  m.impl("linear_dynamic", QPLUGIN_FN(&linear_dynamic));
  m.impl("conv2d", QPLUGIN_FN(&conv2d));
  m.impl("embedding_bag", QPLUGIN_FN(&embedding_bag));
}
