// cp.async (sm_80+): a 16-byte copy from global to shared memory that skips the registers
// and runs while the thread goes on. The kernel printer uses it for a vector store to a
// shared buffer whose value is a plain load of a global one; every __syncthreads() of such
// a kernel first waits for the thread's copies (cp.async.wait_all), so what te's barriers
// order (insert_barriers puts one between a shared write and any read of it) stays ordered.
#pragma once
#include <string>

#include "codegen_cuda_src/helpers.h"
#include "te/ir.h"

namespace te::cuda {

// The global load n copies into shared memory, 16 bytes at once, when n is such a copy
// (the caller checked the accesses are dense vectors of `lanes`, unpredicated and not
// bounds-checked); else nullptr.
const LoadNode* async_copy_source(const StoreNode* n, int lanes);

// Registers the helpers and returns the statement copying 16 bytes from `src` to `dst`
// (address expressions).
std::string async_copy_text(HelperSet& helpers, const std::string& dst, const std::string& src);

// `kernel_text` with each __syncthreads() preceded by the wait for the thread's copies.
std::string wait_for_async_copies_at_barriers(HelperSet& helpers, const std::string& kernel_text);

// `kernel_text` with `statement` on the line before each __syncthreads() (and each
// barrier of a warp-specialized kernel's consumers, te_ptx_bar_sync(1, ...)).
std::string before_each_barrier(const std::string& kernel_text, const std::string& statement);

}  // namespace te::cuda
