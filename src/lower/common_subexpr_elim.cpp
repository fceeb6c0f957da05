// Pass "common_subexpr_elim": a value that one statement computes more than once is
// computed once, into a named local (a LetStmt just before the statement), and read from
// it everywhere (Halide's CSE at the end of lowering, TVM's common_subexpr_elim). Then a
// statement still too long to read gets its longest parts as named locals (Shortener):
// printed IR and CUDA read like hand-written code.
//
// Only what is safe to compute once and early is shared:
// - one statement at a time, so a load never moves across a store or a barrier;
// - only values the statement always computes: the branches of if_then_else, the right
//   operand of && and || where it loads or calls out (must_stay_guarded), the indices of
//   a predicated load and the value and indices of a predicated store are guarded (C
//   skips them), so they never make a local, though they read one that the unguarded
//   code computes anyway;
// - never a call of a function outside te (it may have effects), a warp shuffle or
//   an allreduce, and nothing inside a Let (its body sees the Let's variable);
// - only scalars: a vector value stays one expression (the CUDA printer writes it lane by
//   lane, LLVM's own GVN shares vector values), while its scalar parts are shared;
// - not index arithmetic (integer + - * of variables and constants): it is cheap, and the
//   backends read its structure (ramps, alignment, bound proofs).
// Sibling statements that begin with locals of the same pure value (no load, no call
// outside te: an unrolled tile's statements naming one base index) then share one local:
// te's variables never change, so the value is the same for each of them. Likewise the
// two sides of an if/else (a guarded tail and its body) take such a local before the if.
// The locals are named after what they hold (lower/cse_names.h).
#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <tuple>
#include <unordered_map>

#include "lower/cse_names.h"
#include "te/lower.h"

namespace te::lowering {
namespace {

// Structural numbering: equal expressions get equal numbers (their children's numbers
// and their own fields), so a subexpression is counted whatever node holds it.
class Numbering {
 public:
  int number(const Expr& e) {
    auto it = ids_.find(e.get());
    if (it != ids_.end()) return it->second;
    int id = number_new(e);
    ids_.emplace(e.get(), id);
    return id;
  }
  int id_of(const ExprNode* n) const { return ids_.at(n); }
  const Expr& representative(int id) const { return nodes_[id]; }

 private:
  using Key = std::tuple<int, int, int, int64_t, const void*, std::vector<int>>;

  int number_new(const Expr& e) {
    std::vector<int> kids;
    int op = 0;
    int64_t value = 0;
    const void* ref = nullptr;
    switch (e->kind) {
      case ExprKind::IntImm: value = e.as<IntImmNode>()->value; break;
      case ExprKind::FloatImm: {
        double d = e.as<FloatImmNode>()->value;
        std::memcpy(&value, &d, sizeof d);
        break;
      }
      case ExprKind::Var: ref = e.get(); break;
      case ExprKind::Cast: kids = {number(e.as<CastNode>()->value)}; break;
      case ExprKind::Binary: {
        auto* n = e.as<BinaryNode>();
        op = static_cast<int>(n->op);
        kids = {number(n->a), number(n->b)};
        break;
      }
      case ExprKind::Not: kids = {number(e.as<NotNode>()->a)}; break;
      case ExprKind::Select: {
        auto* n = e.as<SelectNode>();
        kids = {number(n->cond), number(n->true_value), number(n->false_value)};
        break;
      }
      case ExprKind::Load: {
        auto* n = e.as<LoadNode>();
        ref = n->buffer.get();
        for (const Expr& i : n->indices) kids.push_back(number(i));
        kids.push_back(n->predicate.defined() ? number(n->predicate) : -1);
        break;
      }
      case ExprKind::Ramp: {
        auto* n = e.as<RampNode>();
        op = n->lanes;
        kids = {number(n->base), number(n->stride)};
        break;
      }
      case ExprKind::Broadcast: {
        auto* n = e.as<BroadcastNode>();
        op = n->lanes;
        kids = {number(n->value)};
        break;
      }
      case ExprKind::Call: {
        auto* n = e.as<CallNode>();
        op = static_cast<int>(n->op);
        if (!may_share(n)) ref = e.get();  // each occurrence is its own value
        for (const Expr& a : n->args) kids.push_back(number(a));
        break;
      }
      default: ref = e.get(); break;  // Let, and nodes lowering has removed: opaque
    }
    Key key{static_cast<int>(e->kind),
            static_cast<int>(e.dtype().code()) << 24 | e.dtype().bits() << 16 | e.dtype().lanes(),
            op,
            value,
            ref,
            std::move(kids)};
    auto [it, fresh] = keys_.emplace(std::move(key), static_cast<int>(nodes_.size()));
    if (fresh) nodes_.push_back(e);
    return it->second;
  }

  static bool may_share(const CallNode* n) {
    return n->op != Intrinsic::Extern && n->op != Intrinsic::WarpShuffleDown && n->op != Intrinsic::ThreadAllreduce;
  }

  std::unordered_map<const ExprNode*, int> ids_;
  std::map<Key, int> keys_;
  std::vector<Expr> nodes_;
};

bool is_index_arithmetic(const Expr& e) {
  if (!e.dtype().is_int() && !e.dtype().is_uint()) return false;
  if (e.as<VarNode>() || e.as<IntImmNode>()) return true;
  auto* b = e.as<BinaryNode>();
  return b && (b->op == BinOp::Add || b->op == BinOp::Sub || b->op == BinOp::Mul) && is_index_arithmetic(b->a) &&
         is_index_arithmetic(b->b);
}

// Whether a value deserves a local when it is computed twice.
bool worth_a_local(const Expr& e) {
  if (!e.dtype().is_scalar() || is_index_arithmetic(e)) return false;
  switch (e->kind) {
    case ExprKind::Var:
    case ExprKind::IntImm:
    case ExprKind::FloatImm:
    case ExprKind::Let: return false;
    case ExprKind::Call: {
      Intrinsic op = e.as<CallNode>()->op;
      return op != Intrinsic::Extern && op != Intrinsic::WarpShuffleDown && op != Intrinsic::ThreadAllreduce &&
             op != Intrinsic::Likely;
    }
    default: return true;
  }
}

// Whether evaluating e ahead of the condition that guards it could change what happens:
// a load (its index may be valid only under the condition), a call outside te, a warp
// shuffle. Other values are pure and cannot fault (te defines x / 0), so the right side
// of && or || may share them; if_then_else's branches stay guarded whatever they hold
// (the user asked for lazy evaluation, often to skip work). Memoised by node for one
// statement (a chain of && asks it of every suffix); the memo holds its nodes, so no
// address is reused while it lives.
class GuardRule {
 public:
  bool must_stay_guarded(const Expr& e) {
    Finder f(memo_);
    f.visit(e);
    return f.found;
  }

 private:
  using Memo = std::unordered_map<const ExprNode*, std::pair<Expr, bool>>;
  struct Finder : IRVisitor {
    explicit Finder(Memo& memo) : memo(memo) {}
    Memo& memo;
    bool found = false;
    using IRVisitor::visit;
    void visit(const Expr& e) override {
      if (!e.defined()) return;
      if (auto it = memo.find(e.get()); it != memo.end()) {
        found = found || it->second.second;
        return;
      }
      const bool outer = found;
      found = false;
      IRVisitor::visit(e);
      memo.emplace(e.get(), std::make_pair(e, found));
      found = outer || found;
    }
    void visit_load(const LoadNode*) override { found = true; }
    void visit_call(const CallNode* n) override {
      if (n->op == Intrinsic::Extern || n->op == Intrinsic::WarpShuffleDown || n->op == Intrinsic::ThreadAllreduce)
        found = true;
      else
        IRVisitor::visit_call(n);
    }
  };
  Memo memo_;
};

// Calls f(child, guarded) for each operand of e: guarded when only a condition makes C
// evaluate it (rule: whether a lazy operand must stay so; none: guardedness is not asked).
// Let is opaque (its body sees the Let's variable).
template <typename F>
void for_each_operand(const Expr& e, bool guarded, GuardRule* rule, F&& f) {
  switch (e->kind) {
    case ExprKind::Cast: return f(e.as<CastNode>()->value, guarded);
    case ExprKind::Binary: {
      auto* n = e.as<BinaryNode>();
      bool lazy = n->op == BinOp::And || n->op == BinOp::Or;
      f(n->a, guarded);
      return f(n->b, guarded || (lazy && rule != nullptr && rule->must_stay_guarded(n->b)));
    }
    case ExprKind::Not: return f(e.as<NotNode>()->a, guarded);
    case ExprKind::Select: {
      auto* n = e.as<SelectNode>();
      f(n->cond, guarded);
      f(n->true_value, guarded);
      return f(n->false_value, guarded);
    }
    case ExprKind::Load: {
      auto* n = e.as<LoadNode>();
      if (n->predicate.defined()) f(n->predicate, guarded);
      for (const Expr& i : n->indices) f(i, guarded || n->predicate.defined());
      return;
    }
    case ExprKind::Ramp: f(e.as<RampNode>()->base, guarded); return f(e.as<RampNode>()->stride, guarded);
    case ExprKind::Broadcast: return f(e.as<BroadcastNode>()->value, guarded);
    case ExprKind::Call: {
      auto* n = e.as<CallNode>();
      for (size_t i = 0; i < n->args.size(); ++i) f(n->args[i], guarded || (n->op == Intrinsic::IfThenElse && i > 0));
      return;
    }
    default: return;  // leaves, and Let
  }
}

// Counts, for each number, how many distinct unguarded expressions use it (Halide's use
// count over the structural DAG: a repeated parent counts its children once).
class UseCounter {
 public:
  UseCounter(Numbering& num, GuardRule& rule) : num_(num), rule_(rule) {}
  std::map<int, int> uses;  // unguarded uses only

  void root(const Expr& e, bool guarded) {
    if (!e.defined()) return;
    int id = num_.number(e);
    if (!guarded) ++uses[id];
    walk(e, guarded);
  }

 private:
  void walk(const Expr& e, bool guarded) {
    int id = num_.id_of(e.get());
    // A value that can become a local is walked once unguarded (its operands counted once
    // per distinct parent) and once guarded (to number what it holds); one that stays in
    // place (a vector, index arithmetic) recomputes its operands wherever it appears.
    if (worth_a_local(e) && !(guarded ? seen_guarded_ : seen_).insert(id).second) return;
    for_each_operand(e, guarded, &rule_, [&](const Expr& c, bool g) {
      if (!g) ++uses[num_.id_of(c.get())];
      walk(c, g);
    });
  }

  Numbering& num_;
  GuardRule& rule_;
  std::set<int> seen_, seen_guarded_;
};

// Replaces each shared value by its local.
class UseLocals : public IRMutator {
 public:
  UseLocals(Numbering& num, const std::map<int, Var>& locals) : num_(num), locals_(locals) {}
  // The value of local `id`, its own parts replaced.
  Expr value_of(int id) {
    building_ = id;
    Expr v = mutate(num_.representative(id));
    building_ = -1;
    return v;
  }

  using IRMutator::mutate;
  Expr mutate(const Expr& e) override {
    if (!e.defined() || e.as<LetNode>()) return e;
    int id = num_.number(e);
    if (id != building_) {
      auto it = locals_.find(id);
      if (it != locals_.end()) return it->second;
    }
    building_ = -1;  // only the root of a local's value is itself
    return IRMutator::mutate(e);
  }

 private:
  Numbering& num_;
  const std::map<int, Var>& locals_;
  int building_ = -1;
};

using Locals = std::vector<std::pair<Var, Expr>>;

// Splits statements too long to read: a value longer than kLongValue characters (as te
// prints it) gets its longest unguarded parts as locals of their own, longest first,
// until it is short; parts are split first (post-order), so every local is short too.
// Only parts the statement always computes move, so this changes nothing but the text.
class Shortener : public IRMutator {
 public:
  static constexpr size_t kLongValue = 160;
  static constexpr size_t kSmallPart = 24;  // not worth a name of its own

  explicit Shortener(GuardRule& rule) : rule_(rule) {}

  // e with its long parts replaced by locals appended to `out`.
  Expr shorten(const Expr& e, bool guarded, Locals* out) {
    if (!e.defined()) return e;
    lengths_.clear();  // keyed by node: an earlier root's nodes may be gone
    plan(e, guarded);
    std::vector<const ExprNode*> order = order_;
    order_.clear();
    for (const ExprNode* n : order) {
      Var v = parts_.at(n);
      building_ = n;
      out->emplace_back(v, mutate(Expr(kept_.at(n))));
    }
    building_ = nullptr;
    return mutate(e);
  }

  using IRMutator::mutate;
  Expr mutate(const Expr& e) override {
    if (!e.defined() || e.as<LetNode>()) return e;
    if (e.get() != building_) {
      auto it = parts_.find(e.get());
      if (it != parts_.end()) return it->second;
    }
    building_ = nullptr;
    return IRMutator::mutate(e);
  }

 private:
  // Printed length, with the parts already named counted as their names. A length stays
  // valid until the next part is named (only then can it change): each node's is computed
  // once per naming, not once per question.
  size_t length(const Expr& e) {
    if (auto it = parts_.find(e.get()); it != parts_.end()) return it->second.name().size();
    if (auto it = lengths_.find(e.get()); it != lengths_.end() && it->second.first == parts_.size())
      return it->second.second;
    size_t own = 0, operands = 0;
    switch (e->kind) {
      case ExprKind::Var: own = e.as<VarNode>()->name.size(); break;
      case ExprKind::IntImm:
      case ExprKind::FloatImm: own = to_string(e).size(); break;
      case ExprKind::Load: own = e.as<LoadNode>()->buffer.name().size() + 2; break;
      case ExprKind::Call: own = std::string(intrinsic_name(e.as<CallNode>()->op)).size() + 2; break;
      case ExprKind::Let: own = to_string(e).size(); break;
      default: own = 6; break;  // an operator, its spaces and parentheses
    }
    for_each_operand(e, false, nullptr, [&](const Expr& c, bool) { operands += length(c) + 2; });
    lengths_[e.get()] = {parts_.size(), own + operands};
    return own + operands;
  }

  void plan(const Expr& e, bool guarded) {
    for_each_operand(e, guarded, &rule_, [&](const Expr& c, bool g) { plan(c, g); });
    if (guarded || length(e) <= kLongValue) return;
    std::vector<Expr> candidates;
    for_each_operand(e, guarded, &rule_, [&](const Expr& c, bool g) {
      if (!g && worth_a_local(c) && !parts_.count(c.get()) && length(c) > kSmallPart) candidates.push_back(c);
    });
    std::stable_sort(candidates.begin(), candidates.end(),
                     [&](const Expr& a, const Expr& b) { return length(a) > length(b); });
    for (const Expr& c : candidates) {
      if (length(e) <= kLongValue) break;
      parts_.emplace(c.get(), Var(local_name(c), c.dtype()));
      kept_.emplace(c.get(), c.node());
      order_.push_back(c.get());
    }
  }

  std::unordered_map<const ExprNode*, Var> parts_;
  std::unordered_map<const ExprNode*, std::shared_ptr<const ExprNode>> kept_;  // the keys stay alive
  GuardRule& rule_;
  std::unordered_map<const ExprNode*, std::pair<size_t, size_t>> lengths_;  // parts named then, length
  std::vector<const ExprNode*> order_;
  const ExprNode* building_ = nullptr;
};

// stmts (in order) with each run of neighbours whose first local has one pure value
// under a single local; a single statement or their sequence.
Stmt share_leading_locals(const std::vector<Stmt>& stmts) {
  std::vector<Stmt> out;
  GuardRule rule;
  for (size_t i = 0; i < stmts.size();) {
    auto* let = stmts[i].as<LetStmtNode>();
    size_t end = i + 1;
    if (let != nullptr && !rule.must_stay_guarded(let->value))
      while (end < stmts.size()) {
        auto* next = stmts[end].as<LetStmtNode>();
        if (next == nullptr || !equal(next->value, let->value)) break;
        ++end;
      }
    if (end - i < 2) {
      out.push_back(stmts[i++]);
      continue;
    }
    std::vector<Stmt> bodies{let->body};
    for (size_t j = i + 1; j < end; ++j) {
      auto* next = stmts[j].as<LetStmtNode>();
      bodies.push_back(substitute(next->body, {{next->var, let->var}}));
    }
    out.push_back(let_stmt(let->var, let->value, share_leading_locals(bodies)));
    i = end;
  }
  return out.size() == 1 ? out[0] : seq(out);
}

// An if/else whose two sides start with a local of one pure value, with that local taken
// before the if (once per local both sides share); else the statement as it is.
Stmt hoist_shared_locals(const Stmt& s) {
  auto* branch = s.as<IfThenElseNode>();
  if (branch == nullptr || !branch->else_case.defined()) return s;
  auto* a = branch->then_case.as<LetStmtNode>();
  auto* b = branch->else_case.as<LetStmtNode>();
  if (a == nullptr || b == nullptr || !equal(a->value, b->value) || GuardRule().must_stay_guarded(a->value)) return s;
  Stmt rest = if_then_else(branch->cond, a->body, substitute(b->body, {{b->var, a->var}}));
  return let_stmt(a->var, a->value, hoist_shared_locals(rest));
}

class CommonSubexprElim : public IRMutator {
 protected:
  Stmt mutate_seq(const Stmt& s, const SeqNode* n) override {
    Stmt mutated = IRMutator::mutate_seq(s, n);
    auto* siblings = mutated.as<SeqNode>();
    return siblings != nullptr ? share_leading_locals(siblings->seq) : mutated;
  }

  Stmt mutate_if_then_else(const Stmt& s, const IfThenElseNode* n) override {
    return hoist_shared_locals(IRMutator::mutate_if_then_else(s, n));
  }

  Stmt mutate_store(const Stmt& s, const StoreNode* n) override {
    Numbering num;
    GuardRule rule;
    UseCounter count(num, rule);
    // A predicated store skips its value where the predicate fails.
    bool guarded = n->predicate.defined();
    count.root(n->predicate, false);
    count.root(n->value, guarded);
    for (const Expr& i : n->indices) count.root(i, guarded);

    std::map<int, Var> shared;  // in numbering order: parts before the values holding them
    for (const auto& [id, uses] : count.uses)
      if (uses > 1 && worth_a_local(num.representative(id)))
        shared.emplace(id, Var(local_name(num.representative(id)), num.representative(id).dtype()));

    UseLocals use(num, shared);
    Shortener shorten(rule);
    Locals locals;
    for (const auto& [id, var] : shared) {
      Expr value = shorten.shorten(use.value_of(id), false, &locals);
      locals.emplace_back(var, value);
    }
    Expr predicate = shorten.shorten(use.mutate(n->predicate), false, &locals);
    Expr value = shorten.shorten(use.mutate(n->value), guarded, &locals);
    std::vector<Expr> indices;
    for (const Expr& i : n->indices) indices.push_back(shorten.shorten(use.mutate(i), guarded, &locals));
    if (locals.empty()) return s;
    Stmt body = store_like(*n, n->buffer, value, indices, predicate);
    for (auto it = locals.rbegin(); it != locals.rend(); ++it) body = let_stmt(it->first, it->second, body);
    return body;
  }
};

}  // namespace
}  // namespace te::lowering

namespace te {

Stmt eliminate_common_subexpressions(const Stmt& s) { return lowering::CommonSubexprElim().mutate(s); }

}  // namespace te
