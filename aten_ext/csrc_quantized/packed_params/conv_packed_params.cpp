// Conv packed params: prepack from a qint8 weight, unpack, pickling.
#include "packed_params/conv_packed_params.h"

#include <ATen/ATen.h>

#include "utils/checks.h"
#include "utils/class_check.h"
#include "utils/qtensor.h"

namespace qplugin {

c10::IValue conv_state(const ConvWeights& p) {
  if (p.transpose) {
    return ConvTransposeState(std::make_tuple(kConvTransposeStateVersion, p.kind, p.groups),
                              std::make_tuple(p.weight, p.bias),
                              std::make_tuple(p.stride, p.padding, p.output_padding, p.dilation));
  }
  return ConvState(std::make_tuple(kConvStateVersion, p.kind, p.groups), std::make_tuple(p.weight, p.bias),
                   std::make_tuple(p.stride, p.padding, p.dilation));
}

namespace {

// The int8 data and qparams of a qint8 conv weight (transpose: per-channel along axis 1, the
// output channels of a group, repeated for every group).
at::Tensor unwrap_weight(const char* op, const at::Tensor& weight, int64_t spatial, bool transpose, int64_t groups,
                         at::Tensor* scales, at::Tensor* zero_points) {
  TORCH_CHECK(weight.defined() && weight.is_quantized(), "qplugin::", op,
              ": weight should be a quantized qint8 tensor, got ",
              weight.defined() ? "a non-quantized tensor of dtype " + std::string(c10::toString(weight.scalar_type()))
                               : std::string("an undefined tensor"));
  TORCH_CHECK(weight.scalar_type() == at::kQInt8, "qplugin::", op, ": weight should be a qint8 tensor, got ",
              weight.scalar_type());
  TORCH_CHECK(weight.dim() == spatial + 2, "qplugin::", op, ": weight should have ", spatial + 2,
              transpose ? " dims (in_channels, out_channels / groups, kernel...), got "
                        : " dims (out_channels, in_channels / groups, kernel...), got ",
              weight.dim(), " dims ", weight.sizes());
  const auto qs = weight.qscheme();
  TORCH_CHECK(qs == at::kPerTensorAffine || qs == at::kPerChannelAffine, "qplugin::", op,
              ": weight should be per_tensor_affine or per_channel_affine, got qscheme ", c10::toString(qs));
  const int64_t axis = transpose ? 1 : 0;
  if (qs == at::kPerTensorAffine) {
    *scales = at::full({1}, weight.q_scale(), at::dtype(at::kDouble));
    *zero_points = at::full({1}, weight.q_zero_point(), at::dtype(at::kLong));
  } else {
    TORCH_CHECK_VALUE(weight.q_per_channel_axis() == axis, "qplugin::", op, ": weight per-channel axis should be ",
                      axis, " (output channels), got ", weight.q_per_channel_axis());
    *scales = weight.q_per_channel_scales();
    *zero_points = weight.q_per_channel_zero_points();
    TORCH_CHECK_VALUE(scales->numel() == weight.size(axis) && zero_points->numel() == weight.size(axis),
                      "qplugin::", op, ": weight per-channel scales and zero_points should have ", weight.size(axis),
                      " elements, got ", scales->numel(), " and ", zero_points->numel());
    if (transpose && groups > 1) {  // OC / groups entries -> OC (group g's channel j is g * OCg + j)
      check_transpose_groups(op, weight.size(0), groups);  // before the repeat sized by groups
      *scales = scales->repeat({groups});
      *zero_points = zero_points->repeat({groups});
    }
  }
  return int_view(weight);
}

}  // namespace

std::shared_ptr<ConvWeights> conv_prepack_impl(const char* op, const std::string& kind, const at::Tensor& weight,
                                               const c10::optional<at::Tensor>& bias, at::IntArrayRef stride,
                                               at::IntArrayRef padding, at::IntArrayRef dilation, int64_t groups) {
  at::Tensor scales, zero_points;
  const at::Tensor wi = unwrap_weight(op, weight, conv_kind_spatial(kind), false, groups, &scales, &zero_points);
  auto p = conv_prepack_int(op, kind, wi, scales, zero_points, bias, stride, padding, dilation, groups);
  p->weight = weight;
  return p;
}

std::shared_ptr<ConvWeights> conv_transpose_prepack_impl(const char* op, const std::string& kind,
                                                         const at::Tensor& weight,
                                                         const c10::optional<at::Tensor>& bias, at::IntArrayRef stride,
                                                         at::IntArrayRef padding, at::IntArrayRef output_padding,
                                                         at::IntArrayRef dilation, int64_t groups) {
  TORCH_CHECK_VALUE(groups >= 1, "qplugin::", op, ": groups should be >= 1, got ", groups);
  at::Tensor scales, zero_points;
  const at::Tensor wi = unwrap_weight(op, weight, conv_kind_spatial(kind), true, groups, &scales, &zero_points);
  auto p = conv_transpose_prepack_int(op, kind, wi, scales, zero_points, bias, stride, padding, output_padding,
                                      dilation, groups);
  p->weight = weight;
  return p;
}

namespace {

// The version of a state (its first element's first element), or -1 if it has no such int.
int64_t state_version(const c10::IValue& s) {
  if (!s.isTuple() || s.toTupleRef().elements().empty()) return -1;
  const c10::IValue& head = s.toTupleRef().elements()[0];
  if (!head.isTuple() || head.toTupleRef().elements().empty() || !head.toTupleRef().elements()[0].isInt()) return -1;
  return head.toTupleRef().elements()[0].toInt();
}

template <typename Holder>
std::shared_ptr<ConvWeights> from_state(const c10::IValue& sv, const char* cls) {
  const int64_t version = state_version(sv);
  if (version < 0) typed_state<ConvState>(sv, cls);  // not a versioned tuple: raises naming the expected type
  TORCH_CHECK(version == kConvStateVersion || version == kConvTransposeStateVersion, "qplugin::", cls,
              ".__setstate__: state version should be ", kConvStateVersion, " (conv) or ", kConvTransposeStateVersion,
              " (transposed conv), got ", version);
  const bool transpose = version == kConvTransposeStateVersion;
  // (header, tensors, geometry) of either version; output_padding only in version 2
  std::tuple<int64_t, std::string, int64_t> head;
  std::tuple<at::Tensor, c10::optional<at::Tensor>> t;
  std::vector<int64_t> stride, padding, output_padding, dilation;
  if (transpose) {
    const auto s = typed_state<ConvTransposeState>(sv, cls);
    head = std::get<0>(s);
    t = std::get<1>(s);
    std::tie(stride, padding, output_padding, dilation) = std::get<2>(s);
  } else {
    const auto s = typed_state<ConvState>(sv, cls);
    head = std::get<0>(s);
    t = std::get<1>(s);
    std::tie(stride, padding, dilation) = std::get<2>(s);
  }
  const std::string& kind = std::get<1>(head);
  const bool is3d = std::is_same<Holder, Conv3dPackedParamsBase>::value;
  const char* want = transpose ? (is3d ? "'conv_transpose3d'" : "'conv_transpose1d' or 'conv_transpose2d'")
                               : (is3d ? "'conv3d'" : "'conv1d' or 'conv2d'");
  const bool kind_ok =
      transpose ? (is3d ? kind == "conv_transpose3d" : (kind == "conv_transpose1d" || kind == "conv_transpose2d"))
                : (is3d ? kind == "conv3d" : (kind == "conv1d" || kind == "conv2d"));
  TORCH_CHECK(kind_ok, "qplugin::", cls, ".__setstate__: kind should be ", want, ", got '", kind, "'");
  const std::string op = std::string(cls) + ".__setstate__";
  check_storage_covers(op.c_str(), "weight", std::get<0>(t));
  if (std::get<0>(t).defined() && std::get<0>(t).is_quantized() && std::get<0>(t).qscheme() == at::kPerChannelAffine) {
    check_storage_covers(op.c_str(), "weight scales", std::get<0>(t).q_per_channel_scales());
    check_storage_covers(op.c_str(), "weight zero_points", std::get<0>(t).q_per_channel_zero_points());
  }
  if (std::get<1>(t).has_value()) check_storage_covers(op.c_str(), "bias", *std::get<1>(t));
  if (transpose) {
    return conv_transpose_prepack_impl(op.c_str(), kind, std::get<0>(t), std::get<1>(t), stride, padding,
                                       output_padding, dilation, std::get<2>(head));
  }
  return conv_prepack_impl(op.c_str(), kind, std::get<0>(t), std::get<1>(t), stride, padding, dilation,
                           std::get<2>(head));
}

template <typename Holder>
void register_one(torch::Library& m) {
  m.class_<Holder>(Holder::kName)
      .def_pickle(
          [](const c10::intrusive_ptr<Holder>& self) -> c10::IValue {
            return conv_state(*self->p);
          },
          [](c10::IValue s) -> c10::intrusive_ptr<Holder> {
            return c10::make_intrusive<Holder>(from_state<Holder>(s, Holder::kName));
          })
      .def("unpack",
           [](const c10::intrusive_ptr<Holder>& self) {
             return std::tuple<at::Tensor, c10::optional<at::Tensor>>(self->p->weight, self->p->bias);
           })
      .def("stride",
           [](const c10::intrusive_ptr<Holder>& self) {
             return self->p->stride;
           })
      .def("padding",
           [](const c10::intrusive_ptr<Holder>& self) {
             return self->p->padding;
           })
      .def("dilation",
           [](const c10::intrusive_ptr<Holder>& self) {
             return self->p->dilation;
           })
      .def("output_padding",
           [](const c10::intrusive_ptr<Holder>& self) {
             return self->p->output_padding;
           })
      .def("groups",
           [](const c10::intrusive_ptr<Holder>& self) {
             return self->p->groups;
           })
      .def("transpose",
           [](const c10::intrusive_ptr<Holder>& self) {
             return self->p->transpose;
           })
      .def("kind", [](const c10::intrusive_ptr<Holder>& self) {
        return self->p->kind;
      });
}

template <typename Holder>
std::tuple<at::Tensor, c10::optional<at::Tensor>> unpack_kind(const c10::intrusive_ptr<Holder>& w, const char* op,
                                                              const char* kind) {
  TORCH_CHECK(w->p->kind == kind, "qplugin::", op, ": packed_weights should come from ", kind,
              "_prepack, got packed params of ", w->p->kind);
  return {w->p->weight, w->p->bias};
}

}  // namespace

void register_conv_classes(torch::Library& m) {
  register_one<Conv2dPackedParamsBase>(m);
  register_one<Conv3dPackedParamsBase>(m);
}

std::tuple<at::Tensor, c10::optional<at::Tensor>> conv1d_unpack(const c10::intrusive_ptr<Conv2dPackedParamsBase>& w) {
  return unpack_kind(w, "conv1d_unpack", "conv1d");
}
std::tuple<at::Tensor, c10::optional<at::Tensor>> conv2d_unpack(const c10::intrusive_ptr<Conv2dPackedParamsBase>& w) {
  return unpack_kind(w, "conv2d_unpack", "conv2d");
}
std::tuple<at::Tensor, c10::optional<at::Tensor>> conv3d_unpack(const c10::intrusive_ptr<Conv3dPackedParamsBase>& w) {
  return unpack_kind(w, "conv3d_unpack", "conv3d");
}
std::tuple<at::Tensor, c10::optional<at::Tensor>> conv_transpose1d_unpack(
    const c10::intrusive_ptr<Conv2dPackedParamsBase>& w) {
  return unpack_kind(w, "conv_transpose1d_unpack", "conv_transpose1d");
}
std::tuple<at::Tensor, c10::optional<at::Tensor>> conv_transpose2d_unpack(
    const c10::intrusive_ptr<Conv2dPackedParamsBase>& w) {
  return unpack_kind(w, "conv_transpose2d_unpack", "conv_transpose2d");
}
std::tuple<at::Tensor, c10::optional<at::Tensor>> conv_transpose3d_unpack(
    const c10::intrusive_ptr<Conv3dPackedParamsBase>& w) {
  return unpack_kind(w, "conv_transpose3d_unpack", "conv_transpose3d");
}

}  // namespace qplugin
