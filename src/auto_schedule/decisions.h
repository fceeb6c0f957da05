// The choices the rules make that the search may change (tile sizes, vector widths,
// blocks, work items per thread), as Ansor's sketches leave their parameters open. A
// rule asks `choose(name, its own value, the options)`: with no values given it gets its
// own value back and the point is recorded (the rules alone, and the run that lists the
// search space); replayed with a config's values it gets those.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "te/autotune/space.h"

namespace te::auto_sched {

struct DecisionPoint {
  std::string name;              // "<stage>.<what>", unique within one run of the rules
  std::vector<int64_t> options;  // ascending, the rule's own value among them
  int64_t rule_value = 0;
};

class Decisions {
 public:
  // The rules' own values.
  Decisions() = default;
  // The given values where a point has one of its options there, the rules' elsewhere.
  explicit Decisions(std::map<std::string, int64_t> values) : values_(std::move(values)) {}

  int64_t choose(const std::string& name, int64_t rule_value, std::vector<int64_t> options);
  // The points asked for, in the order the rules asked.
  const std::vector<DecisionPoint>& points() const { return points_; }

 private:
  std::map<std::string, int64_t> values_;
  std::vector<DecisionPoint> points_;
};

// One Values knob per point (points with a single option are left out).
autotune::ConfigSpace space_of(const std::vector<DecisionPoint>& points);
// The config of that space with every point at the rule's value.
autotune::Config rules_config(const autotune::ConfigSpace& space, const std::vector<DecisionPoint>& points);
// A config's values by knob name, for Decisions.
std::map<std::string, int64_t> values_of(const autotune::Config& config);

}  // namespace te::auto_sched
