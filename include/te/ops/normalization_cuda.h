/// \file
/// The CUDA schedules of te/ops/normalization.h's row reductions, softmax and layer norm
/// (header-only).
///
///   Tensor y = te::ops::softmax(x);                  // x: (..., C), float
///   Schedule s = create_schedule({y});
///   te::ops::schedule_softmax_cuda(s, y);            // one block per row
///
/// The schedules put a row in one block of `threads` threads (a multiple of 32, at most
/// 1024): each thread reads the row's columns tx, tx + threads, ... (coalesced), the
/// per-row statistics are cross-thread reductions (warp shuffles, then shared memory
/// across warps), and with `cache_row` the row is read from global memory once into
/// shared memory when C is a constant (C elements must fit in 48 KB). Each takes the
/// stages as handles (softmax_stages() and the like) or the output, whose stages it then
/// finds through the graph (never by name).
#pragma once
#include <string>
#include <vector>

#include "te/ops/normalization.h"
#include "te/te.h"

namespace te::ops {

namespace norm_detail {

inline void check_threads(int threads, const char* schedule) {
  if (threads < 32 || threads > 1024 || threads % 32 != 0)
    throw Error(std::string(schedule) + ": threads must be a multiple of 32 in [32, 1024], got " +
                std::to_string(threads));
}

// out's leading axes fused onto blockIdx.x, its last axis split over threadIdx.x.
inline IterVar block_per_row(Schedule& s, const Tensor& out, int threads) {
  Stage st = s[out];
  std::vector<IterVar> rows;
  for (int d = 0; d + 1 < out.ndim(); ++d) rows.push_back(out.axis(d));
  IterVar row = st.fuse(rows);
  auto [co, ci] = st.split(out.axis(out.ndim() - 1), threads);
  st.bind(row, thread_axis("blockIdx.x"));
  st.bind(ci, thread_axis("threadIdx.x"));
  (void)co;
  return row;
}

// A per-row reduction computed at the output's row loop, its columns over the threads.
inline void reduce_at_row(Schedule& s, const Tensor& r, const Tensor& out, const IterVar& row, int threads) {
  Stage st = s[r];
  auto [ko, ki] = st.split(r.op()->reduce_axis[0], threads);
  st.bind(ki, thread_axis("threadIdx.x"));
  st.compute_at(s[out], row);
  (void)ko;
}

// x's row in shared memory, fetched once by the block's threads for every reader (when
// the row has a constant length: shared memory has a fixed size).
inline void cache_row(Schedule& s, const Tensor& x, const std::vector<Tensor>& readers, const Tensor& out,
                      const IterVar& row, int threads) {
  if (!as_const_int(x.shape().back())) return;
  Tensor xs = s.cache_read(x, "shared", readers);
  s[xs].compute_at(s[out], row);
  auto [co, ci] = s[xs].split(xs.axis(xs.ndim() - 1), threads);
  s[xs].bind(ci, thread_axis("threadIdx.x"));
  (void)co;
}

// softmax and layer_norm: per-row statistics (stages given as handles, the first one
// reading x) reduced across the threads of the row's block, then the output.
inline void schedule_statistics(Schedule& s, const Tensor& x, std::vector<Tensor> readers, const Tensor& out,
                                int threads, bool cache, const char* schedule) {
  check_threads(threads, schedule);
  for (const Tensor& r : readers)
    if (!r.defined() || !x.defined() || !out.defined())
      throw Error(std::string(schedule) +
                  ": the stages are incomplete; pass what the matching te::ops "
                  "*_stages() function returns");
  IterVar row = block_per_row(s, out, threads);
  for (const Tensor& r : readers) reduce_at_row(s, r, out, row, threads);
  readers.push_back(out);
  if (cache) cache_row(s, x, readers, out, row, threads);
}

}  // namespace norm_detail

/// One block of `threads` per row of reduce_rows' output; the row's columns split over
/// the threads and combined by a cross-thread reduction.
inline void schedule_reduce_rows_cuda(Schedule& s, const Tensor& out, int threads = 256) {
  norm_detail::check_threads(threads, "schedule_reduce_rows_cuda");
  Stage st = s[out];
  std::vector<IterVar> rows;
  for (int d = 0; d < out.ndim(); ++d) rows.push_back(out.axis(d));
  IterVar row = st.fuse(rows);
  auto [ko, ki] = st.split(out.op()->reduce_axis[0], threads);
  st.bind(row, thread_axis("blockIdx.x"));
  st.bind(ki, thread_axis("threadIdx.x"));
  (void)ko;
}

/// One block of `threads` per row: the max and the sum of exponentials are cross-thread
/// reductions, then each thread writes its columns. cache_row: x's row is read once into
/// shared memory (when the number of columns is a constant).
inline void schedule_softmax_cuda(Schedule& s, const SoftmaxStages& st, int threads = 256, bool cache_row = true) {
  norm_detail::schedule_statistics(s, st.x, {st.max, st.expsum}, st.out, threads, cache_row, "schedule_softmax_cuda");
}

/// schedule_softmax_cuda for softmax()'s output (its stages found through the graph).
inline void schedule_softmax_cuda(Schedule& s, const Tensor& out, int threads = 256, bool cache_row = true) {
  norm_detail::check_threads(threads, "schedule_softmax_cuda");
  schedule_softmax_cuda(s, softmax_stages_of(out, "schedule_softmax_cuda"), threads, cache_row);
}

/// As schedule_softmax_cuda, for layer_norm's mean, variance and output.
inline void schedule_layer_norm_cuda(Schedule& s, const LayerNormStages& st, int threads = 256, bool cache_row = true) {
  norm_detail::schedule_statistics(s, st.x, {st.mean, st.var}, st.out, threads, cache_row, "schedule_layer_norm_cuda");
}

/// schedule_layer_norm_cuda for layer_norm()'s output (its stages found through the graph).
inline void schedule_layer_norm_cuda(Schedule& s, const Tensor& out, int threads = 256, bool cache_row = true) {
  norm_detail::check_threads(threads, "schedule_layer_norm_cuda");
  schedule_layer_norm_cuda(s, layer_norm_stages_of(out, "schedule_layer_norm_cuda"), threads, cache_row);
}

/// As schedule_layer_norm_cuda, for layer_norm_welford: the one statistics stage (mean,
/// m2, count) is a cross-thread tuple reduction.
inline void schedule_layer_norm_welford_cuda(Schedule& s, const LayerNormWelfordStages& st, int threads = 256,
                                             bool cache_row = true) {
  norm_detail::schedule_statistics(s, st.x, {st.mean}, st.out, threads, cache_row, "schedule_layer_norm_welford_cuda");
}

/// schedule_layer_norm_welford_cuda for layer_norm_welford()'s output (its stages found
/// through the graph).
inline void schedule_layer_norm_welford_cuda(Schedule& s, const Tensor& out, int threads = 256, bool cache_row = true) {
  norm_detail::check_threads(threads, "schedule_layer_norm_welford_cuda");
  LayerNormWelfordStages st;
  std::vector<Tensor> r =
      norm_detail::row_statistics(out, 1, "schedule_layer_norm_welford_cuda", "layer_norm_welford", &st.x);
  st.mean = r[0];
  st.out = out;
  schedule_layer_norm_welford_cuda(s, st, threads, cache_row);
}

/// One block of `threads` per row of argmax_rows / argmin_rows (either output): the
/// row's columns split over the threads and combined by a cross-thread tuple reduction.
inline void schedule_arg_rows_cuda(Schedule& s, const Tensor& out, int threads = 256) {
  norm_detail::check_threads(threads, "schedule_arg_rows_cuda");
  if (out.op()->num_outputs() != 2 || out.op()->reduce_axis.size() != 1)
    throw Error("schedule_arg_rows_cuda: '" + out.name() + "' is not an output of argmax_rows or argmin_rows");
  Stage st = s[out];
  IterVar row = st.fuse(out.op()->axis);
  auto [ko, ki] = st.split(out.op()->reduce_axis[0], threads);
  st.bind(row, thread_axis("blockIdx.x"));
  st.bind(ki, thread_axis("threadIdx.x"));
  (void)ko;
}

}  // namespace te::ops
