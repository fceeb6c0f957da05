// Features of a lowered loop nest for the search's cost model (as Ansor's, read from the
// loop IR rather than from the knob values): what the nest computes, how it touches
// memory and how it runs, counted per executed statement. Two configs with the same
// knobs-to-IR effect get the same features, so the model generalises across knobs.
#pragma once
#include <string>
#include <vector>

#include "te/ir.h"

namespace te::auto_sched {

// The names of the features, in the order feature_vector() gives them.
const std::vector<std::string>& loop_feature_names();

// The features of f (log2(1 + x) of each count, so that the model sees ratios). `threads`:
// the CPU threads the parallel loops' work is shared by.
std::vector<float> feature_vector(const LoweredFunc& f, int threads);

}  // namespace te::auto_sched
