// A 1-D inner-loop adaptor for TensorIterator::for_each that avoids aten's
// loop_2d_from_1d (GCC 12 reports a false -Wmaybe-uninitialized inside it).
#pragma once

#include <ATen/TensorIterator.h>

namespace qplugin {
namespace cpu {

// An iterator over a preallocated output and its (broadcast) integer inputs:
// mixed dtypes allowed, no resizing, no overlap check (outputs are fresh).
inline at::TensorIterator rows_iter(const at::Tensor& out, std::initializer_list<at::Tensor> inputs) {
  at::TensorIteratorConfig cfg;
  cfg.set_check_mem_overlap(false).check_all_same_dtype(false).resize_outputs(false).add_output(out);
  for (const auto& t : inputs) cfg.add_const_input(t);
  return cfg.build();
}

// fn(char** data, const int64_t* strides, int64_t n) over every inner row;
// kN = number of operands (outputs first).
template <int kN, typename F>
void for_each_row(at::TensorIteratorBase& iter, F fn, int64_t grain) {
  TORCH_INTERNAL_ASSERT(iter.ntensors() == kN);
  iter.for_each(
      [&](char** base, const int64_t* strides, int64_t size0, int64_t size1) {
        char* data[kN];
        for (int k = 0; k < kN; ++k) data[k] = base[k];
        for (int64_t j = 0; j < size1; ++j) {
          if (j > 0) {
            for (int k = 0; k < kN; ++k) data[k] += strides[kN + k];
          }
          fn(data, strides, size0);
        }
      },
      grain);
}

}  // namespace cpu
}  // namespace qplugin
