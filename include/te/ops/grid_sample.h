/// \file
/// grid_sample as a TE compute, with PyTorch / ONNX semantics (header-only): the compute
/// and its validation. Its schedules are in te/ops/grid_sample_cpu.h
/// (schedule_grid_sample_cpu) and te/ops/grid_sample_cuda.h (schedule_grid_sample_cuda).
///
///   Tensor out = te::ops::grid_sample(data, grid, {"bilinear", "zeros", false});
///
/// 4-D: data (N, C, H, W), grid (N, Hout, Wout, 2), output (N, C, Hout, Wout).
/// 5-D: data (N, C, D, H, W), grid (N, Dout, Hout, Wout, 3), output (N, C, Dout, Hout, Wout).
/// grid[..., 0] = x indexes W, grid[..., 1] = y indexes H, grid[..., 2] = z indexes D.
/// layout "NHWC" ("NDHWC" for 5-D is spelled the same) puts channels last in data and output.
///
/// Stages (handles in GridSampleStages, from grid_sample_stages(), or recovered from the
/// output's graph by grid_sample_stages_of()): `coords` (named `<name>.coords`) holds the
/// padded source coordinate of every output pixel ((N, axis, spatial...); for bicubic the
/// unpadded one). Bilinear adds two per-pixel stages read by the output: `taps`
/// (`<name>.taps`, int32, (N, 2 * dims, spatial...)): for each dimension d the indices
/// floor(u) and floor(u) + 1 at 2d and 2d + 1 (clamped where read; when every input extent
/// is a constant >= 2, just floor(u) at d, the output reading the pixel pair p, p + 1 with
/// p = floor(u) clamped into [0, S - 2]), and `weights` (`<name>.weights`, (N, 2^dims,
/// spatial...)): each corner's weight, NaN for a corner outside the image. So a schedule
/// computes all per-pixel work once and reuses it across channels, where per channel only
/// the gathers and multiply-adds remain. Rules (docs/grid_sample.md has them in full):
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
#include <string>
#include <vector>

#include "te/expr.h"
#include "te/tensor.h"

namespace te::ops {

/// The options of grid_sample(), as PyTorch's keyword arguments (docs/grid_sample.md).
struct GridSampleOptions {
  std::string mode = "bilinear";       ///< "bilinear" | "nearest" | "bicubic" (4-D only)
  std::string padding_mode = "zeros";  ///< "zeros" | "border" | "reflection"
  bool align_corners = false;          ///< true: -1 and 1 are the centres of the edge pixels
  std::string layout = "NCHW";         ///< "NCHW" or "NHWC" for data and output
  std::string name = "grid_sample";    ///< output name; the stages are named name + ".coords" etc.
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
  Tensor taps, weights;  // bilinear's per-pixel stages (see the header comment)
  bool paired = false;   // bilinear reads pixel pairs p, p + 1 (see make_bilinear_stages)
  GridSampleOptions opts;
  int sdims = 2;  // spatial dimensions
  bool nhwc = false;
  DataType ct;                   // compute type
  std::vector<Expr> in_sizes;    // spatial input extents, outer to inner (D, H, W)
  std::vector<Expr> in_sizes_f;  // the same, as ct

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
    fail("data must be 4-D (N, C, H, W) or 5-D (N, C, D, H, W), got " + std::to_string(data.ndim()) + "-D " +
         shape_text(data));
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

/// The tensors of one grid_sample: its inputs, its stages and its output. Schedules take
/// them as handles (schedule_grid_sample_cpu / _cuda), never by the stages' names.
struct GridSampleStages {
  Tensor data;                 ///< the input image, as given
  Tensor grid;                 ///< the sampling grid, as given
  Tensor coords;               ///< (N, dims, spatial...): each output pixel's source coordinates
  Tensor taps;                 ///< bilinear only (undefined otherwise): int32 tap indices per pixel
  Tensor weights;              ///< bilinear only (undefined otherwise): corner weights per pixel
  Tensor out;                  ///< the output, what grid_sample() returns
  bool channels_last = false;  ///< layout "NHWC": channels are out's last axis
};

/// grid_sample() with every stage it makes: `grid_sample(d, g, o)` is
/// `grid_sample_stages(d, g, o).out`.
inline GridSampleStages grid_sample_stages(const Tensor& data, const Tensor& grid, const GridSampleOptions& opts = {}) {
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
      opts.name + ".coords",
      cx.sdims == 2 ? std::vector<std::string>{"n", "a", "h", "w"} : std::vector<std::string>{"n", "a", "d", "h", "w"});

  Expr N = data.shape()[0];
  Expr C = cx.nhwc ? data.shape().back() : data.shape()[1];
  std::vector<Expr> out_sp(grid.shape().begin() + 1, grid.shape().end() - 1);
  if (opts.mode == "bilinear") gs_detail::make_bilinear_stages(cx, out_sp, opts.name);
  std::vector<Expr> shape{N};
  std::vector<std::string> names{"n"};
  static const char* kSpatial3[] = {"d", "h", "w"};
  if (!cx.nhwc) {
    shape.push_back(C);
    names.push_back("c");
  }
  for (int d = 0; d < cx.sdims; ++d) {
    shape.push_back(out_sp[d]);
    names.push_back(kSpatial3[3 - cx.sdims + d]);
  }
  if (cx.nhwc) {
    shape.push_back(C);
    names.push_back("c");
  }
  GridSampleStages st;
  st.data = data;
  st.grid = grid;
  st.coords = cx.coords;
  st.taps = cx.taps;
  st.weights = cx.weights;
  st.channels_last = cx.nhwc;
  st.out = compute(
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
  return st;
}

/// PyTorch's grid_sample as a TE compute: samples data (NCHW / NCDHW, or channels last)
/// at the normalized positions of grid; see the top of this file for shapes and rules.
/// te::Error for mismatched shapes or unknown options.
inline Tensor grid_sample(const Tensor& data, const Tensor& grid, const GridSampleOptions& opts = {}) {
  return grid_sample_stages(data, grid, opts).out;
}

namespace gs_detail {

// Whether op is the coordinate stage grid_sample_stages() makes for an output of rank nd:
// a compute reading only the grid, of shape (N, dims, spatial...) made of the grid's own
// extents (the same expressions, not just equal ones).
inline bool is_coords(const Operation& op, size_t nd) {
  if (!op || op->kind != OpKind::Compute || op->is_scatter() || op->inputs.size() != 1 || !op->reduce_axis.empty() ||
      op->num_outputs() != 1 || op->shape.size() != nd || !op->dtype.is_float())
    return false;
  const Operation& g = op->inputs[0];
  if (g->shape.size() != nd) return false;
  const int64_t* dims = as_const_int(g->shape.back());
  if (!dims || *dims != static_cast<int64_t>(nd) - 2) return false;
  if (!op->shape[0].same_as(g->shape[0]) || !op->shape[1].same_as(g->shape.back())) return false;
  for (size_t d = 2; d < nd; ++d)
    if (!op->shape[d].same_as(g->shape[d - 1])) return false;
  return true;
}

}  // namespace gs_detail

/// The stages of the grid_sample whose output is out, found through the graph: the
/// output's inputs are the data and either the coordinate stage (nearest, bicubic) or the
/// taps and weights, which read the coordinates (bilinear). Names play no part, so an
/// output (or an input) may be named anything. te::Error when out is not a
/// grid_sample output.
inline GridSampleStages grid_sample_stages_of(const Tensor& out) {
  auto not_ours = [&]() {
    gs_detail::fail("'" + (out.defined() ? out.name() : std::string("?")) +
                    "' is not a tensor made by te::ops::grid_sample");
  };
  if (!out.defined() || out.op()->kind != OpKind::Compute || out.op()->is_scatter() ||
      (out.ndim() != 4 && out.ndim() != 5))
    not_ours();
  const size_t nd = static_cast<size_t>(out.ndim());
  GridSampleStages st;
  st.out = out;
  std::vector<Operation> others;
  for (const Operation& in : out.op()->inputs) {
    if (gs_detail::is_coords(in, nd)) {
      if (st.coords.defined()) not_ours();
      st.coords = Tensor(in);
    } else if (in->kind == OpKind::Compute && in->inputs.size() == 1 && gs_detail::is_coords(in->inputs[0], nd) &&
               in->shape.size() == nd) {
      Tensor& slot = in->dtype == Int(32) ? st.taps : st.weights;
      if (slot.defined()) not_ours();
      slot = Tensor(in);
    } else {
      others.push_back(in);
    }
  }
  const bool bilinear = st.taps.defined() && st.weights.defined() && !st.coords.defined() &&
                        st.taps.op()->inputs[0] == st.weights.op()->inputs[0];
  if (bilinear) {
    st.coords = Tensor(st.taps.op()->inputs[0]);
  } else if (!st.coords.defined() || st.taps.defined() || st.weights.defined()) {
    not_ours();
  }
  if (others.size() != 1) not_ours();
  st.data = Tensor(others[0]);
  st.grid = Tensor(st.coords.op()->inputs[0]);
  // Channels last: the compute names out's last axis "c" (an axis name grid_sample
  // chooses, not one a user gives).
  st.channels_last = out.op()->axis.back().name() == "c";
  return st;
}

namespace gs_detail {

// The output's axes by role: batch, channel and spatial (outer to inner); shared by the
// CPU and CUDA schedules.
struct OutputAxes {
  IterVar n, c;
  std::vector<IterVar> spatial;
};
inline OutputAxes output_axes(const GridSampleStages& st) {
  OutputAxes a;
  const Tensor& out = st.out;
  int nd = out.ndim();
  bool nhwc = st.channels_last;
  a.n = out.axis(0);
  a.c = nhwc ? out.axis(nd - 1) : out.axis(1);
  for (int d = nhwc ? 1 : 2; d < (nhwc ? nd - 1 : nd); ++d) a.spatial.push_back(out.axis(d));
  return a;
}

// The stages a schedule was given, checked: they must come from grid_sample_stages().
inline void check_stages(const GridSampleStages& st, const char* schedule) {
  if (!st.out.defined() || !st.coords.defined() || !st.data.defined() || st.taps.defined() != st.weights.defined())
    throw Error(std::string(schedule) +
                ": the GridSampleStages are incomplete; pass what "
                "te::ops::grid_sample_stages() or grid_sample_stages_of() returns");
}

}  // namespace gs_detail

}  // namespace te::ops

// Deprecated, kept for one release: this header still includes the schedules, as it did
// when it held them. Include te/ops/grid_sample_cpu.h or te/ops/grid_sample_cuda.h for a
// schedule; define TE_OPS_COMPUTE_ONLY to get the compute alone now.
#ifndef TE_OPS_COMPUTE_ONLY
#include "te/ops/grid_sample_cpu.h"
#include "te/ops/grid_sample_cuda.h"
#endif
