// EmbeddingPackedParamsBase: see embedding_packed_params.h.
#include "packed_params/embedding_packed_params.h"

#include <cstring>
#include <sstream>

#include "utils/checks.h"
#include "utils/class_check.h"

namespace qplugin {

kernels::EmbRows EmbeddingPackedParams::view() const {
  return kernels::EmbRows{codes.const_data_ptr<uint8_t>(),
                          codes.size(1),
                          dim,
                          static_cast<int>(bits),
                          reinterpret_cast<const uint8_t*>(qp.const_data_ptr<float>()),
                          8,
                          false,
                          codes.size(0)};
}

c10::intrusive_ptr<EmbeddingPackedParams> EmbeddingPackedParams::create(const char* op, int64_t bits, int64_t dim,
                                                                        const at::Tensor& codes,
                                                                        const at::Tensor& scales,
                                                                        const at::Tensor& zero_points) {
  TORCH_CHECK_VALUE(bits == 8 || bits == 4, "qplugin::", op, ": bits should be 8 or 4, got ", bits);
  TORCH_CHECK_VALUE(dim >= 0, "qplugin::", op, ": embedding_dim should be non-negative, got ", dim);
  TORCH_CHECK_VALUE(bits == 8 || dim % 2 == 0, "qplugin::", op,
                    ": a 4-bit (quint4x2) weight should have an even embedding_dim, got ", dim);
  TORCH_CHECK_VALUE(codes.scalar_type() == at::kByte && codes.dim() == 2, "qplugin::", op,
                    ": codes should be a 2-D uint8 tensor, got ", codes.scalar_type(), " of shape ", codes.sizes());
  const int64_t row_bytes = bits == 8 ? dim : dim / 2;
  TORCH_CHECK_VALUE(codes.size(1) == row_bytes, "qplugin::", op, ": codes should have ", row_bytes,
                    " bytes a row for embedding_dim ", dim, " at ", bits, " bits, got ", codes.size(1));
  const int64_t rows = codes.size(0);
  for (const auto& [name, t] : {std::pair<const char*, const at::Tensor&>{"scales", scales},
                                std::pair<const char*, const at::Tensor&>{"zero_points", zero_points}}) {
    TORCH_CHECK_VALUE(t.dim() == 1 && t.size(0) == rows && t.is_floating_point(), "qplugin::", op, ": ", name,
                      " should be a 1-D float tensor of ", rows, " entries (one a row), got ", t.scalar_type(),
                      " of shape ", t.sizes());
  }
  auto p = c10::make_intrusive<EmbeddingPackedParams>();
  p->bits = bits;
  p->rows = rows;
  p->dim = dim;
  p->codes = codes.contiguous().clone();
  p->scales = scales.to(at::kFloat).contiguous().clone();
  p->zero_points = zero_points.to(at::kFloat).contiguous().clone();
  p->qp = at::empty({rows, 2}, at::kFloat);
  const float* s = p->scales.const_data_ptr<float>();
  const float* z = p->zero_points.const_data_ptr<float>();
  float* q = p->qp.data_ptr<float>();
  for (int64_t r = 0; r < rows; ++r) {
    check_scale(op, "scales", s[r], " (of a row)");
    TORCH_CHECK_VALUE(std::isfinite(z[r]), "qplugin::", op, ": zero_points should be finite, got ", z[r], " for row ",
                      r);
    q[2 * r] = s[r];
    q[2 * r + 1] = z[r] * s[r] * -1.0f;  // torch's prepack: bias = zero_point * scale * -1
  }
  return p;
}

c10::intrusive_ptr<EmbeddingPackedParams> EmbeddingPackedParams::prepack(const at::Tensor& weight) {
  constexpr const char* op = "embedding_bag_prepack";
  TORCH_CHECK(weight.is_quantized(), "qplugin::", op,
              ": weight should be a quantized tensor (quint8 or quint4x2, per_channel_affine_float_qparams), "
              "got a non-quantized tensor of dtype ",
              weight.scalar_type());
  const auto t = weight.scalar_type();
  TORCH_CHECK_VALUE(t == at::kQUInt8 || t == at::kQUInt4x2, "qplugin::", op,
                    ": weight should be quint8 or quint4x2, got ", t);
  TORCH_CHECK_VALUE(weight.qscheme() == at::kPerChannelAffineFloatQParams && weight.q_per_channel_axis() == 0,
                    "qplugin::", op, ": weight should be per_channel_affine_float_qparams along axis 0, got qscheme ",
                    toString(weight.qscheme()),
                    weight.qscheme() == at::kPerChannelAffineFloatQParams
                        ? " along axis " + std::to_string(weight.q_per_channel_axis())
                        : std::string());
  TORCH_CHECK_VALUE(weight.dim() == 2, "qplugin::", op,
                    ": weight should be 2-D [num_embeddings, embedding_dim], got shape ", weight.sizes());
  const int64_t bits = t == at::kQUInt8 ? 8 : 4;
  const int64_t rows = weight.size(0), dim = weight.size(1);
  TORCH_CHECK_VALUE(bits == 8 || dim % 2 == 0, "qplugin::", op,
                    ": a 4-bit (quint4x2) weight should have an even embedding_dim, got ", dim);
  // int_repr of a quint4x2 tensor is its packed bytes, two codes a byte, row after row
  const at::Tensor ints = weight.contiguous().int_repr().reshape({rows, bits == 8 ? dim : dim / 2});
  return create(op, bits, dim, ints, weight.q_per_channel_scales(), weight.q_per_channel_zero_points());
}

at::Tensor EmbeddingPackedParams::unpack() const {
  at::Tensor w =
      at::_empty_per_channel_affine_quantized({rows, dim}, scales.to(at::kDouble), zero_points, 0,
                                              at::device(at::kCPU).dtype(bits == 8 ? at::kQUInt8 : at::kQUInt4x2));
  if (codes.numel() > 0) std::memcpy(w.data_ptr(), codes.const_data_ptr(), codes.nbytes());
  return w;
}

EmbeddingPackedParams::State EmbeddingPackedParams::getstate() const {
  return State(kVersion, bits, dim, {codes, scales, zero_points});
}

c10::intrusive_ptr<EmbeddingPackedParams> EmbeddingPackedParams::setstate(State state) {
  constexpr const char* op = "EmbeddingPackedParamsBase.__setstate__";
  const int64_t version = std::get<0>(state);
  TORCH_CHECK(version == kVersion, "qplugin::", op, ": version should be ", kVersion, " (this build reads version ",
              kVersion, "), got ", version);
  const std::vector<at::Tensor>& t = std::get<3>(state);
  TORCH_CHECK_VALUE(t.size() == 3, "qplugin::", op, ": state should hold 3 tensors [codes, scales, zero_points], got ",
                    t.size());
  const char* names[3] = {"codes", "scales", "zero_points"};
  for (size_t i = 0; i < t.size(); ++i) {
    TORCH_CHECK_VALUE(t[i].defined(), "qplugin::", op, ": state tensor ", names[i], " should be defined");
    check_storage_covers(op, names[i], t[i]);
  }
  return create(op, std::get<1>(state), std::get<2>(state), t[0], t[1], t[2]);
}

std::string EmbeddingPackedParams::repr() const {
  std::ostringstream s;
  s << "EmbeddingPackedParamsBase(num_embeddings=" << rows << ", embedding_dim=" << dim
    << ", dtype=" << (bits == 8 ? "quint8" : "quint4x2") << ", qscheme=per_channel_affine_float_qparams)";
  return s.str();
}

void register_embedding_classes() {
  static const auto cls = torch::class_<EmbeddingPackedParams>("qplugin", "EmbeddingPackedParamsBase")
                              .def("unpack", &EmbeddingPackedParams::unpack)
                              .def("bit_rate",
                                   [](const c10::intrusive_ptr<EmbeddingPackedParams>& self) {
                                     return self->bits;
                                   })
                              .def("__str__", &EmbeddingPackedParams::repr)
                              .def("__repr__", &EmbeddingPackedParams::repr)
                              .def_pickle(
                                  [](const c10::intrusive_ptr<EmbeddingPackedParams>& self) {
                                    return self->getstate();
                                  },
                                  [](c10::IValue state) {
                                    return EmbeddingPackedParams::setstate(
                                        typed_state<EmbeddingPackedParams::State>(state, "EmbeddingPackedParamsBase"));
                                  });
}

at::Tensor embedding_bag_unpack(const c10::intrusive_ptr<EmbeddingPackedParams>& packed) { return packed->unpack(); }

}  // namespace qplugin
