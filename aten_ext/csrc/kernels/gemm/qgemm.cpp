// Compiled once: the threaded GEMM driver of kernels/gemm/qgemm.h (packing: qgemm_pack.cpp).
#include "kernels/gemm/qgemm.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cstring>

#include "kernels/dispatch.h"

namespace qplugin {
namespace kernels {
namespace gemm {

void qgemm(const QGemmParams& p) {
  const int64_t M = p.M;
  const int64_t N = p.b->N;
  const int64_t K = p.b->K;
  if (M <= 0 || N <= 0) return;
  // Blocks: 64 columns (4 panels, the AVX-512 tile width) by up to 96 rows
  // (a multiple of every path's tile height). Consecutive tasks share a column
  // block, so a thread streams one block of packed B from its L2.
  constexpr int64_t kNB = 4 * kPanelN;
  constexpr int64_t kMB = 96;
  const int64_t num_nb = (N + kNB - 1) / kNB;
  const int64_t num_mb = (M + kMB - 1) / kMB;
  const int64_t ntasks = num_nb * num_mb;
  const int64_t macs_per_task = std::min(M, kMB) * kNB * std::max<int64_t>(K, 1);
  // Small problems run on the calling thread in one block: no parallel_for, no per-task
  // dispatch. Below ~2^18 MACs a thread fork/join costs about as much as the work it would
  // split; a batch-1 768x768 layer (590k MACs, its weights read from L3) still gains from 2.
  if (ntasks == 1 || M * N * std::max<int64_t>(K, 1) < (int64_t{1} << 18) || at::get_num_threads() == 1) {
    QPLUGIN_ISA_CALL(qgemm_block, p, 0, M, 0, N);
    return;
  }
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 18) / macs_per_task);
  at::parallel_for(0, ntasks, grain, [&](int64_t begin, int64_t end) {
    if (num_mb == 1) {  // one row block: a thread's tasks are one contiguous column range
      QPLUGIN_ISA_CALL(qgemm_block, p, 0, M, begin * kNB, std::min(N, end * kNB));
      return;
    }
    for (int64_t t = begin; t < end; ++t) {
      const int64_t nb = t / num_mb;
      const int64_t mb = t % num_mb;
      const int64_t m0 = mb * kMB, m1 = std::min(M, m0 + kMB);
      const int64_t n0 = nb * kNB, n1 = std::min(N, n0 + kNB);
      QPLUGIN_ISA_CALL(qgemm_block, p, m0, m1, n0, n1);
    }
  });
}

} // namespace gemm
} // namespace kernels
} // namespace qplugin
