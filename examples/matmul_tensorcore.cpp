// The tensor-core GEMM for CUDA: C = A x B with float16 (or bfloat16) A and B, float32
// accumulation by mma.sync.m16n8k16, from te::ops::matmul and its reference schedule
// (include/te/ops/matmul_cuda.h). No GPU is needed here: te checks the scheduled
// loop nest through interpret() against plain C++ on a small shape, then writes the .cu
// file of the size asked for nvcc (the host launcher is `cudaError_t hgemm(const __half* A,
// const __half* B, float* C, cudaStream_t)`).
//
//   matmul_tensorcore [size] [--bf16] [-o file.cu]    size: M = N = K (default 4096)
//
// What the schedule does, per block of 128 x 128 results and 4 warps:
//  1. A's 128 x 32 and B's 32 x 128 tiles go to shared memory through 16-byte cp.async
//     copies (sm_80+), double-buffered: the next tiles arrive while the warps multiply
//     the current ones; their rows are padded by 8 elements (storage_align), so the eight
//     16-byte rows one ldmatrix reads fall in distinct banks.
//  2. Each warp loads 16 x 16 fragments of A (ldmatrix.x4) and 16 x 8 fragments of B
//     (ldmatrix.x2.trans) into "warp" buffers and accumulates its 64 x 64 tile of C in
//     32 fragments of 16 x 8 floats (cache_write "warp"): 32 mma.sync per 16 of k.
//  3. The accumulators leave in float2 stores.
// Each of those steps is a tensorized stage: interpret() runs the intrinsics' TE
// declarations, so this loop nest is testable on any machine.
#include <te/ops/matmul.h>
#include <te/ops/matmul_cuda.h>
#include <te/te.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <random>
#include <vector>

namespace {

te::LoweredFunc tensor_core_gemm(int64_t size, te::DataType t) {
  te::Tensor A = te::placeholder({size, size}, t, "A"), B = te::placeholder({size, size}, t, "B");
  te::Tensor C = te::ops::matmul(A, B, "C");
  te::Schedule s = te::create_schedule({C});
  te::ops::schedule_matmul_tensorcore_cuda(s, C);
  return te::lower(s, {A, B, C}, "hgemm");
}

// The small shape's check: interpret() against a C++ triple loop (k in order, as the
// declaration sums). Returns the largest difference.
template <typename Half>
float check(int64_t n, te::DataType t) {
  te::LoweredFunc f = tensor_core_gemm(n, t);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<Half> a, b;
  std::vector<float> af, bf;
  for (int64_t i = 0; i < n * n; ++i) {
    a.emplace_back(dist(rng));
    b.emplace_back(dist(rng));
    af.push_back(static_cast<float>(a.back()));
    bf.push_back(static_cast<float>(b.back()));
  }
  te::NDArray C = te::NDArray::empty({n, n}, te::Float(32));
  te::interpret(f, {te::NDArray::from_vector(a, {n, n}), te::NDArray::from_vector(b, {n, n}), C});
  std::vector<float> c = C.to_vector<float>();
  float worst = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float want = 0;
      for (int64_t k = 0; k < n; ++k) want += af[size_t(i * n + k)] * bf[size_t(k * n + j)];
      worst = std::max(worst, std::abs(want - c[size_t(i * n + j)]));
    }
  return worst;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t size = 4096;
  bool bf16 = false;
  std::string out = "hgemm.cu";
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--bf16") == 0)
      bf16 = true;
    else if (std::strcmp(argv[i], "-o") == 0 && i + 1 < argc)
      out = argv[++i];
    else
      size = std::atoll(argv[i]);
  }
  const te::DataType t = bf16 ? te::BFloat(16) : te::Float(16);
  try {
    const float worst = bf16 ? check<te::bfloat16>(128, t) : check<te::half>(128, t);
    if (worst > 1e-4f) {
      std::cerr << "matmul_tensorcore: interpret() differs from C++ by " << worst << "\n";
      return 1;
    }
    te::CudaModule cu = te::build_cuda(tensor_core_gemm(size, t));
    std::ofstream(out) << cu.source();
    const te::CudaKernel& k = cu.kernels().at(0);
    std::printf("%s GEMM %lldx%lldx%lld: interpret() matches C++ at 128 (max |diff| %.1e); wrote %s\n",
                bf16 ? "bfloat16" : "float16", static_cast<long long>(size), static_cast<long long>(size),
                static_cast<long long>(size), worst, out.c_str());
    const te::CudaLaunchDims d = k.launch_dims({});
    std::printf(
        "  kernel %s: grid (%lld, %lld), block (%lld, %lld, %lld): 32 lanes x 2 x 2 warps, %lld bytes of "
        "shared memory\n",
        k.name.c_str(), static_cast<long long>(d.grid[0]), static_cast<long long>(d.grid[1]),
        static_cast<long long>(d.block[0]), static_cast<long long>(d.block[1]), static_cast<long long>(d.block[2]),
        static_cast<long long>(k.shared_bytes));
    std::printf("  compile: nvcc -std=c++17 -arch=sm_90 -c %s   (mma.sync needs sm_80 or newer)\n", out.c_str());
  } catch (const te::Error& e) {
    std::cerr << "matmul_tensorcore: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
