// Schedule::winograd_1d: one window of a convolution computed by Winograd's minimal
// filtering F(m, r) in one dimension, whatever its stride and dilation. A strided window
// reads the input by phases (stride 2: the even and the odd columns), each phase a
// stride-1 window of its own taps (a 7-tap stride-2 window: 4 taps on the even columns,
// 3 on the odd), so m outputs cost the sum over phases of m + r_p - 1 multiplications
// per product of the other reduction axes where the direct sum does m * r (7 taps,
// stride 2, m = 4: 13 against 28). The other windows and the channels stay a sum in the
// transformed domain: few input channels (an image's 3) still pay, where the 2-D
// F(2x2, 3x3) needs many to hide its output transform.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <optional>

#include "expr/analysis.h"
#include "schedule/graph_queries.h"
#include "schedule/messages.h"
#include "schedule/minimal_filter.h"
#include "schedule/operation_builders.h"
#include "schedule/stage_lookup.h"
#include "schedule/winograd.h"
#include "te/schedule.h"

namespace te {

using sched::quote;

namespace {

using sched::as_var;
using sched::axis_of;
using sched::MinimalFilter;
using sched::Winograd1dPlan;

// The dimensions of r whose index uses v.
std::vector<int> dims_using(const TensorReadNode& r, const Var& v) {
  std::vector<int> out;
  for (size_t d = 0; d < r.indices.size(); ++d)
    if (uses_var(r.indices[d], v)) out.push_back(static_cast<int>(d));
  return out;
}

// Why (input, weights) is not the pattern for the window k; nullopt and p filled when it is.
std::optional<std::string> match(const OperationNode& op, const IterVar& k, const TensorReadNode* input,
                                 const TensorReadNode* weights, Winograd1dPlan& p) {
  const std::vector<int> in_dims = dims_using(*input, k.var()), w_dims = dims_using(*weights, k.var());
  if (in_dims.size() != 1)
    return fmt::format("its input {} reads the window {} in {} dimensions; a window reads one", quote(input->op->name),
                       quote(k.name()), in_dims.size());
  const int dim = in_dims[0];
  const Expr& e = input->indices[static_cast<size_t>(dim)];
  // stride * x + dilation * k + offset
  const std::optional<LinearIn> in_tap = linear_in(e, k.var());
  const IterVar* x = nullptr;
  int axes_used = 0;
  for (const IterVar& a : op.axis)
    if (in_tap && uses_var(in_tap->rest, a.var())) x = &a, ++axes_used;
  const std::optional<LinearIn> in_axis = axes_used == 1 ? linear_in(in_tap->rest, x->var()) : std::nullopt;
  const int64_t* offset = in_axis ? as_const_int(in_axis->rest) : nullptr;
  if (!in_tap || in_tap->coef < 1 || !in_axis || in_axis->coef < 1 || !offset)
    return fmt::format("its input {} is read at {} in dimension {}, not at stride * axis + dilation * {} + constant",
                       quote(input->op->name), to_string(e), dim, k.name());
  if (*offset < 0)
    return fmt::format("its input {} is read at {} in dimension {}, before its start; pad it with a stage",
                       quote(input->op->name), to_string(e), dim);
  for (size_t d = 0; d < input->indices.size(); ++d)
    if (static_cast<int>(d) != dim && uses_var(input->indices[d], x->var()))
      return fmt::format("its input {} reads the axis {} in dimension {} too", quote(input->op->name), quote(x->name()),
                         d);
  if (w_dims.size() != 1 || as_var(weights->indices[static_cast<size_t>(w_dims[0])]) != k.var().get())
    return fmt::format("its weights {} are not read at the window {} itself in one dimension", quote(weights->op->name),
                       quote(k.name()));
  if (!dims_using(*weights, x->var()).empty())
    return fmt::format("its weights {} read the axis {}", quote(weights->op->name), quote(x->name()));
  p.input = input;
  p.weights = weights;
  p.input_dim = dim;
  p.weight_dim = w_dims[0];
  p.axis = axis_of(op, x->var().get());
  p.stride = in_axis->coef;
  p.dilation = in_tap->coef;
  p.offset = *offset;
  return std::nullopt;
}

// The linear combination sum_j coef[j] * at(j), zero terms left out.
Expr combination(const std::vector<double>& coef, const std::function<Expr(int)>& at, DataType t) {
  Expr e;
  for (size_t j = 0; j < coef.size(); ++j) {
    if (coef[j] == 0) continue;
    Expr term = at(static_cast<int>(j));
    if (coef[j] == -1) {
      e = e.defined() ? e - term : make_zero(t) - term;
      continue;
    }
    if (coef[j] != 1) term = term * make_const(t, coef[j]);
    e = e.defined() ? e + term : term;
  }
  return e.defined() ? e : make_zero(t);
}

// row(k) for k in [0, n), chosen by the value of the expression k.
Expr by_index(const Expr& k, int n, const std::function<Expr(int)>& row) {
  Expr e = row(n - 1);
  for (int i = n - 2; i >= 0; --i) e = select(k == make_const(k.dtype(), i), row(i), e);
  return e;
}

// values[k] at k: selects of the values that differ from the most common one, which is
// the last else (a column of the input transform: mostly zeros). Vectorized along k, a
// constant vector.
Expr table(const Expr& k, const std::vector<double>& values, DataType t) {
  double common = values.back();
  size_t most = 0;
  for (double v : values) {
    const auto n = static_cast<size_t>(std::count(values.begin(), values.end(), v));
    if (n > most) most = n, common = v;
  }
  Expr e = make_const(t, common);
  for (size_t i = values.size(); i-- > 0;)
    if (values[i] != common)
      e = select(k == make_const(k.dtype(), static_cast<int64_t>(i)), make_const(t, values[i]), e);
  return e;
}

}  // namespace

namespace sched {

bool reads_output_channel(const Winograd1dPlan& plan, const OperationNode& op, size_t k) {
  const VarNode* var = as_var(plan.weights->indices[k]);
  if (!var || axis_of(op, var) < 0) return false;
  for (const Expr& i : plan.input->indices)
    if (uses_var(i, var)) return false;
  return true;
}

Winograd1dPlan plan_winograd_1d(const ScheduleNode& s, const StageNode& st, const IterVar& window,
                                int64_t outputs_per_tile) {
  Winograd1dPlan plan;
  const OperationNode& op = *st.op;
  const std::string who = quote(op.name);
  auto refuse = [&](std::string why) {
    plan.refusal = std::move(why);
    return plan;
  };
  if (std::string why = unrewritable_stage(s, st); !why.empty()) return refuse(why);
  const ReduceNode* red = nullptr;
  const TensorReadNode *a = nullptr, *b = nullptr;
  if (std::string why = sum_of_two_reads(op, red, a, b); !why.empty())
    return refuse(fmt::format("stage {} is not a convolution: {}", who, why));
  const IterVar* k = nullptr;
  for (const IterVar& r : red->axis)
    if (window.defined() && r.var().get() == window.var().get()) k = &r;
  if (!k)
    return refuse(fmt::format("{} is not a reduction axis of stage {}",
                              window.defined() ? quote(window.name()) : "an undefined axis", who));
  if (outputs_per_tile < 2)
    return refuse(fmt::format("outputs_per_tile is {}; a tile has 2 or more outputs", outputs_per_tile));
  std::optional<std::string> why = match(op, *k, a, b, plan);
  if (why && !match(op, *k, b, a, plan)) why.reset();
  if (why) return refuse(fmt::format("stage {} does not read a window {}: {}", who, quote(k->name()), *why));
  const Tensor d(plan.input->op, plan.input->value_index), g(plan.weights->op, plan.weights->value_index);
  for (const Tensor& t : {d, g})
    if (t.dtype() != op.dtype)
      return refuse(fmt::format("stage {} reads {} of type {}; the convolution is of type {}", who, quote(t.name()),
                                t.dtype().to_string(), op.dtype.to_string()));
  const IterVar& x = op.axis[static_cast<size_t>(plan.axis)];
  const int64_t* extent = as_const_int(x.dom().extent);
  const int64_t* input_extent = as_const_int(d.shape()[static_cast<size_t>(plan.input_dim)]);
  if (!extent || !is_zero(x.dom().min) || !input_extent)
    return refuse(fmt::format("stage {}'s axis {} and the input's dimension {} need constant extents (axis from 0)",
                              who, quote(x.name()), plan.input_dim));
  plan.taps = *as_const_int(k->dom().extent);
  if (plan.taps < 2)
    return refuse(fmt::format("the window {} has {} tap(s); nothing to save", quote(k->name()), plan.taps));
  plan.outputs = outputs_per_tile;
  plan.tiles = (*extent + plan.outputs - 1) / plan.outputs;
  plan.input_extent = *input_extent;
  // Tap k reads stride * i + dilation * k past the tile's start: phase (dilation * k) %
  // stride, place (dilation * k) / stride. Each phase's places must be 0, 1, 2, ...
  plan.phase_taps.assign(static_cast<size_t>(plan.stride), {});
  for (int64_t t = 0; t < plan.taps; ++t) {
    const int64_t at = plan.dilation * t, phase = at % plan.stride, place = at / plan.stride;
    std::vector<int64_t>& taps = plan.phase_taps[static_cast<size_t>(phase)];
    if (place != static_cast<int64_t>(taps.size()))
      return refuse(
          fmt::format("the window {} (dilation {}, stride {}) leaves holes between the taps of a phase; Winograd takes "
                      "dilation 1 or a dilation that the stride divides",
                      quote(k->name()), plan.dilation, plan.stride));
    taps.push_back(t);
  }
  for (const auto& taps : plan.phase_taps) {
    if (taps.empty()) continue;
    const int64_t points = plan.outputs + static_cast<int64_t>(taps.size()) - 1;
    if (points > kMaxFilterPoints)
      return refuse(
          fmt::format("F({}, {}) needs {} points, more than the {} whose float rounding stays small; fewer "
                      "outputs_per_tile",
                      plan.outputs, taps.size(), points, kMaxFilterPoints));
    plan.points += points;
    plan.most_phase_points = std::max(plan.most_phase_points, points);
  }
  plan.multiplications_saved_x100 = 100 * plan.outputs * plan.taps / plan.points;
  for (const IterVar& r : red->axis)
    if (r.var().get() != k->var().get())
      plan.other_steps *= *as_const_int(r.dom().extent);  // sum_of_two_reads: constant
  for (size_t d = 0; d < plan.weights->indices.size(); ++d)
    if (reads_output_channel(plan, op, d)) {
      const int64_t* e =
          as_const_int(op.axis[static_cast<size_t>(axis_of(op, as_var(plan.weights->indices[d])))]->dom.extent);
      plan.out_channels *= e ? *e : 0;
    }
  return plan;
}

}  // namespace sched

WinogradStages Schedule::winograd_1d(const Tensor& conv, const IterVar& window, int outputs_per_tile) {
  ScheduleNode& s = *node_;
  if (!conv.defined()) throw Error("winograd_1d: undefined tensor");
  auto st = sched::find_stage(s, conv.op().get());
  if (!st) throw Error(fmt::format("winograd_1d: tensor {} is not part of this schedule", quote(conv.name())));
  const Winograd1dPlan plan = sched::plan_winograd_1d(s, *st, window, outputs_per_tile);
  if (!plan.refusal.empty()) throw Error("winograd_1d: " + plan.refusal);
  const Operation op = st->op;
  const auto& red = *op->body.as<ReduceNode>();
  const Tensor d(plan.input->op, plan.input->value_index), g(plan.weights->op, plan.weights->value_index);
  const size_t d_dims = d.shape().size(), g_dims = g.shape().size();
  const DataType it = op->axis[0].var().dtype(), ft = op->dtype;
  auto num = [&](int64_t v) { return make_const(it, v); };
  auto axis = [&](const std::string& name, Expr extent) {
    return IterVar(Range::from_min_extent(make_zero(it), std::move(extent)), Var(name, it), IterVarType::DataPar);
  };
  const std::string base = op->name + ".wino_";
  const int m = static_cast<int>(plan.outputs);

  // The transformed points ν, phase by phase: (phase, point within the phase).
  std::vector<MinimalFilter> filters(plan.phase_taps.size());
  std::vector<std::pair<int, int>> nu_of;
  for (size_t p = 0; p < plan.phase_taps.size(); ++p) {
    if (plan.phase_taps[p].empty()) continue;
    filters[p] = sched::minimal_filter(m, static_cast<int>(plan.phase_taps[p].size()));
    for (int j = 0; j < filters[p].points; ++j) nu_of.emplace_back(static_cast<int>(p), j);
  }
  const int points = static_cast<int>(nu_of.size());

  // U(ν, g's other dims, the output channels last) = (G g)[ν]: g along the window
  // transformed, phase by phase; the products read it as vectors of output channels.
  std::vector<IterVar> u_axes{axis("nu", num(points))};
  std::vector<Expr> u_shape{num(points)};
  std::vector<int> u_dim_of_weight(g_dims, -1);
  for (int pass = 0; pass < 2; ++pass)
    for (size_t k = 0; k < g_dims; ++k) {
      if (static_cast<int>(k) == plan.weight_dim || sched::reads_output_channel(plan, *op, k) != (pass == 1)) continue;
      const VarNode* v = as_var(plan.weights->indices[k]);
      u_dim_of_weight[k] = static_cast<int>(u_axes.size());
      u_axes.push_back(axis(v ? v->name : "k" + std::to_string(k), g.shape()[k]));
      u_shape.push_back(g.shape()[k]);
    }
  Expr u_body = by_index(u_axes[0].var(), points, [&](int nu) {
    const auto [p, j] = nu_of[static_cast<size_t>(nu)];
    return combination(
        filters[static_cast<size_t>(p)].filter[static_cast<size_t>(j)],
        [&](int q) {
          std::vector<Expr> at(g_dims);
          for (size_t k = 0; k < g_dims; ++k)
            at[k] = static_cast<int>(k) == plan.weight_dim
                        ? num(plan.phase_taps[static_cast<size_t>(p)][static_cast<size_t>(q)])
                        : Expr(u_axes[static_cast<size_t>(u_dim_of_weight[k])].var());
          return g(at);
        },
        ft);
  });
  Operation u = sched::make_compute(base + "weights", u_shape, u_axes, u_body);

  // V(d's dims with the window's as tiles, ν) = (Bᵀ x)[ν] of the tile's input points
  // x(e) = d at stride * m * t + offset + e: for each point e, the coefficients of all ν
  // (constants along ν, which is innermost: a vector of them times a broadcast point).
  const size_t in_dim = static_cast<size_t>(plan.input_dim);
  std::vector<IterVar> v_axes;
  std::vector<Expr> v_shape;
  for (size_t k = 0; k < d_dims; ++k) {
    const bool tiled = k == in_dim;
    v_axes.push_back(axis(tiled ? "t" : "i" + std::to_string(k), tiled ? num(plan.tiles) : d.shape()[k]));
    v_shape.push_back(v_axes.back()->dom.extent);
  }
  v_axes.push_back(axis("nu", num(points)));
  v_shape.push_back(num(points));
  const Var nu_v = v_axes.back().var();
  int64_t window_points = 0;  // e in [0, window_points)
  for (size_t p = 0; p < plan.phase_taps.size(); ++p)
    if (filters[p].points > 0)
      window_points =
          std::max<int64_t>(window_points, plan.stride * (filters[p].points - 1) + static_cast<int64_t>(p) + 1);
  auto coefficient = [&](int nu, int64_t e) {
    const auto [p, j] = nu_of[static_cast<size_t>(nu)];
    if (e < p || (e - p) % plan.stride != 0) return 0.0;
    const int64_t l = (e - p) / plan.stride;
    return l < filters[static_cast<size_t>(p)].points
               ? filters[static_cast<size_t>(p)].input[static_cast<size_t>(j)][static_cast<size_t>(l)]
               : 0.0;
  };
  const bool guard = plan.stride * m * (plan.tiles - 1) + plan.offset + window_points > plan.input_extent;
  Expr v_body;
  for (int64_t e = 0; e < window_points; ++e) {
    bool used = false;
    for (int nu = 0; nu < points; ++nu) used = used || coefficient(nu, e) != 0;
    if (!used) continue;
    const Expr at_point = v_axes[in_dim].var() * num(plan.stride * m) + num(plan.offset + e);
    std::vector<Expr> at;
    for (size_t k = 0; k < d_dims; ++k) at.push_back(k == in_dim ? at_point : Expr(v_axes[k].var()));
    Expr read = d(at);
    if (guard) read = if_then_else(at_point < num(plan.input_extent), read, make_zero(ft));
    std::vector<double> column(static_cast<size_t>(points));
    for (int nu = 0; nu < points; ++nu) column[static_cast<size_t>(nu)] = coefficient(nu, e);
    Expr term = table(nu_v, column, ft) * read;
    v_body = v_body.defined() ? v_body + term : term;
  }
  Operation v = sched::make_compute(base + "input", v_shape, v_axes, v_body);

  // M(ν, conv's dims with x as tiles, the output channels last) = the sum over the other
  // reduction axes of V U.
  std::vector<bool> output_channel(op->axis.size(), false);
  for (size_t k = 0; k < g_dims; ++k)
    if (sched::reads_output_channel(plan, *op, k))
      output_channel[static_cast<size_t>(axis_of(*op, as_var(plan.weights->indices[k])))] = true;
  const size_t x_axis = static_cast<size_t>(plan.axis);
  std::vector<IterVar> m_axes{axis("nu", num(points))};
  std::vector<Expr> m_shape{num(points)};
  std::vector<int> m_dim_of_axis(op->axis.size(), -1);
  for (int pass = 0; pass < 2; ++pass)
    for (size_t k = 0; k < op->axis.size(); ++k) {
      if (output_channel[k] != (pass == 1)) continue;
      Expr extent = k == x_axis ? num(plan.tiles) : op->axis[k]->dom.extent;
      m_dim_of_axis[k] = static_cast<int>(m_axes.size());
      m_axes.push_back(axis(k == x_axis ? "t" : op->axis[k].name(), extent));
      m_shape.push_back(extent);
    }
  std::vector<std::pair<Var, Expr>> in_m;
  for (size_t k = 0; k < op->axis.size(); ++k)
    in_m.emplace_back(op->axis[k].var(), m_axes[static_cast<size_t>(m_dim_of_axis[k])].var());
  std::vector<IterVar> sums;
  for (const IterVar& r : red.axis) {
    if (r.var().get() == window.var().get()) continue;
    sums.emplace_back(Range::from_min_extent(make_zero(r.var().dtype()), r->dom.extent), Var(r.name(), r.var().dtype()),
                      IterVarType::Reduce);
    in_m.emplace_back(r.var(), sums.back().var());
  }
  std::vector<Expr> v_at;
  for (size_t k = 0; k < d_dims; ++k)
    v_at.push_back(k == in_dim ? Expr(m_axes[static_cast<size_t>(m_dim_of_axis[x_axis])].var())
                               : sched::rename_vars(plan.input->indices[k], in_m));
  v_at.push_back(m_axes[0].var());
  std::vector<Expr> u_at(u_axes.size());
  u_at[0] = m_axes[0].var();
  for (size_t k = 0; k < g_dims; ++k)
    if (u_dim_of_weight[k] >= 0)
      u_at[static_cast<size_t>(u_dim_of_weight[k])] = sched::rename_vars(plan.weights->indices[k], in_m);
  const Expr product = Tensor(v, 0)(v_at) * Tensor(u, 0)(u_at);
  Operation mop = sched::make_compute(base + "product", m_shape, m_axes, sums.empty() ? product : sum(product, sums));
  const Tensor m_t(mop, 0);

  // conv(.., x, ..) = (Aᵀ M)[x % m] of the tile x / m, phase by phase summed.
  auto from_tiles = [&](const std::vector<Expr>& at_x) {
    return by_index(at_x[x_axis] % num(m), m, [&](int i) {
      std::vector<double> coef(static_cast<size_t>(points));
      for (int nu = 0; nu < points; ++nu) {
        const auto [p, j] = nu_of[static_cast<size_t>(nu)];
        coef[static_cast<size_t>(nu)] =
            filters[static_cast<size_t>(p)].output[static_cast<size_t>(i)][static_cast<size_t>(j)];
      }
      return combination(
          coef,
          [&](int nu) {
            std::vector<Expr> at(m_axes.size());
            at[0] = num(nu);
            for (size_t k = 0; k < at_x.size(); ++k)
              at[static_cast<size_t>(m_dim_of_axis[k])] = k == x_axis ? at_x[k] / num(m) : at_x[k];
            return m_t(at);
          },
          ft);
    });
  };
  std::vector<Expr> conv_at;
  for (const IterVar& x : op->axis) conv_at.push_back(x.var());
  // Output channels not innermost (NCHW): Aᵀ M with them innermost as M has them, then
  // conv a copy of it (a transpose), as winograd() does.
  Tensor output;
  if (!output_channel.back()) {
    std::vector<IterVar> y_axes;
    std::vector<Expr> y_shape, y_at(op->axis.size()), at;
    for (size_t j = 1; j < m_axes.size(); ++j)
      for (size_t k = 0; k < op->axis.size(); ++k)
        if (m_dim_of_axis[k] == static_cast<int>(j)) {
          y_axes.push_back(axis(op->axis[k].name(), op->axis[k]->dom.extent));
          y_shape.push_back(op->axis[k]->dom.extent);
          y_at[k] = y_axes.back().var();
          at.push_back(conv_at[k]);
        }
    output = Tensor(sched::make_compute(base + "output", y_shape, y_axes, from_tiles(y_at)), 0);
    conv_at = {output(at)};
  }
  const Expr out_body = output.defined() ? conv_at[0] : from_tiles(conv_at);
  Operation out = sched::with_bodies(op, {out_body});

  const auto at = static_cast<std::ptrdiff_t>(sched::stage_index(s, st.get()));
  std::vector<std::shared_ptr<StageNode>> added{sched::make_stage(u), sched::make_stage(v), sched::make_stage(mop)};
  if (output.defined()) added.push_back(sched::make_stage(output.op()));
  s.stages.insert(s.stages.begin() + at, added.begin(), added.end());
  st->all_iter_vars = op->axis;
  st->leaf_iter_vars = op->axis;
  sched::replace_definition(s, *st, out);
  return {Tensor(u, 0), Tensor(), Tensor(v, 0), m_t, output};
}

}  // namespace te
