// BuildOptions read field by field in one place: the compile cache's key and the checks
// of build() and the exports both walk for_each_build_option, whose structured binding
// stops compiling when a field is added to BuildOptions until it is named here, so a new
// option can never be left out of the key (a stale cache hit) or unchecked.
#pragma once
#include <string>

#include "te/build.h"

namespace te::codegen {

template <typename F>
void for_each_build_option(const BuildOptions& o, F&& f) {
  const auto& [opt_level, fma_contraction, fast_vector_math, use_cache, check_data_indices, streaming_store_min_bytes,
               target, extern_libraries] = o;
  f("opt_level", opt_level);
  f("fma_contraction", fma_contraction);
  f("fast_vector_math", fast_vector_math);
  f("use_cache", use_cache);
  f("check_data_indices", check_data_indices);
  f("streaming_store_min_bytes", streaming_store_min_bytes);
  f("target", target);
  f("extern_libraries", extern_libraries);
}

// Every option that changes the code, as text (use_cache only decides whether to look).
std::string build_options_key(const BuildOptions& o);

// te::Error naming `api` and the option whose value is out of range.
void check_build_options(const BuildOptions& o, const char* api);

}  // namespace te::codegen
