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

namespace {
// aligned_alloc needs a multiple of the alignment; zero bytes still get one block.
uint64_t rounded_size(uint64_t nbytes) {
  return nbytes == 0 ? kAlignment : (nbytes + kAlignment - 1) / kAlignment * kAlignment;
}
}  // namespace

extern "C" void* te_alloc_uninitialized(uint64_t nbytes) {
  void* p = nbytes > UINT64_MAX - kAlignment ? nullptr : std::aligned_alloc(kAlignment, rounded_size(nbytes));
  if (p == nullptr) {
    char message[96];
    std::snprintf(message, sizeof message, "te_alloc: cannot allocate %llu bytes",
                  static_cast<unsigned long long>(nbytes));
    te_set_last_error(message);
  }
  return p;
}

extern "C" void* te_alloc(uint64_t nbytes) {
  void* p = te_alloc_uninitialized(nbytes);
  if (p != nullptr) std::memset(p, 0, rounded_size(nbytes));
  return p;
}

extern "C" void te_free(void* p) { std::free(p); }
