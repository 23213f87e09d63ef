// Exact comparison of represented real values (q - zp) * scale.
//
// d * s (|d| < 2^53 an integer, s a positive finite double) is p + e exactly, with
// p = d * s rounded to double and e = fma(d, s, -p) the rounding error (exact: no
// underflow for |d| >= 1 and s >= 1e-300). Rounding is monotone and maps equal
// reals to equal doubles, so for two such reals x1 = p1 + e1, x2 = p2 + e2:
//   p1 != p2  =>  sign(x1 - x2) = sign(p1 - p2);   p1 == p2  =>  sign(x1 - x2) = sign(e1 - e2).
// A double c compares as (c, 0). Used where float32 dequantize would round distinct
// qint32 values to equal floats (comparators; docs/design/sort.md).
#pragma once

#include <cmath>
#include <cstdint>

namespace qplugin {

struct ExactReal {
  double p = 0.0;  // rounded value
  double e = 0.0;  // exact error: value = p + e
};

inline ExactReal exact_real(int64_t d, double s) {
  const double dd = static_cast<double>(d);  // exact: |d| < 2^53
  const double p = dd * s;
  return {p, std::fma(dd, s, -p)};
}

// -1, 0 or 1: the sign of x - y (neither may be NaN).
inline int exact_cmp(const ExactReal& x, const ExactReal& y) {
  if (x.p != y.p) return x.p < y.p ? -1 : 1;
  if (x.e != y.e) return x.e < y.e ? -1 : 1;
  return 0;
}

}  // namespace qplugin
