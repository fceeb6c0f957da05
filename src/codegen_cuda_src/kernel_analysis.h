// What a kernel (a top-level loop nest bound to blockIdx) needs and whether CUDA can run
// it: launch sizes, the buffers and variables it takes from the host, its shared memory
// and the index width; every CUDA-specific rule is checked here with a te::Error.
#pragma once
#include <array>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "codegen_cuda_src/lane_nest.h"
#include "codegen_cuda_src/tma.h"
#include "codegen_cuda_src/value_range.h"
#include "te/cuda.h"
#include "te/ir.h"

namespace te::cuda {

// The letters of CUDA's launch dimensions: blockIdx.x, threadIdx.y, ...
inline constexpr char kAxes[] = {'x', 'y', 'z'};

// CUDA's limits.
constexpr int64_t kMaxThreadsPerBlock = 1024;
constexpr int64_t kMaxBlockDim[3] = {1024, 1024, 64};
constexpr int64_t kMaxGridDim[3] = {2147483647, 65535, 65535};
constexpr int64_t kMaxStaticSharedBytes = 48 * 1024;
// Beyond 48 KiB a block's shared memory is dynamic, up to what sm_90 gives a block (227
// KiB; sm_80 has 163, sm_86/89 99: the launch fails with the driver's error there).
constexpr int64_t kMaxDynamicSharedBytes = 227 * 1024;
// Each shared buffer of a kernel with dynamic shared memory starts at a multiple of this.
constexpr int64_t kSharedAlignment = 16;
// A swizzled shared buffer (Stage::swizzle) starts on a boundary of the widest swizzle
// pattern (8 rows of 128 bytes), where Hopper's TMA and wgmma expect its patterns; a
// kernel with one takes its shared memory dynamically, 1024-byte aligned.
constexpr int64_t kSwizzledAlignment = 1024;

// "blockIdx.x" -> {true, 0}; "threadIdx.z" -> {false, 2}. Throws te::Error for other tags.
struct ThreadTag {
  bool is_block = false;
  int dim = 0;
};
ThreadTag parse_thread_tag(const std::string& tag, const std::string& loop_var);

struct KernelAnalysis {
  // Extents per dimension (undefined where the kernel does not bind that axis).
  std::array<Expr, 3> grid, block;
  // Buffers the kernel reads or writes that it does not allocate, in order of first use.
  std::vector<Buffer> buffers;
  std::set<std::string> written;  // names of those it stores to
  // Variables the kernel reads that the host binds, in order of first use.
  std::vector<Var> free_vars;
  // Shared memory per block: the buffers' bytes, each rounded up to kSharedAlignment;
  // dynamic above kMaxStaticSharedBytes.
  int64_t shared_bytes = 0;
  bool dynamic_shared = false;
  bool index_64bit = false;
  // TMA (intrinsics::cuda_tma_load_2d): the tensor maps the kernel takes, in order of
  // first use, and the shared buffers TMA fills, each with an mbarrier (its index here)
  // at tma_barrier_offset of the kernel's dynamic shared memory.
  std::vector<TmaMap> tma_maps;
  std::vector<Buffer> tma_destinations;
  // The loop nests at warp level that read or write warp fragments element by element,
  // each as its lanes run it (lane_nest.h).
  std::map<const ForNode*, LaneNest> lane_nests;
  // How the lanes hold each warp buffer (set by intrinsics, or inferred for lane nests).
  std::map<const BufferNode*, FragmentLayout> fragment_layouts;
  int64_t tma_barrier_offset = 0;
  // Warp specialization (Stage::warp_specialize): the setmaxnreg registers, and the
  // consumer warpgroups, threadIdx.y below the producer's (threadIdx.y ==
  // consumer_warpgroups; block[1] counts it). Each TMA destination then also has an
  // "empty" mbarrier, after the "full" ones.
  std::optional<WarpSpecialization> warp_specialization;
  int64_t consumer_warpgroups = 0;

  // Where in tma_destinations b is (-1: not a TMA destination).
  int tma_slot(const BufferNode* b) const;
  int tma_slot(const Buffer& b) const { return tma_slot(b.get()); }
  // The alignment of shared buffer b's start: a swizzled buffer's pattern, a TMA
  // destination's 128 bytes, else kSharedAlignment.
  int64_t shared_alignment(const Buffer& b) const;
};

// The variables visible at a point of the host code.
using HostVars = std::map<const VarNode*, Var>;

// Analyses the kernel rooted at `root` (a thread-bound loop at host level; it must bind
// blockIdx). host_ranges holds what is known of the host variables' values.
KernelAnalysis analyze_kernel(const ForNode* root, const std::string& kernel_name, const HostVars& host_vars,
                              const VarRanges& host_ranges, CudaOptions::IndexWidth width);

}  // namespace te::cuda
