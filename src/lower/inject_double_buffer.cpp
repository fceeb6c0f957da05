// Pass "inject_double_buffer" (TVM's InjectDoubleBuffer): a stage marked double_buffer()
// and computed at loop v gets a second buffer B'; iteration v reads one buffer while the
// fetch of iteration v + 1 fills the other. The loop is unrolled by two, so each half
// names its buffers as constants (no index arithmetic on the parity):
//
//   for v in 0..n:                    F(0) -> B
//     F(v) -> B              =>       for v.outer in 0..ceil(n/2):          (v = 2 v.outer)
//     use(v, B)                         if (v + 1 < n) F(v + 1) -> B'        (no guard if n is even)
//                                       use(v, B)
//                                       if (v + 1 < n) {
//                                         if (v + 2 < n) F(v + 2) -> B
//                                         use(v + 1, B')
//                                       }
//
// insert_barriers then puts one barrier per iteration: filling one buffer and reading the
// other do not conflict, while the loop-carried reuse of each buffer does.
#include <fmt/format.h>

#include <map>
#include <set>

#include "expr/analysis.h"
#include "lower/passes.h"

namespace te::lowering {

namespace {

using BufferSet = std::set<const BufferNode*>;
using BufferMap = std::map<const BufferNode*, Buffer>;

const BufferNode* any_of(const BufferSet& a, const BufferSet& b) {
  for (const BufferNode* x : a)
    if (b.count(x)) return x;
  return nullptr;
}

// Loads and stores of some buffers moved to others of the same shape.
class Retarget : public IRMutator {
 public:
  explicit Retarget(const BufferMap& to) : to_(to) {}

 protected:
  Expr mutate_load(const Expr& e, const LoadNode* n) override {
    Expr r = IRMutator::mutate_load(e, n);
    const auto* l = r.as<LoadNode>();
    auto it = to_.find(l->buffer.get());
    return it != to_.end() ? load(it->second, l->indices, l->predicate) : r;
  }
  Stmt mutate_store(const Stmt& s, const StoreNode* n) override {
    Stmt r = IRMutator::mutate_store(s, n);
    const auto* st = r.as<StoreNode>();
    auto it = to_.find(st->buffer.get());
    return it != to_.end() ? store_like(*st, it->second, st->value, st->indices, st->predicate) : r;
  }

 private:
  const BufferMap& to_;
};

Stmt retarget(const Stmt& s, const BufferMap& to) {
  if (to.empty()) return s;
  Retarget r(to);
  return r.mutate(s);
}

Stmt guarded(const Expr& cond, const Stmt& s, bool needed) { return needed ? if_then_else(cond, s) : s; }

// A double-buffered stage: its buffer and the second one.
struct Doubled {
  std::string stage;
  Buffer first, second;
};

// Rewrites the loop over v that computes the given stages.
class DoubleBufferer : public IRMutator {
 public:
  DoubleBufferer(const Var& loop_var, std::vector<Doubled> stages) : v_(loop_var), stages_(std::move(stages)) {
    for (const Doubled& d : stages_) {
      doubled_.insert(d.first.get());
      to_second_[d.first.get()] = d.second;
    }
  }
  bool found = false;

 protected:
  Stmt mutate_for(const Stmt& s, const ForNode* n) override {
    if (!n->var.same_as(v_)) return IRMutator::mutate_for(s, n);
    found = true;
    return rewrite(n);
  }
  // Outside the loop, a buffer's last data would be in either copy.
  Stmt mutate_store(const Stmt& s, const StoreNode* n) override {
    if (doubled_.count(n->buffer.get())) refuse("its buffer is also used outside that loop", n->buffer.get());
    return IRMutator::mutate_store(s, n);
  }
  Expr mutate_load(const Expr& e, const LoadNode* n) override {
    if (doubled_.count(n->buffer.get())) refuse("its buffer is also used outside that loop", n->buffer.get());
    return IRMutator::mutate_load(e, n);
  }

 private:
  [[noreturn]] void refuse(const std::string& what, const BufferNode* b, const std::string& fix = "") const {
    std::string stage = stages_.front().stage;
    for (const Doubled& d : stages_)
      if (d.first.get() == b) stage = d.stage;
    throw Error(fmt::format("lower: stage '{}' is double-buffered at loop '{}', but {}; {}", stage, v_.name(), what,
                            fix.empty() ? "compute it at that loop only, around all its readers, or remove the "
                                          "double_buffer"
                                        : fix));
  }

  // The loop's statements: the fetches (those that write a doubled buffer), the others
  // before the first fetch, and the others after it.
  struct Parts {
    std::vector<Stmt> before, fetch, after;
  };

  Parts split_body(const ForNode* n) {
    std::vector<Stmt> stmts;
    if (const auto* sq = n->body.as<SeqNode>())
      stmts = sq->seq;
    else
      stmts = {n->body};
    Parts p;
    BufferSet fetch_reads, others_write;
    for (const Stmt& c : stmts) {
      const BufferUse u = buffer_use(c);
      if (any_of(u.stored, doubled_)) {
        p.fetch.push_back(c);
        fetch_reads.insert(u.loaded.begin(), u.loaded.end());
        continue;
      }
      if (const BufferNode* b = p.fetch.empty() ? any_of(u.loaded, doubled_) : nullptr)
        refuse("the loop reads its buffer before fetching it", b,
               "compute the stage at that loop, ahead of its "
               "readers");
      others_write.insert(u.stored.begin(), u.stored.end());
      (p.fetch.empty() ? p.before : p.after).push_back(c);
    }
    for (const Doubled& d : stages_) {
      bool fetched = false;
      for (const Stmt& c : p.fetch) fetched = fetched || buffer_use(c).stores(d.first.get());
      if (!fetched)
        refuse("that loop does not fetch it directly (a condition or another loop lies between)", d.first.get(),
               "compute the stage at the innermost loop around its readers");
    }
    if (const BufferNode* w = any_of(fetch_reads, others_write))
      refuse(fmt::format("it reads '{}', which the same loop computes, so the next iteration's data cannot be "
                         "fetched ahead",
                         w->name),
             stages_.front().first.get(), fmt::format("compute '{}' outside the loop", w->name));
    return p;
  }

  Stmt fetch(const Parts& p, const Expr& at, bool into_second) const {
    return retarget(substitute(seq(p.fetch), {{v_, at}}), into_second ? to_second_ : BufferMap{});
  }

  // One iteration at `at` reading the first (or second) buffers, fetching iteration
  // at + 1 into the others.
  Stmt half(const Parts& p, const Expr& at, bool reads_second, const Expr& end, bool guard_fetch) const {
    const Expr next = at + make_const(at.dtype(), 1);
    std::vector<Stmt> out;
    for (const Stmt& c : p.before) out.push_back(substitute(c, {{v_, at}}));
    out.push_back(guarded(next < end, fetch(p, next, !reads_second), guard_fetch));
    for (const Stmt& c : p.after)
      out.push_back(retarget(substitute(c, {{v_, at}}), reads_second ? to_second_ : BufferMap{}));
    return seq(out);
  }

  Stmt rewrite(const ForNode* n) {
    Parts p = split_body(n);
    const DataType t = v_.dtype();
    auto c = [&](int64_t x) { return make_const(t, x); };
    const int64_t* extent = as_const_int(n->extent);
    const bool even = extent && *extent % 2 == 0;
    const Expr end = n->min + n->extent;
    Var pair(v_.name() + ".outer", t);
    const Expr first = n->min + pair * c(2), second = first + c(1);
    Stmt body = seq({half(p, first, false, end, !even),  // an even count: the next one always exists
                     guarded(second < end, half(p, second, true, end, true), !even)});
    Stmt loop = for_loop(pair, c(0), simplify((n->extent + c(1)) / c(2)), n->for_kind, body, n->thread_tag);
    Stmt prologue = guarded(n->extent > c(0), fetch(p, n->min, false), !(extent && *extent > 0));
    return seq({prologue, loop});
  }

  Var v_;
  std::vector<Doubled> stages_;
  BufferSet doubled_;
  BufferMap to_second_;
};

}  // namespace

Stmt inject_double_buffer(const Stmt& s, const LowerContext& ctx) {
  // The double-buffered stages, grouped by the loop they are computed at.
  std::map<const VarNode*, std::pair<Var, std::vector<Doubled>>> by_loop;
  for (const auto& st : ctx.sched.get()->stages) {
    if (!st->double_buffer) continue;
    for (const Buffer& buf : ctx.buffers_of(st->op.get())) {
      auto flat = ctx.flat_buffers.find(buf.get());
      if (flat == ctx.flat_buffers.end()) continue;  // never accessed: nothing to fetch
      const Buffer& b = flat->second;
      auto& [loop_var, stages] = by_loop[st->attach_ivar.var().get()];
      loop_var = st->attach_ivar.var();
      stages.push_back({st->op->name, b, Buffer(b.name() + ".db", b.dtype(), b.shape(), b.scope(), b.swizzle_bytes())});
    }
  }
  Stmt body = s;
  for (auto& [node, group] : by_loop) {
    DoubleBufferer d(group.first, group.second);
    body = d.mutate(body);
    TE_ICHECK(d.found, "inject_double_buffer: the attach loop of a double-buffered stage is missing");
  }
  return body;
}

}  // namespace te::lowering
