// 3x3 convolutions as tests write them: NCHW / OIHW unpadded, and NHWC / HWIO padded by 1
// as TVM writes it (the padding a stage of its own).
#pragma once
#include <te/te.h>

#include <cstdint>
#include <vector>

// A tensor's constant shape.
inline std::vector<int64_t> shape_of(const te::Tensor& t) {
  std::vector<int64_t> s;
  for (const te::Expr& e : t.shape()) s.push_back(*te::as_const_int(e));
  return s;
}

struct Conv3x3 {
  te::Tensor x, w, out;
};

// x (N, CI, H, W), w (CO, CI, 3, 3), out (N, CO, H - 2, W - 2); `weights_first` writes the
// product as w * x.
inline Conv3x3 conv3x3_nchw(int N, int CI, int CO, int H, int W, bool weights_first = false) {
  using namespace te;
  Conv3x3 c;
  c.x = placeholder({N, CI, H, W}, Float(32), "x");
  c.w = placeholder({CO, CI, 3, 3}, Float(32), "w");
  IterVar rc = reduce_axis({0, CI}, "rc"), rh = reduce_axis({0, 3}, "rh"), rw = reduce_axis({0, 3}, "rw");
  c.out = compute(
      {N, CO, H - 2, W - 2},
      [&](Expr n, Expr co, Expr h, Expr ww) {
        Expr d = c.x(n, rc, h + rh, ww + rw), g = c.w(co, rc, rh, rw);
        return sum(weights_first ? g * d : d * g, {rc, rh, rw});
      },
      "conv");
  return c;
}

// x (1, H, W, CI), w (3, 3, CI, CO), out (1, H, W, CO).
inline Conv3x3 conv3x3_nhwc_padded(int CI, int CO, int H, int W) {
  using namespace te;
  Conv3x3 c;
  c.x = placeholder({1, H, W, CI}, Float(32), "x");
  c.w = placeholder({3, 3, CI, CO}, Float(32), "w");
  Tensor pad = compute(
      {1, H + 2, W + 2, CI},
      [&](Expr n, Expr y, Expr xx, Expr ci) {
        return if_then_else(y >= 1 && y <= H && xx >= 1 && xx <= W, c.x(n, y - 1, xx - 1, ci), 0.0f);
      },
      "pad");
  IterVar rc = reduce_axis({0, CI}, "rc"), rh = reduce_axis({0, 3}, "rh"), rw = reduce_axis({0, 3}, "rw");
  c.out = compute(
      {1, H, W, CO},
      [&](Expr n, Expr h, Expr ww, Expr co) {
        return sum(pad(n, h + rh, ww + rw, rc) * c.w(rh, rw, rc, co), {rh, rw, rc});
      },
      "conv");
  return c;
}
