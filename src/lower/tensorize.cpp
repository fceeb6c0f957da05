// tensorize: each tensorized stage's nest under its axis becomes a TensorIntrinsicCall.
// It runs after storage_flatten, inject_double_buffer, allocate and inject_virtual_thread
// (before simplify): every access is then a flat index into the buffer the backends see,
// so a region is a start offset and the declaration's dense strides, and no later pass
// replaces a buffer under the node; the loops are still as build_loop_nests made them.
#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <variant>

#include "expr/analysis.h"
#include "lower/passes.h"
#include "te/tensorize.h"
#include "tensorize/declaration.h"
#include "tensorize/match.h"

namespace te::lowering {

namespace {

// The tensor stage st copies element for element (an identity read of a tensor of its
// own shape), or null.
const OperationNode* identity_copy_source(const StageNode& st) {
  const OperationNode& op = *st.op;
  if (op.kind != OpKind::Compute || !op.reduce_axis.empty()) return nullptr;
  auto* read = op.body.as<TensorReadNode>();
  if (read == nullptr || read->indices.size() != op.axis.size() || read->op->shape.size() != op.shape.size())
    return nullptr;
  for (size_t d = 0; d < op.axis.size(); ++d) {
    auto* v = read->indices[d].as<VarNode>();
    if (v != op.axis[d]->var.get() || !equal(read->op->shape[d], op.shape[d]) || !is_zero(op.axis[d]->dom.min))
      return nullptr;
  }
  return read->op.get();
}

// Stages whose tiles hold zeros past their source's bounds:
//  - a TMA copy's (TMA's boxes are filled so): an identity copy with no split or annotated
//    loop, so the guards of its nest are the source's bounds;
//  - a tensorized identity copy of such a stage (wgmma's A fragments loaded from a
//    TMA-filled tile) whose loops are at most split (and annotated): its guards are the
//    source's bounds too (a split's guard is its axis's extent, the source's), and past
//    them it reads the source tile's zeros.
std::set<const OperationNode*> zero_filled_stages(const Schedule& sched) {
  std::set<const OperationNode*> out;
  for (const auto& st : sched.get()->stages)
    if (st->tensorize_intrinsic.defined() && intrinsics::is_cuda_tma_load(*st->tensorize_intrinsic.node()) &&
        st->relations.empty() && st->attrs.empty() && identity_copy_source(*st) != nullptr)
      out.insert(st->op.get());
  for (bool grew = !out.empty(); grew;) {
    grew = false;
    for (const auto& st : sched.get()->stages) {
      const OperationNode* source = identity_copy_source(*st);
      if (!st->tensorize_intrinsic.defined() || source == nullptr || out.count(source) == 0 ||
          out.count(st->op.get()) != 0)
        continue;
      bool splits_only = true;
      for (const Relation& rel : st->relations) splits_only = splits_only && std::holds_alternative<SplitRelation>(rel);
      if (!splits_only) continue;
      out.insert(st->op.get());
      grew = true;
    }
  }
  return out;
}

// Whether a sum over one axis adds only zeros where its axis runs past its extent: every
// tensor it reads is zero-filled (above) and indexed by the axis directly (from 0, the
// tensor's extent there), so past it every read is a zero, and the summed value is zero
// where its reads are.
bool sums_zeros_past_its_axis(const OperationNode& op, const std::set<const OperationNode*>& zero_filled) {
  auto* sum = op.body.as<ReduceNode>();
  if (sum == nullptr || sum->reducer != Reducer::Sum || sum->sources.size() != 1 || sum->condition.defined() ||
      op.reduce_axis.size() != 1)
    return false;
  const IterVar& k = op.reduce_axis[0];
  const std::vector<const TensorReadNode*> reads = tensor_reads(sum->sources[0]);
  if (reads.empty() || !is_zero(k->dom.min)) return false;
  for (const TensorReadNode* read : reads) {
    if (zero_filled.count(read->op.get()) == 0) return false;
    bool by_axis = false;
    for (size_t d = 0; d < read->indices.size(); ++d)
      by_axis = by_axis || (read->indices[d].as<VarNode>() == k->var.get() && equal(k->dom.extent, read->op->shape[d]));
    if (!by_axis) return false;
  }
  const Expr zeros =
      map_tensor_reads(sum->sources[0], [](const TensorReadNode* read, const Expr&) { return make_zero(read->dtype); });
  return is_zero(simplify(zeros));
}

// The nest of a zero-filled stage's copy with each guard's other side storing zero: what
// its TMA copy does past the source, for interpret() (the intrinsic's body).
Stmt with_zeros_past_guards(const Stmt& s, const StoreNode& copy) {
  if (auto* f = s.as<ForNode>())
    return for_loop(f->var, f->min, f->extent, f->for_kind, with_zeros_past_guards(f->body, copy), f->thread_tag);
  if (auto* c = s.as<IfThenElseNode>())
    return if_then_else(c->cond, with_zeros_past_guards(c->then_case, copy),
                        store(copy.buffer, make_zero(copy.value.dtype()), copy.indices));
  return s;
}

class Tensorize : public IRMutator {
 public:
  Tensorize(const StageNode& st, const VarBounds& known, const std::set<const OperationNode*>& zero_filled)
      : st_(st), known_(known) {
    zero_fills_ = zero_filled.count(st.op.get()) != 0;
    reads_zeros_ = sums_zeros_past_its_axis(*st.op, zero_filled);
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
    bool guarded = false;  // under a guard guard_allowed() accepts
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
      if (auto* c = at.as<IfThenElseNode>()) {
        if (c->else_case.defined() || !guard_allowed(*c))
          fail_nest(
              "has a condition (a split whose factor does not divide the extent, or a compute's where "
              "clause); tensorize needs every loop under the axis to run its full extent: choose factors "
              "that divide the extents (only a TMA copy's bounds, a copy's of a TMA-filled tile, and a "
              "reduction's over such tiles, may be guarded)");
        guarded = true;
        at = c->then_case;
        continue;
      }
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
    Stmt call = replace(nest, in, where_, guarded && zero_fills_ ? with_zeros_past_guards(s, *nest.store) : Stmt());
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
  // `body`: what the call does (undefined: the declaration's computation on the region).
  Stmt replace(const tensorize::Nest& nest, const std::shared_ptr<const TensorIntrinsicNode>& in,
               const std::string& where, Stmt body = Stmt()) {
    if (in.get() != st_.tensorize_intrinsic.node().get()) ++init_replaced;
    tensorize::Binding b = tensorize::match(nest, *in, known_, where);
    std::vector<Var> vars;
    if (!body.defined()) body = tensorize::instantiate(*in, b.buffers, b.offsets, b.strides, &vars);
    const bool main = in.get() == st_.tensorize_intrinsic.node().get();  // not the init's
    return tensor_intrinsic_call(in, b.buffers, b.offsets, b.strides, body,
                                 main ? st_.warp_specialization : std::nullopt);
  }

  static bool reduces(const IterVar& iv) { return iv->type == IterVarType::Reduce; }

  // A guard the intrinsic may run past: a zero-filled copy's (the source's bounds, past
  // which TMA writes the zeros the call's body writes), or, in a reduction over zero-filled
  // tiles, one on its reduction loops and no data-parallel one (the bound check of the
  // reduction's uneven split: past it the products are 0 x 0; loops the pipeline made of
  // the stage's are not its iter vars).
  // (A copy's guards are directly around its store, where with_zeros_past_guards puts
  // the zeros.)
  bool guard_allowed(const IfThenElseNode& guard) const {
    if (zero_fills_)
      return guard.then_case.as<StoreNode>() != nullptr || guard.then_case.as<IfThenElseNode>() != nullptr;
    if (!reads_zeros_) return false;
    bool reduction = false, data_parallel = false;
    uses_any_var(guard.cond, [&](const VarNode* v) {
      auto it = iter_vars_.find(v);
      if (it != iter_vars_.end()) (reduces(it->second) ? reduction : data_parallel) = true;
      return false;
    });
    return reduction && !data_parallel;
  }

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
  bool zero_fills_ = false;         // zero_filled_stages() holds the stage
  bool reads_zeros_ = false;        // sums_zeros_past_its_axis() holds for it
};

}  // namespace

Stmt tensorize_stages(const Stmt& body, const LowerContext& ctx) {
  Stmt out = body;
  const std::set<const OperationNode*> zero_filled = zero_filled_stages(ctx.sched);
  for (const auto& st : ctx.sched.get()->stages) {
    if (!st->tensorize_intrinsic.defined()) continue;
    Tensorize t(*st, ctx.known, zero_filled);
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
