// Internals of the simplifier, shared by its source files:
//   const_bounds.cpp    Bounds and Analyzer: interval analysis of integer expressions
//   linear_form.cpp     Linear: sums of constant multiples of atoms, and their rebuilding
//   simplify_fold.cpp   folding of immediates (integer, IEEE float, casts, intrinsics)
//   simplify_arith.cpp  + - * / % truncdiv truncmod, scalar and vector
//   simplify_logic.cpp  comparisons, min/max, && || !, select
//   simplify_expr.cpp   the other expression nodes and the public Expr entry points
//   simplify_stmt.cpp   statements
//
// Soundness under wrapping: integer + - * wrap at the type's width, so every rewrite that
// only reorders + - * (the ring Z/2^n) is always valid, while reasoning about order,
// division or modulo first proves that the mathematical value of the expression fits the
// type (then the wrapped value equals it). Bounds are intervals of mathematical integers
// held in 128 bits, so uint64 and the differences of int64 values are exact.
#pragma once
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "expr/analysis.h"
#include "te/ir.h"
#include "te/simplify.h"

namespace te::simp {

using i128 = __int128;

// A closed interval [lo, hi] of mathematical integers.
struct Bounds {
  i128 lo, hi;
  bool is_point() const { return lo == hi; }
};

// True for the element types whose values the analyzer tracks: int, uint and bool.
bool is_tracked(DataType t);
// All values of t's element type.
Bounds type_range(DataType t);
bool fits(const Bounds& b, DataType t);
// The mathematical value of an immediate stored as t (uint64 bit patterns become >= 2^63).
i128 imm_value(int64_t stored, DataType t);
// Bounds of every lane of an immediate, or nullopt.
std::optional<Bounds> const_value(const Expr& e);

// floor and truncated division of mathematical integers (b != 0).
i128 floordiv128(i128 a, i128 b);
i128 floormod128(i128 a, i128 b);

// Interval analysis with scoped variable bounds. Results are memoised per node together
// with the binding state they were computed in (each bind opens a new state, unbind returns
// to the previous one), so a memo entry is only used under the bounds it saw.
class Analyzer {
 public:
  explicit Analyzer(const VarBounds& vb);
  // Bounds of every lane of e, or nullopt if e's type is not tracked.
  std::optional<Bounds> bounds(const Expr& e);
  // Binds v to b (intersected with v's type) until the matching unbind; returns false and
  // binds nothing when the intersection is empty.
  bool bind(const VarNode* v, Bounds b);
  void unbind(const VarNode* v);
  // The innermost binding of v, if any.
  std::optional<Bounds> var_bounds(const VarNode* v) const;
  // Identifies the current set of bindings.
  uint64_t state() const { return states_.back(); }

 private:
  std::optional<Bounds> compute(const Expr& e);
  std::optional<Bounds> compute_binary(const BinaryNode* n);
  Bounds bitwise_bounds(const CallNode* n);

  std::unordered_map<const VarNode*, std::vector<Bounds>> vars_;
  std::vector<uint64_t> states_{0};
  uint64_t next_state_ = 1;
  struct Memo {
    std::shared_ptr<const ExprNode> keep_alive;  // the key's address cannot be reused
    std::optional<Bounds> value;
    uint64_t state;
  };
  std::unordered_map<const ExprNode*, Memo> memo_;
};

// ---- Linear forms: sum of coeff * atom, plus a constant, in one scalar integer type ----
// Coefficients and the constant are held as signed representatives at the type's width
// (uint32 0xffffffff is -1), so x - y reads as x + (-1)*y for every type.
struct Term {
  Expr atom;
  int64_t coeff;
};
struct Linear {
  DataType type;
  std::vector<Term> terms;  // in order of first appearance; atoms pairwise unequal
  int64_t constant = 0;

  explicit Linear(DataType t) : type(t) {}
  bool is_const() const { return terms.empty(); }
  void add_term(const Expr& atom, int64_t coeff);  // merges with an equal atom
  void add_const(int64_t c);
  void add(const Linear& o, int64_t scale);  // this += scale * o
  void scale(int64_t c);
  void drop_zero_terms();
};
// Signed representative of v at t's width.
int64_t srep(int64_t v, DataType t);
// Decomposes e (already simplified) through + - and * by immediates; atoms are not touched.
Linear linear_of(const Expr& e);
// Canonical expression: positive terms in order, then the negative ones subtracted, then
// the constant.
Expr linear_to_expr(const Linear& l);
// Mathematical bounds of sum(coeff * atom) + constant using the analyzer's atom bounds.
// For unsigned types the constant may be read as constant + 2^bits (its unsigned value)
// when that makes the sum fit; *constant_used receives the value chosen.
std::optional<Bounds> linear_bounds(const Linear& l, Analyzer& an, i128* constant_used = nullptr);
// Replaces (y / d) * (c*d) + (y % d) * c by y * c (and the truncating pair likewise).
void fold_div_mod_pairs(Linear& l);
// fold_div_mod_pairs, and ((x / c) % d) * c + x % c -> x % (c * d), until neither applies:
// flattening an unravelled index gives back the flat index.
void fold_unravelled_index(Linear& l);

// ---- Node construction (types are already settled; no builder type rules) ----
Expr make_int(DataType t, int64_t v);  // wrapped to t; broadcast when t is a vector
Expr make_bool(bool v, int lanes = 1);
Expr make_bin(BinOp op, const Expr& a, const Expr& b);
Expr make_not(const Expr& a);
Expr make_cast(DataType t, const Expr& v);
Expr make_select(const Expr& c, const Expr& t, const Expr& f);
Expr make_broadcast(const Expr& v, int lanes);
Expr make_ramp(const Expr& base, const Expr& stride, int lanes);
Expr make_call(DataType t, Intrinsic op, std::vector<Expr> args);
// The statement that does nothing, and the test for it.
Stmt make_noop();
bool is_noop(const Stmt& s);
// Scalar value of a (scalar or broadcast) boolean/integer immediate.
std::optional<int64_t> const_int(const Expr& e);

// ---- Folding of immediates ----
// op on two scalar immediates of one type (or broadcasts of them); undefined if it cannot
// be folded exactly (e.g. float min with a NaN).
Expr fold_binary(BinOp op, const Expr& a, const Expr& b);
// cast of a scalar immediate; undefined when the result is not defined exactly
// (an out-of-range float to integer, a float64 to float16 needing two roundings).
Expr fold_cast(DataType t, const Expr& v);
// Floor, Ceil, Round, NearbyInt, Trunc, Abs on an immediate; undefined otherwise.
Expr fold_call(Intrinsic op, const std::vector<Expr>& args, DataType t);

// ---- The simplifier ----
class Simplifier : public IRMutator {
 public:
  explicit Simplifier(const VarBounds& vb) : an_(vb) {}
  using IRMutator::mutate;
  // Memoised per node and scope: shared subexpressions (a DAG) are simplified once.
  Expr mutate(const Expr& e) override;

  // Combines operands that are already simplified.
  Expr rewrite_binary(BinOp op, const Expr& a, const Expr& b);
  // Decides a op b (a comparison) for simplified integer or bool operands: 1, 0 or nullopt.
  std::optional<bool> decide(BinOp op, const Expr& a, const Expr& b);

 protected:
  Expr mutate_var(const Expr& e, const VarNode* n) override;
  Expr mutate_cast(const Expr& e, const CastNode* n) override;
  Expr mutate_binary(const Expr& e, const BinaryNode* n) override;
  Expr mutate_not(const Expr& e, const NotNode* n) override;
  Expr mutate_select(const Expr& e, const SelectNode* n) override;
  Expr mutate_load(const Expr& e, const LoadNode* n) override;
  Expr mutate_ramp(const Expr& e, const RampNode* n) override;
  Expr mutate_broadcast(const Expr& e, const BroadcastNode* n) override;
  Expr mutate_call(const Expr& e, const CallNode* n) override;
  Expr mutate_let(const Expr& e, const LetNode* n) override;
  Expr mutate_reduce(const Expr& e, const ReduceNode* n) override;

  Stmt mutate_let_stmt(const Stmt& s, const LetStmtNode* n) override;
  Stmt mutate_for(const Stmt& s, const ForNode* n) override;
  Stmt mutate_store(const Stmt& s, const StoreNode* n) override;
  Stmt mutate_allocate(const Stmt& s, const AllocateNode* n) override;
  Stmt mutate_if_then_else(const Stmt& s, const IfThenElseNode* n) override;
  Stmt mutate_seq(const Stmt& s, const SeqNode* n) override;
  Stmt mutate_evaluate(const Stmt& s, const EvaluateNode* n) override;
  Stmt mutate_assert(const Stmt& s, const AssertNode* n) override;

 private:
  // simplify_arith.cpp
  Linear simplify_linear(const Expr& e);  // e not yet simplified: + - * chains in one pass
  Linear simplify_linear_chain(const Expr& e);
  Expr rewrite_add_sub_mul(BinOp op, const Expr& a, const Expr& b);
  Expr rewrite_float_arith(BinOp op, const Expr& a, const Expr& b);
  Expr rewrite_vector_arith(BinOp op, const Expr& a, const Expr& b);
  Expr rewrite_div_mod(BinOp op, const Expr& a, const Expr& b);
  Expr rewrite_trunc_div_mod(BinOp op, const Expr& a, const Expr& b);
  Expr rewrite_by_lane(BinOp op, const Expr& a, const Expr& b);
  // ramp(x, c, n) / d and % d when x's alignment keeps every lane in x's block of d.
  Expr rewrite_aligned_ramp_div_mod(BinOp op, const Expr& a, const Expr& b);
  bool split_aligned(const Linear& l, int64_t d, Linear* aligned, Linear* offset);
  Expr rewrite_again(BinOp op, const Expr& a, const Expr& b);
  // simplify_logic.cpp
  Expr rewrite_compare(BinOp op, const Expr& a, const Expr& b);
  Expr rewrite_min_max(BinOp op, const Expr& a, const Expr& b);
  Expr rewrite_logical(BinOp op, const Expr& a, const Expr& b);
  Expr rewrite_not(const Expr& a);
  Expr rewrite_select(const Expr& c, const Expr& t, const Expr& f);
  // simplify_expr.cpp
  Expr rewrite_cast(DataType t, const Expr& v);
  // simplify_stmt.cpp
  struct Narrowing {
    const VarNode* var;
    Bounds bounds;
  };
  void collect_narrowings(const Expr& cond, bool truth, std::vector<Narrowing>* out);
  Stmt mutate_with_narrowings(const Stmt& s, const std::vector<Narrowing>& ns);
  Stmt mutate_scoped(const Stmt& body, const VarNode* v, std::optional<Bounds> b, bool keep);

  // Scoped substitutions and kept variables; each change opens or closes a scope state.
  void push_subst(const VarNode* v, const Expr& value);
  void pop_subst(const VarNode* v);
  void keep_var(const VarNode* v);
  void unkeep_var(const VarNode* v);
  void enter_scope() { scopes_.push_back(next_scope_++); }
  void leave_scope() { scopes_.pop_back(); }

  Analyzer an_;
  std::unordered_map<const VarNode*, std::vector<Expr>> subst_;
  // Let-bound variables are kept by name even when their bounds are a single point.
  std::unordered_map<const VarNode*, int> keep_vars_;
  int rewrite_depth_ = 0;
  std::vector<uint64_t> scopes_{0};
  uint64_t next_scope_ = 1;
  template <typename T>
  struct Memo {
    std::shared_ptr<const ExprNode> keep_alive;
    T value;
    uint64_t analyzer_state, scope;
  };
  std::unordered_map<const ExprNode*, Memo<Expr>> memo_;
  std::unordered_map<const ExprNode*, Memo<Linear>> linear_memo_;  // shared + - * nodes
  template <typename T>
  const T* find_memo(const std::unordered_map<const ExprNode*, Memo<T>>& m, const Expr& e) const;
  template <typename T>
  void store_memo(std::unordered_map<const ExprNode*, Memo<T>>& m, const Expr& e, const T& v);
};

}  // namespace te::simp
