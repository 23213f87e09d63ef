// The int8 GEMM engine: u8 x s8 -> s32 GEMM with a fused requantize / dequantize epilogue.
// Raw pointers only, no ATen types. Who uses what (docs/design/gemm.md):
//  - PackedWeight / PackedB: the packed weight of linear (LinearPackedParams) and of every conv
//    group (ConvWeights), one layout family for all: the int8 quad layout + the AVX2 int16 copy.
//  - the driver (kernels/gemm/driver.h: blocking, at::parallel_for, scratch buffers) runs every
//    GEMM-shaped op in blocks: linear, linear_dynamic and the RNN layers (qgemm()), conv
//    (dense, im2col or indirect A) and conv_transpose (kS32 blocks + col2im).
//  - qgemm_block (tiles + epilogue of one block): the driver's blocks of dense rows, im2col rows
//    (AVX2: already int16, a16) or in-place 1x1 rows, with conv2d_add's residual (add). On
//    AVX-512 it picks the tiles: kU8 blocks with every b_zp 0, K % 4 == 0,
//    K <= 512 and 2+ rows on the register tiles (requantized from the registers), the rest on
//    the asm tiles (accumulators through memory to the epilogue).
//  - qgemm_block_indirect (AVX-512, AVX-VNNI, the aarch64 tiers): the same block with A given by address (IndirectA:
//  row
//    pointers + tap offsets; on AVX-512 also a tap subset and scattered output rows), conv's
//    indirect path (no im2col); same epilogue.
//  - kS32 output: int32 out (the transposed conv's col2im blocks).
//
//   C[m][n] = sum_k (A[m][k] - a_zp) * (B[n][k] - b_zp[n])        (exact, int32)
//
// computed as  sum_k A*B - a_zp*colsum[n] - b_zp[n]*rowsum[m] + K*a_zp*b_zp[n]
// with int32 wrap-around arithmetic: the result is exact whenever the true C
// fits in int32, which holds for K <= kMaxK (255 * 255 * K < 2^31).
//
// No 16-bit intermediate anywhere: the AVX-512 path uses VNNI vpdpbusd
// (u8 x s8 -> s32, non-saturating), the AVX-VNNI path the same instruction on
// ymm (VEX: 6 x 16 tiles for 3+ rows, 1-2 x 48 for fewer, cache-blocked in
// row chunks and K chunks), the AVX2 path widens both operands to
// int16 and uses vpmaddwd (int16 pairs -> int32; |255 * 128| * 2 < 2^31): 6 x 16
// tiles on the int16 layout (PackedB::data16) for 4+ rows, in-loop widening of
// the int8 bytes for fewer; the scalar path is the plain definition. On aarch64
// (kernels/gemm/tile_neon.h) the i8mm path uses SUDOT (u8 x s8), the dotprod path SDOT and the
// neon path SMULL + SADALP (s8 x s8 -> s16 products, summed in pairs into s32) on A - 128, whose
// a_zp * colsum term then uses a_zp - 128. All paths give identical C.
//
// Epilogues (per output element, n-th column):
//   kU8 : v = float(C) * multiplier[n] + bias[n] (+ float(add[m][n] - add_zp) * add_mult)
//         y = requantize(v, out_zero_point, out_min, out_max)          -> uint8
//           = clamp(round_half_even(v) + out_zero_point, out_min, out_max) (kernels/gemm/requant.h)
//         (multiplier[n] = a_scale * b_scale[n] / y_scale, bias[n] = bias_f[n] / y_scale,
//          both rounded to float once; the residual term only for conv2d_add)
//   kF32: y = max(float(C) * multiplier[n] + bias[n], out_fmin)       -> float
//         (multiplier[n] = a_scale * b_scale[n], bias[n] = bias_f[n]; out_fmin = 0 for relu,
//          -inf otherwise)
//   kS32: y = C                                                       -> int32
// bias may be nullptr (zero).
//
// Packed B layout (pack_b): columns (output channels) in panels of kPanelN = 16;
// within a panel, K in quads of 4: for quad q, 64 bytes hold column j's
// B[n0 + j][4q .. 4q + 3] at bytes 4j .. 4j + 3. K is padded with zeros to a
// multiple of 4 and N to a multiple of 16. col_sums[n] = sum_k B[n][k] (raw int8
// values) for n < N (0 for padding). Every ISA path reads this layout; the AVX2
// path also reads the int16 copy (pack_b16) when the caller provides it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "kernels/isa.h"

namespace qplugin {
namespace kernels {
namespace gemm {

constexpr int64_t kPanelN = 16;
constexpr int64_t kQuadK = 4;
// Largest K for which every C is exact in int32 for any operands.
constexpr int64_t kMaxK = 33025;

inline int64_t padded_k(int64_t K) { return (K + kQuadK - 1) / kQuadK * kQuadK; }
inline int64_t padded_n(int64_t N) { return (N + kPanelN - 1) / kPanelN * kPanelN; }
// Bytes of packed data for a K x N weight.
inline int64_t packed_b_bytes(int64_t K, int64_t N) { return padded_k(K) * padded_n(N); }

// The AVX2 int16 layout (kernels/gemm/tile_i16_avx2.h), built from the packed bytes:
// panels of kPanelN columns, K padded to even; in panel P, k-pair p: column j's
// (B[2p][j], B[2p+1][j]) at int16 offsets P * padded_k2(K) * 16 + 32p + 2j (+1).
inline int64_t padded_k2(int64_t K) { return (K + 1) / 2 * 2; }
inline int64_t packed_b16_elems(int64_t K, int64_t N) { return padded_k2(K) * padded_n(N); }

// A packed weight (does not own its memory).
struct PackedB {
  const int8_t* data = nullptr;       // packed_b_bytes(K, N) bytes
  const int32_t* col_sums = nullptr;  // padded_n(N) entries
  // The same weight in the int16 layout (packed_b16_elems(K, N)), or nullptr: the AVX2 path
  // uses it for row blocks of kI16MinM rows or more; without it (or for fewer rows) it
  // widens the int8 bytes in its loop.
  const int16_t* data16 = nullptr;
  int64_t K = 0;
  int64_t N = 0;
};
// Rows from which the AVX2 path runs its int16 register tiles (when data16 is present).
constexpr int64_t kI16MinM = 4;

// The engine's packed weight, owning its memory: the int8 quad layout above (read by every
// ISA path) and, built on first request, the AVX2 int16 layout (pack_b16). Held by linear
// (LinearPackedParams) and conv (ConvWeights, one per group and for the stem-conv row
// layout). Thread safety: pack() runs once, at construction of the owner; the int16 layout is
// built inside a std::call_once and never changed afterwards, so concurrent first view(true)
// calls are safe and every caller reads the same bytes.
class PackedWeight {
 public:
  PackedWeight() = default;
  PackedWeight(const PackedWeight&) = delete;
  PackedWeight& operator=(const PackedWeight&) = delete;
  // Packs B[n][k] = w[n * stride_n + k * stride_k] (n < N, k < K).
  void pack(const int8_t* w, int64_t stride_n, int64_t stride_k, int64_t K, int64_t N);
  // The GEMM's view; with_int16 adds the int16 layout (built here on the first such call).
  PackedB view(bool with_int16 = false) const;
  int64_t K() const { return K_; }
  int64_t N() const { return N_; }
  // Bytes of the int8 layout and the column sums (not the int16 copy: it is built lazily).
  int64_t nbytes() const;

 private:
  int64_t K_ = 0, N_ = 0;
  std::vector<int8_t> data_;
  std::vector<int32_t> col_sums_;
  mutable std::once_flag once16_;
  mutable std::vector<int16_t> data16_;
};

// Packs B[n][k] = w[n * stride_n + k * stride_k] (n < N, k < K) into `out`
// (packed_b_bytes(K, N) bytes) and fills col_sums (padded_n(N) entries).
void pack_b(const int8_t* w, int64_t stride_n, int64_t stride_k, int64_t K, int64_t N, int8_t* out, int32_t* col_sums);
// Reads back B[n][k] from a packed weight into w[n * K + k] (dense N x K).
void unpack_b(const PackedB& b, int8_t* w);
// Fills out (packed_b16_elems(b.K, b.N) int16) with b's int16 layout (see padded_k2).
void pack_b16(const PackedB& b, int16_t* out);

// The groups of a grouped conv with 8 input and output channels each (an even count), one packed
// B each (bs, K = ntaps * 8), in the layout qgemm_block_groups' k4 tiles read: per 16-channel
// block of input channels (groups 2 cb and 2 cb + 1) and tap, 2 vectors of 16 lanes x 4 bytes,
// lane 4 m + i holding, against the block's input dword i (quad i % 2 of group i / 2 of the
// block), that group's weights of output channel 4 h + m (vector h). So one 16-byte broadcast of
// a pixel's block feeds both vectors; the two lanes of a group and output sum to it.
// ngroups * 64 * ntaps bytes.
void pack_groups_k4(const PackedB* bs, int64_t ngroups, int64_t ntaps, int8_t* out);

enum class OutKind : int { kU8 = 0, kF32 = 1, kS32 = 2 };

struct QGemmParams {
  int64_t M = 0;
  const uint8_t* a = nullptr;  // A[m][k] at a[m * lda + k]
  int64_t lda = 0;
  // Instead of a (AVX2 path only, with b->data16 present): A already widened to int16, A[m][k]
  // at a16[m * lda + k] for k < padded_k2(K), zero for k >= K (conv's AVX2 im2col rows).
  const int16_t* a16 = nullptr;
  int32_t a_zero_point = 0;
  const PackedB* b = nullptr;
  const int32_t* b_zero_points = nullptr;  // N entries
  bool b_zero_points_all_zero = true;      // lets the kernel skip row sums
  const float* multipliers = nullptr;      // N entries (kU8, kF32)
  const float* bias = nullptr;             // N entries or nullptr (kU8, kF32)
  OutKind kind = OutKind::kU8;
  void* out = nullptr;  // element (m, n) at out[m * ldc + n] (elements of the output type)
  int64_t ldc = 0;
  int32_t out_zero_point = 0;          // kU8
  int32_t out_min = 0;                 // kU8 clamp, e.g. 0 (or out_zero_point for relu)
  int32_t out_max = 255;               // kU8 clamp
  float out_fmin = -__builtin_inff();  // kF32 lower clamp (0 for relu)
  // kU8 residual (conv2d_add): v += float(add[m * ld_add + n] - add_zp) * add_mult after the
  // bias, before the requantize step; nullptr: none.
  const uint8_t* add = nullptr;
  int64_t ld_add = 0;
  int32_t add_zp = 0;
  float add_mult = 0.0f;
};

// A given by address (conv's indirect A side, no im2col): row m of A is the concatenation over
// taps t < ntaps of seg bytes at rows[m - m0] + tap_off[t] (m0: the block's first row), so
// K = ntaps * seg must equal b->K, with seg % 4 == 0.
// A subset of the taps against the matching K ranges of B, written to scattered output rows
// (conv's padded taps skipped; only where qgemm_indirect_selects()): with tap_b, tap t is
// multiplied by B's K range [tap_b[t] * seg, (tap_b[t] + 1) * seg) and any ntaps >= 1 works;
// with out_rows, row m writes output (and reads residual) row out_rows[m - m0] (units of ldc /
// ld_add from p.out / p.add) instead of row m. nullptr: taps 0 .. ntaps - 1 in order, K =
// ntaps * seg; row m at row m.
struct IndirectA {
  const uint8_t* const* rows = nullptr;  // one pointer per row of the block
  const int64_t* tap_off = nullptr;      // ntaps byte offsets
  int64_t ntaps = 0;
  int64_t seg = 0;
  const int64_t* out_rows = nullptr;  // one output row per row of the block, or nullptr
  const int64_t* tap_b = nullptr;     // ntaps tap positions in B's K order, or nullptr
};

}  // namespace gemm

// One block (qplugin::kernels::<isa>::qgemm_block): rows [m0, m1), columns [n0, n1) with n0 a multiple of kPanelN.
// Single-threaded; the driver (driver.h) calls it per block. Exposed per ISA for tests / reuse.
// qgemm_block_indirect: the same block with A read through an IndirectA (p.a, p.lda, p.a16
// unused; p.b_zero_points_all_zero must hold: no row sums). AVX-512, AVX-VNNI and neon / dotprod /
// i8mm: qgemm_has_indirect() says whether the path has it (elsewhere it writes nothing; conv gathers rows with im2col
// there). qgemm_indirect_selects(): whether the path's qgemm_block_indirect honours IndirectA's tap_b and out_rows
// (AVX-512); other paths must be given neither.
// qgemm_block_groups (AVX-512, AVX2; qgemm_has_groups(groups, icg, ocg) says whether the path runs
// groups of that shape): rows [m0, m1) of `ngroups` consecutive groups of a grouped conv at once,
// each of ocg = 8 or 16 output channels (AVX2 also 4, with icg 4 and ngroups % 4 == 0) with its own
// packed B bs[j] (one panel; on AVX2 with data16) and every b_zp 0; A through `a` (taps in order,
// no tap_b / out_rows), group j's seg = icg bytes a tap at rows[m - m0] + tap_off[t] + j * seg
// (icg % 4 == 0).
// Output column j * ocg + c (from p.out; p.multipliers / p.bias likewise) is group j's column c.
// k4: nullptr, or pack_groups_k4 of the groups (icg == ocg == 8, ngroups even; only where
// qgemm_groups_k4() holds, AVX-512), read by tiles that broadcast 16 input bytes (two groups) per
// pixel and tap instead of 4 per group.
// The result is the bytes of one GEMM per group (qgemm_block_indirect's, or the im2col blocks' on
// AVX2), in one pass over the row pointers.
// clang-format off
// minmax_f32: *mn = min(x[0..n)), *mx = max(x[0..n)) for n >= 1; both NaN if any x is NaN
// (as at::aminmax). Used by dynamic linear to choose a small activation's qparams in place.
#define QPLUGIN_QGEMM_KERNELS(X) \
  X(void, qgemm_block, (const gemm::QGemmParams& p, int64_t m0, int64_t m1, int64_t n0, int64_t n1)) \
  X(bool, qgemm_has_indirect, ()) \
  X(bool, qgemm_indirect_selects, ()) \
  X(void, qgemm_block_indirect, (const gemm::QGemmParams& p, const gemm::IndirectA& a, int64_t m0, \
                                 int64_t m1, int64_t n0, int64_t n1)) \
  X(bool, qgemm_has_groups, (int64_t groups, int64_t icg, int64_t ocg)) \
  X(bool, qgemm_groups_k4, ()) \
  X(void, qgemm_block_groups, (const gemm::QGemmParams& p, const gemm::PackedB* bs, int64_t ngroups, int64_t ocg, \
                               const int8_t* k4, const gemm::IndirectA& a, int64_t m0, int64_t m1)) \
  X(void, minmax_f32, (const float* x, int64_t n, float* mn, float* mx))
// clang-format on
QPLUGIN_DECLARE_ISA_KERNELS_DOT(QPLUGIN_QGEMM_KERNELS)

}  // namespace kernels
}  // namespace qplugin
