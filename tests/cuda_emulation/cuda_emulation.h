// A CPU emulation of the CUDA built-ins that te's generated .cu files use, so that the
// host C++ compiler can build and run them without a GPU (tests only).
//
//  - Each thread of a block is a real std::thread; blocks run one after another.
//  - threadIdx/blockIdx/blockDim/gridDim are thread_local variables.
//  - __shared__ is `static`: one copy, shared by the threads of the running block; dynamic
//    shared memory (te's TE_DYNAMIC_SHARED_MEMORY) is a fresh array per block, its size
//    checked against cudaFuncSetAttribute's limit as a GPU does.
//  - __syncthreads() is a barrier over the block's threads; a thread that returns from
//    the kernel leaves the barrier (as on current GPUs). A barrier that waits longer
//    than 60 s is a deadlock: the program aborts with a message.
//  - The warp shuffles (__shfl_sync and its down/up/xor forms) are shfl.sync as the PTX
//    ISA defines it, exchanging values through a per-block array; the threads of each
//    warp (32 consecutive linear thread indices) meet at a warp barrier before and after.
//    te's PTX instructions (mma.sync, ldmatrix, cp.async) are ptx_emulation.h's: with it,
//    a .cu file takes its TE_PTX (GPU) path; without, its portable one.
//  - __half is IEEE binary16 storage; each operation computes in float and rounds to
//    nearest even, as cuda_fp16's operators do. __nv_bfloat16 is in cuda_bf16.h.
//  - atomicAdd (float, double, int, unsigned, unsigned long long) is atomic between threads.
//  - cudaMallocAsync/cudaFreeAsync are malloc/free; launches are recorded. One device (0).
#pragma once
#include <math.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define __grid_constant__
// The runtime's version the emulation stands for (CUDA 13.0).
#define CUDART_VERSION 13000

struct alignas(8) float2 {
  float x, y;
};
struct alignas(16) float4 {
  float x, y, z, w;
};
struct alignas(8) int2 {
  int x, y;
};
struct alignas(16) int4 {
  int x, y, z, w;
};
struct alignas(8) uint2 {
  unsigned int x, y;
};
struct alignas(16) uint4 {
  unsigned int x, y, z, w;
};
struct alignas(16) double2 {
  double x, y;
};
struct uint3 {
  unsigned int x, y, z;
};
struct dim3 {
  unsigned int x, y, z;
  dim3(unsigned int x_ = 1, unsigned int y_ = 1, unsigned int z_ = 1) : x(x_), y(y_), z(z_) {}
};

inline thread_local uint3 threadIdx;
inline thread_local uint3 blockIdx;
inline thread_local dim3 blockDim;
inline thread_local dim3 gridDim;

enum cudaError_t {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorInvalidDevice = 101,
  cudaErrorNotSupported = 801,
};
typedef struct te_emu_stream* cudaStream_t;

namespace te_emu {

class BlockBarrier {
 public:
  explicit BlockBarrier(int threads) : expected_(threads) {}

  void arrive_and_wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    unsigned long long generation = generation_;
    if (++arrived_ == expected_) {
      release();
      return;
    }
    if (!cv_.wait_for(lock, std::chrono::seconds(60), [&] { return generation_ != generation; })) {
      std::fprintf(stderr, "cuda emulation: __syncthreads() deadlock (%d of %d threads arrived)\n", arrived_,
                   expected_);
      std::abort();
    }
  }

  // A thread that finished the kernel no longer takes part.
  void leave() {
    std::lock_guard<std::mutex> lock(mutex_);
    --expected_;
    if (arrived_ > 0 && arrived_ == expected_) release();
  }

 private:
  void release() {
    arrived_ = 0;
    ++generation_;
    cv_.notify_all();
  }

  std::mutex mutex_;
  std::condition_variable cv_;
  int expected_;
  int arrived_ = 0;
  unsigned long long generation_ = 0;
};

inline thread_local BlockBarrier* current_barrier = nullptr;

// The values the threads of a block publish for warp shuffles, and one barrier per warp.
struct WarpExchange {
  explicit WarpExchange(unsigned threads) : slots(threads), thread_registers(threads, 0) {
    for (unsigned w = 0; w * 32 < threads; ++w)
      warps.emplace_back(new BlockBarrier(static_cast<int>(std::min(32u, threads - w * 32))));
    for (unsigned g = 0; g * 128 < threads; ++g)
      warpgroups.emplace_back(new BlockBarrier(static_cast<int>(std::min(128u, threads - g * 128))));
  }
  std::vector<unsigned long long> slots;
  std::vector<std::unique_ptr<BlockBarrier>> warps;
  std::vector<std::unique_ptr<BlockBarrier>> warpgroups;  // Hopper's: 4 consecutive warps
  // bar.sync's named barriers 1..15: each, from its first use, completes with the thread
  // count that use gave (every use must give the same).
  std::mutex named_mutex;
  std::map<unsigned, std::pair<unsigned, std::unique_ptr<BlockBarrier>>> named;
  // setmaxnreg's per-block pool (hopper_emulation.h): the registers the block's warps gave
  // back, and each thread's count (0: still the launch's).
  std::mutex register_mutex;
  std::condition_variable register_cv;
  long long released_registers = 0;
  std::vector<int> thread_registers;
  BlockBarrier& named_barrier(unsigned id, unsigned threads) {
    std::lock_guard<std::mutex> lock(named_mutex);
    auto& [count, barrier] = named[id];
    if (!barrier) {
      count = threads;
      barrier.reset(new BlockBarrier(static_cast<int>(threads)));
    } else if (count != threads) {
      std::fprintf(stderr, "cuda emulation: bar.sync %u with %u threads, first used with %u\n", id, threads, count);
      std::abort();
    }
    return *barrier;
  }
};
inline thread_local WarpExchange* current_exchange = nullptr;
inline thread_local unsigned linear_thread = 0;
// The running block's dynamic shared memory (cudaLaunchKernel's shared_bytes), 1024-byte
// aligned as the Hopper swizzle patterns need.
inline thread_local unsigned char* dynamic_shared = nullptr;
inline thread_local std::size_t dynamic_shared_bytes = 0;
// Each kernel's cudaFuncAttributeMaxDynamicSharedMemorySize (48 KiB until raised).
inline std::mutex attributes_mutex;
inline std::vector<std::pair<const void*, int>> max_dynamic_shared;
inline int max_dynamic_shared_of(const void* kernel) {
  std::lock_guard<std::mutex> lock(attributes_mutex);
  for (const auto& [k, bytes] : max_dynamic_shared)
    if (k == kernel) return bytes;
  return 48 * 1024;
}

struct Launch {
  dim3 grid, block;
};
inline std::vector<Launch> launches;
inline long live_allocations = 0;

template <typename... P, std::size_t... I>
void call_kernel(void (*kernel)(P...), void** args, std::index_sequence<I...>) {
  kernel(*static_cast<P*>(args[I])...);
}

}  // namespace te_emu

inline void __syncthreads() { te_emu::current_barrier->arrive_and_wait(); }

namespace te_emu {

// shfl.sync (PTX ISA, "Data Movement and Conversion Instructions: shfl.sync"), as its
// pseudo-code defines it: lane j's value, where j comes from the mode, b (lane or offset)
// and c (the clamp value in bits 0-4, the segment mask in bits 8-12); a j outside the
// lane's segment, or past the end of the block, gives the lane its own value. Every lane
// of the warp must take part (membermask 0xffffffff: the emulation has no divergence).
enum class Shfl { Up, Down, Bfly, Idx };
template <typename T>
T shfl_sync(Shfl mode, unsigned membermask, T a, unsigned b, unsigned c, const char* intrinsic) {
  static_assert(sizeof(T) <= sizeof(unsigned long long), "shuffle of a wide type");
  if (membermask != 0xffffffffu) {
    std::fprintf(stderr, "cuda emulation: %s with a partial member mask\n", intrinsic);
    std::abort();
  }
  WarpExchange& x = *current_exchange;
  const unsigned me = linear_thread, lane = me & 31u, warp_base = me - lane;
  const unsigned bval = b & 31u, cval = c & 31u, segmask = (c >> 8) & 31u;
  const unsigned max_lane = (lane & segmask) | (cval & ~segmask), min_lane = lane & segmask;
  unsigned j = lane;
  bool in_range = false;
  switch (mode) {
    case Shfl::Up:
      j = lane - bval;
      in_range = int(j) >= int(max_lane);
      break;
    case Shfl::Down:
      j = lane + bval;
      in_range = j <= max_lane;
      break;
    case Shfl::Bfly:
      j = lane ^ bval;
      in_range = j <= max_lane;
      break;
    case Shfl::Idx:
      j = min_lane | (bval & ~segmask);
      in_range = j <= max_lane;
      break;
  }
  if (!in_range) j = lane;
  BlockBarrier& warp = *x.warps[me / 32];
  std::memcpy(&x.slots[me], &a, sizeof(T));
  warp.arrive_and_wait();
  T out = a;
  if (warp_base + j < x.slots.size()) std::memcpy(&out, &x.slots[warp_base + j], sizeof(T));
  warp.arrive_and_wait();
  return out;
}

}  // namespace te_emu

namespace te_emu {
// atomicAdd (CUDA C++ Programming Guide, "Atomic Functions"): adds atomically between the
// emulation's threads and returns the old value; floating point by compare-and-swap.
template <typename F>
F atomic_add_float(F* address, F value) {
  F old;
  __atomic_load(address, &old, __ATOMIC_RELAXED);
  F sum;
  do {
    sum = old + value;
  } while (!__atomic_compare_exchange(address, &old, &sum, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
  return old;
}
}  // namespace te_emu
inline float atomicAdd(float* address, float value) { return te_emu::atomic_add_float(address, value); }
inline double atomicAdd(double* address, double value) { return te_emu::atomic_add_float(address, value); }
inline int atomicAdd(int* address, int value) { return __atomic_fetch_add(address, value, __ATOMIC_RELAXED); }
inline unsigned atomicAdd(unsigned* address, unsigned value) {
  return __atomic_fetch_add(address, value, __ATOMIC_RELAXED);
}
inline unsigned long long atomicAdd(unsigned long long* address, unsigned long long value) {
  return __atomic_fetch_add(address, value, __ATOMIC_RELAXED);
}

// CUDA's intrinsics are shfl.sync with c = ((32 - width) << 8) | clamp, clamp 31 for down
// and idx (CUDA's sm_30_intrinsics).
template <typename T>
T __shfl_down_sync(unsigned mask, T value, unsigned delta, int width = 32) {
  return te_emu::shfl_sync(te_emu::Shfl::Down, mask, value, delta, ((32u - unsigned(width)) << 8) | 31u,
                           "__shfl_down_sync");
}
template <typename T>
T __shfl_sync(unsigned mask, T value, int src_lane, int width = 32) {
  return te_emu::shfl_sync(te_emu::Shfl::Idx, mask, value, unsigned(src_lane), ((32u - unsigned(width)) << 8) | 31u,
                           "__shfl_sync");
}
template <typename T>
T __shfl_xor_sync(unsigned mask, T value, int lane_mask, int width = 32) {
  return te_emu::shfl_sync(te_emu::Shfl::Bfly, mask, value, unsigned(lane_mask), ((32u - unsigned(width)) << 8) | 31u,
                           "__shfl_xor_sync");
}
template <typename T>
T __shfl_up_sync(unsigned mask, T value, unsigned delta, int width = 32) {
  return te_emu::shfl_sync(te_emu::Shfl::Up, mask, value, delta, (32u - unsigned(width)) << 8, "__shfl_up_sync");
}
[[noreturn]] inline void __trap() {
  std::fprintf(stderr, "cuda emulation: __trap() (a device assertion failed)\n");
  std::abort();
}

// te's generated kernels declare their dynamic shared memory with this macro.
#define TE_DYNAMIC_SHARED_MEMORY(name) unsigned char* const name = te_emu::dynamic_shared

enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };

// As on sm_90: a kernel may use up to 227 KiB of dynamic shared memory once raised.
template <typename... P>
cudaError_t cudaFuncSetAttribute(void (*kernel)(P...), cudaFuncAttribute attribute, int value) {
  if (attribute != cudaFuncAttributeMaxDynamicSharedMemorySize || value < 0 || value > 227 * 1024)
    return cudaErrorInvalidValue;
  std::lock_guard<std::mutex> lock(te_emu::attributes_mutex);
  for (auto& [k, bytes] : te_emu::max_dynamic_shared)
    if (k == reinterpret_cast<const void*>(kernel)) {
      bytes = value;
      return cudaSuccess;
    }
  te_emu::max_dynamic_shared.emplace_back(reinterpret_cast<const void*>(kernel), value);
  return cudaSuccess;
}

template <typename... P>
cudaError_t cudaLaunchKernel(void (*kernel)(P...), dim3 grid, dim3 block, void** args, std::size_t shared_bytes,
                             cudaStream_t) {
  unsigned long long threads = 1ull * block.x * block.y * block.z;
  if (shared_bytes > std::size_t(te_emu::max_dynamic_shared_of(reinterpret_cast<const void*>(kernel))) ||
      (sizeof...(P) > 0 && args == nullptr))
    return cudaErrorInvalidValue;
  if (grid.x == 0 || grid.y == 0 || grid.z == 0 || threads == 0 || threads > 1024 || block.x > 1024 || block.y > 1024 ||
      block.z > 64 || grid.y > 65535 || grid.z > 65535)
    return cudaErrorInvalidConfiguration;
  te_emu::launches.push_back({grid, block});
  for (unsigned int bz = 0; bz < grid.z; ++bz)
    for (unsigned int by = 0; by < grid.y; ++by)
      for (unsigned int bx = 0; bx < grid.x; ++bx) {
        te_emu::BlockBarrier barrier(static_cast<int>(threads));
        // Uninitialized (a fixed pattern) per block, as a GPU's is: a kernel must not rely on it.
        std::vector<unsigned char> dynamic(shared_bytes + 1024, 0xa5);
        unsigned char* dynamic_base =
            dynamic.data() + (1024 - reinterpret_cast<std::uintptr_t>(dynamic.data()) % 1024) % 1024;
        te_emu::WarpExchange exchange(static_cast<unsigned>(threads));
        std::vector<std::thread> workers;
        workers.reserve(threads);
        for (unsigned int tz = 0; tz < block.z; ++tz)
          for (unsigned int ty = 0; ty < block.y; ++ty)
            for (unsigned int tx = 0; tx < block.x; ++tx)
              workers.emplace_back([=, &barrier, &exchange] {
                te_emu::dynamic_shared = dynamic_base;
                te_emu::dynamic_shared_bytes = shared_bytes;
                threadIdx = uint3{tx, ty, tz};
                te_emu::linear_thread = tx + block.x * (ty + block.y * tz);
                te_emu::current_exchange = &exchange;
                blockIdx = uint3{bx, by, bz};
                blockDim = block;
                gridDim = grid;
                te_emu::current_barrier = &barrier;
                te_emu::call_kernel(kernel, args, std::index_sequence_for<P...>());
                barrier.leave();
                exchange.warps[te_emu::linear_thread / 32]->leave();
                exchange.warpgroups[te_emu::linear_thread / 128]->leave();
              });
        for (std::thread& t : workers) t.join();
      }
  return cudaSuccess;
}

inline cudaError_t cudaMallocAsync(void** ptr, std::size_t bytes, cudaStream_t) {
  *ptr = std::malloc(bytes);
  if (!*ptr) return cudaErrorMemoryAllocation;
  ++te_emu::live_allocations;
  return cudaSuccess;
}
inline cudaError_t cudaFreeAsync(void* ptr, cudaStream_t) {
  if (ptr) --te_emu::live_allocations;
  std::free(ptr);
  return cudaSuccess;
}

// The emulation is one device, 0.
inline cudaError_t cudaSetDevice(int device) { return device == 0 ? cudaSuccess : cudaErrorInvalidDevice; }
inline const char* cudaGetErrorString(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorNotSupported: return "operation not supported";
  }
  return "unrecognized error code";
}

// ---- Device math intrinsics ----
inline float __expf(float x) { return expf(x); }
inline float __logf(float x) { return logf(x); }
inline float __powf(float x, float y) { return powf(x, y); }
inline float __tanhf(float x) { return tanhf(x); }
inline float __fdividef(float x, float y) { return x / y; }
inline float __sinf(float x) { return sinf(x); }
inline float __cosf(float x) { return cosf(x); }
inline float __tanf(float x) { return tanf(x); }
inline float __log2f(float x) { return log2f(x); }
inline float __log10f(float x) { return log10f(x); }
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
inline int __popc(unsigned int x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
using std::isfinite;
using std::isinf;
using std::isnan;
inline float __fmul_rn(float x, float y) { return x * y; }
inline double __dmul_rn(double x, double y) { return x * y; }
inline float __int_as_float(int bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}
inline double __longlong_as_double(long long bits) {
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

// ---- cuda_fp16 ----
struct __half {
  uint16_t bits;
};
typedef __half half;
struct alignas(4) __half2 {
  __half x, y;
};

inline __half __ushort_as_half(unsigned short bits) {
  __half h;
  h.bits = bits;
  return h;
}

inline unsigned short __half_as_ushort(__half h) { return h.bits; }

inline float __half2float(__half h) {
  float sign = (h.bits & 0x8000u) ? -1.0f : 1.0f;
  unsigned exponent = (h.bits >> 10) & 0x1fu, mantissa = h.bits & 0x3ffu;
  if (exponent == 31) return mantissa ? NAN : sign * INFINITY;
  if (exponent == 0) return sign * std::ldexp(static_cast<float>(mantissa), -24);
  return sign * std::ldexp(static_cast<float>(mantissa + 1024), static_cast<int>(exponent) - 25);
}

// Round to nearest, ties to even.
inline __half __float2half_rn(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  uint32_t ax = x & 0x7fffffffu;
  uint16_t h;
  if (ax > 0x7f800000u) {
    h = 0x7e00;  // NaN
  } else if (ax >= 0x477ff000u) {
    h = 0x7c00;  // >= 65520 rounds to infinity
  } else if (ax < 0x38800000u) {
    // Below 2^-14: a subnormal half, |f| * 2^24 rounded (exact scaling by a power of two).
    h = static_cast<uint16_t>(std::nearbyint(std::fabs(f) * 16777216.0f));
  } else {
    uint32_t exponent = (ax >> 23) - 127 + 15, mantissa = ax & 0x7fffffu;
    uint32_t bits = (exponent << 10) | (mantissa >> 13), rest = mantissa & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (bits & 1u))) ++bits;  // may carry into the exponent
    h = static_cast<uint16_t>(bits);
  }
  return __ushort_as_half(static_cast<unsigned short>(sign | h));
}

// Rounds once: through float rounded to odd, which keeps the final rounding exact.
inline __half __double2half(double d) {
  float f = static_cast<float>(d);
  if (static_cast<double>(f) != d && std::isfinite(d) && std::isfinite(f)) {
    if (std::fabs(static_cast<double>(f)) > std::fabs(d)) f = std::nextafter(f, 0.0f);
    uint32_t b;
    std::memcpy(&b, &f, sizeof b);
    b |= 1u;
    std::memcpy(&f, &b, sizeof f);
  }
  return __float2half_rn(f);
}

inline __half operator+(__half a, __half b) { return __float2half_rn(__half2float(a) + __half2float(b)); }
inline __half operator-(__half a, __half b) { return __float2half_rn(__half2float(a) - __half2float(b)); }
inline __half operator*(__half a, __half b) { return __float2half_rn(__half2float(a) * __half2float(b)); }
inline __half operator/(__half a, __half b) { return __float2half_rn(__half2float(a) / __half2float(b)); }
inline bool operator==(__half a, __half b) { return __half2float(a) == __half2float(b); }
inline bool operator!=(__half a, __half b) { return __half2float(a) != __half2float(b); }
inline bool operator<(__half a, __half b) { return __half2float(a) < __half2float(b); }
inline bool operator<=(__half a, __half b) { return __half2float(a) <= __half2float(b); }
inline bool operator>(__half a, __half b) { return __half2float(a) > __half2float(b); }
inline bool operator>=(__half a, __half b) { return __half2float(a) >= __half2float(b); }
