// Generators (te/generator.h): TE_GENERATOR registration, generate_kernel's files and
// generator_main's command line, run in this process.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "te/generator.h"
#include "test_util.h"

using namespace te;
namespace fs = std::filesystem;

namespace {

struct VaddParts {
  Tensor A, B, C;
};
VaddParts vadd_parts() {
  Var n("n");
  Tensor A = placeholder({n}, Float(32), "A");
  Tensor B = placeholder({n}, Float(32), "B");
  Tensor C = compute(
      {n}, [&](Expr i) { return A(i) + B(i); }, "C");
  return {A, B, C};
}

LoweredFunc vadd_cpu(const std::string& name) {
  VaddParts v = vadd_parts();
  Schedule s = create_schedule({v.C});
  return lower(s, {v.A, v.B, v.C}, name);
}

LoweredFunc vadd_gpu(const std::string& name) {
  VaddParts v = vadd_parts();
  Schedule s = create_schedule({v.C});
  auto [bx, tx] = s[v.C].split(v.C.axis(0), 64);
  s[v.C].bind(bx, thread_axis("blockIdx.x"));
  s[v.C].bind(tx, thread_axis("threadIdx.x"));
  return lower(s, {v.A, v.B, v.C}, name);
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A fresh folder, removed afterwards.
class GeneratorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/te_generator_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  // generator_main on these arguments (after the program name).
  int run_main(std::vector<std::string> args) {
    args.insert(args.begin(), "gen");
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    return generator_main(static_cast<int>(argv.size()), argv.data());
  }
  fs::path dir_;
};

}  // namespace

// Both parts; lowered under another name, which the files and C functions do not keep.
TE_GENERATOR(gen_vadd) {
  GeneratedKernel k;
  k.cpu = vadd_cpu("lowered_name");
  k.cuda = vadd_gpu("other_name");
  return k;
}

TE_GENERATOR(gen_cpu_only) {
  GeneratedKernel k;
  k.cpu = vadd_cpu("gen_cpu_only");
  return k;
}

TE_GENERATOR(gen_cuda_only) {
  GeneratedKernel k;
  k.cuda = vadd_gpu("gen_cuda_only");
  return k;
}

TE_GENERATOR(gen_empty) { return GeneratedKernel{}; }

// A CPU schedule that cannot become CUDA: a store outside every kernel.
TE_GENERATOR(gen_bad_cuda) {
  GeneratedKernel k;
  k.cuda = vadd_cpu("gen_bad_cuda");
  return k;
}

TEST(Generator, RegistersEachKernelByName) {
  std::vector<std::string> expected = {"gen_bad_cuda", "gen_cpu_only", "gen_cuda_only", "gen_empty", "gen_vadd"};
  EXPECT_EQ(registered_generators(), expected);
}

TEST_F(GeneratorTest, WritesObjectHeaderAndCudaFiles) {
  std::vector<std::string> written = generate_kernel("gen_vadd", dir_.string(), true, true);
  std::vector<std::string> expected = {(dir_ / "gen_vadd.o").string(), (dir_ / "gen_vadd.h").string(),
                                       (dir_ / "gen_vadd.cu").string(), (dir_ / "gen_vadd_cuda.h").string()};
  EXPECT_EQ(written, expected);
  std::string object = read(dir_ / "gen_vadd.o");
  ASSERT_GE(object.size(), 4u);
  EXPECT_EQ(object.substr(0, 4),
            "\x7f"
            "ELF");
  std::string header = read(dir_ / "gen_vadd.h");
  EXPECT_NE(header.find("int32_t gen_vadd(float* A, float* B, float* C, int32_t n);"), std::string::npos) << header;
  EXPECT_EQ(header.find("lowered_name"), std::string::npos) << header;
  std::string cu = read(dir_ / "gen_vadd.cu");
  EXPECT_NE(cu.find("cudaError_t gen_vadd_cuda("), std::string::npos) << cu;
  EXPECT_NE(cu.find("__global__"), std::string::npos) << cu;
  std::string cuh = read(dir_ / "gen_vadd_cuda.h");
  EXPECT_NE(cuh.find("#include <cuda_runtime.h>"), std::string::npos) << cuh;
  // C or C++: the linkage only for C++.
  EXPECT_NE(cuh.find("#ifdef __cplusplus\nextern \"C\" {\n#endif\n\ncudaError_t gen_vadd_cuda(float* A, float* B, "
                     "float* C, int32_t n, cudaStream_t stream);"),
            std::string::npos)
      << cuh;
}

TEST_F(GeneratorTest, CreatesTheOutputFolder) {
  fs::path nested = dir_ / "a" / "b";
  generate_kernel("gen_cpu_only", nested.string(), true, false);
  EXPECT_TRUE(fs::exists(nested / "gen_cpu_only.o"));
  EXPECT_TRUE(fs::exists(nested / "gen_cpu_only.h"));
  EXPECT_FALSE(fs::exists(nested / "gen_cpu_only.cu"));
}

TEST_F(GeneratorTest, ErrorsNameWhatIsMissing) {
  std::string d = dir_.string();
  expect_error([&] { generate_kernel("nope", d, true, false); },
               {"no kernel 'nope'", "gen_bad_cuda, gen_cpu_only, gen_cuda_only, gen_empty, gen_vadd"});
  expect_error([&] { generate_kernel("gen_cpu_only", d, false, true); },
               {"kernel 'gen_cpu_only' has no cuda function"});
  expect_error([&] { generate_kernel("gen_cuda_only", d, true, false); },
               {"kernel 'gen_cuda_only' has no cpu function"});
  expect_error([&] { generate_kernel("gen_empty", d, true, false); },
               {"kernel 'gen_empty' returned neither a cpu nor a cuda function"});
  EXPECT_THROW(generate_kernel("gen_bad_cuda", d, false, true), Error);
}

TEST_F(GeneratorTest, MainWritesWhatTheCommandLineAsks) {
  std::string d = dir_.string();
  EXPECT_EQ(run_main({"-o", d, "--cpu", "gen_vadd", "--cuda", "gen_cuda_only"}), 0);
  EXPECT_TRUE(fs::exists(dir_ / "gen_vadd.o"));
  EXPECT_TRUE(fs::exists(dir_ / "gen_vadd.h"));
  EXPECT_FALSE(fs::exists(dir_ / "gen_vadd.cu"));
  EXPECT_TRUE(fs::exists(dir_ / "gen_cuda_only.cu"));
  EXPECT_TRUE(fs::exists(dir_ / "gen_cuda_only_cuda.h"));
  EXPECT_FALSE(fs::exists(dir_ / "gen_cpu_only.o"));
}

TEST_F(GeneratorTest, MainListsTheKernels) {
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(run_main({"--list"}), 0);
  EXPECT_EQ(::testing::internal::GetCapturedStdout(),
            "gen_bad_cuda\ngen_cpu_only\ngen_cuda_only\ngen_empty\ngen_vadd\n");
}

TEST_F(GeneratorTest, MainReportsErrorsAndBadCommandLines) {
  std::string d = dir_.string();
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(run_main({"-o", d, "--cpu", "nope"}), 1);
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("gen: generator: no kernel 'nope'"), std::string::npos) << err;

  // Every part of every kernel: gen_empty stops it.
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(run_main({"-o", d}), 1);
  err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("'gen_bad_cuda'"), std::string::npos) << err;

  for (std::vector<std::string> bad :
       {std::vector<std::string>{}, {"--cpu", "gen_vadd"}, {"-o"}, {"-o", d, "--frobnicate"}}) {
    ::testing::internal::CaptureStderr();
    EXPECT_EQ(run_main(bad), 2);
    err = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("usage: gen -o DIR"), std::string::npos) << err;
  }
}

// --target / --mcpu / --mattr (te_add_kernels' TARGET, CPU, FEATURES) compile the objects
// for another target.
TEST_F(GeneratorTest, MainCompilesForTheTargetItIsGiven) {
  ASSERT_EQ(run_main({"-o", dir_.string(), "--cpu", "gen_cpu_only", "--target", "aarch64-linux-gnu", "--mcpu",
                      "neoverse-n1", "--mattr", "+crc"}),
            0);
  std::string object = read(dir_ / "gen_cpu_only.o");
  ASSERT_GE(object.size(), 20u);
  EXPECT_EQ(static_cast<unsigned char>(object[18]), 183);  // e_machine: EM_AARCH64
  testing::internal::CaptureStderr();
  EXPECT_EQ(run_main({"-o", dir_.string(), "--cpu", "gen_cpu_only", "--target", "aarch64-linux-gnu", "--mcpu", "nope"}),
            1);
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "gen: generator: kernel 'gen_cpu_only': target: 'nope' is not a CPU of "
            "aarch64-unknown-linux-gnu (LLVM's names: cortex-a78, neoverse-n1, x86-64-v3, "
            "skylake-avx512, ...)\n");
}

// write_kernel's library option adds the shared library; find_kernel finds generators.
TEST_F(GeneratorTest, WriteKernelWithLibraryAndFindKernel) {
  GenerateOptions options;
  options.library = true;
  std::vector<std::string> written =
      write_kernel("renamed", find_kernel("gen_cpu_only"), dir_.string(), true, false, options);
  std::vector<std::string> expected = {(dir_ / "renamed.o").string(), (dir_ / "renamed.h").string(),
                                       (dir_ / "renamed.so").string()};
  EXPECT_EQ(written, expected);
  EXPECT_TRUE(fs::exists(dir_ / "renamed.so"));
  expect_error([] { find_kernel("nope"); },
               {"generator: no kernel 'nope'; this generator has: gen_bad_cuda, gen_cpu_only, "
                "gen_cuda_only, gen_empty, gen_vadd"});
  expect_error([] { tuning_task("nope"); }, {"generator: no tuning task 'nope'; this generator has: (none)"});
  expect_error([this] { load_generator_library((dir_ / "missing.so").string()); }, {"generator: no such file: "});
}
