// Internal helpers shared by the schedule primitives and by lowering.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "te/schedule.h"

namespace te::sched {

// 'name', for error messages.
std::string quote(const std::string& name);

// Position of iv in v (by identity), or -1.
int index_of(const std::vector<IterVar>& v, const IterVar& iv);

// The position of iv among the stage's leaves. Throws te::Error naming `primitive`, the
// axis and the stage when iv is not one of its loops (another stage's, or split/fused away).
size_t check_leaf(const StageNode& stage, const IterVar& iv, const char* primitive);

// A stage at the root for op; compute ops get their axes and reduce axes as loops.
std::shared_ptr<StageNode> make_stage(const Operation& op);

// The stage whose current or origin operation is op, or nullptr.
std::shared_ptr<StageNode> find_stage(const ScheduleNode& s, const OperationNode* op);
// Index of the stage in s.stages (TE_ICHECKs that it is there).
size_t stage_index(const ScheduleNode& s, const StageNode* stage);

// A compute operation; its reduce axes and inputs are taken from the body.
Operation make_compute(std::string name, std::vector<Expr> shape, std::vector<IterVar> axis,
                       Expr body);
// A compute with one output per body (a multi-output compute when several).
Operation make_compute(std::vector<std::string> names, std::vector<Expr> shape, std::vector<IterVar> axis,
                       std::vector<Expr> bodies);
// The names of op's outputs, in order.
std::vector<std::string> output_names(const OperationNode& op);
// The same operation with other bodies (same names, shape, axes and scatter target).
Operation with_bodies(const Operation& op, std::vector<Expr> bodies);
// op with fn applied to each body and scatter index, and its scatter base replaced by
// new_ops' entry if it has one; op itself when nothing changes.
Operation map_bodies(const Operation& op, const std::function<Expr(const Expr&)>& fn,
                     const std::map<const OperationNode*, Operation>& new_ops = {});

// The operations that e reads, in order of first use.
std::vector<Operation> reads_of(const Expr& e);
// The operations op depends on, in order of first use: a scatter's base, then what its
// bodies, its reduce axes' bounds and its scatter index read.
std::vector<Operation> reads_of(const OperationNode& op);
// The operations that op's reduce axes' bounds read (data-dependent reduction extents).
std::vector<Operation> bound_reads_of(const OperationNode& op);
// True if one of op's bodies reads `producer` directly.
bool reads(const Operation& op, const OperationNode* producer);

// Replaces reads of the map's keys by reads of its values.
Expr replace_reads(const Expr& e, const std::map<const OperationNode*, Operation>& repl);
// Rewrites, in stage order, every stage whose operation reads a replaced operation (its
// new operation then replaces it in turn for the stages after it).
void propagate_replacements(ScheduleNode& s, std::map<const OperationNode*, Operation> repl);

// The scatter stage whose base (filled in place) is op, or nullptr.
const StageNode* scatter_of_base(const ScheduleNode& s, const OperationNode* op);
// A te::Error naming `primitive` when op is a scatter or a scatter's base, which stay
// at the root with their own loop nests (`what` says what the primitive would do).
void refuse_scatter_parts(const ScheduleNode& s, const OperationNode& op, const char* primitive, const char* what);
// A stage that reads op in the bounds of a reduction axis (a data-dependent extent), or
// nullptr.
const StageNode* bound_reader_of(const ScheduleNode& s, const OperationNode* op);

// e with vars renamed; a Reduce whose axes' bounds use a renamed variable gets fresh axes
// (same names) over the renamed bounds.
Expr rename_vars(const Expr& e, const std::vector<std::pair<Var, Expr>>& rename);
// True when the reduction axis iv of op has bounds that read tensors or use op's axes
// (a data-dependent extent).
bool has_dependent_bounds(const IterVar& iv, const OperationNode& op);

// The ForKind annotation name for messages: "vectorized", "bound to threadIdx.x", ...
std::string describe_attr(const IterVarAttr& attr);

}  // namespace te::sched
