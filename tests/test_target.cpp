// te::Target: its text form (parsed once, printed back), the checks of fields set one by
// one, and what build(), resolved_target() and auto_schedule() make of it.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include <unistd.h>

#include <cstdio>

#include "te/autotune.h"
#include "te/te.h"
#include "test_util.h"

using namespace te;

namespace {

LoweredFunc add_one() {
  Tensor A = placeholder({Expr(64)}, Float(32), "A");
  Tensor B = compute(
      {Expr(64)}, [&](const std::vector<Var>& i) { return A(i[0]) + 1.0f; }, "B");
  return lower(create_schedule({B}), {A, B}, "add_one");
}

TEST(Target, ParsesKindsTriplesAndOptions) {
  EXPECT_TRUE(Target().is_host());
  EXPECT_TRUE(Target("llvm").is_host());
  EXPECT_TRUE(Target("cuda").is_cuda());
  Target hopper = "cuda -arch=sm_90a";
  EXPECT_TRUE(hopper.is_cuda());
  EXPECT_EQ(hopper.arch, "sm_90a");
  EXPECT_EQ(Target("cuda -arch=sm_80").arch, "sm_80");
  Target arm = "llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1 -mattr=+sve,-fp-armv8 -vector-bits=128";
  EXPECT_TRUE(arm.is_llvm());
  EXPECT_FALSE(arm.is_host());
  EXPECT_EQ(arm.triple, "aarch64-linux-gnu");
  EXPECT_EQ(arm.cpu, "neoverse-n1");
  EXPECT_EQ(arm.features, "+sve,-fp-armv8");
  EXPECT_EQ(arm.vector_bits, 128);
  // A bare triple is an LLVM target for it; options may follow.
  Target bare = Target::parse("aarch64-linux-gnu -mcpu=cortex-a78");
  EXPECT_EQ(bare.triple, "aarch64-linux-gnu");
  EXPECT_EQ(bare.cpu, "cortex-a78");
  // Extra spaces are fine; a vector width alone keeps the host's CPU.
  Target wide = Target::parse("  llvm   -vector-bits=256 ");
  EXPECT_TRUE(wide.is_host());
  EXPECT_EQ(wide.vector_bits, 256);
}

TEST(Target, PrintsItsCanonicalTextWhichParsesBack) {
  for (const char* text : {"llvm", "cuda", "cuda -arch=sm_90a", "cuda -arch=sm_120", "llvm -mtriple=aarch64-linux-gnu",
                           "llvm -mcpu=x86-64-v3 -mattr=+avx2",
                           "llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512 -mattr=-avx512f -vector-bits=256"}) {
    Target t = Target::parse(text);
    EXPECT_EQ(t.str(), text);
    EXPECT_EQ(Target::parse(t.str()), t);
  }
  EXPECT_EQ(Target("aarch64-linux-gnu").str(), "llvm -mtriple=aarch64-linux-gnu");
  EXPECT_EQ(Target("llvm -vector-bits=512 -mcpu=znver4").str(), "llvm -mcpu=znver4 -vector-bits=512");
  EXPECT_NE(Target("llvm"), Target("cuda"));
  EXPECT_NE(Target("cuda"), Target("cuda -arch=sm_90"));
  EXPECT_NE(Target("cuda -arch=sm_90a"), Target("cuda -arch=sm_90"));
  EXPECT_NE(Target("llvm"), Target("llvm -vector-bits=128"));
}

TEST(Target, BadTextNamesWhatIsWrong) {
  expect_error([] { Target::parse(""); }, {"target '': empty (expected llvm, cuda or an LLVM triple"});
  expect_error([] { Target::parse("opencl"); },
               {"target 'opencl': unknown kind 'opencl' (expected llvm, cuda or an LLVM triple such as "
                "aarch64-linux-gnu)"});
  expect_error([] { Target::parse("-mcpu=x"); }, {"target '-mcpu=x': unknown kind '-mcpu=x'"});
  expect_error([] { Target::parse("llvm mcpu=x"); }, {"'mcpu=x' is not an option of the form -name=value"});
  expect_error([] { Target::parse("llvm -mcpu"); }, {"'-mcpu' is not an option of the form -name=value"});
  expect_error([] { Target::parse("llvm -mcpu="); }, {"target 'llvm -mcpu=': -mcpu has no value"});
  expect_error([] { Target::parse("llvm -mcpu=a -mcpu=b"); }, {"-mcpu is given twice"});
  expect_error([] { Target::parse("aarch64-linux-gnu -mtriple=x86_64-linux-gnu"); }, {"the triple is given twice"});
  expect_error([] { Target::parse("llvm -march=x86-64"); },
               {"unknown option -march (the options are -mtriple, -mcpu, -mattr and -vector-bits; -arch for cuda)"});
  expect_error([] { Target::parse("llvm -arch=sm_90"); },
               {"target 'llvm -arch=sm_90': -arch applies to cuda targets only (an llvm target's CPU is -mcpu)"});
  for (const char* arch : {"sm_9", "sm_9000", "compute_90", "gfx90a", "sm_90b", "sm_40", "sm_"}) {
    const std::string message = fmt::format("-arch={} is not a CUDA architecture (sm_80, sm_90, sm_90a, ...)", arch);
    expect_error([&] { Target::parse(std::string("cuda -arch=") + arch); }, {message.c_str()});
  }
  expect_error([] { Target::parse("cuda -arch=sm_80 -arch=sm_90"); }, {"-arch is given twice"});
  expect_error([] { Target::parse("cuda -mcpu=sm_90"); }, {"target 'cuda -mcpu=sm_90': -mcpu applies to llvm "
                                                           "targets only"});
  expect_error([] { Target::parse("llvm -mattr=avx2"); }, {"feature 'avx2' must be +name or -name (e.g. +avx2)"});
  expect_error([] { Target::parse("llvm -mattr=+avx2,,+fma"); }, {"feature '(empty)' must be +name or -name"});
  for (const char* bits : {"100", "0", "32", "4096", "256x", "-128", "99999999999999"})
    expect_error([&] { Target::parse(std::string("llvm -vector-bits=") + bits); },
                 {"is not a power of two from 64 to 2048"});
}

TEST(Target, BuildTakesLlvmTargetsOnly) {
  BuildOptions o;
  o.target = "cuda";
  expect_error([&] { build(add_one(), o); },
               {"build: target 'cuda' is not an LLVM target (build_cuda() makes CUDA C)"});
  o.target = Target();
  o.target.vector_bits = 96;  // set field by field, not parsed
  expect_error([&] { build(add_one(), o); },
               {"build: target 'llvm -vector-bits=96': vector_bits is 96; use 0 (the CPU's widest) or a power "
                "of two from 64 to 2048"});
  o.target = Target();
  o.target.arch = "sm_90";  // a GPU's on an llvm target
  expect_error([&] { build(add_one(), o); },
               {"build: target 'llvm': arch 'sm_90' names a GPU; an llvm target has a cpu instead"});
  o.target = Target();
  o.target.features = "avx2";
  expect_error([&] { export_object(add_one(), "unused.o", o); },
               {"target 'llvm -mattr=avx2': feature 'avx2' must be +name or -name"});
}

TEST(Target, VectorBitsBecomeLlvmsPreferredVectorWidth) {
  BuildOptions o;
  o.target = "llvm -vector-bits=128";
  EXPECT_NE(llvm_ir(add_one(), false, o).find("\"prefer-vector-width\"=\"128\""), std::string::npos);
  EXPECT_EQ(llvm_ir(add_one(), false).find("prefer-vector-width"), std::string::npos);
  // And the code still computes the same.
  NDArray a = NDArray::empty({64}, Float(32)), b = NDArray::empty({64}, Float(32));
  float* pa = static_cast<float*>(a.data());
  for (int i = 0; i < 64; ++i) pa[i] = float(i);
  build(add_one(), o)("add_one")(a, b);
  EXPECT_EQ(b.to_vector<float>()[63], 64.0f);
}

TEST(Target, ResolvedTargetsNameTheirCpuAndWidestVector) {
  Target host = resolved_target(Target());
  EXPECT_EQ(host.cpu, host_cpu());
  EXPECT_EQ(host.features, host_cpu_features());
  const std::string f = host_cpu_features();
  const int expected = f.find("+avx512f") != std::string::npos                                        ? 512
                       : f.find("+avx,") != std::string::npos || f.find("+avx2") != std::string::npos ? 256
                                                                                                      : 128;
#if defined(__x86_64__)
  EXPECT_EQ(host.vector_bits, expected);
  EXPECT_EQ(resolved_target("llvm -mcpu=x86-64-v3").vector_bits, 256);
  EXPECT_EQ(resolved_target("llvm -mcpu=skylake-avx512").vector_bits, 512);
  EXPECT_EQ(resolved_target("llvm -mcpu=skylake-avx512 -mattr=-avx512f").vector_bits, 256);
  EXPECT_EQ(resolved_target("llvm -mcpu=x86-64").vector_bits, 128);
#else
  (void)expected;
#endif
  EXPECT_EQ(resolved_target("llvm -mcpu=x86-64-v3 -vector-bits=128").vector_bits, 128);
  Target arm = resolved_target("aarch64-linux-gnu");
  EXPECT_EQ(arm.triple, "aarch64-unknown-linux-gnu");
  EXPECT_EQ(arm.cpu, "generic");
  EXPECT_EQ(arm.vector_bits, 128);
  expect_error([] { resolved_target("cuda"); }, {"is not an LLVM target"});
  expect_error([] { resolved_target("llvm -mcpu=not-a-cpu"); }, {"'not-a-cpu' is not a CPU of"});
}

TEST(Target, AutoScheduleMakesVectorsOfTheTargetsWidth) {
  Tensor A = placeholder({Expr(256), Expr(256)}, Float(32), "A");
  Tensor B = compute(
      {Expr(256), Expr(256)}, [&](const std::vector<Var>& i) { return A(i[0], i[1]) * 2.0f; }, "B");
  // The lanes of the widest vector access (ramp(base, 1, lanes)) in the loop IR the rules make for t.
  auto widest_lanes = [&](const Target& t) {
    AutoScheduleOptions o;
    o.target = t;
    std::string text = to_string(lower(auto_schedule({B}, o), {A, B}, "scale"));
    for (int lanes : {16, 8, 4})
      if (text.find(", 1, " + std::to_string(lanes) + ")]") != std::string::npos) return lanes;
    return 1;
  };
  EXPECT_EQ(widest_lanes("llvm -mcpu=x86-64-v3"), 8);
  EXPECT_EQ(widest_lanes("llvm -mcpu=skylake-avx512"), 16);
  EXPECT_EQ(widest_lanes("llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1"), 4);
  EXPECT_EQ(widest_lanes("llvm -mcpu=skylake-avx512 -vector-bits=256"), 8);
  // A search measures on this host: not for a CPU it cannot run.
  AutoScheduleOptions o;
  o.target = "llvm -mtriple=aarch64-linux-gnu";
  o.trials = 2;
  expect_error([&] { auto_schedule({B}, o); },
               {"auto_schedule: AutoScheduleOptions::trials is 2, but the search measures on this host (use trials = "
                "0, the rules alone, for target 'llvm -mtriple=aarch64-linux-gnu'): the JIT runs code on this host (",
                "), not on aarch64-unknown-linux-gnu"});
}

// Code for a target runs here when the host has its architecture and every feature of its
// CPU: the check build()'s JIT, the tuner and the search share.
TEST(Target, RunsOnHostOnlyWhatThisMachineExecutes) {
  check_runs_on_host(Target(), "x");
  expect_error([] { check_runs_on_host("cuda", "tune 'k'"); },
               {"tune 'k': target 'cuda' cannot run in this process: te runs CPU code only"});
  expect_error([] { check_runs_on_host("aarch64-linux-gnu", "tune 'k'"); },
               {"tune 'k': the JIT runs code on this host (", "), not on aarch64-unknown-linux-gnu"});
  expect_error([] { check_runs_on_host("llvm -mcpu=nope", "api"); }, {"'nope' is not a CPU of"});
#if defined(__x86_64__)
  check_runs_on_host("llvm -mcpu=x86-64", "x");  // every x86-64 runs the baseline
  if (host_cpu_features().find("+avx512f") == std::string::npos)
    expect_error([] { check_runs_on_host("llvm -mcpu=skylake-avx512", "tune 'k'"); },
                 {"tune 'k': cpu 'skylake-avx512'", "which this host (", "lacks"});
#endif
}

// auto_schedule searches a CPU other than the host's when the host runs it, and keeps its
// records apart from the host's.
TEST(Target, SearchesAnotherCpuTheHostRuns) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "names an x86-64 CPU";
#endif
  Tensor A = placeholder({Expr(64), Expr(64)}, Float(32), "A");
  Tensor B = compute(
      {Expr(64), Expr(64)}, [&](const std::vector<Var>& i) { return A(i[0], i[1]) * 2.0f + 1.0f; }, "B");
  const std::string path = ::testing::TempDir() + "te_target_search_" + std::to_string(::getpid()) + ".jsonl";
  std::remove(path.c_str());
  AutoScheduleOptions o;
  o.target = "llvm -mcpu=x86-64";
  o.trials = 2;
  o.progress = false;
  o.records = path;
  LoweredFunc f = lower(auto_schedule({B}, o), {A, B}, "twice");
  NDArray a = NDArray::empty({64, 64}, Float(32)), b = NDArray::empty({64, 64}, Float(32));
  for (int i = 0; i < 64 * 64; ++i) static_cast<float*>(a.data())[i] = float(i);
  BuildOptions bo;
  bo.target = o.target;
  build(f, bo)("twice")(a, b);
  EXPECT_EQ(b.to_vector<float>()[100], 201.0f);
  const autotune::RecordFile file = autotune::read_records_file(path);
  ASSERT_FALSE(file.records.empty());
  for (const autotune::Record& r : file.records) {
    EXPECT_EQ(r.target, autotune::target_string(o.target));
    EXPECT_NE(r.target, autotune::host_target_string());
  }
  // The records are the x86-64 search's: the host's own rules find none of them.
  AutoScheduleOptions host = o;
  host.target = Target();
  host.trials = 0;
  expect_error([&] { auto_schedule({B}, host); }, {"holds no successful record of 'B' for target 'llvm'"});
  o.trials = 0;
  auto_schedule({B}, o);  // reads its records back
  std::remove(path.c_str());
}

TEST(Target, RecordsNameTheResolvedTarget) {
  EXPECT_EQ(autotune::target_string(Target()), autotune::host_target_string());
  EXPECT_EQ(autotune::target_string("llvm -vector-bits=128"), autotune::host_target_string() + " -vector-bits=128");
  EXPECT_EQ(autotune::target_string("cuda"), "cuda");
  const std::string arm = autotune::target_string("llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1");
  EXPECT_EQ(arm.rfind("aarch64-unknown-linux-gnu -mcpu=neoverse-n1 features=", 0), 0u) << arm;
  // Naming the host's own CPU and features is the host.
  Target same;
  same.cpu = host_cpu();
  same.features = host_cpu_features();
  EXPECT_EQ(autotune::target_string(same), autotune::host_target_string());
}

}  // namespace
