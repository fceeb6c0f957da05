// The rules a te::Target's fields obey, checked where a Target set field by field (not
// parsed) reaches te: build options, auto_schedule options, the generator.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "te/target.h"

namespace te {

// te::Error "<api>: target '<text>': <what>" for a vector width that is not a power of two
// in 64..2048, a feature that is not +name / -name, LLVM fields on a cuda target, an arch
// on an llvm target or one parse_cuda_arch refuses.
void check_target_fields(const Target& target, const char* api);

// A CUDA GPU architecture, "sm_90a" -> {90, true}: its compute capability times 10 and
// whether it names the arch-specific instructions (the "a"; nvcc's __CUDA_ARCH_FEAT_SM90_ALL).
struct CudaArch {
  int number = 0;
  bool specific = false;
};
// arch as CUDA spells it (sm_<2 or 3 digits>[a], 50 or more); nullopt for anything else.
std::optional<CudaArch> parse_cuda_arch(const std::string& arch);

// The comma-separated items of a feature list ("+avx2,-fma" -> {"+avx2", "-fma"}), empty
// items kept.
std::vector<std::string> split_features(const std::string& features);

}  // namespace te
