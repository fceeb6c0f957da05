// Rule (CPU): strided inputs read by phase. A stride-2 convolution over an NCHW image (the
// ResNet stem: 7x7, stride 2) vectorizes its output rows, and each vector of outputs
// reads its padded input at every second column: two loads and a shuffle per vector,
// for every one of the kernel's taps. Read from a copy with the columns stored by phase
// (even columns, then odd), each tap's vector is one contiguous load; the copy is a pass
// over an input that is small next to the convolution's arithmetic.
#include <fmt/format.h>

#include <optional>

#include "auto_schedule/rules.h"
#include "expr/analysis.h"
#include "te/simplify.h"

namespace te::auto_sched {

namespace {

struct StridedRead {
  Tensor input;
  int dim = 0;
  int stride = 0;
};

// The constant step of index along x (index at x + 1 minus index at x), or 0 when it is
// not a constant.
int64_t step_along(const Expr& index, const IterVar& x) {
  const Expr next = substitute(index, {{x.var(), x.var() + make_const(x.var().dtype(), 1)}});
  const Expr difference = simplify(next - index);  // kept alive: as_const_int points into it
  const int64_t* step = as_const_int(difference);
  return step ? *step : 0;
}

// The input op's reduction reads at a constant stride of 2 or more along its vector axis
// x, when that is the only input read along x (each read at the same stride, in the same
// dimension) and a copy of it by phase pays; nullopt otherwise.
std::optional<StridedRead> strided_input(const OperationNode& op, const CpuTarget& cpu) {
  const auto* red = op.body.as<ReduceNode>();
  if (!red || op.num_outputs() != 1 || op.is_scatter() || op.is_row_reduction() || !op.dtype.is_float() ||
      op.axis.empty())
    return std::nullopt;
  const IterVar& x = op.axis.back();
  const int64_t evaluations = const_evaluations(op);
  if (const_extent(x) < cpu.lanes(op.dtype) || evaluations <= 0) return std::nullopt;
  std::optional<StridedRead> found;
  for (const TensorReadNode* r : tensor_reads(red->source())) {
    std::vector<int> dims;
    for (size_t k = 0; k < r->indices.size(); ++k)
      if (uses_var(r->indices[k], x.var().get())) dims.push_back(static_cast<int>(k));
    if (dims.empty()) continue;
    const int64_t step = dims.size() == 1 ? step_along(r->indices[static_cast<size_t>(dims[0])], x) : 0;
    const int64_t size = const_elements(r->op->shape);
    const bool pays =
        step >= 2 && r->op->num_outputs() == 1 && size > 0 && size * kEvaluationsPerCopiedElement <= evaluations;
    const bool same = !found || (found->input.op() == r->op && found->dim == dims[0] && found->stride == step);
    if (!pays || !same) return std::nullopt;
    found = StridedRead{Tensor(r->op, r->value_index), dims[0], static_cast<int>(step)};
  }
  return found;
}

}  // namespace

std::vector<Tensor> read_strided_inputs_by_phase(Schedule& s, const std::vector<Tensor>& outputs, const CpuTarget& cpu,
                                                 Decisions& choices, std::vector<std::string>& notes,
                                                 std::set<const OperationNode*>& kept) {
  for (const Stage& st : s.stages()) {
    const Operation op = st.op();
    if (op->kind != OpKind::Compute || !st->relations.empty()) continue;
    const std::optional<StridedRead> read = strided_input(*op, cpu);
    if (!read || choices.choose(op->name + ".read_by_phase", 1, {0, 1}) == 0) continue;
    Tensor copy = s.cache_read_phases(read->input, "global", {Tensor(op, 0)}, read->dim, read->stride);
    kept.insert(copy.op().get());
    notes.push_back(fmt::format("{}: reads '{}' by phase as '{}' (stride {} along '{}')", op->name, read->input.name(),
                                copy.name(), read->stride, op->axis.back().name()));
  }
  return outputs_in(s, outputs);
}

}  // namespace te::auto_sched
