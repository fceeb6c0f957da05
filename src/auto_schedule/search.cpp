// auto_schedule with trials > 0: the rules' decision points become a tuning space; the
// search (SearchTuner: the cost model over loop-IR features) picks configs, the forked
// measurement of te::autotune times them against the default schedule's output, and the
// best config (from this run or from the records) is replayed through the rules.
// With trials = 0 and records, the records' best config is replayed without measuring.
#include "auto_schedule/search.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <random>

#include "auto_schedule/features.h"
#include "auto_schedule/search_tuner.h"
#include "codegen_cuda_src/names.h"
#include "schedule/pretransform.h"
#include "te/autotune/records.h"
#include "te/autotune/tune.h"
#include "te/bfloat16.h"
#include "te/build.h"
#include "te/error.h"
#include "te/float16.h"
#include "te/log.h"
#include "te/lower.h"
#include "te/runtime/c_runtime_api.h"

namespace te::auto_sched {

namespace {

using autotune::Config;

std::vector<int64_t> constant_shape(const Tensor& t) {
  std::vector<int64_t> shape;
  for (const Expr& e : t.shape()) {
    int64_t v = const_value(e);
    if (v < 0)
      throw Error(
          fmt::format("auto_schedule: trials > 0 measures the kernel, which needs constant shapes; "
                      "tensor '{}' has dimension '{}' (use trials = 0, the rules alone)",
                      t.name(), to_string(e)));
    shape.push_back(v);
  }
  return shape;
}

// The inputs of the graph (producers first), then the outputs: the kernel's arguments.
std::vector<Tensor> kernel_args(const Graph& g, const std::vector<Tensor>& outputs) {
  std::vector<Tensor> args;
  for (const Node* n : g.topo())
    if (!n->is_compute()) args.emplace_back(n->op, 0);
  args.insert(args.end(), outputs.begin(), outputs.end());
  return args;
}

// Inputs: floats uniform in [-1, 1) (as activations and weights are; a gather's
// coordinates spread over its whole source, as real ones do, so that the measured
// locality is not flattering); integers and bools 0 (an index tensor's 0 is always in
// range). Outputs: zeroed.
NDArray random_array(const Tensor& t, std::mt19937& rng) {
  NDArray a = NDArray::empty(constant_shape(t), t.dtype());
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const DataType d = t.dtype();
  const size_t n = size_t(a.size());
  if (d.is_float() && d.bits() == 32) {
    for (size_t i = 0; i < n; ++i) static_cast<float*>(a.data())[i] = u(rng);
  } else if (d.is_float() && d.bits() == 64) {
    for (size_t i = 0; i < n; ++i) static_cast<double*>(a.data())[i] = u(rng);
  } else if (d.is_bfloat()) {
    for (size_t i = 0; i < n; ++i) static_cast<bfloat16*>(a.data())[i] = bfloat16(u(rng));
  } else if (d.is_float16()) {
    for (size_t i = 0; i < n; ++i) static_cast<half*>(a.data())[i] = half(u(rng));
  }
  return a;
}

// Candidates are lowered by the hundred (features here, builds in the workers): their
// warnings ("cannot make vector code of ...") would bury the progress lines. The chosen
// schedule warns as usual when the caller lowers it.
class QuietWarnings {
 public:
  QuietWarnings() : saved_(log_level()) {
    if (saved_ == LogLevel::Warn) set_log_level(LogLevel::Error);
  }
  ~QuietWarnings() { set_log_level(saved_); }
  QuietWarnings(const QuietWarnings&) = delete;
  QuietWarnings& operator=(const QuietWarnings&) = delete;

 private:
  LogLevel saved_;
};

// FNV-1a: a stable digest of the kernel's text for the records' key.
uint64_t digest(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

// The configs of the task's key measured for its target, cheapest first, each judged on
// the mean of all its records: a close call measured again below counts every
// measurement, and the records read back later rank the same way.
std::vector<std::pair<Config, double>> ranked_configs(const std::vector<autotune::Record>& records,
                                                      const autotune::Task& task) {
  const std::string target = autotune::target_string(task.target);
  std::map<uint64_t, std::pair<Config, std::vector<double>>> by_config;
  for (const autotune::Record& r : records) {
    if (!r.ok || r.key != task.key || r.target != target) continue;
    std::optional<Config> c = task.space.from_labels(r.config);
    if (!c) continue;
    by_config.try_emplace(c->index(), *c, std::vector<double>{}).first->second.second.push_back(r.cost());
  }
  std::vector<std::pair<Config, double>> out;
  for (const auto& [index, entry] : by_config) {
    double sum = 0;
    for (double t : entry.second) sum += t;
    out.emplace_back(entry.first, sum / double(entry.second.size()));
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  return out;
}

// A search keeps what it measured, so on a busy machine a config that one noisy
// measurement made look fast would win. The configs within 15% of the best, and the
// rules' own (which a noisy first measurement may have put out of reach: the search must
// not return worse than the rules), are measured again in two interleaved rounds (drift
// hits each alike), and every measurement counts.
constexpr double kCloseCall = 1.15;
constexpr size_t kFinalists = 3;

std::vector<autotune::Record> remeasure_close_calls(const autotune::Task& task, const autotune::MeasureOptions& measure,
                                                    const std::vector<std::pair<Config, double>>& ranked,
                                                    const Config& rules, bool progress) {
  std::vector<Config> finalists;
  for (const auto& [c, cost] : ranked)
    if (finalists.size() < kFinalists && cost <= ranked.front().second * kCloseCall) finalists.push_back(c);
  if (std::none_of(finalists.begin(), finalists.end(), [&](const Config& c) { return c.index() == rules.index(); }))
    finalists.push_back(rules);
  if (finalists.size() < 2) return {};
  autotune::Task again = task;
  again.reference = nullptr;  // each was checked when first measured
  autotune::MeasureOptions options = measure;
  options.repeat = std::max(options.repeat, 5);
  autotune::LocalMeasurer measurer(again, options);
  std::vector<autotune::Record> records;
  const std::string target = autotune::target_string(task.target);
  for (int round = 0; round < 2; ++round) {
    std::vector<autotune::MeasureResult> results = measurer.measure(finalists);
    for (size_t i = 0; i < finalists.size(); ++i)
      records.push_back(autotune::make_record(task.key, finalists[i], results[i].ok, results[i].error, results[i].times,
                                              results[i].build_s, target));
  }
  if (progress)
    std::fprintf(stderr,
                 "[auto_schedule] measured %zu configs again (those within %.0f%% of the best, and the rules')\n",
                 finalists.size(), (kCloseCall - 1) * 100);
  return records;
}

// The rules are the prior: a searched config replaces them only when it is faster by more
// than the measurements' noise between processes (a search's forked worker and the
// program that then runs the kernel place its buffers differently: 5-12% seen on bmm),
// so a search never trades the rules for a config that was lucky once.
constexpr double kBeatTheRules = 1.05;

const Config& chosen_config(const std::vector<std::pair<Config, double>>& ranked, const Config& rules) {
  const auto it = std::find_if(ranked.begin(), ranked.end(),
                               [&](const auto& entry) { return entry.first.index() == rules.index(); });
  if (it != ranked.end() && ranked.front().second * kBeatTheRules > it->second) return it->first;
  return ranked.front().first;
}

// What the progress line adds when chosen_config kept the rules over a faster config.
const char* choice_note(const Config& chosen, const std::vector<std::pair<Config, double>>& ranked) {
  return chosen.index() == ranked.front().first.index() ? "" : "; the rules' config, within 5%, kept";
}

// How close a config's outputs must be to the float64 reference: float rounding of the
// outputs' type (a float16 output is 1e-3 off whatever the order), growing as the square
// root of the longest reduction (the random-walk error of a float sum; the inputs are in
// [-1, 1), so its terms are at most 1): 4M squares in float32 may be 5e-4 off.
void set_tolerance(autotune::MeasureOptions& m, const std::vector<Tensor>& outputs) {
  double eps = 0x1p-24;  // float32's unit roundoff; float64 outputs are held to it too
  for (const Tensor& t : outputs)
    if (t.dtype().is_float() && t.dtype().bits() < 32) eps = std::max(eps, t.dtype().is_bfloat() ? 0x1p-8 : 0x1p-11);
  double longest = 1;
  const Graph graph(outputs);
  for (const Node* n : graph.topo()) {
    double k = 1;
    for (const IterVar& r : n->op->reduce_axis)
      if (const int64_t* e = as_const_int(r->dom.extent)) k *= double(*e);
    longest = std::max(longest, k);
  }
  const double grown = 4 * eps * std::sqrt(longest);
  m.rtol = std::max(m.rtol, grown);
  m.atol = std::max(m.atol, grown);
  m.scale_atol = true;
  m.reference_float64 = true;
}

// Configs the reference check rejected, reported rather than dropped silently: a wrong
// output is a bug in a rule, or a tolerance too tight for the computation.
void report_rejected(const std::vector<autotune::Record>& records, const std::string& name,
                     const autotune::MeasureOptions& m) {
  size_t wrong = 0;
  const autotune::Record* first = nullptr;
  for (const autotune::Record& r : records)
    if (!r.ok && r.error.rfind("wrong output", 0) == 0 && wrong++ == 0) first = &r;
  if (wrong == 0) return;
  std::string config;
  for (const auto& [knob, label] : first->config) config += (config.empty() ? "" : " ") + knob + "=" + label;
  log_message(LogLevel::Warn,
              fmt::format("auto_schedule '{}': {} of {} configs measured gave outputs off the float64 reference and "
                          "off the default schedule's by more than rtol {:.2g} / atol {:.2g} (times the largest "
                          "output) and were not chosen; the first, {}: {}",
                          name, wrong, records.size(), m.rtol, m.atol, config, first->error));
}

}  // namespace

autotune::Task search_task(const std::vector<Tensor>& outputs, const AutoScheduleOptions& options,
                           const autotune::ConfigSpace& space) {
  Graph g(outputs);
  const std::vector<Tensor> args = kernel_args(g, outputs);
  for (const Tensor& t : args) constant_shape(t);
  // A C identifier: an output named after its stage ("layer_norm_backward.dx") is not one.
  const std::string name = cuda::sanitize_identifier("auto_" + outputs[0].name());
  autotune::Task task;
  task.space = space;
  // The default schedule's loop nest is the computation itself: the key changes when the
  // compute or its shapes do, and with what the rules were asked for.
  const std::string text = to_string(lower(create_schedule(outputs), args, name));
  // Constant inputs the rules take pretransformed (no decision changes which): every
  // config, the reference and the random arguments take them in that layout.
  AutoScheduleOptions quiet = options;
  quiet.progress = false;
  Decisions none;
  const Schedule rules = apply_rules(outputs, quiet, none);
  const std::vector<Pretransform> pretransforms = rules.pretransforms();
  std::string taken;
  for (const Pretransform& p : pretransforms)
    taken += fmt::format("/{}{}:{}{}", p.input.name(), p.computed.defined() ? "=" + p.computed.name() : "",
                         fmt::join(p.storage_order, ","), p.inner_block > 0 ? fmt::format(":b{}", p.inner_block) : "");
  task.key = fmt::format("auto_schedule/{}/{:016x}/{}/threads={}{}{}{}", outputs[0].name(), digest(text),
                         options.target.str(), options.threads, options.skip_zeros ? "" : "/keep_zeros",
                         options.winograd ? "" : "/direct", taken.empty() ? "" : "/pretransformed" + taken);
  task.build = [outputs, options, args, name](const Config& c) {
    QuietWarnings quiet;
    Decisions d(values_of(c));
    return lower(apply_rules(outputs, options, d), args, name);
  };
  task.reference = [outputs, args, name, pretransforms, options] {
    // The rules' rewrites of the definition that change what the function takes
    // (Winograd's precomputed weights), then the same layouts.
    Schedule s = create_schedule(outputs);
    std::vector<Tensor> constants = options.constant_inputs;
    std::vector<std::string> notes;
    std::set<const OperationNode*> kept;
    std::vector<Winograd1dStages> rows;
    use_winograd(s, outputs, options, constants, notes, kept, rows);
    for (const Pretransform& p : pretransforms) {
      if (p.storage_order.empty() && p.inner_block == 0) continue;
      const Pretransform* computed = sched::find_pretransform(*s.get(), p.input);
      s.pretransform(computed ? computed->taken : p.input, p.storage_order, p.inner_block);
    }
    return lower(s, args, name + "_default");
  };
  task.make_args = [args = sched::taken_args(*rules.get(), args), seed = options.seed] {
    std::mt19937 rng(uint32_t(seed) + 1);
    std::vector<Argument> out;
    for (const Tensor& t : args) out.emplace_back(random_array(t, rng));
    return out;
  };
  for (size_t i = 0; i < outputs.size(); ++i) task.outputs.push_back(args.size() - outputs.size() + i);
  task.target = options.target;
  return task;
}

Schedule best_recorded(const std::vector<Tensor>& outputs, const AutoScheduleOptions& options) {
  // Nothing is measured with trials = 0, so a file that is not there is a wrong path.
  if (!std::filesystem::exists(options.records))
    throw Error(
        fmt::format("auto_schedule: the records file '{}' does not exist; with trials = 0 the records "
                    "are only read (give trials > 0 to search and write them)",
                    options.records));
  // Read first: a directory, an empty file or one without a record is an error whatever
  // the graph.
  const autotune::RecordFile file = autotune::load_records(options.records);
  AutoScheduleOptions quiet = options;
  quiet.progress = false;
  Decisions rules;
  apply_rules(outputs, quiet, rules);
  autotune::ConfigSpace space = space_of(rules.points());
  // The rules' own schedule (its notes printed when asked for).
  auto rules_schedule = [&] {
    Decisions none;
    return apply_rules(outputs, options, none);
  };
  // Nothing to choose: no search records anything for this graph.
  if (space.knobs().empty()) return rules_schedule();
  // The key is the search's: the same computation, target and options.
  autotune::Task task = search_task(outputs, quiet, space);
  std::vector<std::pair<Config, double>> ranked = ranked_configs(file.records, task);
  // An error, not the rules' schedule: records were asked for, and a kernel silently built
  // without them is slow. The records are keyed by the options too: a search made for
  // other threads does not apply.
  if (ranked.empty())
    throw Error(
        fmt::format("auto_schedule: '{}' holds no successful record of '{}' for target '{}', threads={} "
                    "(the options a search records under): search with these options (trials > 0), or "
                    "drop the records for the rules' schedule",
                    options.records, outputs[0].name(), options.target.str(), options.threads));
  const Config rules_choice = rules_config(space, rules.points());
  Config config = chosen_config(ranked, rules_choice);
  // The search's last word was a duel in its process: the records keep its verdict.
  if (config.index() != rules_choice.index() && duel_verdict(file.records, task, config, rules_choice) == false)
    config = rules_choice;
  if (options.progress)
    std::fprintf(stderr, "[auto_schedule] best recorded config (%.4f ms%s): %s\n", ranked.front().second * 1e3,
                 choice_note(config, ranked), config.to_string().c_str());
  Decisions chosen(values_of(config));
  return apply_rules(outputs, options, chosen);
}

Schedule search(const std::vector<Tensor>& outputs, const AutoScheduleOptions& options) {
  if (options.target.is_cuda())
    throw Error(
        fmt::format("auto_schedule: AutoScheduleOptions::trials is {}, but te cannot run CUDA kernels "
                    "in this process to measure them (it emits .cu files for nvcc); use trials = 0 "
                    "(the rules alone) for target \"cuda\"",
                    options.trials));
  // The search measures here: a CPU this host can run (the host's own, or one it has every
  // feature of) is searched; any other has the rules alone.
  if (!options.target.is_host())
    check_runs_on_host(options.target,
                       fmt::format("auto_schedule: AutoScheduleOptions::trials is {}, but the search measures on "
                                   "this host (use trials = 0, the rules alone, for target '{}')",
                                   options.trials, options.target.str()));
  // Candidates are built silently; only the chosen schedule's rules are printed.
  AutoScheduleOptions quiet = options;
  quiet.progress = false;
  Decisions rules;
  apply_rules(outputs, quiet, rules);
  autotune::ConfigSpace space = space_of(rules.points());
  if (space.knobs().empty()) {
    if (options.progress) std::fprintf(stderr, "[auto_schedule] nothing to search: the rules decide every value\n");
    Decisions none;
    return apply_rules(outputs, options, none);
  }
  autotune::Task task = search_task(outputs, quiet, space);
  const int threads = options.threads > 0 ? options.threads : te_num_threads();
  // Each candidate is lowered once: its features and the digest of its loop IR (by which
  // the tuner skips configs that lower to code already measured).
  std::map<uint64_t, std::optional<uint64_t>> codes;
  auto features = [&task, &codes, threads](const Config& c) -> std::optional<std::vector<float>> {
    try {
      LoweredFunc f = task.build(c);  // build() is quiet
      codes[c.index()] = digest(to_string(f));
      return feature_vector(f, threads);
    } catch (const Error&) {
      codes[c.index()] = std::nullopt;
      return std::nullopt;
    }
  };
  auto code = [&task, &codes](const Config& c) -> std::optional<uint64_t> {
    auto it = codes.find(c.index());
    if (it != codes.end()) return it->second;
    std::optional<uint64_t> d;
    try {
      d = digest(to_string(task.build(c)));
    } catch (const Error&) {
    }
    return codes[c.index()] = d;
  };
  SearchTunerOptions to;
  to.seed = options.seed;
  to.history = &SearchHistory::process();
  SearchTuner tuner(space, features, to, code);
  const Config rules_choice = rules_config(space, rules.points());
  tuner.measure_first({rules_choice});

  autotune::TuneOptions tune;
  tune.n_trial = size_t(options.trials);
  tune.records_path = options.records;
  tune.progress = options.progress;
  tune.time_budget_s = options.time_budget_s;
  tune.measure.repeat = 3;
  tune.measure.min_repeat_ms = 10;
  tune.measure.timeout_s = 20;
  set_tolerance(tune.measure, outputs);
  const auto start = std::chrono::steady_clock::now();
  autotune::TuneResult r = autotune::tune(task, tuner, tune);
  tuner.contribute(SearchHistory::process());
  report_rejected(r.records, outputs[0].name(), tune.measure);
  if (!r.best) {
    log_message(LogLevel::Warn,
                fmt::format("auto_schedule '{}': no config succeeded ({}), so the rules' schedule is used unmeasured",
                            outputs[0].name(), r.records.empty() ? "none was measured" : r.records[0].error));
    Decisions none;
    return apply_rules(outputs, options, none);
  }
  std::vector<autotune::Record> records =
      options.records.empty() ? r.records : autotune::read_records_file(options.records).records;
  std::vector<std::pair<Config, double>> ranked = ranked_configs(records, task);
  TE_ICHECK(!ranked.empty(), "auto_schedule: tune() found a best config that no record holds");
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Only after measuring: a run that read everything back measures nothing.
  if (r.measured > 0 && (options.time_budget_s <= 0 || elapsed < options.time_budget_s)) {
    std::vector<autotune::Record> again =
        remeasure_close_calls(task, tune.measure, ranked, rules_choice, options.progress);
    if (!again.empty()) {
      if (!options.records.empty()) autotune::append_records_file(options.records, again);
      records.insert(records.end(), again.begin(), again.end());
      ranked = ranked_configs(records, task);
    }
  }
  Config best_config = chosen_config(ranked, rules_choice);
  if (options.progress)
    std::fprintf(stderr,
                 "[auto_schedule] best of %zu configs, %zu distinct loop nests (%zu candidates lowered, %zu of them "
                 "skipped: the same code as one measured) (%.4f ms%s): %s\n",
                 ranked.size(), tuner.distinct_codes(), tuner.lowered(), tuner.duplicates_skipped(),
                 ranked.front().second * 1e3, choice_note(best_config, ranked), best_config.to_string().c_str());
  // The last word is this process's: the choice against the rules, timed side by side.
  if (best_config.index() != rules_choice.index() && r.measured > 0 &&
      (options.time_budget_s <= 0 ||
       std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < options.time_budget_s)) {
    DuelResult duel = duel_in_process(task, best_config, rules_choice);
    if (!options.records.empty()) autotune::append_records_file(options.records, duel.records);
    records.insert(records.end(), duel.records.begin(), duel.records.end());
    if (options.progress)
      std::fprintf(stderr,
                   "[auto_schedule] timed here, side by side: chosen %.4f ms, rules %.4f ms, the chosen faster in %d "
                   "of %d rounds: %s\n",
                   duel.chosen_s * 1e3, duel.rules_s * 1e3, duel.rounds.won, duel.rounds.rounds,
                   duel.rounds.keep_chosen ? "the chosen config kept"
                                           : "the rules' config kept (not 3% faster in all rounds but one)");
  }
  // A search resumed from its records without measuring follows the last duel they hold.
  if (best_config.index() != rules_choice.index() && duel_verdict(records, task, best_config, rules_choice) == false)
    best_config = rules_choice;
  Decisions best(values_of(best_config));
  return apply_rules(outputs, options, best);
}

}  // namespace te::auto_sched
