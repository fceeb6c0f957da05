/* Runs the cross-compiled tensorized int8 GEMM `gemm_u8s8` (tests/cross/test_cross.cpp) on
 * the target: the same inputs as the host test, the int32 output printed one per line. */
#include <stdint.h>
#include <stdio.h>

#include "gemm_u8s8.h"

int main(void) {
  enum { M = 8, N = 32, K = 16 };
  static uint8_t a[M * K];
  static int8_t b[N * K];
  static int32_t c[M * N];
  for (int i = 0; i < M * K; ++i) a[i] = (uint8_t)((i * 37 + 11) & 255);
  for (int i = 0; i < N * K; ++i) b[i] = (int8_t)(uint8_t)((i * 53 + 7) & 255);
  if (gemm_u8s8(a, b, c) != 0) {
    fprintf(stderr, "gemm_u8s8 failed: %s\n", te_get_last_error());
    return 1;
  }
  for (int i = 0; i < M * N; ++i) printf("%d\n", (int)c[i]);
  return 0;
}
