// The graph fuzzer: a random tensor graph of 1-4 compute stages (element-wise, stencils
// with offsets, strided and guarded reads, transposes, concatenations, reductions with
// every reducer and optional conditions, matrix products) over inputs of random shapes
// (extents 1..max_extent, sometimes symbolic), with a random legal schedule: cache_read,
// cache_write, rfactor, split/split_nparts with odd factors, fuse, reorder, tile,
// vectorize, unroll, parallel, compute_at, compute_inline -- or, for the CUDA emulation,
// thread bindings with shared-memory cache stages. Its reference: the same tensors with
// the default schedule.
#pragma once
#include <cstdint>
#include <set>

#include "fuzz_case.h"

namespace te::fuzz {

struct GraphCaseOptions {
  int gpu_percent = 0;        // cases scheduled for the GPU (thread bindings)
  int fma_percent = 10;       // float cases built with FMA contraction (Compare::Relative)
  int symbolic_percent = 20;  // cases whose inputs have symbolic extents
  int max_stages = 4;
  int max_extent = 9;
  // Schedule primitives to leave out, by number (te_fuzz --minimize; CPU cases only).
  std::set<int> skip_steps;
  // Scheduled by te::auto_schedule instead of random primitives: for the CPU (its rules,
  // or with auto_trials > 0 a short measured search over constant shapes) or for CUDA
  // (the rules; every case GPU-bound). auto_schedule refusing a graph is a failure.
  enum class Auto { Off, Cpu, Cuda } auto_schedule = Auto::Off;
  int auto_trials = 0;
};

FuzzCase make_graph_case(uint64_t seed, const GraphCaseOptions& options = {});

}  // namespace te::fuzz
