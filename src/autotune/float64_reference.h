// A lowered function with its floating-point arithmetic in float64: the accurate
// reference a tuning run checks configs against (MeasureOptions::reference_float64).
// A float32 default schedule sums a long reduction in order and drifts from the true
// result (4M squares: 1.5e-3 relative), so a reordered config that is closer to the
// truth would be judged wrong against it.
#pragma once
#include <optional>
#include <vector>

#include "te/argument.h"
#include "te/export.h"
#include "te/ir.h"

namespace te::autotune {

// f with every floating-point type (float16, bfloat16, float32: buffers, scalars,
// constants, casts, math calls) made float64; nullopt when f does something whose type
// cannot change (an extern call, a tensor intrinsic, a warp shuffle).
TE_API std::optional<LoweredFunc> widen_floats(const LoweredFunc& f);

// args for widen_floats(f): each floating-point array copied to float64 (others shared).
TE_API std::vector<Argument> widened_arguments(const std::vector<Argument>& args);

// Element i (row-major) of a scalar array as a double (NaN for a type without one).
TE_API double element_value(const NDArray& a, int64_t i);

}  // namespace te::autotune
