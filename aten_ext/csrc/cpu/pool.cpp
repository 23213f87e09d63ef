// CPU glue for 2-D pooling and 3-D average pooling: validate, lay out, build the window tables,
// split the work over tensor::parallel_for, call kernels/pool_kernel.
//
// Rounding (docs/design/pooling.md): avg_pool2d follows torch's NCHW kernel,
//   q = nearbyint(float(float(sum - size * zp) * float(1.0 / divisor)) + zp),
// adaptive_avg_pool2d torch's NCHW kernel,
//   q = nearbyint(float(sum) * r),  r = float(float(1.0f / kH) / kW),
// for every memory format (torch's channels_last kernels round slightly
// differently; we stay layout-independent).
#include "cpu/pool.h"

#include "utils/torch_api.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <vector>

#include "kernels/dispatch.h"
#include "kernels/pool_kernel.h"
#include "utils/checks.h"
#include "utils/layout.h"

namespace qplugin {
namespace cpu {
namespace {

constexpr int64_t kGrain = 1 << 15;  // output elements (x taps) per task, roughly

// (expanded value for dim 0, for dim 1) of an int[] argument of 1 or 2 entries
// (0 entries allowed where `empty_ok`, giving `dflt`).
std::pair<int64_t, int64_t> two_ints(const char* op, const char* arg, IntArrayRef v, bool empty_ok,
                                     std::pair<int64_t, int64_t> dflt) {
  if (v.empty() && empty_ok) return dflt;
  QP_CHECK_VALUE(v.size() == 1 || v.size() == 2, "qplugin::", op, ": ", arg, " should have ",
                 empty_ok ? "0, 1 or 2" : "1 or 2", " entries, got ", v.size(), " (", v, ")");
  return {v[0], v.size() == 1 ? v[0] : v[1]};
}

int64_t div_floor(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// torch's pooling_output_shape: with ceil_mode the last window must start
// inside the input or its left padding.
int64_t pool_out_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil, bool ceil_mode) {
  int64_t out = div_floor(in + 2 * pad - dil * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0), stride) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

// (N, C, D, H, W) of a 3-D / 4-D input of 2-D pooling (D = 1) ...
struct Nchw {
  int64_t N, C, D, H, W;
};
Nchw nchw(IntArrayRef s) { return s.size() == 4 ? Nchw{s[0], s[1], 1, s[2], s[3]} : Nchw{1, s[0], 1, s[1], s[2]}; }
// ... and of a 4-D / 5-D input of 3-D pooling.
Nchw ncdhw(IntArrayRef s) {
  return s.size() == 5 ? Nchw{s[0], s[1], s[2], s[3], s[4]} : Nchw{1, s[0], s[1], s[2], s[3]};
}

std::vector<int64_t> with_spatial(IntArrayRef sizes, int64_t oh, int64_t ow) {
  std::vector<int64_t> out(sizes.begin(), sizes.end());
  out[out.size() - 2] = oh;
  out[out.size() - 1] = ow;
  return out;
}
std::vector<int64_t> with_spatial3(IntArrayRef sizes, int64_t od, int64_t oh, int64_t ow) {
  std::vector<int64_t> out = with_spatial(sizes, oh, ow);
  out[out.size() - 3] = od;
  return out;
}

void check_int_data(const char* op, const Tensor& data) {
  const auto t = tensor::dtype(data);
  QP_CHECK(t == kByte || t == kChar || t == kInt, "qplugin::", op,
           ": input should hold uint8, int8 or int32 data, got dtype ", t);
}

// Splits NHWC work into (image, output row, channel block) units.
struct NhwcSplit {
  int64_t cblk, ncb;
};
NhwcSplit nhwc_split(int64_t rows, int64_t C) {
  // Few output rows (global pooling, small batches): split channels too, in
  // blocks that keep whole vectors.
  const int64_t threads = tensor::num_threads();
  if (rows >= 4 * threads || C <= 64) return {std::max<int64_t>(C, 1), 1};
  int64_t cblk = (C + threads * 2 - 1) / (threads * 2);
  cblk = std::max<int64_t>(64, (cblk + 63) / 64 * 64);
  return {cblk, (C + cblk - 1) / cblk};
}

template <typename F>
void for_nhwc(const Nchw& d, int64_t OH, int64_t work_per_row, F fn) {
  const NhwcSplit sp = nhwc_split(d.N * OH, d.C);
  const int64_t units = d.N * OH * sp.ncb;
  const int64_t per_unit = std::max<int64_t>(1, work_per_row * std::min(sp.cblk, d.C));
  const int64_t grain = std::max<int64_t>(1, kGrain / per_unit);
  tensor::parallel_for(0, units, grain, [&](int64_t b, int64_t e) {
    for (int64_t u = b; u < e;) {
      // Units are ordered (n, cb, oh): runs of output rows of one block.
      const int64_t n = u / (sp.ncb * OH);
      const int64_t rem = u % (sp.ncb * OH);
      const int64_t cb = rem / OH;
      const int64_t oh0 = rem % OH;
      const int64_t oh1 = std::min(OH, oh0 + (e - u));
      const int64_t c0 = cb * sp.cblk, c1 = std::min(d.C, c0 + sp.cblk);
      fn(n, c0, c1, oh0, oh1);
      u += oh1 - oh0;
    }
  });
}

template <typename F>
void for_planes(int64_t planes, int64_t work_per_plane, F fn) {
  const int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(1, work_per_plane));
  tensor::parallel_for(0, planes, grain, fn);
}

// Average-pooling tables the kernels read (pool_kernel.h): window bounds per
// output slice / row / column, and off / mult per window class (depth class x
// row class x column class).
struct AvgTables {
  std::vector<int64_t> ds, de, hs, he, ws, we, off;
  std::vector<int32_t> dcls, rcls, ccls;
  int64_t nrc = 0, ncc = 0;
  std::vector<float> mult;
  std::vector<int64_t> div;  // exact divisor per class (int32 data)
  float zadd = 0;
  int64_t zadd_i = 0;  // the zero point added back, exactly (int32 data)
  int64_t max_window = 0;
  bool three_d = false;
};

// Class index of each key (windows with equal keys share off / mult); returns the count.
int64_t classify(const std::vector<std::pair<int64_t, int64_t>>& keys, std::vector<int32_t>* cls,
                 std::vector<std::pair<int64_t, int64_t>>* reps) {
  std::map<std::pair<int64_t, int64_t>, int32_t> ids;
  for (const auto& k : keys) {
    auto it = ids.find(k);
    if (it == ids.end()) {
      it = ids.emplace(k, static_cast<int32_t>(reps->size())).first;
      reps->push_back(k);
    }
    cls->push_back(it->second);
  }
  return static_cast<int64_t>(reps->size());
}

// Windows of one pooled dim: [start, end) clipped to the input, and the class key
// (avg: (padded extent, valid taps); adaptive: (taps, 0)).
struct Win1d {
  std::vector<int64_t> s, e;
  std::vector<std::pair<int64_t, int64_t>> keys;
};
Win1d avg_win1d(int64_t O, int64_t k, int64_t stride, int64_t pad, int64_t n) {
  Win1d w;
  for (int64_t o = 0; o < O; ++o) {
    const int64_t s = o * stride - pad, e = std::min(s + k, n + pad);
    w.s.push_back(std::max<int64_t>(s, 0));
    w.e.push_back(std::min(e, n));
    w.keys.emplace_back(e - s, w.e.back() - w.s.back());
  }
  return w;
}
// torch's adaptive start / end index rule, float division included.
Win1d adaptive_win1d(int64_t O, int64_t n) {
  Win1d w;
  for (int64_t o = 0; o < O; ++o) {
    w.s.push_back(static_cast<int64_t>(std::floor(static_cast<float>(o * n) / O)));
    w.e.push_back(std::min(static_cast<int64_t>(std::ceil(static_cast<float>((o + 1) * n) / O)), n));
    w.keys.emplace_back(w.e.back() - w.s.back(), 0);
  }
  return w;
}

// Per-class numbers of a window made of the class keys of its dims.
struct ClassNums {
  int64_t size;  // valid taps
  int64_t div;   // divisor
  float mult;    // the float multiplier of the 8-bit rule
};

// Fills t from the windows of depth (nullptr: 2-D), rows and columns; `nums` maps the
// class keys of (depth, row, column) to the class's numbers; off = size * zero_point.
template <typename F>
void fill_tables(AvgTables& t, const Win1d* dw, Win1d& hw, Win1d& ww, int64_t zero_point, F nums) {
  std::vector<std::pair<int64_t, int64_t>> dreps{{1, 1}}, rreps, creps;
  if (dw != nullptr) {
    dreps.clear();
    classify(dw->keys, &t.dcls, &dreps);
    t.ds = dw->s;
    t.de = dw->e;
    t.three_d = true;
  }
  t.nrc = classify(hw.keys, &t.rcls, &rreps);
  t.ncc = classify(ww.keys, &t.ccls, &creps);
  t.hs = std::move(hw.s);
  t.he = std::move(hw.e);
  t.ws = std::move(ww.s);
  t.we = std::move(ww.e);
  for (const auto& dk : dreps) {
    for (const auto& r : rreps) {
      for (const auto& c : creps) {
        const ClassNums n = nums(dk, r, c);
        t.off.push_back(n.size * zero_point);
        t.mult.push_back(n.mult);
        t.div.push_back(n.div);
        t.max_window = std::max(t.max_window, n.size);
      }
    }
  }
  t.zadd = static_cast<float>(zero_point);
  t.zadd_i = zero_point;
}

// d: the input's dims (D = 1 for 2-D); nhwc: x is channels_last(_3d).
void run_avg(const Tensor& x, const Tensor& out, const Nchw& d, bool nhwc, int64_t OD, int64_t OH, int64_t OW,
             AvgTables& t) {
  kernels::AvgPool2dGeom g{d.H,
                           d.W,
                           OH,
                           OW,
                           t.hs.data(),
                           t.he.data(),
                           t.ws.data(),
                           t.we.data(),
                           t.rcls.data(),
                           t.ccls.data(),
                           t.ncc,
                           t.off.data(),
                           t.mult.data(),
                           t.zadd,
                           0.0f,
                           0.0f,
                           t.div.data(),
                           static_cast<double>(t.zadd_i)};
  if (t.three_d) {
    g.D = d.D;
    g.OD = OD;
    g.ds = t.ds.data();
    g.de = t.de.data();
    g.dcls = t.dcls.data();
    g.nrc = t.nrc;
  }
  const auto r = qrange(tensor::dtype(x));
  g.qmin = static_cast<float>(r.first);
  g.qmax = static_cast<float>(r.second);
  // 8-bit sums stay in int32 while a window has fewer than 2^23 taps.
  const bool wide = t.max_window >= (int64_t(1) << 23);
  const ScalarType dt = tensor::dtype(x);
  const void* ip = x.const_data_ptr();
  void* op = out.mutable_data_ptr();
  const int64_t esz = x.element_size();
  const int64_t in_img = d.D * d.H * d.W * d.C, out_img = OD * OH * OW * d.C;
  if (nhwc) {
    const int64_t taps = std::max<int64_t>(1, t.max_window);
    // NHWC rows run over all OD output slices (pool_kernel.h).
    for_nhwc(d, OD * OH, OW * taps, [&](int64_t n, int64_t c0, int64_t c1, int64_t oh0, int64_t oh1) {
      const char* i = static_cast<const char*>(ip) + n * in_img * esz;
      char* o = static_cast<char*>(op) + n * out_img * esz;
      if (dt == kByte) {
        const auto* a = reinterpret_cast<const uint8_t*>(i);
        auto* b = reinterpret_cast<uint8_t*>(o);
        if (wide) QPLUGIN_ISA_CALL(avg_pool2d_nhwc_wide_u8, a, b, d.C, c0, c1, oh0, oh1, g);
        else QPLUGIN_ISA_CALL(avg_pool2d_nhwc_u8, a, b, d.C, c0, c1, oh0, oh1, g);
      } else if (dt == kChar) {
        const auto* a = reinterpret_cast<const int8_t*>(i);
        auto* b = reinterpret_cast<int8_t*>(o);
        if (wide) QPLUGIN_ISA_CALL(avg_pool2d_nhwc_wide_s8, a, b, d.C, c0, c1, oh0, oh1, g);
        else QPLUGIN_ISA_CALL(avg_pool2d_nhwc_s8, a, b, d.C, c0, c1, oh0, oh1, g);
      } else {
        QPLUGIN_ISA_CALL(avg_pool2d_nhwc_s32, reinterpret_cast<const int32_t*>(i), reinterpret_cast<int32_t*>(o), d.C,
                         c0, c1, oh0, oh1, g);
      }
    });
  } else {
    const int64_t in_plane = d.D * d.H * d.W, out_plane = OD * OH * OW;
    for_planes(d.N * d.C, in_plane + out_plane, [&](int64_t b, int64_t e) {
      const char* i = static_cast<const char*>(ip) + b * in_plane * esz;
      char* o = static_cast<char*>(op) + b * out_plane * esz;
      if (dt == kByte) {
        const auto* a = reinterpret_cast<const uint8_t*>(i);
        auto* y = reinterpret_cast<uint8_t*>(o);
        if (wide) QPLUGIN_ISA_CALL(avg_pool2d_nchw_wide_u8, a, y, e - b, g);
        else QPLUGIN_ISA_CALL(avg_pool2d_nchw_u8, a, y, e - b, g);
      } else if (dt == kChar) {
        const auto* a = reinterpret_cast<const int8_t*>(i);
        auto* y = reinterpret_cast<int8_t*>(o);
        if (wide) QPLUGIN_ISA_CALL(avg_pool2d_nchw_wide_s8, a, y, e - b, g);
        else QPLUGIN_ISA_CALL(avg_pool2d_nchw_s8, a, y, e - b, g);
      } else {
        QPLUGIN_ISA_CALL(avg_pool2d_nchw_s32, reinterpret_cast<const int32_t*>(i), reinterpret_cast<int32_t*>(o), e - b,
                         g);
      }
    });
  }
}

ClassNums avg_nums(int64_t pooled, int64_t size, bool count_include_pad, std::optional<int64_t> divisor_override) {
  const int64_t div = divisor_override.has_value() ? *divisor_override : count_include_pad ? pooled : size;
  return {size, div, static_cast<float>(1.0 / static_cast<double>(div))};
}

}  // namespace

void check_divisor_override(const char* op, std::optional<int64_t> divisor_override) {
  QP_CHECK_VALUE(!divisor_override.has_value() || *divisor_override > 0, "qplugin::", op,
                 ": divisor_override should be a positive integer, got ", *divisor_override);
}

MemoryFormat pool_format(const Tensor& t) { return t.dim() == 4 ? kept_format(t) : MemoryFormat::Contiguous; }

void check_pool_input_rank(const char* op, const char* arg, const Tensor& t) {
  QP_CHECK_VALUE(t.dim() == 3 || t.dim() == 4, "qplugin::", op, ": ", arg,
                 " should be 3-D (C, H, W) or 4-D (N, C, H, W), got ", t.dim(), "-D with shape ", t.sizes());
}

Pool2dWindow check_pool2d_args(const char* op, IntArrayRef sizes, IntArrayRef kernel_size, IntArrayRef stride,
                               IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  const auto k = two_ints(op, "kernel_size", kernel_size, false, {0, 0});
  const auto s = two_ints(op, "stride", stride, true, k);
  const auto p = two_ints(op, "padding", padding, false, {0, 0});
  const auto dl = two_ints(op, "dilation", dilation, true, {1, 1});
  constexpr int64_t kMax = (int64_t(1) << 31) - 1;  // keeps window extents far from overflow
  for (int64_t v : {k.first, k.second, s.first, s.second, p.first, p.second, dl.first, dl.second}) {
    QP_CHECK_VALUE(v <= kMax, "qplugin::", op,
                   ": kernel_size, stride, padding and dilation should be at most 2^31 - 1, got ", v);
  }
  QP_CHECK_VALUE(k.first > 0 && k.second > 0, "qplugin::", op, ": kernel_size should be greater than zero, got ",
                 kernel_size);
  QP_CHECK_VALUE(s.first > 0 && s.second > 0, "qplugin::", op, ": stride should be greater than zero, got ", stride);
  QP_CHECK_VALUE(dl.first > 0 && dl.second > 0, "qplugin::", op, ": dilation should be greater than zero, got ",
                 dilation);
  QP_CHECK_VALUE(p.first >= 0 && p.second >= 0, "qplugin::", op, ": padding should be non-negative, got ", padding);
  QP_CHECK_VALUE(p.first <= k.first / 2 && p.second <= k.second / 2, "qplugin::", op,
                 ": padding should be at most half of kernel_size, got padding ", padding, " for kernel_size ",
                 kernel_size);
  (void)sizes;
  return {k.first, k.second, s.first, s.second, p.first, p.second, dl.first, dl.second, ceil_mode};
}

std::vector<int64_t> pool2d_output_sizes(const char* op, IntArrayRef sizes, const Pool2dWindow& w) {
  const Nchw d = nchw(sizes);
  // An empty H or W leaves every window in the padding (avg_pool2d would divide 0 by 0).
  QP_CHECK_VALUE(d.H >= 1 && d.W >= 1, "qplugin::", op, ": input should have non-empty spatial dims, got shape ",
                 sizes);
  const int64_t oh = pool_out_size(d.H, w.kH, w.pH, w.sH, w.dH, w.ceil_mode);
  const int64_t ow = pool_out_size(d.W, w.kW, w.pW, w.sW, w.dW, w.ceil_mode);
  QP_CHECK_VALUE(oh >= 1 && ow >= 1, "qplugin::", op, ": output size should be at least 1x1, got ", oh, "x", ow,
                 " for input ", sizes, " (kernel ", w.kH, "x", w.kW, ", stride ", w.sH, "x", w.sW, ", padding ", w.pH,
                 "x", w.pW, ", dilation ", w.dH, "x", w.dW, ")");
  auto out = with_spatial(sizes, oh, ow);
  check_output_size(op, out, 4);  // up to 4 bytes an element (qint32 / int32)
  return out;
}

std::vector<int64_t> adaptive_output_sizes(const char* op, IntArrayRef sizes, IntArrayRef output_size) {
  QP_CHECK_VALUE(output_size.size() == 2, "qplugin::", op, ": output_size should have 2 entries, got ",
                 output_size.size(), " (", output_size, ")");
  QP_CHECK_VALUE(output_size[0] >= 1 && output_size[1] >= 1, "qplugin::", op,
                 ": output_size should be at least 1x1, got ", output_size);
  const Nchw d = nchw(sizes);
  QP_CHECK_VALUE(d.H >= 1 && d.W >= 1, "qplugin::", op, ": input should have non-empty spatial dims, got shape ",
                 sizes);
  auto out = with_spatial(sizes, output_size[0], output_size[1]);
  check_output_size(op, out, 4);  // up to 4 bytes an element (qint32 / int32)
  return out;
}

void max_pool2d_int_out(const Tensor& data, const Pool2dWindow& w, const Tensor& out) {
  const MemoryFormat fmt = pool_format(data);
  const Tensor x = tensor::contiguous(data, fmt);
  const Nchw d = nchw(x.sizes());
  const int64_t OH = out.size(-2), OW = out.size(-1);
  if (out.numel() == 0) return;
  const kernels::MaxPool2dGeom g{d.H, d.W, OH, OW, w.kH, w.kW, w.sH, w.sW, w.pH, w.pW, w.dH, w.dW};
  const ScalarType dt = tensor::dtype(x);
  const void* ip = x.const_data_ptr();
  void* op = out.mutable_data_ptr();
  const int64_t esz = x.element_size();
  if (fmt == MemoryFormat::ChannelsLast) {
    for_nhwc(d, OH, OW * w.kH * w.kW, [&](int64_t n, int64_t c0, int64_t c1, int64_t oh0, int64_t oh1) {
      const char* i = static_cast<const char*>(ip) + n * d.H * d.W * d.C * esz;
      char* o = static_cast<char*>(op) + n * OH * OW * d.C * esz;
      if (dt == kByte) {
        QPLUGIN_ISA_CALL(max_pool2d_nhwc_u8, reinterpret_cast<const uint8_t*>(i), reinterpret_cast<uint8_t*>(o), d.C,
                         c0, c1, oh0, oh1, g);
      } else if (dt == kChar) {
        QPLUGIN_ISA_CALL(max_pool2d_nhwc_s8, reinterpret_cast<const int8_t*>(i), reinterpret_cast<int8_t*>(o), d.C, c0,
                         c1, oh0, oh1, g);
      } else {
        QPLUGIN_ISA_CALL(max_pool2d_nhwc_s32, reinterpret_cast<const int32_t*>(i), reinterpret_cast<int32_t*>(o), d.C,
                         c0, c1, oh0, oh1, g);
      }
    });
  } else {
    for_planes(d.N * d.C, d.H * d.W + OH * OW * w.kW, [&](int64_t b, int64_t e) {
      const char* i = static_cast<const char*>(ip) + b * d.H * d.W * esz;
      char* o = static_cast<char*>(op) + b * OH * OW * esz;
      if (dt == kByte) {
        QPLUGIN_ISA_CALL(max_pool2d_nchw_u8, reinterpret_cast<const uint8_t*>(i), reinterpret_cast<uint8_t*>(o), e - b,
                         g);
      } else if (dt == kChar) {
        QPLUGIN_ISA_CALL(max_pool2d_nchw_s8, reinterpret_cast<const int8_t*>(i), reinterpret_cast<int8_t*>(o), e - b,
                         g);
      } else {
        QPLUGIN_ISA_CALL(max_pool2d_nchw_s32, reinterpret_cast<const int32_t*>(i), reinterpret_cast<int32_t*>(o), e - b,
                         g);
      }
    });
  }
}

void avg_pool2d_int_out(const Tensor& data, int64_t zero_point, const Pool2dWindow& w, bool count_include_pad,
                        std::optional<int64_t> divisor_override, const Tensor& out) {
  const MemoryFormat fmt = pool_format(data);
  const Tensor x = tensor::contiguous(data, fmt);
  const Nchw d = nchw(x.sizes());
  const int64_t OH = out.size(-2), OW = out.size(-1);
  if (out.numel() == 0) return;
  AvgTables t;
  Win1d hw = avg_win1d(OH, w.kH, w.sH, w.pH, d.H), ww = avg_win1d(OW, w.kW, w.sW, w.pW, d.W);
  fill_tables(t, nullptr, hw, ww, zero_point, [&](auto, auto r, auto c) {
    return avg_nums(r.first * c.first, r.second * c.second, count_include_pad, divisor_override);
  });
  run_avg(x, out, d, fmt == MemoryFormat::ChannelsLast, 1, OH, OW, t);
}

void adaptive_avg_pool2d_int_out(const Tensor& data, const Tensor& out) {
  const MemoryFormat fmt = pool_format(data);
  const Tensor x = tensor::contiguous(data, fmt);
  const Nchw d = nchw(x.sizes());
  const int64_t OH = out.size(-2), OW = out.size(-1);
  if (out.numel() == 0) return;
  AvgTables t;
  Win1d hw = adaptive_win1d(OH, d.H), ww = adaptive_win1d(OW, d.W);
  fill_tables(t, nullptr, hw, ww, 0, [](auto, auto r, auto c) {
    const float rh = 1.0f / static_cast<float>(r.first);
    return ClassNums{r.first * c.first, r.first * c.first, rh / static_cast<float>(c.first)};
  });
  run_avg(x, out, d, fmt == MemoryFormat::ChannelsLast, 1, OH, OW, t);
}

// ---- 3-D average pooling: the same kernels with a depth window (pool_kernel.h) ----

MemoryFormat pool3d_format(const Tensor& t) { return t.dim() == 5 ? kept_format(t) : MemoryFormat::Contiguous; }

void check_pool3d_input_rank(const char* op, const char* arg, const Tensor& t) {
  QP_CHECK_VALUE(t.dim() == 4 || t.dim() == 5, "qplugin::", op, ": ", arg,
                 " should be 4-D (C, D, H, W) or 5-D (N, C, D, H, W), got ", t.dim(), "-D with shape ", t.sizes());
}

Pool3dWindow check_pool3d_args(const char* op, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                               bool ceil_mode) {
  auto three = [&](const char* arg, IntArrayRef v, bool empty_ok,
                   std::array<int64_t, 3> dflt) -> std::array<int64_t, 3> {
    if (v.empty() && empty_ok) return dflt;
    QP_CHECK_VALUE(v.size() == 1 || v.size() == 3, "qplugin::", op, ": ", arg, " should have ",
                   empty_ok ? "0, 1 or 3" : "1 or 3", " entries, got ", v.size(), " (", v, ")");
    return v.size() == 1 ? std::array<int64_t, 3>{v[0], v[0], v[0]} : std::array<int64_t, 3>{v[0], v[1], v[2]};
  };
  Pool3dWindow w;
  w.k = three("kernel_size", kernel_size, false, {0, 0, 0});
  w.s = three("stride", stride, true, w.k);
  w.p = three("padding", padding, false, {0, 0, 0});
  w.ceil_mode = ceil_mode;
  constexpr int64_t kMax = (int64_t(1) << 31) - 1;  // keeps window extents far from overflow
  for (int i = 0; i < 3; ++i) {
    for (int64_t v : {w.k[i], w.s[i], w.p[i]}) {
      QP_CHECK_VALUE(v <= kMax, "qplugin::", op, ": kernel_size, stride and padding should be at most 2^31 - 1, got ",
                     v);
    }
    QP_CHECK_VALUE(w.k[i] > 0, "qplugin::", op, ": kernel_size should be greater than zero, got ", kernel_size);
    QP_CHECK_VALUE(w.s[i] > 0, "qplugin::", op, ": stride should be greater than zero, got ", stride);
    QP_CHECK_VALUE(w.p[i] >= 0, "qplugin::", op, ": padding should be non-negative, got ", padding);
    QP_CHECK_VALUE(w.p[i] <= w.k[i] / 2, "qplugin::", op,
                   ": padding should be at most half of kernel_size, got padding ", padding, " for kernel_size ",
                   kernel_size);
  }
  return w;
}

std::vector<int64_t> pool3d_output_sizes(const char* op, IntArrayRef sizes, const Pool3dWindow& w) {
  const Nchw d = ncdhw(sizes);
  // An empty D, H or W leaves every window in the padding (0 / 0 with count_include_pad=False).
  QP_CHECK_VALUE(d.D >= 1 && d.H >= 1 && d.W >= 1, "qplugin::", op,
                 ": input should have non-empty spatial dims, got shape ", sizes);
  const int64_t in[3] = {d.D, d.H, d.W};
  int64_t o[3];
  for (int i = 0; i < 3; ++i) o[i] = pool_out_size(in[i], w.k[i], w.p[i], w.s[i], 1, w.ceil_mode);
  QP_CHECK_VALUE(o[0] >= 1 && o[1] >= 1 && o[2] >= 1, "qplugin::", op, ": output size should be at least 1x1x1, got ",
                 o[0], "x", o[1], "x", o[2], " for input ", sizes, " (kernel ", IntArrayRef(w.k), ", stride ",
                 IntArrayRef(w.s), ", padding ", IntArrayRef(w.p), ")");
  auto out = with_spatial3(sizes, o[0], o[1], o[2]);
  check_output_size(op, out, 4);  // up to 4 bytes an element (qint32 / int32)
  return out;
}

std::vector<int64_t> adaptive3d_output_sizes(const char* op, IntArrayRef sizes, IntArrayRef output_size) {
  QP_CHECK_VALUE(output_size.size() == 3, "qplugin::", op, ": output_size should have 3 entries, got ",
                 output_size.size(), " (", output_size, ")");
  QP_CHECK_VALUE(output_size[0] >= 1 && output_size[1] >= 1 && output_size[2] >= 1, "qplugin::", op,
                 ": output_size should be at least 1x1x1, got ", output_size);
  const Nchw d = ncdhw(sizes);
  QP_CHECK_VALUE(d.D >= 1 && d.H >= 1 && d.W >= 1, "qplugin::", op,
                 ": input should have non-empty spatial dims, got shape ", sizes);
  auto out = with_spatial3(sizes, output_size[0], output_size[1], output_size[2]);
  check_output_size(op, out, 4);  // up to 4 bytes an element (qint32 / int32)
  return out;
}

void avg_pool3d_int_out(const Tensor& data, int64_t zero_point, const Pool3dWindow& w, bool count_include_pad,
                        std::optional<int64_t> divisor_override, const Tensor& out) {
  const MemoryFormat fmt = pool3d_format(data);
  const Tensor x = tensor::contiguous(data, fmt);
  const Nchw d = ncdhw(x.sizes());
  const int64_t OD = out.size(-3), OH = out.size(-2), OW = out.size(-1);
  if (out.numel() == 0) return;
  AvgTables t;
  Win1d dw = avg_win1d(OD, w.k[0], w.s[0], w.p[0], d.D);
  Win1d hw = avg_win1d(OH, w.k[1], w.s[1], w.p[1], d.H), ww = avg_win1d(OW, w.k[2], w.s[2], w.p[2], d.W);
  fill_tables(t, &dw, hw, ww, zero_point, [&](auto dk, auto r, auto c) {
    return avg_nums(dk.first * r.first * c.first, dk.second * r.second * c.second, count_include_pad, divisor_override);
  });
  run_avg(x, out, d, fmt == MemoryFormat::ChannelsLast3d, OD, OH, OW, t);
}

void adaptive_avg_pool3d_int_out(const Tensor& data, const Tensor& out) {
  const MemoryFormat fmt = pool3d_format(data);
  const Tensor x = tensor::contiguous(data, fmt);
  const Nchw d = ncdhw(x.sizes());
  const int64_t OD = out.size(-3), OH = out.size(-2), OW = out.size(-1);
  if (out.numel() == 0) return;
  AvgTables t;
  Win1d dw = adaptive_win1d(OD, d.D), hw = adaptive_win1d(OH, d.H), ww = adaptive_win1d(OW, d.W);
  fill_tables(t, &dw, hw, ww, 0, [](auto dk, auto r, auto c) {
    const float m = 1.0f / static_cast<float>(dk.first) / static_cast<float>(r.first) / static_cast<float>(c.first);
    const int64_t size = dk.first * r.first * c.first;
    return ClassNums{size, size, m};
  });
  run_avg(x, out, d, fmt == MemoryFormat::ChannelsLast3d, OD, OH, OW, t);
}

Tensor max_pool2d_int(const Tensor& data, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                      IntArrayRef dilation, bool ceil_mode) {
  constexpr const char* op = "max_pool2d";
  check_int_data(op, data);
  check_pool_input_rank(op, "input", data);
  const Pool2dWindow w = check_pool2d_args(op, data.sizes(), kernel_size, stride, padding, dilation, ceil_mode);
  Tensor out = tensor::empty(pool2d_output_sizes(op, data.sizes(), w), tensor::dtype(data), pool_format(data));
  max_pool2d_int_out(data, w, out);
  return out;
}

Tensor avg_pool2d_int(const Tensor& data, int64_t zero_point, IntArrayRef kernel_size, IntArrayRef stride,
                      IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                      std::optional<int64_t> divisor_override) {
  constexpr const char* op = "avg_pool2d";
  check_int_data(op, data);
  check_pool_input_rank(op, "input", data);
  const Pool2dWindow w = check_pool2d_args(op, data.sizes(), kernel_size, stride, padding, {}, ceil_mode);
  check_divisor_override(op, divisor_override);
  Tensor out = tensor::empty(pool2d_output_sizes(op, data.sizes(), w), tensor::dtype(data), pool_format(data));
  avg_pool2d_int_out(data, zero_point, w, count_include_pad, divisor_override, out);
  return out;
}

Tensor adaptive_avg_pool2d_int(const Tensor& data, IntArrayRef output_size) {
  constexpr const char* op = "adaptive_avg_pool2d";
  check_int_data(op, data);
  check_pool_input_rank(op, "input", data);
  Tensor out =
      tensor::empty(adaptive_output_sizes(op, data.sizes(), output_size), tensor::dtype(data), pool_format(data));
  adaptive_avg_pool2d_int_out(data, out);
  return out;
}

}  // namespace cpu

}  // namespace qplugin
