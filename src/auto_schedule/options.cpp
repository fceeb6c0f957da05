// AutoScheduleOptions: the checks auto_schedule() makes before it touches the graph.
#include <fmt/format.h>

#include <cmath>

#include "target/target_check.h"
#include "te/auto_schedule.h"
#include "te/error.h"

namespace te {

void validate(const AutoScheduleOptions& o) {
  check_target_fields(o.target, "auto_schedule: AutoScheduleOptions::target");
  if (o.trials < 0)
    throw Error(
        fmt::format("auto_schedule: AutoScheduleOptions::trials is {}; use 0 (the rules alone) or a "
                    "positive number of measured trials",
                    o.trials));
  if (!std::isfinite(o.time_budget_s) || o.time_budget_s < 0)
    throw Error(
        fmt::format("auto_schedule: AutoScheduleOptions::time_budget_s is {}; use 0 (no limit) or a "
                    "positive number of seconds",
                    o.time_budget_s));
  if (o.threads < 0)
    throw Error(
        fmt::format("auto_schedule: AutoScheduleOptions::threads is {}; use 0 (every thread of te's pool) "
                    "or a positive count",
                    o.threads));
  if (o.cuda_threads_per_block < 32 || o.cuda_threads_per_block > 1024 || o.cuda_threads_per_block % 32 != 0)
    throw Error(
        fmt::format("auto_schedule: AutoScheduleOptions::cuda_threads_per_block is {}; use a multiple "
                    "of 32 from 32 to 1024",
                    o.cuda_threads_per_block));
}

}  // namespace te
