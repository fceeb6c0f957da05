// Small loop helpers the rules share.
#include <fmt/format.h>

#include "auto_schedule/rules.h"

namespace te::auto_sched {

Stage Context::stage(const OperationNode* op) const { return s[g.at(op).op]; }

IterVar vectorize_split(Stage st, const IterVar& iv, int lanes, bool shift_inwards) {
  if (lanes < 2) return iv;
  auto [outer, inner] = st.split(iv, lanes, shift_inwards ? TailStrategy::ShiftInwards : TailStrategy::GuardWithIf);
  st.vectorize(inner);
  return outer;
}

IterVar fuse_range(Stage st, const std::vector<IterVar>& loops) {
  if (loops.size() == 1) return loops[0];
  return st.fuse(loops);
}

std::string axis_names(const std::vector<IterVar>& v) {
  std::string out;
  for (const IterVar& iv : v) out += (out.empty() ? "'" : ", '") + iv.name() + "'";
  return out.empty() ? "(none)" : out;
}

}  // namespace te::auto_sched
