// Finding stages and their loops: a stage's leaf position, a stage by operation.
#pragma once
#include <cstddef>
#include <memory>
#include <vector>

#include "te/schedule.h"

namespace te::sched {

// Position of iv in v (by identity), or -1.
int index_of(const std::vector<IterVar>& v, const IterVar& iv);

// The position of iv among the stage's leaves. Throws te::Error naming `primitive`, the
// axis and the stage when iv is not one of its loops (another stage's, or split/fused away).
size_t check_leaf(const StageNode& stage, const IterVar& iv, const char* primitive);

// A stage at the root for op; compute ops get their axes and reduce axes as loops.
std::shared_ptr<StageNode> make_stage(const Operation& op);

// Gives the stage a new operation, remembered among its rewritten_ops.
void set_operation(StageNode& stage, Operation next);

// The stage whose current, origin or rewritten operation is op, or nullptr.
std::shared_ptr<StageNode> find_stage(const ScheduleNode& s, const OperationNode* op);
// Index of the stage in s.stages (TE_ICHECKs that it is there).
size_t stage_index(const ScheduleNode& s, const StageNode* stage);

}  // namespace te::sched
