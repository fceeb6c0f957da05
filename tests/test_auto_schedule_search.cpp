// auto_schedule's measured search (trials > 0): the decision points and their replay,
// the loop-IR features, the learned cost model and the tuner on synthetic costs, and
// whole searches whose kernels are compared with interpret() and plain C++, resumed
// from their records without measuring again.
#include <gtest/gtest.h>

#include <functional>

#include <optional>
#include <unistd.h>
#include <te/auto_schedule.h>
#include <te/autotune.h>
#include <te/te.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "auto_schedule/cost_model.h"
#include "auto_schedule/search.h"
#include "auto_schedule/search_tuner.h"
#include "test_util.h"

using namespace te;

namespace {

struct Gemm {
  Tensor A, B, C;
};

Gemm gemm(int M, int N, int K) {
  Gemm g;
  g.A = placeholder({M, K}, Float(32), "A");
  g.B = placeholder({K, N}, Float(32), "B");
  IterVar k = reduce_axis({0, K}, "k");
  g.C = compute(
      {M, N}, [&](Expr i, Expr j) { return sum(g.A(i, k) * g.B(k, j), {k}); }, "C");
  return g;
}

AutoScheduleOptions one_thread() {
  AutoScheduleOptions o;
  o.threads = 1;
  o.target.vector_bits = 256;  // the same space on every host
  return o;
}

float feature(const std::vector<std::pair<std::string, float>>& f, const std::string& name) {
  for (const auto& [n, v] : f)
    if (n == name) return v;
  ADD_FAILURE() << "no feature " << name;
  return 0;
}

size_t line_count(const std::string& path) {
  std::ifstream in(path);
  size_t n = 0;
  for (std::string line; std::getline(in, line);) n += !line.empty();
  return n;
}

// The kernel of schedule s on random A and B, run by the JIT, against interpret() of the
// default schedule and a C++ triple loop.
void expect_gemm_correct(const Gemm& g, const Schedule& s, int M, int N, int K) {
  auto a = uniform_floats(size_t(M) * K, 1), b = uniform_floats(size_t(K) * N, 2);
  NDArray A = NDArray::from_vector(a, {M, K}), B = NDArray::from_vector(b, {K, N});
  NDArray fast = NDArray::empty({M, N}, Float(32)), ref = NDArray::empty({M, N}, Float(32));
  LoweredFunc f = lower(s, {g.A, g.B, g.C}, "searched");
  build(f)("searched").call({A, B, fast});
  interpret(lower(create_schedule({g.C}), {g.A, g.B, g.C}, "reference"), {A, B, ref});
  auto got = fast.to_vector<float>(), want = ref.to_vector<float>();
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float c = 0;
      for (int k = 0; k < K; ++k) c += a[size_t(i) * K + k] * b[size_t(k) * N + j];
      const size_t at = size_t(i) * N + j;
      ASSERT_NEAR(got[at], want[at], 1e-4f * std::max(1.0f, std::fabs(want[at]))) << "vs interpret() at " << at;
      ASSERT_NEAR(got[at], c, 1e-4f * std::max(1.0f, std::fabs(c))) << "vs C++ at " << at;
    }
}

}  // namespace

TEST(AutoScheduleSearch, DecisionsOfAMatmul) {
  Gemm g = gemm(64, 64, 64);
  std::vector<AutoScheduleDecision> d = auto_schedule_decisions({g.C}, one_thread());
  std::map<std::string, AutoScheduleDecision> by_name;
  for (const auto& x : d) by_name[x.name] = x;
  ASSERT_TRUE(by_name.count("C.tile_rows")) << "decisions: " << d.size();
  ASSERT_TRUE(by_name.count("C.tile_vectors"));
  for (const auto& x : d) {
    EXPECT_TRUE(std::is_sorted(x.options.begin(), x.options.end())) << x.name;
    EXPECT_TRUE(std::binary_search(x.options.begin(), x.options.end(), x.rule_value)) << x.name;
  }
}

TEST(AutoScheduleSearch, ReplayingTheRulesValuesGivesTheRulesSchedule) {
  Gemm g = gemm(64, 48, 32);
  std::map<std::string, int64_t> rules;
  for (const auto& x : auto_schedule_decisions({g.C}, one_thread())) rules[x.name] = x.rule_value;
  std::string a = to_string(lower(auto_schedule({g.C}, one_thread()), {g.A, g.B, g.C}, "k"));
  std::string b = to_string(lower(auto_schedule_with({g.C}, one_thread(), rules), {g.A, g.B, g.C}, "k"));
  EXPECT_EQ(a, b);
}

TEST(AutoScheduleSearch, EveryOptionOfEveryDecisionReplaysCorrectly) {
  const int M = 24, N = 40, K = 16;
  Gemm g = gemm(M, N, K);
  for (const auto& x : auto_schedule_decisions({g.C}, one_thread())) {
    for (int64_t v : x.options) {
      SCOPED_TRACE(x.name + " = " + std::to_string(v));
      Schedule s = auto_schedule_with({g.C}, one_thread(), {{x.name, v}});
      expect_gemm_correct(g, s, M, N, K);
    }
  }
}

TEST(AutoScheduleSearch, ADecisionChangesTheLoopNest) {
  Gemm g = gemm(64, 64, 64);
  auto d = auto_schedule_decisions({g.C}, one_thread());
  auto rows = std::find_if(d.begin(), d.end(), [](const auto& x) { return x.name == "C.tile_rows"; });
  ASSERT_NE(rows, d.end());
  ASSERT_GE(rows->options.size(), 2u);
  std::set<std::string> nests;
  for (int64_t v : rows->options)
    nests.insert(to_string(lower(auto_schedule_with({g.C}, one_thread(), {{"C.tile_rows", v}}), {g.A, g.B, g.C}, "k")));
  EXPECT_EQ(nests.size(), rows->options.size());
}

TEST(AutoScheduleSearch, ReplayErrorsNameTheDecision) {
  Gemm g = gemm(64, 64, 64);
  expect_error(
      [&] {
        auto_schedule_with({g.C}, one_thread(), {{"C.no_such_thing", 4}});
      },
      {"auto_schedule_with", "'C.no_such_thing'", "C.tile_rows"});
  expect_error(
      [&] {
        auto_schedule_with({g.C}, one_thread(), {{"C.tile_rows", 1000}});
      },
      {"auto_schedule_with", "1000", "'C.tile_rows'", "options"});
}

TEST(AutoScheduleSearch, FeaturesFollowTheLoopNest) {
  const int n = 4096;
  Tensor A = placeholder({n}, Float(32), "A");
  Tensor B = compute(
      {n}, [&](Expr i) { return A(i) * 2.0f + 1.0f; }, "B");
  Schedule scalar = create_schedule({B});
  Schedule vector = create_schedule({B});
  auto [outer, inner] = vector[B].split(B.axis(0), 8);
  vector[B].vectorize(inner);
  auto fs = loop_features(lower(scalar, {A, B}, "scalar"), 1);
  auto fv = loop_features(lower(vector, {A, B}, "vector"), 1);
  ASSERT_EQ(fs.size(), fv.size());
  EXPECT_FLOAT_EQ(feature(fs, "float_ops"), std::log2(1.0f + 2 * n));
  EXPECT_FLOAT_EQ(feature(fv, "float_ops"), std::log2(1.0f + 2 * n));  // the same work
  EXPECT_FLOAT_EQ(feature(fs, "scalar_stores"), std::log2(1.0f + n));
  EXPECT_FLOAT_EQ(feature(fs, "vector_stores"), 0);
  EXPECT_FLOAT_EQ(feature(fv, "vector_stores"), std::log2(1.0f + n / 8));
  EXPECT_FLOAT_EQ(feature(fv, "load_contiguous_vector"), std::log2(1.0f + n / 8));
  EXPECT_FLOAT_EQ(feature(fs, "load_scalar_step"), std::log2(1.0f + n));
  // A parallel loop of 512 items over 4 threads: 128 each, evenly shared.
  vector[B].parallel(outer);
  auto fp = loop_features(lower(vector, {A, B}, "parallel"), 4);
  EXPECT_FLOAT_EQ(feature(fp, "parallel_items"), std::log2(1.0f + 512));
  EXPECT_FLOAT_EQ(feature(fp, "items_per_thread"), std::log2(1.0f + 128));
  EXPECT_FLOAT_EQ(feature(fp, "thread_balance"), 0);
  expect_error([] { loop_features(LoweredFunc{}, 1); }, {"loop_features", "no body"});
}

TEST(AutoScheduleSearch, WorkingSetCountsTheBytesOfTheInnermostLoops) {
  // B(i, j) = A(j, i), 64 x 64 floats: the j loop touches one column of A (64 floats), the
  // i and j loops all of A (16 KiB).
  Tensor A = placeholder({64, 64}, Float(32), "A");
  Tensor B = compute(
      {64, 64}, [&](Expr i, Expr j) { return A(j, i); }, "B");
  auto f = loop_features(lower(create_schedule({B}), {A, B}, "transpose"), 1);
  EXPECT_FLOAT_EQ(feature(f, "working_set_1"), std::log2(1.0f + 64 * 4));
  EXPECT_FLOAT_EQ(feature(f, "working_set_2"), std::log2(1.0f + 64 * 64 * 4));
  EXPECT_FLOAT_EQ(feature(f, "working_set_3"), std::log2(1.0f + 64 * 64 * 4));  // no more than A
  EXPECT_FLOAT_EQ(feature(f, "over_l1_iters"), 0);
}

TEST(AutoScheduleSearch, CostModelRanksByWhatItLearned) {
  // Cost = 3 * x0 - x1 on random points: the model must rank fresh points in that order.
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(0, 4);
  auto truth = [](const std::vector<float>& r) { return 3 * r[0] - r[1]; };
  std::vector<std::vector<float>> rows, fresh;
  std::vector<float> y;
  for (int i = 0; i < 200; ++i) {
    rows.push_back({u(rng), u(rng), u(rng)});
    y.push_back(truth(rows.back()));
  }
  auto_sched::BoostedCostModel m;
  EXPECT_FALSE(m.fitted());
  EXPECT_EQ(m.predict(rows)[0], 0.0f);
  m.fit(rows, y);
  ASSERT_TRUE(m.fitted());
  for (int i = 0; i < 50; ++i) fresh.push_back({u(rng), u(rng), u(rng)});
  std::vector<float> p = m.predict(fresh);
  int concordant = 0, pairs = 0;
  for (size_t i = 0; i < fresh.size(); ++i)
    for (size_t j = i + 1; j < fresh.size(); ++j) {
      if (std::fabs(truth(fresh[i]) - truth(fresh[j])) < 1) continue;
      ++pairs;
      concordant += (p[i] < p[j]) == (truth(fresh[i]) < truth(fresh[j]));
    }
  EXPECT_GT(double(concordant) / pairs, 0.9) << concordant << " of " << pairs;
}

namespace {

// Tunes `tuner` on a made-up task `key` whose configs take time(config) seconds each.
autotune::TuneResult tune_synthetic(autotune::Tuner& tuner, const autotune::ConfigSpace& space, const std::string& key,
                                    size_t trials, const std::function<double(const autotune::Config&)>& time) {
  autotune::FunctionMeasurer measurer([&](const autotune::Config& c) {
    autotune::MeasureResult r;
    r.ok = true;
    r.times = {time(c)};
    return r;
  });
  autotune::Task task;
  task.key = key;
  task.space = space;
  autotune::TuneOptions t;
  t.n_trial = trials;
  t.progress = false;
  return autotune::tune(task, tuner, measurer, t);
}

}  // namespace

TEST(AutoScheduleSearch, TunerFindsTheOptimumOfASyntheticSpace) {
  // 16 x 16 configs whose cost is a bowl around (11, 5); the features are the knob values.
  autotune::ConfigSpace space;
  space.define_range("x", 0, 15);
  space.define_range("y", 0, 15);
  auto cost = [](const autotune::Config& c) {
    double dx = double(c["x"] - 11), dy = double(c["y"] - 5);
    return 1e-3 * (1 + dx * dx + 2 * dy * dy);
  };
  auto features = [](const autotune::Config& c) -> std::optional<std::vector<float>> {
    return std::vector<float>{float(c["x"]), float(c["y"])};
  };
  auto_sched::SearchTunerOptions o;
  o.seed = 3;
  auto_sched::SearchTuner tuner(space, features, o);
  autotune::TuneResult r = tune_synthetic(tuner, space, "bowl", 48, cost);  // under a fifth of the space
  ASSERT_TRUE(r.best);
  EXPECT_EQ((*r.best)["x"], 11);
  EXPECT_EQ((*r.best)["y"], 5);
  std::set<uint64_t> distinct;
  for (const auto& rec : r.records) distinct.insert(space.from_labels(rec.config)->index());
  EXPECT_EQ(distinct.size(), r.records.size()) << "a config was proposed twice";
}

// The model learns across tasks: a search of one bowl leaves its rows (features, log2 of
// time over its best) in a history, and a search of another bowl of the same shape at a
// hundred times the cost ranks from its first batch with them, so that a few trials find
// the bottom where as many random ones (the warm-up without history) rarely would.
TEST(AutoScheduleSearch, TunerLearnsAcrossTasks) {
  autotune::ConfigSpace space;
  space.define_range("x", 0, 15);
  space.define_range("y", 0, 15);
  auto features = [](const autotune::Config& c) -> std::optional<std::vector<float>> {
    return std::vector<float>{float(c["x"]), float(c["y"])};
  };
  auto bowl = [](const autotune::Config& c, double scale) {
    double dx = double(c["x"] - 11), dy = double(c["y"] - 5);
    return scale * (1 + dx * dx + 2 * dy * dy);
  };
  auto search = [&](double scale, size_t trials, auto_sched::SearchTuner& tuner) {
    return tune_synthetic(tuner, space, "bowl_" + std::to_string(scale), trials,
                          [&](const autotune::Config& c) { return bowl(c, scale); });
  };
  auto_sched::SearchHistory history;
  auto_sched::SearchTunerOptions first;
  first.seed = 7;
  auto_sched::SearchTuner a(space, features, first);
  search(1e-3, 48, a);
  a.contribute(history);
  EXPECT_EQ(history.size(), 48u);

  auto_sched::SearchTunerOptions second;
  second.seed = 8;
  second.history = &history;
  auto_sched::SearchTuner b(space, features, second);
  autotune::TuneResult r = search(0.1, 8, b);  // one batch
  ASSERT_TRUE(r.best);
  EXPECT_LE(bowl(*r.best, 1), 3.0) << r.best->to_string();  // the bottom or next to it
  EXPECT_TRUE(b.model().fitted());
}

// Configs that lower to the same code are measured once: in the bowl, y alone changes
// the code (x is a knob the kernel ignores), so 16 distinct configs exist among 256.
TEST(AutoScheduleSearch, TunerSkipsConfigsWithTheSameCode) {
  autotune::ConfigSpace space;
  space.define_range("x", 0, 15);
  space.define_range("y", 0, 15);
  auto features = [](const autotune::Config& c) -> std::optional<std::vector<float>> {
    return std::vector<float>{float(c["y"])};
  };
  auto code = [](const autotune::Config& c) -> std::optional<uint64_t> { return uint64_t(c["y"]); };
  auto_sched::SearchTunerOptions o;
  o.seed = 5;
  auto_sched::SearchTuner tuner(space, features, o, code);
  autotune::TuneResult r = tune_synthetic(tuner, space, "same_code", 40, [](const autotune::Config& c) {
    return 1e-3 * (1 + std::abs(double(c["y"] - 5)));
  });
  std::set<int64_t> ys;
  for (const auto& rec : r.records) ys.insert(space.from_labels(rec.config)->get("y"));
  EXPECT_EQ(r.records.size(), 16u) << "only 16 configs lower to distinct code";
  EXPECT_EQ(ys.size(), r.records.size()) << "a code was measured twice";
  EXPECT_EQ(tuner.distinct_codes(), 16u);
  EXPECT_GT(tuner.duplicates_skipped(), 0u);
  ASSERT_TRUE(r.best);
  EXPECT_EQ(r.best->get("y"), 5);
}

// Lowering a candidate is the search's own cost. Where nearly the whole space lowers to
// one code (three knobs the kernel ignores, 32768 configs), a batch stops looking after
// its share of lowerings, and the search ends: it does not lower the whole space.
TEST(AutoScheduleSearch, ABatchLowersAtMostItsShareOfCandidates) {
  autotune::ConfigSpace space;
  space.define_range("x", 0, 31);
  space.define_range("y", 0, 31);
  space.define_range("z", 0, 31);
  size_t lowerings = 0;
  auto features = [&](const autotune::Config& c) -> std::optional<std::vector<float>> {
    ++lowerings;
    return std::vector<float>{float(c["x"]), float(c["y"]), float(c["z"])};
  };
  // Two codes: the config (1, 2, 3) and every other.
  auto code = [](const autotune::Config& c) -> std::optional<uint64_t> {
    return uint64_t(c["x"] == 1 && c["y"] == 2 && c["z"] == 3);
  };
  auto_sched::SearchTunerOptions o;
  o.seed = 3;
  o.lowerings_per_batch = 300;
  auto_sched::SearchTuner tuner(space, features, o, code);
  autotune::TuneResult r = tune_synthetic(tuner, space, "one_code", 64, [](const autotune::Config&) { return 1e-3; });
  EXPECT_LE(r.records.size(), 2u);
  EXPECT_GE(r.records.size(), 1u);
  // The first batch: its share and one ranking's worth past it; the next finds nothing new
  // in its share either, and the search ends.
  EXPECT_LE(lowerings, 2 * (300u + 128u)) << "lowered " << lowerings << " of 32768 configs";
  EXPECT_EQ(tuner.lowered(), lowerings);
}

TEST(AutoScheduleSearch, SearchedSgemmIsCorrectAndResumesFromItsRecords) {
  const int M = 64, N = 64, K = 64;
  Gemm g = gemm(M, N, K);
  AutoScheduleOptions o = one_thread();
  o.trials = 12;
  o.records = temp_path("auto_schedule_search.jsonl");
  Schedule s = auto_schedule({g.C}, o);
  expect_gemm_correct(g, s, M, N, K);
  // 12 configs, then the close calls (up to 3 within 15% of the best, and the rules') twice
  // more, and the duel of the choice and the rules in this process (2, when the choice is
  // not the rules').
  const size_t lines = line_count(o.records);
  EXPECT_LE(lines, 12u + 8u + 2u);
  // The search ends early when a batch's lowering budget finds no loop nest it has not
  // measured (SearchTuner::propose); the timed model decides which candidates it lowers,
  // so rarely a run ends a config or two short, and reading back searches on.
  std::set<std::vector<std::pair<std::string, std::string>>> first;
  for (const autotune::Record& r : autotune::read_records_file(o.records).records) first.insert(r.config);
  ASSERT_GE(first.size(), 10u);
  if (first.size() < 12u) GTEST_SKIP() << "the search ended at " << first.size() << " configs of 12";
  EXPECT_GE(lines, 12u);
  // Read back: the same schedule, nothing measured again.
  Schedule again = auto_schedule({g.C}, o);
  EXPECT_EQ(line_count(o.records), lines);
  EXPECT_EQ(to_string(lower(s, {g.A, g.B, g.C}, "k")), to_string(lower(again, {g.A, g.B, g.C}, "k")));
  // trials = 0 with the records: their best, replayed without measuring (ApplyHistoryBest).
  AutoScheduleOptions replay = o;
  replay.trials = 0;
  Schedule best = auto_schedule({g.C}, replay);
  EXPECT_EQ(line_count(o.records), lines);
  EXPECT_EQ(to_string(lower(s, {g.A, g.B, g.C}, "k")), to_string(lower(best, {g.A, g.B, g.C}, "k")));
  // More trials resume: only the configs beyond the distinct ones measured are (16 less
  // those, 4 unless the search's first batches proposed a config twice), and the close
  // calls again.
  std::set<std::vector<std::pair<std::string, std::string>>> distinct;
  for (const autotune::Record& r : autotune::read_records_file(o.records).records) distinct.insert(r.config);
  ASSERT_LE(distinct.size(), 12u);
  const size_t fresh = 16 - distinct.size();
  o.trials = 16;
  auto_schedule({g.C}, o);
  EXPECT_GE(line_count(o.records), lines + fresh);
  EXPECT_LE(line_count(o.records), lines + fresh + 8 + 2);
}

// Configs that one measurement made look fast are measured again with their close
// rivals, and the choice (the search's and the records' read back) follows the mean of
// every measurement of a config.
TEST(AutoScheduleSearch, CloseCallsAreMeasuredAgainAndJudgedOnEveryMeasurement) {
  const int M = 64, N = 64, K = 64;
  Gemm g = gemm(M, N, K);
  AutoScheduleOptions o = one_thread();
  o.trials = 6;
  o.records = temp_path("auto_schedule_close_calls.jsonl");
  auto_schedule({g.C}, o);
  // Plant lucky measurements: copies of two ok records, 1000x faster than they ran.
  std::vector<autotune::Record> lucky;
  for (const autotune::Record& r : autotune::read_records_file(o.records).records)
    if (r.ok && lucky.size() < 2 &&
        std::none_of(lucky.begin(), lucky.end(), [&](const autotune::Record& l) { return l.config == r.config; }))
      lucky.push_back(r);
  ASSERT_EQ(lucky.size(), 2u);
  for (autotune::Record& r : lucky)
    for (double& t : r.times) t = 1e-9;  // both far ahead of every real time, and equal
  // The file again with the pair's real records replaced by the lucky ones.
  std::vector<autotune::Record> kept;
  for (const autotune::Record& r : autotune::read_records_file(o.records).records)
    if (r.config != lucky[0].config && r.config != lucky[1].config) kept.push_back(r);
  kept.insert(kept.end(), lucky.begin(), lucky.end());
  std::remove(o.records.c_str());
  autotune::append_records_file(o.records, kept);
  auto records_of = [&](const autotune::Record& which) {
    size_t n = 0;
    for (const autotune::Record& r : autotune::read_records_file(o.records).records)
      n += r.config == which.config && r.key == which.key;  // not the duel's (key "/in_process")
    return n;
  };
  EXPECT_EQ(records_of(lucky[0]), 1u);
  // Two more trials: the planted pair is the close call at the top, measured twice more.
  o.trials = 8;
  Schedule searched = auto_schedule({g.C}, o);
  expect_gemm_correct(g, searched, M, N, K);
  EXPECT_EQ(records_of(lucky[0]), 3u);
  EXPECT_EQ(records_of(lucky[1]), 3u);
  // Reading the records back chooses as the search did.
  AutoScheduleOptions replay = o;
  replay.trials = 0;
  EXPECT_EQ(to_string(lower(searched, {g.A, g.B, g.C}, "k")),
            to_string(lower(auto_schedule({g.C}, replay), {g.A, g.B, g.C}, "k")));
}

// The rules' config stays unless a searched one is more than 5% faster (less is within
// the noise between the search's worker and the program that runs the kernel), both in
// the search's choice and in records read back.
TEST(AutoScheduleSearch, TheRulesStayUnlessBeatenByMoreThanTheNoise) {
  Gemm g = gemm(64, 64, 64);
  AutoScheduleOptions o = one_thread();
  o.trials = 6;
  o.records = temp_path("auto_schedule_rules_margin.jsonl");
  auto_schedule({g.C}, o);
  const std::vector<autotune::Record> all = autotune::read_records_file(o.records).records;
  auto text = [&](const Schedule& s) { return to_string(lower(s, {g.A, g.B, g.C}, "k")); };
  AutoScheduleOptions replay = o;
  replay.trials = 0;
  auto replay_of = [&](const std::vector<autotune::Record>& records) {
    std::remove(o.records.c_str());
    autotune::append_records_file(o.records, records);
    return text(auto_schedule({g.C}, replay));
  };
  const std::string rules_text = text(auto_schedule({g.C}, one_thread()));
  // The rules' own record, and one of another config with another loop nest.
  std::optional<autotune::Record> rules, other;
  std::string other_text;
  for (const autotune::Record& r : all) {
    if (!r.ok || r.key.find("/in_process") != std::string::npos) continue;  // not the duel's
    const std::string t = replay_of({r});
    if (t == rules_text && !rules) rules = r;
    if (t != rules_text && !other) {
      other = r;
      other_text = t;
    }
  }
  ASSERT_TRUE(rules && other) << "the search measured no config besides the rules'";
  auto planted = [&](double rules_ms, double other_ms) {
    autotune::Record a = *rules, b = *other;
    a.times = {rules_ms * 1e-3};
    b.times = {other_ms * 1e-3};
    return replay_of({a, b});
  };
  EXPECT_EQ(planted(1.0, 0.97), rules_text) << "3% faster: within the noise";
  EXPECT_EQ(planted(1.0, 0.90), other_text) << "10% faster: the searched config";
  EXPECT_EQ(planted(0.97, 1.0), rules_text);
  // The search's duel in its own process has the last word, read back as well: the
  // workers' 10% lead of the other config is overruled by a duel the rules won.
  auto with_duel = [&](double rules_ms, double other_ms) {
    autotune::Record a = *rules, b = *other, da = *rules, db = *other;
    a.times = {1.0e-3};
    b.times = {0.9e-3};
    da.key = db.key = rules->key + "/in_process";
    da.times = {rules_ms * 1e-3};
    db.times = {other_ms * 1e-3};
    return replay_of({a, b, da, db});
  };
  EXPECT_EQ(with_duel(1.0, 1.2), rules_text) << "the rules won the duel";
  EXPECT_EQ(with_duel(1.0, 0.9), other_text) << "the other config won it too";
}

// Records asked for but not applicable are an error, never the rules' schedule in silence
// (a kernel quietly built untuned is slow).
TEST(AutoScheduleSearch, RecordsOfOtherOptionsAreAnError) {
  const int M = 64, N = 64, K = 64;
  Gemm g = gemm(M, N, K);
  AutoScheduleOptions o = one_thread();
  o.trials = 2;
  o.records = temp_path("auto_schedule_other_options.jsonl");
  auto_schedule({g.C}, o);
  // Searched for one thread, read back for two: the records do not apply.
  AutoScheduleOptions two = one_thread();
  two.threads = 2;
  two.records = o.records;
  expect_error(
      [&] { auto_schedule({g.C}, two); },
      {"holds no successful record of 'C' for target 'llvm -vector-bits=256', threads=2", "search with these options"});
  // The same options read them back.
  AutoScheduleOptions one = o;
  one.trials = 0;
  expect_gemm_correct(g, auto_schedule({g.C}, one), M, N, K);
}

TEST(AutoScheduleSearch, TimeBudgetStopsTheSearch) {
  Gemm g = gemm(32, 32, 32);
  AutoScheduleOptions o = one_thread();
  o.trials = 200;
  o.time_budget_s = 1e-6;  // one batch, then stop
  o.records = temp_path("auto_schedule_budget.jsonl");
  Schedule s = auto_schedule({g.C}, o);
  EXPECT_LE(line_count(o.records), 8u);
  expect_gemm_correct(g, s, 32, 32, 32);
}

TEST(AutoScheduleSearch, ErrorsOfTheSearch) {
  Var n("n");
  Tensor A = placeholder({n}, Float(32), "A");
  Tensor B = compute(
      {n}, [&](Expr i) { return A(i) * 2.0f; }, "B");
  Tensor C = compute(
      {n, 64}, [&](Expr i, Expr j) { return A(i) + cast(Float(32), j); }, "C");
  AutoScheduleOptions o;
  o.trials = 4;
  expect_error([&] { auto_schedule({C}, o); }, {"auto_schedule", "constant shapes", "'A'", "n"});
  o.target = "cuda";
  expect_error([&] { auto_schedule({B}, o); }, {"auto_schedule", "trials is 4", "cuda", "trials = 0"});
  AutoScheduleOptions read_only;
  read_only.records = "/nonexistent/records.jsonl";
  expect_error([&] { auto_schedule({B}, read_only); },
               {"auto_schedule: the records file '/nonexistent/records.jsonl' does not exist; with trials = 0 the "
                "records are only read (give trials > 0 to search and write them)"});
}

// The search's last check: the chosen config and the rules' timed in this process, in
// interleaved rounds, each recorded. (Which one wins is a measurement, not asserted: the
// verdict must only follow from the medians by the documented 3%.)
TEST(AutoScheduleSearch, DuelTimesBothConfigsInThisProcess) {
  Tensor A = placeholder({256, 64}, Float(32), "A");
  Tensor B = compute(
      {256, 64}, [&](Expr i, Expr j) { return A(i, j) * 2.0f + 1.0f; }, "B");
  autotune::Task task;
  task.key = "duel/B";
  task.space.define_range("vector", 0, 1);  // 0: scalar loops, 1: vectors of 8
  task.build = [&](const autotune::Config& c) {
    Schedule s = create_schedule({B});
    if (c.get("vector") == 1) s[B].vectorize(s[B].split(B.axis(1), 8).second);
    return lower(s, {A, B}, "duel_kernel");
  };
  task.make_args = [] {
    return std::vector<Argument>{NDArray::from_vector(std::vector<float>(256 * 64, 1.5f), {256, 64}),
                                 NDArray::empty({256, 64}, Float(32))};
  };
  const autotune::Config scalar = task.space.at(0), vector = task.space.at(1);
  auto_sched::DuelResult d = auto_sched::duel_in_process(task, vector, scalar);
  EXPECT_GT(d.chosen_s, 0);
  EXPECT_GT(d.rules_s, 0);
  ASSERT_EQ(d.records.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(d.records[i].key, "duel/B/in_process");  // kept out of the search's ranking
    EXPECT_TRUE(d.records[i].ok);
    EXPECT_EQ(d.records[i].times.size(), 9u);
  }
  // The verdict is the rounds' (the records hold them in order, for a read-back).
  EXPECT_EQ(d.rounds.rounds, 9);
  EXPECT_EQ(d.rounds.keep_chosen, auto_sched::compare_rounds(d.records[0].times, d.records[1].times).keep_chosen);
  EXPECT_EQ(d.records[0].config, (std::vector<std::pair<std::string, std::string>>{{"vector", "1"}}));
  EXPECT_EQ(d.records[1].config, (std::vector<std::pair<std::string, std::string>>{{"vector", "0"}}));
}

// The duel's verdict is round by round: a lead of 3% at the median is not enough when the
// rules won two rounds (a drift the median hides), nor is winning every round by less.
TEST(AutoScheduleSearch, DuelKeepsOnlyALeadEveryRoundButOneAgreesOn) {
  using auto_sched::compare_rounds;
  const std::vector<double> rules = {1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0};
  auto_sched::DuelRounds steady = compare_rounds({0.95, 0.96, 0.94, 0.95, 0.95, 0.96, 0.95, 0.94, 0.95}, rules);
  EXPECT_TRUE(steady.keep_chosen);
  EXPECT_EQ(steady.won, 9);
  EXPECT_EQ(steady.rounds, 9);
  EXPECT_NEAR(steady.median_ratio, 0.95, 1e-12);
  // One round lost: still kept.
  EXPECT_TRUE(compare_rounds({0.95, 0.96, 0.94, 1.05, 0.95, 0.96, 0.95, 0.94, 0.95}, rules).keep_chosen);
  // Two lost: the same median, not kept.
  auto_sched::DuelRounds drifting = compare_rounds({0.95, 1.02, 0.94, 1.05, 0.95, 0.96, 0.95, 0.94, 0.95}, rules);
  EXPECT_FALSE(drifting.keep_chosen);
  EXPECT_EQ(drifting.won, 7);
  EXPECT_NEAR(drifting.median_ratio, 0.95, 1e-12);
  // Every round won, by 2%: within the margin.
  EXPECT_FALSE(compare_rounds({0.98, 0.98, 0.98, 0.98, 0.98, 0.98, 0.98, 0.98, 0.98}, rules).keep_chosen);
  // The ratios are per round: a slow round slows both configs and costs the chosen nothing.
  EXPECT_TRUE(compare_rounds({0.95, 1.9, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95},
                             {1.0, 2.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0})
                  .keep_chosen);
  EXPECT_FALSE(compare_rounds({}, {}).keep_chosen);
}
