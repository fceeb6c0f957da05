// grid_sample as a TE compute, with PyTorch / ONNX semantics (header-only).
//
//   Tensor out = te::ops::grid_sample(data, grid, {"bilinear", "zeros", false});
//
// 4-D: data (N, C, H, W), grid (N, Hout, Wout, 2), output (N, C, Hout, Wout).
// 5-D: data (N, C, D, H, W), grid (N, Dout, Hout, Wout, 3), output (N, C, Dout, Hout, Wout).
// grid[..., 0] = x indexes W, grid[..., 1] = y indexes H, grid[..., 2] = z indexes D.
// layout "NHWC" ("NDHWC" for 5-D is spelled the same) puts channels last in data and output.
//
// The computation has two stages: `<name>.coords` holds the padded source coordinate of
// every output pixel ((N, axis, spatial...); for bicubic the unpadded one), and the output
// reads it, so a schedule can compute coordinates once per pixel and reuse them across
// channels. Rules (see ../shared SEMANTICS): unnormalize per align_corners; border clamps
// to pixel centres; reflection about (-0.5, S-0.5) or (0, S-1), then clip, and S = 1 with
// align_corners never divides by zero; bilinear uses floor; nearest rounds half to even
// after padding; bicubic (A = -0.75) pads each integer tap, not the coordinate; every load
// is clamped into the image and masked, so none goes out of bounds even with weight 0.
// Non-finite grid values: the float-to-int conversion saturates (NaN -> 0), so taps stay
// in bounds; weights carry the NaN into bilinear/bicubic outputs, nearest gives a pixel
// or 0. float16 data is computed in float32.
#pragma once
#include <algorithm>
#include <string>
#include <vector>

#include "te/schedule.h"
#include "te/tensor.h"

namespace te::ops {

struct GridSampleOptions {
  std::string mode = "bilinear";       // "bilinear" | "nearest" | "bicubic" (4-D only)
  std::string padding_mode = "zeros";  // "zeros" | "border" | "reflection"
  bool align_corners = false;
  std::string layout = "NCHW";         // "NCHW" or "NHWC" for data and output
  std::string name = "grid_sample";    // output name; the coordinate stage is name + ".coords"
};

namespace gs_detail {

[[noreturn]] inline void fail(const std::string& msg) { throw Error("grid_sample: " + msg); }

inline std::string shape_text(const Tensor& t) {
  std::string s = "(";
  for (int i = 0; i < t.ndim(); ++i) {
    if (i) s += ", ";
    const int64_t* v = as_const_int(t.shape()[i]);
    s += v ? std::to_string(*v) : (t.shape()[i].as<VarNode>() ? t.shape()[i].as<VarNode>()->name : "?");
  }
  return s + ")";
}

// Same extent: equal constants, or the same expression node (e.g. one shape Var).
inline bool same_extent(const Expr& a, const Expr& b) {
  const int64_t* x = as_const_int(a);
  const int64_t* y = as_const_int(b);
  if (x && y) return *x == *y;
  return a.same_as(b);
}

// Grid value g in [-1, 1] -> source pixel coordinate.
inline Expr unnormalize(const Expr& g, const Expr& size, bool align_corners) {
  if (align_corners) return (g + 1) * 0.5 * (size - 1);
  return ((g + 1) * size - 1) * 0.5;
}

inline Expr clip(const Expr& u, const Expr& size) { return min(max(u, 0), size - 1); }

// Reflects u about lo and hi = lo + span until it lies between them, then clips.
inline Expr reflect(const Expr& u, const Expr& size, bool align_corners) {
  Expr lo = align_corners ? make_zero(u.dtype()) : make_const(u.dtype(), -0.5);
  Expr span = align_corners ? size - 1 : size;
  Expr period = span * 2;
  Expr a = abs(u - lo);
  Expr safe_period = select(period > 0, period, make_const(u.dtype(), 1.0));
  Expr t = a - floor(a / safe_period) * safe_period;  // a mod 2*span
  Expr folded = lo + min(t, period - t);
  Expr reflected = clip(folded, size);
  // A single pixel with align_corners has lo == hi: every coordinate maps to it.
  return align_corners ? select(span > 0, reflected, make_zero(u.dtype())) : reflected;
}

inline Expr pad(const Expr& u, const Expr& size, const std::string& padding, bool align_corners) {
  if (padding == "border") return clip(u, size);
  if (padding == "reflection") return reflect(u, size, align_corners);
  return u;
}

// Keys cubic convolution with A = -0.75 (PyTorch's upsample coefficients).
inline Expr cubic_near(const Expr& x) {  // |x| <= 1
  const double A = -0.75;
  return ((x * (A + 2) - (A + 3)) * x) * x + 1;
}
inline Expr cubic_far(const Expr& x) {  // 1 < |x| < 2
  const double A = -0.75;
  return ((x * A - 5 * A) * x + 8 * A) * x - 4 * A;
}

struct Context {
  Tensor data, grid, coords;
  GridSampleOptions opts;
  int sdims = 2;                  // spatial dimensions
  bool nhwc = false;
  DataType ct;                    // compute type
  std::vector<Expr> in_sizes;     // spatial input extents, outer to inner (D, H, W)
  std::vector<Expr> in_sizes_f;   // the same, as ct

  // data[n, c, spatial...] (in the data's layout), converted to ct.
  Expr read(const Expr& n, const Expr& c, const std::vector<Expr>& sp) const {
    std::vector<Expr> idx{n};
    if (!nhwc) idx.push_back(c);
    idx.insert(idx.end(), sp.begin(), sp.end());
    if (nhwc) idx.push_back(c);
    return cast(ct, data(idx));
  }
  // A tap: zero outside the image; the load itself is clamped so it never leaves it.
  Expr tap(const Expr& n, const Expr& c, const std::vector<Expr>& sp) const {
    Expr inside;
    std::vector<Expr> clamped;
    for (int d = 0; d < sdims; ++d) {
      Expr ok = sp[d] >= 0 && sp[d] < in_sizes[d];
      inside = inside.defined() ? (inside && ok) : ok;
      clamped.push_back(min(max(sp[d], 0), in_sizes[d] - 1));
    }
    return select(inside, read(n, c, clamped), make_zero(ct));
  }
  // Source coordinate along spatial dimension d (outer to inner) of output pixel out_sp.
  Expr coord(const Expr& n, const std::vector<Expr>& out_sp, int d) const {
    std::vector<Expr> idx{n, sdims - 1 - d};  // axis a counts from the innermost dimension
    idx.insert(idx.end(), out_sp.begin(), out_sp.end());
    return coords(idx);
  }
};

inline Expr to_index(const Expr& f) { return cast(Int(32), f); }

inline Expr bilinear(const Context& cx, const Expr& n, const Expr& c, const std::vector<Expr>& out_sp) {
  std::vector<Expr> base, w1;
  for (int d = 0; d < cx.sdims; ++d) {
    Expr u = cx.coord(n, out_sp, d);
    Expr f = floor(u);
    base.push_back(to_index(f));
    w1.push_back(u - f);
  }
  Expr acc;
  for (int corner = 0; corner < (1 << cx.sdims); ++corner) {
    std::vector<Expr> sp;
    Expr weight;
    for (int d = 0; d < cx.sdims; ++d) {
      bool upper = (corner >> (cx.sdims - 1 - d)) & 1;
      sp.push_back(upper ? base[d] + 1 : base[d]);
      Expr w = upper ? w1[d] : 1 - w1[d];
      weight = weight.defined() ? weight * w : w;
    }
    Expr term = weight * cx.tap(n, c, sp);
    acc = acc.defined() ? acc + term : term;
  }
  return acc;
}

inline Expr nearest(const Context& cx, const Expr& n, const Expr& c, const std::vector<Expr>& out_sp) {
  std::vector<Expr> sp;
  for (int d = 0; d < cx.sdims; ++d) sp.push_back(to_index(nearbyint(cx.coord(n, out_sp, d))));
  return cx.tap(n, c, sp);
}

inline Expr bicubic(const Context& cx, const Expr& n, const Expr& c, const std::vector<Expr>& out_sp) {
  // Dimension 0 is y (H), dimension 1 is x (W).
  Expr uy = cx.coord(n, out_sp, 0), ux = cx.coord(n, out_sp, 1);
  Expr fy = floor(uy), fx = floor(ux);
  Expr ty = uy - fy, tx = ux - fx;
  Expr cy[4] = {cubic_far(ty + 1), cubic_near(ty), cubic_near(1 - ty), cubic_far(2 - ty)};
  Expr cxw[4] = {cubic_far(tx + 1), cubic_near(tx), cubic_near(1 - tx), cubic_far(2 - tx)};
  auto tap_index = [&](const Expr& f, int k, int d) {
    return to_index(pad(f + (k - 1), cx.in_sizes_f[d], cx.opts.padding_mode, cx.opts.align_corners));
  };
  Expr out;
  for (int ky = 0; ky < 4; ++ky) {
    Expr yi = tap_index(fy, ky, 0);
    Expr row;
    for (int kx = 0; kx < 4; ++kx) {
      Expr term = cxw[kx] * cx.tap(n, c, {yi, tap_index(fx, kx, 1)});
      row = row.defined() ? row + term : term;
    }
    Expr term = cy[ky] * row;
    out = out.defined() ? out + term : term;
  }
  return out;
}

inline void validate(const Tensor& data, const Tensor& grid, const GridSampleOptions& o) {
  if (!data.defined() || !grid.defined()) fail("data and grid must be defined tensors");
  if (o.mode != "bilinear" && o.mode != "nearest" && o.mode != "bicubic")
    fail("unknown mode '" + o.mode + "' (expected \"bilinear\", \"nearest\" or \"bicubic\")");
  if (o.padding_mode != "zeros" && o.padding_mode != "border" && o.padding_mode != "reflection")
    fail("unknown padding_mode '" + o.padding_mode + "' (expected \"zeros\", \"border\" or \"reflection\")");
  if (o.layout != "NCHW" && o.layout != "NHWC")
    fail("unknown layout '" + o.layout + "' (expected \"NCHW\" or \"NHWC\")");
  if (data.ndim() != 4 && data.ndim() != 5)
    fail("data must be 4-D (N, C, H, W) or 5-D (N, C, D, H, W), got " + std::to_string(data.ndim()) +
         "-D " + shape_text(data));
  if (grid.ndim() != data.ndim())
    fail("grid must have the same rank as data (" + std::to_string(data.ndim()) + "-D), got " +
         std::to_string(grid.ndim()) + "-D " + shape_text(grid));
  int sdims = data.ndim() - 2;
  const int64_t* last = as_const_int(grid.shape().back());
  if (!last || *last != sdims)
    fail("grid's last dimension must be " + std::to_string(sdims) + " for " + std::to_string(data.ndim()) +
         "-D data, got grid " + shape_text(grid));
  if (!same_extent(data.shape()[0], grid.shape()[0]))
    fail("data and grid must have the same batch size N, got data " + shape_text(data) + " and grid " +
         shape_text(grid));
  if (o.mode == "bicubic" && sdims != 2) fail("bicubic interpolation only supports 4-D input");
  DataType t = data.dtype();
  if (!t.is_float()) fail("data must be float16, float32 or float64, got " + t.to_string());
  if (!grid.dtype().is_float()) fail("grid must be floating point, got " + grid.dtype().to_string());
  if (grid.dtype().bits() != t.bits() && !(t.bits() == 16 && grid.dtype().bits() == 32))
    fail("grid dtype " + grid.dtype().to_string() + " must match data dtype " + t.to_string());
  bool nhwc = o.layout == "NHWC";
  for (int d = 0; d < sdims; ++d) {
    const int64_t* v = as_const_int(data.shape()[(nhwc ? 1 : 2) + d]);
    if (v && *v == 0) fail("every spatial dimension of data must be > 0, got data " + shape_text(data));
  }
}

}  // namespace gs_detail

inline Tensor grid_sample(const Tensor& data, const Tensor& grid, const GridSampleOptions& opts = {}) {
  gs_detail::validate(data, grid, opts);
  gs_detail::Context cx;
  cx.data = data;
  cx.grid = grid;
  cx.opts = opts;
  cx.sdims = data.ndim() - 2;
  cx.nhwc = opts.layout == "NHWC";
  cx.ct = data.dtype().bits() == 16 ? Float(32) : data.dtype();
  for (int d = 0; d < cx.sdims; ++d) {
    cx.in_sizes.push_back(data.shape()[(cx.nhwc ? 1 : 2) + d]);
    cx.in_sizes_f.push_back(cast(cx.ct, cx.in_sizes.back()));
  }
  const bool cubic = opts.mode == "bicubic";
  // Planar (N, axis, spatial...): a vector of neighbouring pixels reads its coordinates
  // with contiguous loads.
  std::vector<Expr> coords_shape{grid.shape()[0], grid.shape().back()};
  coords_shape.insert(coords_shape.end(), grid.shape().begin() + 1, grid.shape().end() - 1);
  cx.coords = compute(
      coords_shape,
      [&](const std::vector<Var>& v) {
        // v = (n, a, spatial...); axis a indexes spatial dimension sdims - 1 - a.
        std::vector<Expr> gi{v[0]};
        gi.insert(gi.end(), v.begin() + 2, v.end());
        gi.push_back(v[1]);
        Expr g = cast(cx.ct, grid(gi));
        Expr result;
        for (int a = cx.sdims - 1; a >= 0; --a) {
          int d = cx.sdims - 1 - a;
          Expr u = gs_detail::unnormalize(g, cx.in_sizes_f[d], opts.align_corners);
          if (!cubic) u = gs_detail::pad(u, cx.in_sizes_f[d], opts.padding_mode, opts.align_corners);
          result = result.defined() ? select(v[1] == a, u, result) : u;
        }
        return result;
      },
      opts.name + ".coords", cx.sdims == 2 ? std::vector<std::string>{"n", "a", "h", "w"}
                                           : std::vector<std::string>{"n", "a", "d", "h", "w"});

  Expr N = data.shape()[0];
  Expr C = cx.nhwc ? data.shape().back() : data.shape()[1];
  std::vector<Expr> out_sp(grid.shape().begin() + 1, grid.shape().end() - 1);
  std::vector<Expr> shape{N};
  std::vector<std::string> names{"n"};
  static const char* kSpatial3[] = {"d", "h", "w"};
  if (!cx.nhwc) { shape.push_back(C); names.push_back("c"); }
  for (int d = 0; d < cx.sdims; ++d) {
    shape.push_back(out_sp[d]);
    names.push_back(kSpatial3[3 - cx.sdims + d]);
  }
  if (cx.nhwc) { shape.push_back(C); names.push_back("c"); }
  return compute(
      shape,
      [&](const std::vector<Var>& v) {
        Expr n = v[0];
        Expr c = cx.nhwc ? Expr(v.back()) : Expr(v[1]);
        std::vector<Expr> sp;
        for (int d = 0; d < cx.sdims; ++d) sp.push_back(v[(cx.nhwc ? 1 : 2) + d]);
        Expr r = opts.mode == "nearest" ? gs_detail::nearest(cx, n, c, sp)
                 : cubic                ? gs_detail::bicubic(cx, n, c, sp)
                                        : gs_detail::bilinear(cx, n, c, sp);
        return cast(data.dtype(), r);
      },
      opts.name, names);
}

namespace gs_detail {

// The coordinate stage grid_sample() made for out.
inline Tensor coords_of(const Tensor& out) {
  for (const Operation& op : out.op()->inputs)
    if (op->name == out.name() + ".coords") return Tensor(op);
  fail("'" + out.name() + "' is not a tensor made by te::ops::grid_sample");
}

// The output's axes by role: batch, channel and spatial (outer to inner).
struct OutputAxes {
  IterVar n, c;
  std::vector<IterVar> spatial;
};
inline OutputAxes output_axes(const Tensor& out) {
  OutputAxes a;
  int nd = out.ndim();
  bool nhwc = out.op()->axis[nd - 1].name() == "c";
  a.n = out.axis(0);
  a.c = nhwc ? out.axis(nd - 1) : out.axis(1);
  for (int d = nhwc ? 1 : 2; d < (nhwc ? nd - 1 : nd); ++d) a.spatial.push_back(out.axis(d));
  return a;
}

}  // namespace gs_detail

// CPU schedule: parallel over output rows (batch and every spatial dimension but the
// innermost, fused), coordinates of a row computed once; NCHW vectorizes along the width
// with the channel loop inside each vector of pixels (its taps and weights are loop
// invariant there), NHWC vectorizes along the contiguous channels.
inline void schedule_grid_sample_cpu(Schedule& s, const Tensor& out, int vector_bytes = 32) {
  Tensor coords = gs_detail::coords_of(out);
  gs_detail::OutputAxes ax = gs_detail::output_axes(out);
  Stage st = s[out];
  bool nhwc = out.op()->axis.back().same_as(ax.c);
  std::vector<IterVar> rows{ax.n};
  rows.insert(rows.end(), ax.spatial.begin(), ax.spatial.end() - 1);
  std::vector<IterVar> order = rows;
  order.push_back(ax.spatial.back());
  order.push_back(ax.c);
  st.reorder(order);
  IterVar row = st.fuse(rows);
  st.parallel(row);
  int lanes = std::max(1, vector_bytes / out.dtype().bytes());
  if (nhwc) {
    // Channels are contiguous: the taps of one pixel are vector loads.
    auto [co, ci] = st.split(ax.c, lanes);
    (void)co;
    st.vectorize(ci);
  } else {
    // A vector of pixels loops over the channels: its taps and weights do not depend on
    // the channel, so they are computed once per vector and reused for every channel.
    auto [wo, wi] = st.split(ax.spatial.back(), lanes);
    st.reorder({wo, ax.c, wi});
    st.vectorize(wi);
  }
  s[coords].compute_at(st, row);
}

// CUDA schedule: one thread per output pixel (batch and spatial dimensions fused, 256
// threads a block) looping over channels, with the pixel's coordinates computed once
// into registers, as PyTorch's and mmcv's kernels do.
inline void schedule_grid_sample_cuda(Schedule& s, const Tensor& out, int threads_per_block = 256) {
  Tensor coords = gs_detail::coords_of(out);
  gs_detail::OutputAxes ax = gs_detail::output_axes(out);
  Stage st = s[out];
  std::vector<IterVar> pixels{ax.n};
  pixels.insert(pixels.end(), ax.spatial.begin(), ax.spatial.end());
  std::vector<IterVar> order = pixels;
  order.push_back(ax.c);
  st.reorder(order);
  IterVar pixel = st.fuse(pixels);
  auto [bx, tx] = st.split(pixel, threads_per_block);
  st.bind(bx, thread_axis("blockIdx.x"));
  st.bind(tx, thread_axis("threadIdx.x"));
  s[coords].compute_at(st, tx);
  s[coords].set_scope("local");
}

}  // namespace te::ops
