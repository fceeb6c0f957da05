// The Ansor operator suite (bench/ansor_suite.h) auto-scheduled for CUDA, as the GPU kit
// times it against PyTorch (tests/gpu_kit/ansor_bench.cpp):
//  - scaled down (extents and channels / 8), each kernel runs on the CUDA emulation and
//    must equal interpret() of the same loop IR bit for bit, and interpret() of te's
//    default schedule within float tolerance;
//  - scripts/gpu_check.py's PyTorch references for the kit, run on the CPU on those small
//    cases, must agree with te (a reference's layout mistake would otherwise show only on
//    a GPU machine, as a wrong-answer row);
//  - at the paper's shapes, nvcc builds every kernel for sm_90 without spills.
#include <gtest/gtest.h>
#include <te/auto_schedule.h>
#include <te/te.h>

#include <cmath>
#include <memory>
#include <random>
#include <regex>

#include "ansor_suite.h"
#include "cuda_emulation/harness.h"
#include "gpu_kit/ansor_bench.h"

namespace te {
namespace {

constexpr int kShrink = 8;

struct Case {
  te_bench::SuiteKernel kernel;
  LoweredFunc fast, reference;
};

std::vector<int64_t> const_shape(const Tensor& t) {
  std::vector<int64_t> shape;
  for (const Expr& e : t.shape()) shape.push_back(*as_const_int(e));
  return shape;
}

// The kernel's arguments: inputs uniform in [-1, 1), outputs zero.
std::vector<Argument> random_args(const te_bench::SuiteKernel& k, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<Argument> args;
  for (size_t i = 0; i < k.args.size(); ++i) {
    NDArray a = NDArray::empty(const_shape(k.args[i]), Float(32));
    auto* p = static_cast<float*>(a.data());
    for (int64_t e = 0; e < a.size(); ++e) p[e] = i + 1 < k.args.size() ? dist(rng) : 0.0f;
    args.emplace_back(a);
  }
  return args;
}

std::vector<Argument> copies(const std::vector<Argument>& args) {
  std::vector<Argument> out;
  for (const Argument& a : args) out.emplace_back(a.array().copy());
  return out;
}

class AnsorSuiteCuda : public ::testing::TestWithParam<std::string> {
 public:
  static void SetUpTestSuite() {
    AutoScheduleOptions o;
    o.target = "cuda";
    o.cuda_threads_per_block = 64;  // fewer OS threads for the emulation
    program_ = std::make_unique<cuda_test::EmulatedProgram>();
    try {
      for (te_bench::SuiteKernel& k : te_bench::ansor_suite(kShrink)) {
        Case c{k, lower(auto_schedule({k.output}, o), k.args, k.name),
               lower(create_schedule({k.output}), k.args, k.name + "_ref")};
        program_->add(build_cuda(c.fast));
        cases_.push_back(std::move(c));
      }
    } catch (const Error& e) {
      log_ = std::string("auto_schedule, lower() or build_cuda() failed: ") + e.what();
      return;
    }
    built_ = program_->build(&log_);
  }
  static void TearDownTestSuite() {
    program_.reset();
    cases_.clear();
  }
  static const Case& get(const std::string& name) {
    for (const Case& c : cases_)
      if (c.kernel.name == name) return c;
    throw std::runtime_error("no case " + name);
  }

  static std::unique_ptr<cuda_test::EmulatedProgram> program_;
  static std::vector<Case> cases_;
  static bool built_;
  static std::string log_;
};
std::unique_ptr<cuda_test::EmulatedProgram> AnsorSuiteCuda::program_;
std::vector<Case> AnsorSuiteCuda::cases_;
bool AnsorSuiteCuda::built_ = false;
std::string AnsorSuiteCuda::log_;

TEST_P(AnsorSuiteCuda, EmulationEqualsInterpret) {
  ASSERT_TRUE(built_) << log_;
  const Case& c = get(GetParam());
  std::vector<Argument> args = random_args(c.kernel, 11), same = copies(args), slow = copies(args);
  interpret(c.fast, same);
  interpret(c.reference, slow);
  cuda_test::EmulatedRun r = program_->run(c.kernel.name, c.fast, args);
  ASSERT_EQ(r.error, 0) << r.output;
  const size_t out = c.kernel.args.size() - 1;
  auto got = r.arrays[out].to_vector<float>(), want = same[out].array().to_vector<float>();
  auto ref = slow[out].array().to_vector<float>();
  float scale = 1;
  for (float v : ref) scale = std::max(scale, std::fabs(v));
  for (size_t e = 0; e < got.size(); ++e) {
    ASSERT_EQ(got[e], want[e]) << GetParam() << " element " << e << " (emulation vs interpret)";
    ASSERT_LE(std::fabs(got[e] - ref[e]), 1e-5f * scale) << GetParam() << " element " << e << " (vs the default)";
  }
}

std::vector<std::string> suite_names() {
  std::vector<std::string> names;
  for (const te_bench::SuiteKernel& k : te_bench::ansor_suite(kShrink)) names.push_back(k.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Suite, AnsorSuiteCuda, ::testing::ValuesIn(suite_names()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

// gpu_check.py's references (the GPU kit's PyTorch side) on the CPU, against te.
TEST(AnsorSuiteTorchReferences, AgreeWithTe) {
  if (cuda_test::run_command(fmt::format("{} -c 'import torch'", cuda_test::quote(TE_PYTHON))).status != 0)
    GTEST_SKIP() << "no PyTorch for " << TE_PYTHON;
  cuda_test::TempDir dir;
  nlohmann::json cases = nlohmann::json::array();
  for (const te_bench::SuiteKernel& k : te_bench::ansor_suite(kShrink)) {
    std::vector<Argument> args = random_args(k, 5);
    interpret(lower(create_schedule({k.output}), k.args, k.name), args);
    nlohmann::json c = ansor_torch_call(k.name);
    c["name"] = k.name;
    for (size_t i = 0; i < args.size(); ++i) {
      const std::string file = fmt::format("{}_{}.npy", k.name, i);
      args[i].array().save_npy(dir.path() + "/" + file);
      c[i + 1 < args.size() ? "inputs" : "expected"].push_back(file);
    }
    cases.push_back(c);
  }
  cuda_test::write_file(dir.path() + "/references.json", cases.dump(1));
  cuda_test::CommandResult r = cuda_test::run_command(fmt::format(
      "{} {} {} --check-references", cuda_test::quote(TE_PYTHON), cuda_test::quote(TE_GPU_CHECK), dir.path()));
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output.find("DIFFERS"), std::string::npos) << r.output;
}

// The kit's kernels at the paper's shapes: nvcc for sm_90, no warnings, no spills.
TEST(AnsorSuiteNvcc, PaperShapesBuildWithoutSpills) {
  const std::string nvcc = cuda_test::nvcc_path();
  if (nvcc.empty()) GTEST_SKIP() << "nvcc not found (set TE_NVCC or install the CUDA toolkit)";
  cuda_test::TempDir dir;
  for (const BenchCase& b : ansor_bench_cases()) {
    const std::string cu = dir.path() + "/" + b.name + ".cu";
    cuda_test::write_file(cu, build_cuda(b.func).source());
    cuda_test::CommandResult r =
        cuda_test::nvcc_compile(nvcc, cu, "sm_90", "-cubin --resource-usage", dir.path() + "/" + b.name + ".cubin");
    ASSERT_EQ(r.status, 0) << b.name << ":\n" << r.output;
    const std::regex spills(R"((\d+) bytes spill (stores|loads))");
    int reports = 0;
    for (auto m = std::sregex_iterator(r.output.begin(), r.output.end(), spills); m != std::sregex_iterator(); ++m) {
      ++reports;
      EXPECT_EQ((*m)[1].str(), "0") << b.name << " spills:\n" << r.output;
    }
    EXPECT_GT(reports, 0) << "nvcc --resource-usage printed no spill counts:\n" << r.output;
  }
}

}  // namespace
}  // namespace te
