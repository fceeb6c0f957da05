// Expression evaluation: scalars by plain recursion, vectors lane-wise under a mask.
#include <fmt/format.h>

#include "interpret/interpreter.h"
#include "interpret/lane_ops.h"
#include "interpret/memory.h"

namespace te::interp {
namespace {

Scalar zero_lane(DataType t) { return t.is_float() ? float_scalar(0.0) : int_scalar(0); }

bool active(const LaneVec* mask, int k) { return !mask || (*mask)[k].i != 0; }

constexpr size_t kMaxDims = 8;

[[noreturn]] void too_many_indices(const BufferStorage& st, size_t count) {
  throw Error(
      fmt::format("an access to buffer '{}' has {} indices (at most {} supported)", st.buffer->name, count, kMaxDims));
}

}  // namespace

// The hot node kinds stay in this small function; the rest are in eval_rare.
Scalar Interpreter::eval(const CExpr* e, Frame& f) {
  switch (e->op) {
    case EOp::Const: return e->imm;
    case EOp::Var: return f.vars[static_cast<size_t>(e->slot)];
    case EOp::Binary: {
      Scalar a = eval(e->a, f);
      Scalar b = eval(e->b, f);
      return binary_lane(e->bin, e->arg_type, a, b);
    }
    case EOp::Load: return eval_load(e, f);
    case EOp::Cast: return cast_lane(e->arg_type, e->type, eval(e->a, f));
    default: return eval_rare(e, f);
  }
}

Scalar Interpreter::eval_rare(const CExpr* e, Frame& f) {
  switch (e->op) {
    case EOp::Not: return int_scalar(eval(e->a, f).i == 0);
    case EOp::Select: {
      Scalar c = eval(e->a, f);
      Scalar t = eval(e->b, f);
      Scalar u = eval(e->c, f);
      return c.i ? t : u;
    }
    case EOp::Ramp:  // one lane: the base
    case EOp::Broadcast: return eval(e->a, f);
    case EOp::IfThenElse: return eval(eval(e->a, f).i ? e->b : e->c, f);
    case EOp::Call:
      switch (e->fn) {
        case Intrinsic::Fma: {
          Scalar a = eval(e->a, f);
          Scalar b = eval(e->b, f);
          return fma_lane(e->arg_type, a, b, eval(e->c, f));
        }
        case Intrinsic::WarpShuffleDown:  // exchanged before the statement ran
          return f.shuffled[static_cast<size_t>(e->slot)];
        default: {
          Scalar x = eval(e->a, f);
          if (!e->b) return unary_intrinsic_lane(e->fn, e->arg_type, x);
          return binary_intrinsic_lane(e->fn, e->arg_type, x, eval(e->b, f));
        }
      }
    case EOp::Let: f.vars[static_cast<size_t>(e->slot)] = eval(e->a, f); return eval(e->b, f);
    case EOp::Extern: return eval_extern(e, f);
    default: break;
  }
  TE_ICHECK(false, "eval: unknown node");
  return int_scalar(0);
}

Scalar Interpreter::eval_load(const CExpr* e, Frame& f) {
  if (e->predicate && eval(e->predicate, f).i == 0) return zero_lane(e->type);
  const BufferStorage& st = *f.buffers[static_cast<size_t>(e->slot)];
  const size_t count = e->indices.size();
  if (count == 1) return read_element(st, checked_offset(st, eval(e->indices[0], f).i, false));
  if (count > kMaxDims) too_many_indices(st, count);
  int64_t idx[kMaxDims];
  for (size_t k = 0; k < count; ++k) idx[k] = eval(e->indices[k], f).i;
  return read_element(st, checked_offset(st, idx, count, false));
}

void Interpreter::eval_lanes(const CExpr* e, Frame& f, const LaneVec* mask, int lanes, LaneVec& out) {
  if (e->type.lanes() == 1) {
    Scalar s = eval(e, f);
    out.resize(lanes);
    for (int k = 0; k < lanes; ++k) out[k] = s;
    return;
  }
  TE_ICHECK(e->type.lanes() == lanes, "lane counts were checked by compile()");
  eval_vector(e, f, mask, out);
}

void Interpreter::eval_vector(const CExpr* e, Frame& f, const LaneVec* mask, LaneVec& out) {
  const int n = e->type.lanes();
  const DataType elem = e->type.element_of();
  switch (e->op) {
    case EOp::Const:
      out.resize(n);
      for (int k = 0; k < n; ++k) out[k] = e->imm;
      return;
    case EOp::Var: break;  // variables are scalars
    case EOp::Cast:
      eval_lanes(e->a, f, mask, n, out);
      for (int k = 0; k < n; ++k) out[k] = cast_lane(e->arg_type, elem, out[k]);
      return;
    case EOp::Binary: {
      LaneVec rhs;
      eval_lanes(e->a, f, mask, n, out);
      eval_lanes(e->b, f, mask, n, rhs);
      for (int k = 0; k < n; ++k) out[k] = binary_lane(e->bin, e->arg_type, out[k], rhs[k]);
      return;
    }
    case EOp::Not:
      eval_lanes(e->a, f, mask, n, out);
      for (int k = 0; k < n; ++k) out[k] = int_scalar(out[k].i == 0);
      return;
    case EOp::Select: {
      LaneVec t, u;
      eval_lanes(e->a, f, mask, n, out);
      eval_lanes(e->b, f, mask, n, t);
      eval_lanes(e->c, f, mask, n, u);
      for (int k = 0; k < n; ++k) out[k] = out[k].i ? t[k] : u[k];
      return;
    }
    case EOp::Load: eval_vector_load(e, f, mask, out); return;
    case EOp::Ramp: {
      Scalar base = eval(e->a, f);
      Scalar stride = eval(e->b, f);
      out.resize(n);
      for (int k = 0; k < n; ++k) {
        Scalar step = binary_lane(BinOp::Mul, elem, cast_lane(Int(64), elem, int_scalar(k)), stride);
        out[k] = binary_lane(BinOp::Add, elem, base, step);
      }
      return;
    }
    case EOp::Broadcast: {
      Scalar value = eval(e->a, f);
      out.resize(n);
      for (int k = 0; k < n; ++k) out[k] = value;
      return;
    }
    case EOp::IfThenElse: {
      // Each side is evaluated only for the lanes that take it.
      LaneVec cond, take_true(n), take_false(n), t, u;
      eval_lanes(e->a, f, mask, n, cond);
      bool any_true = false, any_false = false;
      for (int k = 0; k < n; ++k) {
        if (!active(mask, k)) continue;
        bool c = cond[k].i != 0;
        take_true[k] = int_scalar(c);
        take_false[k] = int_scalar(!c);
        any_true |= c;
        any_false |= !c;
      }
      if (any_true) eval_lanes(e->b, f, &take_true, n, t);
      if (any_false) eval_lanes(e->c, f, &take_false, n, u);
      out.resize(n);
      for (int k = 0; k < n; ++k) {
        if (take_true[k].i)
          out[k] = t[k];
        else if (take_false[k].i)
          out[k] = u[k];
        else
          out[k] = zero_lane(elem);
      }
      return;
    }
    case EOp::Call: eval_vector_call(e, f, mask, out); return;
    case EOp::Extern: eval_vector_extern(e, f, mask, out); return;
    case EOp::Let:
      f.vars[static_cast<size_t>(e->slot)] = eval(e->a, f);
      eval_lanes(e->b, f, mask, n, out);
      return;
  }
  TE_ICHECK(false, "eval_vector: a scalar-only node has a vector type");
}

void Interpreter::eval_vector_call(const CExpr* e, Frame& f, const LaneVec* mask, LaneVec& out) {
  const int n = e->type.lanes();
  eval_lanes(e->a, f, mask, n, out);
  if (e->b) {
    LaneVec b, c;
    eval_lanes(e->b, f, mask, n, b);
    if (e->fn != Intrinsic::Fma) {
      for (int k = 0; k < n; ++k) out[k] = binary_intrinsic_lane(e->fn, e->arg_type, out[k], b[k]);
      return;
    }
    eval_lanes(e->c, f, mask, n, c);
    for (int k = 0; k < n; ++k) out[k] = fma_lane(e->arg_type, out[k], b[k], c[k]);
    return;
  }
  for (int k = 0; k < n; ++k) out[k] = unary_intrinsic_lane(e->fn, e->arg_type, out[k]);
}

void Interpreter::eval_vector_load(const CExpr* e, Frame& f, const LaneVec* mask, LaneVec& out) {
  const int n = e->type.lanes();
  const BufferStorage& st = *f.buffers[static_cast<size_t>(e->slot)];
  LaneVec pred;
  if (e->predicate) eval_lanes(e->predicate, f, mask, n, pred);
  auto lane_on = [&](int k) { return active(mask, k) && (!e->predicate || pred[k].i != 0); };
  const Scalar zero = zero_lane(e->type);
  out.resize(n);
  const size_t count = e->indices.size();
  if (count == 1) {
    LaneVec index;
    eval_lanes(e->indices[0], f, mask, n, index);
    for (int k = 0; k < n; ++k) out[k] = lane_on(k) ? read_element(st, checked_offset(st, index[k].i, false)) : zero;
    return;
  }
  // One index per dimension (before storage flattening).
  if (count > kMaxDims) too_many_indices(st, count);
  std::vector<LaneVec> index(count);
  for (size_t d = 0; d < count; ++d) eval_lanes(e->indices[d], f, mask, n, index[d]);
  int64_t at[kMaxDims];
  for (int k = 0; k < n; ++k) {
    if (!lane_on(k)) {
      out[k] = zero;
      continue;
    }
    for (size_t d = 0; d < count; ++d) at[d] = index[d][k].i;
    out[k] = read_element(st, checked_offset(st, at, count, false));
  }
}

}  // namespace te::interp
