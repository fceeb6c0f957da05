// Small loop helpers the rules share.
#include <fmt/format.h>

#include "auto_schedule/rules.h"
#include "expr/analysis.h"
#include "te/simplify.h"

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

bool varies_within_rows(const Expr& index, const IterVar& x, int64_t rows) {
  if (!uses_var(index, x.var().get())) return false;
  if (rows <= 1) return false;  // one row: nothing changes within it
  Var outer("row_tile"), inner("row");
  const int64_t extent = const_extent(x);
  VarBounds bounds{{inner.get(), {0, rows - 1}}, {outer.get(), {0, extent < 0 ? int64_t{1} << 24 : extent / rows}}};
  Expr split = simplify(substitute(index, {{x.var(), outer * make_const(x.var().dtype(), rows) + inner}}), bounds);
  return uses_var(split, inner.get());
}

bool reads_window_along(const std::vector<Read>& reads, const OperationNode& red, const IterVar& axis) {
  std::vector<Var> reduced;
  for (const IterVar& k : red.reduce_axis) reduced.push_back(k.var());
  for (const Read& r : reads)
    for (const Expr& index : r.indices)
      if (uses_var(index, axis.var().get()) && uses_any_of(index, reduced)) return true;
  return false;
}

std::vector<Tensor> outputs_in(const Schedule& s, const std::vector<Tensor>& outputs) {
  std::vector<Tensor> current;
  for (const Tensor& t : outputs) current.emplace_back(s[t].op(), t.value_index());
  return current;
}

}  // namespace te::auto_sched
