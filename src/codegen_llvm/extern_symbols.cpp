#include "codegen_llvm/extern_symbols.h"

#include <dlfcn.h>
#include <fmt/format.h>

namespace te::codegen {

ExternLibraries::ExternLibraries(const std::vector<std::string>& libraries) {
  try {
    for (const std::string& path : libraries) {
      if (path.empty()) throw Error("build: BuildOptions::extern_libraries has an empty entry");
      // RTLD_NOW: a library with unresolved dependencies fails here, with its reason,
      // rather than at the first call into it.
      void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (handle == nullptr) {
        const char* why = ::dlerror();
        throw Error(fmt::format("build: cannot load '{}' (BuildOptions::extern_libraries): {}", path,
                                why != nullptr ? why : "unknown reason"));
      }
      handles_.emplace_back(path, handle);
    }
  } catch (...) {
    for (auto& [path, handle] : handles_) ::dlclose(handle);
    throw;
  }
}

ExternLibraries::~ExternLibraries() {
  for (auto it = handles_.rbegin(); it != handles_.rend(); ++it) ::dlclose(it->second);
}

void* ExternLibraries::resolve(const ExternFunction& f) const {
  for (const auto& [path, handle] : handles_)
    if (void* address = ::dlsym(handle, f.name.c_str())) return address;
  // The process: the executable's exported symbols and the libraries loaded globally
  // (libc, libm, everything the program links).
  if (void* address = ::dlsym(RTLD_DEFAULT, f.name.c_str())) return address;
  std::string where = "is not defined in the process (and BuildOptions::extern_libraries names no library)";
  if (!handles_.empty()) {
    std::vector<std::string> paths;
    for (const auto& entry : handles_) paths.push_back("'" + entry.first + "'");
    where = fmt::format("is defined neither in {} nor in the process", fmt::join(paths, ", "));
  }
  throw Error(fmt::format(
      "build: call_extern '{}' (called by '{}' as {}) {}: define it as an extern \"C\" function in a library "
      "named in BuildOptions::extern_libraries, or in the program itself (an executable exports its functions "
      "only when linked with -rdynamic, CMake's ENABLE_EXPORTS)",
      f.name, f.caller, f.sig.to_string(), where));
}

}  // namespace te::codegen
