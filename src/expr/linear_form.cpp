// Linear forms: an integer expression as sum(coeff * atom) + constant. Rearranging + - and
// * by constants is exact in wrapping arithmetic (it is the ring of integers mod 2^bits),
// so these rewrites need no bounds.
#include <algorithm>

#include "expr/int_arith.h"
#include "expr/simplify_internal.h"

namespace te::simp {

namespace {
// Coefficient arithmetic: signed, wrapped at the type's width.
DataType coeff_type(DataType t) { return Int(t.bits()); }
}  // namespace

int64_t srep(int64_t v, DataType t) { return arith::wrap(v, t.bits(), true); }

void Linear::add_term(const Expr& atom, int64_t coeff) {
  DataType ct = coeff_type(type);
  for (Term& t : terms) {
    if (equal(t.atom, atom)) {
      t.coeff = arith::add(t.coeff, coeff, ct);
      return;
    }
  }
  terms.push_back({atom, srep(coeff, type)});
}

void Linear::add_const(int64_t c) { constant = arith::add(constant, c, coeff_type(type)); }

void Linear::add(const Linear& o, int64_t s) {
  DataType ct = coeff_type(type);
  for (const Term& t : o.terms) add_term(t.atom, arith::mul(t.coeff, s, ct));
  add_const(arith::mul(o.constant, s, ct));
}

void Linear::scale(int64_t c) {
  DataType ct = coeff_type(type);
  for (Term& t : terms) t.coeff = arith::mul(t.coeff, c, ct);
  constant = arith::mul(constant, c, ct);
}

void Linear::drop_zero_terms() {
  std::vector<Term> kept;
  for (Term& t : terms)
    if (t.coeff != 0) kept.push_back(std::move(t));
  terms = std::move(kept);
}

namespace {
void collect(const Expr& e, int64_t scale, Linear* out) {
  DataType ct = coeff_type(out->type);
  if (auto* i = e.as<IntImmNode>()) {
    out->add_const(arith::mul(srep(i->value, out->type), scale, ct));
    return;
  }
  if (auto* b = e.as<BinaryNode>()) {
    switch (b->op) {
      case BinOp::Add:
        collect(b->a, scale, out);
        collect(b->b, scale, out);
        return;
      case BinOp::Sub:
        collect(b->a, scale, out);
        collect(b->b, arith::sub(0, scale, ct), out);
        return;
      case BinOp::Mul:
        if (auto* c = b->b.as<IntImmNode>()) {
          collect(b->a, arith::mul(scale, srep(c->value, out->type), ct), out);
          return;
        }
        if (auto* c = b->a.as<IntImmNode>()) {
          collect(b->b, arith::mul(scale, srep(c->value, out->type), ct), out);
          return;
        }
        break;
      default: break;
    }
  }
  out->add_term(e, scale);
}

bool is_negative(int64_t c, DataType t) {
  int64_t min = arith::wrap(static_cast<int64_t>(uint64_t{1} << (t.bits() - 1)), t.bits(), true);  // INT_MIN
  return c < 0 && c != min;
}

Expr term_expr(const Expr& atom, int64_t magnitude) {
  if (magnitude == 1) return atom;
  return make_bin(BinOp::Mul, atom, make_int(atom.dtype(), magnitude));
}
}  // namespace

Linear linear_of(const Expr& e) {
  Linear l(e.dtype());
  collect(e, 1, &l);
  l.drop_zero_terms();
  return l;
}

Expr linear_to_expr(const Linear& l) {
  DataType t = l.type;
  DataType ct = coeff_type(t);
  Expr acc;
  for (const Term& term : l.terms) {
    if (term.coeff == 0 || is_negative(term.coeff, t)) continue;
    Expr x = term_expr(term.atom, term.coeff);
    acc = acc.defined() ? make_bin(BinOp::Add, acc, x) : x;
  }
  bool constant_done = false;
  for (const Term& term : l.terms) {
    if (term.coeff == 0 || !is_negative(term.coeff, t)) continue;
    if (!acc.defined()) {
      acc = make_int(t, l.constant);  // (k - x): the constant leads when nothing else can
      constant_done = true;
    }
    acc = make_bin(BinOp::Sub, acc, term_expr(term.atom, arith::sub(0, term.coeff, ct)));
  }
  if (!acc.defined()) return make_int(t, l.constant);
  if (constant_done || l.constant == 0) return acc;
  if (is_negative(l.constant, t)) return make_bin(BinOp::Sub, acc, make_int(t, arith::sub(0, l.constant, ct)));
  return make_bin(BinOp::Add, acc, make_int(t, l.constant));
}

std::optional<Bounds> linear_bounds(const Linear& l, Analyzer& an, i128* constant_used) {
  Bounds sum{0, 0};
  for (const Term& term : l.terms) {
    std::optional<Bounds> b = an.bounds(term.atom);
    if (!b) return std::nullopt;
    i128 c = term.coeff;
    i128 x, y;
    if (__builtin_mul_overflow(b->lo, c, &x) || __builtin_mul_overflow(b->hi, c, &y)) return std::nullopt;
    if (__builtin_add_overflow(sum.lo, std::min(x, y), &sum.lo) ||
        __builtin_add_overflow(sum.hi, std::max(x, y), &sum.hi))
      return std::nullopt;
  }
  i128 k = l.constant;
  Bounds r;
  if (__builtin_add_overflow(sum.lo, k, &r.lo) || __builtin_add_overflow(sum.hi, k, &r.hi)) return std::nullopt;
  if (l.type.is_uint() && !fits(r, l.type) && k < 0) {
    i128 ku = k + (i128{1} << l.type.bits());
    Bounds ru;
    if (!__builtin_add_overflow(sum.lo, ku, &ru.lo) && !__builtin_add_overflow(sum.hi, ku, &ru.hi) &&
        fits(ru, l.type)) {
      k = ku;
      r = ru;
    }
  }
  if (constant_used) *constant_used = k;
  return r;
}

void fold_div_mod_pairs(Linear& l) {
  DataType ct = coeff_type(l.type);
  for (size_t i = 0; i < l.terms.size(); ++i) {
    auto* mod = l.terms[i].atom.as<BinaryNode>();
    if (!mod || (mod->op != BinOp::Mod && mod->op != BinOp::TruncMod) || l.terms[i].coeff == 0) continue;
    auto* d = mod->b.as<IntImmNode>();
    if (!d || d->value == 0) continue;
    BinOp div_op = mod->op == BinOp::Mod ? BinOp::Div : BinOp::TruncDiv;
    int64_t c = l.terms[i].coeff;
    int64_t want = arith::mul(c, srep(d->value, l.type), ct);
    for (size_t j = 0; j < l.terms.size(); ++j) {
      auto* div = l.terms[j].atom.as<BinaryNode>();
      if (j == i || !div || div->op != div_op || l.terms[j].coeff != want) continue;
      auto* dd = div->b.as<IntImmNode>();
      if (!dd || dd->value != d->value || !equal(div->a, mod->a)) continue;
      Expr y = mod->a;
      l.terms[i].coeff = 0;
      l.terms[j].coeff = 0;
      Linear ly = linear_of(y);
      l.add(ly, c);
      break;
    }
  }
  l.drop_zero_terms();
}

namespace {
// ((x / c) % d) * c * k + (x % c) * k -> (x % (c * d)) * k for floor division and c, d > 0:
// the middle digit and the low digit of x in base c make its remainder by c * d (what
// unravelling a flat index, then flattening it again, leaves).
bool fold_mod_digits_once(Linear& l) {
  DataType ct = coeff_type(l.type);
  for (size_t i = 0; i < l.terms.size(); ++i) {
    auto* low = l.terms[i].atom.as<BinaryNode>();
    if (!low || low->op != BinOp::Mod) continue;
    auto* c = low->b.as<IntImmNode>();
    if (!c || c->value <= 0) continue;
    int64_t want = arith::mul(l.terms[i].coeff, srep(c->value, l.type), ct);
    for (size_t j = 0; j < l.terms.size(); ++j) {
      auto* mid = l.terms[j].atom.as<BinaryNode>();
      if (j == i || !mid || mid->op != BinOp::Mod || l.terms[j].coeff != want) continue;
      auto* d = mid->b.as<IntImmNode>();
      auto* div = mid->a.as<BinaryNode>();
      if (!d || d->value <= 0 || !div || div->op != BinOp::Div) continue;
      auto* c2 = div->b.as<IntImmNode>();
      i128 cd = static_cast<i128>(c->value) * d->value;
      if (!c2 || c2->value != c->value || !equal(div->a, low->a) || !fits(Bounds{cd, cd}, l.type)) continue;
      Expr merged = make_bin(BinOp::Mod, low->a, make_int(l.type, static_cast<int64_t>(cd)));
      int64_t k = l.terms[i].coeff;
      l.terms[i].coeff = 0;
      l.terms[j].coeff = 0;
      l.drop_zero_terms();
      l.add_term(merged, k);
      return true;
    }
  }
  return false;
}
}  // namespace

void fold_unravelled_index(Linear& l) {
  fold_div_mod_pairs(l);
  while (fold_mod_digits_once(l)) fold_div_mod_pairs(l);
}

}  // namespace te::simp
