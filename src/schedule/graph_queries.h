// The dataflow graph: which operations an expression or operation reads, and replacing
// reads of one operation by another throughout a schedule.
#pragma once
#include <map>
#include <vector>

#include "te/schedule.h"

namespace te::sched {

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
// A rewrite of stage's definition (skip_zeros, split_phases): its operation becomes
// `next`, and its readers are rewritten to read it.
void replace_definition(ScheduleNode& s, StageNode& stage, Operation next);
// True when the reduction axis iv of op has bounds that read tensors or use op's axes
// (a data-dependent extent).
bool has_dependent_bounds(const IterVar& iv, const OperationNode& op);

}  // namespace te::sched
