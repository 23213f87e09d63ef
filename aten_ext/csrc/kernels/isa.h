// ISA plumbing for kernels/. Every kernels/**/*_kernel.cpp is compiled three
// times (CMakeLists.txt): without vector flags (the scalar reference), with
// AVX2+FMA, and with AVX-512 (F/BW/VL/DQ/VNNI). Each build puts its symbols in
// its own namespace, qplugin::kernels::{scalar,avx2,avx512}; dispatch.h picks
// one at run time. Headers declare a kernel once for all of them with
// QPLUGIN_DECLARE_ISA_KERNELS.
//
// The AVX-VNNI path (namespace avxvnni) is the AVX2 build plus 256-bit vpdpbusd
// (VEX): only the families whose kernels differ there (the GEMM tiles and conv's
// A side) are compiled for it, with both QPLUGIN_ISA_AVXVNNI and QPLUGIN_ISA_AVX2
// defined, and declared with QPLUGIN_DECLARE_ISA_KERNELS_VNNI. Every other family's
// avxvnni::fn is a using-declaration of avx2::fn.
#pragma once

#if defined(QPLUGIN_ISA_AVX512)
#define QPLUGIN_ISA_NS avx512
#elif defined(QPLUGIN_ISA_AVXVNNI)
#define QPLUGIN_ISA_NS avxvnni
#elif defined(QPLUGIN_ISA_AVX2)
#define QPLUGIN_ISA_NS avx2
#elif defined(QPLUGIN_ISA_SCALAR)
#define QPLUGIN_ISA_NS scalar
#endif

// The AVX2 build's GEMM multiplies int16 operands (vpmaddwd on B's int16 layout and
// widened activations); the AVX-VNNI build multiplies the bytes themselves.
#if defined(QPLUGIN_ISA_AVX2) && !defined(QPLUGIN_ISA_AVXVNNI)
#define QPLUGIN_GEMM_I16 1
#endif

// Declares the same set of kernel prototypes in each ISA namespace.
//   #define MY_KERNELS(X) X(void, my_kernel, (const float* x, int64_t n))
//   QPLUGIN_DECLARE_ISA_KERNELS(MY_KERNELS)
#define QPLUGIN_DECLARE_ONE_(ret, name, args) ret name args;
#define QPLUGIN_USE_AVX2_ONE_(ret, name, args) using ::qplugin::kernels::avx2::name;
#define QPLUGIN_DECLARE_ISA_KERNELS(LIST)                   \
  namespace scalar { LIST(QPLUGIN_DECLARE_ONE_) }           \
  namespace avx2 { LIST(QPLUGIN_DECLARE_ONE_) }             \
  namespace avxvnni { LIST(QPLUGIN_USE_AVX2_ONE_) }         \
  namespace avx512 { LIST(QPLUGIN_DECLARE_ONE_) }
// The same for a family compiled for the AVX-VNNI path too (CMakeLists.txt's
// QPLUGIN_AVXVNNI_SOURCES).
#define QPLUGIN_DECLARE_ISA_KERNELS_VNNI(LIST)              \
  namespace scalar { LIST(QPLUGIN_DECLARE_ONE_) }           \
  namespace avx2 { LIST(QPLUGIN_DECLARE_ONE_) }             \
  namespace avxvnni { LIST(QPLUGIN_DECLARE_ONE_) }          \
  namespace avx512 { LIST(QPLUGIN_DECLARE_ONE_) }
