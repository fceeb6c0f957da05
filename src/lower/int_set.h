// Symbolic interval arithmetic for bound inference and loop partitioning: the values an
// integer expression takes while some variables ("relaxed") range over their loops and
// the others stay fixed (symbolic points).
#pragma once
#include <map>

#include "te/ir.h"
#include "te/simplify.h"

namespace te::lowering {

// The closed interval [min, max]; an undefined end is unbounded.
struct IntSet {
  Expr min, max;
  static IntSet point(const Expr& e) { return {e, e}; }
  bool bounded() const { return min.defined() && max.defined(); }
};

// Relaxed variables and their ranges; a range may mention other relaxed variables.
using RelaxMap = std::map<const VarNode*, Range>;

// The set of values of integer expression e. Division and modulo by a variable or
// expression assume a positive divisor (as extents and split factors are). `known`
// holds constant bounds used to simplify and compare the ends.
IntSet eval_set(const Expr& e, const RelaxMap& relax, const VarBounds& known);

// The smallest interval holding both.
IntSet union_set(const IntSet& a, const IntSet& b, const VarBounds& known);

// min(a, b) / max(a, b), decided when provable, else as expressions.
Expr pick_min(const Expr& a, const Expr& b, const VarBounds& known);
Expr pick_max(const Expr& a, const Expr& b, const VarBounds& known);

// True if e mentions any variable of relax.
bool uses_any(const Expr& e, const RelaxMap& relax);

}  // namespace te::lowering
