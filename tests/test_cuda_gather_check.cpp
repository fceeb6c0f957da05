// Indices read from memory in generated CUDA: checked in the kernel (te_checked_index:
// outside the buffer the kernel stops with __trap, so the launch reports an error) unless
// their range is provably inside the buffer. Run on the CUDA emulation and, when nvcc is
// installed, compiled by it.
#include <gtest/gtest.h>

#include <te/te.h>

#include <string>
#include <vector>

#include "cuda_emulation/harness.h"

using namespace te;

namespace {

bool contains(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

// C[i] = A[index(I[i])], one thread per output, 32 threads a block.
LoweredFunc gather(const Tensor& A, const Tensor& I, const std::string& name, bool clamp) {
  Tensor C = compute(
      I.shape(),
      [&](Expr i) {
        Expr k = I(i);
        if (clamp) k = min(max(k, 0), A.shape()[0] - 1);
        return A(k);
      },
      "C");
  Schedule s = create_schedule({C});
  auto [bx, tx] = s[C].split(C.axis(0), 32);
  s[C].bind(bx, thread_axis("blockIdx.x"));
  s[C].bind(tx, thread_axis("threadIdx.x"));
  return lower(s, {A, I, C}, name);
}

}  // namespace

TEST(CudaGatherCheck, IndicesReadFromMemoryAreCheckedUnlessProvablyInside) {
  Var n("n"), m("m");
  Tensor A = placeholder({n}, Float(32), "A"), I = placeholder({m}, Int(32), "I");
  LoweredFunc checked = gather(A, I, "gather", false);
  CudaModule cm = build_cuda(checked);
  EXPECT_TRUE(contains(cm.source(), "te_checked_index_i32(")) << cm.source();
  EXPECT_TRUE(contains(cm.source(), "__trap()"));

  Tensor A16 = placeholder({16}, Float(32), "A"), I8 = placeholder({40}, Int(32), "I");
  LoweredFunc clamped = gather(A16, I8, "gather_clamped", true);
  CudaModule cl = build_cuda(clamped);
  EXPECT_FALSE(contains(cl.source(), "te_checked_index")) << cl.source();

  cuda_test::EmulatedProgram program;
  program.add(cm);
  program.add(cl);
  std::string log;
  ASSERT_TRUE(program.build(&log)) << log;

  std::vector<float> a(20);
  for (size_t k = 0; k < a.size(); ++k) a[k] = 0.5f * float(k) - 3;
  std::vector<int32_t> good{3, 0, 19, 7, 7, 12, 1, 18, 5}, bad = good;
  bad[4] = 20;  // one past the end of A
  NDArray A_a = NDArray::from_vector(a, {20});
  for (bool valid : {true, false}) {
    const std::vector<int32_t>& idx = valid ? good : bad;
    NDArray I_a = NDArray::from_vector(idx, {int64_t(idx.size())});
    NDArray C_a = NDArray::empty({int64_t(idx.size())}, Float(32));
    cuda_test::EmulatedRun run = program.run("gather", checked, {A_a, I_a, C_a});
    if (valid) {
      ASSERT_EQ(run.error, 0) << run.output;
      NDArray want = NDArray::empty({int64_t(idx.size())}, Float(32));
      interpret(checked, {A_a, I_a, want});
      EXPECT_EQ(run.arrays[2].to_vector<float>(), want.to_vector<float>());
    } else {
      // The kernel stopped (the emulation aborts where a GPU would fail the launch).
      EXPECT_TRUE(contains(run.output, "__trap()")) << run.output;
      EXPECT_TRUE(run.arrays.empty());
    }
  }
  // The clamped gather runs on any index.
  std::vector<int32_t> wild(40);
  for (size_t k = 0; k < wild.size(); ++k) wild[k] = int32_t(k * 7919) - 100000;
  NDArray A16_a = NDArray::from_vector(std::vector<float>(a.begin(), a.begin() + 16), {16});
  NDArray W_a = NDArray::from_vector(wild, {40}), out = NDArray::empty({40}, Float(32));
  cuda_test::EmulatedRun run = program.run("gather_clamped", clamped, {A16_a, W_a, out});
  ASSERT_EQ(run.error, 0) << run.output;
  NDArray want = NDArray::empty({40}, Float(32));
  interpret(clamped, {A16_a, W_a, want});
  EXPECT_EQ(run.arrays[2].to_vector<float>(), want.to_vector<float>());

  std::string nvcc = cuda_test::nvcc_path();
  if (nvcc.empty()) GTEST_SKIP() << "nvcc not found: the generated code was run on the emulation only";
  cuda_test::TempDir dir;
  for (const CudaModule* mod : {&cm, &cl}) {
    std::string cu = dir.path() + "/" + mod->name() + ".cu";
    cuda_test::write_file(cu, mod->source());
    cuda_test::CommandResult r = cuda_test::nvcc_compile(nvcc, cu, "sm_80", "-cubin", cu + ".cubin");
    EXPECT_EQ(r.status, 0) << r.output;
  }
}
