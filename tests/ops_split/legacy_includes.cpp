// Part of test_grid_sample: the deprecated include paths keep working for one release.
// te/ops/<op>.h alone (no TE_OPS_COMPUTE_ONLY) still declares the op's schedules, now
// kept in te/ops/<op>_cpu.h and te/ops/<op>_cuda.h, and te/ops/matmul_tensorcore.h still
// declares the tensor-core schedule (now in te/ops/matmul_cuda.h).
#include <te/ops/bev_pool.h>
#include <te/ops/gemm_int8.h>
#include <te/ops/grid_sample.h>
#include <te/ops/matmul_tensorcore.h>
#include <te/ops/normalization.h>

#include <type_traits>
#include <utility>

namespace te::ops {
struct LegacyNotDeclared {};
LegacyNotDeclared schedule_grid_sample_cpu(...);
LegacyNotDeclared schedule_grid_sample_cuda(...);
LegacyNotDeclared schedule_bev_pool_cpu(...);
LegacyNotDeclared schedule_bev_pool_cuda(...);
LegacyNotDeclared schedule_softmax_cuda(...);
LegacyNotDeclared schedule_matmul_cuda(...);
LegacyNotDeclared schedule_matmul_tensorcore_cuda(...);
LegacyNotDeclared schedule_gemm_u8s8_cpu(...);
}  // namespace te::ops

namespace {

using te::Schedule;
using te::Tensor;
template <typename F>
constexpr bool declared = !std::is_same_v<F, te::ops::LegacyNotDeclared>;
#define TE_DECLARED(fn, arg) declared<decltype(te::ops::fn(std::declval<Schedule&>(), std::declval<const arg&>()))>

static_assert(TE_DECLARED(schedule_grid_sample_cpu, Tensor) && TE_DECLARED(schedule_grid_sample_cuda, Tensor));
static_assert(TE_DECLARED(schedule_bev_pool_cpu, Tensor) && TE_DECLARED(schedule_bev_pool_cuda, Tensor));
static_assert(TE_DECLARED(schedule_softmax_cuda, Tensor));
static_assert(TE_DECLARED(schedule_matmul_cuda, Tensor) && TE_DECLARED(schedule_matmul_tensorcore_cuda, Tensor));
static_assert(TE_DECLARED(schedule_gemm_u8s8_cpu, te::ops::GemmU8S8));

}  // namespace
