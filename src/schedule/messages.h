// Text for the schedule's error messages: quoted names and loop annotations.
#pragma once
#include <string>

#include "te/schedule.h"

namespace te::sched {

// 'name', for error messages.
std::string quote(const std::string& name);

// The ForKind annotation name for messages: "vectorized", "bound to threadIdx.x", ...
std::string describe_attr(const IterVarAttr& attr);

}  // namespace te::sched
