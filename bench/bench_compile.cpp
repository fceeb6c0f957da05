// Compile latency: defining, scheduling, lowering and JIT-compiling the vector add, the
// best sgemm (1024) and grid_sample (4x32x64x64), with te's compile cache off.
//  - warm: in this process, after LLVM is loaded and initialized; the median call.
//  - cold: a fresh process compiling its first kernel, as a program that JIT-compiles at
//    start-up does (te_compile_once for te, te_bench --compile_once for Halide); the
//    median of 5 processes. The note gives the whole process's wall time too (start,
//    loading the libraries, compile, exit).
//  - disk: the same fresh process, its kernel in te's persistent compile cache (a folder
//    of its own, filled by one run first): a program's second start, or a repeated
//    `te build`; the goal is under 20 ms.
#include <fmt/format.h>
#include <te/te.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_util.h"
#include "cases.h"
#include "te_kernels.h"
#ifdef TE_BENCH_HALIDE
#include "halide_peer.h"
#endif

namespace te_bench {

namespace {

struct ColdSample {
  double compile = 0;      // wall seconds of the child's compile
  double compile_cpu = 0;  // CPU seconds of the child's compile
  double process = 0;      // wall seconds of the whole child process
};

// Runs a child that compiles one kernel and prints its compile's wall and CPU ms: for te,
// te_compile_once (next to te_bench; it links only te), for a peer, te_bench itself.
ColdSample spawn_compile(const std::string& exe, const std::string& who, const std::string& kernel,
                         const std::string& cache_dir = "") {
  std::string dir = exe.substr(0, exe.find_last_of('/') + 1);
  std::string cmd =
      who == "te" ? "'" + dir + "te_compile_once' " + kernel : "'" + exe + "' --compile_once=" + who + ":" + kernel;
  if (!cache_dir.empty())
    cmd = "TE_CACHE=1 TE_CACHE_DIR='" + cache_dir + "' " + cmd + " cached";
  else if (who == "te")
    cmd = "TE_CACHE=0 " + cmd;
  auto t0 = std::chrono::steady_clock::now();
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) throw std::runtime_error("bench: cannot run " + cmd);
  double ms = -1, cpu_ms = -1;
  if (std::fscanf(p, "%lf %lf", &ms, &cpu_ms) != 2) ms = -1;
  int rc = pclose(p);
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (rc != 0 || ms < 0) throw std::runtime_error("bench: " + cmd + " failed");
  return {ms * 1e-3, cpu_ms * 1e-3, wall};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

void add_cold(const std::string& exe, const std::string& g, const std::string& who, const std::string& kernel,
              bool baseline, bool disk_cached = false) {
  add(
      g, who,
      [=](benchmark::State& st) {
        std::vector<double> samples, cpu, walls;
        const std::string cache_dir =
            disk_cached ? fmt::format("/tmp/te_bench_cache_{}_{}", kernel, static_cast<long>(getpid())) : "";
        try {
          if (disk_cached) spawn_compile(exe, who, kernel, cache_dir);  // fills the cache
          for (auto _ : st) {
            ColdSample s = spawn_compile(exe, who, kernel, cache_dir);
            st.SetIterationTime(s.compile);
            samples.push_back(s.compile);
            cpu.push_back(s.compile_cpu);
            walls.push_back(s.process);
          }
        } catch (const std::exception& e) {
          return st.SkipWithError(e.what());
        }
        if (disk_cached) {
          std::error_code ec;
          std::filesystem::remove_all(cache_dir, ec);
        }
        results().record(g, who, baseline, samples);
        results().set_note(
            g, who, fmt::format("CPU {:.0f} ms; whole process {:.0f} ms", median(cpu) * 1e3, median(walls) * 1e3));
        st.counters["cpu_ms"] = median(cpu) * 1e3;
        st.counters["process_ms"] = median(walls) * 1e3;
        report(st, g, who, baseline);
      },
      5);
}

// Times `compile` in this process: wall time per call as the figure, CPU time in the note.
void add_warm(const std::string& g, const std::string& who, bool baseline, const std::function<void()>& compile) {
  add(g, who, [=](benchmark::State& st) {
    compile();  // everything loaded and initialized: "warm"
    std::vector<double> samples, cpu;
    for (auto _ : st) {
      double c0 = process_cpu_seconds();
      double s = time_call(compile);
      cpu.push_back(process_cpu_seconds() - c0);
      st.SetIterationTime(s);
      samples.push_back(s);
    }
    results().record(g, who, baseline, samples);
    results().set_note(g, who, fmt::format("CPU {:.0f} ms", median(cpu) * 1e3));
    st.counters["cpu_ms"] = median(cpu) * 1e3;
    report(st, g, who, baseline);
  })->MinTime(1.0);
}

}  // namespace

int compile_once(const std::string& who_kernel) {
  size_t colon = who_kernel.find(':');
  std::string who = who_kernel.substr(0, colon), kernel = who_kernel.substr(colon + 1);
#ifdef TE_BENCH_HALIDE
  if (who == "halide") {
    double cpu0 = process_cpu_seconds();
    double seconds = halide::compile_seconds(kernel);
    std::printf("%.3f %.3f\n", seconds * 1e3, (process_cpu_seconds() - cpu0) * 1e3);
    return 0;
  }
#endif
  std::fprintf(stderr, "bench: unknown --compile_once=%s\n", who_kernel.c_str());
  return 2;
}

void register_compile(const std::string& self_exe) {
  for (const std::string kernel : {"vadd", "sgemm", "grid_sample"}) {
    const std::string warm = "compile/" + kernel + "/warm", cold = "compile/" + kernel + "/cold";
    GroupInfo info;
    info.use_median = true;
    results().define_group(warm, info);
    results().define_group(cold, info);
#ifdef TE_BENCH_HALIDE
    add_warm(warm, "halide", true, [kernel] { halide::compile_seconds(kernel); });
#endif
    add_warm(warm, "te", false, [kernel] { compile_kernel(kernel); });
#ifdef TE_BENCH_HALIDE
    add_cold(self_exe, cold, "halide", kernel, true);
#endif
    add_cold(self_exe, cold, "te", kernel, false);
    const std::string disk = "compile/" + kernel + "/disk";
    results().define_group(disk, info);
    add_cold(self_exe, disk, "te", kernel, false, /*disk_cached=*/true);
  }
}

}  // namespace te_bench
