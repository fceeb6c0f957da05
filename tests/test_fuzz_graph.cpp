// The graph fuzzer's bounded runs (tests/fuzz/graph_case.h): random tensor graphs of 1-4
// stages with random legal schedules must compute what their unscheduled versions
// compute, in interpret() and the JIT; GPU-scheduled ones also through the CUDA
// backend, run on the CPU by the emulation harness (tests/cuda_emulation). te_fuzz
// --graph [--gpu-percent P --cuda] runs the same cases for as long as you like.
#include <gtest/gtest.h>

#include "cuda_batch.h"
#include "expr_case.h"
#include "fuzz_test_util.h"
#include "graph_case.h"

namespace te::fuzz {
namespace {

TEST(FuzzGraph, SeededRunOfCpuSchedulesMatchesTheDefaultSchedule) {
  const uint64_t base = fuzz_seed(1);
  const int count = 300 * fuzz_scale();
  RunTally tally("graph fuzzer (CPU schedules)");
  for (int k = 0; k < count; ++k) {
    const uint64_t seed = base + static_cast<uint64_t>(k);
    if (known_bug("graph", seed)) {
      tally.skip();
      continue;
    }
    tally.add(check_case(make_graph_case(seed)));
  }
  EXPECT_GT(tally.passed(), count * 9 / 10);
}

// GPU-bound expression and graph cases: interpret() and the JIT here, then all of them
// through build_cuda() and the emulation, compiled as one program.
TEST(FuzzGraph, SeededRunOfGpuSchedulesMatchesInTheCudaEmulation) {
  const uint64_t base = fuzz_seed(10001);
  const int scale = fuzz_scale();
  ExprCaseOptions eo;
  eo.gpu_percent = 100;
  GraphCaseOptions go;
  go.gpu_percent = 100;
  std::vector<FuzzCase> cases;
  for (int k = 0; k < 20 * scale; ++k) cases.push_back(make_expr_case(base + static_cast<uint64_t>(k), eo));
  for (int k = 0; k < 30 * scale; ++k) cases.push_back(make_graph_case(base + static_cast<uint64_t>(k), go));
  RunTally cpu("GPU-bound cases on the CPU"), gpu("GPU-bound cases in the CUDA emulation");
  CudaBatch batch;
  for (const FuzzCase& c : cases) {
    if (known_bug(c.kind, c.seed)) {
      cpu.skip();
      continue;
    }
    CaseResult r = check_case(c);
    cpu.add(r);
    if (r.status == CaseResult::Status::Pass) batch.add(c);
  }
  for (const CaseResult& r : batch.run()) gpu.add(r);
  EXPECT_GT(gpu.passed(), static_cast<int>(cases.size()) * 9 / 10);
}

// Every random graph is auto-schedulable (issue 38): auto_schedule's rules for the CPU,
// a short measured search, and the rules for CUDA (through the emulation) must each give
// a schedule that lowers and computes what the default schedule computes.
TEST(FuzzGraph, SeededRunOfAutoSchedulesMatchesTheDefaultSchedule) {
  const uint64_t base = fuzz_seed(20001);
  const int scale = fuzz_scale();
  GraphCaseOptions cpu;
  cpu.auto_schedule = GraphCaseOptions::Auto::Cpu;
  RunTally rules("auto_schedule rules (CPU)");
  for (int k = 0; k < 150 * scale; ++k) rules.add(check_case(make_graph_case(base + static_cast<uint64_t>(k), cpu)));
  EXPECT_EQ(rules.passed(), 150 * scale);

  GraphCaseOptions searched = cpu;
  searched.auto_trials = 2;
  RunTally search("auto_schedule search, 2 trials (CPU)");
  for (int k = 0; k < 4 * scale; ++k)
    search.add(check_case(make_graph_case(base + 5000 + static_cast<uint64_t>(k), searched)));
  EXPECT_EQ(search.passed(), 4 * scale);

  GraphCaseOptions cuda;
  cuda.auto_schedule = GraphCaseOptions::Auto::Cuda;
  std::vector<FuzzCase> cases;
  for (int k = 0; k < 30 * scale; ++k) cases.push_back(make_graph_case(base + 9000 + static_cast<uint64_t>(k), cuda));
  RunTally on_cpu("auto_schedule rules (CUDA) on the CPU"), emulated("auto_schedule rules (CUDA) in the emulation");
  CudaBatch batch;
  for (const FuzzCase& c : cases) {
    CaseResult r = check_case(c);
    on_cpu.add(r);
    if (r.status == CaseResult::Status::Pass) batch.add(c);
  }
  for (const CaseResult& r : batch.run()) emulated.add(r);
  EXPECT_EQ(on_cpu.passed(), 30 * scale);
  EXPECT_EQ(emulated.passed(), 30 * scale);
}

}  // namespace
}  // namespace te::fuzz
