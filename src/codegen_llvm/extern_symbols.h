// The JIT's side of call_extern: the libraries of BuildOptions::extern_libraries, loaded
// for one build, and the address of each extern function the build calls.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "expr/extern_calls.h"

namespace te::codegen {

// Loaded (dlopen, RTLD_LOCAL) for one build and kept until its code is unloaded, so that
// the addresses stay valid and one build's libraries never answer another's names.
class ExternLibraries {
 public:
  // Loads each library; te::Error naming the first that does not load, and why.
  explicit ExternLibraries(const std::vector<std::string>& libraries);
  ~ExternLibraries();
  ExternLibraries(const ExternLibraries&) = delete;
  ExternLibraries& operator=(const ExternLibraries&) = delete;

  // The address of f: from the libraries in order, then the process. te::Error saying
  // where te looked when none defines it.
  void* resolve(const ExternFunction& f) const;

 private:
  std::vector<std::pair<std::string, void*>> handles_;  // (as given, dlopen handle)
};

}  // namespace te::codegen
