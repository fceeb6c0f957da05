// Pass "vectorize": a vectorized loop of constant extent L becomes vector statements: its
// variable becomes ramp(min, 1, L), expressions that use it become L-lane expressions
// (scalars broadcast), loads and stores take vector indices; an L over 8 that is not a
// power of two gives one statement per power-of-two piece (56: 32 + 16 + 8). A body guarded by
// likely(cond), cond monotonic in the variable, becomes
//   if (likely(cond at the last lane)) { vector body } else { scalar loop }
// (the scalar tail of a non-divisible split). A condition on the variable around the
// update of a local accumulator becomes a blend (blend_private_store). Bodies it cannot
// vectorize (other conditions on the variable, loops or allocations that depend on it)
// stay loops marked
// Vectorized, with a warning: LLVM's loop vectorizer gets them; so do hand-built loops of
// symbolic extent (lower() refuses those earlier, in build_loop_nests). A constant extent
// over 64 lanes is a te::Error.
#include <fmt/format.h>

#include <set>

#include "expr/analysis.h"
#include "lower/int_set.h"
#include "lower/vector_pieces.h"
#include "te/error.h"
#include "te/log.h"
#include "te/lower.h"
#include "te/simplify.h"

namespace te {

namespace {

struct CannotVectorize {
  const char* why;
};

// Whether substituting value into body could read memory that body changed first: body
// stores to a buffer value loads, other than as its one and last statement.
bool store_may_change(const Expr& value, Stmt body) {
  while (const auto* l = body.as<LetStmtNode>()) body = l->body;
  if (body.as<StoreNode>()) return false;
  const BufferUse stored = buffer_use(body);
  for (const BufferNode* buf : buffer_use(value).loaded)
    if (stored.stores(buf)) return true;
  return false;
}

// Wider vectors are no faster on any CPU or GPU te targets, and LLVM's compile time
// grows with the lane count (100000 lanes would not fit te's 16-bit lane count anyway).
constexpr int64_t kMaxVectorLanes = 64;

class LaneWidener : public IRMutator {
 public:
  LaneWidener(const Var& v, const Expr& min, int lanes) : v_(v), lanes_(lanes) {
    vec_ = ramp(min, make_const(min.dtype(), 1), lanes);
    relax_[v.get()] = Range(min, simplify(min + make_const(min.dtype(), lanes)));
  }

  Expr widen(const Expr& e) {
    if (!e.defined() || !lowering::uses_any(e, relax_)) return e;
    return mutate(e);
  }

 protected:
  Expr to_lanes(const Expr& e) { return e.dtype().is_scalar() ? broadcast(e, lanes_) : e; }

  Expr mutate_var(const Expr& e, const VarNode* n) override { return n == v_.get() ? vec_ : e; }
  Expr mutate_binary(const Expr& e, const BinaryNode* n) override {
    if (!lowering::uses_any(e, relax_)) return e;
    Expr a = widen(n->a), b = widen(n->b);
    const auto* ra = a.as<RampNode>();
    const auto* rb = b.as<RampNode>();
    // Keep ramps ramps where the arithmetic allows it.
    if (n->op == BinOp::Add || n->op == BinOp::Sub) {
      if (ra && b.dtype().is_scalar()) return ramp(make_binary(n->op, ra->base, b), ra->stride, lanes_);
      if (rb && a.dtype().is_scalar() && n->op == BinOp::Add) return ramp(a + rb->base, rb->stride, lanes_);
      if (ra && rb)
        return ramp(make_binary(n->op, ra->base, rb->base), make_binary(n->op, ra->stride, rb->stride), lanes_);
    }
    if (n->op == BinOp::Mul) {
      if (ra && as_const_int(b)) return ramp(ra->base * b, ra->stride * b, lanes_);
      if (rb && as_const_int(a)) return ramp(a * rb->base, a * rb->stride, lanes_);
    }
    return make_binary(n->op, to_lanes(a), to_lanes(b));
  }
  Expr mutate_cast(const Expr& e, const CastNode* n) override {
    if (!lowering::uses_any(e, relax_)) return e;
    return cast(n->dtype.with_lanes(lanes_), to_lanes(widen(n->value)));
  }
  Expr mutate_not(const Expr& e, const NotNode* n) override {
    if (!lowering::uses_any(e, relax_)) return e;
    return !to_lanes(widen(n->a));
  }
  Expr mutate_select(const Expr& e, const SelectNode* n) override {
    if (!lowering::uses_any(e, relax_)) return e;
    return select(widen(n->cond), to_lanes(widen(n->true_value)), to_lanes(widen(n->false_value)));
  }
  Expr mutate_call(const Expr& e, const CallNode* n) override {
    if (!lowering::uses_any(e, relax_)) return e;
    std::vector<Expr> args;
    for (const Expr& a : n->args) args.push_back(to_lanes(widen(a)));
    // An extern call (a scalar C function) becomes one call per lane in the backends.
    return Expr(std::make_shared<CallNode>(n->dtype.with_lanes(lanes_), n->op, std::move(args), n->extern_name));
  }
  Expr mutate_load(const Expr& e, const LoadNode* n) override {
    if (!lowering::uses_any(e, relax_)) return e;
    std::vector<Expr> idx;
    for (const Expr& i : n->indices) idx.push_back(to_lanes(widen(i)));
    Expr pred = n->predicate.defined() ? to_lanes(widen(n->predicate)) : Expr();
    return load(n->buffer, idx, pred);
  }
  Expr mutate_let(const Expr& e, const LetNode* n) override {
    if (!lowering::uses_any(e, relax_)) return e;
    return widen(substitute(n->body, {{n->var, n->value}}));
  }
  Expr mutate_ramp(const Expr&, const RampNode*) override { throw CannotVectorize{"it holds vector code already"}; }
  Expr mutate_broadcast(const Expr&, const BroadcastNode*) override {
    throw CannotVectorize{"it holds vector code already"};
  }

  Stmt mutate_store(const Stmt& s, const StoreNode* n) override {
    std::vector<Expr> idx;
    bool vector_index = false;
    for (const Expr& i : n->indices) {
      idx.push_back(widen(i));
      vector_index = vector_index || idx.back().dtype().is_vector();
    }
    Expr value = widen(n->value);
    Expr pred = widen(n->predicate);
    if (!vector_index) {
      // Every lane would store to the same place: only a lane-independent store is fine.
      if (value.dtype().is_vector() || (pred.defined() && pred.dtype().is_vector()))
        throw CannotVectorize{"every lane would store to the same element"};
      return s;
    }
    for (Expr& i : idx) i = to_lanes(i);
    return store_like(*n, n->buffer, to_lanes(value), idx, pred.defined() ? to_lanes(pred) : Expr());
  }
  Stmt mutate_if_then_else(const Stmt& s, const IfThenElseNode* n) override {
    if (!lowering::uses_any(n->cond, relax_)) return IRMutator::mutate_if_then_else(s, n);
    if (Stmt blended = blend_private_store(n); blended.defined()) return mutate(blended);
    throw CannotVectorize{"a condition depends on the lane"};
  }

  // `if (cond) { lets; acc[i] = value }` on a thread-private (local) buffer, the update
  // of a conditional reduction (a convolution's input gradient: the taps a window
  // reaches), becomes `acc[i] = if_then_else(cond, value, acc[i])`: every lane stores,
  // the lanes where cond fails their old value, and the value's loads run only on the
  // lanes where it holds (masked loads), so the accumulators stay in registers. Only for
  // a local buffer (no other thread sees the lanes written back) and an index every lane
  // keeps inside it. Undefined when the body is not such a store.
  // The conjuncts of the condition that do not depend on the lane stay an `if` around it.
 public:
  Stmt blend_private_store(const IfThenElseNode* n) {
    if (n->else_case.defined()) return Stmt();
    Stmt body = n->then_case;
    std::vector<std::pair<Var, Expr>> lets;
    while (const auto* l = body.as<LetStmtNode>()) {
      lets.emplace_back(l->var, l->value);
      body = l->body;
    }
    const auto* st = body.as<StoreNode>();
    if (st == nullptr || st->atomic_add || st->buffer->scope != MemoryScope::Local || st->indices.size() != 1)
      return Stmt();
    const Expr index = substitute(st->indices[0], lets);
    if (!within_buffer(index, st->buffer)) return Stmt();
    Expr value = st->value;
    for (auto it = lets.rbegin(); it != lets.rend(); ++it) value = substitute(value, {*it});
    Expr uniform, per_lane;
    for (const Expr& c : conjuncts(n->cond)) {
      Expr& part = lowering::uses_any(c, relax_) ? per_lane : uniform;
      part = part.defined() ? (part && c) : c;
    }
    const Expr old = load(st->buffer, {index}, st->predicate);
    Stmt blended = store_like(*st, st->buffer, if_then_else(per_lane, value, old), {index}, st->predicate);
    return uniform.defined() ? if_then_else(uniform, blended) : blended;
  }

 private:
  // Whether index stays inside buf (flat, of constant size) at every lane.
  bool within_buffer(const Expr& index, const Buffer& buf) const {
    if (buf->shape.size() != 1) return false;
    const int64_t* size = as_const_int(buf->shape[0]);
    const lowering::IntSet range = lowering::eval_set(index, relax_, {});
    // The simplified bounds kept alive: as_const_int points into them.
    const Expr lo_e = range.min.defined() ? simplify(range.min) : Expr();
    const Expr hi_e = range.max.defined() ? simplify(range.max) : Expr();
    const int64_t* lo = lo_e.defined() ? as_const_int(lo_e) : nullptr;
    const int64_t* hi = hi_e.defined() ? as_const_int(hi_e) : nullptr;
    return size && lo && hi && *lo >= 0 && *hi < *size;
  }
  Stmt mutate_for(const Stmt& s, const ForNode* n) override {
    if (lowering::uses_any(n->min, relax_) || lowering::uses_any(n->extent, relax_))
      throw CannotVectorize{"an inner loop's bounds depend on the lane"};
    return IRMutator::mutate_for(s, n);
  }
  // Lets are substituted into their uses (te's variables are scalars). That is wrong when
  // a store between the binding and a use may change what the value loads (a tuple
  // reduction's update: the first value's store, then the second value's combination of
  // the old first value): such a body stays a loop.
  Stmt mutate_let_stmt(const Stmt&, const LetStmtNode* n) override {
    if (lowering::uses_any(n->value, relax_) && store_may_change(n->value, n->body))
      throw CannotVectorize{"a let's value is read after a store that may change it"};
    return mutate(substitute(n->body, {{n->var, n->value}}));
  }
  Stmt mutate_allocate(const Stmt&, const AllocateNode*) override { throw CannotVectorize{"it allocates memory"}; }
  Stmt mutate_assert(const Stmt&, const AssertNode*) override { throw CannotVectorize{"it asserts"}; }
  Stmt mutate_barrier(const Stmt&, const BarrierNode*) override { throw CannotVectorize{"it has a barrier"}; }

 private:
  const Var& v_;
  int lanes_;
  Expr vec_;
  lowering::RelaxMap relax_;
};

// cond, monotonic in v over the loop, holds at every lane iff it holds at the lane
// returned (the last for increasing comparisons, the first for decreasing); undefined
// when that cannot be shown.
Expr all_lanes_condition(const Expr& cond, const ForNode* f, int lanes) {
  const auto* b = cond.as<BinaryNode>();
  if (!b || !is_comparison(b->op) || b->op == BinOp::EQ || b->op == BinOp::NE) return Expr();
  if (!b->a.dtype().is_integer() || !b->a.dtype().is_scalar()) return Expr();
  const std::optional<LinearIn> d = linear_in(simplify(b->a - b->b), f->var);
  if (!d) return Expr();
  DataType t = f->var.dtype();
  // a - b grows with v when coef > 0: "<"/"<=" are hardest at the last lane.
  bool last = (d->coef > 0) == (b->op == BinOp::LT || b->op == BinOp::LE);
  Expr at = last ? simplify(f->min + make_const(t, lanes - 1)) : f->min;
  return simplify(substitute(cond, {{f->var, at}}));
}

// A body te cannot turn into vector code stays a loop that keeps its Vectorized kind:
// the LLVM backend marks it for LLVM's loop vectorizer, CUDA prints `#pragma unroll`.
Stmt left_to_backend(const ForNode* f, const char* why) {
  TE_LOG(Warn, fmt::format("vectorize: te cannot make vector code of loop '{}' ({}); it stays a loop marked for "
                           "LLVM's loop vectorizer (unrolled in CUDA)",
                           f->var.name(), why));
  return for_loop(f->var, f->min, f->extent, ForKind::Vectorized, f->body);
}

Stmt vectorize_loop(const ForNode* f) {
  Stmt serial = for_loop(f->var, f->min, f->extent, ForKind::Serial, f->body);
  const int64_t* ext = as_const_int(f->extent);
  if (!ext) return left_to_backend(f, "its extent is not a constant");
  if (*ext < 1) return serial;
  if (*ext == 1) return simplify(substitute(f->body, {{f->var, f->min}}));
  if (*ext > kMaxVectorLanes)
    throw Error(
        fmt::format("vectorize: loop '{}' has {} iterations; te vectorizes at most {} lanes: split the "
                    "axis (e.g. by 8 or 16) and vectorize the inner part",
                    f->var.name(), *ext, kMaxVectorLanes));
  if (const std::vector<int64_t> parts = power_of_two_parts(*ext); parts.size() > 1) {
    // Pieces of 32 + 16 + 8 lanes for 56, each its own vector statement.
    std::vector<Stmt> pieces;
    int64_t offset = 0;
    for (int64_t part : parts) {
      Var v(f->var.name(), f->var.dtype());
      Stmt body = substitute(f->body, {{f->var, v}});
      Stmt piece = for_loop(v, simplify(f->min + make_const(f->min.dtype(), offset)),
                            make_const(f->extent.dtype(), part), ForKind::Vectorized, body);
      pieces.push_back(vectorize_loop(piece.as<ForNode>()));
      offset += part;
    }
    return seq(pieces);
  }
  int lanes = static_cast<int>(*ext);
  LaneWidener widen(f->var, f->min, lanes);
  try {
    const auto* guard = f->body.as<IfThenElseNode>();
    lowering::RelaxMap vm{{f->var.get(), Range()}};
    if (guard && !guard->else_case.defined() && lowering::uses_any(guard->cond, vm)) {
      const auto* call = guard->cond.as<CallNode>();
      bool is_likely = call && call->op == Intrinsic::Likely;
      Expr all = all_lanes_condition(is_likely ? call->args[0] : guard->cond, f, lanes);
      // The guard of a private store blends, which vectorizes every lane (a scalar branch
      // would index the private buffer by lane and keep it out of registers); any other
      // likely guard (a split's tail) keeps its vector and scalar branches.
      if (Stmt blended = widen.blend_private_store(guard); blended.defined()) return simplify(widen.mutate(blended));
      if (!all.defined()) return left_to_backend(f, "its guard is not monotonic in the lane");
      // (Where the last lane is known, one branch is left: a tile past the extent.)
      const Expr last_lane = simplify(all);  // kept alive: as_const_int points into it
      if (const int64_t* known = as_const_int(last_lane))
        return *known ? simplify(widen.mutate(guard->then_case)) : serial;
      Stmt vec = widen.mutate(guard->then_case);
      return if_then_else(is_likely ? likely(all) : all, simplify(vec), serial);
    }
    return simplify(widen.mutate(f->body));
  } catch (const CannotVectorize& e) {
    return left_to_backend(f, e.why);
  }
}

class Vectorizer : public IRMutator {
 protected:
  Stmt mutate_for(const Stmt& s, const ForNode* n) override {
    Stmt r = IRMutator::mutate_for(s, n);
    if (n->for_kind != ForKind::Vectorized) return r;
    return vectorize_loop(r.as<ForNode>());
  }
};

}  // namespace

// The power-of-two sizes (largest first) of the vector pieces of a loop of `lanes` lanes:
// one piece when lanes is a power of two or small. LLVM's x86 backend legalizes a vector
// of another width (56) by widening it, which turns a register tile of such vectors into
// scalar inserts and spills (a 3x3 convolution over 56-wide rows ran 4x slower than as
// pieces of 32, 16 and 8).
std::vector<int64_t> power_of_two_parts(int64_t lanes) {
  if (lanes <= 8 || (lanes & (lanes - 1)) == 0) return {lanes};
  std::vector<int64_t> parts;
  for (int64_t bit = kMaxVectorLanes; bit > 0; bit >>= 1)
    if (lanes & bit) parts.push_back(bit);
  return parts;
}

Stmt vectorize_loops(const Stmt& s) {
  Vectorizer v;
  return v.mutate(s);
}

}  // namespace te
