/* A plain C program calling kernels that te generated during the build: it links the
 * static library of te_add_kernels and libte_runtime, nothing else of te. */
#include <math.h>
#include <stdio.h>

#include "scaled_exp.h"
#include "vadd.h"

int main(void) {
  enum { N = 1003, ROWS = 3, COLS = 5 };
  static float a[N], b[N], c[N];
  for (int i = 0; i < N; ++i) {
    a[i] = (float)i;
    b[i] = 2.0f * (float)i + 1.0f;
  }
  if (vadd(a, b, c, N) != 0) {
    printf("aot_app: vadd failed: %s\n", te_get_last_error());
    return 1;
  }
  for (int i = 0; i < N; ++i) {
    if (c[i] != a[i] + b[i]) {
      printf("aot_app: vadd C[%d] = %g, expected %g\n", i, c[i], a[i] + b[i]);
      return 1;
    }
  }
  float x[ROWS * COLS], y[ROWS * COLS];
  for (int i = 0; i < ROWS * COLS; ++i) x[i] = 0.25f * (float)(i - 7);
  /* Parameters: the buffers, then the symbolic variables in order of first appearance. */
  if (scaled_exp(x, y, ROWS, COLS, 1.5f) != 0) {
    printf("aot_app: scaled_exp failed: %s\n", te_get_last_error());
    return 1;
  }
  for (int i = 0; i < ROWS * COLS; ++i) {
    float expected = 1.5f * expf(x[i]);
    if (fabsf(y[i] - expected) > 1e-5f * fabsf(expected)) {
      printf("aot_app: scaled_exp Y[%d] = %g, expected %g\n", i, y[i], expected);
      return 1;
    }
  }
  printf("aot_app: ok\n");
  return 0;
}
