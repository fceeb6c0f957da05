/* A C program on te's C runtime alone: parallel loops (one failing), the last error and
 * aligned memory (zero-filled or not, a large freed block reused). Prints "ok" when every
 * check holds. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "te/runtime/c_runtime_api.h"

static int32_t add_one(int64_t begin, int64_t end, void* closure) {
  int32_t* v = (int32_t*)closure;
  for (int64_t i = begin; i < end; ++i) v[i] += 1;
  return 0;
}

static int32_t fail_at_500(int64_t begin, int64_t end, void* closure) {
  (void)closure;
  if (begin <= 500 && 500 < end) {
    te_set_last_error("chunk with 500 failed");
    return 7;
  }
  return 0;
}

/* A nested loop runs serially inside a chunk. */
static int32_t nested(int64_t begin, int64_t end, void* closure) {
  for (int64_t i = begin; i < end; ++i)
    if (te_parallel_for(4, add_one, (int32_t*)closure + 4 * i) != 0) return 1;
  return 0;
}

int main(void) {
  enum { N = 100000 };
  int32_t* v = (int32_t*)te_alloc(N * sizeof(int32_t));
  if (v == NULL || ((uintptr_t)v % 64) != 0 || v[N - 1] != 0) return printf("te_alloc\n"), 1;
  for (int round = 0; round < 50; ++round)
    if (te_parallel_for(N, add_one, v) != 0) return printf("parallel_for failed\n"), 1;
  for (int i = 0; i < N; ++i)
    if (v[i] != 50) return printf("v[%d] = %d\n", i, v[i]), 1;
  if (te_parallel_for(1000, fail_at_500, NULL) != 7 || strcmp(te_get_last_error(), "chunk with 500 failed") != 0)
    return printf("failure: '%s'\n", te_get_last_error()), 1;
  if (te_parallel_for(N / 4, nested, v) != 0 || v[N - 1] != 51) return printf("nested\n"), 1;
  if (te_alloc(UINT64_MAX) != NULL || strstr(te_get_last_error(), "cannot allocate") == NULL)
    return printf("te_alloc(too much)\n"), 1;
  te_free(v);
  /* The uninitialized kind (what a kernel's stored-before-loaded buffers take), a large
   * block dirtied, freed and taken again zero-filled. */
  unsigned char* u = (unsigned char*)te_alloc_uninitialized(1 << 20);
  if (u == NULL || ((uintptr_t)u % 64) != 0) return printf("te_alloc_uninitialized\n"), 1;
  memset(u, 0xab, 1 << 20);
  te_free(u);
  unsigned char* z = (unsigned char*)te_alloc(1 << 20);
  for (int i = 0; z != NULL && i < (1 << 20); ++i)
    if (z[i] != 0) return printf("te_alloc: byte %d not zero\n", i), 1;
  te_free(z);
  te_workspace_release();
  printf("ok %d threads\n", te_num_threads());
  return 0;
}
