// Expression builders: the type rules documented in include/te/expr.h.
#include "te/expr.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "expr/float_round.h"
#include "expr/int_arith.h"
#include "expr/make_node.h"
#include "expr/simplify_internal.h"

namespace te {

namespace {

void require_defined(const Expr& e, const char* what) {
  if (!e.defined()) throw Error(fmt::format("{}: an operand is undefined (a default-constructed Expr)", what));
}

std::string tname(const Expr& e) { return e.dtype().to_string(); }

bool is_imm(const Expr& e) {
  if (e.as<IntImmNode>() || e.as<FloatImmNode>()) return true;
  if (auto* b = e.as<BroadcastNode>()) return is_imm(b->value);
  return false;
}

bool int_fits(int64_t v, DataType t) {
  if (t.bits() >= 64) return true;  // int64 holds it; uint64 literals come as bit patterns
  return arith::wrap(v, t) == v;
}

// Converts an immediate to another scalar type (same lanes as the immediate).
Expr convert_imm(const Expr& imm, DataType elem, const char* op) {
  if (auto* b = imm.as<BroadcastNode>()) return broadcast(convert_imm(b->value, elem, op), b->lanes);
  if (auto* i = imm.as<IntImmNode>()) {
    if (elem.is_float()) return make_const(elem, static_cast<double>(i->value));
    if (elem.is_integer() && !int_fits(i->value, elem))
      throw Error(fmt::format("{}: integer literal {} does not fit {} (the other operand's type)", op, i->value,
                              elem.to_string()));
    return make_const(elem, i->value);
  }
  auto* f = imm.as<FloatImmNode>();
  TE_ICHECK(f && elem.is_float());
  return make_const(elem, f->value);
}

// Applies the type rules so that a and b end with the same type; `op` names the operator.
void match_types(const char* op, Expr& a, Expr& b) {
  require_defined(a, op);
  require_defined(b, op);
  DataType ta = a.dtype(), tb = b.dtype();
  if (ta.is_handle() || tb.is_handle() || ta.is_void() || tb.is_void())
    throw Error(fmt::format("{}: cannot use {} and {} as operands", op, ta.to_string(), tb.to_string()));
  if (ta.lanes() != tb.lanes()) {
    if (ta.lanes() == 1)
      a = broadcast(a, tb.lanes());
    else if (tb.lanes() == 1)
      b = broadcast(b, ta.lanes());
    else
      throw Error(fmt::format("{}: vector lane counts differ ({} and {})", op, ta.to_string(), tb.to_string()));
  }
  DataType ea = ta.element_of(), eb = tb.element_of();
  if (ea == eb) return;
  if (ea.is_bool() || eb.is_bool())
    throw Error(
        fmt::format("{}: cannot combine {} and {} (bool mixes only with bool)", op, ta.to_string(), tb.to_string()));
  bool ia = is_imm(a), ib = is_imm(b);
  if (ia != ib) {
    Expr& lit = ia ? a : b;
    Expr& other = ia ? b : a;
    DataType el = lit.dtype().element_of(), eo = other.dtype().element_of();
    if (el.is_float() && eo.is_integer()) {
      other = cast(el.with_lanes(other.dtype().lanes()), other);
    } else {
      lit = convert_imm(lit, eo, op);
    }
    return;
  }
  DataType target;
  // float16 with bfloat16: neither holds the other, both fit float32 (PyTorch's rule).
  if (ea.is_float() && eb.is_float())
    target = ea.bits() != eb.bits() ? (ea.bits() > eb.bits() ? ea : eb) : Float(32);
  else if (ea.is_float())
    target = ea;
  else if (eb.is_float())
    target = eb;
  else if (ea.code() == eb.code())
    target = ea.bits() >= eb.bits() ? ea : eb;
  else
    target = Int(std::max(ea.bits(), eb.bits()));
  if (ea != target) a = cast(target.with_lanes(a.dtype().lanes()), a);
  if (eb != target) b = cast(target.with_lanes(b.dtype().lanes()), b);
}

void require_bool(const char* op, const Expr& a) {
  if (!a.dtype().is_bool()) throw Error(fmt::format("{}: the condition must be bool, got {}", op, tname(a)));
}

// Folds integer arithmetic on two scalar IntImms; returns an undefined Expr if not foldable.
Expr fold_int(BinOp op, const Expr& a, const Expr& b) {
  auto* x = a.as<IntImmNode>();
  auto* y = b.as<IntImmNode>();
  if (!x || !y) return Expr();
  DataType t = a.dtype();
  if (is_comparison(op) || op == BinOp::And || op == BinOp::Or) return Expr();
  return make_const(t, arith::binary(op, x->value, y->value, t));
}

}  // namespace

// ---- names ----
const char* binop_name(BinOp op) {
  switch (op) {
    case BinOp::Add: return "+";
    case BinOp::Sub: return "-";
    case BinOp::Mul: return "*";
    case BinOp::Div: return "/";
    case BinOp::Mod: return "%";
    case BinOp::TruncDiv: return "truncdiv";
    case BinOp::TruncMod: return "truncmod";
    case BinOp::Min: return "min";
    case BinOp::Max: return "max";
    case BinOp::EQ: return "==";
    case BinOp::NE: return "!=";
    case BinOp::LT: return "<";
    case BinOp::LE: return "<=";
    case BinOp::GT: return ">";
    case BinOp::GE: return ">=";
    case BinOp::And: return "&&";
    case BinOp::Or: return "||";
  }
  return "?";
}
bool is_comparison(BinOp op) { return op >= BinOp::EQ && op <= BinOp::GE; }
bool is_logical(BinOp op) { return op == BinOp::And || op == BinOp::Or; }

const char* intrinsic_name(Intrinsic op) {
  switch (op) {
    case Intrinsic::Floor: return "floor";
    case Intrinsic::Ceil: return "ceil";
    case Intrinsic::Round: return "round";
    case Intrinsic::NearbyInt: return "nearbyint";
    case Intrinsic::Trunc: return "trunc";
    case Intrinsic::Abs: return "abs";
    case Intrinsic::Exp: return "exp";
    case Intrinsic::Log: return "log";
    case Intrinsic::Sqrt: return "sqrt";
    case Intrinsic::Pow: return "pow";
    case Intrinsic::Tanh: return "tanh";
    case Intrinsic::Fma: return "fma";
    case Intrinsic::Likely: return "likely";
    case Intrinsic::IfThenElse: return "if_then_else";
    case Intrinsic::WarpShuffleDown: return "warp_shuffle_down";
    case Intrinsic::ThreadAllreduce: return "thread_allreduce";
    case Intrinsic::Sin: return "sin";
    case Intrinsic::Cos: return "cos";
    case Intrinsic::Tan: return "tan";
    case Intrinsic::Asin: return "asin";
    case Intrinsic::Acos: return "acos";
    case Intrinsic::Atan: return "atan";
    case Intrinsic::Atan2: return "atan2";
    case Intrinsic::Sinh: return "sinh";
    case Intrinsic::Cosh: return "cosh";
    case Intrinsic::Erf: return "erf";
    case Intrinsic::Sigmoid: return "sigmoid";
    case Intrinsic::Exp2: return "exp2";
    case Intrinsic::Log2: return "log2";
    case Intrinsic::Log10: return "log10";
    case Intrinsic::Log1p: return "log1p";
    case Intrinsic::Expm1: return "expm1";
    case Intrinsic::Rsqrt: return "rsqrt";
    case Intrinsic::IsNan: return "isnan";
    case Intrinsic::IsInf: return "isinf";
    case Intrinsic::IsFinite: return "isfinite";
    case Intrinsic::BitAnd: return "bitwise_and";
    case Intrinsic::BitOr: return "bitwise_or";
    case Intrinsic::BitXor: return "bitwise_xor";
    case Intrinsic::BitNot: return "bitwise_not";
    case Intrinsic::ShiftLeft: return "shift_left";
    case Intrinsic::ShiftRight: return "shift_right";
    case Intrinsic::Popcount: return "popcount";
    case Intrinsic::Extern: return "call_extern";
  }
  return "?";
}

const char* reducer_name(Reducer r) {
  switch (r) {
    case Reducer::Sum: return "sum";
    case Reducer::Prod: return "prod";
    case Reducer::Min: return "min";
    case Reducer::Max: return "max";
    case Reducer::Custom: return "custom";
  }
  return "?";
}

const char* scope_name(MemoryScope s) {
  switch (s) {
    case MemoryScope::Global: return "global";
    case MemoryScope::Shared: return "shared";
    case MemoryScope::Local: return "local";
    case MemoryScope::Warp: return "warp";
    case MemoryScope::Warpgroup: return "warpgroup";
  }
  return "?";
}

bool per_thread_scope(MemoryScope s) {
  return s == MemoryScope::Local || s == MemoryScope::Warp || s == MemoryScope::Warpgroup;
}

MemoryScope parse_scope(const std::string& s) {
  if (s == "global") return MemoryScope::Global;
  if (s == "shared") return MemoryScope::Shared;
  if (s == "local") return MemoryScope::Local;
  if (s == "warp") return MemoryScope::Warp;
  if (s == "warpgroup") return MemoryScope::Warpgroup;
  throw Error(fmt::format(
      "unknown memory scope '{}' (expected \"global\", \"shared\", \"local\", \"warp\" or \"warpgroup\")", s));
}

// ---- Expr basics ----
Expr::Expr(int v) : Expr(make_expr<IntImmNode>(Int(32), v)) {}
Expr::Expr(int64_t v) : Expr(make_expr<IntImmNode>(Int(64), v)) {}
Expr::Expr(float v) : Expr(make_expr<FloatImmNode>(Float(32), static_cast<double>(v))) {}
Expr::Expr(double v) : Expr(make_expr<FloatImmNode>(Float(64), v)) {}

DataType Expr::dtype() const {
  if (!node_) throw Error("dtype(): the expression is undefined (a default-constructed Expr)");
  return node_->dtype;
}
ExprKind Expr::kind() const {
  if (!node_) throw Error("kind(): the expression is undefined (a default-constructed Expr)");
  return node_->kind;
}

Var::Var(std::string name, DataType t) : Expr(make_expr<VarNode>(std::move(name), t)) {
  if (!t.is_scalar() || t.is_void())
    throw Error(fmt::format("Var '{}': a variable must have a scalar type, got {}", this->name(), t.to_string()));
}

Buffer::Buffer(std::string name, DataType dtype, std::vector<Expr> shape, MemoryScope scope, int swizzle_bytes,
               int64_t swizzle_row) {
  if (swizzle_bytes != 0 && swizzle_bytes != 32 && swizzle_bytes != 64 && swizzle_bytes != 128)
    throw Error(fmt::format("Buffer '{}': a swizzle is 32, 64 or 128 bytes wide, not {}", name, swizzle_bytes));
  if (swizzle_row != 0 && (swizzle_bytes == 0 || swizzle_row * dtype.bytes() <= swizzle_bytes ||
                           swizzle_row * dtype.bytes() % swizzle_bytes != 0))
    throw Error(
        fmt::format("Buffer '{}': rows of {} elements are column blocks of a {}-byte swizzle only when they "
                    "are a multiple of it, and wider",
                    name, swizzle_row, swizzle_bytes));
  if (!dtype.is_scalar() || dtype.is_void() || dtype.is_handle())
    throw Error(fmt::format("Buffer '{}': element type must be a scalar data type, got {}", name, dtype.to_string()));
  for (size_t i = 0; i < shape.size(); ++i) {
    if (!shape[i].defined() || !shape[i].dtype().is_integer() || !shape[i].dtype().is_scalar())
      throw Error(fmt::format("Buffer '{}': extent {} must be a scalar integer expression", name, i));
  }
  auto n = std::make_shared<BufferNode>();
  n->name = std::move(name);
  n->dtype = dtype;
  n->shape = std::move(shape);
  n->scope = scope;
  n->swizzle_bytes = swizzle_bytes;
  n->swizzle_row = swizzle_row;
  node_ = std::move(n);
}

Range::Range(Expr begin, Expr end) {
  require_defined(begin, "Range");
  require_defined(end, "Range");
  min = begin;
  extent = end - begin;
}
Range Range::from_min_extent(Expr min, Expr extent) {
  Range r;
  r.min = std::move(min);
  r.extent = std::move(extent);
  return r;
}

IterVar::IterVar(Range dom, Var var, IterVarType type, std::string thread_tag) {
  auto n = std::make_shared<IterVarNode>();
  n->dom = std::move(dom);
  n->var = std::move(var);
  n->type = type;
  n->thread_tag = std::move(thread_tag);
  node_ = std::move(n);
}

IterVar reduce_axis(Range dom, std::string name) {
  if (!dom.min.defined() || !dom.extent.defined())
    throw Error(fmt::format("reduce_axis '{}': the range is undefined", name));
  for (const Expr* e : {&dom.min, &dom.extent})
    if (!e->dtype().is_integer() || !e->dtype().is_scalar())
      throw Error(fmt::format("reduce_axis '{}': the range must be integer, got {}", name, e->dtype().to_string()));
  DataType t = dom.extent.dtype().bits() > 32 || dom.min.dtype().bits() > 32 ? Int(64) : Int(32);
  return IterVar(dom, Var(std::move(name), t), IterVarType::Reduce);
}

IterVar thread_axis(const std::string& tag) {
  static const char* kTags[] = {"blockIdx.x",  "blockIdx.y",  "blockIdx.z", "threadIdx.x",
                                "threadIdx.y", "threadIdx.z", "vthread"};
  for (const char* t : kTags)
    if (tag == t) return IterVar(Range(), Var(tag), IterVarType::Thread, tag);
  throw Error(
      fmt::format("thread_axis: unknown thread tag '{}' (expected blockIdx.x|y|z, threadIdx.x|y|z or vthread)", tag));
}

// ---- Immediates ----
Expr make_const(DataType t, int64_t v) {
  if (t.is_vector()) return broadcast(make_const(t.element_of(), v), t.lanes());
  if (t.is_float()) return make_const(t, static_cast<double>(v));  // rounded to t
  if (t.is_bool()) return make_expr<IntImmNode>(t, v != 0);
  if (!t.is_integer()) throw Error(fmt::format("make_const: cannot make a constant of type {}", t.to_string()));
  return make_expr<IntImmNode>(t, arith::wrap(v, t));
}
Expr make_const(DataType t, double v) {
  if (t.is_vector()) return broadcast(make_const(t.element_of(), v), t.lanes());
  if (t.is_float()) {
    // NaN and infinities stay as they are (a float16 NaN's payload is not the point).
    if (std::isfinite(v)) v = round_to_float_type(v, t);
    return make_expr<FloatImmNode>(t, v);
  }
  if (t.is_bool()) return make_expr<IntImmNode>(t, v != 0);
  if (!std::isfinite(v) || v >= 9.2233720368547758e18 || v < -9.2233720368547758e18)
    throw Error(fmt::format("make_const: {} does not fit {}", v, t.to_string()));
  return make_const(t, static_cast<int64_t>(v));
}
Expr make_const(DataType t, int v) { return make_const(t, static_cast<int64_t>(v)); }
Expr const_true(int lanes) { return make_const(Bool(lanes), int64_t{1}); }
Expr const_false(int lanes) { return make_const(Bool(lanes), int64_t{0}); }
Expr make_zero(DataType t) { return make_const(t, int64_t{0}); }

Expr max_value(DataType t) {
  if (t.is_vector()) return broadcast(max_value(t.element_of()), t.lanes());
  if (t.is_float()) return make_const(t, std::numeric_limits<double>::infinity());
  if (t.is_bool()) return const_true();
  if (t.is_uint())
    return make_expr<IntImmNode>(t, t.bits() == 64 ? int64_t{-1} : int64_t((uint64_t{1} << t.bits()) - 1));
  return make_expr<IntImmNode>(
      t, t.bits() == 64 ? std::numeric_limits<int64_t>::max() : int64_t((uint64_t{1} << (t.bits() - 1)) - 1));
}
Expr min_value(DataType t) {
  if (t.is_vector()) return broadcast(min_value(t.element_of()), t.lanes());
  if (t.is_float()) return make_const(t, -std::numeric_limits<double>::infinity());
  if (t.is_bool()) return const_false();
  if (t.is_uint()) return make_expr<IntImmNode>(t, 0);
  return make_expr<IntImmNode>(
      t, t.bits() == 64 ? std::numeric_limits<int64_t>::min() : -int64_t(uint64_t{1} << (t.bits() - 1)));
}

Expr reducer_identity(Reducer r, DataType t) {
  switch (r) {
    case Reducer::Sum: return make_zero(t);
    case Reducer::Prod: return make_const(t, int64_t{1});
    case Reducer::Min: return max_value(t);
    case Reducer::Max: return min_value(t);
    case Reducer::Custom: break;
  }
  TE_ICHECK(false, "reducer_identity: a custom reducer's identity is its rule's (reduce_identity)");
}

const int64_t* as_const_int(const Expr& e) {
  if (auto* i = e.as<IntImmNode>()) return &i->value;
  if (auto* b = e.as<BroadcastNode>()) return as_const_int(b->value);
  return nullptr;
}
const double* as_const_float(const Expr& e) {
  if (auto* f = e.as<FloatImmNode>()) return &f->value;
  if (auto* b = e.as<BroadcastNode>()) return as_const_float(b->value);
  return nullptr;
}
bool is_const_int(const Expr& e, int64_t v) {
  const int64_t* p = as_const_int(e);
  return p && *p == v;
}
bool is_zero(const Expr& e) {
  if (const double* f = as_const_float(e)) return *f == 0.0;
  return is_const_int(e, 0);
}
bool is_one(const Expr& e) {
  if (const double* f = as_const_float(e)) return *f == 1.0;
  return is_const_int(e, 1);
}

// ---- Arithmetic ----
Expr make_binary(BinOp op, Expr a, Expr b) {
  const char* name = binop_name(op);
  if (is_logical(op)) {
    require_defined(a, name);
    require_defined(b, name);
    if (!a.dtype().is_bool() || !b.dtype().is_bool())
      throw Error(fmt::format("operator {}: operands must be bool, got {} and {}", name, tname(a), tname(b)));
    match_types(name, a, b);
    return make_expr<BinaryNode>(a.dtype(), op, a, b);
  }
  std::string what = fmt::format("operator {}", name);
  match_types(what.c_str(), a, b);
  DataType t = a.dtype();
  if (is_comparison(op)) {
    if (t.is_bool() && op != BinOp::EQ && op != BinOp::NE)
      throw Error(fmt::format("{}: bool operands can only be compared with == and != (got {} and {})", what, tname(a),
                              tname(b)));
    return make_expr<BinaryNode>(Bool(t.lanes()), op, a, b);
  }
  if (t.is_bool())
    throw Error(
        fmt::format("{}: bool operands are not allowed in arithmetic (got {} and {})", what, tname(a), tname(b)));
  if (t.is_float() && (op == BinOp::Mod || op == BinOp::TruncMod || op == BinOp::TruncDiv))
    throw Error(fmt::format("{}: not defined for floating-point operands ({} and {})", what, tname(a), tname(b)));
  if (Expr folded = fold_int(op, a, b); folded.defined()) return folded;
  return make_expr<BinaryNode>(t, op, a, b);
}

Expr operator+(Expr a, Expr b) { return make_binary(BinOp::Add, std::move(a), std::move(b)); }
Expr operator-(Expr a, Expr b) { return make_binary(BinOp::Sub, std::move(a), std::move(b)); }
Expr operator*(Expr a, Expr b) { return make_binary(BinOp::Mul, std::move(a), std::move(b)); }
Expr operator/(Expr a, Expr b) { return make_binary(BinOp::Div, std::move(a), std::move(b)); }
Expr operator%(Expr a, Expr b) { return make_binary(BinOp::Mod, std::move(a), std::move(b)); }
Expr truncdiv(Expr a, Expr b) { return make_binary(BinOp::TruncDiv, std::move(a), std::move(b)); }
Expr truncmod(Expr a, Expr b) { return make_binary(BinOp::TruncMod, std::move(a), std::move(b)); }
Expr min(Expr a, Expr b) { return make_binary(BinOp::Min, std::move(a), std::move(b)); }
Expr max(Expr a, Expr b) { return make_binary(BinOp::Max, std::move(a), std::move(b)); }
Expr operator==(Expr a, Expr b) { return make_binary(BinOp::EQ, std::move(a), std::move(b)); }
Expr operator!=(Expr a, Expr b) { return make_binary(BinOp::NE, std::move(a), std::move(b)); }
Expr operator<(Expr a, Expr b) { return make_binary(BinOp::LT, std::move(a), std::move(b)); }
Expr operator<=(Expr a, Expr b) { return make_binary(BinOp::LE, std::move(a), std::move(b)); }
Expr operator>(Expr a, Expr b) { return make_binary(BinOp::GT, std::move(a), std::move(b)); }
Expr operator>=(Expr a, Expr b) { return make_binary(BinOp::GE, std::move(a), std::move(b)); }
Expr operator&&(Expr a, Expr b) { return make_binary(BinOp::And, std::move(a), std::move(b)); }
Expr operator||(Expr a, Expr b) { return make_binary(BinOp::Or, std::move(a), std::move(b)); }

Expr operator-(Expr a) {
  require_defined(a, "unary -");
  if (a.dtype().is_bool()) throw Error(fmt::format("unary -: not defined for {}", tname(a)));
  if (const double* f = a.as<FloatImmNode>() ? as_const_float(a) : nullptr) return make_const(a.dtype(), -*f);
  // Floats negate as -1 * x, which keeps IEEE's -(+0) == -0 (0 - x would give +0).
  if (a.dtype().is_float()) return make_const(a.dtype(), int64_t{-1}) * a;
  return make_zero(a.dtype()) - a;
}

Expr operator!(Expr a) {
  require_defined(a, "operator !");
  if (!a.dtype().is_bool()) throw Error(fmt::format("operator !: operand must be bool, got {}", tname(a)));
  if (auto* i = a.as<IntImmNode>()) return make_const(a.dtype(), int64_t{i->value == 0});
  return make_expr<NotNode>(a.dtype(), a);
}

namespace {
Expr make_choice(const char* what, Expr cond, Expr t, Expr f, bool guarded) {
  require_defined(cond, what);
  require_bool(what, cond);
  std::string w = what;
  match_types(w.c_str(), t, f);
  int lanes = t.dtype().lanes();
  if (cond.dtype().lanes() != lanes) {
    if (cond.dtype().lanes() == 1)
      cond = broadcast(cond, lanes);
    else if (lanes == 1) {
      t = broadcast(t, cond.dtype().lanes());
      f = broadcast(f, cond.dtype().lanes());
    } else {
      throw Error(fmt::format("{}: condition has type {} but the values have type {}", what, tname(cond), tname(t)));
    }
  }
  if (guarded) return make_expr<CallNode>(t.dtype(), Intrinsic::IfThenElse, std::vector<Expr>{cond, t, f});
  return make_expr<SelectNode>(t.dtype(), cond, t, f);
}

Expr float_call(Intrinsic op, Expr x) {
  require_defined(x, intrinsic_name(op));
  if (!x.dtype().is_float())
    throw Error(
        fmt::format("{}: expects a floating-point argument, got {} (cast it first)", intrinsic_name(op), tname(x)));
  return make_expr<CallNode>(x.dtype(), op, std::vector<Expr>{x});
}

// floor/ceil/round/... are the identity on integers.
Expr rounding_call(Intrinsic op, Expr x) {
  require_defined(x, intrinsic_name(op));
  if (x.dtype().is_integer()) return x;
  return float_call(op, std::move(x));
}
}  // namespace

Expr select(Expr cond, Expr t, Expr f) {
  return make_choice("select", std::move(cond), std::move(t), std::move(f), false);
}
Expr if_then_else(Expr cond, Expr t, Expr f) {
  return make_choice("if_then_else", std::move(cond), std::move(t), std::move(f), true);
}

Expr cast(DataType t, Expr v) {
  require_defined(v, "cast");
  if (t.is_void() || t.is_handle()) throw Error(fmt::format("cast: cannot cast to {}", t.to_string()));
  if (t.lanes() == 1 && v.dtype().lanes() > 1) t = t.with_lanes(v.dtype().lanes());
  if (t.lanes() != v.dtype().lanes()) {
    if (v.dtype().lanes() != 1)
      throw Error(fmt::format("cast: cannot cast {} to {} (lane counts differ)", tname(v), t.to_string()));
    return broadcast(cast(t.element_of(), v), t.lanes());
  }
  if (t == v.dtype()) return v;
  if (t.is_scalar()) {
    if (auto* i = v.as<IntImmNode>()) {
      if (t.is_float())
        return make_const(t, v.dtype().is_uint() ? static_cast<double>(arith::as_unsigned(i->value, v.dtype()))
                                                 : static_cast<double>(i->value));
      return make_const(t, i->value);
    }
    if (auto* f = v.as<FloatImmNode>(); f && t.is_float()) return make_const(t, f->value);
  }
  return make_expr<CastNode>(t, v);
}

Expr floor(Expr x) { return rounding_call(Intrinsic::Floor, std::move(x)); }
Expr ceil(Expr x) { return rounding_call(Intrinsic::Ceil, std::move(x)); }
Expr round(Expr x) { return rounding_call(Intrinsic::Round, std::move(x)); }
Expr nearbyint(Expr x) { return rounding_call(Intrinsic::NearbyInt, std::move(x)); }
Expr trunc(Expr x) { return rounding_call(Intrinsic::Trunc, std::move(x)); }
Expr abs(Expr x) {
  require_defined(x, "abs");
  if (x.dtype().is_bool()) throw Error(fmt::format("abs: not defined for {}", tname(x)));
  if (x.dtype().is_uint()) return x;
  return make_expr<CallNode>(x.dtype(), Intrinsic::Abs, std::vector<Expr>{x});
}
Expr exp(Expr x) { return float_call(Intrinsic::Exp, std::move(x)); }
Expr log(Expr x) { return float_call(Intrinsic::Log, std::move(x)); }
Expr sqrt(Expr x) { return float_call(Intrinsic::Sqrt, std::move(x)); }
Expr tanh(Expr x) { return float_call(Intrinsic::Tanh, std::move(x)); }
Expr sin(Expr x) { return float_call(Intrinsic::Sin, std::move(x)); }
Expr cos(Expr x) { return float_call(Intrinsic::Cos, std::move(x)); }
Expr tan(Expr x) { return float_call(Intrinsic::Tan, std::move(x)); }
Expr asin(Expr x) { return float_call(Intrinsic::Asin, std::move(x)); }
Expr acos(Expr x) { return float_call(Intrinsic::Acos, std::move(x)); }
Expr atan(Expr x) { return float_call(Intrinsic::Atan, std::move(x)); }
Expr sinh(Expr x) { return float_call(Intrinsic::Sinh, std::move(x)); }
Expr cosh(Expr x) { return float_call(Intrinsic::Cosh, std::move(x)); }
Expr erf(Expr x) { return float_call(Intrinsic::Erf, std::move(x)); }
Expr sigmoid(Expr x) { return float_call(Intrinsic::Sigmoid, std::move(x)); }
Expr exp2(Expr x) { return float_call(Intrinsic::Exp2, std::move(x)); }
Expr log2(Expr x) { return float_call(Intrinsic::Log2, std::move(x)); }
Expr log10(Expr x) { return float_call(Intrinsic::Log10, std::move(x)); }
Expr log1p(Expr x) { return float_call(Intrinsic::Log1p, std::move(x)); }
Expr expm1(Expr x) { return float_call(Intrinsic::Expm1, std::move(x)); }
Expr rsqrt(Expr x) { return float_call(Intrinsic::Rsqrt, std::move(x)); }
Expr atan2(Expr y, Expr x) {
  match_types("atan2", y, x);
  if (!y.dtype().is_float())
    throw Error(fmt::format("atan2: expects floating-point arguments, got {} and {}", tname(y), tname(x)));
  return make_expr<CallNode>(y.dtype(), Intrinsic::Atan2, std::vector<Expr>{y, x});
}

namespace {
// isnan/isinf/isfinite: bool lanes; integers are never NaN nor infinite.
Expr classify(Intrinsic op, Expr x) {
  require_defined(x, intrinsic_name(op));
  DataType t = x.dtype();
  if (t.is_bool() || t.is_handle() || t.is_void())
    throw Error(fmt::format("{}: expects a number, got {}", intrinsic_name(op), tname(x)));
  if (!t.is_float()) return op == Intrinsic::IsFinite ? const_true(t.lanes()) : const_false(t.lanes());
  return make_expr<CallNode>(Bool(t.lanes()), op, std::vector<Expr>{x});
}

void require_integer(const char* what, const Expr& a, const Expr& b) {
  if (!a.dtype().is_integer() || a.dtype().is_bool() || !b.dtype().is_integer() || b.dtype().is_bool())
    throw Error(fmt::format("{}: expects integer operands, got {} and {}{}", what, tname(a), tname(b),
                            a.dtype().is_bool() || b.dtype().is_bool() ? " (use && || != on bool)" : ""));
}

Expr bitwise_binary(Intrinsic op, const char* what, Expr a, Expr b) {
  require_defined(a, what);
  require_defined(b, what);
  require_integer(what, a, b);
  match_types(what, a, b);
  if (Expr folded = simp::fold_call(op, {a, b}, a.dtype()); folded.defined()) return folded;
  return make_expr<CallNode>(a.dtype(), op, std::vector<Expr>{a, b});
}

Expr bitwise_unary(Intrinsic op, const char* what, Expr a) {
  require_defined(a, what);
  if (!a.dtype().is_integer() || a.dtype().is_bool())
    throw Error(fmt::format("{}: expects an integer operand, got {}{}", what, tname(a),
                            a.dtype().is_bool() ? " (use ! on bool)" : ""));
  if (Expr folded = simp::fold_call(op, {a}, a.dtype()); folded.defined()) return folded;
  return make_expr<CallNode>(a.dtype(), op, std::vector<Expr>{a});
}
}  // namespace

Expr isnan(Expr x) { return classify(Intrinsic::IsNan, std::move(x)); }
Expr isinf(Expr x) { return classify(Intrinsic::IsInf, std::move(x)); }
Expr isfinite(Expr x) { return classify(Intrinsic::IsFinite, std::move(x)); }
Expr operator&(Expr a, Expr b) { return bitwise_binary(Intrinsic::BitAnd, "operator &", std::move(a), std::move(b)); }
Expr operator|(Expr a, Expr b) { return bitwise_binary(Intrinsic::BitOr, "operator |", std::move(a), std::move(b)); }
Expr operator^(Expr a, Expr b) { return bitwise_binary(Intrinsic::BitXor, "operator ^", std::move(a), std::move(b)); }
Expr operator<<(Expr a, Expr b) {
  return bitwise_binary(Intrinsic::ShiftLeft, "operator <<", std::move(a), std::move(b));
}
Expr operator>>(Expr a, Expr b) {
  return bitwise_binary(Intrinsic::ShiftRight, "operator >>", std::move(a), std::move(b));
}
Expr operator~(Expr a) { return bitwise_unary(Intrinsic::BitNot, "operator ~", std::move(a)); }
Expr popcount(Expr a) { return bitwise_unary(Intrinsic::Popcount, "popcount", std::move(a)); }

Expr pow(Expr x, Expr y) {
  match_types("pow", x, y);
  if (!x.dtype().is_float())
    throw Error(fmt::format("pow: expects floating-point arguments, got {} and {}", tname(x), tname(y)));
  return make_expr<CallNode>(x.dtype(), Intrinsic::Pow, std::vector<Expr>{x, y});
}
Expr fma(Expr a, Expr b, Expr c) {
  match_types("fma", a, b);
  match_types("fma", a, c);
  match_types("fma", b, c);
  if (!a.dtype().is_float()) throw Error(fmt::format("fma: expects floating-point arguments, got {}", tname(a)));
  return make_expr<CallNode>(a.dtype(), Intrinsic::Fma, std::vector<Expr>{a, b, c});
}
Expr likely(Expr cond) {
  require_defined(cond, "likely");
  require_bool("likely", cond);
  return make_expr<CallNode>(cond.dtype(), Intrinsic::Likely, std::vector<Expr>{cond});
}
Expr warp_shuffle_down(Expr value, Expr delta, Expr thread) {
  require_defined(value, "warp_shuffle_down");
  require_defined(delta, "warp_shuffle_down");
  require_defined(thread, "warp_shuffle_down");
  if (!value.dtype().is_scalar())
    throw Error(fmt::format("warp_shuffle_down: the value must be a scalar, got {}", tname(value)));
  for (const Expr* e : {&delta, &thread})
    if (!e->dtype().is_scalar() || !e->dtype().is_integer() || e->dtype().is_bool())
      throw Error(fmt::format("warp_shuffle_down: delta and thread must be scalar integers, got {}", tname(*e)));
  return make_expr<CallNode>(value.dtype(), Intrinsic::WarpShuffleDown, std::vector<Expr>{value, delta, thread});
}
Expr let(Var v, Expr value, Expr body) {
  require_defined(v, "let");
  require_defined(value, "let");
  require_defined(body, "let");
  if (v.dtype() != value.dtype())
    throw Error(fmt::format("let {}: variable has type {} but the value has type {}", v.name(), v.dtype().to_string(),
                            tname(value)));
  return make_expr<LetNode>(body.dtype(), v, value, body);
}

// ---- Vectors and memory ----
Expr ramp(Expr base, Expr stride, int lanes) {
  require_defined(base, "ramp");
  require_defined(stride, "ramp");
  if (lanes < 1) throw Error(fmt::format("ramp: lanes must be >= 1, got {}", lanes));
  match_types("ramp", base, stride);
  if (!base.dtype().is_scalar() || !base.dtype().is_integer())
    throw Error(fmt::format("ramp: base and stride must be scalar integers, got {}", tname(base)));
  return make_expr<RampNode>(base.dtype().with_lanes(lanes), base, stride, lanes);
}
Expr broadcast(Expr value, int lanes) {
  require_defined(value, "broadcast");
  if (lanes < 1) throw Error(fmt::format("broadcast: lanes must be >= 1, got {}", lanes));
  if (!value.dtype().is_scalar()) throw Error(fmt::format("broadcast: value must be a scalar, got {}", tname(value)));
  if (lanes == 1) return value;
  return make_expr<BroadcastNode>(value.dtype().with_lanes(lanes), value, lanes);
}
Expr load(Buffer buffer, std::vector<Expr> indices, Expr predicate) {
  if (!buffer.defined()) throw Error("load: the buffer is undefined");
  int lanes = 1;
  for (const Expr& i : indices) {
    require_defined(i, "load");
    if (!i.dtype().is_integer())
      throw Error(fmt::format("load from '{}': indices must be integers, got {}", buffer.name(), tname(i)));
    lanes = std::max(lanes, i.dtype().lanes());
  }
  if (predicate.defined() && !predicate.dtype().is_bool())
    throw Error(fmt::format("load from '{}': predicate must be bool, got {}", buffer.name(), tname(predicate)));
  return make_expr<LoadNode>(buffer.dtype().with_lanes(lanes), buffer, std::move(indices), std::move(predicate));
}

}  // namespace te
