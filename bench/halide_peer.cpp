#include "halide_peer.h"

#include <Halide.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <vector>

namespace te_bench::halide {

using namespace Halide;

namespace {

int vector_lanes() { return get_jit_target_from_environment().has_feature(Target::AVX512) ? 16 : 8; }

// Wraps caller memory (Halide's dimensions run innermost first).
template <typename... Dims>
Buffer<float> wrap(const float* p, Dims... dims) {
  return Buffer<float>(const_cast<float*>(p), dims...);
}

Func define_vadd(const Buffer<float>& a, const Buffer<float>& b) {
  Var x("x"), xo("xo"), xi("xi");
  Func f("vadd");
  f(x) = a(x) + b(x);
  f.split(x, xo, xi, 1 << 16).parallel(xo).vectorize(xi, vector_lanes() * 4);
  return f;
}

// The schedule of te's sgemm_best (examples/matmul_schedule.h) in Halide's terms (x is
// the column, y the row): the same register tile (8 x 2 vectors on AVX-512; 6 x 4 and
// 4 x 4 measured the same), B packed into panels per column block inside the parallel
// loop over blocks, blocks of at most 512 KiB of panels. A is read in place.
Func define_sgemm(const Buffer<float>& a, const Buffer<float>& b, int M, int N, int K) {
  const int lanes = vector_lanes(), mr = lanes == 16 ? 8 : 6, nr = 2 * lanes;
  const int nc = std::max(nr, std::min({512, (1 << 17) / K / nr * nr, std::max(nr, N / 4 / nr * nr)}));
  Var x("x"), y("y"), xi("xi"), kk("kk"), xo("xo");
  Func packed("packed");  // packed(xi, k, xo) = B[k][xo * nr + xi]
  packed(xi, kk, xo) = b(min(xo * nr + xi, N - 1), kk);
  RDom k(0, K, "k");
  Func prod("prod");
  prod(x, y) = 0.0f;
  prod(x, y) += a(k, y) * packed(x % nr, k, x / nr);
  Func out("sgemm");
  out(x, y) = prod(x, y);

  Var xb("xb"), xp("xp"), xv("xv"), yb("yb"), yi("yi");
  out.bound(x, 0, N).bound(y, 0, M);
  out.split(x, xb, xp, nc)
      .split(xp, xp, xv, nr)
      .split(y, yb, yi, mr)
      .reorder(xv, yi, xp, yb, xb)
      .parallel(xb)
      .vectorize(xv, lanes);
  prod.compute_at(out, xp).vectorize(x, lanes).unroll(x).unroll(y);
  prod.update().reorder(x, y, k).vectorize(x, lanes).unroll(x).unroll(y);
  packed.compute_at(out, xb).vectorize(xi, lanes);
  return out;
}

// Bilinear, zeros, align_corners = false, NCHW. Per output pixel, once for all channels
// (computed per row, vectorized): the four taps as clamped offsets into the H x W plane and
// their weights with the zero padding folded in. Then, for each vector of pixels of the row,
// every channel: 4 loads and 4 multiply-adds per lane. Rows in parallel. (Of the loop orders
// tried, this one was best on both shapes: channels outside the row's pixels lost 2x on the
// large shape, channels innermost unvectorized lost 5x on the small one.) `plane` views
// data as (H * W, C, N).
Func define_grid_sample(const Buffer<float>& plane, const Buffer<float>& g, int H, int W) {
  Var x("x"), y("y"), c("c"), n("n");
  Expr ux = ((g(0, x, y, n) + 1) * W - 1) * 0.5f, uy = ((g(1, x, y, n) + 1) * H - 1) * 0.5f;
  Expr fx = floor(ux), fy = floor(uy);
  Expr x0 = cast<int>(fx), y0 = cast<int>(fy), wx1 = ux - fx, wy1 = uy - fy;
  std::vector<Expr> taps;
  for (int dy = 0; dy < 2; ++dy)
    for (int dx = 0; dx < 2; ++dx) {
      Expr xx = x0 + dx, yy = y0 + dy;
      Expr inside = xx >= 0 && xx < W && yy >= 0 && yy < H;
      Expr w = (dx ? wx1 : 1 - wx1) * (dy ? wy1 : 1 - wy1);
      taps.push_back(clamp(yy, 0, H - 1) * W + clamp(xx, 0, W - 1));
      taps.push_back(select(inside, w, 0.0f));
    }
  Func tap("taps");
  tap(x, y, n) = Tuple(taps);
  Expr sum = 0.0f;
  for (int t = 0; t < 4; ++t) sum += tap(x, y, n)[2 * t + 1] * plane(tap(x, y, n)[2 * t], c, n);
  Func out("grid_sample");
  out(x, y, c, n) = sum;
  Var row("row");
  const int lanes = vector_lanes();
  Var xo("xo"), xi("xi");
  out.split(x, xo, xi, lanes, TailStrategy::GuardWithIf)
      .reorder(xi, c, xo, y, n)
      .fuse(y, n, row)
      .parallel(row)
      .vectorize(xi);
  tap.compute_at(out, row).vectorize(x, lanes, TailStrategy::GuardWithIf);
  return out;
}

std::function<void()> runner(Func f, Buffer<float> out) {
  auto p = std::make_shared<Pipeline>(f);
  p->compile_jit();
  return [p, out]() mutable { p->realize(out); };
}

}  // namespace

std::string target() { return get_jit_target_from_environment().to_string(); }

std::function<void()> vadd(const float* a, const float* b, float* c, int64_t n) {
  return runner(define_vadd(wrap(a, int(n)), wrap(b, int(n))), wrap(c, int(n)));
}

std::function<void()> sgemm(const float* A, const float* B, float* C, int M, int N, int K) {
  return runner(define_sgemm(wrap(A, K, M), wrap(B, N, K), M, N, K), wrap(C, N, M));
}

std::function<void()> grid_sample(const float* data, const float* grid, float* out, int N, int C, int H, int W, int Ho,
                                  int Wo) {
  return runner(define_grid_sample(wrap(data, W * H, C, N), wrap(grid, 2, Wo, Ho, N), H, W), wrap(out, Wo, Ho, C, N));
}

double compile_seconds(const std::string& kernel) {
  // Inputs are made first: only defining and compiling is timed. (The code does not depend
  // on the input sizes: the vector add's are kept small.)
  std::vector<Buffer<float>> in;
  if (kernel == "vadd")
    in = {Buffer<float>(1 << 16), Buffer<float>(1 << 16)};
  else if (kernel == "sgemm")
    in = {Buffer<float>(1024, 1024), Buffer<float>(1024, 1024)};
  else if (kernel == "grid_sample")
    in = {Buffer<float>(64 * 64, 32, 4), Buffer<float>(2, 64, 64, 4)};
  else
    throw std::invalid_argument("bench: no Halide kernel called '" + kernel + "'");
  auto t0 = std::chrono::steady_clock::now();
  Func f = kernel == "vadd"    ? define_vadd(in[0], in[1])
           : kernel == "sgemm" ? define_sgemm(in[0], in[1], 1024, 1024, 1024)
                               : define_grid_sample(in[0], in[1], 64, 64);
  Pipeline(f).compile_jit();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace te_bench::halide
