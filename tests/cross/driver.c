/* Runs the cross-compiled kernel `mm` (tests/cross/test_cross.cpp) on the target: the
 * same inputs as the host test, the output printed as hex floats (exact). */
#include <stdio.h>

#include "mm.h"

int main(void) {
  enum { N = 16 };
  static float a[N * N], b[N * N], c[N * N];
  for (int i = 0; i < N * N; ++i) {
    a[i] = (float)(i % 7) * 0.25f - 1.0f;
    b[i] = (float)(i % 5) * 0.5f + 0.125f;
  }
  if (mm(a, b, c) != 0) {
    fprintf(stderr, "mm failed: %s\n", te_get_last_error());
    return 1;
  }
  for (int i = 0; i < N * N; ++i) printf("%a\n", c[i]);
  return 0;
}
