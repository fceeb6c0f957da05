// Builders of hand-written GPU loop IR shared by the CUDA test kernels.
#pragma once
#include <functional>
#include <string>

#include "te/te.h"

namespace te::cuda_test {

inline Param buffer_param(const Buffer& b) { return Param{b, Var()}; }
inline Param scalar_param(const Var& v) { return Param{Buffer(), v}; }

inline Stmt block_loop(const Var& v, Expr extent, Stmt body, const char* tag = "blockIdx.x") {
  return for_loop(v, 0, std::move(extent), ForKind::ThreadBinding, std::move(body), tag);
}
inline Stmt thread_loop(const Var& v, Expr extent, Stmt body, const char* tag = "threadIdx.x") {
  return for_loop(v, 0, std::move(extent), ForKind::ThreadBinding, std::move(body), tag);
}

// i = bx * threads + tx over [0, n): body(i) under `if (i < n)`.
inline Stmt grid_1d(Expr n, int threads, const std::function<Stmt(Expr)>& body, const std::string& suffix = "") {
  Var bx("bx" + suffix), tx("tx" + suffix);
  Expr i = bx * threads + tx;
  return block_loop(bx, (n + (threads - 1)) / threads, thread_loop(tx, threads, if_then_else(i < n, body(i))));
}

}  // namespace te::cuda_test
