/// \file
/// The CUDA C source backend: a LoweredFunc with blockIdx/threadIdx bindings becomes one
/// self-contained .cu file (kernels plus a host launcher) for nvcc or NVRTC.
///
/// Mapping (src/codegen_cuda_src/README.md has the full rules):
///  - Each top-level loop nest bound to blockIdx.* is one `extern "C" __global__` kernel;
///    its thread-bound loops read blockIdx/threadIdx, every other loop stays a C loop.
///    Everything outside those nests is host code in the launcher: lets, asserts (the
///    launcher returns cudaErrorInvalidValue when one fails), serial loops and global
///    allocations (cudaMallocAsync / cudaFreeAsync on the stream).
///  - Allocate in shared scope is a `__shared__` array, in local scope a per-thread array;
///    both need constant sizes. Barrier is __syncthreads().
///  - te's semantics are kept: integer / and % floor, x / 0 == 0, INT_MIN / -1 wraps,
///    float -> int casts truncate and saturate (NaN -> 0), float min/max are
///    `a < b ? a : b` / `a > b ? a : b`, float16 and bfloat16 (`__nv_bfloat16`,
///    computed in float) round after every operation,
///    if_then_else evaluates only the taken side. Signed 32- and 64-bit + - * are plain C
///    operators (as in TVM and Halide): CUDA, like C, does not define their overflow.
///  - Index arithmetic: int32 values are computed in 64 bits in a kernel where an extent
///    or a buffer size may exceed 2^31 - 1 (CudaOptions::index_width).
///
/// The launcher, `extern "C" cudaError_t name(buffers..., shape vars..., cudaStream_t)`,
/// takes raw device pointers in the order of the LoweredFunc's buffer parameters, then
/// every symbolic variable in order of first appearance (buffer shapes, then scalar
/// parameters), computes each kernel's grid and block from them, skips a kernel whose
/// grid is empty, launches the kernels in order and returns the first error.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "te/export.h"
#include "te/ir.h"

namespace te {

/// Options of build_cuda().
struct TE_API CudaOptions {
  /// Use CUDA's fast, less accurate float32 intrinsics: __expf, __logf, __powf, __tanhf,
  /// __fdividef.
  bool fast_math = false;
  /// How int32 index arithmetic is emitted. Auto: in 64 bits in each kernel where a loop
  /// extent or an accessed buffer's element count may exceed 2^31 - 1; Int32 / Int64: always.
  enum class IndexWidth : uint8_t {
    Auto,   ///< 64 bits only where an extent or a buffer may exceed 2^31 - 1
    Int32,  ///< always 32 bits
    Int64   ///< always 64 bits
  };
  IndexWidth index_width = IndexWidth::Auto;  ///< See IndexWidth.
  /// Headers (paths) defining the `__device__` functions that call_extern calls. Their
  /// text is copied into the source, after te's preamble and before the kernels, so the
  /// .cu stays one self-contained file for nvcc and NVRTC (a header's own #includes are
  /// kept as written: the compiler's include path resolves them). build_cuda checks that
  /// each extern name appears in a header (or in extern_code) followed by `(`, outside
  /// comments: a te::Error names the ones that do not. That check is textual: a name
  /// declared only through a macro is not seen, and a name merely called there passes
  /// (nvcc then reports it).
  std::vector<std::string> extern_headers;
  /// Source text copied in after extern_headers, as if it were one more header.
  std::string extern_code;
  /// Names call_extern may call that CUDA declares itself (its math library and
  /// intrinsics: "hypotf", "normcdff", "__brev"): no header needed, te takes them on trust.
  std::vector<std::string> extern_builtins;
  /// Copies of 16 bytes from global to shared memory (a vectorized cache_read "shared"
  /// stage) through `cp.async` where the GPU has it (sm_80+; plain loads and stores
  /// elsewhere): the copy skips the registers and overlaps what the thread does next;
  /// each __syncthreads() of the kernel first waits for the thread's copies (copies under
  /// a condition too, such as a double buffer's guarded prefetch of the next tile).
  bool async_copies = true;
  /// The GPU the file is for, as Target::arch spells it ("sm_80", "sm_90", "sm_90a";
  /// empty: any). build_cuda refuses a tensor intrinsic that GPU lacks (te::Error naming
  /// it and what it needs: wgmma sm_90a, TMA sm_90, mma.sync and ldmatrix sm_80), instead
  /// of leaving it to the helper's slower portable path, and the file stops nvcc (an
  /// #error) compiling it for another architecture.
  std::string arch;
};

/// One parameter of a kernel or of the host launcher.
struct TE_API CudaParam {
  std::string name;    ///< the C identifier in the source
  std::string c_type;  ///< "const float* __restrict__", "float*", "int32_t", ...
  Buffer buffer;       ///< defined for a buffer (pointer) parameter
  Var var;             ///< defined for a scalar parameter
  /// For a TMA tensor map (a kernel's `const __grid_constant__ te_tensor_map`, which the
  /// launcher encodes over `buffer`): the box's rows, columns and swizzle bytes; zeros
  /// for every other parameter.
  std::array<int, 3> tensor_map_box{{0, 0, 0}};
  /// Whether this is a TMA tensor map parameter (intrinsics::cuda_tma_load_2d).
  bool is_tensor_map() const { return tensor_map_box[0] != 0; }
  /// Whether this is a buffer (pointer) parameter.
  bool is_buffer() const { return buffer.defined() && !is_tensor_map(); }
};

/// Grid and block sizes of one launch, x/y/z.
struct TE_API CudaLaunchDims {
  std::array<int64_t, 3> grid{{1, 1, 1}};   ///< Blocks along x, y, z.
  std::array<int64_t, 3> block{{1, 1, 1}};  ///< Threads per block along x, y, z.
  /// block x * y * z.
  int64_t threads_per_block() const { return block[0] * block[1] * block[2]; }
};

/// One __global__ function of a CudaModule.
struct TE_API CudaKernel {
  std::string name;               ///< The kernel's C name ("vadd_kernel0").
  std::vector<CudaParam> params;  ///< Its parameters, in order.
  /// Extents of blockIdx.x/y/z (1 where not bound), over the launcher's scalar
  /// parameters (and host loop variables when launched in a loop).
  std::array<Expr, 3> grid;
  /// Extents of threadIdx.x/y/z (1 where not bound), as for grid.
  std::array<Expr, 3> block;
  int64_t shared_bytes = 0;     ///< __shared__ memory per block
  bool dynamic_shared = false;  ///< above 48 KiB: dynamic (the launcher raises the kernel's limit)
  bool index_64bit = false;     ///< int32 index arithmetic is computed in 64 bits

  /// The sizes for given values of the variables above, by name ({{"n", 1000}}).
  /// Throws te::Error naming a variable that has no value.
  CudaLaunchDims launch_dims(const std::map<std::string, int64_t>& values) const;
};

/// The CUDA C of one LoweredFunc (see build_cuda): the source and what a launch needs.
class TE_API CudaModule {
 public:
  /// An empty module.
  CudaModule() = default;
  /// A module with these parts (build_cuda makes them).
  CudaModule(std::string name, std::string source, std::vector<CudaParam> launcher_params,
             std::vector<CudaKernel> kernels, bool uses_half, bool uses_bfloat16 = false);

  /// The host launcher's name (the LoweredFunc's).
  const std::string& name() const { return name_; }
  /// A complete .cu file: nvcc compiles it as it is; NVRTC (which defines
  /// __CUDACC_RTC__) sees only the kernels.
  const std::string& source() const { return source_; }
  /// The launcher's parameters, without the trailing cudaStream_t.
  const std::vector<CudaParam>& launcher_params() const { return launcher_params_; }
  /// The launcher's prototype for the caller's code:
  /// `extern "C" cudaError_t vadd(float* A, float* B, float* C, int32_t n, cudaStream_t stream);`
  std::string launcher_declaration() const;
  /// The kernels in launch order.
  const std::vector<CudaKernel>& kernels() const { return kernels_; }
  /// True if the source includes cuda_fp16.h (a float16 value is used).
  bool uses_half() const { return uses_half_; }
  /// True if the source includes cuda_bf16.h (a bfloat16 value is used: __nv_bfloat16).
  bool uses_bfloat16() const { return uses_bfloat16_; }

 private:
  std::string name_;
  std::string source_;
  std::vector<CudaParam> launcher_params_;
  std::vector<CudaKernel> kernels_;
  bool uses_half_ = false;
  bool uses_bfloat16_ = false;
};

/// Generates CUDA C for f. Throws te::Error when f cannot run on a GPU as it is: a
/// statement outside every kernel that needs one (a store, a barrier, a shared or local
/// allocation), a threadIdx loop outside every blockIdx loop, a blockIdx loop inside a
/// threadIdx loop, one thread tag bound to different extents in one kernel, more than
/// 1024 threads per block or a grid/block dimension over CUDA's limit (when constant),
/// more than 227 KiB of shared memory (above 48 KiB it is dynamic), non-constant shared or local sizes, a
/// call_extern whose name no header of options declares (or that host code would run),
/// a header that cannot be read.
TE_API CudaModule build_cuda(const LoweredFunc& f, const CudaOptions& options = {});

/// True if te was built with NVRTC (the CUDA toolkit was found by CMake).
TE_API bool nvrtc_available();

/// Compiles the module's kernels with NVRTC for arch ("sm_80" or "compute_80") and
/// returns the PTX. Throws te::Error with NVRTC's log when compilation fails, and when
/// te was built without NVRTC.
TE_API std::string compile_ptx(const CudaModule& module, const std::string& arch = "sm_80",
                               const std::vector<std::string>& extra_options = {});

}  // namespace te
