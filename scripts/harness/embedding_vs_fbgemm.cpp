// Our 8-bit embedding-bag kernel against fbgemm's JIT kernel (the one torch's
// quantized::embedding_bag_byte_rowwise_offsets calls) in one process, calls interleaved, no Python
// or op overhead: which part of an op-level gap is the kernel (the single-bag loop's numbers in
// docs/design/embedding.md). Build and run (from the repository root; pick the ISA with the
// defines, fbgemm's with FBGEMM_ENABLE_INSTRUCTIONS=AVX2):
//
//   T=$(python -c 'import torch, os; print(os.path.dirname(torch.__file__))')
//   g++ -O3 -std=c++17 -ffp-contract=off -mavx2 -mfma -mf16c -mbmi2 -DQPLUGIN_ISA_AVX2=1 \
//       -Iaten_ext/csrc -I$T/include scripts/harness/embedding_vs_fbgemm.cpp -o /tmp/emb_avx2 \
//       -L$T/lib -Wl,-rpath,$T/lib -ltorch_cpu -lc10
//   FBGEMM_ENABLE_INSTRUCTIONS=AVX2 /tmp/emb_avx2 5000 32 2048 10   # rows dim bags per_bag
//
// (AVX-512: -mavx512f -mavx512bw -mavx512vl -mavx512dq -mavx512vnni -mavx2 -mfma -mf16c -mbmi2
// -mprefer-vector-width=512 -DQPLUGIN_ISA_AVX512=1.) Prints both times (best of 40 rounds), their
// ratio and whether the outputs are bit-identical.
#include "kernels/embedding_kernel.cpp"

#include <fbgemm/FbgemmEmbedding.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

int main(int argc, char** argv) {
  using namespace qplugin::kernels;
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s rows dim bags per_bag\n", argv[0]);
    return 2;
  }
  const int64_t N = std::atol(argv[1]), D = std::atol(argv[2]), B = std::atol(argv[3]), L = std::atol(argv[4]);
  const int64_t rb = D + 8;  // torch's fused 8-bit rows: D codes, float32 scale, float32 bias
  std::vector<uint8_t> tab(N * rb);
  std::mt19937 g(1);
  for (auto& x : tab) x = g() & 255;
  for (int64_t r = 0; r < N; ++r) {
    const float s = 0.01f, b = -1.0f;
    std::memcpy(&tab[r * rb + D], &s, 4);
    std::memcpy(&tab[r * rb + D + 4], &b, 4);
  }
  std::vector<int64_t> idx(B * L), st(B + 1);
  for (auto& x : idx) x = g() % N;
  for (int64_t b = 0; b <= B; ++b) st[b] = b * L;
  std::vector<float> ours(B * D), theirs(B * D);
  const EmbRows w{tab.data(), rb, D, 8, tab.data() + D, rb, false, N};
  auto fk = fbgemm::GenerateEmbeddingSpMDM<uint8_t, int64_t, int64_t, float>(D, false, false, 16, false, true);
  double best = 1e9, bf = 1e9;
  const int64_t reps = std::max<int64_t>(5, 2000000 / std::max<int64_t>(B * L, 1));
  for (int r = 0; r < 40; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int64_t k = 0; k < reps; ++k)
      QPLUGIN_ISA_NS::embedding_bag_rows(w, idx.data(), st.data(), nullptr, 0, false, 0, B, ours.data());
    const auto t1 = std::chrono::steady_clock::now();
    for (int64_t k = 0; k < reps; ++k) fk(B, B * L, N, tab.data(), idx.data(), st.data(), nullptr, theirs.data());
    const auto t2 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double>(t1 - t0).count() / reps);
    bf = std::min(bf, std::chrono::duration<double>(t2 - t1).count() / reps);
  }
  std::printf("%ldx%ld, %ld bags x %ld: ours %.1f us, fbgemm %.1f us, ratio %.3f, outputs %s\n", N, D, B, L, best * 1e6,
              bf * 1e6, best / bf,
              std::memcmp(ours.data(), theirs.data(), ours.size() * 4) == 0 ? "identical" : "DIFFER");
  return 0;
}
