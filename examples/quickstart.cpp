// The te quick start: a vector add defined once, scheduled two ways.
//  1. split by 64 and bound to blockIdx/threadIdx: printed, checked by the interpreter,
//     and written as CUDA C (vadd.cu).
//  2. split by 8, vectorized and parallel: JIT-compiled for this CPU, run and checked.
#include <te/te.h>

#include <cmath>
#include <fstream>
#include <iostream>

using namespace te;

int main() {
  Var n("n");
  Tensor A = placeholder({n}, Float(32), "A");
  Tensor B = placeholder({n}, Float(32), "B");
  Tensor C = compute(
      {n}, [&](Expr i) { return A(i) + B(i); }, "C");

  // --- A GPU schedule ---
  Schedule s = create_schedule({C});
  std::cout << "== before scheduling ==\n" << lower(s, {A, B, C}, "vadd");
  auto [bx, tx] = s[C].split(C.axis(0), 64);
  s[C].bind(bx, thread_axis("blockIdx.x"));
  s[C].bind(tx, thread_axis("threadIdx.x"));
  LoweredFunc gpu = lower(s, {A, B, C}, "vadd");
  std::cout << "\n== after split by 64 + bind ==\n" << gpu;

  const int64_t size = 1000;
  std::vector<float> a(size), b(size);
  for (int64_t i = 0; i < size; ++i) {
    a[i] = 0.5f * static_cast<float>(i);
    b[i] = 3.0f - static_cast<float>(i % 7);
  }
  NDArray na = NDArray::from_vector(a, {size}), nb = NDArray::from_vector(b, {size});
  NDArray nc = NDArray::empty({size}, Float(32));
  interpret(gpu, {na, nb, nc});  // runs every (block, thread) pair on the CPU
  auto check = [&](const NDArray& c, const char* what) {
    std::vector<float> got = c.to_vector<float>();
    for (int64_t i = 0; i < size; ++i)
      if (got[i] != a[i] + b[i]) {
        std::cerr << what << ": wrong value at " << i << "\n";
        std::exit(1);
      }
    std::cout << what << ": all " << size << " values correct\n";
  };
  check(nc, "interpret (GPU schedule)");

  CudaModule cu = build_cuda(gpu);
  std::ofstream("vadd.cu") << cu.source();
  for (const CudaKernel& k : cu.kernels()) {
    CudaLaunchDims d = k.launch_dims({{"n", size}});
    std::cout << "wrote vadd.cu: kernel " << k.name << " grid " << d.grid[0] << " block " << d.block[0]
              << " for n = " << size << "\n";
  }

  // --- A CPU schedule ---
  Schedule t = create_schedule({C});
  auto [xo, xi] = t[C].split(C.axis(0), 8);
  t[C].vectorize(xi);
  t[C].parallel(xo);
  LoweredFunc cpu = lower(t, {A, B, C}, "vadd");
  std::cout << "\n== CPU schedule: split by 8, vectorize, parallel ==\n" << cpu;
  Module m = build(cpu);
  NDArray nc2 = NDArray::empty({size}, Float(32));
  m("vadd")(na, nb, nc2);
  std::cout << "host CPU: " << host_cpu() << "\n";
  check(nc2, "LLVM JIT (CPU schedule)");
  return 0;
}
