// Pass "insert_barriers": GPU threads of a block see each other's shared memory only
// after a barrier. Between statements of a sequence, a barrier goes before a statement
// that reads (or writes) a shared buffer written since the last barrier, or writes one
// read since then; a loop whose next iteration would overwrite what the previous one
// read gets a barrier at the start of its body. Only uniform control flow inside the
// thread loops gets barriers: never under a condition or loop bound that depends on
// the thread index.
#include <set>

#include "expr/analysis.h"
#include "lower/int_set.h"
#include "te/lower.h"

namespace te {

namespace {

using BufferSet = std::set<const BufferNode*>;

struct Accesses {
  BufferSet reads, writes;
  void add(const Accesses& o) {
    reads.insert(o.reads.begin(), o.reads.end());
    writes.insert(o.writes.begin(), o.writes.end());
  }
  bool empty() const { return reads.empty() && writes.empty(); }
};

bool meets(const BufferSet& a, const BufferSet& b) {
  for (const BufferNode* x : a)
    if (b.count(x)) return true;
  return false;
}

// True if `next` must not run before the threads finished `pending`: it reads what they
// wrote, or overwrites what they read.
bool conflicts(const Accesses& pending, const Accesses& next) {
  return meets(next.reads, pending.writes) || meets(next.writes, pending.reads);
}

// The shared buffers among those used.
Accesses shared_accesses(const BufferUse& use) {
  Accesses acc;
  for (const BufferNode* b : use.loaded)
    if (b->scope == MemoryScope::Shared) acc.reads.insert(b);
  for (const BufferNode* b : use.stored)
    if (b->scope == MemoryScope::Shared) acc.writes.insert(b);
  return acc;
}

// Shared accesses before the first barrier (head) and after the last one (tail).
struct Summary {
  Accesses head, tail;
  bool has_barrier = false;
};

Summary summarize(const Stmt& s) {
  Summary out;
  if (!s.defined()) return out;
  switch (s.kind()) {
    case StmtKind::Barrier: out.has_barrier = true; return out;
    case StmtKind::Seq:
      for (const Stmt& c : s.as<SeqNode>()->seq) {
        Summary cs = summarize(c);
        if (!out.has_barrier) out.head.add(cs.head);
        if (cs.has_barrier) {
          out.has_barrier = true;
          out.tail = cs.tail;
        } else {
          out.tail.add(cs.tail);
        }
      }
      return out;
    case StmtKind::For: return summarize(s.as<ForNode>()->body);
    case StmtKind::LetStmt: return summarize(s.as<LetStmtNode>()->body);
    case StmtKind::Allocate: return summarize(s.as<AllocateNode>()->body);
    case StmtKind::Assert: return summarize(s.as<AssertNode>()->body);
    case StmtKind::IfThenElse: {
      const auto* n = s.as<IfThenElseNode>();
      Summary a = summarize(n->then_case), b = summarize(n->else_case);
      out.has_barrier = a.has_barrier || b.has_barrier;
      out.head = a.head;
      out.head.add(b.head);
      out.tail = a.tail;
      out.tail.add(b.tail);
      const Accesses cond = shared_accesses(buffer_use(n->cond));
      out.head.add(cond);
      if (!out.has_barrier) out.tail.add(cond);
      return out;
    }
    default: {
      out.head = out.tail = shared_accesses(buffer_use(s));
      return out;
    }
  }
}

class BarrierInserter : public IRMutator {
 protected:
  Stmt mutate_for(const Stmt& s, const ForNode* n) override {
    if (n->for_kind == ForKind::ThreadBinding) {
      ++in_kernel_;
      bool thread = n->thread_tag.rfind("threadIdx", 0) == 0;
      if (thread) thread_vars_[n->var.get()] = Range();
      Stmt r = IRMutator::mutate_for(s, n);
      if (thread) thread_vars_.erase(n->var.get());
      --in_kernel_;
      return r;
    }
    bool was = divergent_;
    divergent_ = divergent_ || lowering::uses_any(n->min, thread_vars_) || lowering::uses_any(n->extent, thread_vars_);
    Stmt body = mutate(n->body);
    if (uniform() && !is_one(n->extent)) {
      Summary b = summarize(body);
      if (conflicts(b.tail, b.head)) body = seq({barrier(), body});
    }
    divergent_ = was;
    if (body.same_as(n->body)) return s;
    return for_loop(n->var, n->min, n->extent, n->for_kind, body, n->thread_tag);
  }

  Stmt mutate_if_then_else(const Stmt& s, const IfThenElseNode* n) override {
    bool was = divergent_;
    divergent_ = divergent_ || lowering::uses_any(n->cond, thread_vars_);
    Stmt r = IRMutator::mutate_if_then_else(s, n);
    divergent_ = was;
    return r;
  }

  Stmt mutate_seq(const Stmt& s, const SeqNode* n) override {
    std::vector<Stmt> kids;
    for (const Stmt& c : n->seq) kids.push_back(mutate(c));
    if (!uniform()) return seq(kids);
    std::vector<Stmt> out;
    Accesses pending;
    for (const Stmt& c : kids) {
      Summary cs = summarize(c);
      if (!pending.empty() && conflicts(pending, cs.head)) {
        out.push_back(barrier());
        pending = Accesses();
      }
      out.push_back(c);
      if (cs.has_barrier)
        pending = cs.tail;
      else
        pending.add(cs.tail);
    }
    (void)s;
    return seq(out);
  }

 private:
  bool uniform() const { return in_kernel_ > 0 && !divergent_; }

  int in_kernel_ = 0;
  bool divergent_ = false;
  lowering::RelaxMap thread_vars_;
};

}  // namespace

Stmt insert_barriers(const Stmt& s) {
  BarrierInserter b;
  return b.mutate(s);
}

}  // namespace te
