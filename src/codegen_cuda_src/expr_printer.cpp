#include "codegen_cuda_src/expr_printer.h"

#include <fmt/format.h>

#include "codegen_cuda_src/c_types.h"
#include "codegen_cuda_src/index_check.h"
#include "codegen_cuda_src/stmt_util.h"
#include "codegen_cuda_src/swizzle.h"
#include "expr/intrinsic_info.h"
#include "te/error.h"
#include "te/ir.h"

namespace te::cuda {

namespace {

std::string paren(const std::string& s) { return "(" + s + ")"; }

// float16 (__half) and bfloat16 (__nv_bfloat16): both compute in float and round back
// to nearest even after every operation, like the interpreter. float16 uses __half's own
// operators for + - * / and comparisons (correctly rounded: the same result); bfloat16
// converts explicitly, so that it needs no sm_80 operators and never fuses into an fma.
bool is_narrow(DataType t) { return t.is_float() && t.bits() == 16; }

std::string to_float(DataType t, const std::string& v) {
  return (t.is_bfloat() ? "__bfloat162float(" : "__half2float(") + v + ")";
}
std::string from_float(DataType t, const std::string& float_value) {
  return (t.is_bfloat() ? "__float2bfloat16_rn(" : "__float2half_rn(") + float_value + ")";
}

// The name of the C math function for a float intrinsic in float32 ("floorf") or
// float64 ("floor"); fast is CUDA's fast float32 intrinsic where there is one.
std::string math_name(Intrinsic op, int bits, bool fast) {
  const char* base = "";
  switch (op) {
    case Intrinsic::Floor: base = "floor"; break;
    case Intrinsic::Ceil: base = "ceil"; break;
    case Intrinsic::Round: base = "round"; break;
    case Intrinsic::NearbyInt: base = "rint"; break;
    case Intrinsic::Trunc: base = "trunc"; break;
    case Intrinsic::Abs: base = "fabs"; break;
    case Intrinsic::Exp: base = "exp"; break;
    case Intrinsic::Log: base = "log"; break;
    case Intrinsic::Sqrt: base = "sqrt"; break;
    case Intrinsic::Pow: base = "pow"; break;
    case Intrinsic::Tanh: base = "tanh"; break;
    case Intrinsic::Fma: base = "fma"; break;
    case Intrinsic::Sin: base = "sin"; break;
    case Intrinsic::Cos: base = "cos"; break;
    case Intrinsic::Tan: base = "tan"; break;
    case Intrinsic::Asin: base = "asin"; break;
    case Intrinsic::Acos: base = "acos"; break;
    case Intrinsic::Atan: base = "atan"; break;
    case Intrinsic::Atan2: base = "atan2"; break;
    case Intrinsic::Sinh: base = "sinh"; break;
    case Intrinsic::Cosh: base = "cosh"; break;
    case Intrinsic::Erf: base = "erf"; break;
    case Intrinsic::Exp2: base = "exp2"; break;
    case Intrinsic::Log2: base = "log2"; break;
    case Intrinsic::Log10: base = "log10"; break;
    case Intrinsic::Log1p: base = "log1p"; break;
    case Intrinsic::Expm1: base = "expm1"; break;
    default: TE_ICHECK(false, "not a math intrinsic");
  }
  if (bits == 64) return base;
  bool has_fast = false;  // CUDA's fast float32 intrinsics (__expf ...)
  switch (op) {
    case Intrinsic::Exp:
    case Intrinsic::Log:
    case Intrinsic::Pow:
    case Intrinsic::Tanh:
    case Intrinsic::Sin:
    case Intrinsic::Cos:
    case Intrinsic::Tan:
    case Intrinsic::Log2:
    case Intrinsic::Log10: has_fast = true; break;
    default: break;
  }
  return fast && has_fast ? fmt::format("__{}f", base) : fmt::format("{}f", base);
}

}  // namespace

std::string ExprPrinter::strip_parens(const std::string& s) {
  if (s.size() < 2 || s.front() != '(' || s.back() != ')') return s;
  int depth = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '(') ++depth;
    if (s[i] == ')' && --depth == 0 && i + 1 != s.size()) return s;  // "(a) + (b)"
  }
  return s.substr(1, s.size() - 2);
}

std::vector<std::string> ExprPrinter::take_hoisted() {
  std::vector<std::string> out;
  out.swap(hoisted_);
  return out;
}

DataType ExprPrinter::compute_type(DataType t) const {
  t = t.element_of();
  return mode_.wide && t == Int(32) ? Int(64) : t;
}

std::string ExprPrinter::compute_c_type(DataType t) const { return c_type(compute_type(t)); }

std::string ExprPrinter::print_guarded(const Expr& e) {
  ++guarded_;
  std::string s = print(e);
  --guarded_;
  return s;
}

std::string ExprPrinter::print(const Expr& e) {
  TE_ICHECK(e.defined(), "printing an undefined expression");
  DataType t = e.dtype().element_of();
  switch (e->kind) {
    case ExprKind::IntImm: return int_literal(t, e.as<IntImmNode>()->value);
    case ExprKind::FloatImm: return float_literal(t, e.as<FloatImmNode>()->value);
    case ExprKind::Var: {
      auto* n = e.as<VarNode>();
      auto it = scope_.vars.find(n);
      if (it == scope_.vars.end())
        throw Error(
            fmt::format("CUDA codegen: variable '{}' is used but not defined here (it is neither "
                        "a parameter nor bound by an enclosing loop or let)",
                        n->name));
      const VarBinding& b = it->second;
      // A cast binds tighter than every operator the printer emits: no parentheses.
      if (compute_type(n->dtype) != b.declared) return fmt::format("({}){}", compute_c_type(n->dtype), b.name);
      return b.name;
    }
    case ExprKind::Cast: {
      auto* n = e.as<CastNode>();
      return cast(n->value.dtype().element_of(), t, print(n->value));
    }
    case ExprKind::Binary: return binary(e.as<BinaryNode>());
    case ExprKind::Not: return "!" + print(e.as<NotNode>()->a);
    case ExprKind::Select: {
      auto* n = e.as<SelectNode>();
      // te evaluates both sides of a select, so its Let values may be hoisted.
      return paren(fmt::format("{} ? {} : {}", print(n->cond), print(n->true_value), print(n->false_value)));
    }
    case ExprKind::Load: return load(e.as<LoadNode>());
    case ExprKind::Ramp: {
      auto* n = e.as<RampNode>();
      TE_ICHECK(!lane_.empty(), "a vector expression outside of lane-by-lane code");
      // A numbered lane of a constant stride reads as its element: base + 144, not 72 * 2.
      const int64_t* stride = as_const_int(n->stride);
      if (stride != nullptr && lane_.find_first_not_of("0123456789") == std::string::npos) {
        const int64_t offset = *stride * std::stoll(lane_);
        if (offset == 0) return print(n->base);
        return paren(fmt::format("{} + {}", print(n->base), print(make_const(n->stride.dtype(), offset))));
      }
      std::string step = is_one(n->stride) ? lane_ : fmt::format("{} * {}", print(n->stride), lane_);
      return paren(fmt::format("{} + {}", print(n->base), step));
    }
    case ExprKind::Broadcast: return print(e.as<BroadcastNode>()->value);
    case ExprKind::Call: return call(e.as<CallNode>());
    case ExprKind::Let: return let(e.as<LetNode>());
    case ExprKind::TensorRead:
      throw Error(fmt::format("CUDA codegen: tensor read {} was not lowered to a load", to_string(e)));
    case ExprKind::Reduce:
      throw Error(fmt::format("CUDA codegen: reduction {} was not lowered to loops", to_string(e)));
  }
  TE_ICHECK(false, "unknown expression kind");
  return "";
}

std::string ExprPrinter::cast(DataType from, DataType to, const std::string& v) {
  if (from == to) return v;
  if (to.is_bool()) {
    if (is_narrow(from)) return paren(to_float(from, v) + " != 0.0f");
    return paren(fmt::format("{} != {}", v, zero_literal(from)));
  }
  if (is_narrow(to)) {
    // One rounding from every source: a double through CUDA's round-to-odd conversion,
    // float16 <-> bfloat16 through float (exact), integers wider than 16 bits through
    // double (exact for 32 bits) where float could round twice on the way to bfloat16.
    if (from.is_float() && from.bits() == 64)
      return (to.is_bfloat() ? "__double2bfloat16(" : "__double2half(") + v + ")";
    if (is_narrow(from)) return from_float(to, to_float(from, v));
    if (from.is_float()) return from_float(to, v);
    if (to.is_bfloat() && !from.is_bool() && from.bits() > 16) return "__double2bfloat16((double)" + v + ")";
    return from_float(to, "(float)" + v);
  }
  if (to.is_float()) {
    std::string src = is_narrow(from) ? to_float(from, v) : v;
    if (is_narrow(from) && to.bits() == 32) return src;
    return fmt::format("({}){}", c_type(to), src);
  }
  // to is an integer type
  if (from.is_float()) {
    DataType f = is_narrow(from) ? Float(32) : from;
    std::string name = helpers_.use(Helper::FloatToInt, f, to);
    return fmt::format("{}({})", name, is_narrow(from) ? to_float(from, v) : strip_parens(v));
  }
  if (!from.is_bool() && compute_type(from) == compute_type(to) && to != Int(32)) return v;
  return fmt::format("({}){}", c_type(to), v);
}

std::string ExprPrinter::binary(const BinaryNode* n) {
  DataType t = n->a.dtype().element_of();
  const char* sym = binop_name(n->op);
  if (is_logical(n->op)) return paren(fmt::format("{} {} {}", print(n->a), sym, print_guarded(n->b)));
  if (is_comparison(n->op)) {
    if (t.is_bfloat()) return paren(fmt::format("{} {} {}", to_float(t, print(n->a)), sym, to_float(t, print(n->b))));
    return paren(fmt::format("{} {} {}", print(n->a), sym, print(n->b)));
  }
  if (!t.is_float()) return int_arith(n->op, t, n->a, n->b);

  std::string a = print(n->a), b = print(n->b);
  bool narrow = is_narrow(t);
  switch (n->op) {
    case BinOp::Add:
    case BinOp::Sub:
    case BinOp::Mul:
      if (t.is_bfloat()) return from_float(t, fmt::format("{} {} {}", to_float(t, a), sym, to_float(t, b)));
      return paren(fmt::format("{} {} {}", a, sym, b));
    case BinOp::Div:
    case BinOp::TruncDiv:
      if (t.is_bfloat()) return from_float(t, fmt::format("{} / {}", to_float(t, a), to_float(t, b)));
      if (mode_.fast_math && t.bits() == 32) return fmt::format("__fdividef({}, {})", strip_parens(a), strip_parens(b));
      return paren(fmt::format("{} / {}", a, b));
    case BinOp::Min:
    case BinOp::Max: {
      std::string name = helpers_.use(n->op == BinOp::Min ? Helper::Min : Helper::Max, t);
      return fmt::format("{}({}, {})", name, strip_parens(a), strip_parens(b));
    }
    case BinOp::Mod: {
      // float16/bfloat16 compute in float and round once, like the interpreter.
      std::string name = helpers_.use(Helper::FloatFloorMod, narrow ? Float(32) : t);
      if (narrow) return from_float(t, fmt::format("{}({}, {})", name, to_float(t, a), to_float(t, b)));
      return fmt::format("{}({}, {})", name, strip_parens(a), strip_parens(b));
    }
    case BinOp::TruncMod:
      if (narrow) return from_float(t, fmt::format("fmodf({}, {})", to_float(t, a), to_float(t, b)));
      return fmt::format("{}({}, {})", t.bits() == 32 ? "fmodf" : "fmod", strip_parens(a), strip_parens(b));
    default: break;
  }
  TE_ICHECK(false, "unhandled float operator");
  return "";
}

std::string ExprPrinter::int_arith(BinOp op, DataType t, const Expr& ea, const Expr& eb) {
  DataType ct = compute_type(t);
  std::string a = print(ea), b = print(eb);
  bool narrow = ct.bits() < 32;
  std::string narrow_type = c_type(ct);
  // Types narrower than int are computed in int (C's promotion) and wrapped back.
  auto wrap = [&](const std::string& s) { return narrow ? fmt::format("({}){}", narrow_type, s) : s; };
  const char* sym = binop_name(op);
  switch (op) {
    case BinOp::Add:
    case BinOp::Sub: return wrap(paren(fmt::format("{} {} {}", a, sym, b)));
    case BinOp::Mul:
      // uint16 * uint16 overflows int: multiply as uint32.
      if (narrow && ct.is_uint()) return wrap(paren(fmt::format("(uint32_t){} * (uint32_t){}", a, b)));
      return wrap(paren(fmt::format("{} * {}", a, b)));
    case BinOp::Min:
    case BinOp::Max: {
      std::string name = helpers_.use(op == BinOp::Min ? Helper::Min : Helper::Max, ct);
      return fmt::format("{}({}, {})", name, strip_parens(a), strip_parens(b));
    }
    case BinOp::Div:
    case BinOp::Mod:
    case BinOp::TruncDiv:
    case BinOp::TruncMod: {
      bool floor = op == BinOp::Div || op == BinOp::Mod;
      bool div = op == BinOp::Div || op == BinOp::TruncDiv;
      ValueRange rb = value_range(eb, scope_.ranges, mode_.wide);
      // C's / and % agree with te's where the divisor is never 0 (nor -1, whose
      // MIN / -1 overflows), and for floor semantics where both sides are >= 0.
      bool plain;
      if (ct.is_uint())
        plain = rb.lo > 0;
      else if (floor)
        plain = rb.lo > 0 && value_range(ea, scope_.ranges, mode_.wide).nonnegative();
      else
        plain = rb.lo > 0 || rb.hi < -1;
      if (plain) return wrap(paren(fmt::format("{} {} {}", a, div ? "/" : "%", b)));
      DataType work = narrow ? DataType(ct.code(), 32) : ct;
      Helper h = div ? (floor ? Helper::FloorDiv : Helper::TruncDiv) : (floor ? Helper::FloorMod : Helper::TruncMod);
      std::string call = fmt::format("{}({}, {})", helpers_.use(h, work), strip_parens(a), strip_parens(b));
      return narrow ? fmt::format("({}){}", narrow_type, call) : call;
    }
    default: break;
  }
  TE_ICHECK(false, "unhandled integer operator");
  return "";
}

std::string ExprPrinter::float_call(const char* name, DataType t, const std::vector<std::string>& args) {
  std::string list;
  for (size_t i = 0; i < args.size(); ++i) {
    if (i) list += ", ";
    list += is_narrow(t) ? to_float(t, args[i]) : strip_parens(args[i]);
  }
  std::string c = fmt::format("{}({})", name, list);
  return is_narrow(t) ? from_float(t, c) : c;
}

std::string ExprPrinter::call(const CallNode* n) {
  DataType t = n->dtype.element_of();
  if (n->op == Intrinsic::Extern) return extern_call(n);
  if (is_bitwise(n->op)) return bitwise(n);
  switch (n->op) {
    case Intrinsic::IfThenElse:
      return paren(
          fmt::format("{} ? {} : {}", print(n->args[0]), print_guarded(n->args[1]), print_guarded(n->args[2])));
    case Intrinsic::Likely: return print(n->args[0]);
    case Intrinsic::WarpShuffleDown: {
      // Every lane of the warp runs the shuffle (lowering puts no thread-dependent branch
      // around it), so the mask names them all. Types narrower than int go through int.
      std::string c =
          fmt::format("__shfl_down_sync(0xffffffffu, {}, {}, 32)", print_bare(n->args[0]), print_bare(n->args[1]));
      bool narrow = !t.is_float() && t.bits() < 32;
      return narrow ? fmt::format("(({}){})", c_type(t), c) : c;
    }
    case Intrinsic::ThreadAllreduce:
      TE_ICHECK(false, "CUDA codegen: a thread_allreduce marker survived lowering");
      break;
    case Intrinsic::IsNan:
    case Intrinsic::IsInf:
    case Intrinsic::IsFinite: {
      DataType at = n->args[0].dtype().element_of();
      if (!at.is_float()) return n->op == Intrinsic::IsFinite ? "true" : "false";
      std::string x = is_narrow(at) ? to_float(at, print(n->args[0])) : print_bare(n->args[0]);
      return fmt::format("{}({})", intrinsic_name(n->op), x);
    }
    case Intrinsic::Sigmoid:
    case Intrinsic::Rsqrt: {
      if (!t.is_float()) break;
      // Each step in the type's precision, as interpret() (float16/bfloat16: in float,
      // rounded once).
      bool f32 = t.bits() != 64, fast = mode_.fast_math && f32;
      std::string x = is_narrow(t) ? to_float(t, print(n->args[0])) : print(n->args[0]);
      std::string one = f32 ? "1.0f" : "1.0", c;
      if (n->op == Intrinsic::Sigmoid)
        c = fast ? fmt::format("__fdividef(1.0f, 1.0f + __expf(-{}))", x)
                 : paren(fmt::format("{} / ({} + {}(-{}))", one, one, f32 ? "expf" : "exp", x));
      else
        c = fast ? fmt::format("rsqrtf({})", strip_parens(x))
                 : paren(fmt::format("{} / {}({})", one, f32 ? "sqrtf" : "sqrt", strip_parens(x)));
      return is_narrow(t) ? from_float(t, c) : c;
    }
    default: break;
  }
  DataType at = n->args[0].dtype().element_of();
  if (!at.is_float()) {
    switch (n->op) {
      case Intrinsic::Floor:
      case Intrinsic::Ceil:
      case Intrinsic::Round:
      case Intrinsic::NearbyInt:
      case Intrinsic::Trunc: return print(n->args[0]);
      case Intrinsic::Abs: {
        if (at.is_uint()) return print(n->args[0]);
        DataType ct = compute_type(at);
        std::string name = helpers_.use(Helper::Abs, ct.bits() < 32 ? Int(32) : ct);
        std::string c = fmt::format("{}({})", name, print_bare(n->args[0]));
        return ct.bits() < 32 ? fmt::format("({}){}", c_type(ct), c) : c;
      }
      case Intrinsic::Fma: {
        auto product = make_binary(BinOp::Mul, n->args[0], n->args[1]);
        return int_arith(BinOp::Add, at, product, n->args[2]);
      }
      default:
        throw Error(
            fmt::format("CUDA codegen: {} needs a float argument, got {}", intrinsic_name(n->op), at.to_string()));
    }
  }
  std::vector<std::string> args;
  for (const Expr& a : n->args) args.push_back(print(a));
  // float16/bfloat16 math runs in float and rounds once, like the interpreter.
  int bits = is_narrow(t) ? 32 : t.bits();
  return float_call(math_name(n->op, bits, mode_.fast_math).c_str(), t, args);
}

// call_extern: the user's __device__ function (CudaOptions::extern_headers), called with
// arguments of exactly the call's types, so that overloads resolve as te's types say. A
// vectorized call prints once per lane, as every vector expression does.
std::string ExprPrinter::extern_call(const CallNode* n) {
  if (mode_.host)
    throw Error(
        fmt::format("CUDA codegen: call_extern '{}' is outside every kernel; host code cannot call "
                    "__device__ functions (bind the loops that compute it to blockIdx/threadIdx)",
                    n->extern_name));
  std::vector<std::string> args;
  for (const Expr& a : n->args) {
    DataType at = a.dtype().element_of();
    std::string v = print_bare(a);
    // In 64-bit index code an int32 value is held in an int64_t: pass the int32 itself.
    args.push_back(compute_type(at) != at ? fmt::format("({})({})", c_type(at), v) : v);
  }
  return fmt::format("{}({})", n->extern_name, fmt::join(args, ", "));
}

// te's bitwise operations on the real type (in wide mode an int32 is held in int64: the
// shifts and popcount must see 32 bits); types narrower than int work in 32 bits, where
// te's results are the same once wrapped back.
std::string ExprPrinter::bitwise(const CallNode* n) {
  DataType t = n->dtype.element_of();
  if (!t.is_integer())
    throw Error(fmt::format("CUDA codegen: {} needs integer arguments, got {}", intrinsic_name(n->op), t.to_string()));
  DataType ct = compute_type(t);
  DataType work = t.bits() < 32 ? DataType(t.code(), 32) : t;
  std::vector<std::string> args;
  for (const Expr& a : n->args) args.push_back(ct == work ? print(a) : fmt::format("({}){}", c_type(work), print(a)));
  auto back = [&](const std::string& s) { return ct == work ? s : fmt::format("({}){}", c_type(ct), s); };
  auto sym = [&](const char* op) { return back(paren(fmt::format("{} {} {}", args[0], op, args[1]))); };
  switch (n->op) {
    case Intrinsic::BitAnd: return sym("&");
    case Intrinsic::BitOr: return sym("|");
    case Intrinsic::BitXor: return sym("^");
    case Intrinsic::BitNot: return back(paren("~" + args[0]));
    case Intrinsic::Popcount: {
      std::string bits = fmt::format("({})({}){}", t.bits() == 64 ? "unsigned long long" : "uint32_t",
                                     c_type(DataType(DataType::Code::UInt, t.bits())), args[0]);
      return fmt::format("({}){}({})", c_type(ct), t.bits() == 64 ? "__popcll" : "__popc", bits);
    }
    default: break;
  }
  bool left = n->op == Intrinsic::ShiftLeft;
  // An amount known to lie in [0, width) is C's shift (on the unsigned type for <<).
  ValueRange amount = value_range(n->args[1], scope_.ranges, mode_.wide);
  if (amount.lo >= 0 && amount.hi < t.bits()) {
    if (!left) return sym(">>");
    std::string u = c_type(DataType(DataType::Code::UInt, work.bits()));
    return back(fmt::format("({})(({}){} << {})", c_type(work), u, args[0], args[1]));
  }
  std::string name = helpers_.use(left ? Helper::ShiftLeft : Helper::ShiftRight, work);
  return back(fmt::format("{}({}, {})", name, strip_parens(args[0]), strip_parens(args[1])));
}

std::string ExprPrinter::buffer_name(const Buffer& b) {
  auto it = scope_.buffers.find(b.get());
  if (it != scope_.buffers.end()) return it->second;
  auto by_name = scope_.buffers_by_name.find(b.name());
  if (by_name != scope_.buffers_by_name.end()) return by_name->second;
  throw Error(fmt::format("CUDA codegen: buffer '{}' is accessed but is neither a parameter nor allocated", b.name()));
}

// An index read from memory (a gather, A[B[i]]) can be anything: unless its range is
// provably inside the buffer (clamped, as grid_sample's taps are), it goes through a
// helper that stops the kernel when it is outside.
std::string ExprPrinter::checked_index(const Buffer& buf, const Expr& index) {
  std::string printed = print_bare(index);
  if (!index_needs_check(buf, index, scope_.data_vars, scope_.ranges, mode_.wide)) return printed;
  DataType it = compute_type(index.dtype());
  Expr extent = make_const(it, 1);
  for (const Expr& d : buf.shape()) extent = extent * te::cast(it, d);
  return fmt::format("{}({}, {})", helpers_.use(Helper::CheckedIndex, it), printed, print_bare(extent));
}

std::string ExprPrinter::load(const LoadNode* n) {
  if (mode_.host)
    throw Error(
        fmt::format("CUDA codegen: '{}' is read outside every kernel; host code cannot read device "
                    "memory (bind the loops that read it to blockIdx/threadIdx)",
                    n->buffer.name()));
  if (n->indices.size() != 1)
    throw Error(
        fmt::format("CUDA codegen: load from '{}' has {} indices; the CUDA backend takes flattened "
                    "loop IR (one index per access)",
                    n->buffer.name(), n->indices.size()));
  DataType t = n->dtype.element_of();
  auto vec = vector_loads_.find(n);
  if (vec != vector_loads_.end() && lane_.size() == 1 && lane_[0] >= '0' && lane_[0] <= '7')
    return vec->second.array ? fmt::format("{}.v[{}]", vec->second.name, lane_)
                             : fmt::format("{}.{}", vec->second.name, "xyzw"[lane_[0] - '0']);
  if (auto slot = fragment_slots_.find(n); slot != fragment_slots_.end()) {
    std::string access = fmt::format("{}[{}]", buffer_name(n->buffer), slot->second);
    return compute_type(t) != t ? fmt::format("({}){}", compute_c_type(t), access) : access;
  }
  std::string cond = n->predicate.defined() ? print(n->predicate) : "";
  // A predicated load reads only where its predicate holds: its index is guarded too.
  if (!cond.empty()) ++guarded_;
  std::string access = fmt::format("{}[{}]", buffer_name(n->buffer),
                                   swizzled_index(helpers_, n->buffer, checked_index(n->buffer, n->indices[0])));
  if (!cond.empty()) --guarded_;
  if (compute_type(t) != t) access = fmt::format("({}){}", compute_c_type(t), access);
  if (cond.empty()) return access;
  return paren(fmt::format("{} ? {} : {}", cond, access, zero_literal(compute_type(t))));
}

bool ExprPrinter::index_is_checked(const Buffer& buf, const Expr& index) const {
  return index_needs_check(buf, index, scope_.data_vars, scope_.ranges, mode_.wide);
}

std::string ExprPrinter::let(const LetNode* n) {
  DataType vt = n->var.dtype();
  std::string type = compute_c_type(vt);
  std::string name = names_.unique(n->var.name());
  std::string value = print_bare(n->value);
  scope_.vars[n->var.get()] = VarBinding{name, compute_type(vt)};
  scope_.ranges[n->var.get()] = value_range(n->value, scope_.ranges, mode_.wide);
  note_let(scope_.data_vars, n->var.get(), n->value);
  if (guarded_ == 0) {
    hoisted_.push_back(fmt::format("const {} {} = {};", type, name, value));
    return print(n->body);
  }
  // Inside code C may skip, the value must not be computed ahead: a lambda keeps the
  // evaluation where it is.
  std::string body = print_bare(n->body);
  return fmt::format("([&]() -> {} {{ const {} {} = {}; return {}; }}())", compute_c_type(n->dtype), type, name, value,
                     body);
}

}  // namespace te::cuda
