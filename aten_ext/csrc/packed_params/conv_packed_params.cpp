// Conv packed params: prepack (validation + kernel layouts), unpack, pickling.
#include "packed_params/conv_packed_params.h"

#include <ATen/ATen.h>

#include <limits>

#include "kernels/dispatch.h"
#include "utils/checks.h"
#include "utils/class_check.h"
#include "utils/qtensor.h"

namespace qplugin {

namespace {

// Exact int32 accumulation needs K * 255 * 255 < 2^31.
constexpr int64_t kMaxConvK = 33025;

std::vector<int64_t> spatial_arg(const char* op, const char* arg, at::IntArrayRef v, int64_t spatial) {
  TORCH_CHECK_VALUE(static_cast<int64_t>(v.size()) == spatial, "qplugin::", op, ": ", arg,
                    " should have ", spatial, " element", spatial == 1 ? "" : "s", ", got ", v);
  return v.vec();
}

} // namespace

const kernels::gemm::PackedWeight& ConvPackedParams::packed_rows() {
  std::call_once(packed_rows_once_, [&] {
    const int64_t rows = KD * KH;
    const int64_t len = KW * ICg;
    std::vector<int8_t> w4(static_cast<size_t>(OC * K4), 0);
    for (int64_t o = 0; o < OC; ++o)
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < len; ++j) w4[o * K4 + r * S4 + j] = wmat[o * K + r * len + j];
    packed_rows_.pack(w4.data(), K4, 1, K4, OC);
  });
  return packed_rows_;
}

const int32_t* ConvPackedParams::dw_packed(kernels::Isa path) {
  const auto i = static_cast<size_t>(path);
  TORCH_INTERNAL_ASSERT(depthwise && i < dw_packed_.size());
  std::call_once(dw_packed_once_[i], [&] {
    const int64_t KR = KD * KH;
    const int64_t n = QPLUGIN_ISA_CALL_ON(path, conv_depthwise_packed_size, KR, KW, OC);
    if (n == 0) return;
    std::vector<int32_t> w(static_cast<size_t>(n));
    if (QPLUGIN_ISA_CALL_ON(path, conv_depthwise_pack, dw.data(), KR, KW, OC, w.data())) dw_packed_[i] = std::move(w);
  });
  return dw_packed_[i].empty() ? nullptr : dw_packed_[i].data();
}

c10::IValue ConvPackedParams::state() const {
  if (transpose) {
    return ConvTransposeState(std::make_tuple(kConvTransposeStateVersion, kind, groups), std::make_tuple(weight, bias),
                              std::make_tuple(stride, padding, output_padding, dilation));
  }
  return ConvState(std::make_tuple(kConvStateVersion, kind, groups), std::make_tuple(weight, bias),
                   std::make_tuple(stride, padding, dilation));
}

int64_t conv_kind_spatial(const std::string& kind) {
  TORCH_INTERNAL_ASSERT(!kind.empty());
  return kind[kind.size() - 2] - '0';
}

bool is_conv_transpose_kind(const std::string& kind) { return kind.rfind("conv_transpose", 0) == 0; }

void check_transpose_groups(const char* op, int64_t in_channels, int64_t groups) {
  TORCH_CHECK_VALUE(groups >= 1, "qplugin::", op, ": groups should be >= 1, got ", groups);
  TORCH_CHECK_VALUE(in_channels % groups == 0, "qplugin::", op, ": groups should divide in_channels (",
                    in_channels, ", weight dim 0), got groups ", groups);
}

namespace {

// Everything conv and transposed conv share: checks of the weight data, groups, geometry lists,
// qparams (1 or OC entries) and bias; fills the user-facing fields, the 3-d view and the
// per-output-channel scales / zero points / bias.
std::shared_ptr<ConvPackedParams> prepack_common(const char* op, const std::string& kind,
                                                 const at::Tensor& w_int8, const at::Tensor& w_scales,
                                                 const at::Tensor& w_zero_points,
                                                 const c10::optional<at::Tensor>& bias, at::IntArrayRef stride,
                                                 at::IntArrayRef padding, at::IntArrayRef output_padding,
                                                 at::IntArrayRef dilation, int64_t groups) {
  const int64_t spatial = conv_kind_spatial(kind);
  const bool transpose = is_conv_transpose_kind(kind);
  TORCH_CHECK(w_int8.defined() && !w_int8.is_quantized() && w_int8.scalar_type() == at::kChar, "qplugin::", op,
              ": weight should be an int8 tensor, got ",
              w_int8.defined() ? c10::toString(w_int8.scalar_type()) : "an undefined tensor");
  TORCH_CHECK_VALUE(w_int8.dim() == spatial + 2, "qplugin::", op, ": weight should have ", spatial + 2,
                    transpose ? " dims (in_channels, out_channels / groups, kernel...), got "
                              : " dims (out_channels, in_channels / groups, kernel...), got ",
                    w_int8.dim(), " dims ", w_int8.sizes());
  for (int64_t d = 0; d < w_int8.dim(); ++d) {
    TORCH_CHECK_VALUE(w_int8.size(d) >= 1, "qplugin::", op, ": weight should have no empty dims, got ",
                      w_int8.sizes());
  }
  TORCH_CHECK_VALUE(groups >= 1, "qplugin::", op, ": groups should be >= 1, got ", groups);
  auto p = std::make_shared<ConvPackedParams>();
  p->kind = kind;
  p->spatial = spatial;
  p->transpose = transpose;
  if (transpose) {
    check_transpose_groups(op, w_int8.size(0), groups);
    p->OC = w_int8.size(1) * groups;
    p->ICg = w_int8.size(0) / groups;
  } else {
    p->OC = w_int8.size(0);
    p->ICg = w_int8.size(1);
    TORCH_CHECK_VALUE(p->OC % groups == 0, "qplugin::", op, ": groups should divide out_channels (",
                      p->OC, "), got groups ", groups);
  }
  p->stride = spatial_arg(op, "stride", stride, spatial);
  p->padding = spatial_arg(op, "padding", padding, spatial);
  p->dilation = spatial_arg(op, "dilation", dilation, spatial);
  p->output_padding = transpose ? spatial_arg(op, "output_padding", output_padding, spatial)
                                : std::vector<int64_t>(static_cast<size_t>(spatial), 0);
  for (int64_t i = 0; i < spatial; ++i) {
    TORCH_CHECK_VALUE(p->stride[i] >= 1 && p->stride[i] <= kMaxGeometry, "qplugin::", op,
                      ": stride should be in [1, ", kMaxGeometry, "], got ", stride);
    TORCH_CHECK_VALUE(p->dilation[i] >= 1 && p->dilation[i] <= kMaxGeometry, "qplugin::", op,
                      ": dilation should be in [1, ", kMaxGeometry, "], got ", dilation);
    TORCH_CHECK_VALUE(p->padding[i] >= 0 && p->padding[i] <= kMaxGeometry, "qplugin::", op,
                      ": padding should be in [0, ", kMaxGeometry, "], got ", padding);
    // torch's rule: each output_padding entry below its stride or its dilation
    TORCH_CHECK_VALUE(p->output_padding[i] >= 0 &&
                          (p->output_padding[i] < p->stride[i] || p->output_padding[i] < p->dilation[i]),
                      "qplugin::", op,
                      ": output_padding should be >= 0 and smaller than stride or dilation in every dim, got ",
                      "output_padding ", output_padding, " with stride ", stride, " and dilation ", dilation);
  }
  p->groups = groups;
  // 3-d kernel view
  const auto ks = w_int8.sizes();
  auto fill3 = [&](const std::vector<int64_t>& v, int64_t& d, int64_t& h, int64_t& w, int64_t dflt) {
    d = spatial == 3 ? v[0] : dflt;
    h = spatial >= 2 ? v[spatial - 2] : dflt;
    w = v[spatial - 1];
  };
  std::vector<int64_t> kv(ks.begin() + 2, ks.end());
  fill3(kv, p->KD, p->KH, p->KW, 1);
  fill3(p->stride, p->SD, p->SH, p->SW, 1);
  fill3(p->padding, p->PD, p->PH, p->PW, 0);
  fill3(p->dilation, p->DD, p->DH, p->DW, 1);
  const int64_t taps = p->KD * p->KH * p->KW;
  p->K = taps * p->ICg;
  // transposed: an output element sums at most ICg * taps products too
  TORCH_CHECK_VALUE(p->K <= kMaxConvK, "qplugin::", op,
                    ": in_channels / groups * kernel volume should be <= ", kMaxConvK,
                    " (exact int32 accumulation), got ", p->K);
  // qparams: 1 (per tensor) or OC (per channel) entries
  const at::Tensor sc = w_scales.to(at::kDouble).contiguous();
  const at::Tensor zp = w_zero_points.to(at::kLong).contiguous();
  const bool per_tensor = sc.numel() == 1 && zp.numel() == 1;
  TORCH_CHECK_VALUE(per_tensor || (sc.numel() == p->OC && zp.numel() == p->OC), "qplugin::", op,
                    ": weight per-channel scales and zero_points should have ", p->OC,
                    " elements, got ", sc.numel(), " and ", zp.numel());
  p->w_scale.resize(p->OC);
  p->w_zp.resize(p->OC);
  for (int64_t o = 0; o < p->OC; ++o) {
    const int64_t i = per_tensor ? 0 : o;
    if (o == i) {
      check_scale(op, "weight scale", sc.const_data_ptr<double>()[i]);
      check_zero_point(op, "weight zero_point", zp.const_data_ptr<int64_t>()[i], at::kChar);
    }
    p->w_scale[o] = sc.const_data_ptr<double>()[i];
    p->w_zp[o] = static_cast<int32_t>(zp.const_data_ptr<int64_t>()[i]);
  }
  p->any_wzp = false;
  for (int32_t z : p->w_zp) p->any_wzp = p->any_wzp || z != 0;
  // bias
  p->bias_f.assign(p->OC, 0.0f);
  if (bias.has_value() && bias->defined()) {
    const at::Tensor& b = *bias;
    TORCH_CHECK(!b.is_quantized() && b.scalar_type() == at::kFloat, "qplugin::", op,
                ": bias should be a float32 tensor, got ", b.is_quantized() ? "a quantized tensor of dtype " : "dtype ",
                b.scalar_type());
    TORCH_CHECK_VALUE(b.dim() == 1 && b.size(0) == p->OC, "qplugin::", op,
                      ": bias should be a 1-d tensor of ", p->OC, " elements (out_channels), got shape ",
                      b.sizes());
    const at::Tensor bc = b.contiguous();
    for (int64_t o = 0; o < p->OC; ++o) p->bias_f[o] = bc.data_ptr<float>()[o];
    p->bias = b;
  }
  p->weight = w_int8;
  return p;
}

} // namespace

std::shared_ptr<ConvPackedParams> conv_transpose_prepack_int(
    const char* op, const std::string& kind, const at::Tensor& w_int8, const at::Tensor& w_scales,
    const at::Tensor& w_zero_points, const c10::optional<at::Tensor>& bias, at::IntArrayRef stride,
    at::IntArrayRef padding, at::IntArrayRef output_padding, at::IntArrayRef dilation, int64_t groups) {
  TORCH_INTERNAL_ASSERT(is_conv_transpose_kind(kind));
  auto p = prepack_common(op, kind, w_int8, w_scales, w_zero_points, bias, stride, padding, output_padding,
                          dilation, groups);
  // per (group, kd, kh): B[kw * OCg + oc][ic] = w[g * ICg + ic][oc][kd][kh][kw]
  const int64_t G = groups, ICg = p->ICg, OCg = p->OC / groups;
  const int64_t KD = p->KD, KH = p->KH, KW = p->KW;
  const at::Tensor wc = w_int8.contiguous();
  const int8_t* src = wc.const_data_ptr<int8_t>();  // [IC][OCg][KD][KH][KW]
  const int64_t ncols = KW * OCg;
  std::vector<int8_t> bm(static_cast<size_t>(ncols * ICg));
  for (int64_t g = 0; g < G; ++g) {
    for (int64_t kd = 0; kd < KD; ++kd) {
      for (int64_t kh = 0; kh < KH; ++kh) {
        for (int64_t kw = 0; kw < KW; ++kw) {
          for (int64_t oc = 0; oc < OCg; ++oc) {
            for (int64_t ic = 0; ic < ICg; ++ic) {
              bm[(kw * OCg + oc) * ICg + ic] = src[((((g * ICg + ic) * OCg + oc) * KD + kd) * KH + kh) * KW + kw];
            }
          }
        }
        p->tpacked.push_back(std::make_unique<kernels::gemm::PackedWeight>());
        p->tpacked.back()->pack(bm.data(), ICg, 1, ICg, ncols);
      }
    }
    for (int64_t kw = 0; kw < KW; ++kw) {
      for (int64_t oc = 0; oc < OCg; ++oc) p->tzp.push_back(p->w_zp[g * OCg + oc]);
    }
  }
  return p;
}

std::shared_ptr<ConvPackedParams> conv_prepack_int(const char* op, const std::string& kind,
                                                   const at::Tensor& w_int8, const at::Tensor& w_scales,
                                                   const at::Tensor& w_zero_points,
                                                   const c10::optional<at::Tensor>& bias,
                                                   at::IntArrayRef stride, at::IntArrayRef padding,
                                                   at::IntArrayRef dilation, int64_t groups) {
  TORCH_INTERNAL_ASSERT(!is_conv_transpose_kind(kind));
  auto p = prepack_common(op, kind, w_int8, w_scales, w_zero_points, bias, stride, padding, {}, dilation, groups);
  const int64_t taps = p->KD * p->KH * p->KW;
  p->Kp = kernels::scalar::conv_a_row_elems(p->K);
  p->S4 = (p->KW * p->ICg + 3) / 4 * 4;
  p->K4 = p->KD * p->KH * p->S4;
  // wmat [OC][taps][ICg]
  const at::Tensor wi = w_int8.contiguous().reshape({p->OC, p->ICg, taps});
  const int8_t* src = wi.data_ptr<int8_t>();
  p->wmat.resize(static_cast<size_t>(p->OC * p->K));
  for (int64_t o = 0; o < p->OC; ++o) {
    for (int64_t t = 0; t < taps; ++t) {
      for (int64_t c = 0; c < p->ICg; ++c) p->wmat[o * p->K + t * p->ICg + c] = src[(o * p->ICg + c) * taps + t];
    }
  }
  // depthwise: one input and one output channel per group
  p->depthwise = p->ICg == 1 && p->OC == groups;
  if (!p->depthwise) {
    const int64_t ocg = p->OC / groups;
    for (int64_t g = 0; g < groups; ++g) {
      p->packed.push_back(std::make_unique<kernels::gemm::PackedWeight>());
      p->packed.back()->pack(p->wmat.data() + g * ocg * p->K, p->K, 1, p->K, ocg);
    }
  }
  if (p->depthwise) {
    p->dw.resize(static_cast<size_t>(taps * p->OC));
    for (int64_t t = 0; t < taps; ++t) {
      for (int64_t c = 0; c < p->OC; ++c) {
        const int32_t v = static_cast<int32_t>(src[c * taps + t]) - p->w_zp[c];
        p->dw[t * p->OC + c] = static_cast<int32_t>(static_cast<uint32_t>(v) & 0xFFFFu);
      }
    }
  }
  return p;
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
  TORCH_CHECK(weight.scalar_type() == at::kQInt8, "qplugin::", op,
              ": weight should be a qint8 tensor, got ", weight.scalar_type());
  TORCH_CHECK(weight.dim() == spatial + 2, "qplugin::", op, ": weight should have ", spatial + 2,
              transpose ? " dims (in_channels, out_channels / groups, kernel...), got "
                        : " dims (out_channels, in_channels / groups, kernel...), got ",
              weight.dim(), " dims ", weight.sizes());
  const auto qs = weight.qscheme();
  TORCH_CHECK(qs == at::kPerTensorAffine || qs == at::kPerChannelAffine, "qplugin::", op,
              ": weight should be per_tensor_affine or per_channel_affine, got qscheme ",
              c10::toString(qs));
  const int64_t axis = transpose ? 1 : 0;
  if (qs == at::kPerTensorAffine) {
    *scales = at::full({1}, weight.q_scale(), at::dtype(at::kDouble));
    *zero_points = at::full({1}, weight.q_zero_point(), at::dtype(at::kLong));
  } else {
    TORCH_CHECK_VALUE(weight.q_per_channel_axis() == axis, "qplugin::", op, ": weight per-channel axis should be ",
                      axis, " (output channels), got ", weight.q_per_channel_axis());
    *scales = weight.q_per_channel_scales();
    *zero_points = weight.q_per_channel_zero_points();
    TORCH_CHECK_VALUE(scales->numel() == weight.size(axis) && zero_points->numel() == weight.size(axis), "qplugin::",
                      op, ": weight per-channel scales and zero_points should have ", weight.size(axis),
                      " elements, got ", scales->numel(), " and ", zero_points->numel());
    if (transpose && groups > 1) {  // OC / groups entries -> OC (group g's channel j is g * OCg + j)
      check_transpose_groups(op, weight.size(0), groups);  // before the repeat sized by groups
      *scales = scales->repeat({groups});
      *zero_points = zero_points->repeat({groups});
    }
  }
  return int_view(weight);
}

} // namespace

std::shared_ptr<ConvPackedParams> conv_prepack_impl(const char* op, const std::string& kind,
                                                    const at::Tensor& weight,
                                                    const c10::optional<at::Tensor>& bias,
                                                    at::IntArrayRef stride, at::IntArrayRef padding,
                                                    at::IntArrayRef dilation, int64_t groups) {
  at::Tensor scales, zero_points;
  const at::Tensor wi = unwrap_weight(op, weight, conv_kind_spatial(kind), false, groups, &scales, &zero_points);
  auto p = conv_prepack_int(op, kind, wi, scales, zero_points, bias, stride, padding, dilation, groups);
  p->weight = weight;
  return p;
}

std::shared_ptr<ConvPackedParams> conv_transpose_prepack_impl(
    const char* op, const std::string& kind, const at::Tensor& weight, const c10::optional<at::Tensor>& bias,
    at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef output_padding, at::IntArrayRef dilation,
    int64_t groups) {
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
std::shared_ptr<ConvPackedParams> from_state(const c10::IValue& sv, const char* cls) {
  const int64_t version = state_version(sv);
  if (version < 0) typed_state<ConvState>(sv, cls);  // not a versioned tuple: raises naming the expected type
  TORCH_CHECK(version == kConvStateVersion || version == kConvTransposeStateVersion, "qplugin::", cls,
              ".__setstate__: state version should be ", kConvStateVersion, " (conv) or ",
              kConvTransposeStateVersion, " (transposed conv), got ", version);
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
  const bool kind_ok = transpose ? (is3d ? kind == "conv_transpose3d"
                                         : (kind == "conv_transpose1d" || kind == "conv_transpose2d"))
                                 : (is3d ? kind == "conv3d" : (kind == "conv1d" || kind == "conv2d"));
  TORCH_CHECK(kind_ok, "qplugin::", cls, ".__setstate__: kind should be ", want, ", got '", kind, "'");
  const std::string op = std::string(cls) + ".__setstate__";
  check_storage_covers(op.c_str(), "weight", std::get<0>(t));
  if (std::get<0>(t).defined() && std::get<0>(t).is_quantized() &&
      std::get<0>(t).qscheme() == at::kPerChannelAffine) {
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
          [](const c10::intrusive_ptr<Holder>& self) -> c10::IValue { return self->p->state(); },
          [](c10::IValue s) -> c10::intrusive_ptr<Holder> {
            return c10::make_intrusive<Holder>(from_state<Holder>(s, Holder::kName));
          })
      .def("unpack",
           [](const c10::intrusive_ptr<Holder>& self) {
             return std::tuple<at::Tensor, c10::optional<at::Tensor>>(self->p->weight, self->p->bias);
           })
      .def("stride", [](const c10::intrusive_ptr<Holder>& self) { return self->p->stride; })
      .def("padding", [](const c10::intrusive_ptr<Holder>& self) { return self->p->padding; })
      .def("dilation", [](const c10::intrusive_ptr<Holder>& self) { return self->p->dilation; })
      .def("output_padding", [](const c10::intrusive_ptr<Holder>& self) { return self->p->output_padding; })
      .def("groups", [](const c10::intrusive_ptr<Holder>& self) { return self->p->groups; })
      .def("transpose", [](const c10::intrusive_ptr<Holder>& self) { return self->p->transpose; })
      .def("kind", [](const c10::intrusive_ptr<Holder>& self) { return self->p->kind; });
}

template <typename Holder>
std::tuple<at::Tensor, c10::optional<at::Tensor>> unpack_kind(const c10::intrusive_ptr<Holder>& w,
                                                              const char* op, const char* kind) {
  TORCH_CHECK(w->p->kind == kind, "qplugin::", op, ": packed_weights should come from ", kind,
              "_prepack, got packed params of ", w->p->kind);
  return {w->p->weight, w->p->bias};
}

} // namespace

void register_conv_classes(torch::Library& m) {
  register_one<Conv2dPackedParamsBase>(m);
  register_one<Conv3dPackedParamsBase>(m);
}

std::tuple<at::Tensor, c10::optional<at::Tensor>> conv1d_unpack(
    const c10::intrusive_ptr<Conv2dPackedParamsBase>& w) {
  return unpack_kind(w, "conv1d_unpack", "conv1d");
}
std::tuple<at::Tensor, c10::optional<at::Tensor>> conv2d_unpack(
    const c10::intrusive_ptr<Conv2dPackedParamsBase>& w) {
  return unpack_kind(w, "conv2d_unpack", "conv2d");
}
std::tuple<at::Tensor, c10::optional<at::Tensor>> conv3d_unpack(
    const c10::intrusive_ptr<Conv3dPackedParamsBase>& w) {
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

} // namespace qplugin
