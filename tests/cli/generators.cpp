// The generator library the CLI tests drive (te_add_generator_library): a CPU + CUDA
// kernel, a kernel with a scalar parameter and an output shape no input binds, a
// CUDA-only kernel, a bfloat16 kernel, a tuning task and a computation without a schedule.
#include <te/autotune.h>
#include <te/generator.h>

using namespace te;

TE_GENERATOR(vadd) {
  Var n("n");
  Tensor A = placeholder({n}, Float(32), "A");
  Tensor B = placeholder({n}, Float(32), "B");
  Tensor C = compute(
      {n}, [&](Expr i) { return A(i) + B(i); }, "C");
  Schedule cpu = create_schedule({C});
  auto [xo, xi] = cpu[C].split(C.axis(0), 8);
  cpu[C].vectorize(xi);
  Schedule gpu = create_schedule({C});
  auto [bx, tx] = gpu[C].split(C.axis(0), 64);
  gpu[C].bind(bx, thread_axis("blockIdx.x"));
  gpu[C].bind(tx, thread_axis("threadIdx.x"));
  GeneratedKernel k;
  k.cpu = lower(cpu, {A, B, C}, "vadd");
  k.cuda = lower(gpu, {A, B, C}, "vadd");
  return k;
}

// out[i] = A[i % n] * alpha for i < m: m is bound by no input.
TE_GENERATOR(tile_scale) {
  Var n("n"), m("m");
  Var alpha("alpha", Float(32));
  Tensor A = placeholder({n}, Float(32), "A");
  Tensor Out = compute(
      {m}, [&](Expr i) { return A(i % n) * alpha; }, "Out");
  GeneratedKernel k;
  k.cpu = lower(create_schedule({Out}), {A, Out}, "tile_scale");
  return k;
}

// B[i] = A[i] * 3 + A[i], bfloat16 in and out (its .npy files hold uint16 bits).
TE_GENERATOR(bf16_scale) {
  Var n("n");
  Tensor A = placeholder({n}, BFloat(16), "A");
  Tensor B = compute(
      {n}, [&](Expr i) { return A(i) * 3 + A(i); }, "B");
  GeneratedKernel k;
  k.cpu = lower(create_schedule({B}), {A, B}, "bf16_scale");
  return k;
}

TE_GENERATOR(gpu_only) {
  Var n("n");
  Tensor A = placeholder({n}, Float(32), "A");
  Tensor B = compute(
      {n}, [&](Expr i) { return A(i) * 2.0f; }, "B");
  Schedule s = create_schedule({B});
  auto [bx, tx] = s[B].split(B.axis(0), 32);
  s[B].bind(bx, thread_axis("blockIdx.x"));
  s[B].bind(tx, thread_axis("threadIdx.x"));
  GeneratedKernel k;
  k.cuda = lower(s, {A, B}, "gpu_only");
  return k;
}

namespace {

struct Rowsum {
  Tensor A, R;
};
Rowsum rowsum_compute() {
  Tensor A = placeholder({64, 64}, Float(32), "A");
  IterVar k = reduce_axis({0, 64}, "k");
  Tensor R = compute(
      {64}, [&](Expr i) { return sum(A(i, k), {k}); }, "R");
  return {A, R};
}

}  // namespace

// Row sums of a 64 x 64 matrix; the knob splits the rows.
TE_TUNING_TASK(rowsum) {
  autotune::Task t;
  t.key = "rowsum/64";
  t.space.define_values("rows", {1, 2, 4, 8});
  t.build = [](const autotune::Config& c) {
    Rowsum r = rowsum_compute();
    Schedule s = create_schedule({r.R});
    s[r.R].split(r.R.axis(0), c.get("rows"));
    return lower(s, {r.A, r.R}, "rowsum");
  };
  t.reference = [] {
    Rowsum r = rowsum_compute();
    return lower(create_schedule({r.R}), {r.A, r.R}, "rowsum");
  };
  t.make_args = [] {
    std::vector<float> a(64 * 64);
    for (size_t i = 0; i < a.size(); ++i) a[i] = float(i % 7);
    return std::vector<Argument>{NDArray::from_vector(a, {64, 64}), NDArray::empty({64}, Float(32))};
  };
  return t;
}

// C = A x B (64 x 48 x 32) with the bias row added: te auto-schedule makes its schedule.
TE_COMPUTE(matmul) {
  Tensor A = placeholder({64, 32}, Float(32), "A");
  Tensor B = placeholder({32, 48}, Float(32), "B");
  Tensor bias = placeholder({48}, Float(32), "bias");
  IterVar k = reduce_axis({0, 32}, "k");
  Tensor P = compute(
      {64, 48}, [&](Expr i, Expr j) { return sum(A(i, k) * B(k, j), {k}); }, "P");
  Tensor C = compute(
      {64, 48}, [&](Expr i, Expr j) { return P(i, j) + bias(j); }, "C");
  return {{A, B, bias, C}};
}

// A 3x3 convolution in PyTorch's NCHW / OIHW layouts (8 to 16 channels, 10x10, no
// padding): with --constant-inputs W, te auto-schedule may take W pretransformed.
TE_COMPUTE(conv_nchw) {
  Tensor X = placeholder({1, 8, 10, 10}, Float(32), "X");
  Tensor W = placeholder({16, 8, 3, 3}, Float(32), "W");
  IterVar c = reduce_axis({0, 8}, "c"), r = reduce_axis({0, 3}, "r"), q = reduce_axis({0, 3}, "q");
  Tensor Y = compute(
      {1, 16, 8, 8},
      [&](Expr n, Expr o, Expr y, Expr x) {
        return sum(X(n, c, y + r, x + q) * W(o, c, r, q), {c, r, q});
      },
      "Y");
  return {{X, W, Y}};
}

// A 3x3 NHWC convolution, 16 to 16 channels, 10x10, no padding: te auto-schedule computes
// it by Winograd's F(2x2, 3x3), and with --constant-inputs W takes W transformed.
TE_COMPUTE(conv_winograd) {
  Tensor X = placeholder({1, 10, 10, 16}, Float(32), "X");
  Tensor W = placeholder({3, 3, 16, 16}, Float(32), "W");
  IterVar r = reduce_axis({0, 3}, "r"), q = reduce_axis({0, 3}, "q"), c = reduce_axis({0, 16}, "c");
  Tensor Y = compute(
      {1, 8, 8, 16},
      [&](Expr n, Expr y, Expr x, Expr o) {
        return sum(X(n, y + r, x + q, c) * W(r, q, c, o), {r, q, c});
      },
      "Y");
  return {{X, W, Y}};
}
