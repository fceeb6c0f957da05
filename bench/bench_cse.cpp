// Common-subexpression elimination and the LLVM backend: each kernel lowered twice in the
// same run, with the pass off (the baseline: LLVM's own GVN does the sharing) and on (te's
// default), built and timed side by side, so the ratio says whether te's locals cost the
// CPU code anything. Kernels: grid_sample bilinear and bicubic (the most shared values:
// tap coordinates and weights), the best sgemm schedule, softmax rows.
#include <te/te.h>
#include <te/ops/grid_sample.h>
#include <te/ops/grid_sample_cpu.h>
#include <te/ops/normalization.h>

#include <functional>
#include <map>
#include <memory>
#include <random>

#include "bench_util.h"
#include "matmul_schedule.h"

namespace te_bench {

namespace {

using namespace te;

struct CseKernel {
  std::string name;
  double work;  // per call, in units of the group
  std::string unit;
  // The function lowered with the given options, and its arguments.
  std::function<LoweredFunc(const LowerOptions&)> lower;
  std::function<std::vector<NDArray>()> arguments;
};

NDArray random_array(std::vector<int64_t> shape, float lo, float hi, unsigned seed) {
  NDArray a = NDArray::empty(shape, Float(32));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  float* p = static_cast<float*>(a.data());
  for (int64_t i = 0; i < a.size(); ++i) p[i] = u(rng);
  return a;
}

CseKernel grid_sample_kernel(const std::string& mode) {
  const int N = 4, C = 32, H = 64, W = 64, Ho = 64, Wo = 64;
  CseKernel k;
  k.name = "grid_sample_" + mode;
  k.work = double(N) * C * Ho * Wo * 1e-9;
  k.unit = "Goutputs/s";
  k.lower = [=](const LowerOptions& o) {
    Tensor data = placeholder({N, C, H, W}, Float(32), "data");
    Tensor grid = placeholder({N, Ho, Wo, 2}, Float(32), "grid");
    ops::GridSampleOptions opts;
    opts.mode = mode;
    Tensor out = ops::grid_sample(data, grid, opts);
    Schedule s = create_schedule({out});
    ops::schedule_grid_sample_cpu(s, out);
    return lower(s, {data, grid, out}, "gs", o);
  };
  k.arguments = [=] {
    return std::vector<NDArray>{random_array({N, C, H, W}, -1, 1, 1), random_array({N, Ho, Wo, 2}, -1.1f, 1.1f, 2),
                                NDArray::empty({N, C, Ho, Wo}, Float(32))};
  };
  return k;
}

CseKernel sgemm_kernel() {
  const int M = 512;
  CseKernel k;
  k.name = "sgemm_512";
  k.work = 2.0 * M * M * M * 1e-9;
  k.unit = "GFLOP/s";
  k.lower = [=](const LowerOptions& o) {
    te_examples::Sgemm g = te_examples::sgemm_best(M, M, M);
    return lower(g.schedule, {g.A, g.B, g.C}, "sgemm", o);
  };
  k.arguments = [=] {
    return std::vector<NDArray>{random_array({M, M}, -1, 1, 3), random_array({M, M}, -1, 1, 4),
                                NDArray::empty({M, M}, Float(32))};
  };
  return k;
}

CseKernel softmax_kernel() {
  const int rows = 4096, cols = 1024;
  CseKernel k;
  k.name = "softmax_4096x1024";
  k.work = double(rows) * cols * 1e-9;
  k.unit = "Gelem/s";
  k.lower = [=](const LowerOptions& o) {
    Tensor x = placeholder({rows, cols}, Float(32), "x");
    Tensor y = ops::softmax(x);
    Schedule s = auto_schedule({y});
    return lower(s, {x, y}, "softmax", o);
  };
  k.arguments = [=] {
    return std::vector<NDArray>{random_array({rows, cols}, -4, 4, 5), NDArray::empty({rows, cols}, Float(32))};
  };
  return k;
}

void add_kernel(const CseKernel& k) {
  const std::string g = "cse/" + k.name;
  results().define_group(g, {k.work, k.unit});
  for (bool on : {false, true}) {
    const std::string impl = on ? "te" : "te_cse_off";
    auto fn = std::make_shared<Function>();
    auto args = std::make_shared<std::vector<NDArray>>();
    add(g, impl, [=](benchmark::State& st) {
      if (!fn->defined()) {
        LowerOptions o;
        o.eliminate_common_subexpressions = on;
        LoweredFunc f = k.lower(o);
        *fn = build(f)(f.name);
        *args = k.arguments();
      }
      std::vector<Argument> call_args(args->begin(), args->end());
      run_case(st, g, impl, /*baseline=*/!on, [&] { fn->call(call_args); });
    });
  }
}

}  // namespace

void register_cse() {
  for (const CseKernel& k :
       {grid_sample_kernel("bilinear"), grid_sample_kernel("bicubic"), sgemm_kernel(), softmax_kernel()})
    add_kernel(k);
}

}  // namespace te_bench
