// The plain tier's packed buffers (see plain_buffer.h).
#include "packed_params/plain_buffer.h"

#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "kernels/dispatch.h"
#include "kernels/gemm/qgemm.h"
#include "packed_params/linear_packed_params.h"

namespace qplugin {
namespace plain_buffer {

namespace gemm = kernels::gemm;

namespace {

constexpr int64_t kAlign = 64;
constexpr int64_t kLinearSections = 4;

int64_t align_up(int64_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

const int64_t* header(const char* op, const at::Tensor& buf, int64_t kind) {
  TORCH_CHECK(buf.scalar_type() == at::kByte && buf.dim() == 1 && buf.is_contiguous(), "qplugin::", op,
              ": packed should be a contiguous 1-D uint8 tensor, got dtype ", buf.scalar_type(), " and shape ",
              buf.sizes());
  TORCH_CHECK_VALUE(buf.numel() >= kHeaderBytes, "qplugin::", op, ": packed should hold a ", kHeaderBytes,
                    "-byte header, got ", buf.numel(), " bytes");
  TORCH_CHECK_VALUE(reinterpret_cast<uintptr_t>(buf.const_data_ptr()) % 8 == 0, "qplugin::", op,
                    ": packed should be 8-byte aligned (a view at an odd offset?)");
  const int64_t* h = static_cast<const int64_t*>(buf.const_data_ptr());
  TORCH_CHECK_VALUE(h[0] == kMagic, "qplugin::", op, ": packed is not a qplugin packed buffer (magic ", h[0], ")");
  TORCH_CHECK_VALUE(h[1] == kVersion, "qplugin::", op, ": packed buffer format version should be ", kVersion,
                    ", got ", h[1]);
  TORCH_CHECK_VALUE(h[2] == kind, "qplugin::", op, ": packed should be a ", kind == kLinear ? "linear" : "conv",
                    " buffer, got kind ", h[2]);
  return h;
}

} // namespace

at::Tensor pack_linear(const char* op, const at::Tensor& w, const at::Tensor& scales,
                       const at::Tensor& zero_points) {
  TORCH_CHECK(scales.defined() && zero_points.defined() && scales.dim() == 1 && zero_points.dim() == 1,
              "qplugin::", op, ": w_scales and w_zero_points should be 1-D tensors");
  const bool per_channel = !(scales.numel() == 1 && zero_points.numel() == 1 && w.dim() == 2 && w.size(0) != 1);
  const auto p = LinearPackedParams::create(op, w, scales.to(at::kDouble), zero_points.to(at::kLong),
                                            per_channel || scales.numel() != 1, c10::nullopt);
  const kernels::Isa isa = kernels::active_isa();
  const gemm::PackedB b = p->view(isa == kernels::Isa::kAvx2);
  const int64_t N = p->N, K = p->K;
  const int64_t sizes[kLinearSections] = {
      gemm::packed_b_bytes(K, N), gemm::padded_n(N) * 4, N * 4,
      b.data16 != nullptr ? gemm::packed_b16_elems(K, N) * 2 : 0};
  const void* src[kLinearSections] = {b.data, b.col_sums, p->w_zp.data(), b.data16};
  int64_t off[kLinearSections];
  int64_t end = kHeaderBytes;
  for (int64_t i = 0; i < kLinearSections; ++i) {
    off[i] = align_up(end);
    end = off[i] + sizes[i];
  }
  at::Tensor buf = at::zeros({end}, at::dtype(at::kByte));
  auto* base = buf.data_ptr<uint8_t>();
  int64_t* h = reinterpret_cast<int64_t*>(base);
  h[0] = kMagic;
  h[1] = kVersion;
  h[2] = kLinear;
  h[3] = static_cast<int64_t>(isa);
  h[4] = kLinearLayout;
  h[5] = N;
  h[6] = K;
  h[7] = p->w_zp_all_zero ? 1 : 0;
  for (int64_t i = 0; i < kLinearSections; ++i) {
    h[8 + 2 * i] = off[i];
    h[9 + 2 * i] = sizes[i];
    if (sizes[i] > 0) std::memcpy(base + off[i], src[i], static_cast<size_t>(sizes[i]));
  }
  return buf;
}

bool view_linear(const char* op, const at::Tensor& buf, int64_t N, int64_t K, cpu::LinearWeightsView* out) {
  const int64_t* h = header(op, buf, kLinear);
  TORCH_CHECK_VALUE(h[5] == N && h[6] == K, "qplugin::", op, ": packed should hold a [", N, ", ", K,
                    "] weight (w's shape), got [", h[5], ", ", h[6], "]");
  const kernels::Isa isa = kernels::active_isa();
  if (h[3] != static_cast<int64_t>(isa) || h[4] != kLinearLayout) return false;
  const bool want16 = isa == kernels::Isa::kAvx2 && N * K > 0;
  const int64_t sizes[kLinearSections] = {gemm::packed_b_bytes(K, N), gemm::padded_n(N) * 4, N * 4,
                                          want16 ? gemm::packed_b16_elems(K, N) * 2 : 0};
  const auto* base = static_cast<const uint8_t*>(buf.const_data_ptr());
  for (int64_t i = 0; i < kLinearSections; ++i) {
    const int64_t o = h[8 + 2 * i], n = h[9 + 2 * i];
    if (n != sizes[i]) return false;  // this build packs differently: never read these bytes
    TORCH_CHECK_VALUE(o >= kHeaderBytes && o % kAlign == 0 && o <= buf.numel() && n <= buf.numel() - o,
                      "qplugin::", op, ": packed section ", i, " (offset ", o, ", ", n,
                      " bytes) lies outside the buffer of ", buf.numel(), " bytes");
  }
  out->b.data = reinterpret_cast<const int8_t*>(base + h[8]);
  out->b.col_sums = reinterpret_cast<const int32_t*>(base + h[10]);
  out->w_zp = reinterpret_cast<const int32_t*>(base + h[12]);
  out->b.data16 = want16 ? reinterpret_cast<const int16_t*>(base + h[14]) : nullptr;
  out->b.N = N;
  out->b.K = K;
  out->w_zp_all_zero = h[7] != 0;
  return true;
}

at::Tensor pack_conv(const char* op, const std::string& kind, const at::Tensor& w, const at::Tensor& scales,
                     const at::Tensor& zero_points, const c10::optional<at::Tensor>& bias, at::IntArrayRef stride,
                     at::IntArrayRef padding, at::IntArrayRef dilation, int64_t groups,
                     at::IntArrayRef output_padding) {
  const bool transposed = is_conv_transpose_kind(kind);
  if (transposed) {  // validates
    conv_transpose_prepack_int(op, kind, w, scales, zero_points, bias, stride, padding, output_padding, dilation,
                               groups);
  } else {
    conv_prepack_int(op, kind, w, scales, zero_points, bias, stride, padding, dilation, groups);
  }
  at::Tensor buf = at::zeros({kHeaderBytes}, at::dtype(at::kByte));
  int64_t* h = reinterpret_cast<int64_t*>(buf.data_ptr<uint8_t>());
  h[0] = kMagic;
  h[1] = kVersion;
  h[2] = kConv;
  h[3] = static_cast<int64_t>(kernels::active_isa());
  h[4] = 0;
  h[5] = w.size(0);
  h[6] = w.size(1);
  h[7] = groups;
  h[8] = transposed ? 1 : 0;  // 0 in buffers written before transposed conv existed
  return buf;
}

void check_conv(const char* op, const at::Tensor& buf, const at::Tensor& w, int64_t groups, bool transposed) {
  const int64_t* h = header(op, buf, kConv);
  TORCH_CHECK_VALUE(h[8] == (transposed ? 1 : 0), "qplugin::", op, ": packed should come from ",
                    transposed ? "plain_conv_transpose_prepack" : "plain_conv_prepack", ", got the buffer of ",
                    h[8] == 1 ? "a transposed conv" : "a conv");
  TORCH_CHECK_VALUE(w.dim() >= 2 && h[5] == w.size(0) && h[6] == w.size(1) && h[7] == groups, "qplugin::", op,
                    ": packed should describe a weight of ", h[5], " x ", h[6], " channels in ", h[7],
                    " groups, got weight of shape ", w.sizes(), " and groups ", groups);
}

namespace {

int64_t version_of(const at::Tensor& t) { return t.is_inference() ? -1 : t._version(); }

struct Key {
  const void* data = nullptr;
  int64_t version = 0;
};
Key key_of(const at::Tensor& t) { return {t.defined() ? t.const_data_ptr() : nullptr, t.defined() ? version_of(t) : 0}; }
bool operator==(const Key& a, const Key& b) { return a.data == b.data && a.version == b.version; }

struct Entry {
  c10::weak_intrusive_ptr<c10::StorageImpl> storage;
  std::string kind;
  Key w, s, z, b;
  std::vector<int64_t> geom;
  std::shared_ptr<ConvPackedParams> params;
};

std::mutex cache_mu;
std::unordered_map<const c10::StorageImpl*, Entry> cache;

} // namespace

std::shared_ptr<ConvPackedParams> conv_params(const char* op, const std::string& kind, const at::Tensor& w,
                                              const at::Tensor& scales, const at::Tensor& zero_points,
                                              const c10::optional<at::Tensor>& bias, at::IntArrayRef stride,
                                              at::IntArrayRef padding, at::IntArrayRef dilation, int64_t groups,
                                              at::IntArrayRef output_padding) {
  std::vector<int64_t> geom(stride.begin(), stride.end());
  geom.insert(geom.end(), output_padding.begin(), output_padding.end());
  geom.insert(geom.end(), padding.begin(), padding.end());
  geom.insert(geom.end(), dilation.begin(), dilation.end());
  geom.push_back(groups);
  geom.insert(geom.end(), w.sizes().begin(), w.sizes().end());
  geom.insert(geom.end(), w.strides().begin(), w.strides().end());
  const at::Tensor b = bias.has_value() ? *bias : at::Tensor();
  const Key kw = key_of(w), ks = key_of(scales), kz = key_of(zero_points), kb = key_of(b);
  const c10::StorageImpl* sid = w.storage().unsafeGetStorageImpl();
  {
    std::lock_guard<std::mutex> lock(cache_mu);
    auto it = cache.find(sid);
    if (it != cache.end()) {
      const Entry& e = it->second;
      // a live storage at this address is the same storage (the weak pointer keeps a freed one's
      // control block, so a new storage at the same address is told apart)
      const auto alive = e.storage.lock();
      if (alive && alive.get() == sid && e.kind == kind && e.w == kw && e.s == ks && e.z == kz && e.b == kb &&
          e.geom == geom) {
        return e.params;
      }
    }
  }
  auto params = is_conv_transpose_kind(kind)
                    ? conv_transpose_prepack_int(op, kind, w, scales, zero_points, bias, stride, padding,
                                                 output_padding, dilation, groups)
                    : conv_prepack_int(op, kind, w, scales, zero_points, bias, stride, padding, dilation, groups);
  std::lock_guard<std::mutex> lock(cache_mu);
  // drop entries whose weights are gone
  for (auto it = cache.begin(); it != cache.end();) {
    it = it->second.storage.expired() ? cache.erase(it) : std::next(it);
  }
  cache.insert_or_assign(sid, Entry{w.storage().getWeakStorageImpl(), kind, kw, ks, kz, kb, std::move(geom), params});
  return params;
}

} // namespace plain_buffer
} // namespace qplugin
