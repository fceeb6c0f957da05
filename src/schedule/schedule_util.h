// Internal helpers shared by the schedule primitives and by lowering.
#pragma once
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
// The same operation with another body (same name, shape and axes).
Operation with_body(const Operation& op, Expr body);

// The operations that e reads, in order of first use.
std::vector<Operation> reads_of(const Expr& e);
// True if op's body reads `producer` directly.
bool reads(const Operation& op, const OperationNode* producer);

// Replaces reads of the map's keys by reads of its values.
Expr replace_reads(const Expr& e, const std::map<const OperationNode*, Operation>& repl);
// Rewrites, in stage order, every stage whose operation reads a replaced operation (its
// new operation then replaces it in turn for the stages after it).
void propagate_replacements(ScheduleNode& s, std::map<const OperationNode*, Operation> repl);

// The ForKind annotation name for messages: "vectorized", "bound to threadIdx.x", ...
std::string describe_attr(const IterVarAttr& attr);

}  // namespace te::sched
