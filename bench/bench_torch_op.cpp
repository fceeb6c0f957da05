// The call overhead of a te operator in PyTorch (te/torch.h): a te op on tiny tensors
// through PyTorch's dispatcher, against its te kernel called alone with arrays made
// beforehand (te's own argument checks included), and PyTorch's own add. The difference
// is what the bridge costs per call: binding the shape variables, allocating the output,
// the DLPack views and the dispatcher. Goal (issue 37): under 5 us above the kernel.
// Its own program, te_torch_bench (libtorch), run alone: build/bench/te_torch_bench.
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <benchmark/benchmark.h>

#include "te/te.h"
#include "te/torch.h"

namespace {

constexpr int64_t kN = 16;  // tiny: the call, not the arithmetic, is measured

te::Var n("n");
te::Tensor x = te::placeholder({n}, te::Float(32), "x");
te::Tensor y = te::placeholder({n}, te::Float(32), "y");
te::Tensor out = te::compute(
    {n}, [](te::Expr i) { return x(i) + y(i); }, "out");

// te's default schedule (one serial loop), as the kernel alone below: the same code.
TE_TORCH_LIBRARY(te_bench, m) {
  te::torch::OpDef def{{x, y}, {out}};
  def.schedule_cpu = [](te::Schedule&) {};
  m.def("vadd", def);
}

void BM_TeKernelAlone(benchmark::State& state) {
  te::Function f = te::build(te::lower(te::create_schedule({out}), {x, y, out}, "vadd"))("vadd");
  te::NDArray a = te::NDArray::empty({kN}, te::Float(32)), b = te::NDArray::empty({kN}, te::Float(32)),
              c = te::NDArray::empty({kN}, te::Float(32));
  for (auto _ : state) f(a, b, c);
}
BENCHMARK(BM_TeKernelAlone);

void BM_TeOpThroughDispatcher(benchmark::State& state) {
  auto op = c10::Dispatcher::singleton()
                .findSchemaOrThrow("te_bench::vadd", "")
                .typed<at::Tensor(const at::Tensor&, const at::Tensor&)>();
  at::Tensor a = at::randn({kN}), b = at::randn({kN});
  for (auto _ : state) benchmark::DoNotOptimize(op.call(a, b));
}
BENCHMARK(BM_TeOpThroughDispatcher);

void BM_TeOpRecordingAutograd(benchmark::State& state) {
  auto op = c10::Dispatcher::singleton()
                .findSchemaOrThrow("te_bench::vadd", "")
                .typed<at::Tensor(const at::Tensor&, const at::Tensor&)>();
  at::Tensor a = at::randn({kN}).requires_grad_(), b = at::randn({kN});
  for (auto _ : state) benchmark::DoNotOptimize(op.call(a, b));
}
BENCHMARK(BM_TeOpRecordingAutograd);

void BM_TorchAdd(benchmark::State& state) {
  at::Tensor a = at::randn({kN}), b = at::randn({kN});
  for (auto _ : state) benchmark::DoNotOptimize(at::add(a, b));
}
BENCHMARK(BM_TorchAdd);

}  // namespace

BENCHMARK_MAIN();
