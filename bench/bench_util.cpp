#include "bench_util.h"

#include <fmt/format.h>
#include <te/autotune/records.h>
#include <te/runtime/c_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>

namespace te_bench {

int threads() { return te_num_threads(); }

double time_call(const std::function<void()>& fn) {
  auto t0 = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

SideBySide side_by_side(const std::function<void()>& a, const std::function<void()>& b, int rounds,
                        double min_round_s) {
  // Seconds per call over at least min_round_s of calls.
  auto per_call = [min_round_s](const std::function<void()>& fn) {
    int calls = 0;
    double total = 0;
    while (total < min_round_s || calls == 0) {
      total += time_call(fn);
      ++calls;
    }
    return total / calls;
  };
  a();  // warm both (first-touch pages, caches)
  b();
  SideBySide out;
  std::vector<double> ratios;
  for (int round = 0; round < rounds; ++round) {
    double ta = 0, tb = 0;
    if (round % 2 == 0) {
      ta = per_call(a);
      tb = per_call(b);
    } else {
      tb = per_call(b);
      ta = per_call(a);
    }
    ratios.push_back(ta / tb);
    out.a_faster += ta < tb;
  }
  out.rounds = rounds;
  if (!ratios.empty()) out.median_ratio = te::autotune::median_time(ratios);
  return out;
}

double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

Results& results() {
  static Results r;
  return r;
}

void Results::define_group(const std::string& group, const GroupInfo& info) {
  if (!groups_.count(group)) group_order_.push_back(group);
  groups_[group] = info;
}

const GroupInfo& Results::group(const std::string& group) const {
  auto it = groups_.find(group);
  if (it == groups_.end()) throw std::logic_error("bench: undefined group " + group);
  return it->second;
}

double Results::figure(const std::string& group, const Impl& impl) const {
  std::vector<double> s = impl.samples;
  if (s.empty()) return 0;
  if (!this->group(group).use_median) return *std::min_element(s.begin(), s.end());
  std::sort(s.begin(), s.end());
  return s.size() % 2 ? s[s.size() / 2] : 0.5 * (s[s.size() / 2 - 1] + s[s.size() / 2]);
}

double Results::record(const std::string& group, const std::string& impl, bool baseline,
                       const std::vector<double>& samples) {
  (void)this->group(group);
  auto& list = impls_[group];
  auto it = std::find_if(list.begin(), list.end(), [&](const auto& p) { return p.first == impl; });
  if (it == list.end()) {
    list.push_back({impl, Impl{}});
    it = list.end() - 1;
  }
  it->second.baseline = baseline;
  it->second.samples.insert(it->second.samples.end(), samples.begin(), samples.end());
  return figure(group, it->second);
}

std::optional<double> Results::seconds(const std::string& group, const std::string& impl) const {
  auto g = impls_.find(group);
  if (g == impls_.end()) return std::nullopt;
  for (const auto& [name, i] : g->second)
    if (name == impl && !i.samples.empty()) return figure(group, i);
  return std::nullopt;
}

std::vector<std::string> Results::baselines(const std::string& group) const {
  std::vector<std::string> out;
  auto g = impls_.find(group);
  if (g == impls_.end()) return out;
  for (const auto& [name, i] : g->second)
    if (i.baseline && !i.samples.empty()) out.push_back(name);
  return out;
}

void Results::add_companion(const std::string& group, const std::string& impl, std::function<void()> call) {
  for (auto& [name, i] : impls_[group])
    if (name == impl) i.companion = std::move(call);
}

void Results::run_companions(const std::string& group) {
  // With several threads a companion would hurt te: OpenBLAS's and Halide's idle workers
  // spin for a while after each call, on the cores te's next call needs.
  if (threads() > 1) return;
  for (auto& [name, i] : impls_[group])
    if (i.companion) i.samples.push_back(time_call(i.companion));
}

void Results::set_note(const std::string& group, const std::string& impl, const std::string& note) {
  for (auto& [name, i] : impls_[group])
    if (name == impl) i.note = note;
}

static std::string format_seconds(double s) {
  if (s >= 1) return fmt::format("{:.2f} s", s);
  if (s >= 1e-3) return fmt::format("{:.3g} ms", s * 1e3);
  return fmt::format("{:.3g} us", s * 1e6);
}

std::string Results::markdown() const {
  std::string out = fmt::format(
      "| benchmark ({} thread{}) | implementation | time | throughput | te speed-up vs baseline "
      "|\n|---|---|---|---|---|\n",
      threads(), threads() == 1 ? "" : "s");
  for (const std::string& group : group_order_) {
    auto g = impls_.find(group);
    if (g == impls_.end()) continue;
    const GroupInfo& info = groups_.at(group);
    for (const auto& [name, i] : g->second) {
      if (i.samples.empty()) continue;
      double s = figure(group, i);
      std::string thr = "";
      if (info.work > 0) {
        thr = fmt::format("{:.3g} {}", info.work / s, info.unit);
        if (info.peak > 0) thr += fmt::format(" ({:.0f}% of peak)", 100 * info.work / s / info.peak);
      }
      std::string vs;
      if (!i.baseline)
        for (const auto& [bname, b] : g->second)
          if (b.baseline && !b.samples.empty())
            vs += fmt::format("{}{:.2f}x {}", vs.empty() ? "" : ", ", figure(group, b) / s, bname);
      if (!i.note.empty()) vs += (vs.empty() ? "" : "; ") + i.note;
      out += fmt::format("| {} | {} | {} | {} | {} |\n", group, i.baseline ? name : "**" + name + "**",
                         format_seconds(s), thr, vs);
    }
  }
  return out;
}

void report(benchmark::State& state, const std::string& group, const std::string& impl, bool baseline) {
  Results& r = results();
  std::optional<double> s = r.seconds(group, impl);
  if (!s || *s <= 0) return;
  const GroupInfo& info = r.group(group);
  state.counters["ms"] = benchmark::Counter(*s * 1e3);
  if (info.work > 0) {
    double rate = info.work / *s;
    state.counters[info.unit] = benchmark::Counter(rate);
    if (info.peak > 0) state.counters["of_peak"] = benchmark::Counter(rate / info.peak);
  }
  if (baseline) return;
  std::string label;
  for (const std::string& b : r.baselines(group)) {
    double ratio = *r.seconds(group, b) / *s;
    state.counters["vs_" + b] = benchmark::Counter(ratio);
    label += fmt::format("{}{:.2f}x {}", label.empty() ? "" : ", ", ratio, b);
  }
  if (!label.empty()) state.SetLabel(label);
}

void run_case(benchmark::State& state, const std::string& group, const std::string& impl, bool baseline,
              const std::function<void()>& call) {
  std::vector<double> samples;
  for (auto _ : state) {
    double s = time_call(call);
    state.SetIterationTime(s);
    samples.push_back(s);
    if (!baseline) results().run_companions(group);
  }
  results().record(group, impl, baseline, samples);
  report(state, group, impl, baseline);
}

benchmark::internal::Benchmark* add(const std::string& group, const std::string& impl,
                                    std::function<void(benchmark::State&)> fn, int iterations) {
  std::string name = fmt::format("{}/{}/threads={}", group, impl, threads());
  auto* b = benchmark::RegisterBenchmark(name.c_str(), [fn](benchmark::State& st) { fn(st); })
                ->UseManualTime()
                ->Unit(benchmark::kMillisecond);
  // With several threads a call is as slow as its slowest thread: sample longer, so that
  // the fastest call is one during which no other process took a core.
  if (iterations > 0) return b->Iterations(iterations);
  return b->MinTime(threads() > 1 ? 1.5 : 0.5);
}

bool selected_by_filter(const std::string& group) {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string arg, filter;
  while (std::getline(in, arg, '\0'))
    if (arg.rfind("--benchmark_filter=", 0) == 0) filter = arg.substr(19);
  if (filter.empty() || filter == "all" || filter == ".") return true;
  try {
    return std::regex_search(group, std::regex(filter));
  } catch (const std::regex_error&) {
    return true;
  }
}

std::vector<double> command_samples(const std::string& command) {
  // The baseline's malloc keeps what it frees (glibc otherwise maps large blocks afresh
  // and trims its heap): PyTorch allocates its outputs and intermediates on every call,
  // and on a VM where a page touched for the first time costs 12 us (this project's
  // machines), its fastest call was 13x slower in some runs than in others (a conv's 3.2
  // MB output: 20 ms or 1.5 ms; attention's 67 MB of scores: 1.08 s or 99 ms). te's
  // kernels keep their scratch memory (te_alloc); the baseline gets the same chance.
  const std::string cmd = "MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=4294967296 " + command + " 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return {};
  std::string text;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) text.append(buf, n);
  if (pclose(p) != 0) return {};
  std::istringstream in(text);
  std::vector<double> s;
  for (double v; in >> v;) s.push_back(v);
  return s;
}

}  // namespace te_bench
