// te::ops' GELU, rotary embedding and int4 dequantization (examples/llm_kernels.h) against
// PyTorch's results (tests/data/torch_golden, made by scripts/gen_torch_golden.py), each
// through interpret() as written, the LLVM JIT with a CPU schedule (parallel, vectorized)
// and the CUDA source with a GPU schedule run on the CPU emulation (tests/cuda_emulation).
//
// Tolerances, per element, with ulp(v) the spacing of float32 at |v| (why: SOURCE.md):
//   GELU exact and tanh: 8 ulp(want) + |x| * 2^-22. PyTorch computes the exact GELU
//     through oneDNN's own erf (up to 7 ulp from the float64 truth for |x| < 1), its tanh
//     form with its vectorized tanh; te calls glibc's erff / tanhf. For x < 0 the
//     1 + erf(...) cancels (from x < -1 on, completely below -5.5), so an error e in erf
//     becomes |x| * e / 2 in the result: an absolute error, many ulps of a tiny result.
//   Rotary: 2 ulp(want) + (|x_d| + |x_partner|) * 2^-22: PyTorch's sin and cos (SLEEF,
//     1 ulp) and glibc's differ by an ulp of 1 or less; the angles are the same float32
//     numbers in both (theta = 1 / powf(10000, 2i/64) is identical in glibc and PyTorch,
//     the product position * theta rounds once in both), also at positions near 8191
//     where one ulp of the angle is 2^-11.
//   int4: exact, bit for bit (integer unpacking, one float rounding).
// The measured maxima are printed ("[ measured ]") for the record.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "../examples/llm_kernels.h"
#include "cuda_emulation/harness.h"

namespace te {
namespace {

using te_examples::ScheduleFor;

const std::string kDir = std::string(TE_TEST_DATA_DIR) + "/torch_golden";

NDArray golden(const std::string& name) { return NDArray::load_npy(kDir + "/" + name + ".npy"); }

const std::vector<ScheduleFor> kTargets = {ScheduleFor::AsWritten, ScheduleFor::Cpu, ScheduleFor::Cuda};

// The spacing of float32 numbers at |v|.
double ulp32(float v) {
  float a = std::fabs(v);
  if (std::isinf(a)) return 0;
  return static_cast<double>(std::nextafter(a, std::numeric_limits<float>::infinity())) - a;
}

// Every element of got within bound(i) of want (NaN where want is NaN, the same infinity
// where want is infinite). Prints the largest error, the largest in ulps of want among
// results of magnitude 2^-8 or more (below, the absolute terms of the bounds rule), and
// the largest fraction of its bound that an error used.
void expect_close(const NDArray& got, const NDArray& want, const std::function<double(size_t)>& bound,
                  const std::string& what) {
  EXPECT_EQ(got.shape(), want.shape()) << what;
  std::vector<float> g = got.to_vector<float>(), w = want.to_vector<float>();
  if (g.size() != w.size()) return;
  double max_abs = 0, max_ulp = 0, max_used = 0;
  int bad = 0;
  for (size_t i = 0; i < w.size(); ++i) {
    bool ok;
    if (std::isnan(w[i])) {
      ok = std::isnan(g[i]);
    } else if (std::isinf(w[i])) {
      ok = g[i] == w[i];
    } else {
      const double err = std::fabs(static_cast<double>(g[i]) - w[i]);
      ok = err <= bound(i);  // false for a NaN
      max_abs = std::max(max_abs, err);
      if (std::fabs(w[i]) >= 1.0 / 256) max_ulp = std::max(max_ulp, err / ulp32(w[i]));
      if (err > 0) max_used = std::max(max_used, bound(i) > 0 ? err / bound(i) : INFINITY);
    }
    if (!ok && bad++ < 8)
      ADD_FAILURE() << what << ": element " << i << " is " << g[i] << ", PyTorch's " << w[i] << ", allowed error "
                    << bound(i);
  }
  std::printf("[ measured ] %-30s max |error| %.3g, max %.0f ulp (|want| >= 2^-8), %.0f%% of the bound\n", what.c_str(),
              max_abs, max_ulp, 100 * max_used);
}

// The CUDA modules of every kernel here, compiled once into one emulation program.
class TorchGolden : public ::testing::Test {
 public:
  struct Kernel {
    std::string name;
    std::function<LoweredFunc(ScheduleFor, const std::string&)> make;
  };
  static std::vector<Kernel> kernels() {
    using namespace te_examples;
    return {
        {"gelu_none", [](ScheduleFor t, const std::string& n) { return gelu_func("none", t, n); }},
        {"gelu_tanh", [](ScheduleFor t, const std::string& n) { return gelu_func("tanh", t, n); }},
        {"rotary", [](ScheduleFor t, const std::string& n) { return rotary_func(t, n); }},
        {"unpack_u8", [](ScheduleFor t, const std::string& n) { return unpack_int4_func(UInt(8), t, n); }},
        {"unpack_i32", [](ScheduleFor t, const std::string& n) { return unpack_int4_func(Int(32), t, n); }},
        {"dequant_u8", [](ScheduleFor t, const std::string& n) { return dequantize_int4_func(UInt(8), t, n); }},
        {"dequant_i32", [](ScheduleFor t, const std::string& n) { return dequantize_int4_func(Int(32), t, n); }},
        {"layer_norm_welford", [](ScheduleFor t, const std::string& n) { return layer_norm_welford_func(t, n); }},
        {"argmax_rows", [](ScheduleFor t, const std::string& n) { return argmax_rows_func(t, n); }},
    };
  }

  static void SetUpTestSuite() {
    program_ = std::make_unique<cuda_test::EmulatedProgram>();
    try {
      for (const Kernel& k : kernels()) {
        LoweredFunc f = k.make(ScheduleFor::Cuda, k.name);
        cuda_[k.name] = f;
        program_->add(build_cuda(f));
      }
    } catch (const Error& e) {
      log_ = std::string("lower() or build_cuda() failed: ") + e.what();
      return;
    }
    built_ = program_->build(&log_);
  }
  static void TearDownTestSuite() {
    program_.reset();
    cuda_.clear();
  }

  // Runs kernel `name` for target on args (outputs overwritten in place); the CUDA run
  // must also equal interpret() of the same GPU-scheduled function bit for bit (glibc's
  // functions on both sides, no contraction in the emulation's compile).
  static void run(const std::string& name, ScheduleFor target, std::vector<Argument> args) {
    SCOPED_TRACE(name + std::string(" ") + te_examples::target_name(target));
    if (target == ScheduleFor::Cuda) {
      ASSERT_TRUE(built_) << "the emulation program did not compile:\n" << log_;
      const LoweredFunc& f = cuda_.at(name);
      cuda_test::EmulatedRun r = program_->run(name, f, args);
      ASSERT_EQ(r.error, 0) << r.output;
      ASSERT_EQ(r.arrays.size(), f.params.size()) << r.output;
      std::vector<Argument> expected;
      for (const Argument& a : args) expected.push_back(a.is_array() ? Argument(a.array().copy()) : a);
      interpret(f, expected);
      for (size_t j = 0; j < f.params.size(); ++j) {
        if (!f.params[j].is_buffer()) continue;
        EXPECT_EQ(cuda_test::compare_arrays(expected[j].array(), r.arrays[j]), "") << f.params[j].name();
        std::memcpy(args[j].array().data(), r.arrays[j].data(), r.arrays[j].nbytes());
      }
      return;
    }
    for (const Kernel& k : kernels()) {
      if (k.name != name) continue;
      LoweredFunc f = k.make(target, name);
      if (target == ScheduleFor::AsWritten)
        interpret(f, args);
      else
        build(f)(name).call(args);
    }
  }

 private:
  static std::unique_ptr<cuda_test::EmulatedProgram> program_;
  static std::map<std::string, LoweredFunc> cuda_;
  static bool built_;
  static std::string log_;
};
std::unique_ptr<cuda_test::EmulatedProgram> TorchGolden::program_;
std::map<std::string, LoweredFunc> TorchGolden::cuda_;
bool TorchGolden::built_ = false;
std::string TorchGolden::log_;

void check_gelu(const std::string& kernel, const std::string& expected) {
  NDArray x = golden("gelu/x"), want = golden("gelu/" + expected);
  std::vector<float> xs = x.to_vector<float>(), ws = want.to_vector<float>();
  auto bound = [&](size_t i) { return 8 * ulp32(ws[i]) + std::fabs(xs[i]) * std::ldexp(1.0, -22); };
  for (ScheduleFor t : kTargets) {
    NDArray y = NDArray::empty(x.shape(), Float(32));
    TorchGolden::run(kernel, t, {x, y});
    expect_close(y, want, bound, kernel + " " + te_examples::target_name(t));
  }
}

TEST_F(TorchGolden, GeluExactThroughErf) {
  check_gelu("gelu_none", "out");
  // PyTorch's semantics at the edge: -inf gives NaN (-inf * 0). (PyTorch computes this one
  // through oneDNN, which gives +0 where the formula gives -0: x = -0 and x < -5.5.)
  EXPECT_TRUE(std::isnan(golden("gelu/out").to_vector<float>()[41]));
}

TEST_F(TorchGolden, GeluTanhApproximation) { check_gelu("gelu_tanh", "out_tanh"); }

void check_rotary(int offset, const std::string& expected) {
  NDArray x = golden("rotary/x"), want = golden("rotary/" + expected);
  ASSERT_EQ(x.shape(), (std::vector<int64_t>{32, 4, 64}));
  std::vector<float> xs = x.to_vector<float>(), ws = want.to_vector<float>();
  auto bound = [&](size_t i) {
    const size_t d = i % 64, partner = i - d + (d + 32) % 64;
    return 2 * ulp32(ws[i]) + (std::fabs(xs[i]) + std::fabs(xs[partner])) * std::ldexp(1.0, -22);
  };
  for (ScheduleFor t : kTargets) {
    NDArray y = NDArray::empty(x.shape(), Float(32));
    TorchGolden::run("rotary", t, {x, y, offset});
    expect_close(y, want, bound, "rotary offset " + std::to_string(offset) + " " + te_examples::target_name(t));
  }
}

TEST_F(TorchGolden, RotaryEmbeddingFromPositionZero) { check_rotary(0, "out"); }

// Positions 8160 .. 8191: angles up to 8191 rad, where sin and cos need a careful argument
// reduction (glibc's and SLEEF's both do it; CUDA's __sinf would not).
TEST_F(TorchGolden, RotaryEmbeddingAtLargePositions) { check_rotary(8160, "out_offset"); }

auto exact = [](size_t) { return 0.0; };

TEST_F(TorchGolden, Int4UnpackingFromBytesAndWords) {
  NDArray q = golden("int4_unpack/q");
  for (const char* packing : {"u8", "i32"}) {
    NDArray p = golden(std::string("int4_unpack/packed_") + packing);
    for (ScheduleFor t : kTargets) {
      NDArray out = NDArray::empty(q.shape(), Int(8));
      run(std::string("unpack_") + packing, t, {p, out});
      EXPECT_EQ(out.to_vector<int8_t>(), q.to_vector<int8_t>()) << packing << " " << te_examples::target_name(t);
    }
  }
}

TEST_F(TorchGolden, Int4DequantizationWithGroupScalesAndZeroPoints) {
  NDArray s = golden("int4_unpack/scales"), z = golden("int4_unpack/zeros"), want = golden("int4_unpack/w");
  for (const char* packing : {"u8", "i32"}) {
    NDArray p = golden(std::string("int4_unpack/packed_") + packing);
    for (ScheduleFor t : kTargets) {
      NDArray w = NDArray::empty(want.shape(), Float(32));
      run(std::string("dequant_") + packing, t, {p, s, z, w});
      expect_close(w, want, exact, std::string("int4 dequant ") + packing + " " + te_examples::target_name(t));
    }
  }
}

// The golden files are what SOURCE.md says they are.
TEST(TorchGoldenData, ShapesAndTypesAsDocumented) {
  struct File {
    const char* name;
    DataType dtype;
    std::vector<int64_t> shape;
  };
  const std::vector<File> files = {
      {"gelu/x", Float(32), {64, 128}},
      {"gelu/out", Float(32), {64, 128}},
      {"gelu/out_tanh", Float(32), {64, 128}},
      {"rotary/x", Float(32), {32, 4, 64}},
      {"rotary/out", Float(32), {32, 4, 64}},
      {"rotary/out_offset", Float(32), {32, 4, 64}},
      {"layer_norm/x", Float(32), {16, 768}},
      {"layer_norm/weight", Float(32), {768}},
      {"layer_norm/bias", Float(32), {768}},
      {"layer_norm/out", Float(32), {16, 768}},
      {"layer_norm/out_exact", Float(32), {16, 768}},
      {"layer_norm/mean", Float(32), {16}},
      {"layer_norm/var", Float(32), {16}},
      {"layer_norm/mean_torch", Float(32), {16}},
      {"layer_norm/rstd_torch", Float(32), {16}},
      {"argmax_rows/x", Float(32), {16, 1000}},
      {"argmax_rows/index", Int(32), {16}},
      {"argmax_rows/values", Float(32), {16}},
      {"int4_unpack/packed_u8", UInt(8), {64, 128}},
      {"int4_unpack/packed_i32", Int(32), {64, 32}},
      {"int4_unpack/scales", Float(32), {64, 8}},
      {"int4_unpack/zeros", Int(8), {64, 8}},
      {"int4_unpack/q", Int(8), {64, 256}},
      {"int4_unpack/w", Float(32), {64, 256}},
  };
  for (const File& f : files) {
    NDArray a = golden(f.name);
    EXPECT_EQ(a.dtype(), f.dtype) << f.name;
    EXPECT_EQ(a.shape(), f.shape) << f.name;
  }
  // argmax_rows: PyTorch's first-index rule on the constructed rows (SOURCE.md).
  std::vector<int32_t> index = golden("argmax_rows/index").to_vector<int32_t>();
  EXPECT_EQ(index[0], 3);
  EXPECT_EQ(index[2], 0);
  EXPECT_EQ(index[5], 0);
  EXPECT_EQ(index[8], 10);
  EXPECT_EQ(index[9], 30);
}

// Layer norm through Welford against the exact (float64) statistics and output. A float32
// result cannot be closer than the float32 mean allows: an error of one ulp of the mean
// moves the output by ulp(mean) * rstd * |gamma|, which is large on the rows whose mean
// dwarfs their spread (row 1: mean 1000, std 0.01, so 6e-5 * 100 = 6e-3, PyTorch's own
// error there). The bound allows a number of ulps of |mean| + std (the scale of the
// values the mean is made of) so weighted, plus 16 ulp of |result| + |beta|.
TEST_F(TorchGolden, LayerNormThroughWelford) {
  NDArray x = golden("layer_norm/x"), g = golden("layer_norm/weight"), b = golden("layer_norm/bias");
  NDArray want = golden("layer_norm/out_exact");
  std::vector<float> mean = golden("layer_norm/mean").to_vector<float>(),
                     var = golden("layer_norm/var").to_vector<float>();
  std::vector<float> gs = g.to_vector<float>(), ws = want.to_vector<float>(), bs = b.to_vector<float>();
  for (ScheduleFor t : kTargets) {
    // As written, one accumulator folds the 768 values of a row in order; the CPU and GPU
    // schedules merge partial results (24 or 3 values each), which keeps more of the mean.
    const double mean_ulps = t == ScheduleFor::AsWritten ? 64 : 4;
    auto bound = [&](size_t i) {
      const size_t r = i / 768, c = i % 768;
      const double std_dev = std::sqrt(static_cast<double>(var[r])), rstd = 1 / std::sqrt(std_dev * std_dev + 1e-5);
      const float mean_scale = static_cast<float>(std::fabs(mean[r]) + std_dev);
      return mean_ulps * ulp32(mean_scale) * rstd * std::fabs(gs[c]) + 16 * ulp32(std::fabs(ws[i]) + std::fabs(bs[c]));
    };
    NDArray y = NDArray::empty(x.shape(), Float(32));
    TorchGolden::run("layer_norm_welford", t, {x, g, b, y});
    expect_close(y, want, bound, std::string("layer_norm_welford ") + te_examples::target_name(t));
    // Row 2 is constant: a variance of exactly 0, so the output is beta exactly.
    std::vector<float> ys = y.to_vector<float>();
    for (size_t c = 0; c < 768; ++c) EXPECT_EQ(ys[2 * 768 + c], bs[c]) << c;
  }
}

// argmax over rows: first index on ties, -inf rows, -0.0 before 0.0 (its value -0.0).
TEST_F(TorchGolden, ArgmaxOverRows) {
  NDArray x = golden("argmax_rows/x");
  std::vector<int32_t> want_index = golden("argmax_rows/index").to_vector<int32_t>();
  std::vector<float> want_value = golden("argmax_rows/values").to_vector<float>();
  const int64_t rows = x.shape()[0];
  for (ScheduleFor t : kTargets) {
    NDArray idx = NDArray::empty({rows}, Int(32)), val = NDArray::empty({rows}, Float(32));
    TorchGolden::run("argmax_rows", t, {x, idx, val});
    std::vector<int32_t> gi = idx.to_vector<int32_t>();
    std::vector<float> gv = val.to_vector<float>();
    for (int64_t r = 0; r < rows; ++r) {
      EXPECT_EQ(gi[static_cast<size_t>(r)], want_index[static_cast<size_t>(r)])
          << "row " << r << " " << te_examples::target_name(t);
      // Bit for bit: -0.0 is not 0.0 here.
      EXPECT_EQ(std::signbit(gv[static_cast<size_t>(r)]), std::signbit(want_value[static_cast<size_t>(r)])) << r;
      EXPECT_EQ(gv[static_cast<size_t>(r)], want_value[static_cast<size_t>(r)]) << "row " << r;
    }
  }
}

}  // namespace
}  // namespace te
