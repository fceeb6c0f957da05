// Pass "inject_double_buffer" (TVM's InjectDoubleBuffer, generalized to n buffers): a
// stage marked double_buffer() (2 buffers) or pipeline(n) and computed at loop v gets
// buffers B_0 .. B_{n-1}; iteration v reads B_{v % n} while the fetches of the n - 1
// iterations after it are in flight. The loop is unrolled by n, so each part names its
// buffers as constants (no index arithmetic on v % n). For n = 2:
//
//   for v in 0..m:                    F(0) -> B_0
//     F(v) -> B              =>       for v.outer in 0..ceil(m/2):          (v = 2 v.outer)
//     use(v, B)                         if (v + 1 < m) F(v + 1) -> B_1       (no guard if m is even)
//                                       use(v, B_0)
//                                       if (v + 1 < m) {
//                                         if (v + 2 < m) F(v + 2) -> B_0
//                                         use(v + 1, B_1)
//                                       }
//
// and for n buffers: F(0) .. F(n - 2) into B_0 .. B_{n-2} before the loop, then part r of
// each unrolled iteration fetches F(v + n - 1) into B_{(r + n - 1) % n} (the buffer part
// r - 1 read) and uses B_r. insert_barriers then puts one barrier per part: filling one
// buffer and reading others do not conflict, while the loop-carried reuse of each does.
// B_1 is named "<buffer>.db", B_k for k > 1 "<buffer>.db<k>".
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

// A multi-buffered stage: its buffers, the stage's own first.
struct Buffered {
  std::string stage;
  std::vector<Buffer> buffers;
};

// Rewrites the loop over v that computes the given stages.
class Pipeliner : public IRMutator {
 public:
  Pipeliner(const Var& loop_var, std::vector<Buffered> stages) : v_(loop_var), stages_(std::move(stages)) {
    n_ = stages_.front().buffers.size();
    for (const Buffered& d : stages_) {
      buffered_.insert(d.buffers[0].get());
      if (d.buffers.size() != n_)
        throw Error(fmt::format(
            "lower: stages '{}' ({} buffers) and '{}' ({}) are computed at loop '{}', whose unrolling gives every "
            "stage there the same number of buffers; give them the same (double_buffer, pipeline)",
            stages_.front().stage, n_, d.stage, d.buffers.size(), v_.name()));
    }
    to_.resize(n_);
    for (size_t k = 1; k < n_; ++k)
      for (const Buffered& d : stages_) to_[k][d.buffers[0].get()] = d.buffers[k];
  }
  bool found = false;

 protected:
  Stmt mutate_for(const Stmt& s, const ForNode* n) override {
    if (!n->var.same_as(v_)) return IRMutator::mutate_for(s, n);
    found = true;
    return rewrite(n);
  }
  // Outside the loop, a buffer's last data would be in any copy.
  Stmt mutate_store(const Stmt& s, const StoreNode* n) override {
    if (buffered_.count(n->buffer.get())) refuse("its buffer is also used outside that loop", n->buffer.get());
    return IRMutator::mutate_store(s, n);
  }
  Expr mutate_load(const Expr& e, const LoadNode* n) override {
    if (buffered_.count(n->buffer.get())) refuse("its buffer is also used outside that loop", n->buffer.get());
    return IRMutator::mutate_load(e, n);
  }

 private:
  [[noreturn]] void refuse(const std::string& what, const BufferNode* b, const std::string& fix = "") const {
    std::string stage = stages_.front().stage;
    for (const Buffered& d : stages_)
      if (d.buffers[0].get() == b) stage = d.stage;
    throw Error(fmt::format("lower: stage '{}' is {} at loop '{}', but {}; {}", stage,
                            buffering_phrase(static_cast<int>(n_)), v_.name(), what,
                            fix.empty() ? "compute it at that loop only, around all its readers, or remove the "
                                          "double_buffer (pipeline)"
                                        : fix));
  }

  // The loop's statements: the fetches (those that write a buffered stage's buffer), the
  // others before the first fetch, and the others after it.
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
      if (any_of(u.stored, buffered_)) {
        p.fetch.push_back(c);
        fetch_reads.insert(u.loaded.begin(), u.loaded.end());
        continue;
      }
      if (const BufferNode* b = p.fetch.empty() ? any_of(u.loaded, buffered_) : nullptr)
        refuse("the loop reads its buffer before fetching it", b,
               "compute the stage at that loop, ahead of its "
               "readers");
      others_write.insert(u.stored.begin(), u.stored.end());
      (p.fetch.empty() ? p.before : p.after).push_back(c);
    }
    for (const Buffered& d : stages_) {
      bool fetched = false;
      for (const Stmt& c : p.fetch) fetched = fetched || buffer_use(c).stores(d.buffers[0].get());
      if (!fetched)
        refuse("that loop does not fetch it directly (a condition or another loop lies between)", d.buffers[0].get(),
               "compute the stage at the innermost loop around its readers");
    }
    if (const BufferNode* w = any_of(fetch_reads, others_write))
      refuse(fmt::format("it reads '{}', which the same loop computes, so the next iteration's data cannot be "
                         "fetched ahead",
                         w->name),
             stages_.front().buffers[0].get(), fmt::format("compute '{}' outside the loop", w->name));
    return p;
  }

  // The fetch of iteration `at` into buffer k.
  Stmt fetch(const Parts& p, const Expr& at, size_t k) const {
    return retarget(substitute(seq(p.fetch), {{v_, at}}), to_[k]);
  }

  // Part r of an unrolled iteration: iteration `at` reading buffer r, fetching iteration
  // at + n - 1 into the buffer part r - 1 read.
  Stmt part(const Parts& p, const Expr& at, size_t r, const Expr& end, bool guard_fetch) const {
    const Expr ahead = at + make_const(at.dtype(), static_cast<int64_t>(n_ - 1));
    std::vector<Stmt> out;
    for (const Stmt& c : p.before) out.push_back(substitute(c, {{v_, at}}));
    out.push_back(guarded(ahead < end, fetch(p, ahead, (r + n_ - 1) % n_), guard_fetch));
    for (const Stmt& c : p.after) out.push_back(retarget(substitute(c, {{v_, at}}), to_[r]));
    return seq(out);
  }

  Stmt rewrite(const ForNode* n) {
    Parts p = split_body(n);
    const DataType t = v_.dtype();
    auto c = [&](int64_t x) { return make_const(t, x); };
    const int64_t count = static_cast<int64_t>(n_);
    const int64_t* extent = as_const_int(n->extent);
    const bool whole = extent && *extent % count == 0;  // every unrolled iteration complete
    const Expr end = n->min + n->extent;
    Var group(v_.name() + ".outer", t);
    const Expr first = n->min + group * c(count);
    std::vector<Stmt> parts;
    for (size_t r = 0; r < n_; ++r) {
      const Expr at = r == 0 ? first : first + c(static_cast<int64_t>(r));
      // With whole unrolled iterations part 0's fetch always exists: the last iteration's
      // part 0 fetches the loop's last.
      const bool guard_fetch = !(whole && r == 0);
      parts.push_back(guarded(at<end, part(p, at, r, end, guard_fetch), r> 0 && !whole));
    }
    Stmt loop =
        for_loop(group, c(0), simplify((n->extent + c(count - 1)) / c(count)), n->for_kind, seq(parts), n->thread_tag);
    // The prologue: the first n - 1 iterations' fetches.
    std::vector<Stmt> prologue;
    for (int64_t k = 0; k + 1 < count; ++k)
      prologue.push_back(
          guarded(n->extent > c(k), fetch(p, n->min + c(k), static_cast<size_t>(k)), !(extent && *extent > k)));
    prologue.push_back(loop);
    return seq(prologue);
  }

  Var v_;
  std::vector<Buffered> stages_;
  size_t n_ = 2;
  BufferSet buffered_;
  std::vector<BufferMap> to_;  // to_[k]: each stage's own buffer -> its buffer k (empty for k = 0)
};

}  // namespace

std::string buffering_phrase(int buffers) {
  return buffers == 2 ? std::string("double-buffered") : fmt::format("pipelined over {} buffers", buffers);
}

Stmt inject_double_buffer(const Stmt& s, const LowerContext& ctx) {
  // The multi-buffered stages, grouped by the loop they are computed at.
  std::map<const VarNode*, std::pair<Var, std::vector<Buffered>>> by_loop;
  for (const auto& st : ctx.sched.get()->stages) {
    if (st->buffers < 2) continue;
    for (const Buffer& buf : ctx.buffers_of(st->op.get())) {
      auto flat = ctx.flat_buffers.find(buf.get());
      if (flat == ctx.flat_buffers.end()) continue;  // never accessed: nothing to fetch
      const Buffer& b = flat->second;
      auto& [loop_var, stages] = by_loop[st->attach_ivar.var().get()];
      loop_var = st->attach_ivar.var();
      Buffered d{st->op->name, {b}};
      for (int k = 1; k < st->buffers; ++k)
        d.buffers.push_back(Buffer(k == 1 ? b.name() + ".db" : fmt::format("{}.db{}", b.name(), k), b.dtype(),
                                   b.shape(), b.scope(), b.swizzle_bytes(), b.swizzle_row()));
      stages.push_back(d);
    }
  }
  Stmt body = s;
  for (auto& [node, group] : by_loop) {
    Pipeliner d(group.first, group.second);
    body = d.mutate(body);
    TE_ICHECK(d.found, "inject_double_buffer: the attach loop of a multi-buffered stage is missing");
  }
  return body;
}

}  // namespace te::lowering
