// What every te benchmark shares: the thread count of the run, timing one call at a
// time, and the table of results that puts each te figure next to its baselines.
//
// Each benchmark belongs to a group (one kernel at one size, e.g. "sgemm/1024") and is
// either a baseline (OpenBLAS, memcpy, a C++ loop, Halide...) or a te implementation.
// Baselines run first within their group; each te benchmark then reports, for every
// baseline of its group, the counter "vs_<baseline>" = baseline time / te time (above 1:
// te is faster). Times (counter "ms") are the fastest call seen (the machine is shared:
// noise only adds), or the median where a group says so (compile latency).
//
// A baseline may also be a companion: while a te benchmark of its group runs on one
// thread, each te call is followed by one call of every companion, whose time joins the
// companion's samples. Baseline and te are then measured in the same seconds, so a ratio
// does not depend on which of them a noisy neighbour happened to slow down. (Not with
// several threads: the peers' idle workers spin after each call, on te's cores.)
#pragma once
#include <benchmark/benchmark.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace te_bench {

// Whether this process's --benchmark_filter (none: every group) selects a group: the
// cases that tune at registration skip what nobody will time.
bool selected_by_filter(const std::string& group);

// Per-call seconds a peer's script prints (numbers separated by white space) when `command`
// runs (its stderr discarded); empty when it cannot run or fails.
std::vector<double> command_samples(const std::string& command);

// Threads every implementation of this run uses: te's pool size (TE_NUM_THREADS); the
// baselines are given the same number.
int threads();

// Seconds one call of fn takes.
double time_call(const std::function<void()>& fn);
// CPU seconds this process has used so far (all its threads).
double process_cpu_seconds();

// Two implementations timed side by side, as auto_schedule's duel does: `rounds` rounds,
// each timing both (which goes first alternates) for at least min_round_s each. Ratios
// are per round (a's time over b's), so a slow stretch of the machine slows both.
struct SideBySide {
  double median_ratio = 1.0;  // a's time / b's time, the median over the rounds
  int a_faster = 0, rounds = 0;
};
SideBySide side_by_side(const std::function<void()>& a, const std::function<void()>& b, int rounds = 9,
                        double min_round_s = 0.02);

// How a group's figures read.
struct GroupInfo {
  double work = 0;          // per call, in `unit`s (0: no throughput column)
  std::string unit;         // "GFLOP/s", "GB/s", "Gpix/s"...; work is in units * seconds
  double peak = 0;          // the machine's limit in `unit` (0: none)
  bool use_median = false;  // report the median call instead of the fastest
};

class Results {
 public:
  void define_group(const std::string& group, const GroupInfo& info);
  const GroupInfo& group(const std::string& group) const;
  // Adds samples (seconds per call) for an implementation; returns its figure so far.
  double record(const std::string& group, const std::string& impl, bool baseline, const std::vector<double>& samples);
  std::optional<double> seconds(const std::string& group, const std::string& impl) const;
  std::vector<std::string> baselines(const std::string& group) const;
  // A baseline to call (and time) after each te call of its group (see above).
  void add_companion(const std::string& group, const std::string& impl, std::function<void()> call);
  // Runs each companion of the group once, recording its time.
  void run_companions(const std::string& group);
  // Extra text for the summary row (e.g. "first compile 120 ms; process 310 ms").
  void set_note(const std::string& group, const std::string& impl, const std::string& note);
  // The whole run as a Markdown table, te rows with their ratios.
  std::string markdown() const;

 private:
  struct Impl {
    bool baseline = false;
    std::vector<double> samples;
    std::string note;
    std::function<void()> companion;
  };
  double figure(const std::string& group, const Impl& impl) const;
  std::vector<std::string> group_order_;
  std::map<std::string, GroupInfo> groups_;
  std::map<std::string, std::vector<std::pair<std::string, Impl>>> impls_;
};

Results& results();

// Runs the benchmark loop of one implementation: one call per iteration, timed by hand.
// Records the samples, then sets the counters: the throughput (from the group's work), the
// fraction of peak, and for a te implementation the ratio to each baseline so far.
void run_case(benchmark::State& state, const std::string& group, const std::string& impl, bool baseline,
              const std::function<void()>& call);

// Sets the counters and label for figures already recorded (run_case does this itself).
void report(benchmark::State& state, const std::string& group, const std::string& impl, bool baseline);

// Registers a benchmark named "<group>/<impl>/threads=<n>" with manual timing, run for a
// fixed number of iterations, or (0) for a minimum time.
benchmark::internal::Benchmark* add(const std::string& group, const std::string& impl,
                                    std::function<void(benchmark::State&)> fn, int iterations = 0);

}  // namespace te_bench
