#include "auto_schedule/decisions.h"

#include <fmt/format.h>

#include <algorithm>

#include "te/error.h"

namespace te::auto_sched {

int64_t Decisions::choose(const std::string& name, int64_t rule_value, std::vector<int64_t> options) {
  options.push_back(rule_value);
  std::sort(options.begin(), options.end());
  options.erase(std::unique(options.begin(), options.end()), options.end());
  // A stage name can repeat (user names are not unique): the n-th asker gets "#n".
  std::string unique = name;
  for (int n = 2; std::any_of(points_.begin(), points_.end(), [&](const DecisionPoint& p) { return p.name == unique; });
       ++n)
    unique = fmt::format("{}#{}", name, n);
  points_.push_back({unique, options, rule_value});
  auto it = values_.find(unique);
  if (it != values_.end() && std::binary_search(options.begin(), options.end(), it->second)) return it->second;
  return rule_value;
}

autotune::ConfigSpace space_of(const std::vector<DecisionPoint>& points) {
  autotune::ConfigSpace space;
  for (const DecisionPoint& p : points)
    if (p.options.size() > 1) space.define_values(p.name, p.options);
  return space;
}

autotune::Config rules_config(const autotune::ConfigSpace& space, const std::vector<DecisionPoint>& points) {
  std::vector<size_t> indices;
  for (const autotune::Knob& k : space.knobs()) {
    auto p = std::find_if(points.begin(), points.end(), [&](const DecisionPoint& d) { return d.name == k.name; });
    TE_ICHECK(p != points.end(), "auto_schedule: a knob without its decision point");
    auto at = std::find(k.values.begin(), k.values.end(), p->rule_value);
    TE_ICHECK(at != k.values.end(), "auto_schedule: a rule's value is not among its options");
    indices.push_back(static_cast<size_t>(at - k.values.begin()));
  }
  return space.from_indices(indices);
}

std::map<std::string, int64_t> values_of(const autotune::Config& config) {
  std::map<std::string, int64_t> out;
  for (const autotune::Knob& k : config.knobs()) out[k.name] = config.get(k.name);
  return out;
}

}  // namespace te::auto_sched
