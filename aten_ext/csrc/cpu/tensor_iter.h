// A strided walk over a preallocated output and its broadcast inputs, row by row, in the
// output's memory order: the elementwise ops' own replacement for at::TensorIterator, reading
// only sizes, strides and data pointers (what torch's stable ABI offers too).
//
// The walk drops size-1 dimensions, orders the rest by the output's strides (innermost first),
// merges neighbours that are one dense run for every operand, and splits the element range over
// threads; a range may start or end inside a row. fn(char* const* data, const int64_t* strides,
// int64_t n) sees n elements of one row: data[k] the first element of operand k (the output
// first), strides[k] its step in bytes.
#pragma once

#include "utils/torch_api.h"

#include <algorithm>
#include <array>
#include <cstdint>

namespace qplugin {
namespace cpu {

template <int kN>
struct RowWalk {
  static constexpr int kMaxDims = 25;
  int nd = 0;                                        // dimensions after merging, innermost first
  std::array<int64_t, kMaxDims> size{};              // size of each dimension
  std::array<std::array<int64_t, kN>, kMaxDims> st;  // byte stride of each operand along it
  std::array<char*, kN> base{};
  int64_t numel = 1;

  // Pointers to linear element `pos` (in walk order) and the index of its row, outer dims.
  void seek(int64_t pos, std::array<char*, kN>& p, std::array<int64_t, kMaxDims>& idx) const {
    p = base;
    for (int d = 0; d < nd; ++d) {
      idx[d] = pos % size[d];
      pos /= size[d];
      for (int k = 0; k < kN; ++k) p[k] += idx[d] * st[d][k];
    }
  }

  // Moves p (at the first element of a row whose outer index is idx) to the next row.
  void next_row(std::array<char*, kN>& p, std::array<int64_t, kMaxDims>& idx, int from) const {
    for (int d = from; d < nd; ++d) {
      for (int k = 0; k < kN; ++k) p[k] += st[d][k];
      if (++idx[d] < size[d]) return;
      for (int k = 0; k < kN; ++k) p[k] -= size[d] * st[d][k];
      idx[d] = 0;
    }
  }

  template <typename F>
  void run(int64_t lo, int64_t hi, F& fn) const {
    std::array<char*, kN> p;
    std::array<int64_t, kMaxDims> idx;
    seek(lo, p, idx);
    const int64_t inner = size[0];
    char* call[kN];
    auto row = [&](const std::array<char*, kN>& at, int64_t n) {
      for (int k = 0; k < kN; ++k) call[k] = at[k];
      fn(call, st[0].data(), n);
    };
    int64_t pos = lo;
    if (idx[0] != 0) {  // a range that starts inside a row: the rest of that row first
      const int64_t n = std::min(inner - idx[0], hi - pos);
      row(p, n);
      pos += n;
      if (pos >= hi) return;
      for (int k = 0; k < kN; ++k) p[k] -= idx[0] * st[0][k];
      idx[0] = 0;
      next_row(p, idx, 1);
    }
    while (true) {
      // whole rows along dimension 1, then a carry into the dimensions outside it
      const int64_t rows = nd > 1 ? size[1] - idx[1] : 1;
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t n = std::min(inner, hi - pos);
        row(p, n);
        pos += n;
        if (pos >= hi) return;
        for (int k = 0; k < kN; ++k) p[k] += st[1][k];
      }
      for (int k = 0; k < kN; ++k) p[k] -= size[1] * st[1][k];
      idx[1] = 0;
      next_row(p, idx, 2);
    }
  }
};

// The walk of `out` (sizes taken as the iteration shape) and `inputs`, each broadcast to it.
template <int kN>
RowWalk<kN> row_walk(const char* op, const Tensor& out, const std::array<const Tensor*, kN - 1>& inputs) {
  RowWalk<kN> w;
  const int64_t od = out.dim();
  int64_t wide = 0;
  for (int64_t d = 0; d < od; ++d) wide += out.size(d) != 1;
  QP_CHECK(wide <= RowWalk<kN>::kMaxDims, "qplugin::", op, ": the output should have at most ", RowWalk<kN>::kMaxDims,
           " dimensions of size other than 1, got ", wide, " (shape ", out.sizes(), ")");
  const Tensor* ops[kN];
  ops[0] = &out;
  for (int k = 1; k < kN; ++k) ops[k] = inputs[k - 1];
  for (int k = 0; k < kN; ++k) w.base[k] = static_cast<char*>(const_cast<void*>(ops[k]->const_data_ptr()));
  // dimensions of size > 1, with every operand's byte stride (0 where it broadcasts)
  int nd = 0;
  for (int64_t d = 0; d < od; ++d) {
    const int64_t s = out.size(d);
    w.numel *= s;
    if (s == 1) continue;
    w.size[nd] = s;
    for (int k = 0; k < kN; ++k) {
      const Tensor& t = *ops[k];
      const int64_t td = d - (od - t.dim());
      w.st[nd][k] = td < 0 || t.size(td) == 1 ? 0 : t.stride(td) * static_cast<int64_t>(t.element_size());
    }
    ++nd;
  }
  // innermost first: ascending output stride, ties by the inputs' strides in turn; a stable sort
  // of the dims listed last-first keeps the later dim inner where all strides tie
  std::array<int, RowWalk<kN>::kMaxDims> order;
  for (int i = 0; i < nd; ++i) order[i] = nd - 1 - i;
  std::stable_sort(order.begin(), order.begin() + nd, [&](int x, int y) {
    return w.st[x] < w.st[y];
  });
  RowWalk<kN> m = w;
  m.nd = 0;
  for (int i = 0; i < nd; ++i) {
    const int d = order[i];
    if (m.nd > 0) {
      const int j = m.nd - 1;
      bool merge = true;
      for (int k = 0; k < kN; ++k) merge = merge && w.st[d][k] == m.st[j][k] * m.size[j];
      if (merge) {
        m.size[j] *= w.size[d];
        continue;
      }
    }
    m.size[m.nd] = w.size[d];
    m.st[m.nd] = w.st[d];
    ++m.nd;
  }
  if (m.nd == 0) {  // one element
    m.nd = 1;
    m.size[0] = 1;
    m.st[0].fill(0);
  }
  return m;
}

// fn over every row of the walk, the element range split over threads in chunks of at least `grain`;
// `op` names the caller in errors.
template <int kN, typename F>
void for_each_row(const char* op, const Tensor& out, const std::array<const Tensor*, kN - 1>& inputs, F fn,
                  int64_t grain) {
  const RowWalk<kN> w = row_walk<kN>(op, out, inputs);
  if (w.numel == 0) return;
  if (w.numel < grain || tensor::num_threads() == 1) {
    w.run(0, w.numel, fn);
    return;
  }
  tensor::parallel_for(0, w.numel, grain, [&](int64_t lo, int64_t hi) {
    w.run(lo, hi, fn);
  });
}

}  // namespace cpu
}  // namespace qplugin
