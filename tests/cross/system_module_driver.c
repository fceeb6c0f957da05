/* A program with a system module linked in (export_system_module): it lists the
 * kernels, finds two by name and calls them; no dlopen. */
#include <stdio.h>

#include "kernels.h"

typedef int32_t (*vadd_fn)(float*, float*, float*, int32_t);
typedef int32_t (*scale_fn)(float*, float*, int32_t, float);

int main(void) {
  for (const te_kernel_entry* k = kernels_kernels; k->name != NULL; ++k) printf("%s: %s\n", k->name, k->prototype);
  float a[5] = {1, 2, 3, 4, 5}, b[5] = {10, 20, 30, 40, 50}, c[5];
  const te_kernel_entry* vadd = kernels_lookup("vadd");
  const te_kernel_entry* scale = kernels_lookup("scale");
  if (vadd == NULL || scale == NULL || kernels_lookup("nope") != NULL) return 2;
  if (((vadd_fn)vadd->function)(a, b, c, 5) != 0) return 3;
  for (int i = 0; i < 5; ++i) printf("%g ", c[i]);
  if (((scale_fn)scale->function)(a, c, 5, 0.5f) != 0) return 4;
  for (int i = 0; i < 5; ++i) printf("%g ", c[i]);
  printf("\n");
  return 0;
}
