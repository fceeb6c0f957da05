// grid_sample with its CUDA schedule: the emitted .cu runs on the CPU emulation
// (tests/cuda_emulation) for the golden cases, and compiles with nvcc when it is present.
#include <gtest/gtest.h>

#include <te/te.h>
#include <te/ops/grid_sample.h>
#include <te/ops/grid_sample_cuda.h>

#include <cmath>
#include <fstream>
#include <map>
#include <memory>

#include "cuda_emulation/harness.h"
#include "gridsample_cases.h"
#include "test_util.h"

namespace te {
namespace {

using cuda_test::EmulatedProgram;
using cuda_test::EmulatedRun;

const std::string kDir = std::string(TE_TEST_DATA_DIR) + "/gridsample";

// One kernel per option set, with symbolic shapes, so that every golden case with those
// options runs through it.
struct Variant {
  int dims;
  std::string dtype, mode, padding;
  bool align_corners;
  std::string layout;
  std::string key() const {
    return std::to_string(dims) + dtype + mode + padding + (align_corners ? "1" : "0") + layout;
  }
};

std::vector<Variant> variants() {
  std::vector<Variant> v;
  for (const char* mode : {"bilinear", "nearest", "bicubic"})
    for (const char* pad : {"zeros", "border", "reflection"})
      for (bool ac : {false, true}) v.push_back({2, "float32", mode, pad, ac, "NCHW"});
  v.push_back({3, "float32", "bilinear", "zeros", false, "NCHW"});
  v.push_back({3, "float32", "nearest", "reflection", true, "NCHW"});
  v.push_back({2, "float32", "bilinear", "border", false, "NHWC"});
  v.push_back({2, "float64", "bicubic", "reflection", true, "NCHW"});
  return v;
}

LoweredFunc lower_variant(const Variant& v, const std::string& name) {
  DataType t = v.dtype == "float64" ? Float(64) : Float(32);
  std::vector<Expr> in_shape, grid_shape;
  Var n("n"), c("c");
  std::vector<Var> in_sp, out_sp;
  for (int d = 0; d < v.dims; ++d) {
    in_sp.push_back(Var("in" + std::to_string(d)));
    out_sp.push_back(Var("out" + std::to_string(d)));
  }
  in_shape.push_back(n);
  if (v.layout == "NCHW") in_shape.push_back(c);
  in_shape.insert(in_shape.end(), in_sp.begin(), in_sp.end());
  if (v.layout == "NHWC") in_shape.push_back(c);
  grid_shape.push_back(n);
  grid_shape.insert(grid_shape.end(), out_sp.begin(), out_sp.end());
  grid_shape.push_back(v.dims);
  Tensor data = placeholder(in_shape, t, "data");
  Tensor grid = placeholder(grid_shape, t, "grid");
  ops::GridSampleOptions o;
  o.mode = v.mode;
  o.padding_mode = v.padding;
  o.align_corners = v.align_corners;
  o.layout = v.layout;
  Tensor out = ops::grid_sample(data, grid, o);
  Schedule s = create_schedule({out});
  ops::schedule_grid_sample_cuda(s, out);
  return lower(s, {data, grid, out}, name);
}

class GridSampleCuda : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    program_ = std::make_unique<EmulatedProgram>();
    try {
      int k = 0;
      for (const Variant& v : variants()) {
        LoweredFunc f = lower_variant(v, "grid_sample_" + std::to_string(k++));
        funcs_[v.key()] = f;
        modules_.push_back(build_cuda(f));
        program_->add(modules_.back());
      }
    } catch (const Error& e) {
      log_ = std::string("lower() or build_cuda() failed: ") + e.what();
      return;
    }
    built_ = program_->build(&log_);
  }
  static void TearDownTestSuite() {
    program_.reset();
    funcs_.clear();
    modules_.clear();
  }
  void SetUp() override { ASSERT_TRUE(built_) << log_; }

  static std::unique_ptr<EmulatedProgram> program_;
  static std::map<std::string, LoweredFunc> funcs_;
  static std::vector<CudaModule> modules_;
  static bool built_;
  static std::string log_;
};
std::unique_ptr<EmulatedProgram> GridSampleCuda::program_;
std::map<std::string, LoweredFunc> GridSampleCuda::funcs_;
std::vector<CudaModule> GridSampleCuda::modules_;
bool GridSampleCuda::built_ = false;
std::string GridSampleCuda::log_;

TEST_F(GridSampleCuda, GoldenCasesOnTheEmulation) {
  int ran = 0;
  for (const auto& c : load_gridsample_cases(kDir)) {
    if (c.informational) continue;
    for (const char* layout : {"NCHW", "NHWC"}) {
      Variant v{c.dims, c.dtype, c.mode, c.padding, c.align_corners, layout};
      auto it = funcs_.find(v.key());
      if (it == funcs_.end()) continue;
      std::string dir = kDir + "/" + c.name;
      bool nhwc = std::string(layout) == "NHWC";
      if (nhwc && !std::ifstream(dir + "/input_nhwc.npy")) continue;
      SCOPED_TRACE(c.name + " " + layout);
      NDArray in = NDArray::load_npy(dir + (nhwc ? "/input_nhwc.npy" : "/input.npy"));
      NDArray grid = NDArray::load_npy(dir + "/grid.npy");
      NDArray want = NDArray::load_npy(dir + (nhwc ? "/output_nhwc.npy" : "/output.npy"));
      NDArray out = NDArray::empty(want.shape(), in.dtype());
      EmulatedRun r = program_->run(it->second.name, it->second, {in, grid, out});
      ASSERT_EQ(r.error, 0) << r.output;
      if (c.dtype == "float64")
        expect_allclose(r.arrays[2].to_vector<double>(), want.to_vector<double>(), c.atol, c.rtol, c.name);
      else
        expect_allclose(r.arrays[2].to_vector<float>(), want.to_vector<float>(), c.atol, c.rtol, c.name);
      ++ran;
    }
  }
  EXPECT_GT(ran, 60);
}

TEST_F(GridSampleCuda, OneThreadPerPixelLoopingOverChannels) {
  const CudaModule& m = modules_.front();
  ASSERT_EQ(m.kernels().size(), 1u);
  const CudaKernel& k = m.kernels()[0];
  CudaLaunchDims d = k.launch_dims({{"n", 1}, {"c", 256}, {"in0", 200}, {"in1", 200}, {"out0", 200}, {"out1", 200}});
  EXPECT_EQ(d.block[0], 256);
  EXPECT_EQ(d.grid[0], (200 * 200 + 255) / 256);  // C is not part of the grid
}

TEST_F(GridSampleCuda, CompilesWithNvcc) {
  std::string nvcc = cuda_test::nvcc_path();
  if (nvcc.empty()) GTEST_SKIP() << "nvcc not found: set TE_NVCC or install the CUDA toolkit";
  cuda_test::TempDir tmp;
  for (size_t k : {size_t{0}, modules_.size() - 1}) {
    std::string cu = tmp.path() + "/gs" + std::to_string(k) + ".cu";
    cuda_test::write_file(cu, modules_[k].source());
    cuda_test::CommandResult r = cuda_test::nvcc_compile(nvcc, cu, "sm_80", "-cubin", cu + ".cubin");
    EXPECT_EQ(r.status, 0) << r.output;
  }
}

TEST(GridSampleCudaSchedule, RefusesBadThreadAndChannelCounts) {
  Tensor data = placeholder({1, 4, 5, 5}, Float(32), "data");
  Tensor grid = placeholder({1, 3, 3, 2}, Float(32), "grid");
  Tensor out = ops::grid_sample(data, grid, ops::GridSampleOptions{});
  Schedule s = create_schedule({out});
  expect_error([&] { ops::schedule_grid_sample_cuda(s, out, 256, -1); },
               {"schedule_grid_sample_cuda", "channels_per_thread >= 0", "-1"});
  expect_error([&] { ops::schedule_grid_sample_cuda(s, out, 0); },
               {"schedule_grid_sample_cuda", "threads_per_block must be >= 1"});
}

}  // namespace
}  // namespace te
