#include "lower/reduce_update.h"

#include "expr/reduce_rule.h"

namespace te::lowering {

Stmt store_all(const std::vector<Expr>& acc, const std::vector<Expr>& values) {
  TE_ICHECK(acc.size() == values.size(), "store_all: one value per accumulator");
  std::vector<Stmt> stores;
  for (size_t i = 0; i < acc.size(); ++i) {
    const auto* l = acc[i].as<LoadNode>();
    TE_ICHECK(l, "store_all: an accumulator is not a Load");
    stores.push_back(store(l->buffer, values[i], l->indices));
  }
  return stores.size() == 1 ? stores[0] : seq(stores);
}

namespace {

// values, or the old values where only_if is false.
std::vector<Expr> kept_unless(const Expr& only_if, std::vector<Expr> values, const std::vector<Expr>& old) {
  if (only_if.defined())
    for (size_t i = 0; i < values.size(); ++i) values[i] = select(only_if, values[i], old[i]);
  return values;
}

}  // namespace

Stmt reduce_update(const ReduceNode& red, const std::vector<Expr>& acc, const std::vector<Expr>& rhs,
                   const Expr& only_if) {
  if (red.reducer != Reducer::Custom) return store_all(acc, kept_unless(only_if, reduce_combine(red, acc, rhs), acc));
  std::vector<Expr> a, b;
  std::vector<std::pair<Var, Expr>> lets;
  for (size_t i = 0; i < acc.size(); ++i) {
    const Buffer& buf = acc[i].as<LoadNode>()->buffer;
    Var av(buf.name() + ".old", acc[i].dtype()), bv(buf.name() + ".new", rhs[i].dtype());
    lets.emplace_back(av, acc[i]);
    lets.emplace_back(bv, rhs[i]);
    a.push_back(av);
    b.push_back(bv);
  }
  Stmt out = store_all(acc, kept_unless(only_if, reduce_combine(red, a, b), a));
  for (auto it = lets.rbegin(); it != lets.rend(); ++it) out = let_stmt(it->first, it->second, out);
  return out;
}

}  // namespace te::lowering
