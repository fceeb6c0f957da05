// tensorize: records which loop an intrinsic replaces; lower() matches the nest (the
// loops under the axis are only known once every split and reorder is done).
#include <fmt/format.h>

#include <algorithm>

#include "schedule/messages.h"
#include "te/schedule.h"

namespace te {

using sched::quote;

void Stage::tensorize(const IterVar& axis, const TensorIntrinsic& intrinsic) {
  StageNode& s = *node_;
  if (!intrinsic.defined()) throw Error(fmt::format("tensorize: stage {}: the intrinsic is undefined", quote(name())));
  if (s.op->kind != OpKind::Compute)
    throw Error(fmt::format("tensorize: stage {} is a placeholder; it has no loops to replace", quote(name())));
  if (!axis.defined() || std::find_if(s.leaf_iter_vars.begin(), s.leaf_iter_vars.end(),
                                      [&](const IterVar& iv) { return iv.same_as(axis); }) == s.leaf_iter_vars.end()) {
    std::string loops;
    for (const IterVar& iv : s.leaf_iter_vars) loops += (loops.empty() ? "'" : ", '") + iv->var.name() + "'";
    throw Error(
        fmt::format("tensorize: axis {} is not a loop of stage {} (its loops: {}); pass one of its "
                    "current leaf loops",
                    axis.defined() ? quote(axis->var.name()) : "(undefined)", quote(name()), loops));
  }
  if (s.tensorize_intrinsic.defined())
    throw Error(
        fmt::format("tensorize: stage {} is already tensorized at {} with '{}'; a stage takes one "
                    "tensorize",
                    quote(name()), quote(s.tensorize_axis->var.name()), s.tensorize_intrinsic.name()));
  s.tensorize_axis = axis;
  s.tensorize_intrinsic = intrinsic;
}

}  // namespace te
