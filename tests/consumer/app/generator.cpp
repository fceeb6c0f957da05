// The kernels of aot_app, generated while the project builds (te_add_kernels).
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
  cpu[C].parallel(xo);
  Schedule gpu = create_schedule({C});
  auto [bx, tx] = gpu[C].split(C.axis(0), 64);
  gpu[C].bind(bx, thread_axis("blockIdx.x"));
  gpu[C].bind(tx, thread_axis("threadIdx.x"));
  GeneratedKernel k;
  k.cpu = lower(cpu, {A, B, C}, "vadd");
  k.cuda = lower(gpu, {A, B, C}, "vadd");
  return k;
}

// out[i, j] = alpha * exp(x[i, j]): a scalar parameter and a libm call.
TE_GENERATOR(scaled_exp) {
  Var rows("rows"), cols("cols");
  Var alpha("alpha", Float(32));
  Tensor X = placeholder({rows, cols}, Float(32), "X");
  Tensor Y = compute(
      {rows, cols}, [&](Expr i, Expr j) { return alpha * exp(X(i, j)); }, "Y");
  Schedule s = create_schedule({Y});
  GeneratedKernel k;
  k.cpu = lower(s, {X, Y}, "any_name_is_replaced");
  return k;
}
