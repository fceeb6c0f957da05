// Scatter stages and data-dependent reduction bounds: the primitives they refuse.
#pragma once

#include "te/schedule.h"

namespace te::sched {

// The scatter stage whose base (filled in place) is op, or nullptr.
const StageNode* scatter_of_base(const ScheduleNode& s, const OperationNode* op);
// A te::Error naming `primitive` when op is a scatter or a scatter's base, which stay
// at the root with their own loop nests (`what` says what the primitive would do).
void refuse_scatter_parts(const ScheduleNode& s, const OperationNode& op, const char* primitive, const char* what);
// Whether axis is, bare, one of scatter op's output indices: distinct iterations of a loop
// over it write distinct elements (a scatter-add needs no atomics across them).
bool indexes_output_directly(const OperationNode& op, const IterVar& axis);
// A stage that reads op in the bounds of a reduction axis (a data-dependent extent), or
// nullptr.
const StageNode* bound_reader_of(const ScheduleNode& s, const OperationNode* op);

}  // namespace te::sched
