#include "schedule/storage_order.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "expr/analysis.h"
#include "schedule/graph_queries.h"
#include "schedule/messages.h"
#include "schedule/operation_builders.h"
#include "schedule/stage_lookup.h"

namespace te::sched {

std::vector<size_t> storage_order_of(const std::vector<int>& order, size_t ndim, const Tensor& t,
                                     const char* primitive) {
  std::vector<size_t> out;
  if (order.empty()) {
    for (size_t d = 0; d < ndim; ++d) out.push_back(d);
    return out;
  }
  std::vector<bool> seen(ndim, false);
  for (int d : order) {
    if (d < 0 || static_cast<size_t>(d) >= ndim || seen[static_cast<size_t>(d)] || order.size() != ndim)
      throw Error(fmt::format("{}: storage_order [{}] for tensor {} is not a permutation of its {} dimensions",
                              primitive, fmt::join(order, ", "), quote(t.name()), ndim));
    seen[static_cast<size_t>(d)] = true;
    out.push_back(static_cast<size_t>(d));
  }
  return out;
}

void redirect_reads(ScheduleNode& s, std::vector<std::shared_ptr<StageNode>> readers, const Operation& src,
                    const Operation& dst, const std::vector<size_t>& order) {
  redirect_reads(s, std::move(readers), src, dst,
                 [&](const std::vector<Expr>& indices) { return permuted(indices, order); });
}

void redirect_reads(ScheduleNode& s, std::vector<std::shared_ptr<StageNode>> readers, const Operation& src,
                    const Operation& dst, const IndexMap& dst_indices) {
  // Readers are rewritten producers first, each also redirected to the rewritten
  // versions of the readers it reads (T2 = A + T1 with both listed must read the new T1).
  std::sort(readers.begin(), readers.end(),
            [&](const auto& x, const auto& y) { return stage_index(s, x.get()) < stage_index(s, y.get()); });
  readers.erase(std::unique(readers.begin(), readers.end()), readers.end());  // listed twice
  auto read_dst = [&](const Expr& b) {
    return map_tensor_reads(b, [&](const TensorReadNode* r, const Expr& e) -> Expr {
      if (r->op != src) return e;
      return Expr(std::make_shared<TensorReadNode>(r->dtype, dst, dst_indices(r->indices), r->value_index));
    });
  };
  std::map<const OperationNode*, Operation> redirect, repl;
  for (auto& rs : readers) {
    Operation next = map_bodies(rs->op, [&](const Expr& b) { return replace_reads(read_dst(b), redirect); });
    repl[rs->op.get()] = next;
    redirect[rs->op.get()] = next;
    set_operation(*rs, next);
  }
  propagate_replacements(s, repl);
}

}  // namespace te::sched
