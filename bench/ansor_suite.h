// The single-operator benchmark of the Ansor paper (OSDI'20, figure 6), batch 1, written
// as TE the way TVM's python/tvm/meta_schedule/testing/te_workload.py writes it (NHWC /
// NLC / NDHWC activations, (K..., CI, CO) weights, padding as a stage of its own): C1D,
// C2D, C3D, GMM, GRP, DIL, DEP, T2D, CAP, NRM; the convolutions again in PyTorch's
// NCHW / OIHW layout; a small (32 channels, 28x28) and a deep (256 channels, 14x14) 3x3
// convolution in both. bench/bench_auto_schedule.cpp runs them as the "auto/ansor_*"
// groups (te default, rules, searched, PyTorch in the same run). `shrink` > 1 divides
// the spatial extents and channel counts (for tests: tests/test_auto_schedule_ansor_cuda.cpp
// runs the suite on the CUDA emulation).
#pragma once
#include <te/te.h>

#include <algorithm>
#include <string>
#include <vector>

#include "auto_schedule_suite.h"

namespace te_bench {

namespace ansor_detail {

using namespace te;

// A kernel of the suite: its inputs, then out; `flops` per call; inputs in [-1, 1);
// `constants`: the weights, which te's auto-scheduled rows may take laid out once.
inline SuiteKernel flop_kernel(const std::string& name, std::vector<Tensor> args, const Tensor& out, double flops,
                               std::vector<Tensor> constants = {}) {
  SuiteKernel k;
  k.constants = std::move(constants);
  k.name = name;
  k.args = std::move(args);
  k.args.push_back(out);
  k.output = out;
  k.work = flops * 1e-9;
  k.unit = "GFLOP/s";
  k.default_iterations = 1;
  k.ranges = std::vector<std::pair<float, float>>(k.args.size() - 1, {-1.0f, 1.0f});
  return k;
}

// x zero-padded by `before` on each of the spatial axes listed (the others unpadded).
inline Tensor pad_spatial(const Tensor& x, const std::vector<int>& spatial_axes, int before, int after) {
  std::vector<Expr> shape = x.shape();
  for (int a : spatial_axes) shape[a] = shape[a] + before + after;
  return compute(
      shape,
      [&](const std::vector<Var>& v) {
        std::vector<Expr> idx(v.begin(), v.end());
        Expr inside = const_true();
        for (int a : spatial_axes) {
          inside = inside && v[a] >= before && v[a] < x.shape()[a] + before;
          idx[a] = v[a] - before;
        }
        return if_then_else(inside, x(idx), make_const(x.dtype(), 0.0));
      },
      "pad");
}

// v / shrink, at least `at_least`: the suite's extents scaled down for tests.
inline int scaled(int v, int shrink, int at_least = 1) { return std::max(at_least, v / shrink); }

inline int out_extent(int in, int k, int stride, int pad, int dilation = 1) {
  return (in + 2 * pad - dilation * (k - 1) - 1) / stride + 1;
}

}  // namespace ansor_detail

// C1D: conv1d, NLC, L 256, 64 -> 128 channels, kernel 3, stride 2, padding 1.
inline SuiteKernel ansor_c1d(int shrink = 1) {
  using namespace te;
  using namespace ansor_detail;
  const int L = scaled(256, shrink, 8), CI = scaled(64, shrink), CO = scaled(128, shrink), K = 3, S = 2, P = 1,
            OL = out_extent(L, K, S, P);
  Tensor x = placeholder({1, L, CI}, Float(32), "x"), w = placeholder({K, CI, CO}, Float(32), "w");
  Tensor pad = pad_spatial(x, {1}, P, P);
  IterVar rl = reduce_axis({0, K}, "rl"), rc = reduce_axis({0, CI}, "rc");
  Tensor out = compute(
      {1, OL, CO},
      [&](Expr n, Expr l, Expr co) {
        return sum(pad(n, l * S + rl, rc) * w(rl, rc, co), {rl, rc});
      },
      "c1d");
  return flop_kernel("ansor_c1d", {x, w}, out, 2.0 * OL * CO * K * CI, {w});
}

// C2D (NHWC) and DIL (dilation 2): 224x224, 3 -> 64 channels, kernel 7, stride 2, padding 3.
inline SuiteKernel ansor_c2d(bool nchw, int dilation = 1, int shrink = 1) {
  using namespace te;
  using namespace ansor_detail;
  const int H = scaled(224, shrink, 16), CI = 3, CO = scaled(64, shrink), K = 7, S = 2, P = 3, D = dilation,
            OH = out_extent(H, K, S, P, D);
  IterVar rh = reduce_axis({0, K}, "rh"), rw = reduce_axis({0, K}, "rw"), rc = reduce_axis({0, CI}, "rc");
  const std::string name = std::string(D == 1 ? "ansor_c2d" : "ansor_dil") + (nchw ? "_nchw" : "");
  const double flops = 2.0 * OH * OH * CO * K * K * CI;
  if (nchw) {
    Tensor x = placeholder({1, CI, H, H}, Float(32), "x"), w = placeholder({CO, CI, K, K}, Float(32), "w");
    Tensor pad = pad_spatial(x, {2, 3}, P, P);
    Tensor out = compute(
        {1, CO, OH, OH},
        [&](Expr n, Expr co, Expr h, Expr ww) {
          return sum(pad(n, rc, h * S + rh * D, ww * S + rw * D) * w(co, rc, rh, rw), {rc, rh, rw});
        },
        name);
    return flop_kernel(name, {x, w}, out, flops, {w});
  }
  Tensor x = placeholder({1, H, H, CI}, Float(32), "x"), w = placeholder({K, K, CI, CO}, Float(32), "w");
  Tensor pad = pad_spatial(x, {1, 2}, P, P);
  Tensor out = compute(
      {1, OH, OH, CO},
      [&](Expr n, Expr h, Expr ww, Expr co) {
        return sum(pad(n, h * S + rh * D, ww * S + rw * D, rc) * w(rh, rw, rc, co), {rh, rw, rc});
      },
      name);
  return flop_kernel(name, {x, w}, out, flops, {w});
}

// The small convolution beside the suite's: 3x3, no padding, 32 -> 32 channels at
// 28x28 (0.09x PyTorch in NCHW when ResNet's 56x56 x 64 was at 1.08x).
inline SuiteKernel ansor_c2d_small(bool nchw, int shrink = 1) {
  using namespace te;
  using namespace ansor_detail;
  const int H = scaled(28, shrink, 6), C = scaled(32, shrink), K = 3, OH = H - K + 1;
  IterVar rh = reduce_axis({0, K}, "rh"), rw = reduce_axis({0, K}, "rw"), rc = reduce_axis({0, C}, "rc");
  const std::string name = nchw ? "ansor_c2d_small_nchw" : "ansor_c2d_small";
  const double flops = 2.0 * OH * OH * C * K * K * C;
  if (nchw) {
    Tensor x = placeholder({1, C, H, H}, Float(32), "x"), w = placeholder({C, C, K, K}, Float(32), "w");
    Tensor out = compute(
        {1, C, OH, OH},
        [&](Expr n, Expr co, Expr h, Expr ww) {
          return sum(x(n, rc, h + rh, ww + rw) * w(co, rc, rh, rw), {rc, rh, rw});
        },
        name);
    return flop_kernel(name, {x, w}, out, flops, {w});
  }
  Tensor x = placeholder({1, H, H, C}, Float(32), "x"), w = placeholder({K, K, C, C}, Float(32), "w");
  Tensor out = compute(
      {1, OH, OH, C},
      [&](Expr n, Expr h, Expr ww, Expr co) {
        return sum(x(n, h + rh, ww + rw, rc) * w(rh, rw, rc, co), {rh, rw, rc});
      },
      name);
  return flop_kernel(name, {x, w}, out, flops, {w});
}

// A ResNet stage-4 convolution beside the suite's: 3x3, padding 1, 256 -> 256 channels at
// 14x14: 2.4 MB of weights, more than a core's L2, against 200 KB of input.
inline SuiteKernel ansor_c2d_deep(bool nchw, int shrink = 1) {
  using namespace te;
  using namespace ansor_detail;
  const int H = scaled(14, shrink, 6), C = scaled(256, shrink, 8), K = 3, P = 1, OH = out_extent(H, K, 1, P);
  IterVar rh = reduce_axis({0, K}, "rh"), rw = reduce_axis({0, K}, "rw"), rc = reduce_axis({0, C}, "rc");
  const std::string name = nchw ? "ansor_c2d_deep_nchw" : "ansor_c2d_deep";
  const double flops = 2.0 * OH * OH * C * K * K * C;
  if (nchw) {
    Tensor x = placeholder({1, C, H, H}, Float(32), "x"), w = placeholder({C, C, K, K}, Float(32), "w");
    Tensor pad = pad_spatial(x, {2, 3}, P, P);
    Tensor out = compute(
        {1, C, OH, OH},
        [&](Expr n, Expr co, Expr h, Expr ww) {
          return sum(pad(n, rc, h + rh, ww + rw) * w(co, rc, rh, rw), {rc, rh, rw});
        },
        name);
    return flop_kernel(name, {x, w}, out, flops, {w});
  }
  Tensor x = placeholder({1, H, H, C}, Float(32), "x"), w = placeholder({K, K, C, C}, Float(32), "w");
  Tensor pad = pad_spatial(x, {1, 2}, P, P);
  Tensor out = compute(
      {1, OH, OH, C},
      [&](Expr n, Expr h, Expr ww, Expr co) {
        return sum(pad(n, h + rh, ww + rw, rc) * w(rh, rw, rc, co), {rh, rw, rc});
      },
      name);
  return flop_kernel(name, {x, w}, out, flops, {w});
}

// C3D: conv3d, NDHWC, 16x224x224, 3 -> 64 channels, kernel 7, stride 2, padding 3.
inline SuiteKernel ansor_c3d(int shrink = 1) {
  using namespace te;
  using namespace ansor_detail;
  const int D = scaled(16, shrink, 2), H = scaled(224, shrink, 16), CI = 3, CO = scaled(64, shrink), K = 7, S = 2,
            P = 3;
  const int OD = out_extent(D, K, S, P), OH = out_extent(H, K, S, P);
  Tensor x = placeholder({1, D, H, H, CI}, Float(32), "x"), w = placeholder({K, K, K, CI, CO}, Float(32), "w");
  Tensor pad = pad_spatial(x, {1, 2, 3}, P, P);
  IterVar rd = reduce_axis({0, K}, "rd"), rh = reduce_axis({0, K}, "rh"), rw = reduce_axis({0, K}, "rw"),
          rc = reduce_axis({0, CI}, "rc");
  Tensor out = compute(
      {1, OD, OH, OH, CO},
      [&](const std::vector<Var>& v) {
        return sum(pad(v[0], v[1] * S + rd, v[2] * S + rh, v[3] * S + rw, rc) * w(rd, rh, rw, rc, v[4]),
                   {rd, rh, rw, rc});
      },
      "ansor_c3d");
  return flop_kernel("ansor_c3d", {x, w}, out, 2.0 * OD * OH * OH * CO * K * K * K * CI, {w});
}

// GMM: batch matmul 1 x 128 x 128 x 128.
inline SuiteKernel ansor_gmm(int shrink = 1) {
  const int n = ansor_detail::scaled(128, shrink);
  SuiteKernel k = suite_bmm(1, n, n, n);
  k.name = "ansor_gmm";
  return k;
}

// GRP: grouped conv, 56x56, 64 -> 128 channels in 4 groups, kernel 3, stride 2, padding 1.
inline SuiteKernel ansor_grp(bool nchw, int shrink = 1) {
  using namespace te;
  using namespace ansor_detail;
  const int H = scaled(56, shrink, 6), CI = scaled(64, shrink, 4), CO = scaled(128, shrink, 4), G = 4, K = 3, S = 2,
            P = 1, OH = out_extent(H, K, S, P);
  const int gi = CI / G, go = CO / G;
  IterVar rh = reduce_axis({0, K}, "rh"), rw = reduce_axis({0, K}, "rw"), rc = reduce_axis({0, gi}, "rc");
  const std::string name = nchw ? "ansor_grp_nchw" : "ansor_grp";
  const double flops = 2.0 * OH * OH * CO * K * K * gi;
  if (nchw) {
    Tensor x = placeholder({1, CI, H, H}, Float(32), "x"), w = placeholder({CO, gi, K, K}, Float(32), "w");
    Tensor pad = pad_spatial(x, {2, 3}, P, P);
    Tensor out = compute(
        {1, CO, OH, OH},
        [&](Expr n, Expr co, Expr h, Expr ww) {
          return sum(pad(n, co / go * gi + rc, h * S + rh, ww * S + rw) * w(co, rc, rh, rw), {rc, rh, rw});
        },
        name);
    return flop_kernel(name, {x, w}, out, flops, {w});
  }
  Tensor x = placeholder({1, H, H, CI}, Float(32), "x"), w = placeholder({K, K, gi, CO}, Float(32), "w");
  Tensor pad = pad_spatial(x, {1, 2}, P, P);
  Tensor out = compute(
      {1, OH, OH, CO},
      [&](Expr n, Expr h, Expr ww, Expr co) {
        return sum(pad(n, h * S + rh, ww * S + rw, co / go * gi + rc) * w(rh, rw, rc, co), {rh, rw, rc});
      },
      name);
  return flop_kernel(name, {x, w}, out, flops, {w});
}

// DEP: depthwise conv, 112x112, 32 channels, kernel 3, stride 1, padding 1.
inline SuiteKernel ansor_dep(bool nchw, int shrink = 1) {
  using namespace te;
  using namespace ansor_detail;
  const int H = scaled(112, shrink, 6), C = scaled(32, shrink), K = 3, P = 1;
  IterVar rh = reduce_axis({0, K}, "rh"), rw = reduce_axis({0, K}, "rw");
  const std::string name = nchw ? "ansor_dep_nchw" : "ansor_dep";
  const double flops = 2.0 * H * H * C * K * K;
  if (nchw) {
    Tensor x = placeholder({1, C, H, H}, Float(32), "x"), w = placeholder({C, 1, K, K}, Float(32), "w");
    Tensor pad = pad_spatial(x, {2, 3}, P, P);
    Tensor out = compute(
        {1, C, H, H},
        [&](Expr n, Expr c, Expr h, Expr ww) {
          return sum(pad(n, c, h + rh, ww + rw) * w(c, 0, rh, rw), {rh, rw});
        },
        name);
    return flop_kernel(name, {x, w}, out, flops, {w});
  }
  Tensor x = placeholder({1, H, H, C}, Float(32), "x"), w = placeholder({K, K, C, 1}, Float(32), "w");
  Tensor pad = pad_spatial(x, {1, 2}, P, P);
  Tensor out = compute(
      {1, H, H, C},
      [&](Expr n, Expr h, Expr ww, Expr c) {
        return sum(pad(n, h + rh, ww + rw, c) * w(rh, rw, c, 0), {rh, rw});
      },
      name);
  return flop_kernel(name, {x, w}, out, flops, {w});
}

// T2D: transposed conv, 4x4, 512 -> 256 channels, kernel 4, stride 2, padding 1 (output
// 8x8), as TVM writes it: the input with stride - 1 zeros between its pixels and
// kernel - 1 - padding around them, convolved with the flipped kernel.
inline SuiteKernel ansor_t2d(bool nchw, int shrink = 1) {
  using namespace te;
  using ansor_detail::scaled;
  const int H = scaled(4, shrink, 3), CI = scaled(512, shrink), CO = scaled(256, shrink), K = 4, S = 2, P = 1;
  const int B = K - 1 - P, DH = (H - 1) * S + 1 + 2 * B, OH = DH - K + 1;
  IterVar rh = reduce_axis({0, K}, "rh"), rw = reduce_axis({0, K}, "rw"), rc = reduce_axis({0, CI}, "rc");
  auto dilated_at = [&](Expr y) { return y >= B && y < B + (H - 1) * S + 1 && truncmod(y - B, S) == 0; };
  const std::string name = nchw ? "ansor_t2d_nchw" : "ansor_t2d";
  const double flops = 2.0 * OH * OH * CO * K * K * CI;  // as written: zeros included
  if (nchw) {
    Tensor x = placeholder({1, CI, H, H}, Float(32), "x"), w = placeholder({CI, CO, K, K}, Float(32), "w");
    Tensor d = compute(
        {1, CI, DH, DH},
        [&](Expr n, Expr c, Expr y, Expr xx) {
          return if_then_else(dilated_at(y) && dilated_at(xx), x(n, c, truncdiv(y - B, S), truncdiv(xx - B, S)), 0.0f);
        },
        "dilated");
    Tensor out = compute(
        {1, CO, OH, OH},
        [&](Expr n, Expr co, Expr h, Expr ww) {
          return sum(d(n, rc, h + rh, ww + rw) * w(rc, co, K - 1 - rh, K - 1 - rw), {rc, rh, rw});
        },
        name);
    return ansor_detail::flop_kernel(name, {x, w}, out, flops, {w});
  }
  Tensor x = placeholder({1, H, H, CI}, Float(32), "x"), w = placeholder({K, K, CI, CO}, Float(32), "w");
  Tensor d = compute(
      {1, DH, DH, CI},
      [&](Expr n, Expr y, Expr xx, Expr c) {
        return if_then_else(dilated_at(y) && dilated_at(xx), x(n, truncdiv(y - B, S), truncdiv(xx - B, S), c), 0.0f);
      },
      "dilated");
  Tensor out = compute(
      {1, OH, OH, CO},
      [&](Expr n, Expr h, Expr ww, Expr co) {
        return sum(d(n, h + rh, ww + rw, rc) * w(K - 1 - rh, K - 1 - rw, rc, co), {rh, rw, rc});
      },
      name);
  return ansor_detail::flop_kernel(name, {x, w}, out, flops, {w});
}

// CAP: capsule conv, 16x16, 32 -> 32 channels of 4x4 capsules, kernel 3, stride 2,
// padding 1: out[n, h, w, i, j, co] = sum x[n, 2h + rh, 2w + rw, i, k, c] w[rh, rw, k, j, c, co].
inline SuiteKernel ansor_cap(int shrink = 1) {
  using namespace te;
  using namespace ansor_detail;
  const int H = scaled(16, shrink, 4), CI = scaled(32, shrink), CO = scaled(32, shrink), CAP = 4, K = 3, S = 2, P = 1,
            OH = out_extent(H, K, S, P);
  Tensor x = placeholder({1, H, H, CAP, CAP, CI}, Float(32), "x");
  Tensor w = placeholder({K, K, CAP, CAP, CI, CO}, Float(32), "w");
  Tensor pad = pad_spatial(x, {1, 2}, P, P);
  IterVar rh = reduce_axis({0, K}, "rh"), rw = reduce_axis({0, K}, "rw"), rk = reduce_axis({0, CAP}, "rk"),
          rc = reduce_axis({0, CI}, "rc");
  Tensor out = compute(
      {1, OH, OH, CAP, CAP, CO},
      [&](const std::vector<Var>& v) {
        return sum(pad(v[0], v[1] * S + rh, v[2] * S + rw, v[3], rk, rc) * w(rh, rw, rk, v[4], rc, v[5]),
                   {rh, rw, rk, rc});
      },
      "ansor_cap");
  return flop_kernel("ansor_cap", {x, w}, out, 2.0 * OH * OH * CAP * CAP * CO * K * K * CAP * CI, {w});
}

// NRM: the 2-norm of a 4096 x 1024 matrix (4M squares in one sum).
inline SuiteKernel ansor_nrm(int shrink = 1) {
  using namespace te;
  const int M = ansor_detail::scaled(4096, shrink), N = ansor_detail::scaled(1024, shrink);
  Tensor a = placeholder({1, M, N}, Float(32), "a");
  IterVar i = reduce_axis({0, M}, "i"), j = reduce_axis({0, N}, "j");
  Tensor s = compute(
      {1},
      [&](Expr b) {
        return sum(a(b, i, j) * a(b, i, j), {i, j});
      },
      "sum_squares");
  Tensor out = compute(
      {1}, [&](Expr b) { return sqrt(s(b)); }, "ansor_nrm");
  return ansor_detail::flop_kernel("ansor_nrm", {a}, out, 2.0 * M * N);
}

// The suite: the ten in TVM's layouts, the convolutions in PyTorch's NCHW, then a small
// and a deep 3x3 convolution in both layouts.
inline std::vector<SuiteKernel> ansor_suite(int shrink = 1) {
  const int s = shrink;
  return {ansor_c1d(s),
          ansor_c2d(false, 1, s),
          ansor_c3d(s),
          ansor_gmm(s),
          ansor_grp(false, s),
          ansor_c2d(false, 2, s),
          ansor_dep(false, s),
          ansor_t2d(false, s),
          ansor_cap(s),
          ansor_nrm(s),
          ansor_c2d(true, 1, s),
          ansor_grp(true, s),
          ansor_c2d(true, 2, s),
          ansor_dep(true, s),
          ansor_t2d(true, s),
          ansor_c2d_small(false, s),
          ansor_c2d_small(true, s),
          ansor_c2d_deep(false, s),
          ansor_c2d_deep(true, s)};
}

}  // namespace te_bench
