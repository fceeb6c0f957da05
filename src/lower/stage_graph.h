// Queries on a schedule that lowering needs: attach paths, consumers, thread bindings.
#pragma once
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "te/lower.h"
#include "te/schedule.h"
#include "te/simplify.h"

namespace te::lowering {

// One enclosing loop: leaf iv of stage.
struct AttachLevel {
  const StageNode* stage;
  IterVar iv;
};

// The stage whose current operation is op (nullptr if none).
const StageNode* stage_of_op(const ScheduleNode& s, const OperationNode* op);
// The stage a Scope-attached stage is computed in.
const StageNode* attach_parent(const ScheduleNode& s, const StageNode& st);
// The loops around a stage's nest, innermost first (empty at the root).
std::vector<AttachLevel> attach_path(const ScheduleNode& s, const StageNode& st);

// The computed stages (not inlined) whose operation reads st's operation.
std::vector<const StageNode*> consumers_of(const ScheduleNode& s, const StageNode& st);

// "threadIdx.x" etc. for a leaf bound to a GPU thread axis; "" otherwise (vthread loops
// run as serial loops).
std::string thread_tag(const StageNode& st, const IterVar& iv);
// 0 for blockIdx, 1 for threadIdx.
int thread_rank(const std::string& tag);
// global 0, shared 1, local 2: a buffer is shared by the threads of ranks >= its own.
int scope_rank(MemoryScope scope);
// The loop variables of the leaves bound to vthread (their loops are serial until
// inject_virtual_thread interleaves them).
std::set<const VarNode*> vthread_loop_vars(const ScheduleNode& s);

// The actual loop a thread-bound leaf runs on: the enclosing loop of the same thread
// tag when there is one (the leaf then has no loop of its own), else the leaf itself.
AttachLevel thread_loop(const ScheduleNode& s, const StageNode& st, const IterVar& leaf);
// Loops run from 0: a leaf's value inside the stage's nest is its range's min plus its
// loop variable, or plus the variable of the enclosing thread loop it shares.
Expr leaf_value(const ScheduleNode& s, const StageNode& st, const IterVar& leaf, const BoundMap& bounds);

// Whether a split runs its last iteration shifted inwards: ShiftInwards asked, the factor
// does not divide the extent and the extent is at least the factor (else: guards).
bool shifts_inwards(const SplitRelation& sp, const Expr& extent, const VarBounds& known);

// Values of every iter var from the values of the leaves, through the relations in
// reverse (split: parent = min + outer * factor + inner, or min + min(outer * factor,
// extent - factor) + inner when shifted inwards; fuse: outer/inner from fused).
std::map<const IterVarNode*, Expr> pass_up_values(const StageNode& st, std::map<const IterVarNode*, Expr> value,
                                                  const BoundMap& bounds, const VarBounds& known);

// The root axes (the op's axes and reduce axes) that a leaf loop is made of, through the
// stage's splits and fuses.
std::vector<IterVar> root_axes_of(const StageNode& st, const IterVar& leaf);

// Constant bounds of the variables in shapes and reduction domains: the assumption that
// lets the simplifier reason about index arithmetic without overflow. Each lies in
// [0, kShapeVarMax], and a dimension c * v + d of int32 type fits int32; a variable split
// factor lies in [1, kShapeVarMax].
constexpr int64_t kShapeVarMax = (int64_t{1} << 30) - 1;
VarBounds shape_var_bounds(const ScheduleNode& s);

}  // namespace te::lowering
