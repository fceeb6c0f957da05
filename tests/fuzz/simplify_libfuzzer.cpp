// libFuzzer target for the simplifier (built with clang and -DTE_LIBFUZZER=ON): the
// input's bytes choose the case (see simplify_check.h), so coverage feedback steers the
// expressions and statements. A failing case prints its report and aborts.
//
//   ./te_fuzz_simplify_libfuzzer -max_total_time=600 corpus/
#include <cstdio>
#include <cstdlib>

#include "simplify_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  te::fuzz::CaseResult r = te::fuzz::check_simplify_bytes(data, size);
  if (r.status == te::fuzz::CaseResult::Status::Fail) {
    std::fprintf(stderr, "%s\n", r.report.c_str());
    std::abort();
  }
  return 0;
}
