// Compiled once per ISA (kernels/isa.h). 8-bit data is sorted by counting
// (histogram + stable scatter), never by comparisons; topk finds its threshold
// key from a histogram, after a vector pass over 64-byte block maxima has
// ruled out most of the data. 32-bit keys use an LSD radix sort.
#include "kernels/sort_kernel.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

#include "kernels/bytes_simd.h"

namespace qplugin {
namespace kernels {
namespace QPLUGIN_ISA_NS {
namespace {

using bytes::kBlock;

// Prefix sums of counts in ascending key order: cursor[k] = first slot of key k.
inline void ascending_cursors(const int64_t* counts, int64_t* cursor) {
  int64_t pos = 0;
  for (int k = 0; k < 256; ++k) {
    cursor[k] = pos;
    pos += counts[k];
  }
}

inline void fill_values(const int64_t* counts, uint8_t mask, uint8_t* values) {
  int64_t pos = 0;
  for (int k = 0; k < 256; ++k) {
    if (counts[k]) std::memset(values + pos, k ^ mask, static_cast<size_t>(counts[k]));
    pos += counts[k];
  }
}

inline uint32_t radix_key(int32_t k) { return static_cast<uint32_t>(k) ^ 0x80000000u; }

// Stable LSD radix sort of (key, index) by key; 4 passes of 8 bits, a pass is
// skipped when every key has the same digit.
void radix_sort_row(const int32_t* keys, int64_t n, int64_t* idx) {
  std::vector<uint32_t> ka(n), kb(n);
  std::vector<int64_t> ib(n);
  for (int64_t i = 0; i < n; ++i) {
    ka[i] = radix_key(keys[i]);
    idx[i] = i;
  }
  uint32_t* ks = ka.data();
  uint32_t* kd = kb.data();
  int64_t* is = idx;
  int64_t* id = ib.data();
  for (int shift = 0; shift < 32; shift += 8) {
    int64_t counts[256] = {};
    for (int64_t i = 0; i < n; ++i) counts[(ks[i] >> shift) & 0xFF]++;
    if (counts[(ks[0] >> shift) & 0xFF] == n) continue;
    int64_t cursor[256];
    ascending_cursors(counts, cursor);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t p = cursor[(ks[i] >> shift) & 0xFF]++;
      kd[p] = ks[i];
      id[p] = is[i];
    }
    std::swap(ks, kd);
    std::swap(is, id);
  }
  if (is != idx) std::memcpy(idx, is, static_cast<size_t>(n) * sizeof(int64_t));
}

}  // namespace

void hist_u8(const uint8_t* x, int64_t n, uint8_t mask, int64_t* counts) {
  if (n < 1024) {
    for (int64_t i = 0; i < n; ++i) counts[x[i] ^ mask]++;
    return;
  }
  // Four sub-histograms break the store-to-load chains of equal neighbours.
  for (int64_t base = 0; base < n; base += (int64_t{1} << 30)) {
    const int64_t len = std::min<int64_t>(n - base, int64_t{1} << 30);
    const uint8_t* p = x + base;
    uint32_t c[4][256] = {};
    int64_t i = 0;
    for (; i + 4 <= len; i += 4) {
      c[0][p[i] ^ mask]++;
      c[1][p[i + 1] ^ mask]++;
      c[2][p[i + 2] ^ mask]++;
      c[3][p[i + 3] ^ mask]++;
    }
    for (; i < len; ++i) c[0][p[i] ^ mask]++;
    for (int k = 0; k < 256; ++k) counts[k] += int64_t{c[0][k]} + c[1][k] + c[2][k] + c[3][k];
  }
}

void scatter_u8(const uint8_t* x, int64_t n, uint8_t mask, int64_t base, int64_t* cursor, int64_t* idx) {
  int64_t i = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  // Eight keys per 64-bit load (byte j = x[i + j]): fewer loads per element;
  // the cursor updates stay in element order, so the scatter stays stable.
  const uint64_t m8 = 0x0101010101010101ull * mask;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, x + i, 8);
    w ^= m8;
    const int64_t v = base + i;
    idx[cursor[w & 0xFF]++] = v;
    idx[cursor[(w >> 8) & 0xFF]++] = v + 1;
    idx[cursor[(w >> 16) & 0xFF]++] = v + 2;
    idx[cursor[(w >> 24) & 0xFF]++] = v + 3;
    idx[cursor[(w >> 32) & 0xFF]++] = v + 4;
    idx[cursor[(w >> 40) & 0xFF]++] = v + 5;
    idx[cursor[(w >> 48) & 0xFF]++] = v + 6;
    idx[cursor[w >> 56]++] = v + 7;
  }
#endif
  for (; i < n; ++i) idx[cursor[x[i] ^ mask]++] = base + i;
}

void sort_rows_u8(const uint8_t* x, int64_t rows, int64_t n, uint8_t mask, uint8_t* values, int64_t* idx) {
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* xr = x + r * n;
    int64_t counts[256] = {};
    hist_u8(xr, n, mask, counts);
    if (values) fill_values(counts, mask, values + r * n);
    if (idx) {
      int64_t cursor[256];
      ascending_cursors(counts, cursor);
      scatter_u8(xr, n, mask, 0, cursor, idx + r * n);
    }
  }
}

namespace {

constexpr int64_t kSmallK = 16;

// Small k: one pass keeping the best k (key descending, then index ascending)
// in a sorted list; 64-byte blocks with no key above the current k-th key are
// skipped by a vector compare, and the scan stops once the list is all 255.
void topk_small_u8(const uint8_t* x, int64_t n, int64_t k, uint8_t mask, uint8_t* values, int64_t* idx) {
  uint8_t key[kSmallK];
  int64_t pos[kSmallK];
  int64_t len = 0;
  auto insert = [&](int64_t i) {
    const uint8_t kk = static_cast<uint8_t>(x[i] ^ mask);
    if (len == k && kk <= key[k - 1]) return;
    int64_t j = len < k ? len++ : k - 1;
    while (j > 0 && key[j - 1] < kk) {  // after every equal key: ties keep index order
      key[j] = key[j - 1];
      pos[j] = pos[j - 1];
      --j;
    }
    key[j] = kk;
    pos[j] = i;
  };
  int64_t i = 0;
  for (; i < n && len < k; ++i) insert(i);
  const int64_t nb = n / kBlock;
  for (int64_t b = (i + kBlock - 1) / kBlock; b < nb; ++b) {
    for (; i < b * kBlock; ++i) insert(i);  // up to the block boundary
    if (key[k - 1] == 255) break;
    // Four blocks with nothing above the k-th key are skipped after one check.
    while (b + 4 <= nb && !bytes::any_ge256(x + b * kBlock, mask, static_cast<uint8_t>(key[k - 1] + 1))) b += 4;
    i = b * kBlock;
    if (b >= nb) break;
    const uint64_t bits = bytes::block_ge64(x + b * kBlock, mask, static_cast<uint8_t>(key[k - 1] + 1));
    i = (b + 1) * kBlock;
    for (uint64_t m = bits; m; m &= m - 1) insert(b * kBlock + __builtin_ctzll(m));
  }
  if (key[k - 1] != 255) {
    for (; i < n; ++i) insert(i);
  }
  for (int64_t j = 0; j < k; ++j) {
    if (values) values[j] = static_cast<uint8_t>(key[j] ^ mask);
    if (idx) idx[j] = pos[j];
  }
}

}  // namespace

void topk_u8(const uint8_t* x, int64_t n, int64_t k, uint8_t mask, uint8_t* values, int64_t* idx) {
  if (k <= 0 || n <= 0) return;
  if (k <= kSmallK && k < n) {
    topk_small_u8(x, n, k, mask, values, idx);
    return;
  }
  const int64_t nb = n / kBlock;  // full blocks; the tail is scanned element by element
  const int64_t tail = nb * kBlock;
  int64_t counts[256] = {};
  std::vector<uint8_t> bmax;
  int lower = 0;  // every selected key is >= lower
  const bool prefilter = nb >= 64 && k <= nb / 4;
  if (prefilter) {
    // The k-th largest key is >= the k-th largest block maximum: k blocks each
    // hold an element at least that large. Blocks below it hold no candidate.
    bmax.resize(static_cast<size_t>(nb));
    int64_t bh[256] = {};
    for (int64_t b = 0; b < nb; ++b) {
      bmax[b] = bytes::block_max64(x + b * kBlock, mask);
      bh[bmax[b]]++;
    }
    int64_t c = 0;
    for (lower = 255; lower > 0; --lower) {
      c += bh[lower];
      if (c >= k) break;
    }
    for (int64_t b = 0; b < nb; ++b) {
      if (bmax[b] < lower) continue;
      const uint8_t* p = x + b * kBlock;
      for (uint64_t bits = bytes::block_ge64(p, mask, static_cast<uint8_t>(lower)); bits; bits &= bits - 1) {
        counts[p[__builtin_ctzll(bits)] ^ mask]++;
      }
    }
    for (int64_t i = tail; i < n; ++i) {
      const int key = x[i] ^ mask;
      if (key >= lower) counts[key]++;
    }
  } else {
    hist_u8(x, n, mask, counts);
  }
  // Threshold t: keys > t all go in (`above` of them), plus the first `need` keys == t.
  int64_t above = 0;
  int t = 255;
  for (; t > 0; --t) {
    if (above + counts[t] >= k) break;
    above += counts[t];
  }
  const int64_t need = k - above;
  int64_t cursor[256], limit[256];
  int64_t pos = 0;
  for (int key = 255; key >= 0; --key) {
    const int64_t take = key > t ? counts[key] : key == t ? need : 0;
    cursor[key] = pos;
    limit[key] = pos + take;
    if (take && values) std::memset(values + pos, key ^ mask, static_cast<size_t>(take));
    pos += take;
  }
  if (!idx) return;
  int64_t placed = 0;
  auto visit = [&](int64_t i) {
    const int key = x[i] ^ mask;
    if (cursor[key] < limit[key]) {
      idx[cursor[key]++] = i;
      ++placed;
    }
  };
  const uint8_t tt = static_cast<uint8_t>(t);
  for (int64_t b = 0; b < nb && placed < k; ++b) {
    if (prefilter && bmax[b] < tt) continue;
    for (uint64_t bits = bytes::block_ge64(x + b * kBlock, mask, tt); bits; bits &= bits - 1) {
      visit(b * kBlock + __builtin_ctzll(bits));
    }
  }
  for (int64_t i = tail; i < n && placed < k; ++i) visit(i);
}

void sort_rows_s32(const int32_t* keys, int64_t rows, int64_t n, int64_t* idx) {
  for (int64_t r = 0; r < rows; ++r) {
    const int32_t* kr = keys + r * n;
    int64_t* ir = idx + r * n;
    if (n <= 64) {  // insertion sort: stable, fine for short rows
      for (int64_t i = 0; i < n; ++i) {
        int64_t j = i;
        while (j > 0 && kr[ir[j - 1]] > kr[i]) {
          ir[j] = ir[j - 1];
          --j;
        }
        ir[j] = i;
      }
    } else {
      radix_sort_row(kr, n, ir);
    }
  }
}

void topk_s32(const int32_t* keys, int64_t n, int64_t k, int64_t* idx) {
  if (k <= 0) return;
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) order[i] = i;
  auto before = [keys](int64_t a, int64_t b) {
    return keys[a] > keys[b] || (keys[a] == keys[b] && a < b);
  };
  std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
  std::memcpy(idx, order.data(), static_cast<size_t>(k) * sizeof(int64_t));
}

}  // namespace QPLUGIN_ISA_NS
}  // namespace kernels
}  // namespace qplugin
