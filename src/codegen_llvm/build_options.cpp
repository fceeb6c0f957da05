#include "codegen_llvm/build_options.h"

#include <fmt/format.h>

#include <type_traits>

#include "target/target_check.h"

namespace te::codegen {

std::string build_options_key(const BuildOptions& o) {
  std::string key;
  for_each_build_option(o, [&](const char* name, const auto& value) {
    using T = std::decay_t<decltype(value)>;
    if (std::string(name) == "use_cache") return;
    key += name;
    if constexpr (std::is_same_v<T, std::vector<std::string>>) {
      for (const std::string& v : value) key += fmt::format(" [{}]", v);
    } else if constexpr (std::is_same_v<T, std::string>) {
      key += fmt::format(" [{}]", value);
    } else if constexpr (std::is_same_v<T, Target>) {
      key += fmt::format(" [{}]", value.str());
    } else {
      key += fmt::format(" {}", value);
    }
    key += '\n';
  });
  return key;
}

void check_build_options(const BuildOptions& o, const char* api) {
  for_each_build_option(o, [&](const char* name, const auto& value) {
    using T = std::decay_t<decltype(value)>;
    if constexpr (std::is_same_v<T, int>) {
      if (std::string(name) == "opt_level" && (value < 0 || value > 3))
        throw Error(fmt::format("{}: opt_level is {}; it must be 0..3", api, value));
    } else if constexpr (std::is_same_v<T, Target>) {
      check_target_fields(value, api);  // its kind is resolve_target's to check
    }
  });
}

}  // namespace te::codegen
