/* te's C runtime in C alone: the per-thread last error (the parallel loops are in
 * thread_pool.c, scratch memory in workspace.c, which libte_runtime shares).
 * libte_c_runtime, what ahead-of-time kernels need on a device, has no C++ library and no
 * fmt; libte_runtime's C++ twin serves the JIT. */
#include <stdio.h>

#include "te/runtime/c_runtime_api.h"

enum { kMaxError = 1024 };

static _Thread_local char t_last_error[kMaxError];

const char* te_get_last_error(void) { return t_last_error; }

void te_set_last_error(const char* message) {
  /* Longer messages are cut: te's own are one line. */
  snprintf(t_last_error, sizeof t_last_error, "%s", message == NULL ? "" : message);
}
