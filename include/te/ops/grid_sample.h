/// \file
/// grid_sample as a TE compute, with PyTorch / ONNX semantics (header-only).
///
///   Tensor out = te::ops::grid_sample(data, grid, {"bilinear", "zeros", false});
///
/// 4-D: data (N, C, H, W), grid (N, Hout, Wout, 2), output (N, C, Hout, Wout).
/// 5-D: data (N, C, D, H, W), grid (N, Dout, Hout, Wout, 3), output (N, C, Dout, Hout, Wout).
/// grid[..., 0] = x indexes W, grid[..., 1] = y indexes H, grid[..., 2] = z indexes D.
/// layout "NHWC" ("NDHWC" for 5-D is spelled the same) puts channels last in data and output.
///
/// Stages: `<name>.coords` holds the padded source coordinate of every output pixel
/// ((N, axis, spatial...); for bicubic the unpadded one). Bilinear adds two per-pixel stages
/// read by the output: `<name>.taps` (int32, (N, 2 * dims, spatial...)): for each dimension
/// d the indices floor(u) and floor(u) + 1 at 2d and 2d + 1 (clamped where read; when every
/// input extent is a constant >= 2, just floor(u) at d, the output reading the pixel pair
/// p, p + 1 with p = floor(u) clamped into [0, S - 2]), and `<name>.weights`
/// ((N, 2^dims, spatial...)): each corner's weight, NaN for a corner outside the image. So a
/// schedule computes all per-pixel work once and reuses it across channels, where per
/// channel only the gathers and multiply-adds remain. Rules (see ../shared SEMANTICS):
/// unnormalize per align_corners; border clamps to pixel centres; reflection about (-0.5,
/// S-0.5) or (0, S-1), then clip, and S = 1 with align_corners never divides by zero;
/// bilinear uses floor; nearest rounds half to even after padding; bicubic (A = -0.75) pads
/// each integer tap, not the coordinate; every load is clamped into the image and masked, so
/// none goes out of bounds even with weight 0, and a tap outside the image adds nothing
/// (not 0 * its clamped value, which would be NaN for an infinite pixel).
/// Non-finite grid values (implementation-defined in PyTorch; te picks CUDA's and mmcv's
/// rule where it can): bilinear reads no tap for a NaN or infinite coordinate, so zeros
/// padding gives 0; border maps NaN to coordinate 0; nearest gives 0 or a pixel (the
/// saturating float-to-int conversion maps NaN to 0); bicubic carries NaN into the output.
/// float16 and bfloat16 data are computed in float32.
#pragma once
#include <algorithm>
#include <limits>
#include <tuple>
#include <string>
#include <vector>

#include "te/schedule.h"
#include "te/tensor.h"

namespace te::ops {

/// The options of grid_sample(), as PyTorch's keyword arguments (docs/grid_sample.md).
struct GridSampleOptions {
  std::string mode = "bilinear";       ///< "bilinear" | "nearest" | "bicubic" (4-D only)
  std::string padding_mode = "zeros";  ///< "zeros" | "border" | "reflection"
  bool align_corners = false;          ///< true: -1 and 1 are the centres of the edge pixels
  std::string layout = "NCHW";         ///< "NCHW" or "NHWC" for data and output
  std::string name = "grid_sample";    ///< output name; the coordinate stage is name + ".coords"
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
  Tensor taps, weights;           // bilinear's per-pixel stages (see the header comment)
  bool paired = false;            // bilinear reads pixel pairs p, p + 1 (see make_bilinear_stages)
  GridSampleOptions opts;
  int sdims = 2;                  // spatial dimensions
  bool nhwc = false;
  DataType ct;                    // compute type
  std::vector<Expr> in_sizes;     // spatial input extents, outer to inner (D, H, W)
  std::vector<Expr> in_sizes_f;   // the same, as ct

  // data[n, c, spatial...] (in the data's layout), converted to ct.
  Expr read(const Expr& n, const Expr& c, const std::vector<Expr>& sp) const {
    // push_back, not insert: GCC 12 -O3 warns falsely (-Warray-bounds) about the insert.
    std::vector<Expr> idx;
    idx.reserve(sp.size() + 2);
    idx.push_back(n);
    if (!nhwc) idx.push_back(c);
    for (const Expr& e : sp) idx.push_back(e);
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

// Bilinear's per-pixel stages, from the coordinates. taps[n, 2d + b, sp...] is floor(u_d) + b
// (the output clamps it into the image); weights[n, k, sp...] is corner k's weight (bit sdims - 1 - d of k
// selects floor(u_d) + 1 along d), NaN when the corner lies outside the image or the
// coordinate is not finite.
inline void make_bilinear_stages(Context& cx, const std::vector<Expr>& out_sp, const std::string& name) {
  const int sd = cx.sdims;
  Expr N = cx.grid.shape()[0];
  std::vector<std::string> names{"n", "k", "d", "h", "w"};
  if (sd == 2) names.erase(names.begin() + 2);
  auto shape = [&](int corners) {
    std::vector<Expr> sh{N, corners};
    sh.insert(sh.end(), out_sp.begin(), out_sp.end());
    return sh;
  };
  auto pixel = [](const std::vector<Var>& v) { return std::vector<Expr>(v.begin() + 2, v.end()); };
  // Paired (every spatial extent a constant >= 2): along each dimension the two pixels
  // read are always p and p + 1 with p = floor(u) clamped into [0, S - 2], and the weights
  // say which of them are taps. All 2^dims loads of a pixel then share one offset (plus
  // constants), so the channel loop keeps one offset per lane instead of one per tap.
  cx.paired = true;
  for (const Expr& s_d : cx.in_sizes) {
    const int64_t* v = as_const_int(s_d);
    cx.paired = cx.paired && v != nullptr && *v >= 2;
  }
  cx.taps = compute(
      shape(cx.paired ? sd : 2 * sd),
      [&](const std::vector<Var>& v) {
        Expr result;
        for (int d = sd - 1; d >= 0; --d)
          for (int b = cx.paired ? 0 : 1; b >= 0; --b) {
            Expr i = to_index(floor(cx.coord(v[0], pixel(v), d))) + b;
            int entry = cx.paired ? d : 2 * d + b;
            result = result.defined() ? select(v[1] == entry, i, result) : i;
          }
        return result;
      },
      name + ".taps", names);
  cx.weights = compute(
      shape(1 << sd),
      [&](const std::vector<Var>& v) {
        Expr nan = make_const(cx.ct, std::numeric_limits<double>::quiet_NaN());
        // Per dimension, the weight of the lower and the upper pixel read (NaN: not a tap).
        std::vector<Expr> lo_w, hi_w;
        for (int d = 0; d < sd; ++d) {
          Expr u = cx.coord(v[0], pixel(v), d);
          Expr f = floor(u);
          Expr i = to_index(f);
          Expr w1 = u - f;
          if (cx.paired) {
            Expr p = min(max(i, 0), cx.in_sizes[d] - 2);
            auto weight_of = [&](const Expr& pixel_index) {
              return select(pixel_index == i, 1 - w1, select(pixel_index == i + 1, w1, nan));
            };
            lo_w.push_back(weight_of(p));
            hi_w.push_back(weight_of(p + 1));
          } else {
            lo_w.push_back(select(i >= 0 && i < cx.in_sizes[d], 1 - w1, nan));
            hi_w.push_back(select(i + 1 >= 0 && i + 1 < cx.in_sizes[d], w1, nan));
          }
        }
        Expr result;
        for (int k = (1 << sd) - 1; k >= 0; --k) {
          // A NaN factor (not a tap, or a non-finite coordinate: u - floor(u) is NaN)
          // makes the corner's weight NaN.
          Expr weight;
          for (int d = 0; d < sd; ++d) {
            Expr w = ((k >> (sd - 1 - d)) & 1) ? hi_w[d] : lo_w[d];
            weight = weight.defined() ? weight * w : w;
          }
          result = result.defined() ? select(v[1] == k, weight, result) : weight;
        }
        return result;
      },
      name + ".weights", names);
}

inline Expr bilinear(const Context& cx, const Expr& n, const Expr& c, const std::vector<Expr>& out_sp) {
  const int sd = cx.sdims;
  Expr acc;
  for (int k = 0; k < (1 << sd); ++k) {
    std::vector<Expr> sp;
    for (int d = 0; d < sd; ++d) {
      bool upper = (k >> (sd - 1 - d)) & 1;
      std::vector<Expr> ti{n, cx.paired ? d : 2 * d + (upper ? 1 : 0)};
      ti.insert(ti.end(), out_sp.begin(), out_sp.end());
      // Clamped where it is used: the load provably stays inside the image, so the
      // backends need no run-time check, and the clamps leave the channel loop.
      if (cx.paired)
        sp.push_back(min(max(cx.taps(ti), 0), cx.in_sizes[d] - 2) + (upper ? 1 : 0));
      else
        sp.push_back(min(max(cx.taps(ti), 0), cx.in_sizes[d] - 1));
    }
    std::vector<Expr> wi{n, k};
    wi.insert(wi.end(), out_sp.begin(), out_sp.end());
    Expr w = cx.weights(wi);
    // w != w: the corner is outside (or the coordinate not finite) and adds nothing.
    Expr term = select(w == w, w * cx.read(n, c, sp), make_zero(cx.ct));
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
  if (!t.is_float()) fail("data must be float16, bfloat16, float32 or float64, got " + t.to_string());
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

/// PyTorch's grid_sample as a TE compute: samples data (NCHW / NCDHW, or channels last)
/// at the normalized positions of grid; see the top of this file for shapes and rules.
/// te::Error for mismatched shapes or unknown options.
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
  if (opts.mode == "bilinear") gs_detail::make_bilinear_stages(cx, out_sp, opts.name);
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

// The stage `<out>.<suffix>` that grid_sample() made for out (searched through the inputs),
// or an undefined Tensor when out has none (taps and weights exist for bilinear only).
inline Tensor find_stage(const Tensor& out, const std::string& suffix) {
  std::vector<Operation> todo{out.op()};
  while (!todo.empty()) {
    Operation op = todo.back();
    todo.pop_back();
    for (const Operation& in : op->inputs) {
      if (in->name == out.name() + suffix) return Tensor(in);
      todo.push_back(in);
    }
  }
  return Tensor();
}

// The coordinate stage grid_sample() made for out.
inline Tensor coords_of(const Tensor& out) {
  Tensor t = find_stage(out, ".coords");
  if (!t.defined()) fail("'" + out.name() + "' is not a tensor made by te::ops::grid_sample");
  return t;
}

// Bytes of one image of grid_sample's input data (all channels); symbolic sizes count
// as large.
inline int64_t image_bytes(const Tensor& out) {
  for (const Operation& op : out.op()->inputs) {
    if (op->name.rfind(out.name() + ".", 0) == 0) continue;  // one of out's own stages
    Tensor data(op);
    int64_t bytes = data.dtype().bytes();
    for (int d = 1; d < data.ndim(); ++d) {
      const int64_t* v = as_const_int(data.shape()[d]);
      if (!v) return std::numeric_limits<int64_t>::max();
      bytes *= *v;
    }
    return bytes;
  }
  fail("'" + out.name() + "' is not a tensor made by te::ops::grid_sample");
}

// Splits the innermost axis of a per-pixel stage into vectors and unrolls its small
// k / a axis (so that the select over it folds away).
inline void vectorize_pixel_stage(Schedule& s, const Tensor& t, int lanes) {
  Stage st = s[t];
  auto [wo, wi] = st.split(t.axis(t.ndim() - 1), lanes, TailStrategy::ShiftInwards);
  (void)wo;
  st.vectorize(wi);
  st.unroll(t.axis(1));
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

/// CPU schedule: vectorized along the output width (NCHW) or the contiguous channels
/// (NHWC), the per-pixel stages (coordinates; bilinear's taps and weights) computed once
/// per pixel and reused by every channel, so that per channel only the loads and
/// multiply-adds remain. Uneven vector splits shift their last vector inwards
/// (TailStrategy::ShiftInwards): a width of 200 in vectors of 16 runs 13 whole vectors
/// rather than 12 and a scalar tail (which cost 20-25 % at 1x256x200x200).
///
/// NCHW loops over a block of channels inside each vector of pixels (the vector's lane
/// offsets are extracted once per block) and picks the loop order by the size of one
/// image's data (all channels):
/// - up to 512 KB (it stays in L2): blocks of `row_block` output rows (0: 16) are the
///   parallel work items; their per-pixel stages are computed first, then each block of
///   `channel_block` channels (0: 4) runs over the rows, so a random grid's taps hit the
///   few planes in L1 instead of all of them (1.3x faster than a row at a time over all
///   32 channels at 4x32x64x64, bench/README.md);
/// - larger: the channels are split into blocks of `channel_block` (0: 64) outside the
///   rows, each (block, row) a work item with its own per-pixel stages: a block's planes
///   stay cached across the image (2.5-3x faster than sweeping all 256 channels per
///   vector at 1x256x200x200 on a random grid; within 10-20 % of it on a smooth one).
inline void schedule_grid_sample_cpu(Schedule& s, const Tensor& out, int vector_bytes = 64,
                                     int channel_block = 0, int row_block = 0) {
  Tensor coords = gs_detail::coords_of(out);
  Tensor taps = gs_detail::find_stage(out, ".taps");
  Tensor weights = gs_detail::find_stage(out, ".weights");
  gs_detail::OutputAxes ax = gs_detail::output_axes(out);
  Stage st = s[out];
  const auto shift = TailStrategy::ShiftInwards;
  bool nhwc = out.op()->axis.back().same_as(ax.c);
  int lanes = std::max(1, vector_bytes / out.dtype().bytes());
  IterVar work;  // the parallel loop; the per-pixel stages are computed inside it
  if (nhwc) {
    // Channels are contiguous: the taps of one pixel are vector loads.
    std::vector<IterVar> rows{ax.n};
    rows.insert(rows.end(), ax.spatial.begin(), ax.spatial.end() - 1);
    work = st.fuse(rows);
    auto [co, ci] = st.split(ax.c, lanes, shift);
    (void)co;
    st.vectorize(ci);
  } else {
    // A vector of pixels loops over a block of channels: its taps and weights do not
    // depend on the channel, so they are loaded once per vector and block.
    const IterVar& w = ax.spatial.back();
    const IterVar& h = ax.spatial[ax.spatial.size() - 2];
    auto [wo, wi] = st.split(w, lanes, shift);
    std::vector<IterVar> outer{ax.n};
    outer.insert(outer.end(), ax.spatial.begin(), ax.spatial.end() - 2);  // 5-D: depth
    if (gs_detail::image_bytes(out) <= (512 << 10)) {
      auto [ho, hi] = st.split(h, row_block > 0 ? row_block : 16);
      auto [co, ci] = st.split(ax.c, channel_block > 0 ? channel_block : 4, shift);
      outer.push_back(ho);
      std::vector<IterVar> order = outer;
      order.insert(order.end(), {co, hi, wo, ci, wi});
      st.reorder(order);
      // One loop over the block's pixel vectors: a loop level less for LLVM's loop
      // strength reduction to rewrite the lane addresses at (-20 % compile time).
      st.fuse(hi, wo);
    } else {
      auto [co, ci] = st.split(ax.c, channel_block > 0 ? channel_block : 64, shift);
      outer.insert(outer.begin() + 1, co);
      outer.push_back(h);
      std::vector<IterVar> order = outer;
      order.insert(order.end(), {wo, ci, wi});
      st.reorder(order);
    }
    work = st.fuse(outer);
    st.vectorize(wi);
  }
  st.parallel(work);
  s[coords].compute_at(st, work);
  if (!taps.defined()) return;
  for (const Tensor& t : {coords, taps, weights}) {
    s[t].compute_at(st, work);
    gs_detail::vectorize_pixel_stage(s, t, std::max(1, vector_bytes / 4));
  }
}

/// CUDA schedule: one thread per output pixel and group of `channels_per_thread` channels
/// (batch, channel groups and spatial dimensions fused, `threads_per_block` threads a
/// block), looping over the group's channels with the pixel's coordinates (and bilinear's
/// taps and weights) computed once into registers. PyTorch's and mmcv's kernels give a
/// thread every channel; for BEV shapes (1 x 256 x 200 x 200: 40000 pixels) that leaves
/// most of a large GPU idle, so by default (channels_per_thread = 0) a constant channel
/// count of 64 or more is split into groups of 32 (8x the threads for 256 channels, each
/// recomputing its pixel's few coordinates); fewer or symbolic channels stay in one thread.
inline void schedule_grid_sample_cuda(Schedule& s, const Tensor& out, int threads_per_block = 256,
                                      int channels_per_thread = 0) {
  if (threads_per_block < 1 || channels_per_thread < 0)
    throw Error("schedule_grid_sample_cuda: threads_per_block must be >= 1 and channels_per_thread >= 0, got " +
                std::to_string(threads_per_block) + " and " + std::to_string(channels_per_thread));
  Tensor coords = gs_detail::coords_of(out);
  gs_detail::OutputAxes ax = gs_detail::output_axes(out);
  Stage st = s[out];
  if (channels_per_thread == 0) {
    const int64_t* channels = as_const_int(ax.c.dom().extent);
    channels_per_thread = channels && *channels >= 64 ? 32 : 0;
  }
  IterVar c_outer, c_inner = ax.c;
  if (channels_per_thread > 0) std::tie(c_outer, c_inner) = st.split(ax.c, channels_per_thread);
  std::vector<IterVar> pixels{ax.n};
  if (c_outer.defined()) pixels.push_back(c_outer);
  pixels.insert(pixels.end(), ax.spatial.begin(), ax.spatial.end());
  std::vector<IterVar> order = pixels;
  order.push_back(c_inner);
  st.reorder(order);
  IterVar pixel = st.fuse(pixels);
  auto [bx, tx] = st.split(pixel, threads_per_block);
  st.bind(bx, thread_axis("blockIdx.x"));
  st.bind(tx, thread_axis("threadIdx.x"));
  s[coords].compute_at(st, tx);
  s[coords].set_scope("local");
  // Bilinear: the pixel's taps and weights in registers too (the corner loops unrolled).
  for (const Tensor& t : {gs_detail::find_stage(out, ".taps"), gs_detail::find_stage(out, ".weights")}) {
    if (!t.defined()) continue;
    s[t].compute_at(st, tx);
    s[t].set_scope("local");
    s[t].unroll(t.axis(1));
  }
}

}  // namespace te::ops
