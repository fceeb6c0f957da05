// libFuzzer target for the tuning-records reader (built with clang and -DTE_LIBFUZZER=ON):
// the input is a records file. A broken property (records_check.h) prints why and aborts.
//
//   ./te_fuzz_records_libfuzzer -max_len=70000 -max_total_time=600 corpus/
#include <cstdio>
#include <cstdlib>

#include "records_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string why = te::fuzz::check_records_bytes(data, size);
  if (!why.empty()) {
    std::fprintf(stderr, "records reader: %s\n", why.c_str());
    std::abort();
  }
  return 0;
}
