// Pass "allocate": an Allocate for each intermediate buffer around the innermost
// statement that covers all its accesses (the sub-range of a sequence that does). Shared
// buffers go outside the threadIdx and vthread loops whose threads share them, global intermediates
// outside every thread loop: their regions were inferred across those threads.
#include <fmt/format.h>

#include <algorithm>

#include "lower/int_set.h"
#include "lower/passes.h"
#include "lower/stage_graph.h"

namespace te::lowering {

namespace {

// Buffers that are not parameters, in order of first access.
class IntermediateCollector : public IRVisitor {
 public:
  explicit IntermediateCollector(const LowerContext& ctx) : ctx_(ctx) {}
  std::vector<Buffer> buffers;

 protected:
  void visit_load(const LoadNode* n) override {
    note(n->buffer);
    IRVisitor::visit_load(n);
  }
  void visit_store(const StoreNode* n) override {
    note(n->buffer);
    IRVisitor::visit_store(n);
  }

 private:
  void note(const Buffer& b) {
    if (ctx_.params.count(b.get())) return;
    for (const Buffer& o : buffers)
      if (o.same_as(b)) return;
    buffers.push_back(b);
  }
  const LowerContext& ctx_;
};

// The statements from the root down to the innermost one holding every access to buffer.
class AccessPath : public IRVisitor {
 public:
  explicit AccessPath(const Buffer& b) : buffer_(b) {}
  std::vector<Stmt> lca;
  bool found = false;

  void visit(const Stmt& s) override {
    if (!s.defined()) return;
    stack_.push_back(s);
    IRVisitor::visit(s);
    stack_.pop_back();
  }
  using IRVisitor::visit;

 protected:
  void visit_load(const LoadNode* n) override {
    if (n->buffer.same_as(buffer_)) note();
    IRVisitor::visit_load(n);
  }
  void visit_store(const StoreNode* n) override {
    if (n->buffer.same_as(buffer_)) note();
    IRVisitor::visit_store(n);
  }

 private:
  void note() {
    if (!found) {
      lca = stack_;
      found = true;
      return;
    }
    size_t k = 0;
    while (k < lca.size() && k < stack_.size() && lca[k].same_as(stack_[k])) ++k;
    lca.resize(k);
  }
  const Buffer& buffer_;
  std::vector<Stmt> stack_;
};

bool accesses(const Stmt& s, const Buffer& b) {
  AccessPath p(b);
  p.visit(s);
  return p.found;
}

// Replaces `target` (by identity) with an Allocate of buffer around it, or around the
// part of it that accesses buffer when it is a sequence.
class Wrapper : public IRMutator {
 public:
  Wrapper(const Stmt& target, const Buffer& b) : target_(target), buffer_(b) {}
  Stmt mutate(const Stmt& s) override {
    if (!s.same_as(target_)) return IRMutator::mutate(s);
    const auto* q = s.as<SeqNode>();
    if (!q) return allocate(buffer_, s);
    size_t first = q->seq.size(), last = 0;
    for (size_t i = 0; i < q->seq.size(); ++i)
      if (accesses(q->seq[i], buffer_)) {
        first = std::min(first, i);
        last = i;
      }
    if (first > last) return allocate(buffer_, s);
    std::vector<Stmt> before(q->seq.begin(), q->seq.begin() + static_cast<std::ptrdiff_t>(first));
    std::vector<Stmt> mid(q->seq.begin() + static_cast<std::ptrdiff_t>(first),
                          q->seq.begin() + static_cast<std::ptrdiff_t>(last) + 1);
    std::vector<Stmt> after(q->seq.begin() + static_cast<std::ptrdiff_t>(last) + 1, q->seq.end());
    before.push_back(allocate(buffer_, seq(mid)));
    before.insert(before.end(), after.begin(), after.end());
    return seq(before);
  }
  using IRMutator::mutate;

 private:
  const Stmt& target_;
  const Buffer& buffer_;
};

// Shared memory is shared by a block's threads, and by the vthreads each thread runs;
// only local buffers get a copy per vthread (inject_virtual_thread).
bool shares_across(MemoryScope scope, const ForNode* loop, const std::set<const VarNode*>& vthreads) {
  if (vthreads.count(loop->var.get())) return true;
  if (loop->for_kind != ForKind::ThreadBinding) return false;
  if (scope == MemoryScope::Global) return true;
  return scope == MemoryScope::Shared && loop->thread_tag.rfind("threadIdx", 0) == 0;
}

Stmt place(const Stmt& s, const Buffer& b, const std::set<const VarNode*>& vthreads) {
  AccessPath p(b);
  p.visit(s);
  TE_ICHECK(p.found && !p.lca.empty(), "allocate: buffer without accesses");
  size_t target = p.lca.size() - 1;
  if (!per_thread_scope(b.scope()))
    for (size_t i = 0; i < p.lca.size(); ++i)
      if (const auto* f = p.lca[i].as<ForNode>(); f && shares_across(b.scope(), f, vthreads)) {
        target = i;
        break;
      }
  for (size_t i = target; i < p.lca.size(); ++i) {
    const auto* f = p.lca[i].as<ForNode>();
    if (!f) continue;
    RelaxMap loop{{f->var.get(), Range()}};
    for (const Expr& e : b.shape())
      if (uses_any(e, loop))
        throw Error(
            fmt::format("lower: {} buffer '{}' must be allocated outside loop '{}', but its size "
                        "depends on that loop; make the size constant (for example by splitting by a "
                        "constant factor)",
                        scope_name(b.scope()), b.name(), f->var.name()));
  }
  Wrapper w(p.lca[target], b);
  return w.mutate(s);
}

}  // namespace

Stmt allocate_buffers(const Stmt& s, const LowerContext& ctx) {
  IntermediateCollector c(ctx);
  c.visit(s);
  Stmt out = s;
  const std::set<const VarNode*> vthreads = vthread_loop_vars(*ctx.sched.get());
  for (const Buffer& b : c.buffers) out = place(out, b, vthreads);
  return out;
}

}  // namespace te::lowering
