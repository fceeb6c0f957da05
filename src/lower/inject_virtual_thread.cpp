// Pass "inject_virtual_thread": a loop bound to vthread (V iterations, V constant) becomes
// V interleaved copies of its innermost statements, as TVM's InjectVirtualThread does:
//
//   for vt in 0..2:                          for k:
//     for k:                          =>       C[0*4 + i] += ...   (vt = 0)
//       C[vt*4 + i] += ...                     C[1*4 + i] += ...   (vt = 1)
//
// The vthread loop moves inward through sequences and through loops, conditions and lets
// that do not use its variable; where it stops (a store, an evaluation, or a loop, if or
// let that uses the variable) that statement is copied V times, the variable replaced by
// each value. A buffer allocated inside gets one copy per vthread. Barriers stay single:
// every vthread reaches them together. Moving statements of different vthreads past each
// other is what binding an axis to a thread allows: its iterations are independent (bound
// axes are data-parallel; reduction axes cannot be bound). A statement that does not use
// the variable (a shared tile filled for all vthreads) does the same in every vthread, so
// it runs once, as in TVM.
#include <fmt/format.h>

#include "lower/int_set.h"
#include "expr/analysis.h"
#include "lower/passes.h"
#include "te/simplify.h"

namespace te::lowering {

namespace {

bool uses(const Expr& e, const Var& v) { return e.defined() && uses_var(e, v.get()); }
bool uses_stmt(const Stmt& s, const Var& v) { return uses_var(s, v.get()); }

// Accesses of one buffer moved into its per-vthread copy: index + vt * size.
class GiveEachVthreadItsCopy : public IRMutator {
 public:
  GiveEachVthreadItsCopy(const Buffer& from, const Buffer& to, Expr offset)
      : from_(from), to_(to), offset_(std::move(offset)) {}

 protected:
  Expr mutate_load(const Expr& e, const LoadNode* n) override {
    Expr r = IRMutator::mutate_load(e, n);
    const auto* l = r.as<LoadNode>();
    if (!l->buffer.same_as(from_)) return r;
    return load(to_, {shifted(l->indices)}, l->predicate);
  }
  Stmt mutate_store(const Stmt& s, const StoreNode* n) override {
    Stmt r = IRMutator::mutate_store(s, n);
    const auto* st = r.as<StoreNode>();
    if (!st->buffer.same_as(from_)) return r;
    return store_like(*st, to_, st->value, {shifted(st->indices)}, st->predicate);
  }

 private:
  Expr shifted(const std::vector<Expr>& indices) const {
    TE_ICHECK(indices.size() == 1, "inject_virtual_thread runs on flattened buffers");
    const Expr& i = indices[0];
    Expr offset = cast(i.dtype().element_of(), offset_);
    return i.dtype().lanes() > 1 ? i + broadcast(offset, i.dtype().lanes()) : i + offset;
  }
  Buffer from_, to_;
  Expr offset_;
};

class VirtualThreadInjector {
 public:
  VirtualThreadInjector(Var vt, Expr min, int64_t count) : vt_(std::move(vt)), min_(std::move(min)), count_(count) {}

  // The statement equivalent to `for vt in [min, min + count): s`.
  Stmt inject(const Stmt& s) {
    if (!uses_stmt(s, vt_)) return s;
    switch (s.kind()) {
      case StmtKind::Seq: {
        std::vector<Stmt> parts;
        for (const Stmt& part : s.as<SeqNode>()->seq) parts.push_back(inject(part));
        return seq(parts);
      }
      case StmtKind::For: {
        const auto* f = s.as<ForNode>();
        if (uses(f->min, vt_) || uses(f->extent, vt_)) return copies(s);
        return for_loop(f->var, f->min, f->extent, f->for_kind, inject(f->body), f->thread_tag);
      }
      case StmtKind::IfThenElse: {
        const auto* n = s.as<IfThenElseNode>();
        if (uses(n->cond, vt_)) return copies(s);
        return if_then_else(n->cond, inject(n->then_case), n->else_case.defined() ? inject(n->else_case) : Stmt());
      }
      case StmtKind::LetStmt: {
        const auto* n = s.as<LetStmtNode>();
        if (uses(n->value, vt_)) return copies(s);
        return let_stmt(n->var, n->value, inject(n->body));
      }
      case StmtKind::Allocate: {
        const auto* n = s.as<AllocateNode>();
        Expr size = make_const(Int(64), 1);
        for (const Expr& e : n->buffer.shape()) size = size * cast(Int(64), e);
        size = simplify(size);
        Buffer per_vthread(n->buffer.name(), n->buffer.dtype(), {simplify(size * make_const(Int(64), count_))},
                           n->buffer.scope());
        Expr offset = (Expr(vt_) - min_) * cast(vt_.dtype(), size);
        GiveEachVthreadItsCopy rewrite(n->buffer, per_vthread, offset);
        return allocate(per_vthread, inject(rewrite.mutate(n->body)));
      }
      case StmtKind::Barrier: return s;
      default: return copies(s);
    }
  }

 private:
  Stmt copies(const Stmt& s) const {
    std::vector<Stmt> out;
    for (int64_t i = 0; i < count_; ++i)
      out.push_back(substitute(s, {{vt_, simplify(min_ + make_const(vt_.dtype(), i))}}));
    return seq(out);
  }

  Var vt_;
  Expr min_;
  int64_t count_;
};

class VirtualThreadFinder : public IRMutator {
 public:
  explicit VirtualThreadFinder(const LowerContext& ctx) {
    for (const auto& st : ctx.sched.get()->stages)
      for (const IterVar& leaf : st->leaf_iter_vars) {
        auto attrs = st->attrs.find(leaf.get());
        if (attrs == st->attrs.end() || attrs->second.kind != ForKind::ThreadBinding) continue;
        if (attrs->second.thread->thread_tag.rfind("vthread", 0) != 0) continue;
        vthreads_[leaf.var().get()] = {st->op->name, leaf.name()};
      }
  }

 protected:
  Stmt mutate_for(const Stmt& s, const ForNode* n) override {
    Stmt r = IRMutator::mutate_for(s, n);  // inner vthread loops first
    auto it = vthreads_.find(n->var.get());
    if (it == vthreads_.end()) return r;
    const auto* f = r.as<ForNode>();
    const Expr extent = simplify(f->extent);  // kept alive: as_const_int points into it
    const int64_t* count = as_const_int(extent);
    if (count == nullptr)
      throw Error(
          fmt::format("lower: axis '{}' of stage '{}' is bound to vthread, but its extent {} is not a "
                      "constant; split it with a constant number of parts (split_nparts) and bind the "
                      "outer loop",
                      it->second.second, it->second.first, to_string(f->extent)));
    if (*count > kMaxVirtualThreads)
      throw Error(
          fmt::format("lower: axis '{}' of stage '{}' is bound to vthread with {} iterations; te "
                      "interleaves at most {} (each is a copy of the loop body)",
                      it->second.second, it->second.first, *count, kMaxVirtualThreads));
    if (*count <= 0) return seq({});
    return VirtualThreadInjector(f->var, f->min, *count).inject(f->body);
  }

 private:
  static constexpr int64_t kMaxVirtualThreads = 64;
  std::map<const VarNode*, std::pair<std::string, std::string>> vthreads_;  // stage, axis
};

}  // namespace

Stmt inject_virtual_threads(const Stmt& body, const LowerContext& ctx) {
  VirtualThreadFinder finder(ctx);
  return finder.mutate(body);
}

}  // namespace te::lowering
