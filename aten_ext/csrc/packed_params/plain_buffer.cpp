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

void seal(Tensor& buf) {
  auto* base = tensor::mutable_data<uint8_t>(buf);
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
const int64_t* header(const char* op, const Tensor& buf, int64_t kind, int64_t* version) {
  QP_CHECK(tensor::dtype(buf) == kByte && buf.dim() == 1 && buf.is_contiguous(), "qplugin::", op,
           ": packed should be a contiguous 1-D uint8 tensor, got dtype ", tensor::dtype(buf), " and shape ",
           buf.sizes());
  const int64_t nbytes = buf.numel();
  QP_CHECK_VALUE(nbytes >= kHeaderBytesV1, "qplugin::", op, ": packed should hold a ", kHeaderBytes, "-byte header (",
                 kHeaderBytesV1, " in format 1), got ", nbytes, " bytes");
  const void* data = buf.const_data_ptr();
  QP_CHECK_VALUE(reinterpret_cast<uintptr_t>(data) % 8 == 0, "qplugin::", op,
                 ": packed should be 8-byte aligned (a view at an odd offset?)");
  const int64_t* h = static_cast<const int64_t*>(data);
  QP_CHECK_VALUE(h[0] == kMagic, "qplugin::", op, ": packed is not a qplugin packed buffer (magic ", h[0], ")");
  QP_CHECK_VALUE(h[1] == kVersion || h[1] == 1, "qplugin::", op, ": packed buffer format version should be 1 or ",
                 kVersion, ", got ", h[1]);
  QP_CHECK_VALUE(h[2] == kind, "qplugin::", op, ": packed should be ", kind == kEmbedding ? "an " : "a ",
                 kind_name(kind), " buffer, got kind ", h[2], " (", kind_name(h[2]), ")");
  *version = h[1];
  if (h[1] >= 2) {
    QP_CHECK_VALUE(nbytes >= kHeaderBytes, "qplugin::", op, ": packed should hold a ", kHeaderBytes,
                   "-byte header, got ", nbytes, " bytes");
    QP_CHECK_VALUE(h[kSizeWord] == nbytes, "qplugin::", op, ": packed should be ", h[kSizeWord],
                   " bytes long (its header's size), got ", nbytes, " bytes (truncated or damaged)");
  }
  return h;
}

void check_checksum(const char* op, const Tensor& buf, const int64_t* h) {
  QP_CHECK_VALUE(checksum(static_cast<const uint8_t*>(buf.const_data_ptr()), buf.numel()) == h[kChecksumWord],
                 "qplugin::", op, ": packed is damaged: its bytes do not match the checksum in its header");
}

// ---- which (buffer, arguments) pairs were checked in full ----
#ifdef QPLUGIN_STABLE_ABI
// A tensor's identity on the stable ABI, which has no storage identity: its data pointer, the size
// of its storage, its element count and dtype, and then
//  * a tensor of at most kContentBytes (dense): its bytes, compared whole on every call (exact, and
//    cheaper than a version read);
//  * a larger one: its first kHeaderBytes and last 64 bytes, kept and compared (a buffer's first
//    bytes are its header, whose checksum word covers the rest), and its version counter (an
//    in-place change bumps it; inference tensors have none). A tensor freed and another made at its
//    address passes as the same only with the same size, leading and trailing bytes and version.
//    The version is a boxed dispatcher call (aten::_version) a call; whether the tensor is an
//    inference tensor (which has no version to read) is asked once, when it is recorded.
constexpr int64_t kContentBytes = 4096;
constexpr int64_t kTailBytes = 64;
// What is read of a tensor without a dispatcher call, each accessor once.
struct Probe {
  const uint8_t* data = nullptr;
  int64_t nbytes = 0;  // of its storage
  int64_t numel = 0;
  int32_t dtype = 0;
  int64_t dense = -1;  // its bytes when dense, else -1
};
Probe probe(const Tensor& t) {
  Probe p{static_cast<const uint8_t*>(t.const_data_ptr()), tensor::storage_nbytes(t), t.numel(), tensor::dtype_code(t),
          -1};
  if (t.is_contiguous()) p.dense = p.numel * tensor::element_size_of_code(p.dtype);
  return p;
}
bool by_content(const Probe& p) { return p.dense >= 0 && p.dense <= kContentBytes; }
// The bytes a larger tensor is kept by: [0, head) and [tail, end) of its dense bytes (none when it
// is not dense).
struct Edges {
  int64_t head, tail, end;
};
Edges edges_of(const Probe& p) {
  const int64_t n = std::max<int64_t>(p.dense, 0);
  const int64_t head = std::min(n, kHeaderBytes);
  return {head, std::max(head, n - kTailBytes), n};
}
struct Ident {
  bool defined = false;
  Probe p;
  std::vector<uint8_t> content;  // by_content(p): the tensor's bytes; otherwise its edges' bytes
  bool inference = false;
  int64_t version = 0;
};
Ident ident_of(const Tensor& t) {
  Ident i;
  if (!t.defined()) return i;
  i.defined = true;
  i.p = probe(t);
  if (by_content(i.p)) {
    i.content.assign(i.p.data, i.p.data + i.p.dense);
    return i;
  }
  const Edges e = edges_of(i.p);
  i.content.assign(i.p.data, i.p.data + e.head);
  i.content.insert(i.content.end(), i.p.data + e.tail, i.p.data + e.end);
  const std::optional<int64_t> v = tensor::version(t);
  i.inference = !v.has_value();
  i.version = v.value_or(-1);
  return i;
}
bool same(const Ident& i, const Tensor& t) {
  if (!t.defined() || !i.defined) return !t.defined() && !i.defined;
  const Probe p = probe(t);
  if (i.p.data != p.data || i.p.numel != p.numel || i.p.dtype != p.dtype || i.p.nbytes != p.nbytes ||
      i.p.dense != p.dense) {
    return false;
  }
  if (by_content(p)) return i.content.empty() || std::memcmp(i.content.data(), p.data, i.content.size()) == 0;
  const Edges e = edges_of(p);
  const auto* kept = i.content.data();
  if (std::memcmp(kept, p.data, static_cast<size_t>(e.head)) != 0 ||
      std::memcmp(kept + e.head, p.data + e.tail, static_cast<size_t>(e.end - e.tail)) != 0) {
    return false;
  }
  if (i.inference) return true;
  try {
    return tensor::detail::call<int64_t>("aten::_version", "", t) == i.version;
  } catch (const std::exception&) {  // an inference tensor now at this address: not the one recorded
    return false;
  }
}
bool expired(const Ident&) { return false; }
size_t held_bytes(const Ident& i) { return i.content.size(); }
using StorageKey = const void*;
StorageKey storage_key(const Tensor& t) { return t.const_data_ptr(); }
// Nothing tells a freed tensor: the record is bounded instead (cleared when it would grow past
// this many entries or content bytes).
constexpr size_t kMaxChecked = 4096;
constexpr size_t kMaxCheckedBytes = size_t{64} << 20;
#else
// A tensor's identity: its storage (held weakly: while the entry lives no other storage can take
// its address), data pointer and version counter (an in-place change bumps it; inference
// tensors have none: -1).
struct Key {
  const void* data = nullptr;
  int64_t version = 0;
};
Key key_of(const Tensor& t) {
  return {t.defined() ? t.const_data_ptr() : nullptr, t.defined() ? tensor::version(t).value_or(-1) : 0};
}
bool operator==(const Key& a, const Key& b) { return a.data == b.data && a.version == b.version; }

struct Ident {
  c10::weak_intrusive_ptr<c10::StorageImpl> storage;
  Key key;
};
Ident ident_of(const Tensor& t) { return {t.storage().getWeakStorageImpl(), key_of(t)}; }
bool same(const Ident& i, const Tensor& t) {
  const auto alive = i.storage.lock();
  return alive && alive.get() == t.storage().unsafeGetStorageImpl() && i.key == key_of(t);
}
bool expired(const Ident& i) { return i.storage.expired(); }
size_t held_bytes(const Ident&) { return 0; }
using StorageKey = const c10::StorageImpl*;
StorageKey storage_key(const Tensor& t) { return t.storage().unsafeGetStorageImpl(); }
constexpr size_t kMaxChecked = std::numeric_limits<size_t>::max();
constexpr size_t kMaxCheckedBytes = std::numeric_limits<size_t>::max();
#endif

struct Checked {
  Ident buf;
  std::vector<Ident> args;
};
size_t held_bytes(const Checked& c) {
  size_t n = held_bytes(c.buf);
  for (const Ident& a : c.args) n += held_bytes(a);
  return n;
}
std::mutex checked_mu;
std::unordered_map<StorageKey, Checked> checked;
size_t checked_bytes = 0;  // held_bytes over the record

bool checked_before(const Tensor& buf, std::initializer_list<Tensor> args) {
  std::lock_guard<std::mutex> lock(checked_mu);
  const auto it = checked.find(storage_key(buf));
  if (it == checked.end() || !same(it->second.buf, buf) || it->second.args.size() != args.size()) return false;
  size_t i = 0;
  for (const Tensor& a : args) {
    if (!same(it->second.args[i++], a)) return false;
  }
  return true;
}

void remember_checked(const Tensor& buf, std::initializer_list<Tensor> args) {
  Checked c{ident_of(buf), {}};
  for (const Tensor& a : args) c.args.push_back(ident_of(a));
  std::lock_guard<std::mutex> lock(checked_mu);
  const auto drop = [](auto it) {
    checked_bytes -= held_bytes(it->second);
    return checked.erase(it);
  };
  for (auto it = checked.begin(); it != checked.end();) {  // drop entries whose tensors are gone
    bool gone = expired(it->second.buf);
    for (const Ident& a : it->second.args) gone = gone || expired(a);
    it = gone ? drop(it) : std::next(it);
  }
  if (const auto it = checked.find(storage_key(buf)); it != checked.end()) drop(it);
  const size_t bytes = held_bytes(c);
  if (checked.size() >= kMaxChecked || checked_bytes + bytes > kMaxCheckedBytes) {
    checked.clear();
    checked_bytes = 0;
  }
  checked_bytes += bytes;
  checked.emplace(storage_key(buf), std::move(c));
}

// What pack_linear writes for (w, scales, zero_points) on ISA path `isa`.
struct LinearSections {
  std::shared_ptr<LinearWeights> p;
  int64_t sizes[kLinearSections];
  const void* src[kLinearSections];
};

LinearSections linear_sections(const char* op, const Tensor& w, const Tensor& scales, const Tensor& zero_points,
                               kernels::Isa isa) {
  QP_CHECK(scales.defined() && zero_points.defined() && scales.dim() == 1 && zero_points.dim() == 1, "qplugin::", op,
           ": w_scales and w_zero_points should be 1-D tensors");
  const bool per_channel = !(scales.numel() == 1 && zero_points.numel() == 1 && w.dim() == 2 && w.size(0) != 1);
  LinearSections s;
  s.p = std::make_shared<LinearWeights>();
  s.p->init_int8(op, w, tensor::to(scales, kDouble), tensor::to(zero_points, kLong), per_channel || scales.numel() != 1,
                 std::nullopt);
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

Tensor pack_linear(const char* op, const Tensor& w, const Tensor& scales, const Tensor& zero_points) {
  const kernels::Isa isa = kernels::active_isa();
  const LinearSections s = linear_sections(op, w, scales, zero_points, isa);
  int64_t off[kLinearSections];
  int64_t end = kHeaderBytes;
  for (int64_t i = 0; i < kLinearSections; ++i) {
    off[i] = align_up(end);
    end = off[i] + s.sizes[i];
  }
  Tensor buf = tensor::zeros(std::vector<int64_t>{end}, kByte);
  auto* base = tensor::mutable_data<uint8_t>(buf);
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

bool weights_checked(const Tensor& buf, const Tensor& w, const Tensor& scales, const Tensor& zero_points) {
  return checked_before(buf, {w, scales, zero_points});
}

bool view_linear(const char* op, const Tensor& buf, const Tensor& w, const Tensor& scales, const Tensor& zero_points,
                 bool checked, cpu::LinearWeightsView* out) {
  const int64_t N = w.size(0), K = w.size(1);
  int64_t version = 0;
  const int64_t* h = header(op, buf, kLinear, &version);
  QP_CHECK_VALUE(h[5] == N && h[6] == K, "qplugin::", op, ": packed should hold a [", N, ", ", K,
                 "] weight (w's shape), got [", h[5], ", ", h[6], "]");
  const kernels::Isa isa = kernels::active_isa();
  bool ours = h[3] == static_cast<int64_t>(isa) && h[4] == kLinearLayout;
  const bool want16 = isa == kernels::Isa::kAvx2 && N * K > 0;
  const int64_t sizes[kLinearSections] = {gemm::packed_b_bytes(K, N), gemm::padded_n(N) * 4, N * 4,
                                          want16 ? gemm::packed_b16_elems(K, N) * 2 : 0};
  const int64_t header_bytes = version >= 2 ? kHeaderBytes : kHeaderBytesV1;
  const int64_t nbytes = buf.numel();
  for (int64_t i = 0; i < kLinearSections; ++i) {
    const int64_t o = h[8 + 2 * i], n = h[9 + 2 * i];
    QP_CHECK_VALUE(o >= header_bytes && o % kAlign == 0 && n >= 0 && o <= nbytes && n <= nbytes - o, "qplugin::", op,
                   ": packed section ", i, " (offset ", o, ", ", n, " bytes) lies outside the buffer of ", nbytes,
                   " bytes");
    ours = ours && n == sizes[i];  // otherwise this build packs differently: never read these bytes
  }
  const auto* base = static_cast<const uint8_t*>(buf.const_data_ptr());
  if (!checked) {
    if (version >= 2) check_checksum(op, buf, h);
    if (ours) {  // the sections and the flag against a fresh packing of the op's arguments
      const LinearSections s = linear_sections(op, w, scales, zero_points, isa);
      QP_CHECK_VALUE(h[7] == (s.p->w_zp_all_zero ? 1 : 0), "qplugin::", op,
                     ": packed was not made from these w_zero_points (its all-zero flag is ", h[7],
                     "); repack with plain_linear_prepack(w, w_scales, w_zero_points)");
      for (int64_t i = 0; i < kLinearSections; ++i) {
        QP_CHECK_VALUE(s.sizes[i] == sizes[i] && (sizes[i] == 0 || std::memcmp(base + h[8 + 2 * i], s.src[i],
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

void check_fp16_panels(const char* op, const char* packed_arg, const Tensor& packed, const char* w_arg,
                       const Tensor& w) {
  if (checked_before(packed, {w})) return;
  const auto p = std::make_shared<LinearWeights>();
  p->init_fp16(op, w, std::nullopt);
  QP_CHECK_VALUE(static_cast<int64_t>(p->fp16_panels.size()) == packed.numel() &&
                     std::equal(p->fp16_panels.begin(), p->fp16_panels.end(),
                                reinterpret_cast<const uint16_t*>(tensor::data<Half>(packed))),
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

namespace {

// Conv header words past the common ones: [4] layout (kConvLayout: sections follow; 0: header
// only), [5] / [6] weight dims 0 / 1, [7] groups, [8] transposed, [kGeometryWord] geometry hash,
// [10] int16 copies present (packed on the avx2 path), [11] the path of the depthwise layout
// plus 1 (0: none or not filled), [12] stem-conv row layout present, [13] the depthwise
// layout's bytes. The size of the buffer depends on the shapes, geometry and path alone, so that
// the fake prepack can tell it (torch_qplugin/_fakes.py).
constexpr int64_t kInt16Word = 10, kDwPathWord = 11, kRowsWord = 12, kDwBytesWord = 13;

// The sections of a conv buffer, in order, for conv p (described) and the header's flags; each
// starts at a 64-byte aligned offset. Conv: per group the packed int8 weight, its column sums
// and (int16 flag) its int16 copy, then the stem-conv row layout's int8 and column sums (empty
// unless the rows flag is set). Depthwise: dw, then the depthwise layout. Transposed: per
// (group, kd, kh) int8 / column sums / int16, then tzp.
struct ConvLayout {
  std::vector<int64_t> bytes;
  std::vector<const char*> names;
  std::vector<int64_t> offsets;
  int64_t end = kHeaderBytes;
};

ConvLayout conv_layout(const ConvWeights& p, bool int16, bool rows, int64_t dw_bytes) {
  ConvLayout l;
  auto gemm_b = [&](int64_t K, int64_t N, bool with16) {
    l.bytes.push_back(gemm::packed_b_bytes(K, N));
    l.bytes.push_back(gemm::padded_n(N) * 4);
    l.bytes.push_back(with16 ? gemm::packed_b16_elems(K, N) * 2 : 0);
    l.names.insert(l.names.end(), {"packed weight", "column sums", "int16 weight"});
  };
  if (p.transpose) {
    const int64_t OCg = p.OC / p.groups;
    for (int64_t i = 0; i < p.groups * p.KD * p.KH; ++i) gemm_b(p.ICg, p.KW * OCg, int16);
    l.bytes.push_back(p.groups * p.KW * OCg * 4);
    l.names.push_back("zero points");
  } else if (p.depthwise) {
    l.bytes.push_back(p.KD * p.KH * p.KW * p.OC * 4);
    l.bytes.push_back(dw_bytes);
    l.names.insert(l.names.end(), {"depthwise weight", "depthwise layout"});
  } else {
    for (int64_t g = 0; g < p.groups; ++g) gemm_b(p.K, p.OC / p.groups, int16);
    l.bytes.push_back(rows ? gemm::packed_b_bytes(p.K4, p.OC) : 0);
    l.bytes.push_back(rows ? gemm::padded_n(p.OC) * 4 : 0);
    l.names.insert(l.names.end(), {"stem-conv row weight", "stem-conv row column sums"});
  }
  for (int64_t n : l.bytes) {
    l.offsets.push_back(align_up(l.end));
    l.end = l.offsets.back() + n;
  }
  return l;
}

// Where each section's bytes come from in a ConvWeights built from the same arguments (made
// for the header's flags: `dwp` the depthwise layout of the path recorded, or nullptr).
std::vector<const void*> conv_sources(ConvWeights& p, bool int16, bool rows, const int32_t* dwp) {
  std::vector<const void*> src;
  auto gemm_b = [&](const kernels::gemm::PackedWeight& w) {
    const gemm::PackedB b = w.view(int16);
    src.push_back(b.data);
    src.push_back(b.col_sums);
    src.push_back(b.data16);
  };
  if (p.transpose) {
    for (const auto& t : p.tpacked) gemm_b(*t);
    src.push_back(p.tzp.data());
  } else if (p.depthwise) {
    src.push_back(p.dw.data());
    src.push_back(dwp);
  } else {
    for (const auto& g : p.packed) gemm_b(*g);
    const gemm::PackedB r = rows ? p.packed_rows().view() : gemm::PackedB{};
    src.push_back(r.data);
    src.push_back(r.col_sums);
  }
  return src;
}

// The bytes of path `isa`'s depthwise layout of p (0 where the path has none): a function of
// the shapes alone, so that the buffer's size is too (the layout is left zero where the weights
// do not fit it).
int64_t dw_layout_bytes(const ConvWeights& p, kernels::Isa isa) {
  return p.depthwise ? QPLUGIN_ISA_CALL_ON(isa, conv_depthwise_packed_size, p.KD * p.KH, p.KW, p.OC) * 4 : 0;
}

}  // namespace

Tensor pack_conv(const char* op, const std::string& kind, const Tensor& w, const Tensor& scales,
                 const Tensor& zero_points, const std::optional<Tensor>& bias, IntArrayRef stride, IntArrayRef padding,
                 IntArrayRef dilation, int64_t groups, IntArrayRef output_padding) {
  const auto p =  // validates
      conv_prepack_int_of_kind(op, kind, w, scales, zero_points, bias, stride, padding, output_padding, dilation,
                               groups);
  const kernels::Isa isa = kernels::active_isa();
  const bool int16 = isa == kernels::Isa::kAvx2;
  const bool rows = conv_has_rows(*p);
  const int64_t dw_bytes = dw_layout_bytes(*p, isa);
  const int32_t* dwp = dw_bytes > 0 ? p->dw_packed(isa) : nullptr;
  const ConvLayout l = conv_layout(*p, int16, rows, dw_bytes);
  const std::vector<const void*> src = conv_sources(*p, int16, rows, dwp);
  Tensor buf = tensor::zeros(std::vector<int64_t>{l.end}, kByte);
  auto* base = tensor::mutable_data<uint8_t>(buf);
  int64_t* h = reinterpret_cast<int64_t*>(base);
  h[0] = kMagic;
  h[1] = kVersion;
  h[2] = kConv;
  h[3] = static_cast<int64_t>(isa);
  h[4] = kConvLayout;
  h[5] = w.size(0);
  h[6] = w.size(1);
  h[7] = groups;
  h[8] = p->transpose ? 1 : 0;
  h[kGeometryWord] = geometry_hash(*p);
  h[kInt16Word] = int16 ? 1 : 0;
  h[kDwPathWord] = dwp != nullptr ? static_cast<int64_t>(isa) + 1 : 0;
  h[kRowsWord] = rows ? 1 : 0;
  h[kDwBytesWord] = dw_bytes;
  for (size_t i = 0; i < l.bytes.size(); ++i) {
    if (l.bytes[i] > 0 && src[i] != nullptr) std::memcpy(base + l.offsets[i], src[i], static_cast<size_t>(l.bytes[i]));
  }
  seal(buf);
  return buf;
}

void check_conv(const char* op, const Tensor& buf, const Tensor& w, int64_t groups, bool transposed) {
  int64_t version = 0;
  const int64_t* h = header(op, buf, kConv, &version);
  QP_CHECK_VALUE(h[8] == (transposed ? 1 : 0), "qplugin::", op, ": packed should come from ",
                 transposed ? "plain_conv_transpose_prepack" : "plain_conv_prepack", ", got the buffer of ",
                 h[8] == 1 ? "a transposed conv" : "a conv");
  QP_CHECK_VALUE(w.dim() >= 2 && h[5] == w.size(0) && h[6] == w.size(1) && h[7] == groups, "qplugin::", op,
                 ": packed should describe a weight of ", h[5], " x ", h[6], " channels in ", h[7],
                 " groups, got weight of shape ", w.sizes(), " and groups ", groups);
}

void check_conv_geometry(const char* op, const Tensor& buf, const ConvWeights& p) {
  const int64_t* h = static_cast<const int64_t*>(buf.const_data_ptr());  // check_conv read the header
  QP_CHECK_VALUE(h[1] < 2 || h[kGeometryWord] == geometry_hash(p), "qplugin::", op,
                 ": packed was made for another kernel geometry (kernel size, stride, padding, dilation or "
                 "output_padding) than the op's w and arguments; repack with the op's arguments");
}

bool view_conv(const char* op, const Tensor& buf, const ConvWeights& p, const Tensor& w, const Tensor& scales,
               const Tensor& zero_points, kernels::Isa path, bool checked, ConvPackedView* out) {
  const int64_t* h = static_cast<const int64_t*>(buf.const_data_ptr());  // check_conv read the header
  const int64_t version = h[1];
  if (version < 2 || h[4] == 0) {  // a header without sections (older builds): never damaged past it
    if (version >= 2 && !checked_before(buf, {})) {
      check_checksum(op, buf, h);
      remember_checked(buf, {});
    }
    return false;
  }
  QP_CHECK_VALUE(h[4] == kConvLayout && (h[kInt16Word] == 0 || h[kInt16Word] == 1) &&
                     (h[kRowsWord] == 0 || h[kRowsWord] == 1) && h[kDwPathWord] >= 0 &&
                     h[kDwPathWord] <= kernels::kNumIsas && h[kDwBytesWord] >= 0 && h[kDwBytesWord] <= buf.numel() &&
                     (h[kDwPathWord] == 0 || h[kDwBytesWord] > 0) && (h[kDwBytesWord] == 0 || p.depthwise) &&
                     h[kRowsWord] == (conv_has_rows(p) ? 1 : 0),
                 "qplugin::", op, ": packed has a conv layout this build does not read (layout ", h[4],
                 "); repack with the op's arguments");
  const bool int16 = h[kInt16Word] == 1, rows = h[kRowsWord] == 1;
  const ConvLayout l = conv_layout(p, int16, rows, h[kDwBytesWord]);
  QP_CHECK_VALUE(l.end == buf.numel(), "qplugin::", op, ": packed should be ", l.end,
                 " bytes long for this conv's layouts, got ", buf.numel(), " bytes");
  const bool dw_ours = h[kDwPathWord] == static_cast<int64_t>(path) + 1;
  const auto* base = static_cast<const uint8_t*>(buf.const_data_ptr());
  if (!checked) {
    check_checksum(op, buf, h);
    // the sections this path reads against a fresh packing of the op's arguments (the depthwise
    // layout of another path is never read, so never compared)
    const auto fresh = conv_prepack_int_of_kind(op, p.kind, w, scales, zero_points, std::nullopt, p.stride, p.padding,
                                                p.output_padding, p.dilation, p.groups);
    const int32_t* dwp = dw_ours ? fresh->dw_packed(path) : nullptr;
    QP_CHECK_VALUE(!dw_ours || (dwp != nullptr && dw_layout_bytes(*fresh, path) == h[kDwBytesWord]), "qplugin::", op,
                   ": packed was not made from these w / w_zero_points (its depthwise layout differs); repack "
                   "with the op's arguments");
    const std::vector<const void*> src = conv_sources(*fresh, int16, rows, dwp);
    for (size_t i = 0; i < l.bytes.size(); ++i) {
      if (l.bytes[i] == 0 || (p.depthwise && i == 1 && !dw_ours)) continue;
      QP_CHECK_VALUE(std::memcmp(base + l.offsets[i], src[i], static_cast<size_t>(l.bytes[i])) == 0, "qplugin::", op,
                     ": packed was not made from these w / w_zero_points (its ", l.names[i],
                     " differs); repack with the op's arguments");
    }
    remember_checked(buf, {w, scales, zero_points});
  }
  // the avx2 path's conv GEMM reads the int16 copies (its im2col rows are int16)
  const bool with16 = path == kernels::Isa::kAvx2 && !p.depthwise;
  if (with16 && !int16) return false;
  ConvPackedView v;
  v.isa = path;
  auto gemm_b = [&](size_t i, int64_t K, int64_t N) {
    gemm::PackedB b;
    b.data = reinterpret_cast<const int8_t*>(base + l.offsets[i]);
    b.col_sums = reinterpret_cast<const int32_t*>(base + l.offsets[i + 1]);
    b.data16 = with16 ? reinterpret_cast<const int16_t*>(base + l.offsets[i + 2]) : nullptr;
    b.K = K;
    b.N = N;
    return b;
  };
  const int64_t n = static_cast<int64_t>(l.bytes.size());
  if (p.transpose) {
    for (int64_t i = 0; i + 1 < n; i += 3) v.b.push_back(gemm_b(i, p.ICg, p.KW * (p.OC / p.groups)));
    v.tzp = reinterpret_cast<const int32_t*>(base + l.offsets[n - 1]);
  } else if (p.depthwise) {
    v.dw = reinterpret_cast<const int32_t*>(base + l.offsets[0]);
    v.dw_packed = dw_ours ? reinterpret_cast<const int32_t*>(base + l.offsets[1]) : nullptr;
  } else {
    for (int64_t i = 0; i + 2 < n; i += 3) v.b.push_back(gemm_b(i, p.K, p.OC / p.groups));
    if (conv_reads_rows(p, path)) {
      if (!rows) return false;
      v.rows.data = reinterpret_cast<const int8_t*>(base + l.offsets[n - 2]);
      v.rows.col_sums = reinterpret_cast<const int32_t*>(base + l.offsets[n - 1]);
      v.rows.K = p.K4;
      v.rows.N = p.OC;
    }
  }
  *out = std::move(v);
  return true;
}

Tensor pack_embedding(const char* op, const Tensor& fused_rows, int64_t bits) {
  QP_CHECK_VALUE(bits == 8 || bits == 4, "qplugin::", op, ": bits should be 8 or 4, got ", bits);
  QP_CHECK_VALUE(tensor::dtype(fused_rows) == kByte && fused_rows.dim() == 2 && fused_rows.size(1) >= 8,
                 "qplugin::", op,
                 ": fused_rows should be a 2-D uint8 tensor [rows, D + 8] (codes, float32 scale, "
                 "float32 bias a row: embedding_bag_byte_prepack's layout), got dtype ",
                 tensor::dtype(fused_rows), " of shape ", fused_rows.sizes());
  const Tensor rows = tensor::contiguous(fused_rows);
  const int64_t n = rows.size(0), cols = rows.size(1), D = cols - 8;
  const uint8_t* src = tensor::data<uint8_t>(rows);
  for (int64_t r = 0; r < n; ++r) {
    const uint8_t* row = src + r * cols;
    float scale = 0.f, bias = 0.f;
    std::memcpy(&scale, row + D, 4);
    std::memcpy(&bias, row + D + 4, 4);
    check_scale(op, "fused_rows", scale, " (a row's scale)");
    QP_CHECK_VALUE(std::isfinite(bias), "qplugin::", op, ": fused_rows should hold finite row biases, got ", bias,
                   " in row ", r);
    if (bits == 4) {
      const uint8_t* big = std::find_if(row, row + D, [](uint8_t c) {
        return c > 15;
      });
      QP_CHECK_VALUE(big == row + D, "qplugin::", op, ": a 4-bit table's codes should be below 16, got ",
                     static_cast<int>(big == row + D ? 0 : *big), " in row ", r);
    }
  }
  const int64_t bytes = n * cols;
  Tensor buf = tensor::zeros(std::vector<int64_t>{kHeaderBytes + bytes}, kByte);
  auto* base = tensor::mutable_data<uint8_t>(buf);
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

EmbeddingRows view_embedding(const char* op, const Tensor& buf) {
  int64_t version = 0;
  const int64_t* h = header(op, buf, kEmbedding, &version);
  QP_CHECK_VALUE(version >= 2, "qplugin::", op, ": an embedding buffer should have format version ", kVersion, ", got ",
                 version);
  const int64_t n = h[5], D = h[6], bits = h[7];
  QP_CHECK_VALUE(bits == 8 || bits == 4, "qplugin::", op, ": packed should hold 8- or 4-bit codes, got bits ", bits);
  QP_CHECK_VALUE(n >= 0 && D >= 0 && D <= (std::numeric_limits<int64_t>::max() - 8) / 2 && h[8] == kHeaderBytes &&
                     (n == 0 || (D + 8) <= (buf.numel() - kHeaderBytes) / n) && h[9] == n * (D + 8) &&
                     h[9] == buf.numel() - kHeaderBytes,
                 "qplugin::", op, ": packed's rows (", n, " of ", D, " codes, ", h[9], " bytes at offset ", h[8],
                 ") do not fill the buffer of ", buf.numel(), " bytes");
  if (!checked_before(buf, {})) {
    check_checksum(op, buf, h);
    remember_checked(buf, {});
  }
  return {tensor::data<uint8_t>(buf) + kHeaderBytes, n, D};
}

}  // namespace plain_buffer
}  // namespace qplugin
