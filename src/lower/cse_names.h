// Names for the locals that common-subexpression elimination introduces: taken from what
// the value is built of (the buffer a load reads, the function a call applies, the
// variables it combines), so that printed IR and CUDA read like hand-written code
// (`grid_floor`, `weights_data`) rather than `t17`. Uniqueness is unique_names' job.
#pragma once
#include <string>

#include "te/expr.h"

namespace te::lowering {

std::string local_name(const Expr& value);

}  // namespace te::lowering
