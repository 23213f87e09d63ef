// ISA plumbing for kernels/. Every kernels/**/*_kernel.cpp is compiled once per vector tier of
// the target architecture (CMakeLists.txt), each build with its symbols in its own namespace;
// dispatch.h picks one at run time. Headers declare a kernel once for all of them with
// QPLUGIN_DECLARE_ISA_KERNELS.
//
// x86-64: qplugin::kernels::{scalar, avx2, avx512}: without vector flags (the scalar
// reference), AVX2+FMA, AVX-512 (F/BW/VL/DQ/VNNI). The AVX-VNNI path (namespace avxvnni)
// is the AVX2 build plus 256-bit vpdpbusd (VEX).
// aarch64: qplugin::kernels::{scalar, neon}: the scalar reference and ARMv8.0 Advanced SIMD.
// The dotprod path (ARMv8.2 sdot) and the i8mm path (ARMv8.6 sudot) are the NEON build plus
// their dot products.
//
// The dot-product paths (avxvnni; dotprod, i8mm) compile only the families whose kernels
// differ there (the GEMM tiles and conv's A side), declared with QPLUGIN_DECLARE_ISA_KERNELS_DOT;
// every other family's avxvnni::fn is a using-declaration of avx2::fn (dotprod::fn and
// i8mm::fn: of neon::fn). Their builds define the base path's macro too: QPLUGIN_ISA_AVX2 in
// the avxvnni build, QPLUGIN_ISA_NEON in the dotprod and i8mm builds (QPLUGIN_ISA_DOTPROD in
// the i8mm build).
#pragma once

#if defined(__aarch64__)
#define QPLUGIN_ARCH_ARM64 1
#elif defined(__x86_64__)
#define QPLUGIN_ARCH_X86_64 1
#endif

#if defined(QPLUGIN_ISA_AVX512)
#define QPLUGIN_ISA_NS avx512
#elif defined(QPLUGIN_ISA_AVXVNNI)
#define QPLUGIN_ISA_NS avxvnni
#elif defined(QPLUGIN_ISA_AVX2)
#define QPLUGIN_ISA_NS avx2
#elif defined(QPLUGIN_ISA_I8MM)
#define QPLUGIN_ISA_NS i8mm
#elif defined(QPLUGIN_ISA_DOTPROD)
#define QPLUGIN_ISA_NS dotprod
#elif defined(QPLUGIN_ISA_NEON)
#define QPLUGIN_ISA_NS neon
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
#if defined(QPLUGIN_ARCH_ARM64)
#define QPLUGIN_USE_BASE_ONE_(ret, name, args) using ::qplugin::kernels::neon::name;
#define QPLUGIN_DECLARE_ISA_KERNELS(LIST) \
  namespace scalar {                      \
  LIST(QPLUGIN_DECLARE_ONE_)              \
  }                                       \
  namespace neon {                        \
  LIST(QPLUGIN_DECLARE_ONE_)              \
  }                                       \
  namespace dotprod {                     \
  LIST(QPLUGIN_USE_BASE_ONE_)             \
  }                                       \
  namespace i8mm {                        \
  LIST(QPLUGIN_USE_BASE_ONE_)             \
  }
// The same for a family compiled for the dot-product paths too (CMakeLists.txt's
// QPLUGIN_DOT_SOURCES).
#define QPLUGIN_DECLARE_ISA_KERNELS_DOT(LIST) \
  namespace scalar {                          \
  LIST(QPLUGIN_DECLARE_ONE_)                  \
  }                                           \
  namespace neon {                            \
  LIST(QPLUGIN_DECLARE_ONE_)                  \
  }                                           \
  namespace dotprod {                         \
  LIST(QPLUGIN_DECLARE_ONE_)                  \
  }                                           \
  namespace i8mm {                            \
  LIST(QPLUGIN_DECLARE_ONE_)                  \
  }
#else
#define QPLUGIN_USE_BASE_ONE_(ret, name, args) using ::qplugin::kernels::avx2::name;
#define QPLUGIN_DECLARE_ISA_KERNELS(LIST) \
  namespace scalar {                      \
  LIST(QPLUGIN_DECLARE_ONE_)              \
  }                                       \
  namespace avx2 {                        \
  LIST(QPLUGIN_DECLARE_ONE_)              \
  }                                       \
  namespace avxvnni {                     \
  LIST(QPLUGIN_USE_BASE_ONE_)             \
  }                                       \
  namespace avx512 {                      \
  LIST(QPLUGIN_DECLARE_ONE_)              \
  }
// The same for a family compiled for the dot-product path too (CMakeLists.txt's
// QPLUGIN_DOT_SOURCES).
#define QPLUGIN_DECLARE_ISA_KERNELS_DOT(LIST) \
  namespace scalar {                          \
  LIST(QPLUGIN_DECLARE_ONE_)                  \
  }                                           \
  namespace avx2 {                            \
  LIST(QPLUGIN_DECLARE_ONE_)                  \
  }                                           \
  namespace avxvnni {                         \
  LIST(QPLUGIN_DECLARE_ONE_)                  \
  }                                           \
  namespace avx512 {                          \
  LIST(QPLUGIN_DECLARE_ONE_)                  \
  }
#endif
