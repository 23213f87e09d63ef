/* LD_PRELOAD shim for aarch64 programs under qemu-user: /proc/cpuinfo reads the file named by
 * QEMU_FAKE_CPUINFO instead.
 *
 * qemu-user (7.2, Debian 12) passes /proc/cpuinfo through from the x86 host. torch's cpuinfo
 * library parses it as an ARM cpuinfo during `import torch`, finds no ARM processor entries and
 * crashes with a NULL dereference. scripts/test_aarch64_smoke.sh writes an ARM-style cpuinfo
 * (one "processor" block per CPU with "CPU implementer" / "CPU part") and preloads this shim with
 * `qemu-aarch64 -E LD_PRELOAD=... -E QEMU_FAKE_CPUINFO=...`. Every other path passes through.
 *
 * Build: aarch64-linux-gnu-gcc -shared -fPIC -O1 -o libqemu_cpuinfo.so aarch64_qemu_cpuinfo.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char* redirect(const char* path) {
  const char* fake = getenv("QEMU_FAKE_CPUINFO");
  if (path != NULL && fake != NULL && *fake != '\0' && strcmp(path, "/proc/cpuinfo") == 0) return fake;
  return path;
}

static mode_t mode_arg(int flags, va_list ap) { return (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, mode_t) : 0; }

typedef int (*open_fn)(const char*, int, ...);
typedef int (*openat_fn)(int, const char*, int, ...);
typedef FILE* (*fopen_fn)(const char*, const char*);

int open(const char* path, int flags, ...) {
  static open_fn real;
  va_list ap;
  va_start(ap, flags);
  mode_t mode = mode_arg(flags, ap);
  va_end(ap);
  if (real == NULL) real = (open_fn)dlsym(RTLD_NEXT, "open");
  return real(redirect(path), flags, mode);
}

int open64(const char* path, int flags, ...) {
  static open_fn real;
  va_list ap;
  va_start(ap, flags);
  mode_t mode = mode_arg(flags, ap);
  va_end(ap);
  if (real == NULL) real = (open_fn)dlsym(RTLD_NEXT, "open64");
  return real(redirect(path), flags, mode);
}

int openat(int dirfd, const char* path, int flags, ...) {
  static openat_fn real;
  va_list ap;
  va_start(ap, flags);
  mode_t mode = mode_arg(flags, ap);
  va_end(ap);
  if (real == NULL) real = (openat_fn)dlsym(RTLD_NEXT, "openat");
  return real(dirfd, redirect(path), flags, mode);
}

int openat64(int dirfd, const char* path, int flags, ...) {
  static openat_fn real;
  va_list ap;
  va_start(ap, flags);
  mode_t mode = mode_arg(flags, ap);
  va_end(ap);
  if (real == NULL) real = (openat_fn)dlsym(RTLD_NEXT, "openat64");
  return real(dirfd, redirect(path), flags, mode);
}

FILE* fopen(const char* path, const char* mode) {
  static fopen_fn real;
  if (real == NULL) real = (fopen_fn)dlsym(RTLD_NEXT, "fopen");
  return real(redirect(path), mode);
}

FILE* fopen64(const char* path, const char* mode) {
  static fopen_fn real;
  if (real == NULL) real = (fopen_fn)dlsym(RTLD_NEXT, "fopen64");
  return real(redirect(path), mode);
}
