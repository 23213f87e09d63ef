// Compiled once: the int8 matmul driver of kernels/gemm/driver.h (blocking, threads, scratch
// buffers); every block runs on the problem's path through QPLUGIN_ISA_CALL_ON.
#include "kernels/gemm/driver.h"

#include "utils/torch_api.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

#include "kernels/conv_transpose_kernel.h"

namespace qplugin {
namespace kernels {
namespace gemm {

namespace {

// Dense A, one GEMM: 64-column x 96-row blocks.
void run_dense(Isa isa, const QGemmParams& p) {
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
  if (ntasks == 1 || M * N * std::max<int64_t>(K, 1) < (int64_t{1} << 18) || tensor::num_threads() == 1) {
    QPLUGIN_ISA_CALL_ON(isa, qgemm_block, p, 0, M, 0, N);
    return;
  }
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 18) / macs_per_task);
  tensor::parallel_for(0, ntasks, grain, [&](int64_t begin, int64_t end) {
    if (num_mb == 1) {  // one row block: a thread's tasks are one contiguous column range
      QPLUGIN_ISA_CALL_ON(isa, qgemm_block, p, 0, M, begin * kNB, std::min(N, end * kNB));
      return;
    }
    for (int64_t t = begin; t < end; ++t) {
      const int64_t nb = t / num_mb;
      const int64_t mb = t % num_mb;
      const int64_t m0 = mb * kMB, m1 = std::min(M, m0 + kMB);
      const int64_t n0 = nb * kNB, n1 = std::min(N, n0 + kNB);
      QPLUGIN_ISA_CALL_ON(isa, qgemm_block, p, m0, m1, n0, n1);
    }
  });
}

struct FreeDeleter {
  void operator()(uint8_t* ptr) const { std::free(ptr); }
};

// The indirect path's source: x with its padding filled with x_zp (one padded image every
// *src_img bytes, + 64 bytes of slack: rows mode reads up to 3 bytes past the last kernel row),
// or x itself when there is no padding and no rows mode. gp: the padded geometry.
const uint8_t* padded_source(const ConvA& c, int32_t x_zp, ConvGeom* gp, int64_t* src_img,
                             std::unique_ptr<uint8_t, FreeDeleter>* keep) {
  const ConvGeom& g = c.g;
  const int64_t N = c.images;
  const int64_t in_img = g.D * g.H * g.W * g.C;
  *gp = g;
  gp->D += 2 * g.PD;
  gp->H += 2 * g.PH;
  gp->W += 2 * g.PW;
  gp->PD = gp->PH = gp->PW = 0;
  *src_img = in_img;
  if (!c.rows_mode && gp->D == g.D && gp->H == g.H && gp->W == g.W) return c.x;
  *src_img = gp->D * gp->H * gp->W * g.C;
  const size_t bytes = static_cast<size_t>(N * *src_img + 64);
  keep->reset(static_cast<uint8_t*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64)));
  uint8_t* dst = keep->get();
  if (dst == nullptr) throw std::bad_alloc();
  // Only the border is filled with x_zp: every padded row is [PW * C fill | W * C copied |
  // PW * C fill]; whole padded planes / rows get one fill each.
  const int zp = static_cast<int>(x_zp);
  const int64_t row_bytes = g.W * g.C;
  const int64_t prow = gp->W * g.C;     // padded row
  const int64_t pplane = gp->H * prow;  // padded plane
  const int64_t side = g.PW * g.C;
  const int64_t sz = *src_img;
  // One task per input row (n, d, h): its copy, the fill after it (right side + next row's left
  // side, or the bottom rows), the top rows before h = 0 and the front / back padding planes at
  // the first / last row of an image. Rows are split over the threads (the copy is ~2-4 % of a
  // 3x3 conv; serial it would not scale).
  const int64_t nrows = N * g.D * g.H;
  tensor::parallel_for(0, nrows, std::max<int64_t>(1, (64 * 1024) / std::max<int64_t>(1, prow)),
                       [&](int64_t begin, int64_t end) {
                         for (int64_t t = begin; t < end; ++t) {
                           const int64_t h = t % g.H;
                           const int64_t d = (t / g.H) % g.D;
                           const int64_t n = t / (g.H * g.D);
                           uint8_t* di = dst + n * sz;
                           uint8_t* dp = di + (d + g.PD) * pplane;
                           if (d == 0 && h == 0) std::memset(di, zp, static_cast<size_t>(g.PD * pplane));
                           if (d == g.D - 1 && h == g.H - 1) {
                             std::memset(di + (g.PD + g.D) * pplane, zp, static_cast<size_t>(g.PD * pplane));
                           }
                           if (h == 0) std::memset(dp, zp, static_cast<size_t>(g.PH * prow + side));
                           uint8_t* r = dp + (h + g.PH) * prow + side;
                           std::memcpy(r, c.x + n * in_img + (d * g.H + h) * row_bytes, static_cast<size_t>(row_bytes));
                           // right fill of this row + left fill of the next (or the bottom rows)
                           const int64_t gap = h + 1 < g.H ? 2 * side : side + g.PH * prow;
                           std::memset(r + row_bytes, zp, static_cast<size_t>(gap));
                         }
                       });
  std::memset(dst + N * sz, zp, 64);
  return dst;
}

// Tap classes of the indirect path with x_zp = 0: a padded tap then reads zeros and adds exactly
// 0 (the a_zp * colsum term is 0 too), so a pixel next to the padding may leave its padded taps
// out. Along each spatial dimension the taps inside the input form a range [k0, k1) (the input
// position is monotonic in the tap); a pixel's class is its (d range, h range, w range) triple,
// and its taps the product of the three. Rows mode (stem convs) has one tap per kernel row
// (kd, kh): only whole rows are left out (its w range is always the full one).
struct TapClasses {
  int64_t nh = 1, nw = 1;           // classes along h and w (and d: count / (nh * nw))
  std::vector<int64_t> cd, ch, cw;  // each output coordinate's class along its dimension
  std::vector<int64_t> first;       // class k's taps: [first[k], first[k + 1]) in off / b
  std::vector<int64_t> off, b;      // tap offsets in the padded input, tap positions in B
  int64_t full = -1;                // the class of the pixels with every tap inside (-1: none)
  int64_t inside = 0;               // taps inside the input over the pixels of one image
  int64_t count() const { return static_cast<int64_t>(first.size()) - 1; }
};

// One dimension: the class of each output coordinate o (out), the ranges (ranges: k0, k1 pairs).
// A range with no tap inside (an output coordinate whose receptive field is all padding) is kept
// as [0, 1): that tap reads padding, so its product is 0 as well (a class needs one tap).
// Returns the sum of the range lengths over o.
int64_t tap_ranges(int64_t O, int64_t S, int64_t P, int64_t Dl, int64_t K, int64_t I, bool whole,
                   std::vector<int64_t>* out, std::vector<int64_t>* ranges) {
  out->resize(static_cast<size_t>(O));
  int64_t sum = 0;
  for (int64_t o = 0; o < O; ++o) {
    int64_t k0 = 0, k1 = K;
    if (!whole) {
      while (k0 < K && o * S - P + k0 * Dl < 0) ++k0;
      while (k1 > k0 && o * S - P + (k1 - 1) * Dl >= I) --k1;
      if (k0 == k1) k0 = 0, k1 = 1;
    }
    int64_t c = 0;
    while (c < static_cast<int64_t>(ranges->size()) / 2 && ((*ranges)[2 * c] != k0 || (*ranges)[2 * c + 1] != k1)) ++c;
    if (c == static_cast<int64_t>(ranges->size()) / 2) {
      ranges->push_back(k0);
      ranges->push_back(k1);
    }
    (*out)[o] = c;
    sum += k1 - k0;
  }
  return sum;
}

// Byte offset of tap (kd, kh, kw) in the padded input of geometry gp.
int64_t tap_offset(const ConvGeom& gp, int64_t kd, int64_t kh, int64_t kw) {
  return ((kd * gp.DD * gp.H + kh * gp.DH) * gp.W + kw * gp.DW) * gp.C;
}

// g: the conv's geometry; gp: the padded one with the kernel as the indirect path reads it (rows
// mode: KW = 1).
TapClasses tap_classes(const ConvGeom& g, const ConvGeom& gp, bool rows_mode) {
  TapClasses tc;
  std::vector<int64_t> rd, rh, rw;
  tc.inside = tap_ranges(g.OD, g.SD, g.PD, g.DD, gp.KD, g.D, false, &tc.cd, &rd) *
              tap_ranges(g.OH, g.SH, g.PH, g.DH, gp.KH, g.H, false, &tc.ch, &rh) *
              tap_ranges(g.OW, g.SW, g.PW, g.DW, gp.KW, g.W, rows_mode, &tc.cw, &rw);
  tc.nh = static_cast<int64_t>(rh.size()) / 2;
  tc.nw = static_cast<int64_t>(rw.size()) / 2;
  tc.first.push_back(0);
  for (size_t d = 0; d < rd.size(); d += 2)
    for (size_t h = 0; h < rh.size(); h += 2)
      for (size_t w = 0; w < rw.size(); w += 2) {
        if (rd[d] == 0 && rd[d + 1] == gp.KD && rh[h] == 0 && rh[h + 1] == gp.KH && rw[w] == 0 && rw[w + 1] == gp.KW) {
          tc.full = tc.count();
        }
        for (int64_t kd = rd[d]; kd < rd[d + 1]; ++kd)
          for (int64_t kh = rh[h]; kh < rh[h + 1]; ++kh)
            for (int64_t kw = rw[w]; kw < rw[w + 1]; ++kw) {
              tc.off.push_back(tap_offset(gp, kd, kh, kw));
              tc.b.push_back((kd * gp.KH + kh) * gp.KW + kw);
            }
        tc.first.push_back(static_cast<int64_t>(tc.off.size()));
      }
  return tc;
}

// A convolution: row blocks x groups (x output-channel ranges) tasks. The rows of a group's GEMM
// are the output pixels of every image in turn (N * M rows): the output and residual rows are
// contiguous across images, so a row block may span images, and a small map's rows (7 x 7 = 49
// per image) make full tiles with the next image's instead of a remainder tile per image.
void run_conv(const Problem& pr) {
  const Isa path = pr.isa;
  const ConvA& c = *pr.conv;
  const ConvGeom& g = c.g;
  const QGemmParams& qbase = pr.p;
  const int64_t N = c.images;
  const int64_t G = g.groups;
  const int64_t OC = g.OC;
  const int64_t ocg = g.ocg;
  const int64_t kp = c.kp;
  const int64_t elem = c.elem;
  const int64_t in_img = g.D * g.H * g.W * g.C;
  const int64_t M = g.OD * g.OH * g.OW;  // output pixels per image
  const int64_t rows_all = N * M;        // rows of each group's GEMM
  const bool direct = c.mode == ConvAMode::kInPlace;
  const bool indirect = c.mode == ConvAMode::kIndirect;
  // Indirect: read the receptive fields in place from an x_zp-padded copy of x.
  ConvGeom gp = g;
  const uint8_t* xsrc = c.x;
  int64_t src_img = in_img;
  std::unique_ptr<uint8_t, FreeDeleter> xpad;
  if (indirect) {
    xsrc = padded_source(c, qbase.a_zero_point, &gp, &src_img, &xpad);
    if (c.rows_mode) {
      gp.KW = 1;
      gp.icg = c.s4;
    }
  }
  // Small groups (8 or 16 output channels; AVX2 also 4) on the indirect path, where the path's
  // qgemm_block_groups runs them: every group of a row block in one call (the groups side by side
  // in the tiles), so a task is a row block of all groups and its row pointers serve them all.
  const bool by_groups =
      indirect && !c.rows_mode && G > 1 && QPLUGIN_ISA_CALL_ON(path, qgemm_has_groups, G, g.icg, ocg);
  const int64_t gchunk = by_groups ? G : 1;  // groups per task
  // Groups of 8 input and output channels, an even count and enough rows to repay the layout
  // (one pass over the weights, ~0.25 ns a byte against ~0.005 ns a multiply-add of the GEMM:
  // ~2 % at 2048 rows): qgemm_block_groups' k4 tiles, their layout built here once per call.
  std::unique_ptr<int8_t[]> k4;  // (every byte written by pack_groups_k4)
  if (by_groups && ocg == 8 && g.icg == 8 && G % 2 == 0 && N * g.OD * g.OH * g.OW >= 2048 &&
      QPLUGIN_ISA_CALL_ON(path, qgemm_groups_k4)) {
    const int64_t ntaps = g.KD * g.KH * g.KW;
    k4.reset(new int8_t[static_cast<size_t>(G * 64 * ntaps)]);
    pack_groups_k4(pr.b_groups, G, ntaps, k4.get());
  }
  const int64_t GT = G / gchunk;  // group tasks per row block
  // Rows per block: the block of A stays in L2 (about 128 KiB).
  int64_t mb = std::max<int64_t>(24, (128 * 1024) / std::max<int64_t>(1, kp * elem));
  if (indirect) mb = 252;  // a multiple of the 6-, 12- and 14-row tiles
  mb = std::min(mb, rows_all);
  const int64_t threads = tensor::num_threads();
  // Few rows in all (a small map at batch 1: 7 x 7 = 49, 14 x 14 = 196 or 28 x 28 = 784 rows, or
  // 7 x 7 at batch 8), enough output channels: the threads split the output channels, into
  // `nsplit` ranges of whole 16-channel panels, ordered outermost so each thread gets one range
  // over every row block (equal work; each thread gathers the rows it uses itself, a few % of the
  // GEMM; the indirect path builds its row pointers per block, cheaper still), and the row blocks
  // keep their size: halving them for the threads as well left 7 x 7 maps in blocks of 24-32 rows,
  // where the padded-tap classes and remainder tiles cost more than the split gained. Not on more
  // rows, nor where the rows already make 8 blocks a thread: the threads then write neighbouring
  // bytes of every output row, and the cache lines they share cost more than the split saves (a
  // 1x1 conv with 64 or 144 output channels on 56 x 56 ran slower on 2 threads than on 1).
  const bool chan_split =
      threads > 1 && G * rows_all <= 1024 && GT * ((rows_all + mb - 1) / mb) < 8 * threads && ocg >= 32 * threads;
  const int64_t nsplit = chan_split ? threads : 1;
  // Otherwise at least 4 blocks per thread (load balance). One thread: blocks only as small as
  // keeps a block's output in L2 (<= 512 KiB) across its column strips; halving a 14 x 14 map's
  // 196 rows into 4 x 49 only added a 1-row remainder tile per block and strip.
  auto split = [&]() {
    return threads > 1 ? GT * ((rows_all + mb - 1) / mb) < 4 * threads : mb * ocg * gchunk > 512 * 1024;
  };
  while (mb > 24 && !chan_split && split()) mb = (mb + 1) / 2;
  const int64_t panels = (ocg + 15) / 16;
  if (nsplit == 1 && threads > 1) {
    // parallel_for hands each thread a contiguous run of ceil(tasks / threads) tasks: make the
    // task count a multiple of the thread count with blocks of equal size (a multiple of 12
    // rows, the microkernel tiles), e.g. 3136 rows on 2 threads: 14 blocks of 228 (split 1596 /
    // 1540 rows) instead of 13 x 240 + 16 (1680 / 1456).
    int64_t blocks = (rows_all + mb - 1) / mb;
    while ((GT * blocks) % threads != 0) ++blocks;
    const int64_t mb2 = ((rows_all + blocks - 1) / blocks + 11) / 12 * 12;
    // (rounding up to 12 rows can drop a block: 49 rows in 4 blocks of 13 -> 24 + 24 + 1, which
    // parallel_for splits 48 / 1; keep such a split only when the count stays a multiple)
    if (mb2 >= 12 && mb2 < rows_all && (GT * ((rows_all + mb2 - 1) / mb2)) % threads == 0) mb = mb2;
  }
  const int64_t mblocks = (rows_all + mb - 1) / mb;
  const int64_t tasks = nsplit * GT * mblocks;
  // Indirect: the tap offsets of the receptive field in the padded input (rows mode: one "tap"
  // of s4 bytes per kernel row).
  std::vector<int64_t> tap_off;
  if (indirect) {
    for (int64_t kd = 0; kd < gp.KD; ++kd)
      for (int64_t kh = 0; kh < gp.KH; ++kh)
        for (int64_t kw = 0; kw < gp.KW; ++kw) tap_off.push_back(tap_offset(gp, kd, kh, kw));
  }
  // With x_zp = 0 and padding (on paths whose indirect blocks take a tap selection): the tap
  // classes, each block's rows bucketed by class, one indirect call per class.
  const bool pads = g.PD > 0 || g.PH > 0 || g.PW > 0;
  // Only where the padded taps are 8 % or more of an image's (3x3, padding 1: 7 x 7 and 14 x 14
  // maps 18 % and 9 %): on 28 x 28 (5 %) and 56 x 56 (2.4 %) maps the classes measured 1-3 %
  // slower than the plain blocks, though the cost estimate below has them gain on the blocks
  // with a whole top or bottom row.
  const bool zero_pad =
      indirect && !by_groups && pads && qbase.a_zero_point == 0 && QPLUGIN_ISA_CALL_ON(path, qgemm_indirect_selects);
  const TapClasses tc = zero_pad ? tap_classes(g, gp, c.rows_mode) : TapClasses{};
  const bool classes = zero_pad && tc.inside * 25 <= g.OD * g.OH * g.OW * static_cast<int64_t>(tap_off.size()) * 23;
  tensor::parallel_for(0, tasks, 1, [&](int64_t begin, int64_t end) {
    const bool need_a = !direct && !indirect;
    std::vector<uint8_t> abuf(need_a ? static_cast<size_t>(mb * kp * elem + 64) : 0);
    std::vector<const uint8_t*> rows(indirect ? static_cast<size_t>(mb) : 0);
    // classes: each row's class, the rows sorted by class, their output rows, rows per class
    std::vector<int64_t> cls(classes ? static_cast<size_t>(mb) : 0);
    std::vector<const uint8_t*> srows(cls.size());
    std::vector<int64_t> orows(cls.size());
    std::vector<int64_t> start(classes ? static_cast<size_t>(tc.count() + 1) : 0);
    for (int64_t t0 = begin; t0 < end; ++t0) {
      const int64_t si = t0 / (GT * mblocks);  // output channel range (nsplit > 1)
      const int64_t t = t0 % (GT * mblocks);
      const int64_t p0 = panels * si / nsplit, p1 = panels * (si + 1) / nsplit;
      const int64_t nc0 = p0 * 16, nc1 = std::min(ocg, p1 * 16);
      // A row block's group tasks run back to back, so each group gathers its channels from input
      // pixels the block's first group brought into cache (group-major tasks would read the whole
      // input once per group: 6.4 MB a group for 8 images of 256 x 56 x 56).
      const int64_t gi = t % GT * gchunk;  // (the first group of the task)
      const int64_t r0 = t / GT * mb;      // first row (image r0 / M, pixel r0 % M)
      const int64_t mc = std::min(mb, rows_all - r0);
      // output / residual at row r0, column 0 of the group: the block writes its rows [0, mc)
      // and columns [nc0, nc1)
      const int64_t ooff = r0 * OC + gi * ocg;
      QGemmParams q = qbase;
      q.M = mc;
      q.lda = kp;
      q.b = indirect && c.rows_mode ? c.rows_b : &pr.b_groups[gi];
      q.b_zero_points = qbase.b_zero_points + gi * ocg;
      q.multipliers = qbase.multipliers + gi * ocg;
      q.bias = qbase.bias != nullptr ? qbase.bias + gi * ocg : nullptr;
      q.out = static_cast<uint8_t*>(qbase.out) + ooff;
      q.add = qbase.add != nullptr ? qbase.add + ooff : nullptr;
      if (indirect) {
        // Row pointers of the output pixels r0, r0 + 1, ... into the padded images, walked
        // incrementally (no divisions per pixel).
        int64_t n = r0 / M;
        const int64_t m0 = r0 % M;
        const uint8_t* x0 = xsrc + n * src_img + gi * g.icg;
        int64_t ow = m0 % g.OW, oh = (m0 / g.OW) % g.OH, od = m0 / (g.OW * g.OH);
        bool all_full = true;  // (or the classes not worth it)
        for (int64_t i = 0; i < mc; ++i) {
          rows[i] = x0 + (((od * g.SD) * gp.H + oh * g.SH) * gp.W + ow * g.SW) * g.C;
          if (classes) {
            cls[i] = (tc.cd[od] * tc.nh + tc.ch[oh]) * tc.nw + tc.cw[ow];
            all_full = all_full && cls[i] == tc.full;
          }
          if (++ow == g.OW) {
            ow = 0;
            if (++oh == g.OH) {
              oh = 0;
              if (++od == g.OD) {
                od = 0;
                x0 += src_img;  // the next image
              }
            }
          }
        }
        IndirectA ia;
        ia.seg = gp.icg;
        const int64_t ntaps = static_cast<int64_t>(tap_off.size());
        if (by_groups) {
          ia.rows = rows.data();
          ia.tap_off = tap_off.data();
          ia.ntaps = ntaps;
          QPLUGIN_ISA_CALL_ON(path, qgemm_block_groups, q, pr.b_groups + gi, std::min(gchunk, G - gi), ocg, k4.get(),
                              ia, 0, mc);
          continue;
        }
        if (classes && !all_full) {
          // Rows per class; the classes only when their estimated cost comes to ~3% less than the
          // block's own. Cost of a class: taps x (rows + tiles), a tile (MR rows, the tile height
          // of the widest strip) costing about one row more than its rows (its weight loads):
          // each class adds a remainder tile per strip, so a block with a few pixels at the
          // left and right edges of a large map (28 x 28, 56 x 56) gains nothing.
          std::fill(start.begin(), start.end(), 0);
          for (int64_t i = 0; i < mc; ++i) ++start[cls[i] + 1];
          const int64_t mr = nc1 - nc0 > 3 * kPanelN ? 6 : nc1 - nc0 > kPanelN ? 14 : 8;
          auto cost = [mr](int64_t rows, int64_t taps) {
            return taps * (rows + (rows + mr - 1) / mr);
          };
          int64_t sel = 0;
          for (int64_t k = 0; k < tc.count(); ++k) sel += cost(start[k + 1], tc.first[k + 1] - tc.first[k]);
          all_full = sel * 32 > cost(mc, ntaps) * 31;
        }
        if (all_full) {  // every tap of every row: the rows in order, contiguous output
          ia.rows = rows.data();
          ia.tap_off = tap_off.data();
          ia.ntaps = ntaps;
          QPLUGIN_ISA_CALL_ON(path, qgemm_block_indirect, q, ia, 0, mc, nc0, nc1);
          continue;
        }
        // Counting sort by class (rows keep their order within a class), then one call per class.
        for (int64_t k = 0; k < tc.count(); ++k) start[k + 1] += start[k];
        for (int64_t i = 0; i < mc; ++i) {
          const int64_t j = start[cls[i]]++;
          srows[j] = rows[i];
          orows[j] = i;
        }
        // (start[k] is now class k's end.) Column strips of 64 outermost, the classes inside: a
        // strip's weights (9 taps x 512 channels x 64 columns = 288 KiB) stay in L2 across the
        // classes (512 -> 512 on 7 x 7 at batch 1: 6-9 % faster than every column per class).
        // Steps of 64 columns from nc0 make the same tile strips as one call over [nc0, nc1).
        for (int64_t n = nc0; n < nc1; n += 4 * kPanelN) {
          for (int64_t k = 0, s0 = 0; k < tc.count(); s0 = start[k++]) {
            if (start[k] == s0) continue;
            ia.rows = srows.data() + s0;
            ia.out_rows = orows.data() + s0;
            ia.tap_off = tc.off.data() + tc.first[k];
            ia.tap_b = tc.b.data() + tc.first[k];
            ia.ntaps = tc.first[k + 1] - tc.first[k];
            QPLUGIN_ISA_CALL_ON(path, qgemm_block_indirect, q, ia, 0, start[k] - s0, n, std::min(nc1, n + 4 * kPanelN));
          }
        }
        continue;
      }
      if (direct) {
        q.a = c.x + r0 * g.C;  // rows of C = kp bytes, in place (1x1, stride 1: in_img = M * C)
      } else {
        // Gathered per image: the block's rows of each image it spans, one after the other.
        for (int64_t r = r0; r < r0 + mc;) {
          const int64_t n = r / M, m = r % M;
          const int64_t cnt = std::min(M - m, r0 + mc - r);
          QPLUGIN_ISA_CALL_ON(path, conv_im2col, c.x + n * in_img, g, gi, m, cnt, abuf.data() + (r - r0) * kp * elem,
                              kp, qbase.a_zero_point);
          r += cnt;
        }
        if (elem == 2) {
          q.a16 = reinterpret_cast<const int16_t*>(abuf.data());
        } else {
          q.a = abuf.data();
        }
      }
      QPLUGIN_ISA_CALL_ON(path, qgemm_block, q, 0, mc, nc0, nc1);
    }
  });
}

// floor(a / b) for b > 0
int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

}  // namespace

void run(const Problem& pr) {
  if (pr.conv == nullptr) {
    run_dense(pr.isa, pr.p);
  } else {
    run_conv(pr);
  }
}

void qgemm(const QGemmParams& p) {
  Problem pr;
  pr.isa = active_isa();
  pr.p = p;
  run(pr);
}

// Per output row (n, od, oh) and range of output columns [ow0, ow1) (one task, one thread, so
// no two threads add into the same accumulators): for every kernel row (kd, kh) that maps an
// input row (id, ih) onto this output row (od = id * SD - PD + kd * DD, same for h), and every
// group, qgemm_block (kS32) computes, for the input columns that reach [ow0, ow1),
//   C[iw][kw * OCg + oc] = sum_ic (x[id][ih][iw][g * ICg + ic] - x_zp) * (w[...][oc][kd][kh][kw] - w_zp[oc])
// and col2im adds each C[iw][kw * OCg ..] run into the int32 accumulator of output column
// iw * SW - PW + kw * DW. Every (input row, kernel row) pair is computed once (it maps to exactly
// one output row); input columns next to a column-range boundary are computed by both
// neighbours. Finished rows are requantized with the engine's step.
void run_col2im(const Col2ImProblem& pr) {
  const Isa path = pr.isa;
  const ConvGeom& g = pr.g;
  const int64_t N = pr.images, C = g.C, D = g.D, H = g.H, W = g.W;
  const int64_t OD = g.OD, OH = g.OH, OW = g.OW;
  const int64_t OC = g.OC, G = g.groups, ICg = g.icg, OCg = g.ocg;
  const int64_t KD = g.KD, KH = g.KH, KW = g.KW;
  const int64_t ncols = KW * OCg;
  QGemmParams qbase;
  qbase.lda = C;
  qbase.a_zero_point = pr.x_zp;
  qbase.b_zero_points_all_zero = pr.b_zero_points_all_zero;
  qbase.kind = OutKind::kS32;
  qbase.ldc = ncols;

  // Tasks: output rows x column ranges. A range's accumulators stay within ~256 KiB; ranges are
  // halved (down to 16 columns) until there are 4 tasks per thread.
  const int64_t rows = N * OD * OH;
  const int64_t threads = tensor::num_threads();
  int64_t owc = std::min<int64_t>(OW, std::max<int64_t>(16, (64 * 1024) / OC));
  while (owc > 16 && rows * ((OW + owc - 1) / owc) < 4 * threads) owc = (owc + 1) / 2;
  const int64_t nchunks = (OW + owc - 1) / owc;
  const int64_t tasks = rows * nchunks;
  tensor::parallel_for(0, tasks, 1, [&](int64_t begin, int64_t end) {
    std::vector<int32_t> acc(static_cast<size_t>(owc * OC));
    std::vector<int32_t> cbuf;
    for (int64_t t = begin; t < end; ++t) {
      const int64_t r = t / nchunks;
      const int64_t ow0 = (t % nchunks) * owc, ow1 = std::min(OW, ow0 + owc);
      const int64_t oh = r % OH, od = (r / OH) % OD, n = r / (OH * OD);
      std::fill(acc.begin(), acc.begin() + (ow1 - ow0) * OC, 0);
      // input columns whose taps reach [ow0, ow1): iw * SW in [ow0 + PW - (KW - 1) * DW, ow1 - 1 + PW]
      const int64_t iw0 = std::max<int64_t>(0, floor_div(ow0 + g.PW - (KW - 1) * g.DW + g.SW - 1, g.SW));
      const int64_t iw1 = std::min<int64_t>(W, floor_div(ow1 - 1 + g.PW, g.SW) + 1);
      if (iw0 < iw1) {
        const int64_t m = iw1 - iw0;
        if (static_cast<int64_t>(cbuf.size()) < m * ncols) cbuf.resize(static_cast<size_t>(m * ncols));
        Col2ImRow cr{m, ncols, iw0, KW, g.SW, g.PW, g.DW, ow0, ow1, OCg, OC};
        for (int64_t kd = 0; kd < KD; ++kd) {
          const int64_t td = od + g.PD - kd * g.DD;
          if (td < 0 || td % g.SD != 0 || td / g.SD >= D) continue;
          const int64_t id = td / g.SD;
          for (int64_t kh = 0; kh < KH; ++kh) {
            const int64_t th = oh + g.PH - kh * g.DH;
            if (th < 0 || th % g.SH != 0 || th / g.SH >= H) continue;
            const int64_t ih = th / g.SH;
            const uint8_t* xrow = pr.x + (((n * D + id) * H + ih) * W + iw0) * C;
            for (int64_t gi = 0; gi < G; ++gi) {
              QGemmParams q = qbase;
              q.M = m;
              q.a = xrow + gi * ICg;
              q.b = &pr.b[(gi * KD + kd) * KH + kh];
              q.b_zero_points = pr.b_zero_points + gi * ncols;
              q.out = cbuf.data();
              QPLUGIN_ISA_CALL_ON(path, qgemm_block, q, 0, m, 0, ncols);
              QPLUGIN_ISA_CALL_ON(path, col2im_add_row_s32, cbuf.data(), cr, acc.data() + gi * OCg);
            }
          }
        }
      }
      QPLUGIN_ISA_CALL_ON(path, requant_rows_s32, acc.data(), ow1 - ow0, OC, pr.mult, pr.bias, pr.y_zp, 0, 255,
                          pr.y + (r * OW + ow0) * OC);
    }
  });
}

// Tasks are output rows (n, od, oh) of all OW pixels, numbered across images; a thread's range
// is cut at image boundaries. About 4096 multiply-adds per task at the least.
void run_depthwise(const DepthwiseProblem& pr) {
  const ConvGeom& g = pr.g;
  const int64_t rows = g.OD * g.OH;
  const int64_t in_img = g.D * g.H * g.W * g.C;
  const int64_t out_img = rows * g.OW * g.OC;
  const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, g.OW * g.OC * g.KD * g.KH * g.KW));
  tensor::parallel_for(0, pr.images * rows, grain, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end;) {
      const int64_t n = t / rows;
      const int64_t r0 = t % rows;
      const int64_t rc = std::min(end - t, rows - r0);
      ConvEpilogue ep = pr.ep;
      if (ep.add != nullptr) ep.add += n * out_img;
      QPLUGIN_ISA_CALL_ON(pr.isa, conv_depthwise, pr.x + n * in_img, g, r0, rc, pr.w, pr.wpk, pr.x_zp, ep,
                          pr.y + n * out_img);
      t += rc;
    }
  });
}

}  // namespace gemm
}  // namespace kernels
}  // namespace qplugin
