// Check "schedule": directives that lowering could otherwise only drop without effect are
// refused here, before any pass runs, naming the stage, the axis and the fix.
#include <fmt/format.h>

#include "lower/passes.h"
#include "schedule/schedule_util.h"

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
  if (st.attach_type != AttachType::Inline || (st.relations.empty() && st.attrs.empty())) return;
  throw Error(fmt::format("lower: stage '{}' is inlined (compute_inline), so it has no loops, but it was also "
                          "scheduled ({}); remove its loop schedule or compute it at the root",
                          st.op->name, first_directive(st)));
}

void check_no_vthread(const StageNode& st) {
  for (const IterVar& leaf : st.leaf_iter_vars) {
    auto it = st.attrs.find(leaf.get());
    if (it == st.attrs.end() || it->second.kind != ForKind::ThreadBinding) continue;
    if (it->second.thread->thread_tag.rfind("vthread", 0) != 0) continue;
    // Run serially, a vthread would only rename a serial loop: its point, interleaved
    // register tiles (TVM's InjectVirtualThread), is not built yet, so it is refused.
    throw Error(fmt::format("lower: axis '{}' of stage '{}' is bound to vthread, which te does not interleave "
                            "yet; leave the loop serial, or unroll it to interleave its iterations",
                            leaf.name(), st.op->name));
  }
}

}  // namespace

void check_schedule(const Schedule& s) {
  for (const auto& st : s.get()->stages) {
    check_inlined_unscheduled(*st);
    check_no_vthread(*st);
  }
}

}  // namespace te::lowering
