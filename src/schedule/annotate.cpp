// Loop annotations: bind, vectorize, unroll, parallel.
#include <fmt/format.h>

#include "schedule/messages.h"
#include "schedule/stage_lookup.h"
#include "te/schedule.h"

namespace te {

using sched::quote;

namespace {

void annotate(StageNode& s, const IterVar& iv, IterVarAttr attr, const char* primitive) {
  if (s.op->kind != OpKind::Compute)
    throw Error(
        fmt::format("{}: stage {} is a placeholder; it has no loops to schedule", primitive, quote(s.op->name)));
  sched::check_leaf(s, iv, primitive);
  auto it = s.attrs.find(iv.get());
  if (it != s.attrs.end())
    throw Error(fmt::format("{}: axis {} of stage {} is already {}", primitive, quote(iv.name()), quote(s.op->name),
                            sched::describe_attr(it->second)));
  if (iv.type() == IterVarType::Reduce && attr.kind == ForKind::ThreadBinding) {
    // A cross-thread reduction: the threads of a block combine their partial results.
    const std::string& tag = attr.thread->thread_tag;
    if (tag.rfind("threadIdx.", 0) != 0)
      throw Error(
          fmt::format("bind: axis {} of stage {} is a reduction axis; it can be bound to threadIdx.x/y/z "
                      "(a cross-thread reduction) but not to {}: {}",
                      quote(iv.name()), quote(s.op->name), tag,
                      tag == "vthread" ? "virtual threads run one after another in one thread"
                                       : "blocks cannot combine their partial results (rfactor the axis "
                                         "and bind the rfactor stage's new data axis to blocks instead)"));
  } else if (iv.type() == IterVarType::Reduce && (attr.kind == ForKind::Vectorized || attr.kind == ForKind::Parallel)) {
    throw Error(fmt::format("{}: axis {} of stage {} is a reduction axis; only data-parallel axes can be {}", primitive,
                            quote(iv.name()), quote(s.op->name), sched::describe_attr(attr)));
  }
  s.attrs[iv.get()] = std::move(attr);
}

}  // namespace

void Stage::bind(const IterVar& iv, const IterVar& thread) {
  if (node_->op->kind == OpKind::Compute) sched::check_leaf(*node_, iv, "bind");
  if (!thread.defined() || thread.type() != IterVarType::Thread || thread->thread_tag.empty())
    throw Error(
        fmt::format("bind: axis {} of stage {} must be bound to a thread_axis(\"threadIdx.x\"), "
                    "thread_axis(\"blockIdx.x\"), ...",
                    iv.defined() ? quote(iv.name()) : "(undefined)", quote(name())));
  for (const auto& [other, attr] : node_->attrs)
    if (attr.kind == ForKind::ThreadBinding && attr.thread->thread_tag == thread->thread_tag &&
        thread->thread_tag != "vthread" && other != iv.get()) {  // several vthreads nest (x and y tiles)
      int pos = -1;
      for (size_t i = 0; i < node_->leaf_iter_vars.size(); ++i)
        if (node_->leaf_iter_vars[i].get() == other) pos = static_cast<int>(i);
      std::string other_name = pos >= 0 ? node_->leaf_iter_vars[static_cast<size_t>(pos)].name() : "?";
      throw Error(
          fmt::format("bind: thread tag {} is already bound to axis {} of stage {}; each thread tag "
                      "binds one loop of a stage",
                      thread->thread_tag, quote(other_name), quote(name())));
    }
  annotate(*node_, iv, IterVarAttr{ForKind::ThreadBinding, thread}, "bind");
}

void Stage::vectorize(const IterVar& iv) { annotate(*node_, iv, IterVarAttr{ForKind::Vectorized, {}}, "vectorize"); }
void Stage::unroll(const IterVar& iv) { annotate(*node_, iv, IterVarAttr{ForKind::Unrolled, {}}, "unroll"); }
void Stage::parallel(const IterVar& iv) { annotate(*node_, iv, IterVarAttr{ForKind::Parallel, {}}, "parallel"); }

}  // namespace te
