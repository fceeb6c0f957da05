// CUDA rules (placeholder until written): every root stage gets one thread per output point.
#include <fmt/format.h>

#include "auto_schedule/rules.h"

namespace te::auto_sched {

void schedule_root_cuda(Context& cx, const OperationNode* op) {
  Stage st = cx.stage(op);
  if (op->axis.empty()) return;
  IterVar all = fuse_range(st, st.op()->axis);
  auto [bx, tx] = st.split(all, cx.opts.cuda_threads_per_block);
  st.bind(bx, thread_axis("blockIdx.x"));
  st.bind(tx, thread_axis("threadIdx.x"));
}

}  // namespace te::auto_sched
