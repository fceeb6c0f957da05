// The per-thread last error of te's C runtime (see te/runtime/c_runtime_api.h); the
// parallel loops are in thread_pool.cpp, scratch memory in src/c_runtime/workspace.c
// (shared with libte_c_runtime).
#include "te/runtime/c_runtime_api.h"

#include <string>

namespace {
thread_local std::string t_last_error;
}  // namespace

extern "C" const char* te_get_last_error(void) { return t_last_error.c_str(); }

extern "C" void te_set_last_error(const char* message) { t_last_error = message == nullptr ? "" : message; }
