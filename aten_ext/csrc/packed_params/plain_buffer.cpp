// The plain tier's packed buffers (see plain_buffer.h).
#include "packed_params/plain_buffer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "kernels/dispatch.h"
#include "kernels/gemm/qgemm.h"
#include "utils/checks.h"

namespace qplugin {
namespace plain_buffer {

namespace gemm = kernels::gemm;

namespace {

constexpr int64_t kAlign = 64;
constexpr int64_t kLinearSections = 4;
constexpr int64_t kSizeWord = 16, kChecksumWord = 17, kGeometryWord = 9;
const char* const kSectionNames[kLinearSections] = {"packed weight", "column sums", "zero points", "int16 weight"};

int64_t align_up(int64_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

constexpr uint64_t kFnvOffset = 14695981039346656037ull, kFnvPrime = 1099511628211ull;

uint64_t fnv(uint64_t h, uint64_t word) { return (h ^ word) * kFnvPrime; }

// FNV-1a over the 8-byte words of the buffer (word kChecksumWord read as 0), then the tail bytes.
// Each step is a bijection of the state, so any change of one word (or byte) changes the result.
int64_t checksum(const uint8_t* p, int64_t n) {
  uint64_t h = kFnvOffset;
  const int64_t words = n / 8;
  for (int64_t i = 0; i < words; ++i) {
    uint64_t w = 0;
    if (i != kChecksumWord) std::memcpy(&w, p + 8 * i, 8);
    h = fnv(h, w);
  }
  for (int64_t i = words * 8; i < n; ++i) h = fnv(h, p[i]);
  return static_cast<int64_t>(h);
}

void seal(at::Tensor& buf) {
  auto* base = buf.data_ptr<uint8_t>();
  int64_t* h = reinterpret_cast<int64_t*>(base);
  h[kSizeWord] = buf.numel();
  h[kChecksumWord] = checksum(base, buf.numel());
}

const char* kind_name(int64_t kind) {
  switch (kind) {
    case kLinear: return "linear";
    case kConv: return "conv";
    case kEmbedding: return "embedding";
    default: return "unknown";
  }
}

// The header of a buffer of format 1 or 2 (returned in *version); checks what every call can
// afford: dtype, shape, alignment, magic, version, kind and (format 2) the size word.
const int64_t* header(const char* op, const at::Tensor& buf, int64_t kind, int64_t* version) {
  TORCH_CHECK(buf.scalar_type() == at::kByte && buf.dim() == 1 && buf.is_contiguous(), "qplugin::", op,
              ": packed should be a contiguous 1-D uint8 tensor, got dtype ", buf.scalar_type(), " and shape ",
              buf.sizes());
  TORCH_CHECK_VALUE(buf.numel() >= kHeaderBytesV1, "qplugin::", op, ": packed should hold a ", kHeaderBytes,
                    "-byte header (", kHeaderBytesV1, " in format 1), got ", buf.numel(), " bytes");
  TORCH_CHECK_VALUE(reinterpret_cast<uintptr_t>(buf.const_data_ptr()) % 8 == 0, "qplugin::", op,
                    ": packed should be 8-byte aligned (a view at an odd offset?)");
  const int64_t* h = static_cast<const int64_t*>(buf.const_data_ptr());
  TORCH_CHECK_VALUE(h[0] == kMagic, "qplugin::", op, ": packed is not a qplugin packed buffer (magic ", h[0], ")");
  TORCH_CHECK_VALUE(h[1] == kVersion || h[1] == 1, "qplugin::", op, ": packed buffer format version should be 1 or ",
                    kVersion, ", got ", h[1]);
  TORCH_CHECK_VALUE(h[2] == kind, "qplugin::", op, ": packed should be ", kind == kEmbedding ? "an " : "a ",
                    kind_name(kind), " buffer, got kind ", h[2], " (", kind_name(h[2]), ")");
  *version = h[1];
  if (h[1] >= 2) {
    TORCH_CHECK_VALUE(buf.numel() >= kHeaderBytes, "qplugin::", op, ": packed should hold a ", kHeaderBytes,
                      "-byte header, got ", buf.numel(), " bytes");
    TORCH_CHECK_VALUE(h[kSizeWord] == buf.numel(), "qplugin::", op, ": packed should be ", h[kSizeWord],
                      " bytes long (its header's size), got ", buf.numel(), " bytes (truncated or damaged)");
  }
  return h;
}

void check_checksum(const char* op, const at::Tensor& buf, const int64_t* h) {
  TORCH_CHECK_VALUE(checksum(static_cast<const uint8_t*>(buf.const_data_ptr()), buf.numel()) == h[kChecksumWord],
                    "qplugin::", op, ": packed is damaged: its bytes do not match the checksum in its header");
}

// ---- which (buffer, arguments) pairs were checked in full ----
// A tensor's identity: its storage (held weakly: while the entry lives no other storage can take
// its address), data pointer and version counter (an in-place change bumps it; inference
// tensors have none: -1).
int64_t version_of(const at::Tensor& t) { return t.is_inference() ? -1 : t._version(); }

struct Key {
  const void* data = nullptr;
  int64_t version = 0;
};
Key key_of(const at::Tensor& t) {
  return {t.defined() ? t.const_data_ptr() : nullptr, t.defined() ? version_of(t) : 0};
}
bool operator==(const Key& a, const Key& b) { return a.data == b.data && a.version == b.version; }

struct Ident {
  c10::weak_intrusive_ptr<c10::StorageImpl> storage;
  Key key;
};
Ident ident_of(const at::Tensor& t) { return {t.storage().getWeakStorageImpl(), key_of(t)}; }
bool same(const Ident& i, const at::Tensor& t) {
  const auto alive = i.storage.lock();
  return alive && alive.get() == t.storage().unsafeGetStorageImpl() && i.key == key_of(t);
}

struct Checked {
  Ident buf;
  std::vector<Ident> args;
};
std::mutex checked_mu;
std::unordered_map<const c10::StorageImpl*, Checked> checked;

bool checked_before(const at::Tensor& buf, std::initializer_list<at::Tensor> args) {
  std::lock_guard<std::mutex> lock(checked_mu);
  const auto it = checked.find(buf.storage().unsafeGetStorageImpl());
  if (it == checked.end() || !same(it->second.buf, buf) || it->second.args.size() != args.size()) return false;
  size_t i = 0;
  for (const at::Tensor& a : args) {
    if (!same(it->second.args[i++], a)) return false;
  }
  return true;
}

void remember_checked(const at::Tensor& buf, std::initializer_list<at::Tensor> args) {
  Checked c{ident_of(buf), {}};
  for (const at::Tensor& a : args) c.args.push_back(ident_of(a));
  std::lock_guard<std::mutex> lock(checked_mu);
  for (auto it = checked.begin(); it != checked.end();) {  // drop entries whose tensors are gone
    bool gone = it->second.buf.storage.expired();
    for (const Ident& a : it->second.args) gone = gone || a.storage.expired();
    it = gone ? checked.erase(it) : std::next(it);
  }
  checked.insert_or_assign(buf.storage().unsafeGetStorageImpl(), std::move(c));
}

// What pack_linear writes for (w, scales, zero_points) on ISA path `isa`.
struct LinearSections {
  std::shared_ptr<LinearWeights> p;
  int64_t sizes[kLinearSections];
  const void* src[kLinearSections];
};

LinearSections linear_sections(const char* op, const at::Tensor& w, const at::Tensor& scales,
                               const at::Tensor& zero_points, kernels::Isa isa) {
  TORCH_CHECK(scales.defined() && zero_points.defined() && scales.dim() == 1 && zero_points.dim() == 1, "qplugin::", op,
              ": w_scales and w_zero_points should be 1-D tensors");
  const bool per_channel = !(scales.numel() == 1 && zero_points.numel() == 1 && w.dim() == 2 && w.size(0) != 1);
  LinearSections s;
  s.p = std::make_shared<LinearWeights>();
  s.p->init_int8(op, w, scales.to(at::kDouble), zero_points.to(at::kLong), per_channel || scales.numel() != 1,
                 c10::nullopt);
  const gemm::PackedB b = s.p->view(isa == kernels::Isa::kAvx2);
  const int64_t N = s.p->N, K = s.p->K;
  const int64_t sizes[kLinearSections] = {gemm::packed_b_bytes(K, N), gemm::padded_n(N) * 4, N * 4,
                                          b.data16 != nullptr ? gemm::packed_b16_elems(K, N) * 2 : 0};
  const void* src[kLinearSections] = {b.data, b.col_sums, s.p->w_zp.data(), b.data16};
  std::copy(sizes, sizes + kLinearSections, s.sizes);
  std::copy(src, src + kLinearSections, s.src);
  return s;
}

}  // namespace

at::Tensor pack_linear(const char* op, const at::Tensor& w, const at::Tensor& scales, const at::Tensor& zero_points) {
  const kernels::Isa isa = kernels::active_isa();
  const LinearSections s = linear_sections(op, w, scales, zero_points, isa);
  int64_t off[kLinearSections];
  int64_t end = kHeaderBytes;
  for (int64_t i = 0; i < kLinearSections; ++i) {
    off[i] = align_up(end);
    end = off[i] + s.sizes[i];
  }
  at::Tensor buf = at::zeros({end}, at::dtype(at::kByte));
  auto* base = buf.data_ptr<uint8_t>();
  int64_t* h = reinterpret_cast<int64_t*>(base);
  h[0] = kMagic;
  h[1] = kVersion;
  h[2] = kLinear;
  h[3] = static_cast<int64_t>(isa);
  h[4] = kLinearLayout;
  h[5] = s.p->N;
  h[6] = s.p->K;
  h[7] = s.p->w_zp_all_zero ? 1 : 0;
  for (int64_t i = 0; i < kLinearSections; ++i) {
    h[8 + 2 * i] = off[i];
    h[9 + 2 * i] = s.sizes[i];
    if (s.sizes[i] > 0) std::memcpy(base + off[i], s.src[i], static_cast<size_t>(s.sizes[i]));
  }
  seal(buf);
  return buf;
}

bool view_linear(const char* op, const at::Tensor& buf, const at::Tensor& w, const at::Tensor& scales,
                 const at::Tensor& zero_points, cpu::LinearWeightsView* out) {
  const int64_t N = w.size(0), K = w.size(1);
  int64_t version = 0;
  const int64_t* h = header(op, buf, kLinear, &version);
  TORCH_CHECK_VALUE(h[5] == N && h[6] == K, "qplugin::", op, ": packed should hold a [", N, ", ", K,
                    "] weight (w's shape), got [", h[5], ", ", h[6], "]");
  const kernels::Isa isa = kernels::active_isa();
  bool ours = h[3] == static_cast<int64_t>(isa) && h[4] == kLinearLayout;
  const bool want16 = isa == kernels::Isa::kAvx2 && N * K > 0;
  const int64_t sizes[kLinearSections] = {gemm::packed_b_bytes(K, N), gemm::padded_n(N) * 4, N * 4,
                                          want16 ? gemm::packed_b16_elems(K, N) * 2 : 0};
  const int64_t header_bytes = version >= 2 ? kHeaderBytes : kHeaderBytesV1;
  for (int64_t i = 0; i < kLinearSections; ++i) {
    const int64_t o = h[8 + 2 * i], n = h[9 + 2 * i];
    TORCH_CHECK_VALUE(o >= header_bytes && o % kAlign == 0 && n >= 0 && o <= buf.numel() && n <= buf.numel() - o,
                      "qplugin::", op, ": packed section ", i, " (offset ", o, ", ", n,
                      " bytes) lies outside the buffer of ", buf.numel(), " bytes");
    ours = ours && n == sizes[i];  // otherwise this build packs differently: never read these bytes
  }
  const auto* base = static_cast<const uint8_t*>(buf.const_data_ptr());
  if (!checked_before(buf, {w, scales, zero_points})) {
    if (version >= 2) check_checksum(op, buf, h);
    if (ours) {  // the sections and the flag against a fresh packing of the op's arguments
      const LinearSections s = linear_sections(op, w, scales, zero_points, isa);
      TORCH_CHECK_VALUE(h[7] == (s.p->w_zp_all_zero ? 1 : 0), "qplugin::", op,
                        ": packed was not made from these w_zero_points (its all-zero flag is ", h[7],
                        "); repack with plain_linear_prepack(w, w_scales, w_zero_points)");
      for (int64_t i = 0; i < kLinearSections; ++i) {
        TORCH_CHECK_VALUE(s.sizes[i] == sizes[i] && (sizes[i] == 0 || std::memcmp(base + h[8 + 2 * i], s.src[i],
                                                                                  static_cast<size_t>(sizes[i])) == 0),
                          "qplugin::", op, ": packed was not made from these w / w_zero_points (its ", kSectionNames[i],
                          " differ); repack with plain_linear_prepack(w, w_scales, w_zero_points)");
      }
    }
    remember_checked(buf, {w, scales, zero_points});
  }
  if (!ours) return false;
  out->b.data = reinterpret_cast<const int8_t*>(base + h[8]);
  out->b.col_sums = reinterpret_cast<const int32_t*>(base + h[10]);
  out->w_zp = reinterpret_cast<const int32_t*>(base + h[12]);
  out->b.data16 = want16 ? reinterpret_cast<const int16_t*>(base + h[14]) : nullptr;
  out->b.N = N;
  out->b.K = K;
  out->w_zp_all_zero = h[7] != 0;
  return true;
}

void check_fp16_panels(const char* op, const char* packed_arg, const at::Tensor& packed, const char* w_arg,
                       const at::Tensor& w) {
  if (checked_before(packed, {w})) return;
  const auto p = std::make_shared<LinearWeights>();
  p->init_fp16(op, w, c10::nullopt);
  TORCH_CHECK_VALUE(static_cast<int64_t>(p->fp16_panels.size()) == packed.numel() &&
                        std::equal(p->fp16_panels.begin(), p->fp16_panels.end(),
                                   reinterpret_cast<const uint16_t*>(packed.const_data_ptr<at::Half>())),
                    "qplugin::", op, ": ", packed_arg, " should be plain_linear_prepack_fp16(", w_arg,
                    "), got panels that differ from it (made from another weight, or damaged)");
  remember_checked(packed, {w});
}

namespace {

int64_t geometry_hash(const ConvWeights& p) {
  uint64_t h = kFnvOffset;
  for (int64_t v : {p.KD, p.KH, p.KW, p.SD, p.SH, p.SW, p.PD, p.PH, p.PW, p.DD, p.DH, p.DW}) {
    h = fnv(h, static_cast<uint64_t>(v));
  }
  for (int64_t v : p.output_padding) h = fnv(h, static_cast<uint64_t>(v));
  return static_cast<int64_t>(h);
}

}  // namespace

at::Tensor pack_conv(const char* op, const std::string& kind, const at::Tensor& w, const at::Tensor& scales,
                     const at::Tensor& zero_points, const c10::optional<at::Tensor>& bias, at::IntArrayRef stride,
                     at::IntArrayRef padding, at::IntArrayRef dilation, int64_t groups,
                     at::IntArrayRef output_padding) {
  const bool transposed = is_conv_transpose_kind(kind);
  const auto p = transposed  // validates
                     ? conv_transpose_prepack_int(op, kind, w, scales, zero_points, bias, stride, padding,
                                                  output_padding, dilation, groups)
                     : conv_prepack_int(op, kind, w, scales, zero_points, bias, stride, padding, dilation, groups);
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
  h[kGeometryWord] = geometry_hash(*p);
  seal(buf);
  return buf;
}

void check_conv(const char* op, const at::Tensor& buf, const at::Tensor& w, int64_t groups, bool transposed) {
  int64_t version = 0;
  const int64_t* h = header(op, buf, kConv, &version);
  if (version >= 2) check_checksum(op, buf, h);  // the header only: 24 words
  TORCH_CHECK_VALUE(h[8] == (transposed ? 1 : 0), "qplugin::", op, ": packed should come from ",
                    transposed ? "plain_conv_transpose_prepack" : "plain_conv_prepack", ", got the buffer of ",
                    h[8] == 1 ? "a transposed conv" : "a conv");
  TORCH_CHECK_VALUE(w.dim() >= 2 && h[5] == w.size(0) && h[6] == w.size(1) && h[7] == groups, "qplugin::", op,
                    ": packed should describe a weight of ", h[5], " x ", h[6], " channels in ", h[7],
                    " groups, got weight of shape ", w.sizes(), " and groups ", groups);
}

void check_conv_geometry(const char* op, const at::Tensor& buf, const ConvWeights& p) {
  const int64_t* h = static_cast<const int64_t*>(buf.const_data_ptr());  // check_conv read the header
  TORCH_CHECK_VALUE(h[1] < 2 || h[kGeometryWord] == geometry_hash(p), "qplugin::", op,
                    ": packed was made for another kernel geometry (kernel size, stride, padding, dilation or "
                    "output_padding) than the op's w and arguments; repack with the op's arguments");
}

at::Tensor pack_embedding(const char* op, const at::Tensor& fused_rows, int64_t bits) {
  TORCH_CHECK_VALUE(bits == 8 || bits == 4, "qplugin::", op, ": bits should be 8 or 4, got ", bits);
  TORCH_CHECK_VALUE(fused_rows.scalar_type() == at::kByte && fused_rows.dim() == 2 && fused_rows.size(1) >= 8,
                    "qplugin::", op,
                    ": fused_rows should be a 2-D uint8 tensor [rows, D + 8] (codes, float32 scale, "
                    "float32 bias a row: embedding_bag_byte_prepack's layout), got dtype ",
                    fused_rows.scalar_type(), " of shape ", fused_rows.sizes());
  const at::Tensor rows = fused_rows.contiguous();
  const int64_t n = rows.size(0), cols = rows.size(1), D = cols - 8;
  const uint8_t* src = rows.const_data_ptr<uint8_t>();
  for (int64_t r = 0; r < n; ++r) {
    const uint8_t* row = src + r * cols;
    float scale = 0.f, bias = 0.f;
    std::memcpy(&scale, row + D, 4);
    std::memcpy(&bias, row + D + 4, 4);
    check_scale(op, "fused_rows", scale, " (a row's scale)");
    TORCH_CHECK_VALUE(std::isfinite(bias), "qplugin::", op, ": fused_rows should hold finite row biases, got ", bias,
                      " in row ", r);
    if (bits == 4) {
      const uint8_t* big = std::find_if(row, row + D, [](uint8_t c) {
        return c > 15;
      });
      TORCH_CHECK_VALUE(big == row + D, "qplugin::", op, ": a 4-bit table's codes should be below 16, got ",
                        static_cast<int>(big == row + D ? 0 : *big), " in row ", r);
    }
  }
  const int64_t bytes = n * cols;
  at::Tensor buf = at::zeros({kHeaderBytes + bytes}, at::dtype(at::kByte));
  auto* base = buf.data_ptr<uint8_t>();
  int64_t* h = reinterpret_cast<int64_t*>(base);
  h[0] = kMagic;
  h[1] = kVersion;
  h[2] = kEmbedding;
  h[5] = n;
  h[6] = D;
  h[7] = bits;
  h[8] = kHeaderBytes;
  h[9] = bytes;
  if (bytes > 0) std::memcpy(base + kHeaderBytes, src, static_cast<size_t>(bytes));
  seal(buf);
  return buf;
}

at::Tensor view_embedding(const char* op, const at::Tensor& buf) {
  int64_t version = 0;
  const int64_t* h = header(op, buf, kEmbedding, &version);
  TORCH_CHECK_VALUE(version >= 2, "qplugin::", op, ": an embedding buffer should have format version ", kVersion,
                    ", got ", version);
  const int64_t n = h[5], D = h[6], bits = h[7];
  TORCH_CHECK_VALUE(bits == 8 || bits == 4, "qplugin::", op, ": packed should hold 8- or 4-bit codes, got bits ", bits);
  TORCH_CHECK_VALUE(n >= 0 && D >= 0 && D <= (std::numeric_limits<int64_t>::max() - 8) / 2 && h[8] == kHeaderBytes &&
                        (n == 0 || (D + 8) <= (buf.numel() - kHeaderBytes) / n) && h[9] == n * (D + 8) &&
                        h[9] == buf.numel() - kHeaderBytes,
                    "qplugin::", op, ": packed's rows (", n, " of ", D, " codes, ", h[9], " bytes at offset ", h[8],
                    ") do not fill the buffer of ", buf.numel(), " bytes");
  if (!checked_before(buf, {})) {
    check_checksum(op, buf, h);
    remember_checked(buf, {});
  }
  return buf.narrow(0, kHeaderBytes, h[9]).view({n, D + 8});
}

namespace {

struct Entry {
  c10::weak_intrusive_ptr<c10::StorageImpl> storage;
  std::string kind;
  Key w, s, z, b;
  std::vector<int64_t> geom;
  std::shared_ptr<ConvWeights> params;
};

std::mutex cache_mu;
std::unordered_map<const c10::StorageImpl*, Entry> cache;

}  // namespace

std::shared_ptr<ConvWeights> conv_params(const char* op, const std::string& kind, const at::Tensor& w,
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

}  // namespace plain_buffer
}  // namespace qplugin
