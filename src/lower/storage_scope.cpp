// Pass "cache_stages": the memory scope of each intermediate stage's buffer.
// cache_read, cache_write and set_scope fix it; otherwise the thread loops around the
// stage choose it, as in TVM: under a threadIdx loop each thread keeps its own part
// ("local"), under only blockIdx loops the block shares it ("shared"), else "global".
#include <algorithm>

#include "lower/passes.h"
#include "lower/stage_graph.h"

namespace te::lowering {

Schedule assign_storage_scopes(const Schedule& schedule) {
  Schedule s = schedule.copy();
  const ScheduleNode& sn = *s.get();
  for (const auto& st : sn.stages) {
    if (st->scope_set || st->op->kind != OpKind::Compute) continue;
    int rank = -1;
    for (const AttachLevel& lv : attach_path(sn, *st)) {
      std::string tag = thread_tag(*lv.stage, lv.iv);
      if (!tag.empty()) rank = std::max(rank, thread_rank(tag));
    }
    st->scope = rank < 0 ? MemoryScope::Global : rank == 0 ? MemoryScope::Shared : MemoryScope::Local;
  }
  return s;
}

}  // namespace te::lowering
