// How the vectorize pass cuts a vectorized loop into vector statements: shared with the
// auto-scheduler, which counts the registers a register tile's row takes.
#pragma once
#include <cstdint>
#include <vector>

namespace te {

// The lanes of each vector statement a vectorized loop of `lanes` iterations becomes,
// largest first (56: 32, 16, 8); one piece when lanes is a power of two or at most 8.
std::vector<int64_t> power_of_two_parts(int64_t lanes);

}  // namespace te
