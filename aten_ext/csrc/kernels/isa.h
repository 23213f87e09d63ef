// ISA plumbing for kernels/. Every kernels/**/*_kernel.cpp is compiled three
// times (CMakeLists.txt): without vector flags (the scalar reference), with
// AVX2+FMA, and with AVX-512 (F/BW/VL/DQ/VNNI). Each build puts its symbols in
// its own namespace, qplugin::kernels::{scalar,avx2,avx512}; dispatch.h picks
// one at run time. Headers declare a kernel once for all three with
// QPLUGIN_DECLARE_ISA_KERNELS.
#pragma once

#if defined(QPLUGIN_ISA_AVX512)
#define QPLUGIN_ISA_NS avx512
#elif defined(QPLUGIN_ISA_AVX2)
#define QPLUGIN_ISA_NS avx2
#elif defined(QPLUGIN_ISA_SCALAR)
#define QPLUGIN_ISA_NS scalar
#endif

// Declares the same set of kernel prototypes in each ISA namespace.
//   #define MY_KERNELS(X) X(void, my_kernel, (const float* x, int64_t n))
//   QPLUGIN_DECLARE_ISA_KERNELS(MY_KERNELS)
#define QPLUGIN_DECLARE_ONE_(ret, name, args) ret name args;
#define QPLUGIN_DECLARE_ISA_KERNELS(LIST)            \
  namespace scalar { LIST(QPLUGIN_DECLARE_ONE_) }    \
  namespace avx2 { LIST(QPLUGIN_DECLARE_ONE_) }      \
  namespace avx512 { LIST(QPLUGIN_DECLARE_ONE_) }
