"""Probes the plain ops on torch's stable ABI: one build against the stable headers of one torch,
loaded, checked and timed under several torch versions.

Compiles (g++, -O2, no -march=native) into a temporary directory:
  * the library's avx2 kernels for three families (kernels/{add,activation,quantize}_kernel.cpp,
    torch-free), once;
  * the stable probe: qplugin_stable_probe::plain_add / plain_relu / plain_quantize_per_tensor with
    the schemas and arithmetic of qplugin::plain_* (dense inputs; plain_add: equal shapes or a
    1-element b), written on torch/csrc/stable and torch/headeronly only (torch::stable::Tensor,
    STABLE_TORCH_LIBRARY, TORCH_BOX, torch::stable::parallel_for / contiguous,
    aoti_torch_empty_strided with strides computed here) and built with
    -DTORCH_TARGET_VERSION=<the build torch's major.minor> against the build torch's headers.
    plain_relu_boxed_empty allocates through torch::stable::empty (a boxed dispatcher call)
    instead; args_conv2d_add takes plain_conv2d_add's 17 arguments and does nothing (the boxing
    cost of the longest plain schema); probe_version reads a version counter through the dispatcher
    (aten::is_inference, aten::_version: the caches' key); probe_* ask which schema kinds and which C++
    exception types cross the stable boundary, and what an error inside a shim call looks like;
  * per torch version run, the same ops on the ATen API (TORCH_LIBRARY, at::empty,
    at::parallel_for): qplugin_aten_probe::*, the baseline. Both builds share COMMON_SRC (checks,
    kernel parameters and calls), so they differ only in the torch API.

Then, in a fresh process per torch (--python, repeatable; a python without torch is reported and
skipped), with 1 thread and QPLUGIN_ISA=avx2 (the kernels the probe links), it loads the one stable
build, checks its outputs bit for bit against a float reference written from the definitions, the
ATen twin, and torch.ops.qplugin.plain_* when torch_qplugin imports there (values, dtype and
strides: flat, channels_last, strided, empty, one element; uint8 / int8), runs
torch.library.opcheck on the stable ops with Python fakes, and times calls from Python: the
variants of one op and size interleaved in shuffled order, each sample `--calls` calls, `--rounds`
samples; reported: the best sample's time per call and the median. nm / readelf of the stable
build show what it imports.

    python scripts/bench.py stable-abi --build-python /work/venvs/v213q/bin/python \\
        --python /work/venvs/v213q/bin/python --python /work/venvs/v214/bin/python \\
        --python /work/venvs/v215/bin/python

A benchmark / probe, not a test: it changes nothing in the tree and the test suite does not run it.
"""

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from benchlib import BENCH
from benchlib import ROOT as _ROOT

ROOT = str(_ROOT)
CSRC = os.path.join(ROOT, "aten_ext", "csrc")
KERNELS = ("add", "activation", "quantize")
ISA_FLAGS = ["-mavx2", "-mfma", "-mf16c", "-mbmi2", "-DQPLUGIN_ISA_AVX2=1"]
CXX = ["g++", "-O2", "-std=c++17", "-fPIC", "-ffp-contract=off"]

COMMON_SRC = r"""
// Torch-free parts of both probe builds: qparam checks, the kernels' parameters and calls on raw
// pointers (the library's avx2 kernels), so that the two builds differ only in their torch API.
// The including file defines PROBE_CHECK(cond, ...) (its torch's check macro).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>

#include "kernels/activation_kernel.h"
#include "kernels/add_kernel.h"
#include "kernels/quantize_kernel.h"
#include "kernels/quantize_math.h"

// The schemas both builds register: qplugin::plain_*'s, and plain_conv2d_add's arguments.
#define PROBE_SCHEMAS(DEF)                                                                                       \
  DEF("plain_quantize_per_tensor(Tensor self, float scale, int zero_point, ScalarType dtype) -> Tensor")         \
  DEF("plain_add(Tensor a, float a_scale, int a_zero_point, Tensor b, float b_scale, int b_zero_point, "          \
      "float scale, int zero_point) -> Tensor")                                                                 \
  DEF("plain_relu(Tensor x, float x_scale, int x_zero_point) -> Tensor")                                         \
  DEF("args_conv2d_add(Tensor x, float x_scale, int x_zero_point, Tensor accum, float accum_scale, "             \
      "int accum_zero_point, Tensor w, Tensor w_scales, Tensor w_zero_points, Tensor? bias, Tensor packed, "     \
      "int[] stride, int[] padding, int[] dilation, int groups, float output_scale, int output_zero_point) "     \
      "-> Tensor")

namespace probe {

namespace K = qplugin::kernels::avx2;
constexpr int64_t kGrain = 1 << 15;  // elements per task, as cpu/add.cpp

enum class Dt { kU8, kS8, kS32, kOther };

inline std::pair<int64_t, int64_t> qrange(Dt t) {
  if (t == Dt::kU8) return {0, 255};
  if (t == Dt::kS8) return {-128, 127};
  return {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()};
}

inline void check_scale(const char* op, const char* arg, double scale) {
  PROBE_CHECK(std::isfinite(scale) && scale > 0, "qplugin::", op, ": ", arg, " should be a positive finite number, got ",
              scale);
  const float fs = static_cast<float>(scale);
  PROBE_CHECK(fs > 0.0f && std::isfinite(qplugin::kernels::inv_scale_of(scale)) && std::isfinite(fs), "qplugin::", op,
              ": ", arg, " should be representable as a float32 with a finite reciprocal, got ", scale);
}

inline void check_zero_point(const char* op, const char* arg, int64_t zp, Dt t) {
  const auto r = qrange(t);
  PROBE_CHECK(zp >= r.first && zp <= r.second, "qplugin::", op, ": ", arg, " should be in [", r.first, ", ", r.second,
              "], got ", zp);
}

// plain_add's checks of every qparam and the requantize multiplier bound.
inline void check_add_qparams(const char* op, double a_scale, int64_t a_zp, double b_scale, int64_t b_zp, double scale,
                              int64_t zero_point, Dt qt) {
  check_scale(op, "a_scale", a_scale);
  check_scale(op, "b_scale", b_scale);
  check_scale(op, "scale", scale);
  check_zero_point(op, "a_zero_point", a_zp, qt);
  check_zero_point(op, "b_zero_point", b_zp, qt);
  check_zero_point(op, "zero_point", zero_point, qt);
  PROBE_CHECK(a_scale / scale <= 32768.0 && b_scale / scale <= 32768.0, "qplugin::", op,
              ": scale should be at least in_scale / 2^15");
}

inline qplugin::kernels::BinaryParams add_params(double a_scale, int64_t a_zp, double b_scale, int64_t b_zp,
                                                 double scale, int64_t zero_point, Dt qt) {
  qplugin::kernels::BinaryParams p{};
  p.za = static_cast<int32_t>(a_zp);
  p.zb = static_cast<int32_t>(b_zp);
  p.zo = static_cast<int32_t>(zero_point);
  p.da = a_scale / scale;
  p.db = b_scale / scale;
  p.fa = static_cast<float>(p.da);
  p.fb = static_cast<float>(p.db);
  p.lo = static_cast<int32_t>(qrange(qt).first);
  p.hi = static_cast<int32_t>(qrange(qt).second);
  return p;
}

// Elements [b, e) of y = add(a, b) (b dense: bs = 1, or one value: bs = 0; es: element size).
inline void add_range(Dt qt, const char* ap, const char* bp, char* yp, int64_t es, int64_t bs, int64_t b, int64_t e,
                      const qplugin::kernels::BinaryParams& p) {
  const qplugin::kernels::Strided s{ap + b * es, 1, bp + b * bs * es, bs, yp + b * es, 1};
  if (qt == Dt::kU8) {
    K::add_u8(s, e - b, p);
  } else if (qt == Dt::kS8) {
    K::add_s8(s, e - b, p);
  } else {
    K::add_s32(s, e - b, p);
  }
}

// Elements [b, e) of y = clamp(x, lo, hi).
inline void clamp_range(Dt dt, const void* xp, void* yp, int64_t b, int64_t e, int32_t lo, int32_t hi) {
  if (dt == Dt::kS32) {
    K::clamp_s32(static_cast<const int32_t*>(xp) + b, static_cast<int32_t*>(yp) + b, e - b, lo, hi);
  } else if (dt == Dt::kS8) {
    K::clamp_s8(static_cast<const int8_t*>(xp) + b, static_cast<int8_t*>(yp) + b, e - b, lo, hi);
  } else {
    K::clamp_u8(static_cast<const uint8_t*>(xp) + b, static_cast<uint8_t*>(yp) + b, e - b, lo, hi);
  }
}

// Elements [b, e) of y = quantize(x) to 8 bits.
inline void quantize_range(Dt dt, const float* xp, void* yp, int64_t b, int64_t e, float inv, int32_t zp) {
  if (dt == Dt::kU8) {
    K::quantize_u8(xp + b, static_cast<uint8_t*>(yp) + b, e - b, inv, zp);
  } else {
    K::quantize_s8(xp + b, static_cast<int8_t*>(yp) + b, e - b, inv, zp);
  }
}

}  // namespace probe
"""

STABLE_SRC = r"""
// Three plain ops on torch's stable ABI (torch/csrc/stable, headeronly): the schemas and arithmetic
// of qplugin::plain_add / plain_relu / plain_quantize_per_tensor (dense inputs), run by the
// library's own avx2 kernels. Built with TORCH_TARGET_VERSION = 2.13: nothing from ATen / c10.
#include <torch/csrc/inductor/aoti_torch/c/shim.h>
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>
#include <torch/csrc/stable/tensor.h>
#include <torch/headeronly/util/Exception.h>

#include <stdexcept>
#include <vector>

#define PROBE_CHECK(cond, ...) STD_TORCH_CHECK(cond, __VA_ARGS__)
#include "probe_common.h"

namespace {

using probe::Dt;
using torch::headeronly::ScalarType;
using torch::stable::Tensor;

Dt dt_of(ScalarType t) {
  return t == ScalarType::Byte ? Dt::kU8 : t == ScalarType::Char ? Dt::kS8 : t == ScalarType::Int ? Dt::kS32 : Dt::kOther;
}

enum class Fmt { kContiguous, kChannelsLast };

// c10's is_channels_last_strides_2d_s4 (what suggest_memory_format reads for a 4-d tensor).
Fmt kept_format(const Tensor& t) {
  if (t.dim() != 4) return Fmt::kContiguous;
  const auto sizes = t.sizes();
  const auto strides = t.strides();
  int64_t min = 0;
  if (strides[1] == 0) return Fmt::kContiguous;
  for (int d : {1, 3, 2, 0}) {
    if (sizes[d] == 0 || strides[d] < min) return Fmt::kContiguous;
    if (d == 0 && min == strides[1]) return Fmt::kContiguous;
    min = strides[d];
    if (sizes[d] > 1) min *= sizes[d];
  }
  return Fmt::kChannelsLast;
}

std::vector<int64_t> dense_strides(const std::vector<int64_t>& sizes, Fmt f) {
  const size_t n = sizes.size();
  std::vector<int64_t> st(n);
  std::vector<size_t> order;  // innermost first
  if (f == Fmt::kChannelsLast) {
    order = {1, 3, 2, 0};
  } else {
    for (size_t i = n; i-- > 0;) order.push_back(i);
  }
  int64_t s = 1;
  for (size_t d : order) {
    st[d] = s;
    s *= std::max<int64_t>(sizes[d], 1);
  }
  return st;
}

// Dense in `f` (size-1 dims' strides ignored, as torch's is_contiguous(memory_format)).
bool is_dense(const Tensor& t, Fmt f) {
  if (f == Fmt::kContiguous) return t.is_contiguous();
  const auto sizes = t.sizes();
  const auto strides = t.strides();
  int64_t expected = 1;
  for (int d : {1, 3, 2, 0}) {
    if (sizes[d] == 1) continue;
    if (strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

int32_t shim_dtype(ScalarType t) {
  switch (t) {
    case ScalarType::Byte: return aoti_torch_dtype_uint8();
    case ScalarType::Char: return aoti_torch_dtype_int8();
    case ScalarType::Int: return aoti_torch_dtype_int32();
    default: return aoti_torch_dtype_float32();
  }
}

// The output: uninitialized, `sizes` dense in `f`, through the C shim (no dispatcher call).
Tensor new_dense(const std::vector<int64_t>& sizes, ScalarType dt, Fmt f) {
  const auto st = dense_strides(sizes, f);
  AtenTensorHandle h;
  STABLE_TORCH_ERROR_CODE_CHECK(aoti_torch_empty_strided(static_cast<int64_t>(sizes.size()), sizes.data(), st.data(),
                                                         shim_dtype(dt), aoti_torch_device_type_cpu(), 0, &h));
  return Tensor(h);
}

// The same through torch::stable::empty (a boxed call of aten::empty.memory_format).
Tensor new_dense_boxed(const std::vector<int64_t>& sizes, ScalarType dt, Fmt f) {
  return torch::stable::empty(sizes, dt, std::nullopt, std::nullopt, std::nullopt,
                              f == Fmt::kChannelsLast ? torch::headeronly::MemoryFormat::ChannelsLast
                                                      : torch::headeronly::MemoryFormat::Contiguous);
}

Tensor dense_input(const Tensor& x, Fmt f) {
  if (is_dense(x, f)) return x;
  return torch::stable::contiguous(x, f == Fmt::kChannelsLast ? torch::headeronly::MemoryFormat::ChannelsLast
                                                               : torch::headeronly::MemoryFormat::Contiguous);
}

std::vector<int64_t> sizes_of(const Tensor& t) {
  const auto s = t.sizes();
  return std::vector<int64_t>(s.begin(), s.end());
}

void check_int_input(const char* op, const char* arg, const Tensor& t) {
  STD_TORCH_CHECK(dt_of(t.scalar_type()) != Dt::kOther, "qplugin::", op, ": ", arg,
                  " should be a uint8, int8 or int32 tensor, got dtype ", torch::headeronly::toString(t.scalar_type()));
}

// ---- plain_relu ----
template <bool kBoxedAlloc>
Tensor plain_relu(const Tensor& x, double x_scale, int64_t x_zp) {
  constexpr const char* op = "plain_relu";
  check_int_input(op, "x", x);
  probe::check_scale(op, "input scale", x_scale);
  const ScalarType dt = x.scalar_type();
  probe::check_zero_point(op, "input zero_point", x_zp, dt_of(dt));
  const Fmt f = kept_format(x);
  const std::vector<int64_t> sizes = sizes_of(x);
  Tensor out = kBoxedAlloc ? new_dense_boxed(sizes, dt, f) : new_dense(sizes, dt, f);
  const Tensor xc = dense_input(x, f);
  const int64_t n = xc.numel();
  if (n == 0) return out;
  const int32_t lo = static_cast<int32_t>(x_zp), hi = static_cast<int32_t>(probe::qrange(dt_of(dt)).second);
  const void* xp = xc.const_data_ptr();
  void* yp = out.mutable_data_ptr();
  const int64_t es = static_cast<int64_t>(xc.element_size());
  torch::stable::parallel_for(0, n, std::max<int64_t>(1, probe::kGrain / es), [&](int64_t b, int64_t e) {
    probe::clamp_range(dt_of(dt), xp, yp, b, e, lo, hi);
  });
  return out;
}

// ---- plain_add (dense operands of one shape, or a single-element operand) ----
Tensor plain_add(const Tensor& a, double a_scale, int64_t a_zp, const Tensor& b, double b_scale, int64_t b_zp,
                 double scale, int64_t zero_point) {
  constexpr const char* op = "plain_add";
  check_int_input(op, "a", a);
  check_int_input(op, "b", b);
  const ScalarType qt = a.scalar_type();
  STD_TORCH_CHECK(b.scalar_type() == qt, "qplugin::", op, ": b should have the dtype of a");
  probe::check_add_qparams(op, a_scale, a_zp, b_scale, b_zp, scale, zero_point, dt_of(qt));
  const bool same = a.sizes().equals(b.sizes());
  STD_TORCH_CHECK(same || b.numel() == 1, "qplugin::", op, ": the probe takes equal shapes or a 1-element b");
  const Fmt f = kept_format(a);
  const std::vector<int64_t> sizes = sizes_of(a);
  Tensor out = new_dense(sizes, qt, f);
  const int64_t n = out.numel();
  if (n == 0) return out;
  const Tensor ac = dense_input(a, f);
  const Tensor bc = b.numel() == 1 ? b : dense_input(b, f);
  const auto p = probe::add_params(a_scale, a_zp, b_scale, b_zp, scale, zero_point, dt_of(qt));
  const char* ap = static_cast<const char*>(ac.const_data_ptr());
  const char* bp = static_cast<const char*>(bc.const_data_ptr());
  char* yp = static_cast<char*>(out.mutable_data_ptr());
  const int64_t es = static_cast<int64_t>(ac.element_size());
  const int64_t bs = same ? 1 : 0;
  torch::stable::parallel_for(0, n, probe::kGrain, [&](int64_t lo, int64_t hi) {
    probe::add_range(dt_of(qt), ap, bp, yp, es, bs, lo, hi, p);
  });
  return out;
}

// ---- plain_quantize_per_tensor (float32 in, 8-bit out) ----
Tensor plain_quantize_per_tensor(const Tensor& self, double scale, int64_t zero_point, ScalarType dtype) {
  constexpr const char* op = "plain_quantize_per_tensor";
  STD_TORCH_CHECK(dtype == ScalarType::Byte || dtype == ScalarType::Char, "qplugin::", op,
                  ": the probe quantizes to torch.uint8 / int8");
  probe::check_scale(op, "scale", scale);
  probe::check_zero_point(op, "zero_point", zero_point, dt_of(dtype));
  STD_TORCH_CHECK(self.scalar_type() == ScalarType::Float, "qplugin::", op, ": self should be a float32 tensor");
  const Fmt f = kept_format(self);
  const Tensor x = dense_input(self, f);
  Tensor out = new_dense(sizes_of(x), dtype, f);
  const int64_t n = x.numel();
  if (n == 0) return out;
  const float inv = qplugin::kernels::inv_scale_of(scale);
  const int32_t zp = static_cast<int32_t>(zero_point);
  const float* xp = static_cast<const float*>(x.const_data_ptr());
  void* yp = out.mutable_data_ptr();
  torch::stable::parallel_for(0, n, probe::kGrain / 4, [&](int64_t b, int64_t e) {
    probe::quantize_range(dt_of(dtype), xp, yp, b, e, inv, zp);
  });
  return out;
}

// ---- the longest plain schema (plain_conv2d_add's 17 arguments), arguments only: the boxing
// cost per argument (5 tensor handles, an optional one, 3 int lists); returns an empty uint8 tensor.
Tensor args_conv2d_add(const Tensor& x, double, int64_t, const Tensor& accum, double, int64_t, const Tensor& w,
                       const Tensor& w_scales, const Tensor& w_zero_points, const std::optional<Tensor>& bias,
                       const Tensor& packed, const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
                       const std::vector<int64_t>& dilation, int64_t groups, double, int64_t) {
  STD_TORCH_CHECK(stride.size() == 2 && padding.size() == 2 && dilation.size() == 2 && groups > 0, "args");
  (void)x, (void)accum, (void)w, (void)w_scales, (void)w_zero_points, (void)bias, (void)packed;
  return new_dense({0}, ScalarType::Byte, Fmt::kContiguous);
}

// ---- a tensor's version counter (the caches' key): aten::is_inference and aten::_version are
// ops, so the stable build reads them through the dispatcher (an inference tensor has none: -1).
bool call_bool(const char* name, const Tensor& x) {
  StableIValue stack[1] = {torch::stable::detail::from(x)};
  STABLE_TORCH_ERROR_CODE_CHECK(torch_call_dispatcher(name, "", stack, TORCH_ABI_VERSION));
  return torch::stable::detail::to<bool>(stack[0]);
}
int64_t probe_version(const Tensor& x) {
  if (call_bool("aten::is_inference", x)) return -1;
  StableIValue stack[1] = {torch::stable::detail::from(x)};
  STABLE_TORCH_ERROR_CODE_CHECK(torch_call_dispatcher("aten::_version", "", stack, TORCH_ABI_VERSION));
  return torch::stable::detail::to<int64_t>(stack[0]);
}

// ---- probes: which exceptions reach Python as which type ----
int64_t probe_raise(int64_t kind) {
  switch (kind) {
    case 0: STD_TORCH_CHECK(false, "probe: STD_TORCH_CHECK");
    case 1: throw std::invalid_argument("probe: std::invalid_argument");
    case 2: throw std::out_of_range("probe: std::out_of_range");
    case 3: throw std::domain_error("probe: std::domain_error");
    case 4: throw std::logic_error("probe: std::logic_error");
    default: return kind;
  }
}

// An error inside a torch call made through the shim (aten::reshape to a wrong size): what type
// and message reach Python, and what the 2.13 headers' STABLE_TORCH_ERROR_CODE_CHECK prints.
int64_t probe_shim_error(const Tensor& x) {
  const int64_t wrong[] = {x.numel() + 1};
  return torch::stable::reshape(x, wrong).numel();
}

// Argument / return kinds of the plain schemas: a raw boxed kernel that only answers; torch's
// IValue <-> StableIValue conversion runs (or refuses) before and after it.
void probe_kind(StableIValue* stack, uint64_t num_args, uint64_t num_outputs) {
  (void)num_args;
  if (num_outputs == 2) {
    stack[0] = torch::stable::detail::from(1.5);
    stack[1] = torch::stable::detail::from(int64_t{2});
  } else {
    stack[0] = torch::stable::detail::from(int64_t{7});
  }
}
// Tensor-carrying kinds: convert (and so release) what arrives.
int64_t probe_tensor_list(std::vector<Tensor> xs) { return static_cast<int64_t>(xs.size()); }
int64_t probe_opt_tensor(std::optional<Tensor> x) { return x.has_value() ? 1 : 0; }
int64_t probe_double_list(std::vector<double> xs) { return static_cast<int64_t>(xs.size()); }
int64_t probe_opt_int_list(std::optional<std::vector<int64_t>> xs) { return xs ? static_cast<int64_t>(xs->size()) : -1; }
std::tuple<Tensor, Tensor> probe_two_tensors(const Tensor& x) { return {x, x}; }
int64_t probe_scalar_type(ScalarType t) { return static_cast<int64_t>(t); }

}  // namespace

STABLE_TORCH_LIBRARY(qplugin_stable_probe, m) {
#define PROBE_DEF(schema) m.def(schema);
  PROBE_SCHEMAS(PROBE_DEF)
  m.def("plain_relu_boxed_empty(Tensor x, float x_scale, int x_zero_point) -> Tensor");
  m.def("probe_raise(int kind) -> int");
  m.def("probe_shim_error(Tensor x) -> int");
  m.def("probe_version(Tensor x) -> int");
  m.def("probe_scalar(Scalar b) -> int");
  m.def("probe_opt_scalar(Scalar? b=None) -> int");
  m.def("probe_float_list(float[] xs) -> int");
  m.def("probe_int_list_opt(int[]? xs=None) -> int");
  m.def("probe_tensor_list(Tensor[] xs) -> int");
  m.def("probe_opt_tensor(Tensor? x=None) -> int");
  m.def("probe_opt_int(int? x=None) -> int");
  m.def("probe_opt_float(float? x=None) -> int");
  m.def("probe_opt_bool(bool? x=None) -> int");
  m.def("probe_scalar_type(ScalarType t) -> int");
  m.def("probe_float_int(float scale) -> (float, int)");
  m.def("probe_two_tensors(Tensor x) -> (Tensor values, Tensor indices)");
}

STABLE_TORCH_LIBRARY_IMPL(qplugin_stable_probe, CPU, m) {
  m.impl("plain_quantize_per_tensor", TORCH_BOX(&plain_quantize_per_tensor));
  m.impl("plain_add", TORCH_BOX(&plain_add));
  m.impl("plain_relu", TORCH_BOX(&plain_relu<false>));
  m.impl("plain_relu_boxed_empty", TORCH_BOX(&plain_relu<true>));
  m.impl("args_conv2d_add", TORCH_BOX(&args_conv2d_add));
  m.impl("probe_two_tensors", TORCH_BOX(&probe_two_tensors));
}

// Ops without tensor arguments dispatch on no key: CompositeExplicitAutograd serves every backend.
STABLE_TORCH_LIBRARY_IMPL(qplugin_stable_probe, CompositeExplicitAutograd, m) {
  m.impl("probe_raise", TORCH_BOX(&probe_raise));
  m.impl("probe_shim_error", TORCH_BOX(&probe_shim_error));
  m.impl("probe_version", TORCH_BOX(&probe_version));
  m.impl("probe_tensor_list", TORCH_BOX(&probe_tensor_list));
  m.impl("probe_opt_tensor", TORCH_BOX(&probe_opt_tensor));
  m.impl("probe_scalar", &probe_kind);
  m.impl("probe_opt_scalar", &probe_kind);
  m.impl("probe_float_list", TORCH_BOX(&probe_double_list));
  m.impl("probe_int_list_opt", TORCH_BOX(&probe_opt_int_list));
  m.impl("probe_opt_int", &probe_kind);
  m.impl("probe_opt_float", &probe_kind);
  m.impl("probe_opt_bool", &probe_kind);
  m.impl("probe_scalar_type", TORCH_BOX(&probe_scalar_type));
  m.impl("probe_float_int", &probe_kind);
}
"""

ATEN_SRC = r"""
// The same three ops on the ATen API (TORCH_LIBRARY, at::Tensor, at::empty, at::parallel_for): the
// baseline of the stable build, built per torch version against its full headers.
#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <torch/library.h>

#define PROBE_CHECK(cond, ...) TORCH_CHECK_VALUE(cond, __VA_ARGS__)
#include "probe_common.h"

namespace {

using probe::Dt;

Dt dt_of(at::ScalarType t) {
  return t == at::kByte ? Dt::kU8 : t == at::kChar ? Dt::kS8 : t == at::kInt ? Dt::kS32 : Dt::kOther;
}

void check_int_input(const char* op, const char* arg, const at::Tensor& t) {
  TORCH_CHECK(dt_of(t.scalar_type()) != Dt::kOther, "qplugin::", op, ": ", arg,
              " should be a uint8, int8 or int32 tensor, got dtype ", t.scalar_type());
}

at::Tensor plain_relu(const at::Tensor& x, double x_scale, int64_t x_zp) {
  constexpr const char* op = "plain_relu";
  check_int_input(op, "x", x);
  probe::check_scale(op, "input scale", x_scale);
  const at::ScalarType dt = x.scalar_type();
  probe::check_zero_point(op, "input zero_point", x_zp, dt_of(dt));
  const at::MemoryFormat f = x.suggest_memory_format();
  at::Tensor out = at::empty(x.sizes(), x.options(), f);
  const at::Tensor xc = x.contiguous(f);
  const int64_t n = xc.numel();
  if (n == 0) return out;
  const int32_t lo = static_cast<int32_t>(x_zp), hi = static_cast<int32_t>(probe::qrange(dt_of(dt)).second);
  const void* xp = xc.const_data_ptr();
  void* yp = out.data_ptr();
  const int64_t es = static_cast<int64_t>(xc.element_size());
  at::parallel_for(0, n, std::max<int64_t>(1, probe::kGrain / es), [&](int64_t b, int64_t e) {
    probe::clamp_range(dt_of(dt), xp, yp, b, e, lo, hi);
  });
  return out;
}

at::Tensor plain_add(const at::Tensor& a, double a_scale, int64_t a_zp, const at::Tensor& b, double b_scale,
                     int64_t b_zp, double scale, int64_t zero_point) {
  constexpr const char* op = "plain_add";
  check_int_input(op, "a", a);
  check_int_input(op, "b", b);
  const at::ScalarType qt = a.scalar_type();
  TORCH_CHECK(b.scalar_type() == qt, "qplugin::", op, ": b should have the dtype of a");
  probe::check_add_qparams(op, a_scale, a_zp, b_scale, b_zp, scale, zero_point, dt_of(qt));
  const bool same = a.sizes() == b.sizes();
  TORCH_CHECK(same || b.numel() == 1, "qplugin::", op, ": the probe takes equal shapes or a 1-element b");
  const at::MemoryFormat f = a.suggest_memory_format();
  at::Tensor out = at::empty(a.sizes(), a.options(), f);
  const int64_t n = out.numel();
  if (n == 0) return out;
  const at::Tensor ac = a.contiguous(f);
  const at::Tensor bc = b.numel() == 1 ? b : b.contiguous(f);
  const auto p = probe::add_params(a_scale, a_zp, b_scale, b_zp, scale, zero_point, dt_of(qt));
  const char* ap = static_cast<const char*>(ac.const_data_ptr());
  const char* bp = static_cast<const char*>(bc.const_data_ptr());
  char* yp = static_cast<char*>(out.data_ptr());
  const int64_t es = static_cast<int64_t>(ac.element_size());
  const int64_t bs = same ? 1 : 0;
  at::parallel_for(0, n, probe::kGrain, [&](int64_t lo, int64_t hi) {
    probe::add_range(dt_of(qt), ap, bp, yp, es, bs, lo, hi, p);
  });
  return out;
}

at::Tensor plain_quantize_per_tensor(const at::Tensor& self, double scale, int64_t zero_point, at::ScalarType dtype) {
  constexpr const char* op = "plain_quantize_per_tensor";
  TORCH_CHECK(dtype == at::kByte || dtype == at::kChar, "qplugin::", op, ": the probe quantizes to torch.uint8 / int8");
  probe::check_scale(op, "scale", scale);
  probe::check_zero_point(op, "zero_point", zero_point, dt_of(dtype));
  TORCH_CHECK(self.scalar_type() == at::kFloat, "qplugin::", op, ": self should be a float32 tensor");
  const at::MemoryFormat f = self.suggest_memory_format();
  const at::Tensor x = self.contiguous(f);
  at::Tensor out = at::empty(x.sizes(), x.options().dtype(dtype), f);
  const int64_t n = x.numel();
  if (n == 0) return out;
  const float inv = qplugin::kernels::inv_scale_of(scale);
  const int32_t zp = static_cast<int32_t>(zero_point);
  const float* xp = x.const_data_ptr<float>();
  void* yp = out.data_ptr();
  at::parallel_for(0, n, probe::kGrain / 4, [&](int64_t b, int64_t e) {
    probe::quantize_range(dt_of(dtype), xp, yp, b, e, inv, zp);
  });
  return out;
}

at::Tensor args_conv2d_add(const at::Tensor& x, double, int64_t, const at::Tensor& accum, double, int64_t,
                           const at::Tensor& w, const at::Tensor& w_scales, const at::Tensor& w_zero_points,
                           const c10::optional<at::Tensor>& bias, const at::Tensor& packed, at::IntArrayRef stride,
                           at::IntArrayRef padding, at::IntArrayRef dilation, int64_t groups, double, int64_t) {
  TORCH_CHECK(stride.size() == 2 && padding.size() == 2 && dilation.size() == 2 && groups > 0, "args");
  (void)accum, (void)w, (void)w_scales, (void)w_zero_points, (void)bias, (void)packed;
  return at::empty({0}, x.options().dtype(at::kByte));
}

int64_t probe_version(const at::Tensor& x) { return x.is_inference() ? -1 : x._version(); }

}  // namespace

TORCH_LIBRARY(qplugin_aten_probe, m) {
#define PROBE_DEF(schema) m.def(schema);
  PROBE_SCHEMAS(PROBE_DEF)
  m.def("probe_version(Tensor x) -> int");
}

TORCH_LIBRARY_IMPL(qplugin_aten_probe, CPU, m) {
  m.impl("plain_quantize_per_tensor", TORCH_FN(plain_quantize_per_tensor));
  m.impl("plain_add", TORCH_FN(plain_add));
  m.impl("plain_relu", TORCH_FN(plain_relu));
  m.impl("args_conv2d_add", TORCH_FN(args_conv2d_add));
}

TORCH_LIBRARY_IMPL(qplugin_aten_probe, CompositeExplicitAutograd, m) {
  m.impl("probe_version", TORCH_FN(probe_version));
}
"""

# ---------------------------------------------------------------------------------------------
# Parent: build, inspect, run one child per torch, print.
# ---------------------------------------------------------------------------------------------


def torch_info(python):
    """(version, include dir, lib dir, cxx11 abi) of the torch `python` imports, or raises."""
    code = (
        "import json, os, torch; d = os.path.dirname(torch.__file__); "
        "print(json.dumps([torch.__version__, os.path.join(d, 'include'), os.path.join(d, 'lib'), "
        "bool(torch._C._GLIBCXX_USE_CXX11_ABI)]))"
    )
    try:
        r = subprocess.run([python, "-c", code], capture_output=True, text=True)
    except OSError as e:
        raise RuntimeError(f"{python}: {e.strerror}") from None
    if r.returncode != 0:
        raise RuntimeError(f"{python}: cannot import torch: {r.stderr.strip().splitlines()[-1:] or r.returncode}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def run(cmd, what):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{what} failed:\n{' '.join(cmd)}\n{r.stderr[-4000:]}")
    return r.stdout


def target_version(version):
    major, minor = (int(p) for p in version.split("+")[0].split(".")[:2])
    return (major << 56) | (minor << 48)


def build_kernels(tmp):
    objs = []
    for k in KERNELS:
        obj = os.path.join(tmp, f"k_{k}.o")
        run(
            CXX + ISA_FLAGS + ["-I", CSRC, "-c", os.path.join(CSRC, "kernels", f"{k}_kernel.cpp"), "-o", obj],
            f"kernels/{k}_kernel.cpp",
        )
        objs.append(obj)
    return objs


def write(tmp, name, text):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def build_stable(tmp, info, objs):
    version, inc, lib, _ = info
    write(tmp, "probe_common.h", COMMON_SRC)
    src = write(tmp, "stable_probe.cpp", STABLE_SRC)
    obj, so = os.path.join(tmp, "stable_probe.o"), os.path.join(tmp, "stable_probe.so")
    # Only torch/include: the stable headers and headeronly (no torch/csrc/api/include).
    run(
        CXX
        + ISA_FLAGS
        + [
            "-Wall",
            "-Werror",
            f"-DTORCH_TARGET_VERSION={target_version(version):#x}ULL",
            "-I",
            CSRC,
            "-I",
            tmp,
            "-isystem",
            inc,
            "-c",
            src,
            "-o",
            obj,
        ],
        "stable probe",
    )
    run(["g++", "-shared", "-o", so, obj] + objs + [f"-L{lib}", "-ltorch_cpu"], "stable probe link")
    return so


def build_aten(tmp, info, objs, tag):
    version, inc, lib, abi = info
    src = write(tmp, "aten_probe.cpp", ATEN_SRC)
    obj, so = os.path.join(tmp, f"aten_probe_{tag}.o"), os.path.join(tmp, f"aten_probe_{tag}.so")
    # C++20: torch 2.14's c10 headers need it (std::strong_ordering, string_view::starts_with).
    run(
        CXX
        + [
            "-std=c++20",
            f"-D_GLIBCXX_USE_CXX11_ABI={int(abi)}",
            "-I",
            CSRC,
            "-I",
            tmp,
            "-isystem",
            inc,
            "-isystem",
            os.path.join(inc, "torch", "csrc", "api", "include"),
            "-c",
            src,
            "-o",
            obj,
        ],
        f"ATen twin ({version})",
    )
    run(["g++", "-shared", "-o", so, obj] + objs + [f"-L{lib}", "-lc10", "-ltorch_cpu"], "ATen twin link")
    return so


def inspect(so):
    """What the stable build imports: C shim symbols, C++ runtime, and anything else (ATen / c10)."""
    und = run(["nm", "-D", "--undefined-only", so], "nm").split()
    names = [s.split("@")[0] for s in und if s not in ("U", "w", "v")]
    shim = sorted(n for n in names if n.startswith(("aoti_torch_", "torch_")))
    demangled = run(["c++filt"] + names, "c++filt").split("\n") if names else []
    torchy = sorted(
        d
        for d in demangled
        if d.startswith(("at::", "c10::", "torch::", "caffe2::")) or d.startswith(("_ZN2at", "_ZN3c10", "_ZN5torch"))
    )
    needed = [
        line.split("[")[1].rstrip("]")
        for line in run(["readelf", "-d", so], "readelf").splitlines()
        if "(NEEDED)" in line
    ]
    rpath = [
        line.strip()
        for line in run(["readelf", "-d", so], "readelf").splitlines()
        if "RPATH" in line or "RUNPATH" in line
    ]
    return {"undefined": len(names), "shim": shim, "aten_c10_torch_cpp": torchy, "needed": needed, "rpath": rpath}


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            lines = f.read().splitlines()
        name = next((l.split(":", 1)[1].strip() for l in lines if l.startswith("model name")), platform.processor())
        flags = next((l.split(":", 1)[1].split() for l in lines if l.startswith("flags")), [])
        isa = [f for f in ("avx2", "avx512f", "avx512_vnni", "avx_vnni") if f in flags]
        return f"{name} ({', '.join(isa)}), {os.cpu_count()} logical CPUs"
    except OSError:
        return platform.processor() or platform.machine()


def print_child(tag, res):
    print(f"\n== torch {res['torch']} ({tag}) ==")
    if "load_error" in res:
        print(f"  stable build: NOT LOADED: {res['load_error']}")
        return
    print(f"  stable build loads: yes; ATen twin: {res['aten'] or 'not built'}; torch_qplugin: {res['qplugin']}")
    bad = [c for c in res["checks"] if not c["ok"]]
    print(f"  bit-identity checks: {len(res['checks']) - len(bad)} / {len(res['checks'])} pass")
    for c in bad:
        print(f"    FAIL {c['what']}: {c['detail']}")
    print("  exceptions thrown in a stable kernel reach Python as:")
    for k, v in res["raise"].items():
        print(f"    {k:<28} -> {v}")
    for line in res.get("stderr", []):
        print(f"    printed on stderr: {line}")
    print("  schema kinds through the stable boxed path:")
    for k, v in res["kinds"].items():
        print(f"    {k:<28} {v}")
    print("  torch.library.opcheck (Python fakes):", ", ".join(f"{k}: {v}" for k, v in res["opcheck"].items()))
    print(f"  time per call from Python, us (best of {res['rounds']} samples of {res['calls']} calls; median):")
    for row in res["times"]:
        cells = "  ".join(f"{name} {t['best']:.2f} ({t['median']:.2f})" for name, t in row["t"].items())
        print(f"    {row['op']:<27} {row['n']:>5}: {cells}")
        base = row["t"].get("aten")
        if base:
            d = row["t"]["stable"]["best"] - base["best"]
            dm = row["t"]["stable"]["median"] - base["median"]
            extra = f"stable - aten: {d:+.2f} us (median {dm:+.2f})"
            if "qplugin" in row["t"]:
                extra += f"; stable - qplugin: {row['t']['stable']['best'] - row['t']['qplugin']['best']:+.2f} us"
            print(f"    {'':<27} {'':>5}  {extra}")


def main(argv=None):
    ap = argparse.ArgumentParser(prog="bench.py stable-abi", description=__doc__.split("\n")[0])
    ap.add_argument("--build-python", default=sys.executable, help="python whose torch's stable headers to build on")
    ap.add_argument("--python", action="append", help="python of a torch to load the build in (repeatable)")
    ap.add_argument("--rounds", type=int, default=60)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--keep", action="store_true", help="keep the build directory")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return child(json.loads(args.child))
    pythons = args.python or [sys.executable]
    print(f"CPU: {cpu_name()}")
    print(f"compiler: {run(['g++', '--version'], 'g++').splitlines()[0]}")
    try:
        binfo = torch_info(args.build_python)
    except RuntimeError as e:
        sys.exit(f"bench.py stable-abi: the build torch is missing: {e}")
    tmp = tempfile.mkdtemp(prefix="qplugin_stable_")
    try:
        objs = build_kernels(tmp)
        so = build_stable(tmp, binfo, objs)
        print(
            f"stable build: against torch {binfo[0]}'s headers, TORCH_TARGET_VERSION "
            f"{target_version(binfo[0]):#x} ({'.'.join(binfo[0].split('.')[:2])})"
        )
        ins = inspect(so)
        print(
            f"  nm -D --undefined-only: {ins['undefined']} symbols; {len(ins['shim'])} from the C shim "
            f"(aoti_torch_* / torch_*); ATen / c10 / torch C++ symbols: {ins['aten_c10_torch_cpp'] or 'none'}"
        )
        print(f"  shim symbols: {' '.join(ins['shim'])}")
        print(f"  readelf -d NEEDED: {' '.join(ins['needed'])}; {' '.join(ins['rpath']) or 'no RPATH / RUNPATH'}")
        results = []
        for i, py in enumerate(pythons):
            tag = f"{py}"
            try:
                info = torch_info(py)
            except RuntimeError as e:
                print(f"\n== {py}: skipped, torch missing: {e}")
                continue
            try:
                aten_so = build_aten(tmp, info, objs, str(i))
            except RuntimeError as e:
                print(f"  (ATen twin for torch {info[0]} not built: {str(e).splitlines()[0]})")
                aten_so = None
            env = dict(os.environ, QPLUGIN_ISA="avx2", OMP_NUM_THREADS="1")
            req = {"stable": so, "aten": aten_so, "rounds": args.rounds, "calls": args.calls}
            r = subprocess.run(
                [py, str(BENCH), "stable-abi", "--child", json.dumps(req)],
                capture_output=True,
                text=True,
                env=env,
                cwd=tmp,
            )
            lines = [l for l in r.stdout.splitlines() if l.startswith("{")]
            if r.returncode != 0 or not lines:
                print(f"\n== {py} (torch {info[0]}): the child failed (rc {r.returncode}):\n{r.stderr[-3000:]}")
                continue
            res = json.loads(lines[-1])
            res["stderr"] = [l[:160] for l in r.stderr.splitlines() if "libtorch C API" in l]
            print_child(tag, res)
            results.append(res)
        print("\nsummary (best per call, us; extra = stable - aten):")
        for res in results:
            if "times" not in res:
                continue
            cells = []
            for row in res["times"]:
                if "aten" in row["t"]:
                    cells.append(
                        f"{row['op'].replace('plain_', '')}/{row['n']} "
                        f"{row['t']['stable']['best'] - row['t']['aten']['best']:+.2f}"
                    )
            print(f"  torch {res['torch']:<14} " + ", ".join(cells))
    finally:
        if args.keep:
            print(f"build kept in {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# Child: one torch; load, check, time; one JSON line out.
# ---------------------------------------------------------------------------------------------


def child(req):
    import torch

    torch.set_num_threads(1)
    res = {"torch": torch.__version__, "rounds": req["rounds"], "calls": req["calls"]}
    try:
        torch.ops.load_library(req["stable"])
    except Exception as e:  # a build that does not load is the finding
        res["load_error"] = f"{type(e).__name__}: {e}"
        print(json.dumps(res))
        return
    st = torch.ops.qplugin_stable_probe
    ops = {"stable": st}
    res["aten"] = None
    if req["aten"]:
        torch.ops.load_library(req["aten"])
        ops["aten"] = torch.ops.qplugin_aten_probe
        res["aten"] = "loaded"
    try:
        import torch_qplugin  # noqa: F401

        ops["qplugin"] = torch.ops.qplugin
        res["qplugin"] = f"{torch_qplugin.__file__}"
    except Exception as e:
        res["qplugin"] = f"not importable ({type(e).__name__})"
    res["checks"] = checks(torch, ops)
    res["raise"] = probe_raise(torch, st)
    res["kinds"] = probe_kinds(torch, st)
    res["opcheck"] = opcheck(torch, st)
    res["times"] = timings(torch, ops, req["rounds"], req["calls"])
    print(json.dumps(res))


def ref_relu(torch, x, zp):
    return x.clamp(min=zp)


def ref_add(torch, a, sa, za, b, sb, zb, so, zo, lo, hi):
    fa = torch.tensor(sa / so, dtype=torch.float32)
    fb = torch.tensor(sb / so, dtype=torch.float32)
    v = (a.to(torch.int32) - za).to(torch.float32) * fa + (b.to(torch.int32) - zb).to(torch.float32) * fb
    v = v + torch.tensor(float(zo), dtype=torch.float32)
    return v.clamp(lo, hi).round().to(a.dtype)


def ref_quantize(torch, x, scale, zp, dtype, lo, hi):
    inv = torch.tensor(1.0, dtype=torch.float32) / torch.tensor(scale, dtype=torch.float32)
    return ((x * inv).round() + zp).clamp(lo, hi).to(dtype)


def samples(torch, dtype, g):
    """Inputs of each layout the plain ops keep: flat, channels_last, strided, empty, one element."""
    lo, hi = (0, 256) if dtype == torch.uint8 else (-128, 128)

    def r(*shape):
        return torch.randint(lo, hi, shape, dtype=dtype, generator=g)

    return {
        "64": r(64),
        "4096": r(4096),
        "1x16x8x8 channels_last": r(1, 16, 8, 8).contiguous(memory_format=torch.channels_last),
        "2x3x5x7 channels_last": r(2, 3, 5, 7).contiguous(memory_format=torch.channels_last),
        "strided [::2] of 130": r(130)[::2],
        "empty 0x4": r(0, 4),
        "one element": r(1),
    }


def same(torch, y, ref):
    if y.dtype != ref.dtype or y.shape != ref.shape:
        return f"dtype/shape {y.dtype}{tuple(y.shape)} vs {ref.dtype}{tuple(ref.shape)}"
    if not torch.equal(y, ref):
        return f"{int((y != ref).sum())} of {y.numel()} values differ"
    return None


def checks(torch, ops):
    g = torch.Generator().manual_seed(0)
    out = []

    def check(what, y, ref, layout_of=None):
        detail = same(torch, y, ref)
        if detail is None and layout_of is not None and y.numel() > 1 and y.stride() != layout_of.stride():
            detail = f"strides {y.stride()} vs {layout_of.stride()}"
        out.append({"what": what, "ok": detail is None, "detail": detail})

    for dtype, (lo, hi) in ((torch.uint8, (0, 255)), (torch.int8, (-128, 127))):
        for name, x in samples(torch, dtype, g).items():
            zp = 3 if dtype == torch.uint8 else -5
            ref = ref_relu(torch, x, zp)
            for k, ns in ops.items():
                y = ns.plain_relu(x, 0.05, zp)
                check(
                    f"{k} plain_relu {dtype} {name} vs reference",
                    y,
                    ref,
                    ops.get("qplugin") and ops["qplugin"].plain_relu(x, 0.05, zp),
                )
            y = ops["stable"].plain_relu_boxed_empty(x, 0.05, zp)
            check(f"stable plain_relu_boxed_empty {dtype} {name}", y, ref)
            b = torch.randint(lo, hi + 1, x.shape, dtype=dtype, generator=g)
            if x.is_contiguous(memory_format=torch.channels_last) and x.dim() == 4:
                b = b.contiguous(memory_format=torch.channels_last)
            qp = (0.05, zp, b, 0.03, zp + 2, 0.07, zp - 1)
            ref = ref_add(torch, x, 0.05, zp, b, 0.03, zp + 2, 0.07, zp - 1, lo, hi)
            for k, ns in ops.items():
                check(f"{k} plain_add {dtype} {name} vs reference", ns.plain_add(x, *qp), ref)
            b1 = torch.randint(lo, hi + 1, (1,), dtype=dtype, generator=g)
            ref = ref_add(torch, x, 0.05, zp, b1, 0.03, zp + 2, 0.07, zp - 1, lo, hi)
            for k, ns in ops.items():
                check(
                    f"{k} plain_add {dtype} {name} + 1-element b",
                    ns.plain_add(x, 0.05, zp, b1, 0.03, zp + 2, 0.07, zp - 1),
                    ref,
                )
        for name, x in samples(torch, torch.int32, g).items():
            flat = x.reshape(-1).to(torch.float32) * 0.013 - 0.2
            # exact ties of the rounding (k + 0.5 steps) and a value past the clamp
            k = min(4, flat.numel())
            flat[:k] = torch.tensor([0.5, 1.5, -2.5, 1e6])[:k] * 0.25
            xf = torch.empty_strided(x.shape, x.stride(), dtype=torch.float32).copy_(flat.reshape(x.shape))
            zp = 7 if dtype == torch.uint8 else -9
            ref = ref_quantize(torch, xf, 0.25, zp, dtype, lo, hi)
            for k, ns in ops.items():
                check(
                    f"{k} plain_quantize_per_tensor {dtype} {name}",
                    ns.plain_quantize_per_tensor(xf, 0.25, zp, dtype),
                    ref,
                    ops.get("qplugin") and ops["qplugin"].plain_quantize_per_tensor(xf, 0.25, zp, dtype),
                )
    # the version counter read through the dispatcher: in-place changes bump it, inference tensors -1
    v = torch.zeros(4, dtype=torch.uint8)
    seen = [ops["stable"].probe_version(v)]
    v.add_(1)
    seen.append(ops["stable"].probe_version(v))
    with torch.inference_mode():
        seen.append(ops["stable"].probe_version(torch.zeros(2)))
    out.append(
        {
            "what": "stable probe_version (0, 1 after add_, -1 for an inference tensor)",
            "ok": seen == [0, 1, -1],
            "detail": str(seen),
        }
    )
    return out


def probe_raise(torch, st):
    kinds = ["STD_TORCH_CHECK", "std::invalid_argument", "std::out_of_range", "std::domain_error", "std::logic_error"]
    got = {}
    for i, k in enumerate(kinds):
        try:
            st.probe_raise(i)
            got[k] = "no exception"
        except Exception as e:
            msg = str(e).splitlines()[0] if str(e) else ""
            got[k] = f"{type(e).__name__}: {msg[:90]}"
    sys.stderr.flush()
    try:
        st.probe_shim_error(torch.zeros(3))
        got["error in a shim call"] = "no exception"
    except Exception as e:
        got["error in a shim call"] = f"{type(e).__name__}: {str(e).splitlines()[0][:150]}"
    return got


def probe_kinds(torch, st):
    x = torch.zeros(3, dtype=torch.uint8)
    calls = {
        "Scalar": lambda: st.probe_scalar(2.5),
        "Scalar? (a number)": lambda: st.probe_opt_scalar(2),
        "Scalar? (None)": lambda: st.probe_opt_scalar(None),
        "float[]": lambda: st.probe_float_list([0.5, 0.25]),
        "int[]? (a list)": lambda: st.probe_int_list_opt([1, 2, 3]),
        "int[]? (None)": lambda: st.probe_int_list_opt(None),
        "Tensor[]": lambda: st.probe_tensor_list([x, x]),
        "Tensor? (a tensor)": lambda: st.probe_opt_tensor(x),
        "Tensor? (None)": lambda: st.probe_opt_tensor(None),
        "int? (an int)": lambda: st.probe_opt_int(3),
        "float? (None)": lambda: st.probe_opt_float(None),
        "bool? (a bool)": lambda: st.probe_opt_bool(True),
        "ScalarType": lambda: st.probe_scalar_type(torch.uint8),
        "-> (float, int)": lambda: st.probe_float_int(0.5),
        "-> (Tensor, Tensor)": lambda: st.probe_two_tensors(x),
    }
    got = {}
    for k, f in calls.items():
        try:
            r = f()
            got[k] = f"ok ({r if not isinstance(r, tuple) or not hasattr(r[0], 'shape') else 'two tensors'})"
        except Exception as e:
            got[k] = f"REFUSED: {type(e).__name__}: {str(e).splitlines()[0][:110]}"
    return got


def opcheck(torch, st):
    """torch.library.opcheck of the stable ops with Python fakes (as torch_qplugin/_fakes.py)."""
    ns = "qplugin_stable_probe::"

    @torch.library.register_fake(ns + "plain_relu")
    def _(x, x_scale, x_zero_point):
        return torch.empty_like(x, memory_format=torch._prims_common.suggest_memory_format(x))

    @torch.library.register_fake(ns + "plain_add")
    def _(a, a_scale, a_zero_point, b, b_scale, b_zero_point, scale, zero_point):
        return torch.empty_like(a, memory_format=torch._prims_common.suggest_memory_format(a))

    @torch.library.register_fake(ns + "plain_quantize_per_tensor")
    def _(self, scale, zero_point, dtype):
        return torch.empty_like(self, dtype=dtype, memory_format=torch._prims_common.suggest_memory_format(self))

    g = torch.Generator().manual_seed(2)
    x = torch.randint(0, 256, (2, 3, 4, 5), dtype=torch.uint8, generator=g)
    xc = x.contiguous(memory_format=torch.channels_last)
    cases = [
        ("plain_relu", (x, 0.05, 3)),
        ("plain_relu", (xc, 0.05, 3)),
        ("plain_add", (x, 0.05, 3, x.clone(), 0.03, 5, 0.07, 2)),
        ("plain_add", (xc, 0.05, 3, xc.clone(), 0.03, 5, 0.07, 2)),
        ("plain_quantize_per_tensor", (torch.randn(2, 3, 4, 5, generator=g), 0.05, 3, torch.uint8)),
    ]
    got = {}
    for name, args in cases:
        key = f"{name} {'channels_last' if args[0].dim() == 4 and args[0].stride()[1] == 1 else 'contiguous'}"
        try:
            r = torch.library.opcheck(getattr(st, name).default, args)
            bad = {k: v for k, v in r.items() if v != "SUCCESS"}
            got[key] = "pass" if not bad else f"FAIL {bad}"
        except Exception as e:
            got[key] = f"FAIL {type(e).__name__}: {str(e).splitlines()[0][:120]}"
    return got


def timings(torch, ops, rounds, calls):
    g = torch.Generator().manual_seed(1)
    rows = []
    for n in (64, 4096):
        a = torch.randint(0, 256, (n,), dtype=torch.uint8, generator=g)
        b = torch.randint(0, 256, (n,), dtype=torch.uint8, generator=g)
        xf = torch.randn(n, generator=g)
        cases = {
            "plain_relu": {k: (ns.plain_relu.default, (a, 0.05, 3)) for k, ns in ops.items()},
            "plain_add": {k: (ns.plain_add.default, (a, 0.05, 3, b, 0.03, 5, 0.07, 2)) for k, ns in ops.items()},
            "plain_quantize_per_tensor": {
                k: (ns.plain_quantize_per_tensor.default, (xf, 0.05, 3, torch.uint8)) for k, ns in ops.items()
            },
        }
        cases["plain_relu"]["stable_boxed_empty"] = (ops["stable"].plain_relu_boxed_empty.default, (a, 0.05, 3))
        if n == 64:
            w = torch.randint(-128, 128, (8, 4, 3, 3), dtype=torch.int8, generator=g)
            conv = (
                a.view(1, 4, 4, 4),
                0.05,
                3,
                a.view(1, 4, 4, 4),
                0.05,
                3,
                w,
                torch.full((8,), 0.01, dtype=torch.float64),
                torch.zeros(8, dtype=torch.int64),
                torch.zeros(8),
                torch.zeros(256, dtype=torch.uint8),
                [1, 1],
                [1, 1],
                [1, 1],
                1,
                0.1,
                4,
            )
            cases["args_conv2d_add (17 args)"] = {
                k: (ops[k].args_conv2d_add.default, conv) for k in ("stable", "aten") if k in ops
            }
            cases["probe_version"] = {k: (ops[k].probe_version.default, (a,)) for k in ("stable", "aten") if k in ops}
        for op, variants in cases.items():
            t = {k: [] for k in variants}
            names = list(variants)
            for f, args in variants.values():  # warm up
                for _ in range(50):
                    f(*args)
            for _ in range(rounds):
                random.shuffle(names)
                for k in names:
                    f, args = variants[k]
                    t0 = time.perf_counter_ns()
                    for _ in range(calls):
                        f(*args)
                    t[k].append((time.perf_counter_ns() - t0) / calls / 1000.0)
            rows.append(
                {"op": op, "n": n, "t": {k: {"best": min(v), "median": statistics.median(v)} for k, v in t.items()}}
            )
    return rows
