// Convolution weights: validation of int8 data, qparams and geometry, and the kernel layouts.
#include "cpu/conv_weights.h"

#include <algorithm>

#include "utils/checks.h"

namespace qplugin {

namespace {

// Exact int32 accumulation needs K * 255 * 255 < 2^31.
constexpr int64_t kMaxConvK = 33025;

std::vector<int64_t> spatial_arg(const char* op, const char* arg, IntArrayRef v, int64_t spatial) {
  QP_CHECK_VALUE(static_cast<int64_t>(v.size()) == spatial, "qplugin::", op, ": ", arg, " should have ", spatial,
                 " element", spatial == 1 ? "" : "s", ", got ", v);
  return v.vec();
}

}  // namespace

const kernels::gemm::PackedWeight& ConvWeights::packed_rows() {
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

const int32_t* ConvWeights::dw_packed(kernels::Isa path) {
  const auto i = static_cast<size_t>(path);
  QP_ASSERT(depthwise && i < dw_packed_.size());
  std::call_once(dw_packed_once_[i], [&] {
    const int64_t KR = KD * KH;
    const int64_t n = QPLUGIN_ISA_CALL_ON(path, conv_depthwise_packed_size, KR, KW, OC);
    if (n == 0) return;
    std::vector<int32_t> w(static_cast<size_t>(n));
    if (QPLUGIN_ISA_CALL_ON(path, conv_depthwise_pack, dw.data(), KR, KW, OC, w.data())) dw_packed_[i] = std::move(w);
  });
  return dw_packed_[i].empty() ? nullptr : dw_packed_[i].data();
}

int64_t conv_kind_spatial(const std::string& kind) {
  QP_ASSERT(!kind.empty());
  return kind[kind.size() - 2] - '0';
}

bool is_conv_transpose_kind(const std::string& kind) { return kind.rfind("conv_transpose", 0) == 0; }

void check_transpose_groups(const char* op, int64_t in_channels, int64_t groups) {
  QP_CHECK_VALUE(groups >= 1, "qplugin::", op, ": groups should be >= 1, got ", groups);
  QP_CHECK_VALUE(in_channels % groups == 0, "qplugin::", op, ": groups should divide in_channels (", in_channels,
                 ", weight dim 0), got groups ", groups);
}

bool conv_has_rows(const ConvWeights& p) {
  return !p.transpose && !p.depthwise && p.groups == 1 && p.ICg % 4 != 0 && p.DW == 1;
}

bool conv_reads_rows(const ConvWeights& p, kernels::Isa path) {
  return conv_has_rows(p) && !p.any_wzp && QPLUGIN_ISA_CALL_ON(path, qgemm_has_indirect);
}

ConvPackedView ConvWeights::packed_view(kernels::Isa path) {
  ConvPackedView v;
  v.isa = path;
  const bool with16 = path == kernels::Isa::kAvx2;
  if (transpose) {
    for (const auto& t : tpacked) v.b.push_back(t->view(with16));
    v.tzp = tzp.data();
  } else if (depthwise) {
    v.dw = dw.data();
    v.dw_packed = dw_packed(path);
  } else {
    for (const auto& g : packed) v.b.push_back(g->view(with16));
    if (conv_reads_rows(*this, path)) v.rows = packed_rows().view();
  }
  return v;
}

// Everything conv and transposed conv share: checks of the weight data, groups, geometry lists,
// qparams (1 or OC entries) and bias; fills the user-facing fields, the 3-d view and the
// per-output-channel scales / zero points / bias.
std::shared_ptr<ConvWeights> conv_describe_int(const char* op, const std::string& kind, const Tensor& w_int8,
                                               const Tensor& w_scales, const Tensor& w_zero_points,
                                               const std::optional<Tensor>& bias, IntArrayRef stride,
                                               IntArrayRef padding, IntArrayRef output_padding, IntArrayRef dilation,
                                               int64_t groups, bool check_qparams) {
  const int64_t spatial = conv_kind_spatial(kind);
  const bool transpose = is_conv_transpose_kind(kind);
  QP_CHECK(w_int8.defined() && tensor::dtype(w_int8) == kChar, "qplugin::", op,
           ": weight should be an int8 tensor, got ",
           w_int8.defined() ? dtype_name(tensor::dtype(w_int8)) : "an undefined tensor");
  const auto ks = w_int8.sizes();
  const int64_t wdim = static_cast<int64_t>(ks.size());
  QP_CHECK_VALUE(wdim == spatial + 2, "qplugin::", op, ": weight should have ", spatial + 2,
                 transpose ? " dims (in_channels, out_channels / groups, kernel...), got "
                           : " dims (out_channels, in_channels / groups, kernel...), got ",
                 wdim, " dims ", ks);
  for (int64_t d = 0; d < wdim; ++d) {
    QP_CHECK_VALUE(ks[d] >= 1, "qplugin::", op, ": weight should have no empty dims, got ", ks);
  }
  QP_CHECK_VALUE(groups >= 1, "qplugin::", op, ": groups should be >= 1, got ", groups);
  auto p = std::make_shared<ConvWeights>(w_int8);
  p->kind = kind;
  p->spatial = spatial;
  p->transpose = transpose;
  if (transpose) {
    check_transpose_groups(op, ks[0], groups);
    p->OC = ks[1] * groups;
    p->ICg = ks[0] / groups;
  } else {
    p->OC = ks[0];
    p->ICg = ks[1];
    QP_CHECK_VALUE(p->OC % groups == 0, "qplugin::", op, ": groups should divide out_channels (", p->OC,
                   "), got groups ", groups);
  }
  p->stride = spatial_arg(op, "stride", stride, spatial);
  p->padding = spatial_arg(op, "padding", padding, spatial);
  p->dilation = spatial_arg(op, "dilation", dilation, spatial);
  p->output_padding = transpose ? spatial_arg(op, "output_padding", output_padding, spatial)
                                : std::vector<int64_t>(static_cast<size_t>(spatial), 0);
  for (int64_t i = 0; i < spatial; ++i) {
    QP_CHECK_VALUE(p->stride[i] >= 1 && p->stride[i] <= kMaxGeometry, "qplugin::", op, ": stride should be in [1, ",
                   kMaxGeometry, "], got ", stride);
    QP_CHECK_VALUE(p->dilation[i] >= 1 && p->dilation[i] <= kMaxGeometry, "qplugin::", op,
                   ": dilation should be in [1, ", kMaxGeometry, "], got ", dilation);
    QP_CHECK_VALUE(p->padding[i] >= 0 && p->padding[i] <= kMaxGeometry, "qplugin::", op, ": padding should be in [0, ",
                   kMaxGeometry, "], got ", padding);
    // torch's rule: each output_padding entry below its stride or its dilation
    QP_CHECK_VALUE(
        p->output_padding[i] >= 0 && (p->output_padding[i] < p->stride[i] || p->output_padding[i] < p->dilation[i]),
        "qplugin::", op, ": output_padding should be >= 0 and smaller than stride or dilation in every dim, got ",
        "output_padding ", output_padding, " with stride ", stride, " and dilation ", dilation);
  }
  p->groups = groups;
  // 3-d kernel view
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
  QP_CHECK_VALUE(p->K <= kMaxConvK, "qplugin::", op, ": in_channels / groups * kernel volume should be <= ", kMaxConvK,
                 " (exact int32 accumulation), got ", p->K);
  // qparams: 1 (per tensor) or OC (per channel) entries
  // (a conversion only where needed: the plain ops describe the conv on every call)
  const Tensor sc = tensor::contiguous(tensor::dtype(w_scales) == kDouble ? w_scales : tensor::to(w_scales, kDouble));
  const Tensor zp =
      tensor::contiguous(tensor::dtype(w_zero_points) == kLong ? w_zero_points : tensor::to(w_zero_points, kLong));
  const int64_t n_sc = sc.numel(), n_zp = zp.numel();
  const bool per_tensor = n_sc == 1 && n_zp == 1;
  QP_CHECK_VALUE(per_tensor || (n_sc == p->OC && n_zp == p->OC), "qplugin::", op,
                 ": weight per-channel scales and zero_points should have ", p->OC, " elements, got ", n_sc, " and ",
                 n_zp);
  p->w_scale.resize(p->OC);
  p->w_zp.resize(p->OC);
  const double* scp = tensor::data<double>(sc);
  const int64_t* zpp = tensor::data<int64_t>(zp);
  for (int64_t i = 0; check_qparams && i < n_sc; ++i) {
    check_scale(op, "weight scale", scp[i]);
    check_zero_point(op, "weight zero_point", zpp[i], kChar);
  }
  for (int64_t o = 0; o < p->OC; ++o) {
    const int64_t i = per_tensor ? 0 : o;
    p->w_scale[o] = scp[i];
    p->w_zp[o] = static_cast<int32_t>(zpp[i]);
  }
  p->any_wzp = false;
  for (int32_t z : p->w_zp) p->any_wzp = p->any_wzp || z != 0;
  // bias
  p->bias_f.assign(p->OC, 0.0f);
  if (bias.has_value() && bias->defined()) {
    const Tensor& b = *bias;
    QP_CHECK(tensor::dtype(b) == kFloat, "qplugin::", op, ": bias should be a float32 tensor, got dtype ",
             tensor::dtype(b));
    QP_CHECK_VALUE(b.dim() == 1 && b.size(0) == p->OC, "qplugin::", op, ": bias should be a 1-d tensor of ", p->OC,
                   " elements (out_channels), got shape ", b.sizes());
    const Tensor bc = tensor::contiguous(b);
    std::copy_n(tensor::data<float>(bc), p->OC, p->bias_f.begin());
    p->bias = b;
  }
  if (!transpose) {
    p->Kp = kernels::scalar::conv_a_row_elems(p->K);
    p->S4 = (p->KW * p->ICg + 3) / 4 * 4;
    p->K4 = p->KD * p->KH * p->S4;
    // depthwise: one input and one output channel per group
    p->depthwise = p->ICg == 1 && p->OC == groups;
  }
  return p;
}

std::shared_ptr<ConvWeights> conv_transpose_prepack_int(const char* op, const std::string& kind, const Tensor& w_int8,
                                                        const Tensor& w_scales, const Tensor& w_zero_points,
                                                        const std::optional<Tensor>& bias, IntArrayRef stride,
                                                        IntArrayRef padding, IntArrayRef output_padding,
                                                        IntArrayRef dilation, int64_t groups) {
  QP_ASSERT(is_conv_transpose_kind(kind));
  auto p = conv_describe_int(op, kind, w_int8, w_scales, w_zero_points, bias, stride, padding, output_padding, dilation,
                             groups);
  // per (group, kd, kh): B[kw * OCg + oc][ic] = w[g * ICg + ic][oc][kd][kh][kw]
  const int64_t G = groups, ICg = p->ICg, OCg = p->OC / groups;
  const int64_t KD = p->KD, KH = p->KH, KW = p->KW;
  const Tensor wc = tensor::contiguous(w_int8);
  const int8_t* src = tensor::data<int8_t>(wc);  // [IC][OCg][KD][KH][KW]
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

std::shared_ptr<ConvWeights> conv_prepack_int(const char* op, const std::string& kind, const Tensor& w_int8,
                                              const Tensor& w_scales, const Tensor& w_zero_points,
                                              const std::optional<Tensor>& bias, IntArrayRef stride,
                                              IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  QP_ASSERT(!is_conv_transpose_kind(kind));
  auto p = conv_describe_int(op, kind, w_int8, w_scales, w_zero_points, bias, stride, padding, {}, dilation, groups);
  const int64_t taps = p->KD * p->KH * p->KW;
  // wmat [OC][taps][ICg]
  const Tensor wi = tensor::reshape(tensor::contiguous(w_int8), std::vector<int64_t>{p->OC, p->ICg, taps});
  const int8_t* src = tensor::mutable_data<int8_t>(wi);
  p->wmat.resize(static_cast<size_t>(p->OC * p->K));
  for (int64_t o = 0; o < p->OC; ++o) {
    for (int64_t t = 0; t < taps; ++t) {
      for (int64_t c = 0; c < p->ICg; ++c) p->wmat[o * p->K + t * p->ICg + c] = src[(o * p->ICg + c) * taps + t];
    }
  }
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

std::shared_ptr<ConvWeights> conv_prepack_int_of_kind(const char* op, const std::string& kind, const Tensor& w_int8,
                                                      const Tensor& w_scales, const Tensor& w_zero_points,
                                                      const std::optional<Tensor>& bias, IntArrayRef stride,
                                                      IntArrayRef padding, IntArrayRef output_padding,
                                                      IntArrayRef dilation, int64_t groups) {
  return is_conv_transpose_kind(kind)
             ? conv_transpose_prepack_int(op, kind, w_int8, w_scales, w_zero_points, bias, stride, padding,
                                          output_padding, dilation, groups)
             : conv_prepack_int(op, kind, w_int8, w_scales, w_zero_points, bias, stride, padding, dilation, groups);
}

}  // namespace qplugin
