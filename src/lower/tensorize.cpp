// tensorize: each tensorized stage's nest under its axis becomes a TensorIntrinsicCall.
// It runs after storage_flatten, inject_double_buffer, allocate and inject_virtual_thread
// (before simplify): every access is then a flat index into the buffer the backends see,
// so a region is a start offset and the declaration's dense strides, and no later pass
// replaces a buffer under the node; the loops are still as build_loop_nests made them.
#include <fmt/format.h>

#include <algorithm>

#include "lower/passes.h"
#include "tensorize/declaration.h"
#include "tensorize/match.h"

namespace te::lowering {

namespace {

class Tensorize : public IRMutator {
 public:
  Tensorize(const StageNode& st, const VarBounds& known) : st_(st), known_(known) {
    where_ = fmt::format("tensorize: stage '{}' at axis '{}' does not match intrinsic '{}'", st.op->name,
                         st.tensorize_axis->var.name(), st.tensorize_intrinsic.name());
    if (const auto& init = st.tensorize_intrinsic->init)
      init_where_ = fmt::format(
          "tensorize: the init of stage '{}' at axis '{}' does not match intrinsic '{}' (the "
          "init of '{}')",
          st.op->name, st.tensorize_axis->var.name(), init->name, st.tensorize_intrinsic.name());
    for (const IterVar& iv : st.all_iter_vars) iter_vars_[iv->var.get()] = iv;
    bool under = false;
    for (const IterVar& iv : st.leaf_iter_vars) {
      under = under || iv.same_as(st.tensorize_axis);
      if (under && reduces(iv)) reduce_under_axis_ = true;
    }
  }
  int replaced = 0;
  int init_replaced = 0;

 protected:
  Stmt mutate_for(const Stmt& s, const ForNode* n) override {
    if (n->var.get() != st_.tensorize_axis->var.get()) return IRMutator::mutate_for(s, n);
    tensorize::Nest nest;
    Stmt init;  // the reduction's init, where it falls inside the nest
    size_t init_depth = 0;
    Stmt at = s;
    for (;;) {
      if (auto* f = at.as<ForNode>()) {
        check_kind(f);
        nest.loops.push_back(f);
        auto it = iter_vars_.find(f->var.get());
        nest.reduce.push_back(it != iter_vars_.end() && reduces(it->second));
        at = f->body;
        continue;
      }
      if (auto* q = at.as<SeqNode>()) {
        // te places a reduction's init just before its outermost reduction loop: inside
        // the nest when that loop is. It is hoisted (with the data-parallel loops above
        // it) and runs before the intrinsic, which then accumulates from the identity.
        if (!init.defined() && q->seq.size() == 2 && st_.op->body.as<ReduceNode>() != nullptr &&
            only_stores(q->seq[0])) {
          init = q->seq[0];
          init_depth = nest.loops.size();
          at = q->seq[1];
          continue;
        }
        fail_nest("holds several statements (another stage computed at a loop inside it?)");
      }
      if (at.as<IfThenElseNode>() != nullptr)
        fail_nest(
            "has a condition (a split whose factor does not divide the extent, or a compute's where "
            "clause); tensorize needs every loop under the axis to run its full extent: choose factors "
            "that divide the extents");
      if (auto* st = at.as<StoreNode>()) {
        nest.store = st;
        break;
      }
      fail_nest("holds something other than loops around the stage's store");
    }
    const auto& in = st_.tensorize_intrinsic.node();
    // A reduction's init repeats the data-parallel loops (the axis among them) around
    // the identity's store: that copy of the nest stays te's, or becomes the
    // intrinsic's init.
    if (reduce_under_axis_ && std::find(nest.reduce.begin(), nest.reduce.end(), true) == nest.reduce.end())
      return in->init ? replace(nest, in->init, init_where_) : s;
    ++replaced;
    Stmt call = replace(nest, in, where_);
    if (!init.defined()) return call;
    if (in->init) {
      // The hoisted init: the data-parallel loops above it in the nest, then its own.
      tensorize::Nest init_nest;
      for (size_t j = 0; j < init_depth; ++j) {
        init_nest.loops.push_back(nest.loops[j]);
        init_nest.reduce.push_back(false);
      }
      Stmt at = init;
      while (auto* f = at.as<ForNode>()) {
        check_kind(f);
        init_nest.loops.push_back(f);
        init_nest.reduce.push_back(false);
        at = f->body;
      }
      if (at.as<IfThenElseNode>() != nullptr)
        throw Error(
            fmt::format("{}: the init's nest has a condition; tensorize needs every loop under the axis to "
                        "run its full extent",
                        init_where_));
      init_nest.store = at.as<StoreNode>();
      TE_ICHECK(init_nest.store != nullptr, "tensorize: an init without a store");
      return seq({replace(init_nest, in->init, init_where_), call});
    }
    for (size_t j = init_depth; j-- > 0;) {
      const ForNode* f = nest.loops[j];
      init = for_loop(f->var, f->min, f->extent, f->for_kind, init, f->thread_tag);
    }
    return seq({init, call});
  }

 private:
  Stmt replace(const tensorize::Nest& nest, const std::shared_ptr<const TensorIntrinsicNode>& in,
               const std::string& where) {
    if (in.get() != st_.tensorize_intrinsic.node().get()) ++init_replaced;
    tensorize::Binding b = tensorize::match(nest, *in, known_, where);
    std::vector<Var> vars;
    Stmt body = tensorize::instantiate(*in, b.buffers, b.offsets, b.strides, &vars);
    const bool main = in.get() == st_.tensorize_intrinsic.node().get();  // not the init's
    return tensor_intrinsic_call(in, b.buffers, b.offsets, b.strides, body,
                                 main ? st_.warp_specialization : std::nullopt);
  }

  static bool reduces(const IterVar& iv) { return iv->type == IterVarType::Reduce; }

  // The init: loops around a store, maybe under its guards (which it keeps).
  static bool only_stores(const Stmt& s) {
    if (auto* f = s.as<ForNode>()) return only_stores(f->body);
    if (auto* c = s.as<IfThenElseNode>()) return !c->else_case.defined() && only_stores(c->then_case);
    return s.as<StoreNode>() != nullptr;
  }

  void check_kind(const ForNode* f) const {
    if (f->for_kind == ForKind::Serial) return;
    const std::string how = f->for_kind == ForKind::ThreadBinding ? fmt::format("bound to '{}'", f->thread_tag)
                                                                  : for_kind_name(f->for_kind);
    const std::string which = f->var.get() == st_.tensorize_axis->var.get()
                                  ? fmt::format("the tensorized axis '{}'", f->var.name())
                                  : fmt::format("the loop '{}' under the tensorized axis '{}'", f->var.name(),
                                                st_.tensorize_axis->var.name());
    throw Error(
        fmt::format("tensorize: stage '{}': {} is {}; the intrinsic '{}' replaces the whole nest, so its "
                    "loops take no annotation",
                    st_.op->name, which, how, st_.tensorize_intrinsic.name()));
  }

  [[noreturn]] void fail_nest(const std::string& what) const {
    throw Error(fmt::format("{}: the nest under the axis {}", where_, what));
  }

  const StageNode& st_;
  const VarBounds& known_;
  std::string where_, init_where_;
  std::map<const VarNode*, IterVar> iter_vars_;
  bool reduce_under_axis_ = false;  // the update's nest under the axis has reduction loops
};

}  // namespace

Stmt tensorize_stages(const Stmt& body, const LowerContext& ctx) {
  Stmt out = body;
  for (const auto& st : ctx.sched.get()->stages) {
    if (!st->tensorize_intrinsic.defined()) continue;
    Tensorize t(*st, ctx.known);
    out = t.mutate(out);
    if (t.replaced == 0)
      throw Error(
          fmt::format("tensorize: stage '{}': the tensorized axis '{}' is no loop of the lowered nest (it "
                      "was split or fused after tensorize, or the stage is not computed); tensorize one "
                      "of its final loops",
                      st->op->name, st->tensorize_axis->var.name()));
    if (st->tensorize_intrinsic->init && t.init_replaced == 0)
      throw Error(
          fmt::format("tensorize: stage '{}': intrinsic '{}' replaces the reduction's init with '{}', but "
                      "the init has no loop '{}' (te computes it outside the tensorized axis); reorder "
                      "so that the axis is a data-parallel loop inside the reduction loops",
                      st->op->name, st->tensorize_intrinsic.name(), st->tensorize_intrinsic->init->name,
                      st->tensorize_axis->var.name()));
  }
  return out;
}

}  // namespace te::lowering
