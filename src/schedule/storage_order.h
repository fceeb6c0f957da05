// Storage orders (a tensor's dimensions laid out in another order: cache_read,
// cache_write, pretransform) and redirecting a tensor's readers to a permuted copy.
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "te/schedule.h"

namespace te::sched {

// The storage order checked: a permutation of t's `ndim` dimensions (empty: t's own).
// te::Error naming `primitive` and t otherwise.
std::vector<size_t> storage_order_of(const std::vector<int>& order, size_t ndim, const Tensor& t,
                                     const char* primitive);

// v's elements in `order`.
template <typename T>
std::vector<T> permuted(const std::vector<T>& v, const std::vector<size_t>& order) {
  std::vector<T> out;
  for (size_t d : order) out.push_back(v[d]);
  return out;
}

// Every read of src by the given stages becomes a read of dst, whose dimension p is src's
// dimension order[p]; the readers' own readers follow (propagate_replacements).
void redirect_reads(ScheduleNode& s, std::vector<std::shared_ptr<StageNode>> readers, const Operation& src,
                    const Operation& dst, const std::vector<size_t>& order);
// The same with any map from src's indices to dst's (a copy laid out by phase).
using IndexMap = std::function<std::vector<Expr>(const std::vector<Expr>&)>;
void redirect_reads(ScheduleNode& s, std::vector<std::shared_ptr<StageNode>> readers, const Operation& src,
                    const Operation& dst, const IndexMap& dst_indices);

}  // namespace te::sched
