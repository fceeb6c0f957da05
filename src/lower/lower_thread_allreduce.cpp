// Pass "lower_thread_allreduce" (TVM's LowerThreadAllreduce): each thread_allreduce
// marker becomes the code that combines the partial results of a group of threads (the
// threads that differ only in the reduction's thread indices) into the group's leader.
//
//  - Groups of 2, 4, 8, 16 or 32 consecutive threads: a tree of warp shuffles, nothing
//    else (no shared memory, no barrier).
//  - Groups of whole warps (64, 96, ... threads), or a block that is one group of any
//    size: shuffles within each warp, the warps' totals through shared memory, then
//    shuffles within the first warp. A partial last warp skips the lanes past the group.
//  - Anything else (groups that straddle warps, reductions over threadIdx.y alone): a
//    tree in shared memory with a barrier per level.
// It runs after unify_thread_extents, so the thread loops have their final extents: the
// launch's block shape, which fixes the lanes of each warp.
#include <fmt/format.h>

#include <map>

#include "expr/reduce_rule.h"
#include "lower/allreduce_marker.h"
#include "lower/passes.h"
#include "lower/reduce_update.h"

namespace te::lowering {

namespace {

constexpr int64_t kWarp = 32;

int64_t pow2_ceil(int64_t n) {
  int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}

int tag_dim(const std::string& tag) { return tag.back() - 'x'; }  // threadIdx.x -> 0

bool is_thread_index(const ForNode* f) {
  return f->for_kind == ForKind::ThreadBinding && f->thread_tag.rfind("threadIdx.", 0) == 0;
}

// The extents of every threadIdx loop of a kernel, by dimension.
class ThreadExtents : public IRVisitor {
 public:
  std::map<int, std::vector<Expr>> extents;

 protected:
  void visit_for(const ForNode* n) override {
    if (is_thread_index(n)) extents[tag_dim(n->thread_tag)].push_back(n->extent);
    IRVisitor::visit_for(n);
  }
};

Expr i32(const Expr& e) { return e.dtype() == Int(32) ? e : cast(Int(32), e); }
Expr c32(int64_t v) { return make_const(Int(32), v); }

class Expander {
 public:
  Expander(const AllreduceMarker& m, const ReduceNode& rule, const std::vector<const ForNode*>& loops,
           const ThreadExtents& kernel, bool repeats)
      : m_(m), rule_(rule), repeats_(repeats) {
    const std::string stage = stage_of_accumulator(acc(0).name());
    identity_ = reduce_identity(rule);
    // The block's shape, and where the marker sits in it.
    const ForNode* loop_of[3] = {nullptr, nullptr, nullptr};
    for (const ForNode* f : loops)
      if (is_thread_index(f)) loop_of[tag_dim(f->thread_tag)] = f;
    for (const auto& [dim, extents] : kernel.extents) {
      const ForNode* f = loop_of[dim];
      std::string tag = fmt::format("threadIdx.{}", static_cast<char>('x' + dim));
      if (!f)
        throw Error(
            fmt::format("lower: stage '{}' reduces across threads, but its kernel also runs {} loops that "
                        "do not enclose the reduction: its threads would all do the reduction at once; "
                        "bind an axis of '{}' to {} too, or compute the other stages in their own kernel",
                        stage, tag, stage, tag));
      const int64_t* c = as_const_int(f->extent);
      for (const Expr& e : extents)
        if (!c || !equal(e, f->extent))
          throw Error(
              fmt::format("lower: stage '{}' reduces across threads, but the {} loops of its kernel have "
                          "different or non-constant extents ({} and {}): give them one constant extent",
                          stage, tag, to_string(f->extent), to_string(e)));
      dims_[dim] = *c;
      index_[dim] = i32(f->var - f->min);
    }
    // Which dimensions the reduction spans.
    for (const Var& v : m.threads) {
      int dim = -1;
      for (int d = 0; d < 3; ++d)
        if (loop_of[d] && loop_of[d]->var.same_as(v)) dim = d;
      TE_ICHECK(dim >= 0, "thread_allreduce: a reduction thread variable has no enclosing thread loop");
      reduce_[dim] = true;
    }
    tid_ = c32(0);
    Expr r = c32(0), g = c32(0);
    for (int d = 2; d >= 0; --d) {
      tid_ = tid_ * c32(dims_[d]) + index_[d];
      if (reduce_[d]) {
        r = r * c32(dims_[d]) + index_[d];
        tr_ *= dims_[d];
      } else {
        g = g * c32(dims_[d]) + index_[d];
        groups_ *= dims_[d];
      }
    }
    r_ = simplify(r);
    g_ = simplify(g);
    tid_ = simplify(tid_);
    // Groups are runs of consecutive lanes when the dimensions they span come before the
    // others (x, or x and y, ...; dimensions of one thread do not count).
    bool seen_other = false;
    for (int d = 0; d < 3; ++d) {
      if (dims_[d] == 1) continue;
      if (!reduce_[d])
        seen_other = true;
      else if (seen_other)
        contiguous_ = false;
    }
  }

  Stmt expand() {
    std::vector<Stmt> out;
    if (!is_one(m_.predicate)) {
      std::vector<Expr> kept;
      for (size_t i = 0; i < values(); ++i) kept.push_back(select(m_.predicate, partial(i), identity_[i]));
      out.push_back(set(kept));
    }
    if (tr_ == 1) return seq(out);
    const bool warp_groups = contiguous_ && tr_ <= kWarp && kWarp % tr_ == 0;
    const bool warp_aligned = contiguous_ && (tr_ % kWarp == 0 || groups_ == 1);
    if (warp_groups || warp_aligned)
      shuffle_tree(out);
    else
      shared_tree(out);
    return seq(out);
  }

  std::vector<Buffer> scratch;  // shared buffers to allocate outside the thread loops

 private:
  // The number of values, and value i's accumulator (a buffer of one element per thread).
  size_t values() const { return m_.accumulators.size(); }
  const Buffer& acc(size_t i) const { return m_.accumulators[i].as<LoadNode>()->buffer; }
  // Every accumulator set to its value.
  Stmt set(const std::vector<Expr>& v) { return store_all(m_.accumulators, v); }
  Expr partial(size_t i) const { return m_.accumulators[i]; }
  const std::vector<Expr>& partials() const { return m_.accumulators; }
  std::vector<Expr> loads(const std::vector<Buffer>& bufs, const Expr& at) const {
    std::vector<Expr> out;
    for (const Buffer& b : bufs) out.push_back(load(b, {at}));
    return out;
  }
  // One scratch buffer per value, named after its accumulator.
  std::vector<Buffer> scratch_buffers(const char* suffix, int64_t size) {
    std::vector<Buffer> out;
    for (size_t i = 0; i < values(); ++i)
      out.emplace_back(acc(i).name() + suffix, acc(i).dtype(), std::vector<Expr>{c32(size)}, MemoryScope::Shared);
    scratch.insert(scratch.end(), out.begin(), out.end());
    return out;
  }

  // Lane k takes lane k + d's value, d = width/2 .. 1; lanes past `valid` (when the
  // group ends inside a warp) are skipped.
  void warp_steps(std::vector<Stmt>& out, int64_t width, const Expr& lane, int64_t valid) {
    const bool partial_warp = valid % kWarp != 0 && !(valid <= kWarp && kWarp % valid == 0);
    for (int64_t d = pow2_ceil(width) / 2; d >= 1; d /= 2) {
      // Every lane shuffles (bound by a let, never inside ?:), then some combine.
      std::vector<Var> others;
      for (size_t i = 0; i < values(); ++i) others.emplace_back(acc(i).name() + ".other", acc(i).dtype());
      Stmt step = reduce_update(rule_, m_.accumulators, std::vector<Expr>(others.begin(), others.end()),
                                partial_warp ? lane + c32(d) < c32(valid) : Expr());
      for (size_t i = values(); i-- > 0;) step = let_stmt(others[i], warp_shuffle_down(partial(i), c32(d), tid_), step);
      out.push_back(step);
    }
  }

  void shuffle_tree(std::vector<Stmt>& out) {
    warp_steps(out, std::min(tr_, kWarp), r_, tr_);
    if (tr_ <= kWarp) return;
    // Warp leaders hand their totals to the group's first warp through shared memory.
    const int64_t warps = (tr_ + kWarp - 1) / kWarp;
    std::vector<Buffer> totals = scratch_buffers(".warps", groups_ * warps);
    Expr lane = r_ % c32(kWarp), warp = r_ / c32(kWarp);
    out.push_back(
        if_then_else(simplify(lane == c32(0)), store_all(loads(totals, simplify(g_ * c32(warps) + warp)), partials())));
    out.push_back(barrier());
    std::vector<Stmt> first;
    std::vector<Expr> firsts;
    Expr mine = simplify(g_ * c32(warps) + r_);
    for (size_t i = 0; i < values(); ++i)
      firsts.push_back(if_then_else(r_ < c32(warps), load(totals[i], {mine}), identity_[i]));
    first.push_back(set(firsts));
    warp_steps(first, warps, r_, kWarp);
    out.push_back(if_then_else(r_ < c32(kWarp), seq(first)));
    if (repeats_) out.push_back(barrier());  // the next round must not overwrite unread totals
  }

  void shared_tree(std::vector<Stmt>& out) {
    std::vector<Buffer> tree = scratch_buffers(".tree", groups_ * tr_);
    Expr base = simplify(g_ * c32(tr_));
    Expr at = simplify(base + r_);
    out.push_back(store_all(loads(tree, at), partials()));
    out.push_back(barrier());
    for (int64_t d = pow2_ceil(tr_) / 2; d >= 1; d /= 2) {
      Expr active = simplify(r_ < c32(d) && r_ + c32(d) < c32(tr_));
      out.push_back(if_then_else(active, reduce_update(rule_, loads(tree, at), loads(tree, simplify(at + c32(d))))));
      out.push_back(barrier());
    }
    out.push_back(if_then_else(r_ == c32(0), set(loads(tree, base))));
    if (repeats_) out.push_back(barrier());
  }

  const AllreduceMarker& m_;
  const ReduceNode& rule_;
  bool repeats_;
  std::vector<Expr> identity_;  // one per value
  int64_t dims_[3] = {1, 1, 1};
  Expr index_[3] = {c32(0), c32(0), c32(0)};
  bool reduce_[3] = {false, false, false};
  int64_t tr_ = 1, groups_ = 1;
  Expr tid_, r_, g_;
  bool contiguous_ = true;
};

class AllreduceLowering : public IRMutator {
 public:
  explicit AllreduceLowering(const LowerContext& ctx) : ctx_(ctx) {}

 protected:
  Stmt mutate_for(const Stmt& s, const ForNode* n) override {
    const bool kernel_root = kernel_ == nullptr && n->for_kind == ForKind::ThreadBinding;
    if (kernel_root) {
      kernel_ = std::make_unique<ThreadExtents>();
      kernel_->visit(s);
    }
    const bool outermost_threads = is_thread_index(n) && !inside_threads_;
    if (outermost_threads) inside_threads_ = true;
    loops_.push_back(n);
    std::vector<Buffer> outer_scratch;
    if (outermost_threads) outer_scratch.swap(scratch_);
    Stmt r = IRMutator::mutate_for(s, n);
    loops_.pop_back();
    if (outermost_threads) {
      for (const Buffer& b : scratch_) r = allocate(b, r);
      scratch_.swap(outer_scratch);
      inside_threads_ = false;
    }
    if (kernel_root) kernel_.reset();
    return r;
  }

  Stmt mutate_evaluate(const Stmt& s, const EvaluateNode* n) override {
    std::optional<AllreduceMarker> m = as_allreduce_marker(s);
    if (!m) return IRMutator::mutate_evaluate(s, n);
    TE_ICHECK(kernel_ && inside_threads_, "thread_allreduce marker outside the thread loops");
    bool repeats = false;
    for (const ForNode* f : loops_) repeats = repeats || f->for_kind != ForKind::ThreadBinding;
    const Expr& rule = ctx_.allreduce_rules.at(static_cast<size_t>(m->rule));
    Expander e(*m, *rule.as<ReduceNode>(), loops_, *kernel_, repeats);
    Stmt out = e.expand();
    scratch_.insert(scratch_.end(), e.scratch.begin(), e.scratch.end());
    return out;
  }

 private:
  const LowerContext& ctx_;
  std::unique_ptr<ThreadExtents> kernel_;
  bool inside_threads_ = false;
  std::vector<const ForNode*> loops_;
  std::vector<Buffer> scratch_;
};

}  // namespace

Stmt lower_thread_allreduce(const Stmt& s, const LowerContext& ctx) { return AllreduceLowering(ctx).mutate(s); }

}  // namespace te::lowering
