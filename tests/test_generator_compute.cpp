// TE_COMPUTE (te/generator.h): a kernel defined by its computation alone, scheduled by
// te::auto_schedule's rules when generated, found and built; its errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "te/generator.h"
#include "test_util.h"

using namespace te;
namespace fs = std::filesystem;

// out[i, j] = sum_k A[i, k] * B[k, j] * 0.5, 24 x 20 x 16.
TE_COMPUTE(gen_matmul) {
  Tensor A = placeholder({24, 16}, Float(32), "A");
  Tensor B = placeholder({16, 20}, Float(32), "B");
  IterVar k = reduce_axis({0, 16}, "k");
  Tensor P = compute(
      {24, 20}, [&](Expr i, Expr j) { return sum(A(i, k) * B(k, j), {k}); }, "P");
  Tensor Out = compute(
      {24, 20}, [&](Expr i, Expr j) { return P(i, j) * 0.5f; }, "Out");
  return {{A, B, Out}};
}

// Two outputs, listed first: the parameter order is the user's, not te's.
TE_COMPUTE(gen_two_outputs) {
  Tensor A = placeholder({32}, Float(32), "A");
  Tensor D = compute(
      {32}, [&](Expr i) { return A(i) * 2.0f; }, "D");
  Tensor T = compute(
      {32}, [&](Expr i) { return A(i) + 3.0f; }, "T");
  return {{D, T, A}, {D, T}};
}

TE_COMPUTE(gen_no_args) { return {}; }

TE_COMPUTE(gen_stray_output) {
  Tensor A = placeholder({8}, Float(32), "A");
  Tensor B = compute(
      {8}, [&](Expr i) { return A(i) + 1.0f; }, "B");
  Tensor C = compute(
      {8}, [&](Expr i) { return A(i) - 1.0f; }, "C");
  return {{A, B}, {C}};
}

namespace {

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

NDArray filled(std::vector<int64_t> shape, int salt) {
  NDArray x = NDArray::empty(shape, Float(32));
  float* p = static_cast<float*>(x.data());
  for (int64_t i = 0; i < x.size(); ++i) p[i] = float((i * 5 + salt) % 9) - 4.0f;
  return x;
}

class GeneratorComputeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/te_gen_compute_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

}  // namespace

TEST(GeneratorCompute, RegistersComputesBesideGenerators) {
  EXPECT_EQ(registered_computes(),
            (std::vector<std::string>{"gen_matmul", "gen_no_args", "gen_stray_output", "gen_two_outputs"}));
  EXPECT_TRUE(registered_generators().empty());
  ComputeDefinition d = compute_definition("gen_matmul");
  ASSERT_EQ(d.args.size(), 3u);
  ASSERT_EQ(d.outputs.size(), 1u);
  EXPECT_EQ(d.outputs[0].name(), "Out");  // the last arg when none is named
}

TEST(GeneratorCompute, FoundKernelIsTheRulesScheduleAndComputesTheMath) {
  GeneratedKernel k = find_kernel("gen_matmul");
  ASSERT_TRUE(k.cpu.body.defined());
  ASSERT_TRUE(k.cuda.body.defined());
  ComputeDefinition d = compute_definition("gen_matmul");
  EXPECT_EQ(to_string(k.cpu), to_string(lower(auto_schedule(d.outputs), d.args, "gen_matmul")));
  NDArray a = filled({24, 16}, 1), b = filled({16, 20}, 2);
  std::vector<float> expected(24 * 20);
  const float* pa = static_cast<const float*>(a.data());
  const float* pb = static_cast<const float*>(b.data());
  for (int i = 0; i < 24; ++i)
    for (int j = 0; j < 20; ++j) {
      float acc = 0;
      for (int kk = 0; kk < 16; ++kk) acc += pa[i * 16 + kk] * pb[kk * 20 + j];
      expected[i * 20 + j] = acc * 0.5f;
    }
  NDArray interpreted = NDArray::empty({24, 20}, Float(32)), jit = NDArray::empty({24, 20}, Float(32));
  interpret(k.cpu, {a, b, interpreted});
  build(k.cpu)("gen_matmul").call({a, b, jit});
  EXPECT_EQ(interpreted.to_vector<float>(), expected);
  EXPECT_EQ(jit.to_vector<float>(), expected);
  NDArray emulated = NDArray::empty({24, 20}, Float(32));
  interpret(k.cuda, {a, b, emulated});  // the CUDA schedule's loop IR, bound to threads
  EXPECT_EQ(emulated.to_vector<float>(), expected);
}

TEST(GeneratorCompute, ParametersFollowTheDefinitionsOrder) {
  GeneratedKernel k = find_kernel("gen_two_outputs");
  ASSERT_EQ(k.cpu.params.size(), 3u);
  EXPECT_EQ(k.cpu.params[0].name(), "D");
  EXPECT_EQ(k.cpu.params[2].name(), "A");
  NDArray a = filled({32}, 3), d = NDArray::empty({32}, Float(32)), t = NDArray::empty({32}, Float(32));
  build(k.cpu)("gen_two_outputs").call({d, t, a});
  std::vector<float> av = a.to_vector<float>(), dv = d.to_vector<float>(), tv = t.to_vector<float>();
  for (int i = 0; i < 32; ++i) {
    EXPECT_EQ(dv[i], av[i] * 2.0f) << i;
    EXPECT_EQ(tv[i], av[i] + 3.0f) << i;
  }
}

TEST_F(GeneratorComputeTest, GenerateAndMainWriteEveryPart) {
  std::vector<std::string> written = generate_kernel("gen_matmul", dir_.string(), true, true);
  EXPECT_EQ(written.size(), 4u);
  EXPECT_EQ(read(dir_ / "gen_matmul.o").substr(1, 3), "ELF");
  EXPECT_NE(read(dir_ / "gen_matmul.h").find("int32_t gen_matmul(float* A, float* B, float* Out);"), std::string::npos);
  EXPECT_NE(read(dir_ / "gen_matmul.cu").find("blockIdx.x"), std::string::npos);
  std::vector<std::string> args = {"gen", "--list"};
  std::vector<char*> argv;
  for (std::string& x : args) argv.push_back(x.data());
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(generator_main(2, argv.data()), 0);
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "gen_matmul\ngen_no_args\ngen_stray_output\ngen_two_outputs\n");
}

TEST(GeneratorCompute, ErrorsNameTheComputationAndWhatIsWrong) {
  expect_error([] { compute_definition("gen_no_args"); },
               {"generator: computation 'gen_no_args' returned no args (its tensors in parameter order)"});
  expect_error([] { compute_definition("gen_stray_output"); },
               {"generator: computation 'gen_stray_output': output 'C' is not among its args"});
  expect_error([] { compute_definition("nope"); },
               {"generator: no computation 'nope'; this generator has: gen_matmul, gen_no_args, "
                "gen_stray_output, gen_two_outputs"});
  expect_error([] { find_kernel("nope"); },
               {"generator: no kernel 'nope'; this generator has: gen_matmul, gen_no_args, gen_stray_output, "
                "gen_two_outputs"});
  expect_error([] { generate_kernel("nope", "/tmp", true, false); },
               {"generator: no kernel 'nope'; this generator has: gen_matmul, gen_no_args, gen_stray_output, "
                "gen_two_outputs"});
  AutoScheduleOptions bad;
  bad.trials = -1;
  expect_error([&] { auto_schedule_kernel("gen_matmul", bad); },
               {"generator: kernel 'gen_matmul': auto_schedule: AutoScheduleOptions::trials is -1"});
}
