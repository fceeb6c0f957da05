// call_extern on the GPU: kernels that call the __device__ functions of
// extern_device_functions.cuh (given in CudaOptions::extern_headers), and the same
// functions registered for interpret() (register_extern_device_functions).
#pragma once
#include <cstdint>
#include <string>

#include "cuda_emulation/loop_builders.h"
#include "te/te.h"

namespace te::cuda_test {

namespace device {
// The header's functions compiled for the host: the definitions interpret() calls.
#ifndef __device__
#define __device__
#define TE_TEST_UNDEF_DEVICE
#endif
#include "cuda_emulation/extern_device_functions.cuh"
#ifdef TE_TEST_UNDEF_DEVICE
#undef __device__
#undef TE_TEST_UNDEF_DEVICE
#endif
}  // namespace device

inline std::string extern_device_header() {
  return std::string(TE_TEST_DATA_DIR) + "/../cuda_emulation/extern_device_functions.cuh";
}

inline CudaOptions extern_options(CudaOptions::IndexWidth width = CudaOptions::IndexWidth::Auto) {
  CudaOptions o;
  o.extern_headers = {extern_device_header()};
  o.index_width = width;
  return o;
}

// Makes interpret() run the header's functions.
inline void register_extern_device_functions() {
  register_extern("ext_leaky_relu", device::ext_leaky_relu);
  register_extern("ext_absdiff", device::ext_absdiff);
  register_extern("ext_in_unit", device::ext_in_unit);
  register_extern("ext_clamp_i8", device::ext_clamp_i8);
}

// Every function of the header on its own types, one thread per element; G gathers X
// through an index an extern function computes (checked at run time, as a gather is).
inline LoweredFunc extern_calls_func(const std::string& name = "extern_calls") {
  Var n("n"), slope("slope", Float(32));
  Buffer X("X", Float(32), {n}), I("I", Int(32), {n}), J("J", Int(32), {n}), D("D", Float(64), {n});
  Buffer Y("Y", Float(32), {n}), A("A", Int(32), {n}), U("U", Bool(), {n}), C("C", Int(8), {n}), G("G", Float(32), {n});
  Stmt body = grid_1d(n, 32, [&](Expr i) {
    Expr mirrored = call_extern(Int(32), "ext_absdiff", {i, n - 1 - i});  // |2i - n + 1| < n
    return seq({store(Y, call_extern(Float(32), "ext_leaky_relu", {load(X, {i}), slope}), {i}),
                store(A, call_extern(Int(32), "ext_absdiff", {load(I, {i}), load(J, {i})}), {i}),
                store(U, call_extern(Bool(), "ext_in_unit", {load(D, {i})}), {i}),
                store(C, call_extern(Int(8), "ext_clamp_i8", {load(I, {i})}), {i}),
                store(G, load(X, {mirrored}), {i})});
  });
  return LoweredFunc{name,
                     {buffer_param(X), buffer_param(I), buffer_param(J), buffer_param(D), buffer_param(Y),
                      buffer_param(A), buffer_param(U), buffer_param(C), buffer_param(G), scalar_param(slope)},
                     body};
}

// Y = leaky_relu(X, 0.25) through lower(): 4-lane vectorized inside each thread, so the
// call is printed once per lane.
inline LoweredFunc extern_vector_func(const std::string& name = "extern_vector") {
  Var n("n");
  Tensor X = placeholder({n}, Float(32), "X");
  Tensor Y = compute(
      {n},
      [&](Expr i) {
        return call_extern(Float(32), "ext_leaky_relu", {X(i), 0.25f});
      },
      "Y");
  Schedule s = create_schedule({Y});
  auto [outer, lanes] = s[Y].split(Y.axis(0), 4);
  auto [bx, tx] = s[Y].split(outer, 32);
  s[Y].bind(bx, thread_axis("blockIdx.x"));
  s[Y].bind(tx, thread_axis("threadIdx.x"));
  s[Y].vectorize(lanes);
  return lower(s, {X, Y}, name);
}

}  // namespace te::cuda_test
