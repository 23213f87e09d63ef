# The target architecture's name for the kernel tiers (CMakeLists.txt): QPLUGIN_ARCH is
# x86_64 or aarch64, from CMAKE_SYSTEM_PROCESSOR (the toolchain's target when cross-compiling,
# e.g. with cmake/aarch64-linux-gnu.cmake).
include_guard(GLOBAL)

string(TOLOWER "${CMAKE_SYSTEM_PROCESSOR}" _qp_proc)
if(_qp_proc MATCHES "^(aarch64|arm64)$")
  set(QPLUGIN_ARCH aarch64)
elseif(_qp_proc MATCHES "^(x86_64|amd64)$")
  set(QPLUGIN_ARCH x86_64)
else()
  message(FATAL_ERROR "torch_qplugin: unsupported CPU architecture '${CMAKE_SYSTEM_PROCESSOR}' "
                      "(the kernels are built for x86_64 and aarch64)")
endif()
message(STATUS "torch_qplugin: kernels for ${QPLUGIN_ARCH}")
