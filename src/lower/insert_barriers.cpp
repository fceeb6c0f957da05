// Pass "insert_barriers": GPU threads of a block see each other's shared memory only
// after a barrier. Between statements of a sequence, a barrier goes before a statement
// that reads (or writes) a shared buffer written since the last barrier, or writes one
// read since then; a loop whose next iteration would overwrite what the previous one
// read gets a barrier at the start of its body. Elements each thread alone touches (the
// same index everywhere, one thread's by construction: a row reduction's running values,
// a thread's slot of a shared array) need none. Only uniform control flow inside the
// thread loops gets barriers: never under a condition or loop bound that depends on
// the thread index. A warp-specialized TMA copy takes none: the CUDA backend orders it
// with mbarriers.
#include <algorithm>
#include <map>
#include <set>

#include "expr/analysis.h"
#include "expr/simplify_internal.h"
#include "lower/int_set.h"
#include "te/lower.h"

namespace te {

namespace {

// Per shared buffer, the indices a statement reads or writes it at; an undefined index:
// not known to be this thread's alone (a tensor intrinsic's warp-wide access).
using IndexMap = std::map<const BufferNode*, std::vector<Expr>>;

struct Accesses {
  IndexMap reads, writes;
  void add(const Accesses& o) {
    for (const auto& [b, idx] : o.reads) reads[b].insert(reads[b].end(), idx.begin(), idx.end());
    for (const auto& [b, idx] : o.writes) writes[b].insert(writes[b].end(), idx.begin(), idx.end());
  }
  bool empty() const { return reads.empty() && writes.empty(); }
};

// The loops of the statement: how many values each variable takes (over every loop of
// it: a partitioned loop's parts share their variable), and which bind threadIdx.
struct LoopVars {
  std::map<const VarNode*, int64_t> extent;
  std::set<const VarNode*> threads;
};

LoopVars loop_vars_of(const Stmt& s) {
  class Collector : public IRVisitor {
   public:
    LoopVars vars;
    std::map<const VarNode*, std::pair<int64_t, int64_t>> range;  // [lo, hi) of each variable
    std::set<const VarNode*> unknown;                             // a loop of non-constant bounds

   protected:
    void visit_for(const ForNode* n) override {
      const VarNode* v = n->var.get();
      const int64_t* lo = as_const_int(n->min);
      const int64_t* e = as_const_int(n->extent);
      if (!lo || !e) {
        unknown.insert(v);
      } else if (auto it = range.find(v); it == range.end()) {
        range[v] = {*lo, *lo + *e};
      } else {
        it->second = {std::min(it->second.first, *lo), std::max(it->second.second, *lo + *e)};
      }
      if (n->for_kind == ForKind::ThreadBinding && n->thread_tag.rfind("threadIdx", 0) == 0) vars.threads.insert(v);
      IRVisitor::visit_for(n);
    }
  } c;
  c.visit(s);
  for (const auto& [v, r] : c.range)
    if (!c.unknown.count(v)) c.vars.extent[v] = r.second - r.first;
  return c.vars;
}

// Whether distinct threads never meet on an element through `index`: it is a sum of
// constant multiples of loop variables (at least one a thread's) whose coefficients grow
// faster than the span of the smaller terms (a mixed-radix number, one-to-one), so an
// element is one thread's at one point of its loops.
bool one_thread_per_element(const Expr& index, const LoopVars& loops) {
  Expr base = index;
  std::vector<std::pair<int64_t, int64_t>> terms;  // |coefficient|, extent
  if (const auto* r = index.as<RampNode>()) {
    const int64_t* stride = as_const_int(r->stride);
    if (stride == nullptr) return false;
    terms.emplace_back(*stride < 0 ? -*stride : *stride, r->lanes);
    base = r->base;
  }
  bool thread = false;
  for (const simp::Term& t : simp::linear_of(simplify(base)).terms) {
    const auto* v = t.atom.as<VarNode>();
    auto e = v ? loops.extent.find(v) : loops.extent.end();
    if (e == loops.extent.end()) return false;
    thread = thread || loops.threads.count(v) > 0;
    terms.emplace_back(t.coeff < 0 ? -t.coeff : t.coeff, e->second);
  }
  if (!thread) return false;
  std::sort(terms.begin(), terms.end());
  int64_t span = 0;
  for (const auto& [coeff, extent] : terms) {
    if (extent <= 1) continue;
    if (coeff <= span) return false;
    span += coeff * (extent - 1);
  }
  return true;
}

// Whether every access to a buffer, in both sets, is the same per-thread index.
bool thread_private(const std::vector<Expr>& a, const std::vector<Expr>& b, const LoopVars& loops) {
  const Expr& first = a.front();
  if (!first.defined() || !one_thread_per_element(first, loops)) return false;
  for (const std::vector<Expr>* list : {&a, &b})
    for (const Expr& e : *list)
      if (!e.defined() || !equal(e, first)) return false;
  return true;
}

bool meets(const IndexMap& a, const IndexMap& b, const LoopVars& loops) {
  for (const auto& [buffer, indices] : a) {
    auto other = b.find(buffer);
    if (other != b.end() && !thread_private(indices, other->second, loops)) return true;
  }
  return false;
}

// True if `next` must not run before the threads finished `pending`: it reads what they
// wrote, or overwrites what they read (elements another thread may touch).
bool conflicts(const Accesses& pending, const Accesses& next, const LoopVars& loops) {
  return meets(next.reads, pending.writes, loops) || meets(next.writes, pending.reads, loops);
}

// The shared accesses of a statement or expression.
class SharedAccesses : public IRVisitor {
 public:
  Accesses found;
  using IRVisitor::visit;

 protected:
  void visit_load(const LoadNode* n) override {
    record(found.reads, n->buffer, n->indices);
    IRVisitor::visit_load(n);
  }
  void visit_store(const StoreNode* n) override {
    record(found.writes, n->buffer, n->indices);
    IRVisitor::visit_store(n);
  }
  void visit_tensor_intrinsic_call(const TensorIntrinsicCallNode* n) override {
    // A producer warpgroup's copy (Stage::warp_specialize) is ordered by mbarriers: the
    // consumers wait for it where they read and release its buffer where it stands.
    if (n->producer) return;
    ++in_intrinsic_;  // the warp's lanes share each access
    IRVisitor::visit_tensor_intrinsic_call(n);
    --in_intrinsic_;
  }

 private:
  void record(IndexMap& into, const Buffer& b, const std::vector<Expr>& indices) {
    if (b.scope() != MemoryScope::Shared) return;
    into[b.get()].push_back(in_intrinsic_ == 0 && indices.size() == 1 ? indices[0] : Expr());
  }
  int in_intrinsic_ = 0;
};

template <typename T>
Accesses shared_accesses(const T& node) {
  SharedAccesses a;
  a.visit(node);
  return a.found;
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
    case StmtKind::LetStmt: {
      // The value is read before the body: part of the head, and of the tail too when
      // the body has no barrier.
      const auto* n = s.as<LetStmtNode>();
      out = summarize(n->body);
      const Accesses value = shared_accesses(n->value);
      out.head.add(value);
      if (!out.has_barrier) out.tail.add(value);
      return out;
    }
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
      const Accesses cond = shared_accesses(n->cond);
      out.head.add(cond);
      if (!out.has_barrier) out.tail.add(cond);
      return out;
    }
    default: {
      out.head = out.tail = shared_accesses(s);
      return out;
    }
  }
}

class BarrierInserter : public IRMutator {
 public:
  explicit BarrierInserter(LoopVars loops) : loops_(std::move(loops)) {}

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
      if (conflicts(b.tail, b.head, loops_)) body = seq({barrier(), body});
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
      if (!pending.empty() && conflicts(pending, cs.head, loops_)) {
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

  LoopVars loops_;
  int in_kernel_ = 0;
  bool divergent_ = false;
  lowering::RelaxMap thread_vars_;
};

}  // namespace

Stmt insert_barriers(const Stmt& s) {
  BarrierInserter b(loop_vars_of(s));
  return b.mutate(s);
}

}  // namespace te
