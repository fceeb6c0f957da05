// Cross-compiled AOT (BuildOptions::target: its triple, cpu and features): an
// aarch64 object linked by aarch64-linux-gnu-gcc with te's cross-built C runtime and run
// under qemu-aarch64, compared with interpret(); an x86-64-v3 library run here; the JIT
// refusing targets this host cannot run; no host feature in a foreign target's code.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "te/ops/gemm_int8.h"
#include "te/ops/gemm_int8_cpu.h"
#include "te/te.h"
#include "test_util.h"

using namespace te;
namespace fs = std::filesystem;

namespace {

// C = A x B, 16 x 16: rows in parallel, columns as 4-lane vectors (NEON on aarch64).
LoweredFunc matmul16() {
  const int n = 16;
  Tensor A = placeholder({n, n}, Float(32), "A");
  Tensor B = placeholder({n, n}, Float(32), "B");
  IterVar k = reduce_axis({0, n}, "k");
  Tensor C = compute(
      {n, n}, [&](Expr i, Expr j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
  Schedule s = create_schedule({C});
  auto [jo, ji] = s[C].split(C.axis(1), 4);
  s[C].reorder({C.axis(0), jo, C.op()->reduce_axis[0], ji});
  s[C].vectorize(ji);
  s[C].parallel(C.axis(0));
  return lower(s, {A, B, C}, "mm");
}

// The inputs driver.c builds.
std::vector<NDArray> matmul_inputs() {
  std::vector<float> a(256), b(256);
  for (int i = 0; i < 256; ++i) {
    a[i] = float(i % 7) * 0.25f - 1.0f;
    b[i] = float(i % 5) * 0.5f + 0.125f;
  }
  return {NDArray::from_vector(a, {16, 16}), NDArray::from_vector(b, {16, 16})};
}

std::vector<float> interpreted() {
  std::vector<NDArray> in = matmul_inputs();
  NDArray c = NDArray::empty({16, 16}, Float(32));
  interpret(matmul16(), {in[0], in[1], c});
  return c.to_vector<float>();
}

BuildOptions aarch64(const std::string& cpu) {
  BuildOptions o;
  o.target.triple = "aarch64-linux-gnu";
  o.target.cpu = cpu;
  o.fma_contraction = false;  // interpret() rounds every product
  return o;
}

bool host_has(const std::string& feature) {
  return ("," + host_cpu_features() + ",").find(",+" + feature + ",") != std::string::npos;
}

bool host_is_x86() { return host_cpu_features().find("sse2") != std::string::npos; }

class CrossTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/te_cross_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

// Runs a shell command; its stdout.
std::string run(const std::string& command, int* status) {
  std::string out;
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return out;
  char buffer[4096];
  for (size_t got; (got = fread(buffer, 1, sizeof buffer, p)) > 0;) out.append(buffer, got);
  int raw = pclose(p);
  *status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return out;
}

class AArch64Test : public CrossTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(AArch64Test, ObjectRunsUnderQemuAsInterpretDoes) {
  LoweredFunc f = matmul16();
  export_object(f, path("mm.o"), aarch64(GetParam()));
  export_header(f, path("mm.h"));
  int status = -1;
  std::string link = std::string("aarch64-linux-gnu-gcc -O1 -o ") + path("mm") + " " + TE_CROSS_DIR "/driver.c " +
                     path("mm.o") + " -I" + dir_.string() +
                     " -I" TE_SOURCE_INCLUDE " -L" TE_CROSS_RUNTIME_DIR " -lte_c_runtime -lstdc++ -lpthread -lm 2>&1";
  std::string log = run(link, &status);
  ASSERT_EQ(status, 0) << link << "\n" << log;
  std::string out = run("qemu-aarch64 -L /usr/aarch64-linux-gnu " + path("mm"), &status);
  ASSERT_EQ(status, 0) << out;
  std::vector<float> expected = interpreted(), got;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) got.push_back(std::strtof(line.c_str(), nullptr));
  EXPECT_EQ(got, expected);
}

INSTANTIATE_TEST_SUITE_P(Cpus, AArch64Test, ::testing::Values("cortex-a78", "neoverse-n1", ""));

// The x86 int8 dot intrinsic's generic fallback on another architecture: a tensorized
// GEMM (8 x 32 x 16) exported for aarch64, run under qemu, equal to interpret().
TEST_F(CrossTest, TensorizedInt8GemmRunsUnderQemuAsInterpretDoes) {
  ops::GemmU8S8 g = ops::gemm_u8s8(8, 32, 16);
  Schedule s = create_schedule({g.c});
  ops::schedule_gemm_u8s8_cpu(s, g);
  LoweredFunc f = lower(s, {g.a, g.b_packed, g.c}, "gemm_u8s8");
  export_object(f, path("gemm.o"), aarch64(""));
  export_header(f, path("gemm_u8s8.h"));
  int status = -1;
  std::string link = std::string("aarch64-linux-gnu-gcc -O1 -o ") + path("gemm") + " " +
                     TE_CROSS_DIR "/gemm_int8_driver.c " + path("gemm.o") + " -I" + dir_.string() +
                     " -I" TE_SOURCE_INCLUDE " -L" TE_CROSS_RUNTIME_DIR " -lte_c_runtime -lstdc++ -lpthread -lm 2>&1";
  std::string log = run(link, &status);
  ASSERT_EQ(status, 0) << link << "\n" << log;
  std::string out = run("qemu-aarch64 -L /usr/aarch64-linux-gnu " + path("gemm"), &status);
  ASSERT_EQ(status, 0) << out;
  // driver.c's inputs: B's N x K bytes packed as the kernel reads them.
  std::vector<uint8_t> a(8 * 16);
  std::vector<int8_t> b(32 * 16);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<uint8_t>((i * 37 + 11) & 255);
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<int8_t>(static_cast<uint8_t>((i * 53 + 7) & 255));
  NDArray an = NDArray::from_vector(a, {8, 16});
  NDArray bn = NDArray::from_vector(b, {2, 4, 16, 4});  // the driver passes b as packed bytes
  NDArray c = NDArray::empty({8, 32}, Int(32));
  interpret(f, {an, bn, c});
  std::vector<int32_t> got;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) got.push_back(std::atoi(line.c_str()));
  EXPECT_EQ(got, c.to_vector<int32_t>());
}

TEST_F(CrossTest, AArch64CodeUsesNeonAndNoHostFeature) {
  std::string ir = llvm_ir(matmul16(), true, aarch64(""));
  EXPECT_NE(ir.find("target triple = \"aarch64-unknown-linux-gnu\""), std::string::npos);
  EXPECT_NE(ir.find("\"target-cpu\"=\"generic\""), std::string::npos);
  for (const char* x86 : {"avx", "sse", "x86"}) EXPECT_EQ(ir.find(x86), std::string::npos) << x86;
  std::string asm_text = assembly(matmul16(), aarch64("cortex-a78"));
  EXPECT_NE(asm_text.find(".4s"), std::string::npos);  // 4 x float32 NEON arithmetic
  EXPECT_EQ(describe_target(aarch64("neoverse-n1")),
            "aarch64-unknown-linux-gnu, cpu neoverse-n1, features (the cpu's own)");
}

TEST_F(CrossTest, X86_64V3LibraryRunsHere) {
  if (!host_is_x86() || !host_has("avx2") || !host_has("fma")) GTEST_SKIP() << "this host cannot run x86-64-v3 code";
  BuildOptions v3;
  v3.target.cpu = "x86-64-v3";
  v3.fma_contraction = false;
  std::string asm_text = assembly(matmul16(), v3);
  EXPECT_NE(asm_text.find("vmulps"), std::string::npos);  // AVX (VEX) arithmetic
  EXPECT_EQ(asm_text.find("zmm"), std::string::npos);     // no AVX-512 from the build machine
  export_library(matmul16(), path("mm.so"), v3);
  void* lib = dlopen(path("mm.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  auto mm = reinterpret_cast<int32_t (*)(float*, float*, float*)>(dlsym(lib, "mm"));
  ASSERT_NE(mm, nullptr);
  std::vector<NDArray> in = matmul_inputs();
  NDArray c = NDArray::empty({16, 16}, Float(32));
  ASSERT_EQ(mm(static_cast<float*>(in[0].data()), static_cast<float*>(in[1].data()), static_cast<float*>(c.data())), 0);
  EXPECT_EQ(c.to_vector<float>(), interpreted());
  dlclose(lib);
  // The JIT runs it too: the host has every feature x86-64-v3 needs.
  NDArray jit = NDArray::empty({16, 16}, Float(32));
  build(matmul16(), v3)("mm")(in[0], in[1], jit);
  EXPECT_EQ(jit.to_vector<float>(), interpreted());
}

TEST_F(CrossTest, JitRefusesCodeThisHostCannotRun) {
  expect_error([] { build(matmul16(), aarch64("cortex-a78")); },
               {"build: the JIT runs code on this host (",
                "), not on aarch64-unknown-linux-gnu; "
                "export_object or export_library compile for another target"});
  if (!host_is_x86()) GTEST_SKIP() << "the feature check below names x86 features";
  std::string lacking;
  for (const char* f : {"avx512f", "amx-tile", "avx512fp16", "avx10.1-512"})
    if (!host_has(f) && host_cpu_features().find("-" + std::string(f)) != std::string::npos) {
      lacking = f;
      break;
    }
  if (lacking.empty()) GTEST_SKIP() << "this host has every candidate feature";
  BuildOptions o;
  o.target.features = "+" + lacking;
  expect_error([&] { build(matmul16(), o); },
               {"build: cpu '", lacking.c_str(), "which this host (",
                "lacks: its code would stop with an illegal instruction; export_object compiles "
                "for it without running it"});
  if (lacking == "avx512f") {
    BuildOptions v4;
    v4.target.cpu = "x86-64-v4";
    expect_error([&] { build(matmul16(), v4); }, {"build: cpu 'x86-64-v4' (features '') needs avx512"});
    export_object(matmul16(), path("v4.o"), v4);  // compiling for it is fine
    EXPECT_TRUE(fs::exists(path("v4.o")));
  }
}

TEST_F(CrossTest, UnknownTargetsAreErrors) {
  BuildOptions o;
  o.target.triple = "aarch64-linux-gnu";
  o.target.cpu = "skylake";
  expect_error([&] { export_object(matmul16(), path("x.o"), o); },
               {"target: 'skylake' is not a CPU of aarch64-unknown-linux-gnu"});
  o.target.cpu = "";
  o.target.features = "neon";
  expect_error([&] { export_object(matmul16(), path("x.o"), o); },
               {"target 'llvm -mtriple=aarch64-linux-gnu -mattr=neon': feature 'neon' must be "
                "+name or -name (e.g. +avx2)"});
  o.target.triple = "";
  o.target.features = "+not-a-feature";
  expect_error([&] { export_object(matmul16(), path("x.o"), o); }, {"target: 'not-a-feature' is not a feature of "});
  o.target.triple = "riscv-nothing";
  o.target.features = "";
  expect_error([&] { export_object(matmul16(), path("x.o"), o); },
               {"target: LLVM does not know the triple 'riscv-nothing'"});
}

TEST_F(CrossTest, ForeignSharedLibraryIsLinkedByTheCrossCompiler) {
  BuildOptions o = aarch64("cortex-a78");
  export_library(matmul16(), path("mm.so"), o);
  std::ifstream in(path("mm.so"), std::ios::binary);
  char header[20] = {};
  in.read(header, sizeof header);
  EXPECT_EQ(static_cast<unsigned char>(header[18]), 183);  // EM_AARCH64
}

// Two kernels for one system module.
std::vector<LoweredFunc> system_module_kernels() {
  Var n("n");
  Tensor A = placeholder({n}, Float(32), "A"), B = placeholder({n}, Float(32), "B");
  Tensor C = compute(
      {n}, [&](Expr i) { return A(i) + B(i); }, "C");
  Var alpha("alpha", Float(32));
  Tensor D = compute(
      {n}, [&](Expr i) { return A(i) * alpha; }, "D");
  return {lower(create_schedule({C}), {A, B, C}, "vadd"), lower(create_schedule({D}), {A, D}, "scale")};
}

const char* kSystemModuleOutput =
    "vadd: int32_t vadd(float* A, float* B, float* C, int32_t n)\n"
    "scale: int32_t scale(float* A, float* D, int32_t n, float alpha)\n"
    "11 22 33 44 55 0.5 1 1.5 2 2.5 \n";

// A sanitized libte_runtime needs the sanitizer runtimes in the host C program too.
#if defined(__SANITIZE_ADDRESS__)
const char* const kHostSanitize = " -fsanitize=address,undefined";
#else
const char* const kHostSanitize = "";
#endif

TEST_F(CrossTest, SystemModuleFindsKernelsByNameWithoutDlopen) {
  export_system_module(system_module_kernels(), "kernels", path("kernels.o"), path("kernels.h"));
  int status = -1;
  std::string link = std::string("cc -std=c99 -Wall -Werror") + kHostSanitize + " -o " + path("prog") +
                     " " TE_CROSS_DIR "/system_module_driver.c " + path("kernels.o") + " -I" + dir_.string() +
                     " -I" TE_SOURCE_INCLUDE " -L" TE_RUNTIME_LIB_DIR " -Wl,-rpath," TE_RUNTIME_LIB_DIR
                     " -lte_runtime -lm 2>&1";
  std::string log = run(link, &status);
  ASSERT_EQ(status, 0) << link << "\n" << log;
  EXPECT_EQ(run(path("prog"), &status), kSystemModuleOutput);
  EXPECT_EQ(status, 0);
}

TEST_F(CrossTest, SystemModuleForAArch64RunsUnderQemu) {
  export_system_module(system_module_kernels(), "kernels", path("kernels.o"), path("kernels.h"),
                       aarch64("neoverse-n1"));
  int status = -1;
  std::string link = "aarch64-linux-gnu-gcc -o " + path("prog") + " " TE_CROSS_DIR "/system_module_driver.c " +
                     path("kernels.o") + " -I" + dir_.string() +
                     " -I" TE_SOURCE_INCLUDE " -L" TE_CROSS_RUNTIME_DIR " -lte_c_runtime -lstdc++ -lpthread -lm 2>&1";
  std::string log = run(link, &status);
  ASSERT_EQ(status, 0) << link << "\n" << log;
  EXPECT_EQ(run("qemu-aarch64 -L /usr/aarch64-linux-gnu " + path("prog"), &status), kSystemModuleOutput);
  EXPECT_EQ(status, 0);
}

TEST_F(CrossTest, SystemModuleErrors) {
  expect_error([&] { export_system_module(system_module_kernels(), "my-kernels", path("k.o"), path("k.h")); },
               {"export_system_module: the module name 'my-kernels' must be a C identifier"});
  expect_error([&] { export_system_module({}, "k", path("k.o"), path("k.h")); },
               {"export_system_module: no functions given"});
  expect_error([&] { export_system_module(system_module_kernels(), "vadd", path("k.o"), path("k.h")); },
               {"export_system_module: the module 'vadd' has the name of one of its functions ('vadd')"});
}

}  // namespace
