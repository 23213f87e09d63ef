// QPLUGIN_PLAIN_API marks what the plain library (libtorch_qplugin_plain.so) exports to the
// quantized one (libtorch_qplugin.so, built from ../csrc_quantized): the cpu/ glue its adapters
// call. Both libraries compile with hidden visibility, so everything else of the plain tier stays
// private to it; the dispatcher reaches the ops through their registrations, not through symbols.
// Inline and template code in the headers is compiled into each library that uses it.
#pragma once

// The stable-ABI build is the plain library alone: nothing outside it links its glue.
#if defined(_WIN32) || defined(QPLUGIN_STABLE_ABI)
#define QPLUGIN_PLAIN_API
#else
#define QPLUGIN_PLAIN_API __attribute__((visibility("default")))
#endif
