// The per-thread last error and scratch memory of te's C runtime (see
// te/runtime/c_runtime_api.h); the parallel loops are in thread_pool.cpp.
#include "te/runtime/c_runtime_api.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {
thread_local std::string t_last_error;
constexpr uint64_t kAlignment = 64;
}  // namespace

extern "C" const char* te_get_last_error(void) { return t_last_error.c_str(); }

extern "C" void te_set_last_error(const char* message) { t_last_error = message == nullptr ? "" : message; }

extern "C" void* te_alloc(uint64_t nbytes) {
  // aligned_alloc needs a multiple of the alignment; zero bytes still get one block.
  bool too_large = nbytes > UINT64_MAX - kAlignment;
  uint64_t rounded = nbytes == 0 ? kAlignment : (nbytes + kAlignment - 1) / kAlignment * kAlignment;
  void* p = too_large ? nullptr : std::aligned_alloc(kAlignment, rounded);
  if (p == nullptr) {
    char message[96];
    std::snprintf(message, sizeof message, "te_alloc: cannot allocate %llu bytes",
                  static_cast<unsigned long long>(nbytes));
    te_set_last_error(message);
    return nullptr;
  }
  std::memset(p, 0, rounded);
  return p;
}

extern "C" void te_free(void* p) { std::free(p); }
