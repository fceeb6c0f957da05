// Pass "build_loop_nests" (TVM's ScheduleOps): each computed stage becomes its loops,
// the guards that keep uneven splits and partial regions inside the tensor, and its
// store. Root iter vars are replaced by their values in the leaf loop variables.
// A reduction with axes bound to threadIdx (a cross-thread reduction) accumulates each
// thread's part in a local accumulator, then leaves a thread_allreduce marker and the
// store of the total by the leader thread (see lower_thread_allreduce).
#include <fmt/format.h>

#include <algorithm>

#include "expr/analysis.h"
#include "expr/reduce_rule.h"
#include "lower/allreduce_marker.h"
#include "lower/int_set.h"
#include "lower/loop_bounds.h"
#include "lower/passes.h"
#include "lower/reduce_update.h"
#include "lower/stage_graph.h"
#include "schedule/graph_queries.h"
#include "schedule/scatter_rules.h"
#include "schedule/stage_lookup.h"

namespace te::lowering {

namespace {

class ReadsToLoads : public IRMutator {
 public:
  explicit ReadsToLoads(const LowerContext& ctx) : ctx_(ctx) {}

 protected:
  Expr mutate_tensor_read(const Expr& e, const TensorReadNode* n) override {
    Expr r = IRMutator::mutate_tensor_read(e, n);
    const OperationNode* op = n->op.get();
    // Reduction bounds keep reading the user's operation where lowering rewrote it.
    if (!ctx_.buffers.count({op, n->value_index}))
      if (auto st = sched::find_stage(*ctx_.sched.get(), op)) op = st->op.get();
    return load(ctx_.buffer_of(op, n->value_index), r.as<TensorReadNode>()->indices);
  }

 private:
  const LowerContext& ctx_;
};

class NestBuilder {
 public:
  NestBuilder(LowerContext& ctx, const StageNode& st)
      : ctx_(ctx), s_(*ctx.sched.get()), st_(st), b_(ctx.bounds), known_(ctx.known) {}

  StageNest build() {
    StageNest nest;
    nest.stage = &st_;
    for (const AttachLevel& lv : attach_path(s_, st_)) add_range_bounds(known_, lv.iv.var(), 0, b_.at(lv.iv).extent);
    std::map<const IterVarNode*, Expr> leaf_val;
    for (const IterVar& leaf : st_.leaf_iter_vars) {
      nest.loops.push_back(make_loop(leaf));
      leaf_val[leaf.get()] = leaf_value(s_, st_, leaf, b_);
      if (leaf.type() == IterVarType::Reduce) reduce_vars_.push_back(leaf.var());
    }
    values_ = pass_up_values(st_, leaf_val, b_, known_);
    // A reduction axis's bounds (hence its loops' extents and its value, which starts at
    // its lower bound) may use the axes before it, named by their root variables; each
    // is rewritten once in the loop variables alone. (An unsplit axis's loop variable is
    // its root variable, so the rewriting must not be applied twice.)
    for (const IterVar& iv : st_.op->axis) roots_.emplace_back(iv.var(), values_.at(iv.get()));
    for (const IterVar& iv : st_.op->reduce_axis) {
      values_[iv.get()] = substitute(values_.at(iv.get()), roots_);
      roots_.emplace_back(iv.var(), values_.at(iv.get()));
    }
    add_bound_checks();
    resolve_loop_bounds(nest);
    make_body(nest);
    return nest;
  }

  // A reduction axis's bounds may use the stage's other axes and read tensors (a
  // data-dependent extent): they become loads of the loop variables, which must be
  // outer loops. An extent read from memory is read only where the guards that the
  // enclosing loops decide hold (an uneven split's tail must not read past `lens`);
  // elsewhere it is 0.
  //
  // An extent computed from data-parallel loops inside it (a causal mask's keys per query,
  // with the queries inside the key loop) runs to its largest value over those loops, and
  // a guard keeps each point to its own extent: the loops run where any point needs them.
  void resolve_loop_bounds(StageNest& nest) {
    for (size_t p = 0; p < nest.loops.size(); ++p) {
      NestLoop& L = nest.loops[p];
      if (L.iv.type() != IterVarType::Reduce) continue;
      const bool reads = !sched::reads_of(L.min).empty() || !sched::reads_of(L.extent).empty();
      L.min = resolve(L.min);
      L.extent = resolve(L.extent);
      std::vector<Var> inner;  // this loop and the loops inside it
      for (size_t q = p; q < nest.loops.size(); ++q) inner.push_back(nest.loops[q].iv.var());
      RelaxMap over;  // the data-parallel loops inside it that its extent uses
      for (size_t q = p; q < nest.loops.size(); ++q) {
        if (!uses_any_of(L.extent, {inner[q - p]}) && !uses_any_of(L.min, {inner[q - p]})) continue;
        const IterVar& used = nest.loops[q].iv;
        const bool relaxable = !reads && q > p && used.type() != IterVarType::Reduce &&
                               !uses_any_of(L.min, {inner[q - p]}) && relax_.count(used.var().get());
        if (relaxable) {
          over[used.var().get()] = relax_.at(used.var().get());
          continue;
        }
        throw Error(
            fmt::format("lower: stage '{}' loops over axis '{}' with extent {}, which depends on axis '{}'; "
                        "reorder '{}' outside '{}'",
                        st_.op->name, L.iv.name(), to_string(L.extent), used.name(), used.name(), L.iv.name()));
      }
      if (!over.empty()) {
        const IntSet ends = eval_set(L.extent, over, known_);
        if (!ends.max.defined() || uses_any(ends.max, over))
          throw Error(
              fmt::format("lower: stage '{}' loops over axis '{}' with extent {}, which depends on loops "
                          "inside it whose largest value te cannot bound; reorder them outside '{}'",
                          st_.op->name, L.iv.name(), to_string(L.extent), L.iv.name()));
        guards_.push_back(likely(L.iv.var() < L.extent));
        L.extent = simplify(max(ends.max, make_zero(ends.max.dtype())), known_);
      }
      if (!reads) continue;
      Expr known_here;
      for (const Expr& g : guards_)
        if (!uses_any_of(g, inner)) known_here = known_here.defined() ? (known_here && g) : g;
      if (known_here.defined()) L.extent = if_then_else(known_here, L.extent, make_zero(L.extent.dtype()));
    }
  }

  // e, written in the stage's root variables, over its loop variables, its tensor reads
  // made loads.
  Expr resolve(const Expr& e) {
    if (!e.defined()) return e;
    return to_loads(substitute(e, roots_));
  }
  Expr to_loads(const Expr& e) {
    ReadsToLoads mutator(ctx_);
    return mutator.mutate(e);
  }

  static bool is_thread_reduce(const NestLoop& L) {
    return L.iv.type() == IterVarType::Reduce && L.kind == ForKind::ThreadBinding && !L.thread_tag.empty();
  }

  // A cross-thread reduction's thread loops go outside its serial reduction loops: a
  // thread loop is the block's threads running at once, so its position among serial
  // loops changes nothing but where each thread's accumulator starts.
  void arrange_cross_thread_loops(StageNest& nest) {
    const std::string& name = st_.op->name;
    const NestLoop* bound = nullptr;
    for (const NestLoop& L : nest.loops)
      if (is_thread_reduce(L) && !bound) bound = &L;
    const std::string what = fmt::format("stage '{}' reduces across threads (axis '{}' is bound to {})", name,
                                         bound->iv.name(), bound->thread_tag);
    const Buffer& buf = ctx_.buffer_of(st_.op.get());
    if (per_thread_scope(buf.scope()))
      throw Error(
          fmt::format("lower: {}, so its result must be in shared or global memory where the threads "
                      "that need it see it, but it is computed inside a thread loop of its consumer "
                      "(local memory): compute it at an outer (block-level) loop",
                      what));
    size_t first = nest.loops.size();
    for (size_t i = 0; i < nest.loops.size(); ++i)
      if (nest.loops[i].iv.type() == IterVarType::Reduce) {
        first = i;
        break;
      }
    std::vector<NestLoop> threads, serial;
    for (size_t i = first; i < nest.loops.size(); ++i) {
      NestLoop& L = nest.loops[i];
      const bool thread = L.kind == ForKind::ThreadBinding && !L.thread_tag.empty();
      if (L.iv.type() != IterVarType::Reduce && !thread)
        throw Error(
            fmt::format("lower: {}, so its data-parallel axis '{}' must be outside its reduction axes "
                        "or bound to a thread: reorder it outward",
                        what, L.iv.name()));
      if (is_thread_reduce(L)) check_reduction_threads(L, what);
      if (thread)
        if (const IterVar* at = first_attached(serial))
          throw Error(
              fmt::format("lower: {}, and a stage is computed at its serial reduction axis '{}' outside "
                          "the thread-bound axis '{}': reorder the thread-bound axis outward",
                          what, at->name(), L.iv.name()));
      (thread ? threads : serial).push_back(L);
    }
    nest.loops.resize(first);
    nest.loops.insert(nest.loops.end(), threads.begin(), threads.end());
    nest.loops.insert(nest.loops.end(), serial.begin(), serial.end());
  }

  void check_reduction_threads(NestLoop& L, const std::string& what) {
    if (!L.has_loop)
      throw Error(
          fmt::format("lower: {}, but an enclosing loop of a consumer already runs {}: compute the "
                      "stage at a loop outside the consumer's {} loop",
                      what, L.thread_tag, L.thread_tag));
    L.extent = simplify(L.extent, known_);
    if (!as_const_int(L.extent))
      throw Error(
          fmt::format("lower: {}, whose extent {} is not a constant: the threads of a block are a fixed "
                      "number; split the axis by a constant factor and bind the inner part",
                      what, to_string(L.extent)));
  }

  bool attached_at(const IterVar& iv) const {
    for (const auto& other : s_.stages)
      if (other->attach_type == AttachType::Scope && other->attach_ivar.same_as(iv)) return true;
    return false;
  }
  // The first of loops at which some stage is computed, if any.
  const IterVar* first_attached(const std::vector<NestLoop>& loops) const {
    for (const NestLoop& L : loops)
      if (attached_at(L.iv)) return &L.iv;
    return nullptr;
  }

  // Each thread folds its part into a local accumulator; the marker combines them; the
  // leader (every reduction thread at 0) stores the total under the data-parallel guards.
  // reduce is the stage's Reduce (after substitution): the marker's rule.
  void make_cross_thread_body(StageNest& nest, const Expr& reduce, const std::vector<Expr>& srcs, const Expr& cond,
                              const std::vector<Expr>& index) {
    arrange_cross_thread_loops(nest);
    const auto* red = reduce.as<ReduceNode>();
    const Expr zero = make_const(Int(32), 0);
    std::vector<Expr> partials, outs;
    for (int i = 0; i < st_.op->num_outputs(); ++i) {
      const Buffer& buf = ctx_.buffer_of(st_.op.get(), i);
      Buffer acc(accumulator_name(buf.name()), buf.dtype(), {make_const(Int(32), 1)}, MemoryScope::Local);
      partials.push_back(load(acc, {zero}));
      outs.push_back(load(buf, index));
    }
    Stmt update = reduce_update(*red, partials, srcs);
    if (cond.defined()) update = if_then_else(cond, update);
    nest.body = guarded(update, true);
    nest.init = store_all(partials, reduce_identity(*red));
    AllreduceMarker m{partials, make_const(Bool(), 1), static_cast<int>(ctx_.allreduce_rules.size()), {}};
    ctx_.allreduce_rules.push_back(reduce);
    Expr leader;
    for (const NestLoop& L : nest.loops)
      if (is_thread_reduce(L)) {
        m.threads.push_back(L.iv.var());
        Expr first = L.iv.var() == make_zero(L.iv.var().dtype());
        leader = leader.defined() ? (leader && first) : first;
      }
    nest.finish = seq({make_allreduce_marker(m), guarded(if_then_else(leader, store_all(outs, partials)), false)});
  }

 private:
  NestLoop make_loop(const IterVar& leaf) {
    const Range& r = b_.at(leaf);
    NestLoop L;
    L.iv = leaf;
    L.min = make_zero(leaf.var().dtype());
    L.extent = r.extent;
    auto it = st_.attrs.find(leaf.get());
    L.kind = it == st_.attrs.end() ? ForKind::Serial : it->second.kind;
    L.thread_tag = thread_tag(st_, leaf);
    if (L.kind == ForKind::ThreadBinding && L.thread_tag.empty()) L.kind = ForKind::Serial;  // vthread
    if (L.kind == ForKind::Vectorized || L.kind == ForKind::Unrolled) check_constant_extent(leaf, L);
    AttachLevel loop = thread_loop(s_, st_, leaf);
    if (loop.stage != &st_) {
      L.has_loop = false;
      share_thread_loop(leaf, r, loop);
    } else {
      add_range_bounds(known_, leaf.var(), 0, r.extent);
      relax_[leaf.var().get()] = Range::from_min_extent(0, r.extent);
    }
    return L;
  }

  // Vector code and unrolled copies need the iteration count when lowering: a symbolic
  // one would leave the loop as it was, the directive dropped.
  void check_constant_extent(const IterVar& leaf, NestLoop& L) {
    L.extent = simplify(L.extent, known_);
    if (as_const_int(L.extent)) return;
    const bool vec = L.kind == ForKind::Vectorized;
    throw Error(fmt::format(
        "lower: stage '{}' {} axis '{}', whose extent {} is not a constant; split it by a "
        "constant factor and {} the inner loop",
        st_.op->name, vec ? "vectorizes" : "unrolls", leaf.name(), to_string(L.extent), vec ? "vectorize" : "unroll"));
  }

  // A leaf bound to a thread that an enclosing loop already runs: the leaf is that loop's
  // variable; threads beyond the leaf's extent skip the stage.
  void share_thread_loop(const IterVar& leaf, const Range& r, const AttachLevel& loop) {
    const Range& outer = b_.at(loop.iv);
    const std::string tag = thread_tag(st_, leaf);
    relax_[loop.iv.var().get()] = Range::from_min_extent(0, r.extent);
    if (can_prove(r.extent == outer.extent, known_)) return;
    if (can_prove(r.extent > outer.extent, known_))
      throw Error(fmt::format(
          "lower: stage '{}' binds axis '{}' ({} iterations) to {}, but it is computed inside "
          "the {} loop of stage '{}', which has only {} threads",
          st_.op->name, leaf.name(), to_string(r.extent), tag, tag, loop.stage->op->name, to_string(outer.extent)));
    guards_.push_back(loop.iv.var() < r.extent);
  }

  void add_guard(const Expr& cond) {
    Expr g = simplify(to_loads(cond), known_);
    if (is_one(g)) return;
    for (const Expr& e : guards_)
      if (equal(e, likely(g))) return;
    guards_.push_back(likely(g));
  }

  // TVM's MakeBoundCheck: uneven splits may run past their parent's range, and a region
  // smaller than the tensor (compute_at) may run past the tensor's edges.
  void add_bound_checks() {
    for (const Relation& rel : st_.relations) {
      const auto* sp = std::get_if<SplitRelation>(&rel);
      if (!sp) continue;
      const Range& pr = b_.at(sp->parent);
      Expr v = values_.at(sp->parent.get());
      Expr end = pr.min + pr.extent;
      // A reduction's ranges are in root variables (its values already are not).
      if (sp->parent.type() == IterVarType::Reduce) end = resolve(end);
      IntSet set = eval_set(v, relax_, known_);
      end = simplify(end, known_);
      if (!set.max.defined() || !can_prove(set.max < end, known_)) add_guard(v < end);
    }
    // A reduction runs over all of its axes' bounds: only data-parallel regions shrink.
    for (const IterVar& iv : st_.op->axis) {
      const Range& r = b_.at(iv);
      Range dom = Range::from_min_extent(simplify(iv.dom().min, known_), simplify(iv.dom().extent, known_));
      if (equal(r.min, dom.min) && equal(r.extent, dom.extent)) continue;
      Expr v = values_.at(iv.get());
      IntSet set = eval_set(v, relax_, known_);
      Expr end = simplify(dom.min + dom.extent, known_);
      if (!set.min.defined() || !can_prove(set.min >= dom.min, known_)) add_guard(v >= dom.min);
      if (!set.max.defined() || !can_prove(set.max < end, known_)) add_guard(v < end);
    }
  }

  Stmt guarded(Stmt s, bool include_reduce_guards) {
    for (auto it = guards_.rbegin(); it != guards_.rend(); ++it)
      if (include_reduce_guards || !uses_any_of(*it, reduce_vars_)) s = if_then_else(*it, s);
    return s;
  }

  void make_body(StageNest& nest) {
    std::vector<Expr> index;
    if (st_.op->is_scatter()) {
      for (const Expr& e : st_.op->scatter_index) index.push_back(resolve(e));
    } else {
      for (const IterVar& iv : st_.op->axis) index.push_back(values_.at(iv.get()));
    }
    // One element of each output (several for a compute_tuple).
    std::vector<Expr> outs;
    for (int i = 0; i < st_.op->num_outputs(); ++i) outs.push_back(load(ctx_.buffer_of(st_.op.get(), i), index));
    ReadsToLoads to_loads(ctx_);
    Expr body = substitute(st_.op->body, roots_);
    if (const auto* red = body.as<ReduceNode>()) {
      std::vector<Expr> srcs;
      for (const Expr& s : red->sources) srcs.push_back(to_loads.mutate(s));
      if (st_.op->scatter_accumulate) {  // each term adds at its own position: no accumulator
        Stmt add = scatter_add(nest, outs[0], srcs[0]);
        if (red->condition.defined()) add = if_then_else(to_loads.mutate(red->condition), add);
        nest.body = guarded(add, true);
        return;
      }
      bool cross_thread = false;
      for (const NestLoop& L : nest.loops) cross_thread = cross_thread || is_thread_reduce(L);
      if (st_.op->is_row_reduction()) {
        if (cross_thread)
          throw Error(
              fmt::format("lower: stage '{}' is a row reduction (compute_rows), which te does not reduce "
                          "across threads: keep its reduction axes serial in each thread",
                          st_.op->name));
        make_row_body(nest, *red, srcs, red->condition.defined() ? to_loads.mutate(red->condition) : Expr(), index);
        return;
      }
      if (cross_thread) {
        Expr cond = red->condition.defined() ? to_loads.mutate(red->condition) : Expr();
        make_cross_thread_body(nest, body, srcs, cond, index);
        return;
      }
      Stmt update = reduce_update(*red, outs, srcs);
      if (red->condition.defined()) update = if_then_else(to_loads.mutate(red->condition), update);
      nest.body = guarded(update, true);
      nest.init = guarded(store_all(outs, reduce_identity(*red)), false);
    } else {
      std::vector<Expr> values;
      for (const Expr& b : st_.op->bodies()) values.push_back(to_loads.mutate(substitute(b, roots_)));
      nest.body =
          guarded(st_.op->scatter_accumulate ? scatter_add(nest, outs[0], values[0]) : store_all(outs, values), true);
    }
  }

  // A row reduction (compute_rows): its element loops must be innermost (each step of the
  // reduction updates a row once, then its elements); returns where they start.
  size_t element_loops_start(const StageNest& nest) const {
    const OperationNode& op = *st_.op;
    auto is_element = [&](const IterVar& root) {
      for (size_t d = op.row_shape.size(); d < op.axis.size(); ++d)
        if (op.axis[d].same_as(root)) return true;
      return false;
    };
    size_t start = nest.loops.size();
    for (size_t p = 0; p < nest.loops.size(); ++p) {
      const IterVar& leaf = nest.loops[p].iv;
      bool element = false, other = false;
      for (const IterVar& root : root_axes_of(st_, leaf)) (is_element(root) ? element : other) = true;
      if (element && other)
        throw Error(
            fmt::format("lower: stage '{}' is a row reduction (compute_rows), and loop '{}' fuses an element "
                        "axis with a row or reduction axis: fuse element axes only with each other",
                        op.name, leaf.name()));
      if (element && start == nest.loops.size()) start = p;
      if (!element && start < p)
        throw Error(
            fmt::format("lower: stage '{}' is a row reduction (compute_rows): its element loops must be "
                        "inside its row and reduction loops, but loop '{}' is inside element loop '{}'; "
                        "reorder '{}' inward",
                        op.name, leaf.name(), nest.loops[start].iv.name(), nest.loops[start].iv.name()));
    }
    return start;
  }

  // A row reduction's nest: per reduction step, the row values' lets and stores (once per
  // row) around the element loops, whose body updates each element with the step's factors.
  void make_row_body(StageNest& nest, const ReduceNode& red, const std::vector<Expr>& srcs, const Expr& cond,
                     const std::vector<Expr>& index) {
    const OperationNode& op = *st_.op;
    const CommReducerNode& rule = *red.combiner;
    const size_t rows = static_cast<size_t>(op.row_outputs);
    nest.row_level = element_loops_start(nest);
    std::vector<Var> element_vars;
    for (size_t p = nest.row_level; p < nest.loops.size(); ++p) element_vars.push_back(nest.loops[p].iv.var());

    const std::vector<Expr> row_index(index.begin(), index.begin() + static_cast<std::ptrdiff_t>(op.row_shape.size()));
    std::vector<Expr> row_outs, element_outs;
    for (int i = 0; i < op.num_outputs(); ++i) {
      const bool row = static_cast<size_t>(i) < rows;
      (row ? row_outs : element_outs).push_back(load(ctx_.buffer_of(&op, i), row ? row_index : index));
    }
    // The row values' old and new values, then the step's factors, bound once per step.
    // (A constant new value, such as a count's 1, is used as it is, for the simplifier.)
    std::vector<std::pair<Var, Expr>> args;
    for (size_t i = 0; i < rows; ++i) {
      const std::string& name = row_outs[i].as<LoadNode>()->buffer.name();
      Var old_v(name + ".old", row_outs[i].dtype());
      nest.row_lets.emplace_back(old_v, row_outs[i]);
      args.emplace_back(rule.lhs[i], old_v);
      if (srcs[i].as<IntImmNode>() || srcs[i].as<FloatImmNode>()) {
        args.emplace_back(rule.rhs[i], srcs[i]);
        continue;
      }
      Var new_v(name + ".new", srcs[i].dtype());
      nest.row_lets.emplace_back(new_v, srcs[i]);
      args.emplace_back(rule.rhs[i], new_v);
    }
    for (size_t f = 0; f < rule.factors.size(); ++f) {
      Var v(rule.factors[f]->name, rule.factors[f].dtype());
      nest.row_lets.emplace_back(v, simplify(substitute(rule.factor_values[f], args)));
      args.emplace_back(rule.factors[f], v);
    }
    std::vector<Expr> row_values;
    for (size_t i = 0; i < rows; ++i) row_values.push_back(simplify(substitute(rule.result[i], args)));
    nest.row_stores = store_all(row_outs, row_values);
    std::vector<std::pair<Var, Expr>> factors(args.end() - static_cast<std::ptrdiff_t>(rule.factors.size()),
                                              args.end());

    // Each element: its old and new values bound, then the element rule with the factors.
    std::vector<std::pair<Var, Expr>> element_lets;
    for (size_t j = 0; j < element_outs.size(); ++j) {
      const size_t i = rows + j;
      const std::string& name = element_outs[j].as<LoadNode>()->buffer.name();
      Var old_v(name + ".old", element_outs[j].dtype()), new_v(name + ".new", srcs[i].dtype());
      element_lets.emplace_back(old_v, element_outs[j]);
      element_lets.emplace_back(new_v, srcs[i]);
      factors.emplace_back(rule.lhs[i], old_v);
      factors.emplace_back(rule.rhs[i], new_v);
    }
    std::vector<Expr> element_values;
    for (size_t j = 0; j < element_outs.size(); ++j)
      element_values.push_back(substitute(rule.result[rows + j], factors));
    Stmt update = store_all(element_outs, element_values);
    for (auto it = element_lets.rbegin(); it != element_lets.rend(); ++it)
      update = let_stmt(it->first, it->second, update);

    // Guards on the element loops stay with the elements; the others guard the whole step.
    auto guard_of = [&](bool reduce, bool element) {
      Expr g;
      for (const Expr& e : guards_) {
        if (!reduce && uses_any_of(e, reduce_vars_)) continue;
        if (uses_any_of(e, element_vars) != element) continue;
        g = g.defined() ? (g && e) : e;
      }
      return g;
    };
    auto under = [](const Expr& g, Stmt s) { return g.defined() ? if_then_else(g, std::move(s)) : s; };
    nest.body = under(guard_of(true, true), update);
    nest.row_guard = guard_of(true, false);
    if (cond.defined()) nest.row_guard = nest.row_guard.defined() ? (nest.row_guard && cond) : cond;
    const std::vector<Expr> identity = reduce_identity(red);
    nest.row_init = under(
        guard_of(false, false),
        store_all(row_outs, std::vector<Expr>(identity.begin(), identity.begin() + static_cast<std::ptrdiff_t>(rows))));
    nest.init = guarded(store_all(element_outs, std::vector<Expr>(identity.begin() + static_cast<std::ptrdiff_t>(rows),
                                                                  identity.end())),
                        false);
  }

  // A scatter-add's out[index] += value: atomic where iterations that may meet on one
  // element run at once (a parallel, vectorized or thread loop over other than an axis
  // that is itself an index of the output).
  Stmt scatter_add(const StageNest& nest, const Expr& out, const Expr& value) {
    const auto* element = out.as<LoadNode>();
    TE_ICHECK(element, "scatter_add: the output element is not a Load");
    const NestLoop* racing = nullptr;
    for (const NestLoop& L : nest.loops) {
      const bool concurrent =
          L.kind == ForKind::Parallel || L.kind == ForKind::Vectorized || L.kind == ForKind::ThreadBinding;
      if (concurrent && !writes_own_elements(L.iv)) {
        racing = &L;
        break;
      }
    }
    if (racing == nullptr) return store(element->buffer, out + value, element->indices);
    const std::string how = racing->kind == ForKind::Parallel     ? std::string("in parallel")
                            : racing->kind == ForKind::Vectorized ? std::string("vectorized")
                                                                  : fmt::format("on {}", racing->thread_tag);
    if (st_.op->scatter_deterministic)
      throw Error(fmt::format(
          "lower: scatter-add '{}' is deterministic, but runs loop '{}' {}, whose iterations may add to one element "
          "in an order that varies between runs: run it serially, or run in parallel a loop over an axis that "
          "indexes the output directly",
          st_.op->name, racing->iv.name(), how));
    const DataType t = element->buffer.dtype();
    if (!((t.is_float() && !t.is_bfloat() && t.bits() >= 32) || (t.is_int() && t.bits() >= 32)))
      throw Error(fmt::format(
          "lower: scatter-add '{}' runs loop '{}' {}, whose iterations may add to one element, so the adds must "
          "be atomic: te adds float32, float64, int32 and int64 atomically, not {} (scatter-add in float32 and "
          "cast, or run that loop serially)",
          st_.op->name, racing->iv.name(), how, t.to_string()));
    return atomic_add(element->buffer, value, element->indices);
  }

  // Whether distinct iterations of leaf write distinct elements: every root axis it is
  // made of is, bare, an index of the scatter.
  bool writes_own_elements(const IterVar& leaf) const {
    for (const IterVar& root : root_axes_of(st_, leaf))
      if (!sched::indexes_output_directly(*st_.op, root)) return false;
    return true;
  }

  LowerContext& ctx_;
  const ScheduleNode& s_;
  const StageNode& st_;
  const BoundMap& b_;
  VarBounds known_;
  RelaxMap relax_;  // the stage's own loops over their ranges
  std::vector<Var> reduce_vars_;
  std::map<const IterVarNode*, Expr> values_;
  std::vector<std::pair<Var, Expr>> roots_;  // each root axis's value in the loop variables
  std::vector<Expr> guards_;
};

}  // namespace

std::vector<StageNest> build_loop_nests(LowerContext& ctx) {
  std::vector<StageNest> nests;
  for (const auto& st : ctx.sched.get()->stages)
    if (st->op->kind == OpKind::Compute && st->attach_type != AttachType::Inline)
      nests.push_back(NestBuilder(ctx, *st).build());
  return nests;
}

}  // namespace te::lowering
