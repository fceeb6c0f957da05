// CUDA: a float16 or bfloat16 GEMM (ops::matmul_form: C = A B, or a linear layer's A Bᵀ,
// summed in float32) on tensor cores, scheduled whole by te's own GEMM schedules instead
// of the generic register tiles (which multiply on the CUDA cores):
//  - for sm_90a, warpgroup MMA (ops::schedule_matmul_wgmma_cuda) with the configuration
//    measured fastest on an H200 fitted to C's shape (ops::fastest_wgmma_options); an
//    element-wise stage that alone reads C, at its own element, runs as the kernel's
//    epilogue (C then never reaches global memory);
//  - for sm_80 and later, or a target that names no GPU, mma.sync
//    (ops::schedule_matmul_tensorcore_cuda), the largest tiles the shape takes;
//  - older GPUs (no bfloat16 mma.sync), and shapes neither schedule takes (C smaller than
//    a tile, K not a multiple of 16), keep the generic rules.
// A and B keep buffers of their own (the tiles are copied from them into shared memory).
#include <fmt/format.h>

#include <optional>
#include <variant>

#include "auto_schedule/rules.h"
#include "te/ops/matmul_cuda.h"
#include "te/ops/matmul_wgmma_cuda.h"

namespace te::auto_sched {

namespace {

// How one matmul is scheduled: its output (C, or the epilogue reading it) and the options.
struct GemmPlan {
  Tensor out;
  std::variant<ops::MatmulWgmmaOptions, ops::MatmulTensorCoreOptions> options;
};

// The element-wise stage that is C's only reader and reads it at its own element (the
// wgmma schedule's epilogue), if C is not an output.
std::optional<Tensor> epilogue_of(const Context& cx, const Node& c) {
  if (c.output || c.consumers.size() != 1) return std::nullopt;
  const Node& d = cx.g.at(c.consumers[0]);
  if (!d.is_compute() || d.is_reduction() || d.is_scatter_part() || d.op->num_outputs() != 1 ||
      d.op->is_row_reduction())
    return std::nullopt;
  Tensor out(d.op);
  try {
    if (ops::matmul_wgmma_detail::matmul_of(out).op().get() != c.op.get()) return std::nullopt;
  } catch (const Error&) {
    return std::nullopt;  // reads C elsewhere than at its own element, or another shape
  }
  return out;
}

// mma.sync's tiles for an M x N x K matmul: the largest block of 128, 64, 32 or 16 rows
// (and columns) that C holds, 2 x 2 warps where the block has room for them.
ops::MatmulTensorCoreOptions tensor_core_options(int64_t M, int64_t N, int64_t K) {
  ops::MatmulTensorCoreOptions o;
  auto block = [](int64_t extent) { return extent >= 128 ? 128 : extent >= 64 ? 64 : extent >= 32 ? 32 : 16; };
  o.block_m = block(M);
  o.block_n = block(N);
  o.warps_m = o.block_m >= 32 ? 2 : 1;
  o.warps_n = o.block_n >= 16 ? 2 : 1;
  o.tile_k = K % 32 == 0 ? 32 : 16;
  o.vector = N % 8 == 0 ? 8 : N % 4 == 0 ? 4 : N % 2 == 0 ? 2 : 1;
  return o;
}

// The plan for the matmul at op on cx's GPU, or none (the generic rules take it): each
// schedule's own checks decide, on a copy of the schedule.
std::optional<GemmPlan> gemm_plan(const Context& cx, const OperationNode* op) {
  const Node& c = cx.g.at(op);
  const Tensor C(c.op);
  if (ops::matmul_form(C) == ops::MatmulForm::None) return std::nullopt;
  const DataType t = Tensor(op->inputs[0]).dtype();
  if (t != Float(16) && t != BFloat(16)) return std::nullopt;
  if (!has_mma_sync(cx.opts.target)) return std::nullopt;
  ops::MatmulOperands m;
  try {
    m = ops::matmul_operands(C, "auto_schedule");
  } catch (const Error&) {
    return std::nullopt;  // a symbolic extent
  }
  auto takes = [&](const GemmPlan& plan) {
    try {
      Schedule trial = cx.s.copy();
      if (const auto* w = std::get_if<ops::MatmulWgmmaOptions>(&plan.options))
        ops::schedule_matmul_wgmma_cuda(trial, plan.out, *w);
      else
        ops::schedule_matmul_tensorcore_cuda(trial, plan.out, std::get<ops::MatmulTensorCoreOptions>(plan.options));
    } catch (const Error&) {
      return false;
    }
    return true;
  };
  if (has_wgmma(cx.opts.target)) {
    const std::optional<Tensor> epilogue = epilogue_of(cx, c);
    GemmPlan plan{epilogue.value_or(C), ops::fastest_wgmma_options(m.M, m.N, epilogue.has_value())};
    if (takes(plan)) return plan;
  }
  GemmPlan plan{C, tensor_core_options(m.M, m.N, m.K)};
  if (takes(plan)) return plan;
  return std::nullopt;
}

}  // namespace

void find_gemms(Context& cx) {
  for (const Node* n : cx.g.topo()) {
    if (!n->is_compute() || cx.whole.count(n->op.get())) continue;
    const std::optional<GemmPlan> plan = gemm_plan(cx, n->op.get());
    if (!plan) continue;
    cx.whole.insert(plan->out.op().get());
    cx.whole.insert(n->op.get());
    for (const auto& input : n->op->inputs) cx.kept.insert(input.get());
  }
}

void schedule_gemm_cuda_rule(Context& cx) {
  for (const Node* n : cx.g.topo()) {
    if (!n->is_compute() || !cx.whole.count(n->op.get())) continue;
    const std::optional<GemmPlan> plan = gemm_plan(cx, n->op.get());
    if (!plan) continue;  // another pattern's stage
    if (const auto* w = std::get_if<ops::MatmulWgmmaOptions>(&plan->options)) {
      ops::schedule_matmul_wgmma_cuda(cx.s, plan->out, *w);
      cx.note(fmt::format("'{}': wgmma GEMM, {} x {} tiles, {} stages{}{}{}", n->op->name, w->block_m, w->block_n,
                          w->stages, w->warp_specialized ? ", warp-specialized" : "",
                          w->persistent_blocks > 0 ? fmt::format(", {} persistent blocks", w->persistent_blocks) : "",
                          plan->out.op().get() == n->op.get() ? "" : fmt::format(", epilogue '{}'", plan->out.name())));
    } else {
      const auto& o = std::get<ops::MatmulTensorCoreOptions>(plan->options);
      ops::schedule_matmul_tensorcore_cuda(cx.s, plan->out, o);
      cx.note(fmt::format("'{}': mma.sync GEMM, {} x {} tiles of {} x {} warps, k tiles of {}", n->op->name, o.block_m,
                          o.block_n, o.warps_m, o.warps_n, o.tile_k));
    }
  }
}

}  // namespace te::auto_sched
