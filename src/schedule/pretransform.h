// The parameters of a schedule whose inputs are taken pretransformed (Schedule::pretransform).
#pragma once
#include <vector>

#include "te/schedule.h"

namespace te::sched {

// args with each pretransformed input replaced by the placeholder the function takes in
// its place; te::Error when both are listed.
std::vector<Tensor> taken_args(const ScheduleNode& s, const std::vector<Tensor>& args);

// The pretransform of `t` (its input or its taken placeholder), or nullptr.
const Pretransform* find_pretransform(const ScheduleNode& s, const Tensor& t);

}  // namespace te::sched
