// MPI scale-out (te_autotune_mpi), when CMake found MPI: this test runs itself under
// `mpirun -np 3` (rank 0 tunes, ranks 1 and 2 measure) on the fragile task of
// test_autotune_measure.cpp's kind: a config that segfaults on a worker rank, one that
// throws, and good ones; every config is measured once, the failures carry their reasons
// and the best is a good config. Without MPI the test is skipped. CTest label: mpi.
#include <gtest/gtest.h>
#include <signal.h>
#include <te/autotune.h>
#include <te/te.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string>

#ifdef TE_AUTOTUNE_MPI
// The C API only: OpenMPI's C++ bindings do not compile warning-free.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#include <te/autotune/mpi.h>
#endif

using namespace te;
using namespace te::autotune;

#ifdef TE_AUTOTUNE_MPI
namespace {

Task mpi_task() {
  Task task;
  task.key = "mpi/128";
  task.space.define_choice("variant", {"ok", "segfault", "throw"});
  task.space.define_values("split", {1, 4, 8, 16});
  task.build = [](const Config& c) {
    std::string v = c.choice("variant");
    if (c["split"] == 8 && v == "segfault") raise(SIGSEGV);
    if (c["split"] == 8 && v == "throw") throw Error("no schedule here");
    Tensor A = placeholder({128}, Float(32), "A");
    Tensor B = compute(
        {128}, [&](Expr i) { return A(i) + 1.0f; }, "B");
    Schedule s = create_schedule({B});
    if (c["split"] > 1) s[B].split(B.axis(0), static_cast<int>(c["split"]));
    return lower(s, {A, B}, "k");
  };
  task.reference = [] {
    Tensor A = placeholder({128}, Float(32), "A");
    Tensor B = compute(
        {128}, [&](Expr i) { return A(i) + 1.0f; }, "B");
    return lower(create_schedule({B}), {A, B}, "k");
  };
  task.make_args = [] {
    return std::vector<Argument>{NDArray::empty({128}, Float(32)), NDArray::empty({128}, Float(32))};
  };
  return task;
}

// One rank's part; returns the process's exit code.
int run_rank() {
  MPI_Init(nullptr, nullptr);
  int failures = 0;
  {
    Task task = mpi_task();
    GridTuner tuner(task.space);
    TuneOptions o;
    o.n_trial = 100;
    o.progress = false;
    o.measure.repeat = 1;
    o.measure.timeout_s = 20;
    TuneResult r = mpi::tune(task, tuner, o);
    if (mpi::rank() == 0) {
      auto check = [&](bool ok, const std::string& what) {
        if (!ok) {
          std::fprintf(stderr, "rank 0: %s\n", what.c_str());
          ++failures;
        }
      };
      check(mpi::size() == 3, "expected 3 ranks");
      check(r.measured == 12, "measured " + std::to_string(r.measured) + " configs, expected 12");
      check(r.failed == 2, "failed " + std::to_string(r.failed) + ", expected 2");
      std::set<std::string> seen;
      for (const Record& rec : r.records) {
        std::map<std::string, std::string> cfg(rec.config.begin(), rec.config.end());
        seen.insert(cfg["variant"] + "/" + cfg["split"]);
        bool bad = cfg["split"] == "8" && cfg["variant"] != "ok";
        check(rec.ok != bad, "config " + cfg["variant"] + "/" + cfg["split"] + ": " + rec.error);
        if (bad && cfg["variant"] == "segfault")
          check(rec.error.find("worker crashed") != std::string::npos, "segfault reason: " + rec.error);
        if (bad && cfg["variant"] == "throw")
          check(rec.error == "schedule/lower failed: no schedule here", "throw reason: " + rec.error);
      }
      check(seen.size() == 12, "a config was measured twice");
      check(r.best && !(r.best->choice("variant") != "ok" && (*r.best)["split"] == 8), "the best is a failed config");
    }
  }
  MPI_Finalize();
  return failures ? 1 : 0;
}

}  // namespace
#endif

TEST(AutotuneMpi, ThreeRanks) {
#ifndef TE_AUTOTUNE_MPI
  GTEST_SKIP() << "MPI was not found at configure time (Debian: libopenmpi-dev openmpi-bin)";
#else
  if (std::getenv("TE_AUTOTUNE_MPI_RANK")) std::exit(run_rank());  // inside mpirun: a rank
  // The path of this executable, resolved before the shell runs (mpirun starts copies of it).
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  ASSERT_GT(n, 0);
  self[n] = '\0';
  // --oversubscribe: 3 ranks on a machine with fewer cores; root is allowed (CI containers).
  // OpenMPI leaks at exit from plugins it has unloaded by then (LeakSanitizer can neither
  // symbolize nor suppress them): under ASan the ranks run without leak detection; every
  // te code path here is leak-checked by test_autotune_measure.
  const char* asan = std::getenv("ASAN_OPTIONS");
  std::string asan_options = std::string(asan ? asan : "") + (asan && *asan ? ":" : "") + "detect_leaks=0";
  std::string cmd = "TE_AUTOTUNE_MPI_RANK=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ASAN_OPTIONS='" +
                    asan_options + "' " + TE_AUTOTUNE_MPIEXEC +
                    " -np 3 --oversubscribe -x TE_AUTOTUNE_MPI_RANK -x ASAN_OPTIONS " + self +
                    " --gtest_filter=AutotuneMpi.ThreeRanks 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  while (size_t k = fread(buf, 1, sizeof buf, p)) out.append(buf, k);
  int status = pclose(p);
  EXPECT_EQ(status, 0) << cmd << "\n" << out;
#endif
}
