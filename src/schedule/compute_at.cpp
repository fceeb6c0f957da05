// Where a stage is computed: compute_at, compute_inline, compute_root; and set_scope.
#include <fmt/format.h>

#include <set>

#include "schedule/messages.h"
#include "schedule/scatter_rules.h"
#include "schedule/stage_lookup.h"
#include "te/schedule.h"

namespace te {

using sched::quote;

namespace {

void check_computed(const StageNode& s, const char* primitive) {
  if (s.op->kind != OpKind::Compute)
    throw Error(
        fmt::format("{}: stage {} is a placeholder; it is an input, not computed", primitive, quote(s.op->name)));
}

// True if `consumer` reads `producer` directly or through other operations.
bool depends_on(const Operation& consumer, const OperationNode* producer) {
  std::set<const OperationNode*> seen;
  std::vector<const OperationNode*> work{consumer.get()};
  while (!work.empty()) {
    const OperationNode* op = work.back();
    work.pop_back();
    if (!seen.insert(op).second) continue;
    for (const Operation& in : op->inputs) {
      if (in.get() == producer) return true;
      work.push_back(in.get());
    }
  }
  return false;
}

}  // namespace

void Stage::compute_at(const Stage& parent, const IterVar& iv) {
  StageNode& s = *node_;
  check_computed(s, "compute_at");
  if (!parent.defined() || parent.schedule_ != schedule_)
    throw Error(fmt::format("compute_at: the stage given for {} is not a stage of the same schedule", quote(name())));
  if (parent.same_as(*this))
    throw Error(fmt::format("compute_at: stage {} cannot be computed at one of its own loops ({})", quote(name()),
                            iv.defined() ? quote(iv.name()) : "undefined axis"));
  if (s.is_output)
    throw Error(fmt::format("compute_at: stage {} is an output; outputs are computed at the root", quote(name())));
  if (parent->attach_type == AttachType::Inline)
    throw Error(fmt::format("compute_at: stage {} is inlined; it has no loops to compute {} at", quote(parent.name()),
                            quote(name())));
  sched::check_leaf(*parent.node_, iv, "compute_at");
  sched::refuse_scatter_parts(*schedule_, *s.op, "compute_at", "computed inside another stage's loop");
  for (Stage cur = parent; cur.attach_type() == AttachType::Scope;) {
    cur = cur.attach_stage();
    if (cur.same_as(*this))
      throw Error(
          fmt::format("compute_at: computing stage {} at axis {} of stage {} would form a cycle: {} is "
                      "itself computed inside {}",
                      quote(name()), quote(iv.name()), quote(parent.name()), quote(parent.name()), quote(name())));
  }
  if (!depends_on(parent.op(), s.op.get()))
    throw Error(
        fmt::format("compute_at: stage {} does not read stage {}; a stage is computed inside one of its "
                    "consumers",
                    quote(parent.name()), quote(name())));
  s.attach_type = AttachType::Scope;
  s.attach_op = parent->origin_op;
  s.attach_ivar = iv;
}

void Stage::compute_inline() {
  StageNode& s = *node_;
  check_computed(s, "compute_inline");
  if (s.is_output)
    throw Error(fmt::format("compute_inline: stage {} is an output; outputs cannot be inlined", quote(name())));
  if (!s.op->reduce_axis.empty())
    throw Error(
        fmt::format("compute_inline: stage {} is a reduction; only element-wise stages can be inlined", quote(name())));
  if (s.op->num_outputs() > 1)
    throw Error(
        fmt::format("compute_inline: stage {} has {} outputs (a compute_tuple); only single-output "
                    "stages can be inlined",
                    quote(name()), s.op->num_outputs()));
  sched::refuse_scatter_parts(*schedule_, *s.op, "compute_inline", "inlined");
  if (const StageNode* r = sched::bound_reader_of(*schedule_, s.op.get()))
    throw Error(
        fmt::format("compute_inline: stage {} is read by the bounds of a reduction axis of stage {} (a "
                    "data-dependent extent), which need its values in memory; compute it at the root",
                    quote(name()), quote(r->op->name)));
  for (const auto& other : schedule_->stages)
    if (other->attach_type == AttachType::Scope && other->attach_op == s.origin_op)
      throw Error(
          fmt::format("compute_inline: stage {} is computed at axis {} of stage {}; a stage with "
                      "stages computed inside it cannot be inlined",
                      quote(other->op->name), quote(other->attach_ivar.name()), quote(name())));
  s.attach_type = AttachType::Inline;
  s.attach_op = nullptr;
  s.attach_ivar = IterVar();
}

void Stage::compute_root() {
  StageNode& s = *node_;
  check_computed(s, "compute_root");
  s.attach_type = AttachType::Root;
  s.attach_op = nullptr;
  s.attach_ivar = IterVar();
}

void Stage::set_scope(const std::string& scope) {
  StageNode& s = *node_;
  check_computed(s, "set_scope");
  MemoryScope m;
  try {
    m = parse_scope(scope);
  } catch (const Error&) {
    throw Error(
        fmt::format("set_scope: unknown memory scope {} for stage {}; use \"global\", \"shared\", "
                    "\"local\" or \"warp\"",
                    quote(scope), quote(name())));
  }
  if (s.is_output && m != MemoryScope::Global)
    throw Error(
        fmt::format("set_scope: stage {} is an output, and outputs live in global memory; to compute it "
                    "in {} memory first, use cache_write({}, {})",
                    quote(name()), scope, s.op->name, quote(scope)));
  s.scope = m;
  s.scope_set = true;
}

}  // namespace te
