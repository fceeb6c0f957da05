// TMA tile loads (intrinsics::cuda_tma_load_2d, sm_90) in CUDA modules. One thread of the
// block issues `cp.async.bulk.tensor.2d` through a tensor map the launcher encodes
// (`te_tma_encode_2d`: cuTensorMapEncodeTiled, found through the runtime); the copy
// completes on an mbarrier of its destination buffer, which every thread waits on before
// a __syncthreads() after which the kernel reads that buffer (te_tma_wait with a mask of
// destinations: the other copies stay in flight, as Stage::pipeline wants).
// Elsewhere than sm_90 the block's threads copy the box themselves.
#pragma once
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "codegen_cuda_src/helpers.h"
#include "te/ir.h"

namespace te::cuda {

// Whether n is a TMA tile load (its CUDA implementation is cuda_tma_load_*).
bool is_tma_load(const TensorIntrinsicCallNode* n);

// A tensor map a kernel takes: the global buffer it describes, seen as a matrix of its
// last dimension's columns, the box it copies and the box's swizzle (0, 32, 64, 128 bytes).
// A copy into a buffer kept in column blocks (BufferNode::swizzle_row) is one box per
// block, each the swizzle's width.
struct TmaMap {
  Buffer source;
  int rows = 0, cols = 0, swizzle = 0;
  bool same_as(const TmaMap& o) const {
    return (source.same_as(o.source) || source.name() == o.source.name()) && rows == o.rows && cols == o.cols &&
           swizzle == o.swizzle;
  }
};

// The rows and columns n copies (its declaration's box; the caller checked n is a TMA load).
std::pair<int, int> tma_box_of(const TensorIntrinsicCallNode* n);

// The map n copies through: its box, or a column block's part of it.
TmaMap tma_map_of(const TensorIntrinsicCallNode* n);

// The matrix TMA sees in a buffer: rows (all dimensions but the last, multiplied) and
// columns (the last).
Expr tma_matrix_rows(const Buffer& b);
Expr tma_matrix_cols(const Buffer& b);

// Shared memory a TMA destination needs: an mbarrier (8 bytes) per destination buffer,
// and each destination aligned as cp.async.bulk.tensor requires.
constexpr int64_t kTmaBarrierBytes = 8;
constexpr int64_t kTmaDestinationAlignment = 128;
// At most this many destination buffers per kernel (bits of the threads' wait masks).
constexpr int kMaxTmaDestinations = 32;

// The kernel parameter type of a tensor map (a CUtensorMap's 128 bytes, __grid_constant__).
std::string tma_map_param_type(HelperSet& helpers);

// Lines at the top of a kernel with TMA destinations: the mbarriers at `offset` of its
// dynamic shared memory `arena`, initialized by one thread before a barrier, and each
// thread's masks of copies to wait for and of the barriers' phase parities.
// With warp specialization (consumer_threads > 0) each destination also has an empty
// mbarrier, after the full ones, completing with an arrival per consumer thread.
std::vector<std::string> tma_kernel_prologue(HelperSet& helpers, const std::string& arena, int64_t offset,
                                             const std::vector<std::string>& destination_names,
                                             int64_t consumer_threads = 0);

// The statement the kernel waits with, before a barrier, for its pending copies into the
// destinations whose bits `mask` sets (those read before the next barrier).
std::string tma_wait_statement(HelperSet& helpers, int destinations, unsigned mask);

// The destinations (bits of their slots; slot(b) < 0: not one) that s reads before its
// first barrier, and whether every path through s meets a barrier.
struct ReadsBeforeBarrier {
  unsigned mask = 0;
  bool barrier = false;
};
ReadsBeforeBarrier tma_reads_before_barrier(const Stmt& s, const std::function<int(const BufferNode*)>& slot);

// The call issuing n: `dst` and `src` are the buffers' C names, `offset` the box's first
// element in the destination, `map` the tensor map parameter's name,
// row0/col0/rows_total/cols_total C expressions, `slot` the destination's mbarrier.
struct TmaCallText {
  std::string dst, offset, map, src, rows_total, cols_total, row0, col0;
  int slot = 0;
};
std::string tma_load_text(HelperSet& helpers, const TensorIntrinsicCallNode* n, const TmaCallText& args);

// Warp specialization (TensorIntrinsicCallNode::producer): the producer thread's call
// issuing n once the consumers released its destination (the kernel has `destinations`
// full mbarriers, then as many empty ones; the producer's te_tma_filled and
// te_tma_released track them).
std::string tma_produce_text(HelperSet& helpers, const TensorIntrinsicCallNode* n, const TmaCallText& args,
                             int destinations);

// Warp specialization: the consumer thread's statement where the producer's copy into
// destination `slot` stands: releases the buffer (its empty mbarrier) and marks the copy
// pending (te_tma_filled, te_tma_pending, te_tma_phase).
std::string tma_release_statement(HelperSet& helpers, int destinations, int slot);

// The launcher's lines encoding tensor map `var` for `map` over the buffer at `pointer`
// (rows_total x cols_total, C expressions); a failure returns its cudaError_t.
std::vector<std::string> tma_encode_lines(HelperSet& helpers, const TmaMap& map, const std::string& var,
                                          const std::string& pointer, const std::string& rows_total,
                                          const std::string& cols_total);

}  // namespace te::cuda
