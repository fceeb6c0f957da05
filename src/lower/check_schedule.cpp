// Check "schedule": directives that lowering could otherwise only drop without effect are
// refused here, before any pass runs, naming the stage, the axis and the fix.
#include <fmt/format.h>

#include "lower/passes.h"
#include "lower/stage_graph.h"
#include "schedule/messages.h"

namespace te::lowering {

namespace {

// "split of 'i'", "'i.inner' vectorized": the first directive of a stage's loop schedule.
std::string first_directive(const StageNode& st) {
  if (!st.relations.empty()) {
    const Relation& r = st.relations.front();
    if (const auto* sp = std::get_if<SplitRelation>(&r)) return fmt::format("split of '{}'", sp->parent.name());
    if (const auto* fu = std::get_if<FuseRelation>(&r))
      return fmt::format("fuse of '{}' and '{}'", fu->outer.name(), fu->inner.name());
    return "fuse of its axes";
  }
  for (const IterVar& leaf : st.leaf_iter_vars) {
    auto it = st.attrs.find(leaf.get());
    if (it != st.attrs.end()) return fmt::format("'{}' {}", leaf.name(), sched::describe_attr(it->second));
  }
  return "";
}

void check_inlined_unscheduled(const StageNode& st) {
  if (st.attach_type == AttachType::Inline && !st.storage_align.empty())
    throw Error(
        fmt::format("lower: stage '{}' is inlined (compute_inline), so it has no buffer, but storage_align "
                    "pads one; remove the storage_align or compute the stage at a loop",
                    st.op->name));
  if (st.attach_type == AttachType::Inline && st.tensorize_intrinsic.defined())
    throw Error(
        fmt::format("lower: stage '{}' is inlined (compute_inline), so it has no loops, but tensorize "
                    "replaces its loop '{}' by intrinsic '{}'; remove the tensorize or compute the stage "
                    "at the root",
                    st.op->name, st.tensorize_axis->var.name(), st.tensorize_intrinsic.name()));
  if (st.attach_type != AttachType::Inline || (st.relations.empty() && st.attrs.empty())) return;
  throw Error(
      fmt::format("lower: stage '{}' is inlined (compute_inline), so it has no loops, but it was also "
                  "scheduled ({}); remove its loop schedule or compute it at the root",
                  st.op->name, first_directive(st)));
}

// A double-buffered stage needs a loop whose iterations run one after another, each
// fetching its tile: a serial (or unrolled) loop of another stage.
void check_double_buffer(const ScheduleNode& s, const StageNode& st) {
  if (st.buffers < 2) return;
  const bool two = st.buffers == 2;
  const std::string what = buffering_phrase(st.buffers);
  if (st.attach_type == AttachType::Inline)
    throw Error(
        fmt::format("lower: stage '{}' is inlined (compute_inline), so it has no buffer, but {} {} one; "
                    "remove the {} or compute the stage at a loop",
                    st.op->name, two ? "double_buffer" : "pipeline", two ? "doubles" : "multiplies",
                    two ? "double_buffer" : "pipeline"));
  if (st.attach_type == AttachType::Root)
    throw Error(
        fmt::format("lower: stage '{}' is {} but computed at the root, where it is fetched "
                    "once; compute it at the loop whose iterations fetch successive tiles (compute_at), "
                    "e.g. the outer reduction loop of a tiled matmul",
                    st.op->name, what));
  const StageNode* parent = attach_parent(s, st);
  auto attr = parent->attrs.find(st.attach_ivar.get());
  if (attr == parent->attrs.end()) return;
  const ForKind kind = attr->second.kind;
  if (kind == ForKind::Serial || kind == ForKind::Unrolled) return;
  throw Error(
      fmt::format("lower: stage '{}' is {} at loop '{}' of stage '{}', which is {}: its "
                  "iterations do not run one after another, so there is no next iteration to fetch "
                  "for; compute the stage at a serial loop",
                  st.op->name, what, st.attach_ivar.name(), parent->op->name, sched::describe_attr(attr->second)));
}

// A swizzle lays out a CUDA shared-memory buffer: the stage must have one.
void check_swizzle(const StageNode& st) {
  if (st.swizzle_bytes == 0) return;
  if (st.attach_type == AttachType::Inline)
    throw Error(
        fmt::format("lower: stage '{}' is inlined (compute_inline), so it has no buffer, but swizzle lays "
                    "one out; remove the swizzle or compute the stage at a loop",
                    st.op->name));
  if (st.scope != MemoryScope::Shared)
    throw Error(
        fmt::format("lower: stage '{}' is swizzled ({} bytes), but its buffer is in {} memory; a swizzle "
                    "lays out CUDA shared memory (set_scope(\"shared\") or cache_read/cache_write with "
                    "\"shared\")",
                    st.op->name, st.swizzle_bytes, scope_name(st.scope)));
}

// A warp-specialized stage is a pipelined TMA copy: its producer runs ahead into the
// buffers the consumers are not reading.
void check_warp_specialize(const StageNode& st) {
  if (!st.warp_specialization) return;
  if (st.buffers < 2)
    throw Error(
        fmt::format("lower: stage '{}' is warp-specialized but has one buffer, so its producer could not copy ahead "
                    "of the consumers; pipeline it (pipeline(n) or double_buffer)",
                    st.op->name));
  if (!st.tensorize_intrinsic.defined() || !intrinsics::is_cuda_tma_load(*st.tensorize_intrinsic.node()))
    throw Error(fmt::format(
        "lower: stage '{}' is warp-specialized but {}; the producer warpgroup issues TMA copies "
        "(tensorize the stage with intrinsics::cuda_tma_load_2d)",
        st.op->name,
        st.tensorize_intrinsic.defined() ? fmt::format("tensorized with '{}'", st.tensorize_intrinsic.name())
                                         : std::string("not tensorized")));
}

}  // namespace

void check_schedule(const Schedule& s) {
  for (const auto& st : s.get()->stages) {
    check_inlined_unscheduled(*st);
    check_double_buffer(*s.get(), *st);
    check_swizzle(*st);
    check_warp_specialize(*st);
  }
}

}  // namespace te::lowering
