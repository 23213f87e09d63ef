// LinearPackedParams: prepack from a qint8 weight, unpack, versioned pickle with validation.
#include "packed_params/linear_packed_params.h"

#include <torch/library.h>

#include <sstream>

#include "utils/checks.h"
#include "utils/class_check.h"
#include "utils/qtensor.h"

namespace qplugin {

c10::intrusive_ptr<LinearPackedParams> LinearPackedParams::create(const char* op, const at::Tensor& w_int8,
                                                                  const at::Tensor& scales,
                                                                  const at::Tensor& zero_points, bool per_channel,
                                                                  const c10::optional<at::Tensor>& bias) {
  auto p = c10::make_intrusive<LinearPackedParams>();
  p->init_int8(op, w_int8, scales, zero_points, per_channel, bias);
  return p;
}

c10::intrusive_ptr<LinearPackedParams> LinearPackedParams::prepack_fp16(const char* op, const at::Tensor& weight,
                                                                        const c10::optional<at::Tensor>& bias) {
  auto p = c10::make_intrusive<LinearPackedParams>();
  p->init_fp16(op, weight, bias);
  return p;
}

c10::intrusive_ptr<LinearPackedParams> LinearPackedParams::prepack(const at::Tensor& weight,
                                                                   const c10::optional<at::Tensor>& bias) {
  constexpr const char* op = "linear_prepack";
  TORCH_CHECK(weight.is_quantized(), "qplugin::", op,
              ": W should be a quantized torch.qint8 tensor, got a non-quantized tensor of dtype ",
              weight.scalar_type());
  TORCH_CHECK(weight.scalar_type() == at::kQInt8, "qplugin::", op, ": W should be torch.qint8, got ",
              weight.scalar_type());
  TORCH_CHECK_VALUE(weight.dim() == 2, "qplugin::", op, ": W should be 2-D [out_features, in_features], got shape ",
                    weight.sizes());
  const auto qs = weight.qscheme();
  const at::Tensor data = int_view(weight);
  if (qs == at::kPerTensorAffine || qs == at::kPerTensorSymmetric) {
    return create(op, data, at::full({1}, weight.q_scale(), at::dtype(at::kDouble)),
                  at::full({1}, weight.q_zero_point(), at::dtype(at::kLong)), false, bias);
  }
  TORCH_CHECK(qs == at::kPerChannelAffine || qs == at::kPerChannelSymmetric, "qplugin::", op,
              ": W should be per_tensor_affine or per_channel_affine, got qscheme ", c10::toString(qs));
  TORCH_CHECK_VALUE(weight.q_per_channel_axis() == 0, "qplugin::", op,
                    ": W per-channel axis should be 0 (out_features), got ", weight.q_per_channel_axis());
  return create(op, data, weight.q_per_channel_scales().to(at::kDouble),
                weight.q_per_channel_zero_points().to(at::kLong), true, bias);
}

std::tuple<at::Tensor, c10::optional<at::Tensor>> LinearPackedParams::unpack() const {
  if (fp16) return {weight_fp16().to(at::kFloat), bias};  // the class method unpacks either kind
  const at::Tensor w = weight_int8();
  at::Tensor qw;
  if (per_channel) {
    qw = at::_make_per_channel_quantized_tensor(w, scales, zero_points, 0);
  } else {
    qw = at::_make_per_tensor_quantized_tensor(w, scales.const_data_ptr<double>()[0],
                                               zero_points.const_data_ptr<int64_t>()[0]);
  }
  return {qw, bias};
}

LinearPackedParams::State LinearPackedParams::getstate() const {
  if (fp16) return State(kVersionFp16, {weight_fp16()}, bias);
  // Per-tensor qparams are stored 0-dim, per-channel ones 1-D [N].
  const at::Tensor s = per_channel ? scales : scales.reshape({});
  const at::Tensor z = per_channel ? zero_points : zero_points.reshape({});
  return State(kVersion, {weight_int8(), s, z}, bias);
}

c10::intrusive_ptr<LinearPackedParams> LinearPackedParams::setstate(State state) {
  constexpr const char* op = "LinearPackedParamsBase.__setstate__";
  const int64_t version = std::get<0>(state);
  TORCH_CHECK(version == kVersion || version == kVersionFp16, "qplugin::", op, ": version should be ", kVersion,
              " (int8) or ", kVersionFp16, " (fp16) (this build reads versions up to ", kVersionFp16, "), got ",
              version);
  const std::vector<at::Tensor>& t = std::get<1>(state);
  if (version == kVersionFp16) {
    TORCH_CHECK_VALUE(t.size() == 1, "qplugin::", op, ": version ", kVersionFp16,
                      " state should hold 1 tensor [weight float16], got ", t.size());
    TORCH_CHECK_VALUE(t[0].defined(), "qplugin::", op, ": state tensor weight should be defined");
    check_storage_covers(op, "weight", t[0]);
    if (std::get<2>(state).has_value()) check_storage_covers(op, "bias", *std::get<2>(state));
    TORCH_CHECK_VALUE(!t[0].is_quantized() && t[0].scalar_type() == at::kHalf, "qplugin::", op, ": version ",
                      kVersionFp16, " weight should be a float16 tensor, got dtype ", t[0].scalar_type());
    return prepack_fp16(op, t[0], std::get<2>(state));
  }
  TORCH_CHECK_VALUE(t.size() == 3, "qplugin::", op, ": state should hold 3 tensors [weight, scales, zero_points], got ",
                    t.size());
  const char* names[3] = {"weight", "scales", "zero_points"};
  for (size_t i = 0; i < t.size(); ++i) {
    TORCH_CHECK_VALUE(t[i].defined(), "qplugin::", op, ": state tensor ", names[i], " should be defined");
    check_storage_covers(op, names[i], t[i]);
  }
  if (std::get<2>(state).has_value()) check_storage_covers(op, "bias", *std::get<2>(state));
  TORCH_CHECK_VALUE(t[1].dim() == t[2].dim() && t[1].dim() <= 1, "qplugin::", op,
                    ": scales and zero_points should both be 0-dim (per tensor) or 1-D (per channel), got shapes ",
                    t[1].sizes(), " and ", t[2].sizes());
  const bool per_channel = t[1].dim() == 1;
  return create(op, t[0], per_channel ? t[1] : t[1].reshape({1}), per_channel ? t[2] : t[2].reshape({1}), per_channel,
                std::get<2>(state));
}

std::string LinearPackedParams::repr() const {
  std::ostringstream s;
  s << "LinearPackedParamsBase(out_features=" << N << ", in_features=" << K
    << (fp16          ? ", dtype=torch.float16"
        : per_channel ? ", qscheme=per_channel_affine"
                      : ", qscheme=per_tensor_affine")
    << ", bias=" << (bias.has_value() ? "True" : "False") << ")";
  return s.str();
}

std::tuple<at::Tensor, c10::optional<at::Tensor>> linear_unpack(const c10::intrusive_ptr<LinearPackedParams>& packed) {
  packed->check_int8("linear_unpack");
  return packed->unpack();
}

std::tuple<at::Tensor, c10::optional<at::Tensor>> linear_unpack_fp16(
    const c10::intrusive_ptr<LinearPackedParams>& packed) {
  packed->check_fp16("linear_unpack_fp16");
  return packed->unpack();
}

void register_linear_classes() {
  static const auto cls = torch::class_<LinearPackedParams>("qplugin", "LinearPackedParamsBase")
                              .def("unpack", &LinearPackedParams::unpack)
                              .def("bias",
                                   [](const c10::intrusive_ptr<LinearPackedParams>& self) {
                                     return self->bias;
                                   })
                              // bytes the packed weight keeps in memory (cpu/linear_weights.h)
                              .def("_packed_bytes",
                                   [](const c10::intrusive_ptr<LinearPackedParams>& self) -> int64_t {
                                     return self->packed_bytes();
                                   })
                              .def("__str__", &LinearPackedParams::repr)
                              .def("__repr__", &LinearPackedParams::repr)
                              .def_pickle(
                                  [](const c10::intrusive_ptr<LinearPackedParams>& self) {
                                    return self->getstate();
                                  },
                                  [](c10::IValue state) {
                                    return LinearPackedParams::setstate(
                                        typed_state<LinearPackedParams::State>(state, "LinearPackedParamsBase"));
                                  });
}

}  // namespace qplugin
