// Constant bounds of the loop variables of a statement, for the passes that need to
// prove facts about indices (storage sizes, loop partitioning).
#pragma once
#include "te/ir.h"
#include "te/simplify.h"

namespace te::lowering {

// known plus every loop variable of s whose range has constant bounds. With open_ended,
// a loop with a constant min and no constant max gets [min, the type's max].
VarBounds loop_var_bounds(const Stmt& s, const VarBounds& known, bool open_ended = true);

// Adds v in [min, min + extent) to known when constant bounds can be found (see above).
void add_range_bounds(VarBounds& known, const Var& v, const Expr& min, const Expr& extent, bool open_ended = true);

}  // namespace te::lowering
