// Pass "reduction_init": where a reduction's initialisation runs. It goes just outside
// the outermost reduction loop, inside the data-parallel loops around it; data-parallel
// loops inside that point are repeated around it (as TVM's MakeComputeStmt does). The
// reduction loops bound to GPU threads of a cross-thread reduction stay outside it: each
// thread initialises its own partial result. A row reduction's row values are
// initialised around the same point, repeated over its row loops only.
#include "lower/passes.h"

namespace te::lowering {

std::vector<StageNest> place_reduction_init(std::vector<StageNest> nests) {
  for (StageNest& nest : nests) {
    if (!nest.init.defined()) continue;
    size_t first_reduce = nest.loops.size();
    for (size_t i = 0; i < nest.loops.size(); ++i)
      if (nest.loops[i].iv.type() == IterVarType::Reduce && nest.loops[i].kind != ForKind::ThreadBinding) {
        first_reduce = i;
        break;
      }
    nest.init_level = first_reduce;
    nest.init_loops.clear();
    nest.row_init_loops.clear();
    for (size_t i = first_reduce; i < nest.loops.size(); ++i)
      if (nest.loops[i].iv.type() != IterVarType::Reduce) {
        nest.init_loops.push_back(i);
        if (nest.row_init.defined() && i < nest.row_level) nest.row_init_loops.push_back(i);
      }
  }
  return nests;
}

}  // namespace te::lowering
