// Compiled once, no ATen: weight packing of kernels/gemm/qgemm.h (PackedWeight, pack_b,
// unpack_b, pack_b16). The kernel testers (test/kernels) link it without torch.
#include <algorithm>
#include <cstring>

#include "kernels/gemm/qgemm.h"

namespace qplugin {
namespace kernels {
namespace gemm {

void pack_b(const int8_t* w, int64_t stride_n, int64_t stride_k, int64_t K, int64_t N, int8_t* out, int32_t* col_sums) {
  const int64_t K4 = padded_k(K);
  const int64_t N16 = padded_n(N);
  std::memset(out, 0, static_cast<size_t>(K4 * N16));
  for (int64_t n = 0; n < N16; ++n) {
    int8_t* panel = out + (n / kPanelN) * K4 * kPanelN;
    const int64_t j = n % kPanelN;
    int32_t s = 0;
    if (n < N) {
      for (int64_t k = 0; k < K; ++k) {
        const int8_t v = w[n * stride_n + k * stride_k];
        panel[(k / kQuadK) * (kQuadK * kPanelN) + kQuadK * j + (k % kQuadK)] = v;
        s += v;
      }
    }
    col_sums[n] = s;
  }
}

void unpack_b(const PackedB& b, int8_t* w) {
  const int64_t K4 = padded_k(b.K);
  for (int64_t n = 0; n < b.N; ++n) {
    const int8_t* panel = b.data + (n / kPanelN) * K4 * kPanelN;
    const int64_t j = n % kPanelN;
    for (int64_t k = 0; k < b.K; ++k) {
      w[n * b.K + k] = panel[(k / kQuadK) * (kQuadK * kPanelN) + kQuadK * j + (k % kQuadK)];
    }
  }
}

void pack_b16(const PackedB& b, int16_t* out) {
  const int64_t K4 = padded_k(b.K);
  const int64_t K2 = padded_k2(b.K);
  const int64_t N16 = padded_n(b.N);
  for (int64_t n = 0; n < N16; ++n) {
    const int8_t* panel = b.data + (n / kPanelN) * K4 * kPanelN;
    int16_t* o = out + (n / kPanelN) * K2 * kPanelN;
    const int64_t j = n % kPanelN;
    for (int64_t k = 0; k < K2; ++k) {
      // k < K4 always (K2 <= K4); the int8 bytes past K are zero
      o[(k / 2) * (2 * kPanelN) + 2 * j + (k % 2)] =
          panel[(k / kQuadK) * (kQuadK * kPanelN) + kQuadK * j + (k % kQuadK)];
    }
  }
}

void pack_groups_k4(const PackedB* bs, int64_t ngroups, int64_t ntaps, int8_t* out) {
  // a block: 16 input channels = groups 2 cb (dwords 0, 1) and 2 cb + 1 (dwords 2, 3); a group's
  // tap: 2 quads
  for (int64_t cb = 0; cb < ngroups / 2; ++cb)
    for (int64_t t = 0; t < ntaps; ++t)
      for (int64_t h = 0; h < 2; ++h)
        for (int64_t m = 0; m < 4; ++m)
          for (int64_t i = 0; i < 4; ++i) {
            const int8_t* src = bs[2 * cb + i / 2].data + (2 * t + i % 2) * (kQuadK * kPanelN) + kQuadK * (4 * h + m);
            int8_t* dst = out + (((cb * ntaps + t) * 2 + h) * 16 + 4 * m + i) * 4;
            for (int64_t k = 0; k < kQuadK; ++k) dst[k] = src[k];
          }
}

void PackedWeight::pack(const int8_t* w, int64_t stride_n, int64_t stride_k, int64_t K, int64_t N) {
  K_ = K;
  N_ = N;
  data_.assign(static_cast<size_t>(packed_b_bytes(K, N)), 0);
  col_sums_.assign(static_cast<size_t>(padded_n(N)), 0);
  pack_b(w, stride_n, stride_k, K, N, data_.data(), col_sums_.data());
}

PackedB PackedWeight::view(bool with_int16) const {
  PackedB b;
  b.data = data_.data();
  b.col_sums = col_sums_.data();
  b.K = K_;
  b.N = N_;
  if (with_int16 && K_ * N_ > 0) {
    std::call_once(once16_, [&] {
      data16_.resize(static_cast<size_t>(packed_b16_elems(K_, N_)));
      pack_b16(b, data16_.data());
    });
    b.data16 = data16_.data();
  }
  return b;
}

int64_t PackedWeight::nbytes() const { return static_cast<int64_t>(data_.size() + col_sums_.size() * sizeof(int32_t)); }

}  // namespace gemm
}  // namespace kernels
}  // namespace qplugin
