// A te user's program: define, schedule, JIT-compile and run a vector add; check it.
#include <te/te.h>

#include <cstdio>
#include <vector>

int main() {
  using namespace te;
  Var n("n");
  Tensor A = placeholder({n}, Float(32), "A");
  Tensor B = placeholder({n}, Float(32), "B");
  Tensor C = compute(
      {n}, [&](Expr i) { return A(i) + B(i); }, "C");
  Schedule s = create_schedule({C});
  auto [xo, xi] = s[C].split(C.axis(0), 8);
  s[C].vectorize(xi);
  Module m = build(lower(s, {A, B, C}, "vadd"));

  const int count = 1000;
  std::vector<float> a(count), b(count);
  for (int i = 0; i < count; ++i) {
    a[i] = 0.5f * static_cast<float>(i);
    b[i] = 3.0f - static_cast<float>(i);
  }
  NDArray na = NDArray::from_vector(a, {count}), nb = NDArray::from_vector(b, {count});
  NDArray nc = NDArray::empty({count}, Float(32));
  m("vadd")(na, nb, nc);
  std::vector<float> c = nc.to_vector<float>();
  for (int i = 0; i < count; ++i) {
    if (c[i] != a[i] + b[i]) {
      std::printf("jit_vadd: C[%d] = %g, expected %g\n", i, c[i], a[i] + b[i]);
      return 1;
    }
  }
  try {  // te::Error crosses the library boundary
    m("vadd")(na, nb, NDArray::empty({count + 1}, Float(32)));
    std::printf("jit_vadd: a wrong shape was accepted\n");
    return 1;
  } catch (const Error& e) {
    std::printf("jit_vadd: ok (%d elements; a wrong shape says: %s)\n", count, e.what());
  }
  return 0;
}
