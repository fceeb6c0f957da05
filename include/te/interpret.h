/// \file
/// interpret(): runs loop IR directly. The reference semantics every backend is tested against.
#pragma once
#include <vector>

#include "te/argument.h"
#include "te/export.h"
#include "te/ir.h"

namespace te {

/// args follow f.params: an NDArray for each buffer parameter, a number for each scalar.
/// Symbolic shape variables are bound from the arrays (and checked for consistency).
/// Threads bound to GPU axes run as if on a GPU: every (block, thread) pair, with
/// Barrier honoured between the threads of a block. Out-of-bounds accesses, bad
/// arguments and failed asserts throw te::Error.
TE_API void interpret(const LoweredFunc& f, const std::vector<Argument>& args);

}  // namespace te
