/// \file
/// grid_sample's backward: the gradients of data and grid given the output's gradient,
/// as TE computes (header-only; the te library provides te::gradient). Its CPU schedule
/// is in te/ops/grid_sample_backward_cpu.h.
///
///   GridSampleBackwardStages b = grid_sample_backward_stages(data, grid, grad_out, opts);
///   // b.grad_data (data's shape), b.grad_grid (grid's shape)
///
/// Bilinear NCHW / NCDHW is written by hand, as PyTorch's backward kernel is: each output
/// point adds its 2^dims weighted gradients into grad_data (one scatter-add whose corner
/// axis is a loop: `grad_scatter`), and per point the derivative of the output along each
/// coordinate, summed over the channels (`grad_coords`), goes through the coordinate
/// stage's own derivative (te::gradient of `coords`: unnormalize, border clamp and
/// reflection) into grad_grid. Every other mode, padding and layout is te::gradient of
/// grid_sample itself, which is also the hand-written path's test oracle
/// (tests/test_grid_sample_backward.cpp). Gradients of float16/bfloat16 data are
/// accumulated in float32 and returned in the data's type.
#pragma once
#include <string>
#include <vector>

#include "te/autodiff.h"
#include "te/ops/grid_sample.h"
#include "te/schedule.h"

namespace te::ops {

/// The tensors of one grid_sample backward: its inputs, its stages and its two outputs.
struct GridSampleBackwardStages {
  GridSampleStages forward;  ///< the forward's stages (coords, taps, weights) it reads
  Tensor grad_out;           ///< the output's gradient, as given
  Tensor grad_data;          ///< d loss / d data, data's shape and type
  Tensor grad_grid;          ///< d loss / d grid, grid's shape and type
  /// Hand-written path only (undefined otherwise): grad_data's zero-filled base.
  Tensor grad_zeros;
  /// Hand-written path only: the scatter-add over (n, c, spatial..., corner) filling it.
  Tensor grad_scatter;
  /// Hand-written path only: d out / d coordinate, (N, dims, spatial...), summed over channels.
  Tensor grad_coords;
  bool derived = false;  ///< true: te::gradient's adjoints of grid_sample (no hand-written stages)
};

namespace gs_detail {

// Bilinear along dimension d (outer to inner) of corner k: bit sdims - 1 - d selects the
// upper pixel.
inline Expr corner_bit(const Expr& k, int sdims, int d) { return (k >> (sdims - 1 - d)) & 1; }

// Whether t has a stage in s (a schedule of one gradient lacks the other's stages).
inline bool in_schedule(const Schedule& s, const Tensor& t) {
  for (const Stage& st : s.stages())
    if (st.get()->op == t.op()) return true;
  return false;
}

}  // namespace gs_detail

/// grid_sample's backward (see the top of this file): te::Error for what grid_sample()
/// refuses, and for a grad_out that is not of the output's shape and type.
inline GridSampleBackwardStages grid_sample_backward_stages(const Tensor& data, const Tensor& grid,
                                                            const Tensor& grad_out,
                                                            const GridSampleOptions& opts = {}) {
  GridSampleBackwardStages b;
  b.forward = grid_sample_stages(data, grid, opts);
  b.grad_out = grad_out;
  const Tensor& out = b.forward.out;
  bool same = grad_out.defined() && grad_out.dtype() == out.dtype() && grad_out.ndim() == out.ndim();
  for (int d = 0; same && d < out.ndim(); ++d) same = gs_detail::same_extent(grad_out.shape()[d], out.shape()[d]);
  if (!same)
    gs_detail::fail("grad_out must have the output's shape " + gs_detail::shape_text(out) + " and type " +
                    out.dtype().to_string() + ", got " +
                    (grad_out.defined() ? gs_detail::shape_text(grad_out) + " " + grad_out.dtype().to_string()
                                        : std::string("an undefined tensor")));
  if (opts.mode != "bilinear" || opts.layout != "NCHW") {
    std::vector<Tensor> g = gradient(out, {data, grid}, grad_out);
    b.grad_data = g[0];
    b.grad_grid = g[1];
    b.derived = true;
    return b;
  }
  const GridSampleStages& st = b.forward;
  const int sd = data.ndim() - 2;
  const bool paired = st.taps.shape()[1].as<IntImmNode>()->value == sd;
  const DataType ct = data.dtype().bits() == 16 ? Float(32) : data.dtype();  // compute and accumulation type
  std::vector<Expr> in_sizes(data.shape().begin() + 2, data.shape().end());
  std::vector<Expr> out_sp(out.shape().begin() + 2, out.shape().end());
  static const char* kSpatial3[] = {"d", "h", "w"};
  std::vector<std::string> names{"n", "c"};
  for (int d = 0; d < sd; ++d) names.push_back(kSpatial3[3 - sd + d]);

  // grad_data: every output point adds grad_out * weight into each of its corners (a
  // corner outside the image has weight NaN and adds 0 at a clamped position).
  b.grad_zeros = compute(
      data.shape(), [&](const std::vector<Var>&) { return make_zero(ct); }, opts.name + ".grad_zeros", names);
  std::vector<Expr> domain(out.shape().begin(), out.shape().end());
  domain.push_back(1 << sd);
  std::vector<std::string> domain_names = names;
  domain_names.push_back("k");
  b.grad_scatter = scatter(
      b.grad_zeros, domain,
      [&](const std::vector<Var>& v) {
        const Expr n = v[0], c = v[1], k = v.back();
        std::vector<Expr> sp(v.begin() + 2, v.end() - 1), index{n, c};
        for (int d = 0; d < sd; ++d) {
          const Expr upper = gs_detail::corner_bit(k, sd, d);
          std::vector<Expr> ti{n, paired ? Expr(d) : 2 * d + upper};
          ti.insert(ti.end(), sp.begin(), sp.end());
          // As the forward reads: clamped so the position is always inside the image.
          index.push_back(paired ? min(max(st.taps(ti), 0), in_sizes[d] - 2) + upper
                                 : min(max(st.taps(ti), 0), in_sizes[d] - 1));
        }
        std::vector<Expr> wi{n, k}, oi{n, c};
        wi.insert(wi.end(), sp.begin(), sp.end());
        oi.insert(oi.end(), sp.begin(), sp.end());
        const Expr w = st.weights(wi);
        const Expr value = select(w == w, cast(ct, grad_out(oi)) * w, make_zero(ct));
        return ScatterTo{index, value, true};
      },
      opts.name + ".grad_scatter", domain_names);
  b.grad_data = data.dtype() == ct
                    ? b.grad_scatter
                    : compute(
                          data.shape(),
                          [&](const std::vector<Var>& v) {
                            return cast(data.dtype(), b.grad_scatter(std::vector<Expr>(v.begin(), v.end())));
                          },
                          opts.name + ".grad_data", names);

  // grad_coords[n, a, sp]: d out / d u (axis a is spatial dimension sdims - 1 - a) times
  // grad_out, summed over channels. Along d, corner k's factor is 1 - f_d or f_d (its
  // bit), whose derivative is -1 or +1; a corner outside the image reads 0.
  std::vector<Expr> coords_shape{out.shape()[0], sd};
  coords_shape.insert(coords_shape.end(), out_sp.begin(), out_sp.end());
  std::vector<std::string> coords_names{"n", "a"};
  coords_names.insert(coords_names.end(), names.begin() + 2, names.end());
  IterVar ch = reduce_axis({0, data.shape()[1]}, "c");
  b.grad_coords = compute_from_vars(
      coords_shape,
      [&](const std::vector<Var>& v) {
        const Expr n = v[0], a = v[1], c = ch.var();
        std::vector<Expr> sp(v.begin() + 2, v.end());
        std::vector<Expr> f(sd), lo(sd);
        for (int d = 0; d < sd; ++d) {
          std::vector<Expr> ci{n, sd - 1 - d};
          ci.insert(ci.end(), sp.begin(), sp.end());
          const Expr u = st.coords(ci);
          lo[d] = cast(Int(32), floor(u));
          f[d] = u - floor(u);
        }
        // The derivative along each dimension d, then the one axis a asks for.
        std::vector<Expr> along(sd);
        for (int k = 0; k < (1 << sd); ++k) {
          Expr inside;
          std::vector<Expr> idx{n, c};
          for (int d = 0; d < sd; ++d) {
            const int bit = (k >> (sd - 1 - d)) & 1;
            const Expr p = lo[d] + bit;
            const Expr ok = p >= 0 && p < in_sizes[d];
            inside = inside.defined() ? (inside && ok) : ok;
            idx.push_back(min(max(p, 0), in_sizes[d] - 1));
          }
          const Expr value = select(inside, cast(ct, data(idx)), make_zero(ct));
          for (int d = 0; d < sd; ++d) {
            Expr term = ((k >> (sd - 1 - d)) & 1) ? value : make_zero(ct) - value;
            for (int e = 0; e < sd; ++e)
              if (e != d) term = term * (((k >> (sd - 1 - e)) & 1) ? f[e] : 1 - f[e]);
            along[d] = along[d].defined() ? along[d] + term : term;
          }
        }
        Expr chosen = along[0];  // a = sd - 1 is dimension 0
        for (int d = 1; d < sd; ++d) chosen = select(a == sd - 1 - d, along[d], chosen);
        std::vector<Expr> oi{n, c};
        oi.insert(oi.end(), sp.begin(), sp.end());
        return sum(cast(ct, grad_out(oi)) * chosen, {ch});
      },
      opts.name + ".grad_coords", coords_names);
  // Through the coordinates' own derivative (unnormalize, clamp, reflect) to the grid.
  b.grad_grid = gradient(st.coords, {grid}, b.grad_coords)[0];
  return b;
}

/// {d loss / d data, d loss / d grid} for grid_sample(data, grid, opts) given
/// d loss / d output (see grid_sample_backward_stages()).
inline std::vector<Tensor> grid_sample_backward(const Tensor& data, const Tensor& grid, const Tensor& grad_out,
                                                const GridSampleOptions& opts = {}) {
  GridSampleBackwardStages b = grid_sample_backward_stages(data, grid, grad_out, opts);
  return {b.grad_data, b.grad_grid};
}

}  // namespace te::ops
