#include "cuda_batch.h"

#include <fmt/format.h>

#include <sys/stat.h>

#include <cstdlib>

#include "cuda_emulation/harness.h"

namespace te::fuzz {
namespace {

// Batches compile through a wrapper around the harness's compiler, named by TE_HOST_CXX
// (the harness's override) while it lives, that adds -Wno-error: random expressions
// draw gcc warnings that say nothing about what they compute (a self-comparison such
// as `a > a`), and the harness compiles with -Werror. (The harness itself passes
// -frounding-math and -Wno-error=maybe-uninitialized.)
class LenientCompiler {
 public:
  LenientCompiler() {
    std::string path = dir_.path() + "/cxx";
    cuda_test::write_file(path, "#!/bin/sh\nexec " + cuda_test::quote(cuda_test::host_cxx()) + " \"$@\" -Wno-error\n");
    ::chmod(path.c_str(), 0755);
    if (const char* old = std::getenv("TE_HOST_CXX")) old_ = old, had_old_ = true;
    ::setenv("TE_HOST_CXX", path.c_str(), 1);
  }
  ~LenientCompiler() {
    if (had_old_)
      ::setenv("TE_HOST_CXX", old_.c_str(), 1);
    else
      ::unsetenv("TE_HOST_CXX");
  }
  LenientCompiler(const LenientCompiler&) = delete;
  LenientCompiler& operator=(const LenientCompiler&) = delete;

 private:
  cuda_test::TempDir dir_;
  std::string old_;
  bool had_old_ = false;
};

}  // namespace

std::vector<CaseResult> CudaBatch::run() {
  std::vector<CaseResult> results(cases_.size());
  std::vector<bool> built(cases_.size(), false);
  cuda_test::EmulatedProgram program;
  for (size_t k = 0; k < cases_.size(); ++k) {
    try {
      program.add(build_cuda(cases_[k]->main.func));
      built[k] = true;
    } catch (const std::exception& e) {
      results[k].status = CaseResult::Status::Fail;
      results[k].report = describe(*cases_[k]) + "FAILED: build_cuda threw: " + e.what() + "\n";
    }
  }
  std::string log;
  LenientCompiler compiler;
  if (!program.build(&log)) {
    for (size_t k = 0; k < cases_.size(); ++k) {
      if (!built[k]) continue;
      results[k].status = CaseResult::Status::Fail;
      results[k].report = describe(*cases_[k]) + "FAILED: the emulation program of this batch (" +
                          std::to_string(cases_.size()) + " cases) did not compile:\n" + log.substr(0, 4000) +
                          "\nCUDA source of this case:\n" + build_cuda(cases_[k]->main.func).source();
    }
    return results;
  }
  for (size_t k = 0; k < cases_.size(); ++k) {
    if (!built[k]) continue;
    const FuzzCase& c = *cases_[k];
    std::string failure;
    try {
      std::vector<Argument> want = interpret_copy(c.main);
      cuda_test::EmulatedRun r = program.run(c.main.func.name, c.main.func, c.main.args);
      if (r.error != 0 || r.arrays.size() != c.main.func.params.size()) {
        failure = fmt::format("the launcher returned error {}; output:\n{}", r.error, r.output.substr(0, 4000));
      } else {
        for (size_t j = 0; j < c.main.func.params.size(); ++j) {
          if (!c.main.func.params[j].is_buffer()) continue;
          std::string d = compare_arrays(want[j].array(), r.arrays[j], c.compare, c.rel_tol, c.abs_tol);
          if (!d.empty()) failure += fmt::format("  array {}:\n{}", c.main.func.params[j].name(), d);
        }
        if (!failure.empty()) failure = "CUDA emulation differs from interpret (want: interpret):\n" + failure;
      }
    } catch (const std::exception& e) {
      failure = std::string("running the case threw: ") + e.what();
    }
    if (!failure.empty()) {
      results[k].status = CaseResult::Status::Fail;
      results[k].report = describe(c) + "FAILED:\n" + failure + "CUDA source:\n" + build_cuda(c.main.func).source();
    }
  }
  return results;
}

}  // namespace te::fuzz
