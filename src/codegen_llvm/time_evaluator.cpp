// time_evaluator: TVM-style timing of a built Function.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include "codegen_llvm/module_impl.h"

namespace te {

double TimingResult::median() const {
  if (results.empty()) return 0;
  std::vector<double> sorted = results;
  std::sort(sorted.begin(), sorted.end());
  size_t n = sorted.size();
  return n % 2 == 1 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

double TimingResult::min() const { return results.empty() ? 0 : *std::min_element(results.begin(), results.end()); }

double TimingResult::max() const { return results.empty() ? 0 : *std::max_element(results.begin(), results.end()); }

double TimingResult::std_dev() const {
  if (results.empty()) return 0;
  double m = std::accumulate(results.begin(), results.end(), 0.0) / results.size();
  double sum = 0;
  for (double r : results) sum += (r - m) * (r - m);
  return std::sqrt(sum / results.size());
}

TimeEvaluator::TimeEvaluator(Function f, int number, int repeat, int min_repeat_ms)
    : f_(std::move(f)), number_(number), repeat_(repeat), min_repeat_ms_(min_repeat_ms) {
  if (!f_.defined()) throw Error("time_evaluator: the Function is empty");
  if (number < 1 || repeat < 1 || min_repeat_ms < 0)
    throw Error(
        fmt::format("time_evaluator: number ({}) and repeat ({}) must be at least 1 and "
                    "min_repeat_ms ({}) at least 0",
                    number, repeat, min_repeat_ms));
}

TimingResult TimeEvaluator::run(const std::vector<Argument>& args) const {
  using clock = std::chrono::steady_clock;
  codegen::PreparedCall call(f_.impl_->functions[f_.index_], args);
  call.invoke();  // warm-up: first-touch pages, caches, the thread pool
  TimingResult r;
  int64_t number = number_;
  for (int k = 0; k < repeat_; ++k) {
    double seconds = 0;
    for (;;) {
      auto start = clock::now();
      for (int64_t i = 0; i < number; ++i) call.invoke();
      seconds = std::chrono::duration<double>(clock::now() - start).count();
      double ms = seconds * 1e3;
      if (ms >= min_repeat_ms_) break;
      // Too short to measure: scale number up to reach min_repeat_ms (at least x1.618).
      double scale = ms > 0 ? min_repeat_ms_ / ms : 10.0;
      number = std::max<int64_t>(static_cast<int64_t>(std::ceil(number * std::max(scale, 1.618))), number + 1);
    }
    r.results.push_back(seconds / static_cast<double>(number));
  }
  r.mean = std::accumulate(r.results.begin(), r.results.end(), 0.0) / static_cast<double>(r.results.size());
  return r;
}

TimeEvaluator time_evaluator(const Function& f, int number, int repeat, int min_repeat_ms) {
  return TimeEvaluator(f, number, repeat, min_repeat_ms);
}

}  // namespace te
