// The GPU path of te's CUDA helpers (mma.sync, ldmatrix, cp.async behind TE_PTX) in the CPU
// emulation of each PTX instruction (tests/cuda_emulation/ptx_emulation.h): a
// double-buffered tensor-core GEMM equals interpret() through that path, and three
// mistakes planted in its .cu text, each one a GPU-only bug the portable path cannot
// show, give wrong results there.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cuda_emulation/harness.h"
#include "cuda_emulation/kernels.h"
#include "te/te.h"

using namespace te;

namespace {

constexpr int M = 64, N = 128, K = 48;  // two blocks, three k tiles (odd, double-buffered)

LoweredFunc gemm() {
  ops::MatmulTensorCoreOptions o;
  o.block_m = o.block_n = 64;
  o.tile_k = 16;
  return cuda_test::matmul_tensorcore_func(M, N, K, Float(16), o, "ptx_gemm");
}

// Small integers: every product and sum exact, as the GPU kit's bit-exact corpus uses.
NDArray integer_matrix(int rows, int cols, unsigned seed) {
  NDArray a = NDArray::empty({rows, cols}, Float(16));
  for (int i = 0; i < rows * cols; ++i) cuda_test::set_element(a, i, double(int((i * 7 + seed) % 9) - 4));
  return a;
}

// source with `from` replaced by `to` (each occurrence); fails the test when absent.
std::string planted(std::string source, const std::string& from, const std::string& to) {
  size_t at = source.find(from);
  EXPECT_NE(at, std::string::npos) << "the .cu file no longer has: " << from;
  for (; at != std::string::npos; at = source.find(from, at + to.size())) source.replace(at, from.size(), to);
  return source;
}

// The first array difference from interpret()'s output when the module runs through the
// given path ("" when equal).
std::string difference(const CudaModule& m, const LoweredFunc& f, cuda_test::EmulatedProgram::Paths paths) {
  cuda_test::EmulatedProgram program(paths);
  program.add(m);
  std::string log;
  if (!program.build(&log)) return "build failed: " + log;
  NDArray a = integer_matrix(M, K, 1), b = integer_matrix(K, N, 5);
  NDArray want = NDArray::empty({M, N}, Float(32));
  interpret(f, {a, b, want});
  cuda_test::EmulatedRun r = program.run(f.name, f, {a, b, NDArray::empty({M, N}, Float(32))});
  if (r.error != 0) return "error " + std::to_string(r.error) + ": " + r.output;
  return cuda_test::compare_arrays(want, r.arrays[2]);
}

TEST(PtxEmulation, TheGpuPathEqualsInterpret) {
  const LoweredFunc f = gemm();
  const CudaModule m = build_cuda(f);
  for (const char* instruction : {"te_ptx_mma_m16n8k16_f16(", "te_ptx_ldmatrix_x4(", "te_ptx_ldmatrix_x2_trans(",
                                  "te_ptx_cp_async_16(", "te_ptx_cp_async_wait_all("})
    EXPECT_NE(m.source().find(instruction), std::string::npos) << instruction << " in\n" << m.source();
  EXPECT_EQ(difference(m, f, cuda_test::EmulatedProgram::Paths::Ptx), "");
  EXPECT_EQ(difference(m, f, cuda_test::EmulatedProgram::Paths::Portable), "");
  EXPECT_EQ(difference(m, f, cuda_test::EmulatedProgram::Paths::Both), "");
}

// Each planted mistake leaves the portable path right and makes the PTX path wrong.
TEST(PtxEmulation, PlantedMistakesAreCaught) {
  const LoweredFunc f = gemm();
  const CudaModule good = build_cuda(f);
  struct Mistake {
    const char* what;
    std::string source;
  };
  const std::vector<Mistake> mistakes = {
      // ldmatrix x4 for "a": the lanes of rows 8-15 give rows 0-7 and back (the fragment's
      // two halves swapped).
      {"swapped fragment halves", planted(good.source(), "((lane >> 3) & 1u) * 8u", "(((lane >> 3) & 1u) ^ 1u) * 8u")},
      // No cp.async.wait_all before the barriers: the copies never land.
      {"a missing wait", planted(good.source(), "te_cp_async_wait_all();\n", "\n")},
      // Each lane gives the address of the next row of its matrix.
      {"a wrong ldmatrix lane",
       planted(good.source(), "(long long)(lane & 15u) * stride", "(long long)((lane + 1u) & 15u) * stride")},
  };
  for (const Mistake& mistake : mistakes) {
    SCOPED_TRACE(mistake.what);
    ASSERT_NE(mistake.source, good.source());
    const CudaModule m(good.name(), mistake.source, good.launcher_params(), good.kernels(), good.uses_half(),
                       good.uses_bfloat16());
    EXPECT_EQ(difference(m, f, cuda_test::EmulatedProgram::Paths::Portable), "");
    EXPECT_NE(difference(m, f, cuda_test::EmulatedProgram::Paths::Ptx), "");
    // Run both ways (as every emulated test does), the two paths disagree.
    EXPECT_NE(difference(m, f, cuda_test::EmulatedProgram::Paths::Both).find("differs from the portable path"),
              std::string::npos);
  }
}

}  // namespace
