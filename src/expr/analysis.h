// The questions every pass and backend asks of the IR, answered in one place (internal to
// src/): which variables an expression or statement uses, which buffers it loads and
// stores, and the value of an integer expression under te's integer rules
// (src/expr/int_arith.h), which interpret(), the LLVM backend and the CUDA backend share.
// The few marked TE_API leave libte for its companion libraries (te_torch).
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <vector>

#include "te/export.h"
#include "te/ir.h"
#include "te/simplify.h"

namespace te {

// ---- Variables ----
// Whether e (or s) reads variable v.
bool uses_var(const Expr& e, const VarNode* v);
bool uses_var(const Stmt& s, const VarNode* v);
inline bool uses_var(const Expr& e, const Var& v) { return uses_var(e, v.get()); }
// Whether e (or s) reads some variable for which `pick` holds.
using VarPredicate = std::function<bool(const VarNode*)>;
bool uses_any_var(const Expr& e, const VarPredicate& pick);
bool uses_any_var(const Stmt& s, const VarPredicate& pick);
// Whether e reads one of vars.
bool uses_any_of(const Expr& e, const std::vector<Var>& vars);
// The variables e reads, in order of first appearance, each once; those bound inside e by
// a Let are left out.
TE_API std::vector<Var> free_vars(const Expr& e);

// What s mentions, each once, in order of first mention: its variables (those it binds
// too, and those in the shapes of the buffers it loads, stores and allocates, which a
// checked index, a streaming store or an allocation reads) and the buffers it loads and
// stores.
struct Mentions {
  std::vector<Var> vars;
  std::vector<Buffer> buffers;
};
Mentions mentions(const Stmt& s);
// The variables s binds: its loops' and its Lets'.
std::set<const VarNode*> bound_vars(const Stmt& s);

// ---- Tensor reads (compute bodies) ----
// Every TensorRead in e, in visiting order: a node e reaches twice is listed twice.
std::vector<const TensorReadNode*> tensor_reads(const Expr& e);
// e with every TensorRead replaced by what `with` makes of it (its indices already
// mapped): the read itself to keep it.
Expr map_tensor_reads(const Expr& e, const std::function<Expr(const TensorReadNode* read, const Expr& e)>& with);

// ---- Buffers ----
struct BufferUse {
  std::set<const BufferNode*> loaded, stored;
  bool loads(const BufferNode* b) const { return loaded.count(b) != 0; }
  bool stores(const BufferNode* b) const { return stored.count(b) != 0; }
};
// The buffers s (or e) loads from and stores to (a tensor intrinsic's through its body).
BufferUse buffer_use(const Stmt& s);
BufferUse buffer_use(const Expr& e);

// Whether root is a loop nest of serial or unrolled For, LetStmt, IfThenElse, Seq and
// Store statements only that loads or stores a "warp" or "warpgroup" buffer: a lane nest,
// whose steps the CUDA backend spreads over the fragments' lanes (each lane runs those on
// the elements it holds), not a loop each thread runs in order.
bool is_fragment_nest(const StmtNode* root);

// Whether every element of a's buffer that a's body loads was stored by the body before
// (the body followed iteration by iteration, its indices by value, in at most `budget`
// steps): such storage needs no zero-fill. false when unsure: an index of unknown value, a
// predicated store, a tensor intrinsic on the buffer, a non-constant shape, a longer run.
bool loads_only_stored_elements(const AllocateNode& a, int64_t budget = int64_t{1} << 16);

// ---- Conditions and linear forms ----
// The conjuncts of `a && b && ...`, left to right; {e} when e is no conjunction.
std::vector<Expr> conjuncts(const Expr& e);
// e as coef * v + rest, coef a constant and rest free of v (e - (coef * v + rest)
// simplifies to 0 under `known`); nullopt when e is not of that form (v multiplied by a
// variable, divided, under a min).
struct LinearIn {
  int64_t coef;
  Expr rest;
};
std::optional<LinearIn> linear_in(const Expr& e, const Var& v, const VarBounds& known = {});

// ---- Integer evaluation ----
// The value a variable has, or nullopt when unknown.
using VarValue = std::function<std::optional<int64_t>(const VarNode*)>;
// The value of a scalar integer or bool expression made of immediates, variables that
// value_of knows, integer casts, every binary operator, !, select, if_then_else, likely
// and Let, with te's integer semantics; nullopt for anything else (a load, a float, an
// unknown variable).
TE_API std::optional<int64_t> evaluate_int(const Expr& e, const VarValue& value_of);

}  // namespace te
