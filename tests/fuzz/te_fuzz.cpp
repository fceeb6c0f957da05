// te_fuzz: the differential and simplifier fuzzers for long runs.
//
//   te_fuzz [--expr] [--graph] [--simplify] --seed S --count N [--gpu-percent P] [--cuda]
//           [--bfloat16] [--max-failures F] [--verbose] [--minimize] [--skip-steps 3,7]
//
// Case k of a run uses seed S + k, so `--seed X --count 1` re-runs case X alone (every
// failure report prints that command). Without a kind flag all three fuzzers run.
// --gpu-percent P schedules P% of the expression and graph cases for the GPU (thread
// bindings; they still run through interpret() and the JIT); with --cuda those cases
// also run through the CUDA emulation (tests/cuda_emulation), compiled in batches with
// the host C++ compiler. --bfloat16 adds bfloat16 to the expression and simplifier fuzzers' types (its
// cases then differ from those without for the same seed). --minimize re-runs each failing CPU graph case leaving out
// schedule primitives one at a time while it still fails, and prints the smallest
// schedule found (--skip-steps replays it). Exit status: 0 when no case failed, 1 otherwise.
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <set>
#include <string>

#include "cuda_batch.h"
#include "expr_case.h"
#include "graph_case.h"
#include "simplify_check.h"

namespace {

using namespace te::fuzz;

struct Options {
  bool expr = false, graph = false, simplify = false, cuda = false, verbose = false, minimize = false;
  bool bfloat16 = false;
  std::set<int> skip_steps;
  uint64_t seed = 1;
  uint64_t count = 100;
  int gpu_percent = 0;
  int max_failures = 10;
};

[[noreturn]] void usage(const char* why) {
  std::cerr << "te_fuzz: " << why
            << "\nusage: te_fuzz [--expr] [--graph] [--simplify] --seed S --count N [--gpu-percent P] [--cuda]"
               " [--bfloat16] [--max-failures F] [--verbose] [--minimize] [--skip-steps 3,7]\n";
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(("missing value after " + a).c_str());
      return argv[++i];
    };
    if (a == "--expr")
      o.expr = true;
    else if (a == "--graph")
      o.graph = true;
    else if (a == "--simplify")
      o.simplify = true;
    else if (a == "--cuda")
      o.cuda = true;
    else if (a == "--bfloat16")
      o.bfloat16 = true;
    else if (a == "--verbose")
      o.verbose = true;
    else if (a == "--minimize")
      o.minimize = true;
    else if (a == "--skip-steps") {
      std::string list = value();
      for (size_t p = 0; p < list.size();) {
        size_t q = list.find(',', p);
        o.skip_steps.insert(std::atoi(list.substr(p, q - p).c_str()));
        p = q == std::string::npos ? list.size() : q + 1;
      }
    } else if (a == "--seed")
      o.seed = std::strtoull(value().c_str(), nullptr, 10);
    else if (a == "--count")
      o.count = std::strtoull(value().c_str(), nullptr, 10);
    else if (a == "--gpu-percent")
      o.gpu_percent = std::atoi(value().c_str());
    else if (a == "--max-failures")
      o.max_failures = std::atoi(value().c_str());
    else
      usage(("unknown argument " + a).c_str());
  }
  if (!o.expr && !o.graph && !o.simplify) o.expr = o.graph = o.simplify = true;
  return o;
}

struct Tally {
  uint64_t pass = 0, rejected = 0, failed = 0;
  std::map<std::string, int> rejections;  // first line of each message

  void add(const CaseResult& r, const Options& o, const std::string& header) {
    switch (r.status) {
      case CaseResult::Status::Pass: ++pass; break;
      case CaseResult::Status::Rejected: {
        ++rejected;
        std::string line = r.report.substr(r.report.find("te rejected the schedule:"));
        ++rejections[line.substr(0, line.find('\n', 30))];
        if (o.verbose) std::cout << header << r.report << "\n";
        break;
      }
      case CaseResult::Status::Fail:
        ++failed;
        std::cout << header << r.report << "\n";
        break;
    }
  }
};

// The expression or graph fuzzer over the seeds of the run.
template <typename Make>
void run_programs(const char* kind, const Options& o, Make make, Tally& tally,
                  std::vector<uint64_t>* failing = nullptr) {
  std::vector<FuzzCase> gpu_cases;
  for (uint64_t k = 0; k < o.count && tally.failed < static_cast<uint64_t>(o.max_failures); ++k) {
    FuzzCase c = make(o.seed + k);
    CaseResult r = check_case(c);
    if (o.verbose && r.status == CaseResult::Status::Pass) std::cout << describe(c) << "passed\n\n";
    tally.add(r, o, std::string("---- ") + kind + " ");
    if (failing && r.status == CaseResult::Status::Fail) failing->push_back(o.seed + k);
    if (o.cuda && c.gpu && r.status == CaseResult::Status::Pass) gpu_cases.push_back(std::move(c));
    if (gpu_cases.size() == 40 || (k + 1 == o.count && !gpu_cases.empty())) {
      CudaBatch batch;
      for (const FuzzCase& g : gpu_cases) batch.add(g);
      for (const CaseResult& br : batch.run()) tally.add(br, o, std::string("---- CUDA ") + kind + " ");
      gpu_cases.clear();
    }
  }
}

// Leaves out the schedule primitives of a failing CPU graph case one at a time, keeping
// each omission after which the case still fails.
void minimize_graph(uint64_t seed, GraphCaseOptions go) {
  FuzzCase c = make_graph_case(seed, go);
  if (c.gpu || check_case(c).status != CaseResult::Status::Fail) return;
  for (int step = 0; step < c.schedule_steps; ++step) {
    GraphCaseOptions trial = go;
    trial.skip_steps.insert(step);
    if (check_case(make_graph_case(seed, trial)).status == CaseResult::Status::Fail) go = trial;
  }
  std::string skip;
  for (int s : go.skip_steps) skip += (skip.empty() ? "" : ",") + std::to_string(s);
  std::cout << "==== minimized: te_fuzz --graph --seed " << seed << " --count 1 --skip-steps " << skip << "\n"
            << check_case(make_graph_case(seed, go)).report << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  auto start = std::chrono::steady_clock::now();
  Tally tally;
  if (o.expr) {
    ExprCaseOptions eo;
    eo.gpu_percent = o.gpu_percent;
    eo.bfloat16 = o.bfloat16;
    run_programs(
        "expr", o, [&](uint64_t s) { return make_expr_case(s, eo); }, tally);
  }
  if (o.graph) {
    GraphCaseOptions go;
    go.gpu_percent = o.gpu_percent;
    go.skip_steps = o.skip_steps;
    std::vector<uint64_t> failing;
    run_programs(
        "graph", o, [&](uint64_t s) { return make_graph_case(s, go); }, tally, &failing);
    if (o.minimize)
      for (uint64_t s : failing) minimize_graph(s, go);
  }
  if (o.simplify) {
    for (uint64_t k = 0; k < o.count && tally.failed < static_cast<uint64_t>(o.max_failures); ++k)
      tally.add(check_simplify_case(o.seed + k, o.bfloat16), o, "---- simplify ");
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "te_fuzz: " << tally.pass << " passed, " << tally.failed << " failed, " << tally.rejected
            << " rejected by te in " << secs << " s\n";
  for (const auto& [msg, n] : tally.rejections) std::cout << "  " << n << "x " << msg << "\n";
  return tally.failed ? 1 : 0;
}
