// Warp-specialized kernels (Stage::warp_specialize, sm_90): the kernel prints its body
// twice, as two branches on threadIdx.y. The producer warpgroup (threadIdx.y one past
// the consumers') keeps only the TMA copies and the loops, lets and conditions around
// them, which one thread issues as soon as the consumers released each buffer. The
// consumer warpgroups run the whole program with each copy replaced by the release of
// its buffer, wait for a tile where they read it, and synchronize among themselves with
// a named barrier (the producer never reaches their barriers).
#pragma once
#include <string>
#include <string_view>

#include "codegen_cuda_src/helpers.h"
#include "te/ir.h"

namespace te::cuda {

// s restricted to the producer's part: its warp-specialized TMA copies and the loops,
// lets, conditions, asserts and allocations around them (threadIdx loops dropped: the
// copies do not depend on them; the allocations of the shared buffers s uses stay, where
// their places in dynamic shared memory are decided); undefined when s has no such copy.
Stmt producer_part(const Stmt& s);

// Whether s holds a warp-specialized copy (where the consumers print a release).
bool has_producer_copy(const Stmt& s);

// Whether s is nothing but warp-specialized copies and the loops (not thread loops),
// lets and conditions around them: what the consumers print as releases alone.
bool is_producer_part(const Stmt& s);

// The consumers' barrier (barrier 1 over their threads) in place of __syncthreads().
std::string consumer_barrier_statement(HelperSet& helpers, int64_t consumer_threads);

// Whether a printed statement is such a barrier.
bool is_consumer_barrier(std::string_view statement);

// The first lines of each branch: the producer's (registers given back, one thread then
// issuing the copies) and the consumers' (registers taken).
std::vector<std::string> producer_branch_lines(HelperSet& helpers, const WarpSpecialization& ws);
std::vector<std::string> consumer_branch_lines(HelperSet& helpers, const WarpSpecialization& ws);

}  // namespace te::cuda
