#include "simplify_check.h"

#include <fmt/format.h>

#include <limits>
#include <map>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "expr_gen.h"

namespace te::fuzz {
namespace {

constexpr int kPoints = 12;  // variable assignments per expression case
constexpr int kRuns = 4;     // variable assignments per statement case
constexpr int64_t kOutSize = 64;

int64_t type_min(DataType t) { return t.is_uint() || t.is_bool() ? 0 : *as_const_int(min_value(t)); }
int64_t type_max(DataType t) {  // uint64 is capped at INT64_MAX: VarBounds hold int64
  if (t.is_bool()) return 1;
  if (t == UInt(64)) return std::numeric_limits<int64_t>::max();
  return *as_const_int(max_value(t));
}

// The free variables of a case (two of each type), their bounds and values.
struct Vars {
  std::vector<Var> vars;
  VarBounds bounds;

  Vars(Rng& rng, bool bf16) : bf16_(bf16) {
    for (DataType t : bf16 ? types_with_bfloat16() : all_scalar_types())
      for (int k = 0; k < 2; ++k) vars.emplace_back(fmt::format("{}_{}", t.is_bool() ? "b" : t.to_string(), k), t);
    for (const Var& v : vars) {
      DataType t = v.dtype();
      if (!t.is_integer() || rng.chance(40)) continue;
      int64_t lo, hi;
      switch (rng.below(4)) {
        case 0: lo = 0, hi = rng.range(0, 100); break;
        case 1: lo = rng.range(-50, 0), hi = lo + rng.range(0, 100); break;
        case 2: lo = type_min(t), hi = lo + rng.range(0, 300); break;
        default: lo = type_max(t) - rng.range(0, 300), hi = type_max(t); break;
      }
      lo = std::max(lo, type_min(t));
      hi = std::min(hi, type_max(t));
      if (lo <= hi) bounds[v.get()] = Interval{lo, hi};
    }
  }

  // An immediate value for v: inside its bounds (edges often), else an edge value.
  Expr sample(Rng& rng, const Var& v) const {
    DataType t = v.dtype();
    auto it = bounds.find(v.get());
    if (it != bounds.end()) {
      int64_t lo = it->second.min, hi = it->second.max;
      switch (rng.below(4)) {
        case 0: return make_const(t, lo);
        case 1: return make_const(t, hi);
        default: {
          uint64_t width = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
          uint64_t r = width == std::numeric_limits<uint64_t>::max() ? rng.bits() : rng.below(width + 1);
          return make_const(t, static_cast<int64_t>(static_cast<uint64_t>(lo) + r));
        }
      }
    }
    ExprGenOptions o;
    o.bfloat16 = bf16_;
    ExprGen g(rng, o);
    return g.constant(t);
  }

  std::string bounds_text() const {
    std::string s;
    for (const Var& v : vars) {
      auto it = bounds.find(v.get());
      if (it != bounds.end()) s += fmt::format(" {} in [{}, {}]", v.name(), it->second.min, it->second.max);
    }
    return s.empty() ? " (none)" : s;
  }

 private:
  bool bf16_ = false;
};

Param buffer_param(const Buffer& b) {
  Param p;
  p.buffer = b;
  return p;
}

// Lane counts must agree for pow and fma; a scalar operand is broadcast.
void match_lanes(std::vector<Expr>& args) {
  int lanes = 1;
  for (const Expr& a : args) lanes = std::max(lanes, a.dtype().lanes());
  for (Expr& a : args)
    if (a.dtype().lanes() != lanes) a = broadcast(a, lanes);
}

// Rebuilds a scalar expression with some variables replaced by vectors, through the DSL
// builders (which broadcast the scalar side of each operation).
class Lifter {
 public:
  explicit Lifter(std::map<const VarNode*, Expr> vars) : vars_(std::move(vars)) {}

  Expr lift(const Expr& e) {
    switch (e.kind()) {
      case ExprKind::IntImm:
      case ExprKind::FloatImm: return e;
      case ExprKind::Var: {
        auto it = vars_.find(e.as<VarNode>());
        return it == vars_.end() ? e : it->second;
      }
      case ExprKind::Cast: return cast(e.dtype().element_of(), lift(e.as<CastNode>()->value));
      case ExprKind::Binary: {
        auto* n = e.as<BinaryNode>();
        return make_binary(n->op, lift(n->a), lift(n->b));
      }
      case ExprKind::Not: return !lift(e.as<NotNode>()->a);
      case ExprKind::Select: {
        auto* n = e.as<SelectNode>();
        return select(lift(n->cond), lift(n->true_value), lift(n->false_value));
      }
      case ExprKind::Let: {
        auto* n = e.as<LetNode>();
        Expr value = lift(n->value);
        if (value.dtype() == n->var.dtype()) return let(n->var, value, lift(n->body));
        // Variables are scalars: a value that became a vector is substituted instead.
        vars_[n->var.get()] = value;
        return lift(n->body);
      }
      case ExprKind::Call: {
        auto* n = e.as<CallNode>();
        std::vector<Expr> a;
        for (const Expr& x : n->args) a.push_back(lift(x));
        switch (n->op) {
          case Intrinsic::Floor: return floor(a[0]);
          case Intrinsic::Ceil: return ceil(a[0]);
          case Intrinsic::Round: return round(a[0]);
          case Intrinsic::NearbyInt: return nearbyint(a[0]);
          case Intrinsic::Trunc: return trunc(a[0]);
          case Intrinsic::Abs: return abs(a[0]);
          case Intrinsic::Exp: return exp(a[0]);
          case Intrinsic::Log: return log(a[0]);
          case Intrinsic::Sqrt: return sqrt(a[0]);
          case Intrinsic::Tanh: return tanh(a[0]);
          case Intrinsic::Likely: return likely(a[0]);
          case Intrinsic::Pow: match_lanes(a); return pow(a[0], a[1]);
          case Intrinsic::Fma: match_lanes(a); return fma(a[0], a[1], a[2]);
          case Intrinsic::IfThenElse: return if_then_else(a[0], a[1], a[2]);
          case Intrinsic::Sin: return sin(a[0]);
          case Intrinsic::Cos: return cos(a[0]);
          case Intrinsic::Tan: return tan(a[0]);
          case Intrinsic::Asin: return asin(a[0]);
          case Intrinsic::Acos: return acos(a[0]);
          case Intrinsic::Atan: return atan(a[0]);
          case Intrinsic::Atan2: match_lanes(a); return atan2(a[0], a[1]);
          case Intrinsic::Sinh: return sinh(a[0]);
          case Intrinsic::Cosh: return cosh(a[0]);
          case Intrinsic::Erf: return erf(a[0]);
          case Intrinsic::Sigmoid: return sigmoid(a[0]);
          case Intrinsic::Exp2: return exp2(a[0]);
          case Intrinsic::Log2: return log2(a[0]);
          case Intrinsic::Log10: return log10(a[0]);
          case Intrinsic::Log1p: return log1p(a[0]);
          case Intrinsic::Expm1: return expm1(a[0]);
          case Intrinsic::Rsqrt: return rsqrt(a[0]);
          case Intrinsic::IsNan: return isnan(a[0]);
          case Intrinsic::IsInf: return isinf(a[0]);
          case Intrinsic::IsFinite: return isfinite(a[0]);
          case Intrinsic::BitAnd: match_lanes(a); return a[0] & a[1];
          case Intrinsic::BitOr: match_lanes(a); return a[0] | a[1];
          case Intrinsic::BitXor: match_lanes(a); return a[0] ^ a[1];
          case Intrinsic::ShiftLeft: match_lanes(a); return a[0] << a[1];
          case Intrinsic::ShiftRight: match_lanes(a); return a[0] >> a[1];
          case Intrinsic::BitNot: return ~a[0];
          case Intrinsic::Popcount: return popcount(a[0]);
          case Intrinsic::WarpShuffleDown:
          case Intrinsic::ThreadAllreduce: break;  // GPU-only: the generator never makes them
          case Intrinsic::Extern: break;           // nor calls of functions outside te
        }
        break;
      }
      default: break;
    }
    throw std::logic_error("lift: unexpected node " + to_string(e));
  }

 private:
  std::map<const VarNode*, Expr> vars_;
};

// A function evaluating `outputs` (name, expression) at kPoints assignments of vars: one
// parameter array of kPoints values per variable, one output array of kPoints * lanes
// elements per expression.
LoweredFunc eval_function(const Vars& vs, const std::vector<std::pair<std::string, Expr>>& outputs,
                          std::vector<Buffer>* var_buffers, std::vector<Buffer>* out_buffers) {
  Var k("k");
  std::vector<Stmt> stores;
  for (const auto& [name, e] : outputs) {
    const int lanes = e.dtype().lanes();
    Buffer b(name, e.dtype().element_of(), {Expr(kPoints * lanes)});
    out_buffers->push_back(b);
    Expr idx = lanes == 1 ? Expr(k) : ramp(k * lanes, 1, lanes);
    stores.push_back(store(b, e, {idx}));
  }
  Stmt body = seq(stores);
  for (const Var& v : vs.vars) {
    Buffer b("V_" + v.name(), v.dtype(), {Expr(kPoints)});
    var_buffers->push_back(b);
    body = let_stmt(v, load(b, {Expr(k)}), body);
  }
  LoweredFunc f{"simplify_check", {}, for_loop(k, 0, kPoints, ForKind::Serial, body)};
  for (const Buffer& b : *var_buffers) f.params.push_back(buffer_param(b));
  for (const Buffer& b : *out_buffers) f.params.push_back(buffer_param(b));
  return f;
}

// The values of every variable at every point, as arrays for eval_function.
std::vector<NDArray> sample_values(Rng& rng, const Vars& vs, int points, std::vector<std::string>* text) {
  std::vector<NDArray> arrays;
  text->assign(static_cast<size_t>(points), "");
  for (const Var& v : vs.vars) {
    NDArray a = NDArray::empty({points}, v.dtype());
    for (int p = 0; p < points; ++p) {
      Expr value = vs.sample(rng, v);
      store_immediate(a, p, value);
      (*text)[static_cast<size_t>(p)] += " " + v.name() + "=" + element_text(a, p);
    }
    arrays.push_back(a);
  }
  return arrays;
}

CaseResult fail(const std::string& origin, const std::string& what) {
  CaseResult r;
  r.status = CaseResult::Status::Fail;
  r.report = "simplifier fuzz case " + origin + "\n" + what;
  return r;
}

// Runs f on values + zeroed outputs; returns the outputs, or the exception message.
std::vector<NDArray> run(const LoweredFunc& f, const std::vector<NDArray>& values, const std::vector<Buffer>& outs,
                         std::string* error) {
  std::vector<Argument> args;
  for (const NDArray& a : values) args.emplace_back(a);
  std::vector<NDArray> results;
  for (const Buffer& b : outs) {
    std::vector<int64_t> shape;
    for (const Expr& e : b.shape()) shape.push_back(*as_const_int(e));
    results.push_back(NDArray::empty(shape, b.dtype()));
    args.emplace_back(results.back());
  }
  try {
    interpret(f, args);
  } catch (const std::exception& e) {
    *error = e.what();
  }
  return results;
}

// ---- Expressions (scalar and vector) ----
CaseResult check_expr(Rng& rng, const std::string& origin, bool vector, bool bf16) {
  Vars vs(rng, bf16);
  ExprGenOptions o;
  o.bfloat16 = bf16;
  ExprGen g(rng, o);
  for (const Var& v : vs.vars) g.add_leaf(v);
  DataType t = rng.pick(bf16 ? types_with_bfloat16() : all_scalar_types());
  Expr scalar = g.gen(t, static_cast<int>(rng.range(1, 5)));
  Expr e = scalar;
  std::vector<std::pair<std::string, Expr>> outputs;
  std::string vec_text;
  if (vector) {
    static const int kLanes[] = {2, 3, 4, 8};
    const int lanes = rng.pick(kLanes);
    std::map<const VarNode*, Expr> lifted;
    std::map<const VarNode*, int64_t> strides;
    for (const Var& v : vs.vars) {
      if (v.dtype().is_integer() && rng.chance(60)) {
        int64_t stride = v.dtype().is_uint() ? rng.range(0, 3) : rng.range(-2, 3);
        lifted[v.get()] = ramp(v, make_const(v.dtype(), stride), lanes);
        strides[v.get()] = stride;
      } else if (rng.chance(50)) {
        lifted[v.get()] = broadcast(v, lanes);
      }
    }
    e = Lifter(lifted).lift(scalar);
    if (e.dtype().lanes() == 1) e = broadcast(e, lanes);
    // Lane j of the vector is the scalar expression at base + j * stride.
    std::vector<Expr> lane_exprs;
    for (int j = 0; j < lanes; ++j) {
      std::vector<std::pair<Var, Expr>> sub;
      for (const auto& [node, stride] : strides) {
        for (const Var& v : vs.vars)
          if (v.get() == node) sub.emplace_back(v, v + make_const(v.dtype(), stride * j));
      }
      lane_exprs.push_back(substitute(scalar, sub));
    }
    // One output per lane, stored as scalars.
    for (int j = 0; j < lanes; ++j) outputs.emplace_back("LANE" + std::to_string(j), lane_exprs[j]);
    vec_text = fmt::format("vector of {} lanes: {}\n", lanes, to_string(e));
  }
  Expr s, s2;
  try {
    s = simplify(e, vs.bounds);
    s2 = simplify(s, vs.bounds);
  } catch (const std::exception& ex) {
    return fail(origin,
                fmt::format("expr: {}\nbounds:{}\nsimplify threw: {}\n", to_string(e), vs.bounds_text(), ex.what()));
  }
  std::string header =
      fmt::format("{}expr: {}\nsimplified: {}\nbounds:{}\n", vec_text, to_string(e), to_string(s), vs.bounds_text());
  if (s.dtype() != e.dtype())
    return fail(origin,
                header + fmt::format("the type changed: {} -> {}\n", e.dtype().to_string(), s.dtype().to_string()));
  if (!equal(s2, s)) return fail(origin, header + "not idempotent; a second pass gives: " + to_string(s2) + "\n");

  outputs.emplace_back("WANT", e);
  outputs.emplace_back("GOT", s);
  std::vector<Buffer> var_buffers, out_buffers;
  LoweredFunc f = eval_function(vs, outputs, &var_buffers, &out_buffers);
  std::vector<std::string> points;
  std::vector<NDArray> values = sample_values(rng, vs, kPoints, &points);
  std::string error;
  std::vector<NDArray> res = run(f, values, out_buffers, &error);
  if (!error.empty()) return fail(origin, header + "interpret threw: " + error + "\n");
  const NDArray& want = res[res.size() - 2];
  const NDArray& got = res.back();
  std::string diff = compare_arrays(want, got, Compare::Bits);
  if (!diff.empty()) {
    std::string pts;
    for (int p = 0; p < kPoints; ++p) pts += fmt::format("  point {}:{}\n", p, points[static_cast<size_t>(p)]);
    return fail(origin, header + "values differ (want: unsimplified, element = point * lanes + lane):\n" + diff +
                            "variable values:\n" + pts);
  }
  if (vector) {
    // The vector against its lanes evaluated one by one.
    const int lanes = e.dtype().lanes();
    NDArray by_lane = NDArray::empty({kPoints * lanes}, e.dtype().element_of());
    const size_t bytes = static_cast<size_t>(by_lane.dtype().bytes());
    for (int p = 0; p < kPoints; ++p)
      for (int j = 0; j < lanes; ++j)
        std::memcpy(static_cast<uint8_t*>(by_lane.data()) + (static_cast<size_t>(p * lanes + j)) * bytes,
                    static_cast<const uint8_t*>(res[static_cast<size_t>(j)].data()) + static_cast<size_t>(p) * bytes,
                    bytes);
    std::string lane_diff = compare_arrays(by_lane, want, Compare::Bits);
    if (!lane_diff.empty())
      return fail(origin, header + "scalar expression: " + to_string(scalar) +
                              "\nthe vector differs from the scalar expression evaluated at each lane (want: "
                              "scalar, element = point * lanes + lane):\n" +
                              lane_diff);
  }
  return CaseResult{};
}

// ---- Statements ----
class StmtGen {
 public:
  StmtGen(Rng& rng, ExprGen& g, bool bf16)
      : rng_(rng), g_(g), types_(bf16 ? types_with_bfloat16() : all_scalar_types()) {
    std::vector<DataType> out_types = {Int(32), Float(32), Float(16), Float(64), UInt(8), Int(64), Bool()};
    if (bf16) out_types.push_back(BFloat(16));
    for (DataType t : out_types)
      outs.emplace_back("OUT_" + (t.is_bool() ? std::string("bool") : t.to_string()), t,
                        std::vector<Expr>{Expr(static_cast<int>(kOutSize))});
  }

  std::vector<Buffer> outs;

  Stmt gen(int depth) {
    int choice = depth <= 0 ? 0 : static_cast<int>(rng_.below(9));
    switch (choice) {
      case 1:
      case 2: {
        Var v("v" + std::to_string(loops_++));
        Expr mn = rng_.chance(60) ? Expr(static_cast<int>(rng_.range(-2, 2))) : g_.gen(Int(32), 1) % 4;
        Expr ext = rng_.chance(70) ? Expr(static_cast<int>(rng_.range(0, 3))) : min(max(g_.gen(Int(32), 1), 0), 3);
        static const ForKind kKinds[] = {ForKind::Serial, ForKind::Parallel, ForKind::Unrolled, ForKind::Vectorized};
        g_.add_leaf(v);
        Stmt body = gen(depth - 1);
        g_.pop_leaf();
        return for_loop(v, mn, ext, rng_.pick(kKinds), body);
      }
      case 3: {
        Expr c = g_.gen_bool(2);
        Stmt t = gen(depth - 1);
        return rng_.chance(50) ? if_then_else(c, t) : if_then_else(c, t, gen(depth - 1));
      }
      case 4: {
        DataType t = rng_.pick(types_);
        Var v("t" + std::to_string(lets_++), t);
        Expr value = g_.gen(t, 2);
        g_.add_leaf(v);
        Stmt body = gen(depth - 1);
        g_.pop_leaf();
        return let_stmt(v, value, body);
      }
      case 5: return seq({gen(depth - 1), gen(depth - 1)});
      case 6: {
        Expr c = g_.gen_bool(1);
        std::string message = "assert " + std::to_string(rng_.below(1000));
        return assert_stmt(c, message, gen(depth - 1));
      }
      case 7: return evaluate(g_.gen(rng_.pick(types_), 2));
      case 8: return vector_store();
      default: {
        const Buffer& b = rng_.pick(outs);
        Expr p = rng_.chance(15) ? g_.gen_bool(1) : Expr();
        Expr value = g_.gen(b.dtype(), 2);
        Expr index = g_.gen(Int(32), 2) % static_cast<int>(kOutSize);
        return store(b, value, {index}, p);
      }
    }
  }

 private:
  Stmt vector_store() {
    static const int kLanes[] = {2, 4, 8};
    const int lanes = rng_.pick(kLanes);
    const Buffer& b = rng_.pick(outs);
    // Operands drawn in order (see ExprGen::two).
    Expr first = b.dtype().is_bool() ? g_.gen_bool(2) : g_.gen(b.dtype(), 1);
    Expr ramp_base = g_.gen(Int(32), 1);
    Expr value = b.dtype().is_bool() ? broadcast(first, lanes) && (ramp(ramp_base, 1, lanes) < 3)
                                     : broadcast(first, lanes) + cast(b.dtype(), ramp(ramp_base, 1, lanes));
    Expr base = g_.gen(Int(32), 2) % static_cast<int>(kOutSize - lanes + 1);
    return store(b, value, {ramp(base, 1, lanes)});
  }

  Rng& rng_;
  ExprGen& g_;
  const std::vector<DataType>& types_;
  int loops_ = 0, lets_ = 0;
};

CaseResult check_stmt(Rng& rng, const std::string& origin, bool bf16) {
  Vars vs(rng, bf16);
  ExprGenOptions o;
  o.bfloat16 = bf16;
  ExprGen g(rng, o);
  for (const Var& v : vs.vars) g.add_leaf(v);
  StmtGen sg(rng, g, bf16);
  Stmt s = sg.gen(4);
  Stmt r, r2;
  try {
    r = simplify(s, vs.bounds);
    r2 = simplify(r, vs.bounds);
  } catch (const std::exception& ex) {
    return fail(origin,
                fmt::format("stmt:\n{}bounds:{}\nsimplify threw: {}\n", to_string(s), vs.bounds_text(), ex.what()));
  }
  std::string header = fmt::format("stmt:\n{}simplified:\n{}bounds:{}\n", to_string(s), to_string(r), vs.bounds_text());
  if (!equal(r2, r)) return fail(origin, header + "not idempotent; a second pass gives:\n" + to_string(r2));

  // Both versions run kRuns times (one variable assignment each) into zeroed buffers.
  auto make = [&](const Stmt& body_in, std::vector<Buffer>* var_buffers) {
    Var p("p");
    Stmt body = body_in;
    for (const Var& v : vs.vars) {
      Buffer b("V_" + v.name(), v.dtype(), {Expr(kRuns)});
      var_buffers->push_back(b);
      body = let_stmt(v, load(b, {Expr(p)}), body);
    }
    LoweredFunc f{"simplify_check", {}, for_loop(p, 0, kRuns, ForKind::Serial, body)};
    for (const Buffer& b : *var_buffers) f.params.push_back(buffer_param(b));
    for (const Buffer& b : sg.outs) f.params.push_back(buffer_param(b));
    return f;
  };
  std::vector<Buffer> vb1, vb2;
  LoweredFunc f1 = make(s, &vb1), f2 = make(r, &vb2);
  std::vector<std::string> points;
  std::vector<NDArray> values = sample_values(rng, vs, kRuns, &points);
  std::string e1, e2;
  std::vector<NDArray> want = run(f1, values, sg.outs, &e1);
  std::vector<NDArray> got = run(f2, values, sg.outs, &e2);
  std::string pts;
  for (int p = 0; p < kRuns; ++p) pts += fmt::format("  run {}:{}\n", p, points[static_cast<size_t>(p)]);
  if (e1 != e2)
    return fail(origin, header + fmt::format("interpret: unsimplified {}, simplified {}\nvariable values:\n{}",
                                             e1.empty() ? "ran" : "threw '" + e1 + "'",
                                             e2.empty() ? "ran" : "threw '" + e2 + "'", pts));
  std::string diff;
  for (size_t k = 0; k < want.size(); ++k) {
    std::string d = compare_arrays(want[k], got[k], Compare::Bits);
    if (!d.empty()) diff += "  buffer " + sg.outs[k].name() + ":\n" + d;
  }
  if (!diff.empty())
    return fail(origin, header + "the buffers differ (want: unsimplified):\n" + diff + "variable values:\n" + pts);
  return CaseResult{};
}

CaseResult check(Rng& rng, const std::string& origin, bool bf16) {
  try {
    switch (rng.below(10)) {
      case 0:
      case 1:
      case 2:
      case 3: return check_expr(rng, origin, false, bf16);
      case 4:
      case 5:
      case 6: return check_expr(rng, origin, true, bf16);
      default: return check_stmt(rng, origin, bf16);
    }
  } catch (const std::exception& e) {
    return fail(origin, std::string("building the case threw: ") + e.what() + "\n");
  }
}

}  // namespace

CaseResult check_simplify_case(uint64_t seed, bool bfloat16) {
  Rng rng(seed);
  return check(rng,
               fmt::format("seed {} (re-run: te_fuzz --simplify{} --seed {} --count 1)", seed,
                           bfloat16 ? " --bfloat16" : "", seed),
               bfloat16);
}

CaseResult check_simplify_bytes(const uint8_t* data, size_t size) {
  Rng rng(data, size);
  return check(rng, fmt::format("from {} bytes of fuzzer input", size), false);
}

}  // namespace te::fuzz
