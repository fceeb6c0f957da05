/* te's C runtime in C alone: the per-thread last error and aligned scratch memory (the
 * parallel loops are in thread_pool.c). libte_c_runtime, what ahead-of-time kernels need
 * on a device, has no C++ library and no fmt; libte_runtime's C++ twin serves the JIT. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "te/runtime/c_runtime_api.h"

enum { kAlignment = 64, kMaxError = 1024 };

static _Thread_local char t_last_error[kMaxError];

const char* te_get_last_error(void) { return t_last_error; }

void te_set_last_error(const char* message) {
  /* Longer messages are cut: te's own are one line. */
  snprintf(t_last_error, sizeof t_last_error, "%s", message == NULL ? "" : message);
}

void* te_alloc(uint64_t nbytes) {
  /* aligned_alloc needs a multiple of the alignment; zero bytes still get one block. */
  int too_large = nbytes > UINT64_MAX - kAlignment;
  uint64_t rounded = nbytes == 0 ? kAlignment : (nbytes + kAlignment - 1) / kAlignment * kAlignment;
  void* p = too_large || rounded > SIZE_MAX ? NULL : aligned_alloc(kAlignment, (size_t)rounded);
  if (p == NULL) {
    char message[96];
    snprintf(message, sizeof message, "te_alloc: cannot allocate %llu bytes", (unsigned long long)nbytes);
    te_set_last_error(message);
    return NULL;
  }
  memset(p, 0, (size_t)rounded);
  return p;
}

void te_free(void* p) { free(p); }
