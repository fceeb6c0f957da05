// The auto-scheduling suite: for each kernel of auto_schedule_suite.h and of the Ansor
// paper's operator suite (ansor_suite.h), group
// "auto/<kernel>", te's default schedule (the compute as written), the rules alone
// (trials = 0; the note gives the time they took), the searched schedule and the
// baselines that do the same op: te's hand-written schedule where there is one, OpenBLAS
// (sgemm, batched matmul as a loop of cblas_sgemm) and PyTorch on the CPU
// (bench/auto_schedule_torch.py in a child process at the same thread count), and Halide's
// autoschedulers Adams2019 and Mullapudi2016 where Halide is found. The te rows'
// vs_ ratios are against each baseline; every output is checked against the default's.
// The te_searched row's note says whether the search kept the rules' loop nest, and if
// not, how the searched and the rules' kernels compare timed side by side in 9 rounds
// (the two rows' own times are minutes apart).
//
// The search runs at registration, before any kernel of this run executes, for each
// kernel the --benchmark_filter selects: $TE_BENCH_AUTO_TRIALS trials (default 64; 0: no
// search, the te_searched rows are skipped), records in $TE_BENCH_TUNE_DIR (one file per
// kernel and thread count: a later run resumes, and measures nothing when the records hold
// as many trials; the note's search time is then the time to read them back).
#include <te/auto_schedule.h>
#include <te/autotune.h>
#include <te/te.h>

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "ansor_suite.h"
#include "auto_schedule_suite.h"
#include "bench_util.h"
#include "cases.h"
#include "matmul_schedule.h"
#ifdef TE_BENCH_OPENBLAS
#include <cblas.h>
#endif
#ifdef TE_BENCH_HALIDE
#include "halide_peer.h"
#endif

namespace te_bench {

namespace {

std::vector<SuiteKernel> suite() {
  std::vector<SuiteKernel> s;
  s.push_back(suite_sgemm(1024));
  s.back().hand = [] {
    te_examples::Sgemm g = te_examples::sgemm_best(1024, 1024, 1024);
    return te::lower(g.schedule, {g.A, g.B, g.C}, "sgemm_hand");
  };
  s.push_back(suite_bmm(16, 256, 256, 256));
  s.push_back(suite_conv2d(64, 56, 64));
  s.push_back(suite_depthwise(64, 56));
  s.push_back(suite_softmax(1024, 4096));
  s.push_back(suite_layer_norm(1024, 4096));
  s.push_back(suite_grid_sample(256, 200));
  s.push_back(suite_transpose_add_relu(2048));
  for (SuiteKernel& k : ansor_suite()) s.push_back(std::move(k));
  return s;
}

std::vector<int64_t> shape_of(const te::Tensor& t) {
  std::vector<int64_t> s;
  for (const te::Expr& e : t.shape()) s.push_back(*te::as_const_int(e));
  return s;
}

// Random inputs in each input's range, a zeroed output.
std::vector<te::Argument> make_args(const SuiteKernel& k) {
  std::mt19937 rng(7);
  std::vector<te::Argument> args;
  for (size_t i = 0; i + 1 < k.args.size(); ++i) {
    std::uniform_real_distribution<float> u(k.ranges[i].first, k.ranges[i].second);
    te::NDArray a = te::NDArray::empty(shape_of(k.args[i]), te::Float(32));
    for (int64_t j = 0; j < a.size(); ++j) static_cast<float*>(a.data())[j] = u(rng);
    args.emplace_back(a);
  }
  args.emplace_back(te::NDArray::empty(shape_of(k.output), te::Float(32)));
  return args;
}

// Per-call seconds from bench/auto_schedule_torch.py; empty when it cannot run.
std::vector<double> torch_samples(const std::string& kernel, int threads, int calls) {
  return command_samples(
      fmt::format("/usr/bin/python3 {}/auto_schedule_torch.py {} {} {}", TE_BENCH_SOURCE_DIR, kernel, threads, calls));
}

te::AutoScheduleOptions options_for_this_run(const SuiteKernel& k) {
  te::AutoScheduleOptions o;
  o.threads = threads();
  o.constant_inputs = k.constants;
  return o;
}

// A kernel te's rows time: the function, and the schedule it came from when that may take
// inputs pretransformed (auto_schedule with constant_inputs).
struct Lowered {
  te::LoweredFunc f;
  te::Schedule s;
};

// One kernel's shared state: its arguments, the default's output and the searched schedule.
struct Case {
  SuiteKernel k;
  std::vector<te::Argument> args;
  std::vector<float> expected;
  std::optional<te::Schedule> searched;
  std::string search_note;
};

// Whether an output matches the default's (beyond float reassociation).
bool matches_expected(const Case& c, const std::vector<float>& out) {
  for (size_t i = 0; i < out.size() && i < c.expected.size(); ++i)
    if (!(std::fabs(out[i] - c.expected[i]) <= 2e-3f * (1 + std::fabs(c.expected[i])))) return false;
  return true;
}

// The case's arguments as l's function takes them: the inputs it takes pretransformed laid
// out once here, outside the timing (the same arrays otherwise).
std::vector<te::Argument> arguments_for(Case& c, const Lowered& l) {
  if (c.args.empty()) c.args = make_args(c.k);
  std::vector<te::Argument> args = c.args;
  if (!l.s.defined()) return args;
  for (const te::Pretransform& p : l.s.pretransforms())
    for (size_t i = 0; i < c.k.args.size(); ++i)
      if (c.k.args[i].op() == p.input.op()) {
        te::NDArray taken = te::NDArray::empty(shape_of(p.taken), p.taken.dtype());
        te::build(te::lower_pretransform(l.s, p.input, "pretransform"))("pretransform").call({c.args[i], taken});
        args[i] = taken;
      }
  return args;
}

// A te kernel's call on the case's arguments, or nullptr when its output differs from the
// default's.
std::function<void()> checked_call(Case& c, const Lowered& l) {
  auto args = std::make_shared<std::vector<te::Argument>>(arguments_for(c, l));
  te::Function fn = te::build(l.f)(l.f.name);
  fn.call(*args);
  std::vector<float> out = c.args.back().array().to_vector<float>();
  if (c.expected.empty()) c.expected = out;
  if (!matches_expected(c, out)) return nullptr;
  return [fn, args] { fn.call(*args); };
}

void search_if_selected(Case& c, const std::string& group) {
  const char* env = std::getenv("TE_BENCH_AUTO_TRIALS");
  const int trials = env ? std::atoi(env) : 64;
  if (trials <= 0 || !selected_by_filter(group)) return;
  const char* dir = std::getenv("TE_BENCH_TUNE_DIR");
  te::AutoScheduleOptions o = options_for_this_run(c.k);
  o.records = fmt::format("{}/auto_{}_threads{}.jsonl", dir ? dir : ".", c.k.name, threads());
  o.trials = trials;
  o.progress = true;
  const auto t0 = std::chrono::steady_clock::now();
  c.searched = te::auto_schedule({c.k.output}, o);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // The records (this run's and earlier ones'): fewer than `trials` when the space is
  // smaller, more when close calls were measured again; a search time near 0 when the
  // records already held them all.
  size_t records = 0;
  std::ifstream in(o.records);
  for (std::string line; std::getline(in, line);) records += !line.empty();
  c.search_note = fmt::format("{} trials, {} records, search {:.0f} s", trials, records, s);
}

// `note` (when given) is the summary row's note, set once the row has its figures; `call`
// and `body` (when given) receive the row's call and its loop nest, for another row.
void add_te(const std::shared_ptr<Case>& c, const std::string& group, const std::string& impl, bool baseline,
            std::function<Lowered()> lowered, int iterations = 0, std::function<std::string()> note = nullptr,
            std::shared_ptr<std::function<void()>> call = nullptr, std::shared_ptr<std::string> body = nullptr) {
  if (!call) call = std::make_shared<std::function<void()>>();
  add(
      group, impl,
      [=](benchmark::State& st) {
        if (!*call) {
          Lowered l = lowered();
          if (!l.f.body.defined()) return st.SkipWithError((impl + ": not searched in this run").c_str());
          if (body) *body = te::to_string(l.f.body);
          *call = checked_call(*c, l);
          if (!*call) return st.SkipWithError((impl + ": wrong result").c_str());
        }
        run_case(st, group, impl, baseline, *call);
        if (note) results().set_note(group, impl, note());
      },
      iterations);
}

}  // namespace

void register_auto_schedule() {
  for (SuiteKernel& k : suite()) {
    auto c = std::make_shared<Case>();
    c->k = std::move(k);
    const std::string group = "auto/" + c->k.name;
    results().define_group(group, {c->k.work, c->k.unit, 0});
    search_if_selected(*c, group);

    // The default runs first: its output is what every other must match.
    add_te(
        c, group, "te_default", true,
        [c] {
          return Lowered{te::lower(te::create_schedule({c->k.output}), c->k.args, "auto_default"), {}};
        },
        c->k.default_iterations);
    add(
        group, "pytorch",
        [c, group](benchmark::State& st) {
          std::vector<double> s = torch_samples(c->k.name, threads(), 10);
          if (s.empty()) return st.SkipWithError("PyTorch not found (scripts/deps.sh python3-torch)");
          size_t i = 0;
          for (auto _ : st) st.SetIterationTime(s[i++ % s.size()]);
          results().record(group, "pytorch", true, s);
          report(st, group, "pytorch", true);
        },
        1);
#ifdef TE_BENCH_OPENBLAS
    if (c->k.name.rfind("sgemm_", 0) == 0 || c->k.name.rfind("bmm_", 0) == 0) {
      add(group, "openblas", [c, group](benchmark::State& st) {
        if (c->args.empty()) c->args = make_args(c->k);
        const auto& a = c->args[0].array();
        const int64_t batch = a.ndim() == 3 ? a.shape()[0] : 1;
        const int m = int(a.shape()[a.ndim() - 2]), kk = int(a.shape()[a.ndim() - 1]);
        const int n = int(c->args[1].array().shape()[a.ndim() - 1]);
        openblas_set_num_threads(threads());
        auto call = [c, batch, m, n, kk] {
          const float* A = static_cast<const float*>(c->args[0].array().data());
          const float* B = static_cast<const float*>(c->args[1].array().data());
          float* C = static_cast<float*>(c->args[2].array().data());
          for (int64_t q = 0; q < batch; ++q)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, kk, 1.0f, A + q * m * kk, kk, B + q * kk * n,
                        n, 0.0f, C + q * m * n, n);
        };
        run_case(st, group, "openblas", true, call);
      });
    }
#endif
#ifdef TE_BENCH_HALIDE
    // Halide's autoschedulers on the same algorithm (not grid_sample: its Halide version
    // is hand-scheduled only). Its output is checked against te's default's.
    for (const char* scheduler : {"Adams2019", "Mullapudi2016"}) {
      if (c->k.name.rfind("grid_sample_", 0) == 0) break;
      const std::string impl = std::string("halide_") + scheduler;
      auto call = std::make_shared<std::function<void()>>();
      auto note = std::make_shared<std::string>();
      add(group, impl, [c, group, impl, scheduler, call, note](benchmark::State& st) {
        if (!*call) {
          if (c->args.empty()) c->args = make_args(c->k);
          std::vector<const float*> inputs;
          std::vector<std::vector<int64_t>> shapes;
          for (size_t i = 0; i + 1 < c->args.size(); ++i) {
            inputs.push_back(static_cast<const float*>(c->args[i].array().data()));
            shapes.push_back(c->args[i].array().shape());
          }
          te::NDArray& out = c->args.back().array();
          try {
            const auto t0 = std::chrono::steady_clock::now();
            *call = halide::auto_scheduled(scheduler, c->k.name, inputs, shapes, static_cast<float*>(out.data()),
                                           out.shape(), threads());
            *note = fmt::format("schedule + compile {:.1f} s",
                                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
          } catch (const std::exception& e) {
            return st.SkipWithError((impl + ": " + e.what()).c_str());
          }
          (*call)();
          if (!matches_expected(*c, out.to_vector<float>())) return st.SkipWithError((impl + ": wrong result").c_str());
        }
        run_case(st, group, impl, true, *call);
        results().set_note(group, impl, *note);
      });
    }
#endif
    if (c->k.hand) add_te(c, group, "te_hand", true, [c] { return Lowered{c->k.hand(), {}}; });
    auto rules_seconds = std::make_shared<double>(0);
    auto rules_call = std::make_shared<std::function<void()>>();
    auto searched_call = std::make_shared<std::function<void()>>();
    auto rules_body = std::make_shared<std::string>(), searched_body = std::make_shared<std::string>();
    // Both lowered under one name, so that the same schedule prints the same loop nest.
    add_te(
        c, group, "te_rules", false,
        [c, rules_seconds] {
          const auto t0 = std::chrono::steady_clock::now();
          te::Schedule s = te::auto_schedule({c->k.output}, options_for_this_run(c->k));
          *rules_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          return Lowered{te::lower(s, c->k.args, "auto_te"), s};
        },
        0, [rules_seconds] { return fmt::format("rules {:.1f} ms", *rules_seconds * 1e3); }, rules_call, rules_body);
    // The searched row's note: the search, and the searched config against the rules' timed
    // side by side (the ratio of two rows timed minutes apart says less on a shared machine).
    auto versus_rules = std::make_shared<std::string>();
    add_te(
        c, group, "te_searched", false,
        [c] {
          return c->searched ? Lowered{te::lower(*c->searched, c->k.args, "auto_te"), *c->searched} : Lowered{};
        },
        0,
        [c, rules_call, searched_call, rules_body, searched_body, versus_rules] {
          if (versus_rules->empty()) {
            if (!*rules_call)
              *versus_rules = "te_rules not run";
            else if (*rules_body == *searched_body)
              *versus_rules = "the rules' own loop nest";
            else {
              SideBySide r = side_by_side(*rules_call, *searched_call);
              *versus_rules = fmt::format("side by side: {:.2f}x the rules', faster in {} of {} rounds", r.median_ratio,
                                          r.rounds - r.a_faster, r.rounds);
            }
          }
          return c->search_note + "; " + *versus_rules;
        },
        searched_call, searched_body);
  }
}

}  // namespace te_bench
