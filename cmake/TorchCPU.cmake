# Finds torch's headers and CPU libraries for a CPU-only extension, without torch's own
# TorchConfig.cmake: for a CUDA build of torch (PyPI's default wheel on Linux) that file looks
# for a CUDA toolkit, nvrtc and the GPU architecture, none of which a CPU op library needs.
#
# Input (either):
#   QPLUGIN_TORCH_DIR   a torch install: the Python package directory (.../site-packages/torch)
#                       or an unpacked libtorch, each with include/ and lib/
#   Python_EXECUTABLE   a Python with torch installed, asked for that directory when
#                       QPLUGIN_TORCH_DIR is not given
# Output:
#   qplugin::torch_cpu            imported target: headers, -D_GLIBCXX_USE_CXX11_ABI, libc10 and
#                                 libtorch_cpu (never libtorch_cuda / libc10_cuda / libcudart)
#   QPLUGIN_TORCH_DIR             as found
#   QPLUGIN_TORCH_INCLUDE_DIRS    torch's header directories
#   QPLUGIN_TORCH_VERSION_MMP     major.minor.patch from torch's version header
#   QPLUGIN_TORCH_CXX_STANDARD    20 where torch's headers require C++20 (torch >= 2.14), else 17
include_guard(GLOBAL)

if(NOT QPLUGIN_TORCH_DIR)
  if(NOT Python_EXECUTABLE)
    find_package(Python COMPONENTS Interpreter REQUIRED)
  endif()
  execute_process(
    COMMAND "${Python_EXECUTABLE}" -c "import os, torch; print(os.path.dirname(torch.__file__))"
    OUTPUT_VARIABLE _qp_torch_dir OUTPUT_STRIP_TRAILING_WHITESPACE
    RESULT_VARIABLE _qp_rc ERROR_VARIABLE _qp_err)
  if(NOT _qp_rc EQUAL 0)
    message(FATAL_ERROR "torch_qplugin: '${Python_EXECUTABLE}' cannot import torch (${_qp_err}); "
                        "install torch there or pass -DQPLUGIN_TORCH_DIR=<torch install dir>")
  endif()
  set(QPLUGIN_TORCH_DIR "${_qp_torch_dir}" CACHE PATH "torch install (include/ and lib/)")
endif()

set(_qp_inc "${QPLUGIN_TORCH_DIR}/include")
set(_qp_version_h "${_qp_inc}/torch/headeronly/version.h")
if(NOT EXISTS "${_qp_version_h}")
  set(_qp_version_h "${_qp_inc}/torch/csrc/api/include/torch/version.h")
endif()
if(NOT EXISTS "${_qp_version_h}")
  message(FATAL_ERROR "torch_qplugin: no torch headers under ${_qp_inc}")
endif()
foreach(_part MAJOR MINOR PATCH)
  file(STRINGS "${_qp_version_h}" _qp_line REGEX "#define TORCH_VERSION_${_part} [0-9]+")
  string(REGEX REPLACE ".* ([0-9]+)$" "\\1" _qp_${_part} "${_qp_line}")
endforeach()
set(QPLUGIN_TORCH_VERSION_MMP "${_qp_MAJOR}.${_qp_MINOR}.${_qp_PATCH}")

# The language level torch's own headers demand (ATen.h states it with an #error).
file(STRINGS "${_qp_inc}/ATen/ATen.h" _qp_cxx20 REGEX "C\\+\\+20 or later")
if(_qp_cxx20)
  set(QPLUGIN_TORCH_CXX_STANDARD 20)
else()
  set(QPLUGIN_TORCH_CXX_STANDARD 17)
endif()

find_library(QPLUGIN_C10_LIBRARY c10 PATHS "${QPLUGIN_TORCH_DIR}/lib" NO_DEFAULT_PATH NO_CMAKE_FIND_ROOT_PATH REQUIRED)
find_library(QPLUGIN_TORCH_CPU_LIBRARY torch_cpu PATHS "${QPLUGIN_TORCH_DIR}/lib" NO_DEFAULT_PATH NO_CMAKE_FIND_ROOT_PATH REQUIRED)
# The libstdc++ string ABI torch was built with (every wheel since 2.7 uses the new one; torch
# itself says so when a Python with torch is at hand).
if(NOT DEFINED QPLUGIN_TORCH_CXX11_ABI)
  set(QPLUGIN_TORCH_CXX11_ABI 1)
  if(Python_EXECUTABLE)
    execute_process(
      COMMAND "${Python_EXECUTABLE}" -c "import torch; print(int(torch._C._GLIBCXX_USE_CXX11_ABI))"
      OUTPUT_VARIABLE _qp_abi OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _qp_rc ERROR_QUIET)
    if(_qp_rc EQUAL 0 AND _qp_abi MATCHES "^[01]$")
      set(QPLUGIN_TORCH_CXX11_ABI ${_qp_abi})
    endif()
  endif()
endif()

set(QPLUGIN_TORCH_INCLUDE_DIRS "${_qp_inc}" "${_qp_inc}/torch/csrc/api/include")
if(NOT TARGET qplugin::torch_cpu)
  add_library(qplugin::torch_cpu INTERFACE IMPORTED)
  set_target_properties(qplugin::torch_cpu PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${QPLUGIN_TORCH_INCLUDE_DIRS}"
    INTERFACE_COMPILE_DEFINITIONS "_GLIBCXX_USE_CXX11_ABI=${QPLUGIN_TORCH_CXX11_ABI}"
    INTERFACE_LINK_LIBRARIES "${QPLUGIN_TORCH_CPU_LIBRARY};${QPLUGIN_C10_LIBRARY}")
endif()
message(STATUS "torch_qplugin: torch ${QPLUGIN_TORCH_VERSION_MMP} at ${QPLUGIN_TORCH_DIR} "
               "(C++${QPLUGIN_TORCH_CXX_STANDARD}, _GLIBCXX_USE_CXX11_ABI=${QPLUGIN_TORCH_CXX11_ABI})")
