# Cross-compiling for 64-bit Arm Linux from an x86-64 host with Debian's GNU toolchain
# (g++-aarch64-linux-gnu). scripts/test_aarch64.sh uses it:
#   cmake -S . -B build/aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
#         -DQPLUGIN_TORCH_DIR=<an aarch64 torch wheel's torch/ directory>
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# Programs built for the target run under qemu-user (ctest, try_run).
find_program(QPLUGIN_QEMU_AARCH64 qemu-aarch64)
if(QPLUGIN_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${QPLUGIN_QEMU_AARCH64} -L /usr/aarch64-linux-gnu)
endif()
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
