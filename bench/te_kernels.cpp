#include "te_kernels.h"

#include <te/ops/grid_sample.h>
#include <te/ops/grid_sample_cpu.h>

#include <stdexcept>

#include "matmul_schedule.h"

namespace te_bench {

using namespace te;

LoweredFunc te_vadd(int n) {
  Tensor A = placeholder({n}, Float(32), "A");
  Tensor B = placeholder({n}, Float(32), "B");
  Tensor C = compute(
      {n}, [&](Expr i) { return A(i) + B(i); }, "C");
  Schedule s = create_schedule({C});
  const int lanes = te_examples::sgemm_params_for_host().lanes;
  auto [chunk, rest] = s[C].split(C.axis(0), 1 << 16);
  auto [v, lane] = s[C].split(rest, lanes);
  (void)v;
  s[C].parallel(chunk);
  s[C].vectorize(lane);
  return lower(s, {A, B, C}, "vadd");
}

LoweredFunc te_sgemm(int M, int N, int K, bool best) {
  te_examples::Sgemm g = best ? te_examples::sgemm_best(M, N, K) : te_examples::sgemm_naive(M, N, K);
  return lower(g.schedule, {g.A, g.B, g.C}, best ? "sgemm_best" : "sgemm_naive");
}

LoweredFunc te_grid_sample(int64_t N, int64_t C, int64_t H, int64_t W, int64_t Ho, int64_t Wo) {
  // int32 extents (as a user writes them): int32 index arithmetic.
  auto i32 = [](int64_t v) { return static_cast<int>(v); };
  Tensor data = placeholder({i32(N), i32(C), i32(H), i32(W)}, Float(32), "data");
  Tensor grid = placeholder({i32(N), i32(Ho), i32(Wo), 2}, Float(32), "grid");
  ops::GridSampleOptions opts;  // bilinear, zeros, align_corners = false
  Tensor out = ops::grid_sample(data, grid, opts);
  Schedule s = create_schedule({out});
  ops::schedule_grid_sample_cpu(s, out);
  return lower(s, {data, grid, out}, "grid_sample");
}

Module compile_kernel(const std::string& kernel, bool use_cache) {
  BuildOptions options;
  options.use_cache = use_cache;
  if (kernel == "vadd") return build(te_vadd(1 << 24), options);
  if (kernel == "sgemm") return build(te_sgemm(1024, 1024, 1024, true), options);
  if (kernel == "grid_sample") return build(te_grid_sample(4, 32, 64, 64, 64, 64), options);
  throw std::invalid_argument("bench: no kernel called '" + kernel + "'");
}

}  // namespace te_bench
