// An independent scalar grid_sample written from PyTorch's semantics (not from te's compute).
// Arrays are dense row-major NCHW / NCDHW; grid (N, Hout, Wout, 2) / (N, Dout, Hout, Wout, 3).
#pragma once
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace gsref {

struct Options {
  std::string mode = "bilinear", padding = "zeros";
  bool align_corners = false;
};

template <typename T>
T unnormalize(T g, int64_t size, bool ac) {
  return ac ? (g + 1) / 2 * T(size - 1) : ((g + 1) * T(size) - 1) / 2;
}

template <typename T>
T clip(T u, int64_t size) {
  return std::min(T(size - 1), std::max(u, T(0)));
}

// PyTorch's reflect_coordinates: counts flips about the two bounds.
template <typename T>
T reflect(T u, int64_t size, bool ac) {
  T twice_low = ac ? T(0) : T(-1);
  T twice_high = ac ? T(2 * (size - 1)) : T(2 * size - 1);
  if (twice_low == twice_high) return T(0);
  T lo = twice_low / 2, span = (twice_high - twice_low) / 2;
  T a = std::fabs(u - lo);
  T extra = std::fmod(a, span);
  int64_t flips = static_cast<int64_t>(std::floor(a / span));
  T r = flips % 2 == 0 ? extra + lo : span - extra + lo;
  return clip(r, size);
}

template <typename T>
T pad(T u, int64_t size, const Options& o) {
  if (o.padding == "border") return clip(u, size);
  if (o.padding == "reflection") return reflect(u, size, o.align_corners);
  return u;
}

template <typename T>
T cubic1(T x, T A) {
  return ((A + 2) * x - (A + 3)) * x * x + 1;
}
template <typename T>
T cubic2(T x, T A) {
  return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
}

// sizes: input spatial (D,H,W) or (H,W); out: output spatial.
template <typename T>
std::vector<T> grid_sample(const std::vector<T>& input, const std::vector<int64_t>& in_shape,
                           const std::vector<T>& grid, const std::vector<int64_t>& grid_shape, const Options& o) {
  const int sd = static_cast<int>(in_shape.size()) - 2;
  const int64_t N = in_shape[0], C = in_shape[1];
  std::vector<int64_t> isz(in_shape.begin() + 2, in_shape.end());
  std::vector<int64_t> osz(grid_shape.begin() + 1, grid_shape.end() - 1);
  int64_t in_pix = 1, out_pix = 1;
  for (int64_t s : isz) in_pix *= s;
  for (int64_t s : osz) out_pix *= s;
  std::vector<T> out(static_cast<size_t>(N * C * out_pix), T(0));
  auto value = [&](int64_t n, int64_t c, const std::vector<int64_t>& p) -> T {
    int64_t off = 0;
    for (int d = 0; d < sd; ++d) {
      if (p[d] < 0 || p[d] >= isz[d]) return T(0);
      off = off * isz[d] + p[d];
    }
    return input[static_cast<size_t>((n * C + c) * in_pix + off)];
  };
  for (int64_t n = 0; n < N; ++n)
    for (int64_t q = 0; q < out_pix; ++q) {
      std::vector<T> u(sd);  // per spatial dim, outer to inner
      for (int d = 0; d < sd; ++d) {
        T g = grid[static_cast<size_t>((n * out_pix + q) * sd + (sd - 1 - d))];
        u[d] = unnormalize(g, isz[d], o.align_corners);
      }
      for (int64_t c = 0; c < C; ++c) {
        T r = 0;
        if (o.mode == "nearest") {
          std::vector<int64_t> p(sd);
          for (int d = 0; d < sd; ++d) p[d] = static_cast<int64_t>(std::nearbyint(pad(u[d], isz[d], o)));
          r = value(n, c, p);
        } else if (o.mode == "bilinear") {
          std::vector<T> v(sd);
          std::vector<int64_t> b(sd);
          for (int d = 0; d < sd; ++d) {
            v[d] = pad(u[d], isz[d], o);
            b[d] = static_cast<int64_t>(std::floor(v[d]));
          }
          for (int corner = 0; corner < (1 << sd); ++corner) {
            T w = 1;
            std::vector<int64_t> p(sd);
            for (int d = 0; d < sd; ++d) {
              bool hi = (corner >> (sd - 1 - d)) & 1;
              p[d] = b[d] + (hi ? 1 : 0);
              T frac = v[d] - T(b[d]);
              w *= hi ? frac : T(b[d] + 1) - v[d];
            }
            r += w * value(n, c, p);
          }
        } else {  // bicubic, 2-D
          const T A = T(-0.75);
          T fy = std::floor(u[0]), fx = std::floor(u[1]);
          T ty = u[0] - fy, tx = u[1] - fx;
          T cy[4] = {cubic2(ty + 1, A), cubic1(ty, A), cubic1(1 - ty, A), cubic2(2 - ty, A)};
          T cxw[4] = {cubic2(tx + 1, A), cubic1(tx, A), cubic1(1 - tx, A), cubic2(2 - tx, A)};
          for (int ky = 0; ky < 4; ++ky) {
            int64_t yi = static_cast<int64_t>(pad(fy - 1 + ky, isz[0], o));
            T row = 0;
            for (int kx = 0; kx < 4; ++kx) {
              int64_t xi = static_cast<int64_t>(pad(fx - 1 + kx, isz[1], o));
              row += cxw[kx] * value(n, c, {yi, xi});
            }
            r += cy[ky] * row;
          }
        }
        out[static_cast<size_t>((n * C + c) * out_pix + q)] = r;
      }
    }
  return out;
}

}  // namespace gsref
