// libFuzzer target for the .npy reader (built with clang and -DTE_LIBFUZZER=ON): the
// input is an .npy file. A broken property (npy_check.h) prints why and aborts.
//
//   ./te_fuzz_npy_libfuzzer -max_len=4096 -max_total_time=600 corpus/
// (seed the corpus with files numpy.save or NDArray::save_npy wrote)
#include <cstdio>
#include <cstdlib>

#include "npy_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = [] {
    std::atexit([] { std::remove(te::fuzz::npy_scratch_path("libfuzzer").c_str()); });
    return te::fuzz::npy_scratch_path("libfuzzer");
  }();
  std::string why = te::fuzz::check_npy_bytes(data, size, path);
  if (!why.empty()) {
    std::fprintf(stderr, "npy reader: %s\n", why.c_str());
    std::abort();
  }
  return 0;
}
