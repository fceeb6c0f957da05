// A shared library of C functions that tests/test_call_extern.cpp calls through
// call_extern, named in BuildOptions::extern_libraries (the test never links it: te
// loads it).
#include <cstdint>

extern "C" {

// 3x + 0.5, in float.
float ext_lib_affine(float x) { return 3.0f * x + 0.5f; }

// The greatest common divisor of |a| and |b| (gcd(0, 0) == 0).
int32_t ext_lib_gcd(int32_t a, int32_t b) {
  int64_t x = a < 0 ? -static_cast<int64_t>(a) : a, y = b < 0 ? -static_cast<int64_t>(b) : b;
  while (y != 0) {
    int64_t r = x % y;
    x = y;
    y = r;
  }
  return static_cast<int32_t>(x);
}

// Also defined by the test executable (returning 1): the library comes first.
int32_t ext_priority(int32_t x) { return x + 2000; }

}  // extern "C"
