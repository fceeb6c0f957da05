/* Calls the ahead-of-time exported bias_gelu_scale (bias_gelu_scale.o + .h, written by
 * custom_op at build time) from plain C, linked with libte_runtime only, and checks it
 * against a C reference. Exits 1 on a wrong result. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bias_gelu_scale.h"

enum { ROWS = 19, COLS = 45 };

int main(void) {
  static float x[ROWS * COLS], y[ROWS * COLS], bias[COLS];
  const float scale = 0.75f;
  for (int k = 0; k < ROWS * COLS; ++k) x[k] = (float)(k % 89 - 44) / 12.0f;
  for (int j = 0; j < COLS; ++j) bias[j] = (float)(j % 7 - 3) / 4.0f;

  if (bias_gelu_scale(x, bias, y, ROWS, COLS, scale) != 0) {
    fprintf(stderr, "bias_gelu_scale failed: %s\n", te_get_last_error());
    return 1;
  }
  for (int k = 0; k < ROWS * COLS; ++k) {
    double v = (double)x[k] + bias[k % COLS];
    double want = 0.5 * v * (1.0 + tanh(0.7978845608 * (v + 0.044715 * v * v * v))) * scale;
    if (fabs(y[k] - want) > 1e-5 * fmax(1.0, fabs(want))) {
      fprintf(stderr, "y[%d] = %g, expected %g\n", k, y[k], want);
      return 1;
    }
  }
  printf("use_from_c: bias_gelu_scale.o called from C, all %d values correct\n", ROWS * COLS);
  return 0;
}
