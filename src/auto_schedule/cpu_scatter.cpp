// CPU, a scatter stage: parallel over the axes that are bare indices of the output (a
// batch, a channel: every iteration writes its own elements, so a scatter-add needs no
// atomics and adds in the same order every run), vectorized never (scattered lanes store
// one by one anyway). A scatter-add with no such axis runs its outermost axis in
// parallel with atomic adds where its type has them (float32/64, int32/64) and it is not
// deterministic, else serially; a plain scatter with none stays serial (its last writer must stay the last).
#include <fmt/format.h>

#include "auto_schedule/rules.h"
#include "schedule/scatter_rules.h"

namespace te::auto_sched {

void schedule_scatter_cpu(Context& cx, const OperationNode* op) {
  Stage st = cx.stage(op);
  std::vector<IterVar> own;  // the leading axes that index the output directly
  for (const IterVar& iv : op->axis) {
    if (!sched::indexes_output_directly(*op, iv)) break;
    own.push_back(iv);
  }
  if (cx.cpu.threads <= 1 || op->axis.empty()) {
    cx.note(fmt::format("scatter '{}': serial", op->name));
    return;
  }
  if (!own.empty()) {
    st.parallel(fuse_range(st, own));
    cx.note(fmt::format("scatter '{}': parallel over {} (its own elements: no atomics)", op->name, axis_names(own)));
    return;
  }
  const DataType t = op->dtype;
  const bool atomics = (t.is_float() && !t.is_bfloat() && t.bits() >= 32) || (t.is_int() && t.bits() >= 32);
  if (op->scatter_accumulate && atomics && !op->scatter_deterministic) {
    st.parallel(op->axis[0]);
    cx.note(fmt::format("scatter-add '{}': parallel over '{}' with atomic adds", op->name, op->axis[0].name()));
    return;
  }
  cx.note(fmt::format("scatter '{}': serial (no axis indexes its output directly)", op->name));
}

}  // namespace te::auto_sched
