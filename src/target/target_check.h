// The rules a te::Target's fields obey, checked where a Target set field by field (not
// parsed) reaches te: build options, auto_schedule options, the generator.
#pragma once
#include <string>
#include <vector>

#include "te/target.h"

namespace te {

// te::Error "<api>: target '<text>': <what>" for a vector width that is not a power of two
// in 64..2048, a feature that is not +name / -name, or LLVM fields on a cuda target.
void check_target_fields(const Target& target, const char* api);

// The comma-separated items of a feature list ("+avx2,-fma" -> {"+avx2", "-fma"}), empty
// items kept.
std::vector<std::string> split_features(const std::string& features);

}  // namespace te
