// vector_add: the classic first te program.
//   1. Define C[i] = A[i] + B[i] over a symbolic length n and print its loop nest.
//   2. GPU schedule: split by 64, bind the pieces to blockIdx.x / threadIdx.x, print the
//      loop nest again, check it with the interpreter and write vector_add.cu (the CUDA
//      source needs no GPU to generate; compile it with nvcc where there is one).
//   3. CPU schedule: split by 16, vectorize the inner loop, parallelize the outer one,
//      JIT-compile with LLVM, run and check.
// Usage: vector_add [output directory for vector_add.cu, default "."]. Exits 1 on a
// wrong result.
#include <te/te.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

using namespace te;

namespace {

// Exits with status 1 unless c == a + b exactly (float addition is exact to compare:
// every backend performs the same single rounding).
void check(const NDArray& c, const std::vector<float>& a, const std::vector<float>& b, const char* what) {
  std::vector<float> got = c.to_vector<float>();
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i] != a[i] + b[i]) {
      std::cerr << what << ": C[" << i << "] = " << got[i] << ", expected " << a[i] + b[i] << "\n";
      std::exit(1);
    }
  }
  std::cout << what << ": all " << got.size() << " values correct\n";
}

}  // namespace

int main(int argc, char** argv) {
  const std::string out_dir = argc > 1 ? argv[1] : ".";

  // 1. What to compute.
  Var n("n");
  Tensor A = placeholder({n}, Float(32), "A");
  Tensor B = placeholder({n}, Float(32), "B");
  Tensor C = compute(
      {n}, [&](Expr i) { return A(i) + B(i); }, "C");

  Schedule s = create_schedule({C});
  std::cout << "== the loop nest before scheduling ==\n" << lower(s, {A, B, C}, "vector_add");

  // 2. How to run it on a GPU: blocks of 64 threads, one element per thread.
  auto [bx, tx] = s[C].split(C.axis(0), 64);
  s[C].bind(bx, thread_axis("blockIdx.x"));
  s[C].bind(tx, thread_axis("threadIdx.x"));
  LoweredFunc gpu = lower(s, {A, B, C}, "vector_add");
  std::cout << "\n== after split by 64 and bind to blockIdx.x / threadIdx.x ==\n" << gpu;

  const int64_t size = 1000;  // not a multiple of 64: the guard handles the tail
  std::vector<float> a(size), b(size);
  for (int64_t i = 0; i < size; ++i) {
    a[i] = 0.25f * static_cast<float>(i);
    b[i] = 1.0f - static_cast<float>(i % 5);
  }
  NDArray na = NDArray::from_vector(a, {size}), nb = NDArray::from_vector(b, {size});
  NDArray nc = NDArray::empty({size}, Float(32));
  interpret(gpu, {na, nb, nc});  // every (block, thread) pair, run on the CPU
  check(nc, a, b, "interpret (GPU schedule)");

  CudaModule cu = build_cuda(gpu);
  const std::string cu_path = out_dir + "/vector_add.cu";
  std::ofstream(cu_path) << cu.source();
  for (const CudaKernel& k : cu.kernels()) {
    CudaLaunchDims d = k.launch_dims({{"n", size}});
    std::cout << "wrote " << cu_path << ": kernel " << k.name << ", grid " << d.grid[0] << " x block " << d.block[0]
              << " for n = " << size << "\n";
  }

  // 3. How to run it on this CPU: 16-wide vectors, chunks spread over the thread pool.
  Schedule t = create_schedule({C});
  auto [xo, xi] = t[C].split(C.axis(0), 16);
  t[C].vectorize(xi);
  t[C].parallel(xo);
  LoweredFunc cpu = lower(t, {A, B, C}, "vector_add");
  std::cout << "\n== CPU schedule: split by 16, vectorize, parallel ==\n" << cpu;
  Module m = build(cpu);
  NDArray nc2 = NDArray::empty({size}, Float(32));
  m("vector_add")(na, nb, nc2);  // n = 1000 is bound from the arrays' shapes
  check(nc2, a, b, "LLVM JIT (CPU schedule)");
  return 0;
}
