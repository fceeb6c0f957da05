// The matcher: loops (count, extents, roles), then the update statement walked side by
// side with the declaration's (operations, types, constants), then each access: affine in
// the loops, with the declaration's coefficients. Where the declaration's region starts
// (the offset) is the access at the loops' first iteration: anything, the outer loops'
// and the buffer's layout.
#include "tensorize/match.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "expr/reads_memory.h"
#include "expr/analysis.h"
#include "tensorize/declaration.h"
#include "te/error.h"

namespace te::tensorize {

namespace {

// e as sum(coeff[j] * vars[j]) + rest, where rest uses none of vars; nullopt when e is
// not affine in vars. Integer casts are looked through (indices are integers; a cast
// that wraps would break the region's shape, and te's flat indices do not wrap).
struct Affine {
  std::vector<Expr> coeff;
};

std::optional<Affine> affine(const Expr& e, const std::vector<Var>& vars) {
  Affine out;
  out.coeff.assign(vars.size(), make_const(e.dtype().with_lanes(1), 0));
  if (!uses_any_of(e, vars)) return out;
  if (auto* v = e.as<VarNode>()) {
    for (size_t j = 0; j < vars.size(); ++j)
      if (vars[j].get() == v) out.coeff[j] = make_const(e.dtype(), 1);
    return out;
  }
  if (auto* c = e.as<CastNode>()) {
    if (!c->value.dtype().is_integer()) return std::nullopt;
    auto a = affine(c->value, vars);
    if (!a) return std::nullopt;
    for (Expr& x : a->coeff) x = cast(e.dtype(), x);
    return a;
  }
  auto* b = e.as<BinaryNode>();
  if (b == nullptr) return std::nullopt;
  if (b->op == BinOp::Add || b->op == BinOp::Sub) {
    auto x = affine(b->a, vars), y = affine(b->b, vars);
    if (!x || !y) return std::nullopt;
    for (size_t j = 0; j < vars.size(); ++j)
      out.coeff[j] = b->op == BinOp::Add ? x->coeff[j] + y->coeff[j] : x->coeff[j] - y->coeff[j];
    return out;
  }
  if (b->op == BinOp::Mul) {
    bool a_free = !uses_any_of(b->a, vars), b_free = !uses_any_of(b->b, vars);
    if (!a_free && !b_free) return std::nullopt;
    auto x = affine(a_free ? b->b : b->a, vars);
    if (!x) return std::nullopt;
    const Expr& scale = a_free ? b->a : b->b;
    for (size_t j = 0; j < vars.size(); ++j) out.coeff[j] = x->coeff[j] * scale;
    return out;
  }
  return std::nullopt;
}

const char* op_text(const Expr& e) {
  switch (e->kind) {
    case ExprKind::IntImm: return "an integer constant";
    case ExprKind::FloatImm: return "a float constant";
    case ExprKind::Var: return "a variable";
    case ExprKind::Cast: return "a cast";
    case ExprKind::Binary: return "a binary operation";
    case ExprKind::Not: return "a logical not";
    case ExprKind::Select: return "a select";
    case ExprKind::Load: return "a load";
    case ExprKind::Call: return "a call";
    default: return "an expression";
  }
}

class Matcher {
 public:
  Matcher(const Nest& nest, const TensorIntrinsicNode& in, const VarBounds& known, const std::string& where)
      : nest_(nest), in_(in), known_(known), where_(where), decl_loops_(declaration_loops(in)) {}

  Binding run() {
    check_loops();
    for (const ForNode* f : nest_.loops) {
      const Expr min = simplify(f->min, known_);  // kept alive: as_const_int points into it
      const int64_t* mn = as_const_int(min);
      if (mn != nullptr) known_[f->var.get()] = Interval{*mn, *mn + *as_const_int(simplify(f->extent, known_)) - 1};
    }
    decl_buffers_ = declaration_buffers(in_);
    std::vector<Expr> zero(decl_buffers_.size(), make_const(Int(32), 0));
    // Free strides are variables here, solved from the stage's accesses.
    for (size_t k = 0; k < decl_buffers_.size(); ++k) {
      std::vector<Expr> st = dense_strides(in_, k, Int(32));
      if (k < in_.free_strides.size() && in_.free_strides[k])
        for (size_t d = 0; d + 1 < st.size(); ++d) {
          Var v(fmt::format("{}.stride{}", decl_buffers_[k].name(), d), Int(32));
          stride_vars_.push_back({k, d, v});
          st[d] = v;
        }
      decl_strides_.push_back(st);
    }
    Stmt decl = instantiate(in_, decl_buffers_, zero, decl_strides_, &decl_vars_);
    while (auto* f = decl.as<ForNode>()) decl = f->body;
    const auto* ds = decl.as<StoreNode>();
    TE_ICHECK(ds != nullptr, "tensorize: the declaration's nest holds no store");
    for (const ForNode* f : nest_.loops) stage_vars_.push_back(f->var);
    bound_.assign(decl_buffers_.size(), false);
    binding_.buffers.resize(decl_buffers_.size());
    binding_.offsets.resize(decl_buffers_.size());
    binding_.strides.resize(decl_buffers_.size());
    const StoreNode* s = nest_.store;
    if (s->predicate.defined()) fail("the stage's store has a predicate, the declaration's has none");
    access(s->buffer, s->indices[0], ds->buffer, ds->indices[0]);
    expr(s->value, ds->value);
    for (size_t i = 0; i < bound_.size(); ++i) TE_ICHECK(bound_[i], "tensorize: a declaration tensor was not matched");
    return binding_;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw Error(fmt::format("{}: {}", where_, what)); }

  void check_loops() {
    auto names = [](auto begin, auto end, auto name) {
      std::string out;
      for (auto it = begin; it != end; ++it) out += (out.empty() ? "" : ", ") + name(*it);
      return out;
    };
    if (nest_.loops.size() != decl_loops_.size())
      fail(fmt::format("the nest under the axis has {} loops ({}), the declaration has {} ({})", nest_.loops.size(),
                       names(nest_.loops.begin(), nest_.loops.end(), [](const ForNode* f) { return f->var.name(); }),
                       decl_loops_.size(), names(decl_loops_.begin(), decl_loops_.end(), [](const IterVar& iv) {
                         return iv->var.name();
                       })));
    for (size_t j = 0; j < decl_loops_.size(); ++j) {
      const ForNode* f = nest_.loops[j];
      const IterVar& d = decl_loops_[j];
      const int64_t want = *as_const_int(d->dom.extent);
      Expr extent = simplify(f->extent, known_);
      const int64_t* got = as_const_int(extent);
      if (got == nullptr)
        fail(fmt::format("the loop '{}' has extent {}, not a constant; the declaration's axis '{}' has {}",
                         f->var.name(), to_string(extent), d->var.name(), want));
      if (*got != want)
        fail(fmt::format("the loop '{}' has extent {}, the declaration's axis '{}' has {}", f->var.name(), *got,
                         d->var.name(), want));
      const bool decl_reduce = d->type == IterVarType::Reduce;
      if (nest_.reduce[j] != decl_reduce)
        fail(fmt::format("the loop '{}' is {}, the declaration's axis '{}' is {}", f->var.name(),
                         nest_.reduce[j] ? "a reduction loop" : "data-parallel", d->var.name(),
                         decl_reduce ? "a reduction axis" : "data-parallel"));
    }
  }

  [[noreturn]] void differ(const Expr& s, const Expr& d, const std::string& what) const {
    fail(fmt::format("the expression differs: the stage has {} where the declaration has {} ({})", to_string(s),
                     to_string(d), what));
  }

  void expr(const Expr& s, const Expr& d) {
    if (s.dtype() != d.dtype())
      differ(s, d, fmt::format("type {} against {}", s.dtype().to_string(), d.dtype().to_string()));
    if (s->kind != d->kind) differ(s, d, fmt::format("{} against {}", op_text(s), op_text(d)));
    switch (s->kind) {
      case ExprKind::IntImm:
        if (s.as<IntImmNode>()->value != d.as<IntImmNode>()->value) differ(s, d, "another constant");
        return;
      case ExprKind::FloatImm:
        if (s.as<FloatImmNode>()->value != d.as<FloatImmNode>()->value) differ(s, d, "another constant");
        return;
      case ExprKind::Var:
        for (size_t j = 0; j < decl_vars_.size(); ++j)
          if (d.as<VarNode>() == decl_vars_[j].get() && s.as<VarNode>() == stage_vars_[j].get()) return;
        differ(s, d, "another variable");
      case ExprKind::Cast: return expr(s.as<CastNode>()->value, d.as<CastNode>()->value);
      case ExprKind::Binary: {
        auto* a = s.as<BinaryNode>();
        auto* b = d.as<BinaryNode>();
        if (a->op != b->op) differ(s, d, "another operation");
        expr(a->a, b->a);
        return expr(a->b, b->b);
      }
      case ExprKind::Not: return expr(s.as<NotNode>()->a, d.as<NotNode>()->a);
      case ExprKind::Select: {
        auto* a = s.as<SelectNode>();
        auto* b = d.as<SelectNode>();
        expr(a->cond, b->cond);
        expr(a->true_value, b->true_value);
        return expr(a->false_value, b->false_value);
      }
      case ExprKind::Call: {
        auto* a = s.as<CallNode>();
        auto* b = d.as<CallNode>();
        if (a->op != b->op || a->extern_name != b->extern_name || a->args.size() != b->args.size())
          differ(s, d, "another function");
        for (size_t i = 0; i < a->args.size(); ++i) expr(a->args[i], b->args[i]);
        return;
      }
      case ExprKind::Load: {
        auto* a = s.as<LoadNode>();
        auto* b = d.as<LoadNode>();
        if (a->predicate.defined()) differ(s, d, "a predicated load");
        return access(a->buffer, a->indices[0], b->buffer, b->indices[0]);
      }
      default: differ(s, d, "not supported in a tensorized nest");
    }
  }

  // The stage's access buf[index] against the declaration's dbuf[dindex].
  void access(const Buffer& buf, const Expr& raw_index, const Buffer& dbuf, const Expr& dindex) {
    // With the loops' bounds, (no * 16 + ni) / 16 is no and % 16 is ni: the packed
    // layouts' indices become affine.
    const Expr index = simplify(raw_index, known_);
    size_t k = 0;
    while (!decl_buffers_[k].same_as(dbuf)) ++k;
    const std::string name = fmt::format("'{}' (the declaration's '{}')", buf.name(), dbuf.name());
    if (buf.dtype() != dbuf.dtype())
      fail(fmt::format("the access to {} has type {}, the declaration's {}", name, buf.dtype().to_string(),
                       dbuf.dtype().to_string()));
    auto sa = affine(index, stage_vars_);
    if (!sa) fail(fmt::format("the index of {} is not affine in the loops under the axis: {}", name, to_string(index)));
    auto da = affine(dindex, decl_vars_);
    TE_ICHECK(da.has_value(), "tensorize: a declaration's index is not affine");
    const DataType it = index.dtype();
    std::vector<Expr> got(stage_vars_.size()), want(stage_vars_.size());
    for (size_t j = 0; j < stage_vars_.size(); ++j) {
      got[j] = simplify(sa->coeff[j], known_);
      want[j] = simplify(da->coeff[j]);
    }
    // The region's strides: dense constants, or for free ones what the loop that moves
    // only that dimension says (the declaration's coefficient is c * stride there).
    std::vector<std::pair<Var, Expr>> solved;
    std::vector<Expr> strides = decl_strides_[k];
    const std::vector<Expr> dense = dense_strides(in_, k, it);
    for (const StrideVar& sv : stride_vars_) {
      if (sv.tensor != k) continue;
      Expr value = dense[sv.dim];  // a dimension no loop moves: any
      for (size_t j = 0; j < stage_vars_.size(); ++j) {
        std::optional<int64_t> c = multiple_of(want[j], sv.var);
        if (!c || *c == 0) continue;
        const int64_t* g = as_const_int(got[j]);
        if (*c == 1)
          value = got[j];
        else if (g != nullptr && *g % *c == 0)
          value = make_const(it, *g / *c);
        else
          continue;
        break;
      }
      solved.emplace_back(sv.var, value);
      strides[sv.dim] = value;
    }
    for (size_t j = 0; j < stage_vars_.size(); ++j) {
      Expr w = simplify(cast(it, substitute(want[j], solved)), known_);
      if (!equal(simplify(got[j] - w, known_), make_const(it, 0)))
        fail(
            fmt::format("the access to {} moves by {} elements per iteration of loop '{}', the declaration's "
                        "axis '{}' moves it by {}",
                        name, to_string(got[j]), stage_vars_[j].name(), decl_loops_[j]->var.name(), to_string(w)));
    }
    for (Expr& e : strides) e = simplify(e.dtype() == it ? e : cast(it, e), known_);
    std::vector<std::pair<Var, Expr>> at_start;
    for (const ForNode* f : nest_.loops) at_start.emplace_back(f->var, f->min);
    Expr offset = simplify(substitute(index, at_start), known_);
    if (reads_memory(offset))
      fail(
          fmt::format("the region of {} starts at {}, which reads memory; an intrinsic's regions must start "
                      "where the loops outside the axis say",
                      name, to_string(offset)));
    if (!bound_[k]) {
      bound_[k] = true;
      binding_.buffers[k] = buf;
      binding_.offsets[k] = offset;
      binding_.strides[k] = strides;
      return;
    }
    for (size_t d = 0; d < strides.size(); ++d)
      if (!equal(simplify(binding_.strides[k][d] - strides[d], known_), make_const(it, 0)))
        fail(
            fmt::format("the declaration's '{}' is one region, the stage reads '{}' with stride {} and {} along "
                        "dimension {}",
                        dbuf.name(), buf.name(), to_string(binding_.strides[k][d]), to_string(strides[d]), d));
    if (!binding_.buffers[k].same_as(buf) ||
        !equal(simplify(binding_.offsets[k] - offset, known_), make_const(offset.dtype(), 0)))
      fail(fmt::format("the declaration's '{}' is one region, the stage reads '{}' at {} and '{}' at {}", dbuf.name(),
                       binding_.buffers[k].name(), to_string(binding_.offsets[k]), buf.name(), to_string(offset)));
  }

  const Nest& nest_;
  const TensorIntrinsicNode& in_;
  VarBounds known_;  // the shape variables' bounds, then the nest's loops'
  std::string where_;
  std::vector<IterVar> decl_loops_;
  struct StrideVar {
    size_t tensor, dim;
    Var var;
  };
  // e as c * v for a constant c, if it is that.
  static std::optional<int64_t> multiple_of(const Expr& e, const Var& v) {
    if (e.as<VarNode>() == v.get()) return 1;
    if (auto* b = e.as<BinaryNode>(); b != nullptr && b->op == BinOp::Mul) {
      const int64_t* c = as_const_int(b->a);
      if (c != nullptr && b->b.as<VarNode>() == v.get()) return *c;
      c = as_const_int(b->b);
      if (c != nullptr && b->a.as<VarNode>() == v.get()) return *c;
    }
    return std::nullopt;
  }

  std::vector<Buffer> decl_buffers_;
  std::vector<std::vector<Expr>> decl_strides_;
  std::vector<StrideVar> stride_vars_;
  std::vector<Var> decl_vars_, stage_vars_;
  std::vector<bool> bound_;
  Binding binding_;
};

}  // namespace

Binding match(const Nest& nest, const TensorIntrinsicNode& in, const VarBounds& known, const std::string& where) {
  return Matcher(nest, in, known, where).run();
}

}  // namespace te::tensorize
