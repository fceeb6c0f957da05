// Schedule::winograd: a 3x3 stride-1 convolution computed by Winograd's minimal filtering
// F(2x2, 3x3) (Lavin and Gray, 2016): each 4x4 input tile d and 3x3 filter g give 2x2
// outputs Aᵀ [(G g Gᵀ) ⊙ (Bᵀ d B)] A, the products summed over the input channels, so a
// channel pair costs 16 multiplications per 2x2 outputs where the direct sum does 36.
#include <fmt/format.h>

#include <functional>
#include <optional>

#include "expr/analysis.h"
#include "schedule/graph_queries.h"
#include "schedule/messages.h"
#include "schedule/operation_builders.h"
#include "schedule/stage_lookup.h"
#include "schedule/winograd.h"
#include "te/schedule.h"

namespace te {

using sched::quote;

namespace {

using sched::as_var;
using sched::axis_of;
using sched::WinogradPlan;
using Convolution = WinogradPlan::Convolution;
constexpr int kTaps = 3;     // r: the filter's taps per dimension
constexpr int kOutputs = 2;  // m: outputs per tile and dimension
constexpr int kTile = 4;     // m + r - 1: a tile's input points per dimension

// One row (or column) of the three matrices applied to `at(0..3)`, the row's index k an
// expression (the stages' ξ or ν axis, or the output's position in its tile).
//   Bᵀ = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]    (the input tile)
//   G  = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1]  (the filter)
//   Aᵀ = [1 1 1 0; 0 1 -1 -1]                        (the products back to outputs)
using Point = std::function<Expr(int)>;
Expr input_row(const Expr& k, const Point& at) {
  return select(k == 0, at(0) - at(2), select(k == 1, at(1) + at(2), select(k == 2, at(2) - at(1), at(1) - at(3))));
}
Expr filter_row(const Expr& k, const Point& at) {
  const Expr half = make_const(at(0).dtype(), 0.5);
  return select(k == 0, at(0),
                select(k == 1, (at(0) + at(1) + at(2)) * half, select(k == 2, (at(0) - at(1) + at(2)) * half, at(2))));
}
Expr output_row(const Expr& k, const Point& at) { return select(k == 0, at(0) + at(1) + at(2), at(1) - at(2) - at(3)); }

// Why (input, weights) is not the pattern, or nullopt and `c` filled.
std::optional<std::string> match(const OperationNode& op, const ReduceNode& red, const TensorReadNode* input,
                                 const TensorReadNode* weights, Convolution& c) {
  c = Convolution{};
  c.input = input;
  c.weights = weights;
  auto reduce_var = [&](const VarNode* v) -> const IterVar* {
    for (const IterVar& r : red.axis)
      if (v && r.var().get() == v) return &r;
    return nullptr;
  };
  std::set<const VarNode*> input_axes;
  int windows = 0;
  for (size_t d = 0; d < input->indices.size(); ++d) {
    const Expr& e = input->indices[d];
    if (as_const_int(e)) continue;
    if (const VarNode* v = as_var(e)) {
      if (const IterVar* r = reduce_var(v)) {
        if (c.channel.defined())
          return fmt::format("its input {} is read at two reduction axes", quote(input->op->name));
        c.channel = *r;
        c.input_channel_dim = static_cast<int>(d);
        continue;
      }
      if (axis_of(op, v) >= 0) {
        input_axes.insert(v);
        continue;
      }
    }
    // h + rh + c: one reduction axis and one axis of the stage, each with coefficient 1.
    const IterVar* tap = nullptr;
    for (const IterVar& r : red.axis)
      if (uses_var(e, r.var())) tap = &r;
    std::optional<LinearIn> in_tap = tap ? linear_in(e, tap->var()) : std::nullopt;
    const VarNode* out_var = nullptr;
    std::optional<LinearIn> in_axis;
    if (in_tap && in_tap->coef == 1)
      for (const IterVar& x : op.axis)
        if (uses_var(in_tap->rest, x.var())) {
          out_var = x.var().get();
          in_axis = linear_in(in_tap->rest, x.var());
        }
    const int64_t* constant = in_axis ? as_const_int(in_axis->rest) : nullptr;
    if (!in_axis || in_axis->coef != 1 || !constant || windows == 2)
      return fmt::format("its input {} is read at {} in dimension {}, not at an axis plus a tap (stride 1)",
                         quote(input->op->name), to_string(e), d);
    const int64_t* taps = as_const_int(tap->dom().extent);
    if (!taps || *taps != kTaps || !is_zero(tap->dom().min))
      return fmt::format("its window {} has {} taps; Winograd F(2x2, 3x3) takes 3", quote(tap->name()),
                         to_string(tap->dom().extent));
    // A window that starts before the input (h + rh - 1: a padding by index) would read
    // the tiles' first rows outside it; a padding stage pads instead.
    if (*constant < 0)
      return fmt::format("its input {} is read at {} in dimension {}, before its start; pad it with a stage",
                         quote(input->op->name), to_string(e), d);
    c.taps[windows] = *tap;
    c.input_dim[windows] = static_cast<int>(d);
    c.offset[windows] = *constant;
    c.axis[windows] = axis_of(op, out_var);
    input_axes.insert(out_var);
    ++windows;
  }
  if (windows != 2)
    return fmt::format("its input {} is read through {} window(s); a 2-D convolution reads it through two",
                       quote(input->op->name), windows);
  if (c.taps[0].get() == c.taps[1].get() || c.axis[0] == c.axis[1]) return std::string("its two windows share an axis");
  if (!c.channel.defined())
    return fmt::format("its input {} has no input-channel dimension (a reduction axis as an index)",
                       quote(input->op->name));
  bool channel_read = false;
  for (size_t d = 0; d < weights->indices.size(); ++d) {
    const Expr& e = weights->indices[d];
    if (as_const_int(e)) continue;
    const VarNode* v = as_var(e);
    if (v && v == c.taps[0].var().get() && c.weight_dim[0] < 0) {
      c.weight_dim[0] = static_cast<int>(d);
    } else if (v && v == c.taps[1].var().get() && c.weight_dim[1] < 0) {
      c.weight_dim[1] = static_cast<int>(d);
    } else if (v && v == c.channel.var().get() && !channel_read) {
      channel_read = true;
      c.weight_channel_dim = static_cast<int>(d);
    } else if (!v || axis_of(op, v) < 0 || input_axes.count(v)) {
      return fmt::format(
          "its weights {} are read at {} in dimension {}; each index must be a tap, the input channel or an "
          "output channel (an axis the input does not use)",
          quote(weights->op->name), to_string(e), d);
    }
  }
  if (c.weight_dim[0] < 0 || c.weight_dim[1] < 0 || !channel_read)
    return fmt::format("its weights {} are not read at both taps and the input channel", quote(weights->op->name));
  return std::nullopt;
}

// Why op's body is not the pattern (empty: it is, `c` filled).
std::string find_convolution(const OperationNode& op, Convolution& c) {
  const ReduceNode* red = nullptr;
  const TensorReadNode *a = nullptr, *b = nullptr;
  if (std::string why = sched::sum_of_two_reads(op, red, a, b); !why.empty()) return why;
  if (red->axis.size() != 3)
    return fmt::format("its sum has {} reduction axes; it needs 3 (two windows and the input channels)",
                       red->axis.size());
  std::optional<std::string> why = match(op, *red, a, b, c);
  if (!why) return "";
  Convolution swapped;
  if (!match(op, *red, b, a, swapped)) {
    c = swapped;
    return "";
  }
  return *why;
}

}  // namespace

namespace sched {

const VarNode* as_var(const Expr& e) { return e.as<VarNode>(); }

int axis_of(const OperationNode& op, const VarNode* v) {
  for (size_t d = 0; d < op.axis.size(); ++d)
    if (op.axis[d].var().get() == v) return static_cast<int>(d);
  return -1;
}

std::string unrewritable_stage(const ScheduleNode& s, const StageNode& st) {
  const OperationNode& op = *st.op;
  const std::string who = quote(op.name);
  if (op.kind != OpKind::Compute) return fmt::format("stage {} is a placeholder", who);
  if (op.is_scatter() || op.is_row_reduction() || op.num_outputs() != 1)
    return fmt::format("stage {} is a scatter, a row reduction or a multi-output compute", who);
  if (!op.dtype.is_float() || op.dtype.lanes() != 1)
    return fmt::format("stage {} is of type {}; Winograd's transforms need a float type", who, op.dtype.to_string());
  if (!st.relations.empty() || !st.attrs.empty())
    return fmt::format("stage {} already has a loop schedule, which winograd would drop; rewrite it first", who);
  for (const auto& other : s.stages)
    if (other->attach_type == AttachType::Scope && other->attach_op == st.origin_op)
      return fmt::format("stage {} is computed at a loop of stage {}, which winograd removes", quote(other->op->name),
                         who);
  return "";
}

std::string sum_of_two_reads(const OperationNode& op, const ReduceNode*& red, const TensorReadNode*& a,
                             const TensorReadNode*& b) {
  red = op.body.as<ReduceNode>();
  if (!red || red->reducer != Reducer::Sum || red->sources.size() != 1) return "its body is not a sum of one value";
  if (red->condition.defined()) return "its sum has a condition (a where)";
  const auto* mul = red->source().as<BinaryNode>();
  a = mul ? mul->a.as<TensorReadNode>() : nullptr;
  b = mul ? mul->b.as<TensorReadNode>() : nullptr;
  if (!mul || mul->op != BinOp::Mul || !a || !b) return "its sum is not of a product of two tensor reads";
  for (const IterVar& r : red->axis)
    if (!as_const_int(r.dom().extent) || !is_zero(r.dom().min))
      return fmt::format("its reduction axis {} has no constant extent from 0", quote(r.name()));
  return "";
}

WinogradPlan plan_winograd(const ScheduleNode& s, const StageNode& st) {
  WinogradPlan plan;
  const OperationNode& op = *st.op;
  const std::string who = quote(op.name);
  auto refuse = [&](std::string why) {
    plan.refusal = std::move(why);
    return plan;
  };
  if (std::string why = unrewritable_stage(s, st); !why.empty()) return refuse(why);
  Convolution& c = plan.conv;
  if (std::string why = find_convolution(op, c); !why.empty())
    return refuse(fmt::format("stage {} is not a 3x3 stride-1 convolution: {}", who, why));
  const Tensor d(c.input->op, c.input->value_index), g(c.weights->op, c.weights->value_index);
  for (const Tensor& t : {d, g})
    if (t.dtype() != op.dtype)
      return refuse(fmt::format("stage {} reads {} of type {}; the convolution is of type {}", who, quote(t.name()),
                                t.dtype().to_string(), op.dtype.to_string()));
  // Tiles: ceil(extent / 2) per output dimension.
  for (int k = 0; k < 2; ++k) {
    const IterVar& x = op.axis[static_cast<size_t>(c.axis[k])];
    const int64_t* extent = as_const_int(x.dom().extent);
    const int64_t* input_extent = as_const_int(d.shape()[static_cast<size_t>(c.input_dim[k])]);
    if (!extent || !is_zero(x.dom().min) || !input_extent)
      return refuse(fmt::format("stage {}'s axis {} and the input's dimension {} need constant extents (axis from 0)",
                                who, quote(x.name()), c.input_dim[k]));
    plan.tiles[k] = (*extent + kOutputs - 1) / kOutputs;
    plan.input_rows[k] = *input_extent;
  }
  plan.in_channels = *as_const_int(c.channel->dom.extent);
  plan.out_channels = 1;
  for (size_t k = 0; k < c.weights->indices.size(); ++k)
    if (const VarNode* v = as_var(c.weights->indices[k]); v && axis_of(op, v) >= 0) {
      const int64_t* e = as_const_int(op.axis[static_cast<size_t>(axis_of(op, v))]->dom.extent);
      plan.out_channels *= e ? *e : 0;
    }
  return plan;
}

}  // namespace sched

WinogradStages Schedule::winograd(const Tensor& conv) {
  ScheduleNode& s = *node_;
  if (!conv.defined()) throw Error("winograd: undefined tensor");
  auto st = sched::find_stage(s, conv.op().get());
  if (!st) throw Error(fmt::format("winograd: tensor {} is not part of this schedule", quote(conv.name())));
  const sched::WinogradPlan plan = sched::plan_winograd(s, *st);
  if (!plan.refusal.empty()) throw Error("winograd: " + plan.refusal);
  const Operation op = st->op;
  const Convolution& c = plan.conv;
  const Tensor d(c.input->op, c.input->value_index), g(c.weights->op, c.weights->value_index);
  const size_t d_dims = d.shape().size(), g_dims = g.shape().size();
  const int64_t* tiles = plan.tiles;
  const int64_t* rows_read = plan.input_rows;
  const DataType it = op->axis[0].var().dtype(), ft = op->dtype;
  auto num = [&](int64_t v) { return make_const(it, v); };
  auto axis = [&](const std::string& name, Expr extent) {
    return IterVar(Range::from_min_extent(make_zero(it), std::move(extent)), Var(name, it), IterVarType::DataPar);
  };
  auto guarded = [&](int k, const Expr& index, const std::function<Expr(const Expr&)>& read) {
    if (kOutputs * tiles[k] + kTile - kOutputs + c.offset[k] <= rows_read[k]) return read(index);
    return if_then_else(index < num(rows_read[k]), read(index), make_zero(ft));
  };
  const std::string base = op->name + ".wino_";

  // U(ξ, ν, input channel, g's other dims) = (G g Gᵀ)[ξ][ν]: the output channels last,
  // the product's columns, whatever the weights' layout.
  std::vector<IterVar> u_axes{axis("xi", num(kTile)), axis("nu", num(kTile))};
  std::vector<Expr> u_shape{num(kTile), num(kTile)};
  std::vector<int> u_dim_of_weight(g_dims, -1);
  for (size_t j = 0; j <= g_dims; ++j) {
    const size_t k = j == 0 ? static_cast<size_t>(c.weight_channel_dim) : j - 1;
    if (static_cast<int>(k) == c.weight_dim[0] || static_cast<int>(k) == c.weight_dim[1]) continue;
    if (j > 0 && static_cast<int>(k) == c.weight_channel_dim) continue;
    const VarNode* v = as_var(c.weights->indices[k]);
    u_dim_of_weight[k] = static_cast<int>(u_axes.size());
    u_axes.push_back(axis(v ? v->name : "k" + std::to_string(k), g.shape()[k]));
    u_shape.push_back(g.shape()[k]);
  }
  Expr u_body = filter_row(u_axes[0].var(), [&](int a) {
    return filter_row(u_axes[1].var(), [&](int b) {
      std::vector<Expr> at(g_dims);
      for (size_t k = 0; k < g_dims; ++k) at[k] = u_axes[static_cast<size_t>(std::max(0, u_dim_of_weight[k]))].var();
      at[static_cast<size_t>(c.weight_dim[0])] = num(a);
      at[static_cast<size_t>(c.weight_dim[1])] = num(b);
      return g(at);
    });
  });
  Operation u = sched::make_compute(base + "weights", u_shape, u_axes, u_body);

  // Rows(ξ, d's dims but the channels with h's tile row, channels) = Bᵀ d along the
  // rows: d at 2 th + a + c. The channels last whatever d's layout: Bᵀ d B reads them as
  // vectors.
  const size_t row_dim = static_cast<size_t>(c.input_dim[0]), col_dim = static_cast<size_t>(c.input_dim[1]);
  const size_t chan_dim = static_cast<size_t>(c.input_channel_dim);
  auto channels_last = [&](size_t k) { return k == d_dims ? chan_dim : k; };  // k over 0..d_dims, chan_dim skipped
  std::vector<IterVar> r_axes{axis("xi", num(kTile))};
  std::vector<Expr> r_shape{num(kTile)};
  std::vector<int> r_dim_of_input(d_dims, -1);
  for (size_t k = 0; k <= d_dims; ++k) {
    const size_t dim = channels_last(k);
    if (k < d_dims && k == chan_dim) continue;
    const bool row = dim == row_dim;
    const char* name = row ? "th" : dim == col_dim ? "w" : dim == chan_dim ? "ci" : nullptr;
    r_dim_of_input[dim] = static_cast<int>(r_axes.size());
    r_axes.push_back(axis(name ? name : "i" + std::to_string(dim), row ? num(tiles[0]) : d.shape()[dim]));
    r_shape.push_back(r_axes.back()->dom.extent);
  }
  auto r_var = [&](size_t dim) { return r_axes[static_cast<size_t>(r_dim_of_input[dim])].var(); };
  Expr r_body = input_row(r_axes[0].var(), [&](int a) {
    const Expr at_row = r_var(row_dim) * num(kOutputs) + num(a + c.offset[0]);
    return guarded(0, at_row, [&](const Expr& row) {
      std::vector<Expr> at;
      for (size_t k = 0; k < d_dims; ++k) at.push_back(k == row_dim ? row : Expr(r_var(k)));
      return d(at);
    });
  });
  Operation rows = sched::make_compute(base + "rows", r_shape, r_axes, r_body);
  const Tensor rows_t(rows, 0);

  // V(ξ, ν, d's dims but the channels with h, w as tiles, channels) = Bᵀ d B.
  std::vector<IterVar> v_axes{axis("xi", num(kTile)), axis("nu", num(kTile))};
  std::vector<Expr> v_shape{num(kTile), num(kTile)};
  std::vector<int> v_dim_of_input(d_dims, -1);
  for (size_t k = 0; k <= d_dims; ++k) {
    const size_t dim = channels_last(k);
    if (k < d_dims && k == chan_dim) continue;
    const char* name = dim == row_dim ? "th" : dim == col_dim ? "tw" : dim == chan_dim ? "ci" : nullptr;
    Expr extent = dim == row_dim ? num(tiles[0]) : dim == col_dim ? num(tiles[1]) : d.shape()[dim];
    v_dim_of_input[dim] = static_cast<int>(v_axes.size());
    v_axes.push_back(axis(name ? name : "i" + std::to_string(dim), extent));
    v_shape.push_back(extent);
  }
  auto v_var = [&](size_t dim) { return v_axes[static_cast<size_t>(v_dim_of_input[dim])].var(); };
  Expr v_body = input_row(v_axes[1].var(), [&](int b) {
    const Expr at_col = v_var(col_dim) * num(kOutputs) + num(b + c.offset[1]);
    return guarded(1, at_col, [&](const Expr& col) {
      std::vector<Expr> at(r_axes.size());
      at[0] = v_axes[0].var();
      for (size_t k = 0; k < d_dims; ++k)
        at[static_cast<size_t>(r_dim_of_input[k])] = k == col_dim ? col : Expr(v_var(k));
      return rows_t(at);
    });
  });
  Operation v = sched::make_compute(base + "input", v_shape, v_axes, v_body);

  // M(ξ, ν, conv's dims but the output channels with h, w as tiles, output channels) =
  // sum over the input channels of V U.
  std::vector<bool> output_channel(op->axis.size(), false);
  for (size_t k = 0; k < g_dims; ++k)
    if (const VarNode* var = as_var(c.weights->indices[k]); var && axis_of(*op, var) >= 0)
      output_channel[static_cast<size_t>(axis_of(*op, var))] = true;
  std::vector<IterVar> m_axes{axis("xi", num(kTile)), axis("nu", num(kTile))};
  std::vector<Expr> m_shape{num(kTile), num(kTile)};
  std::vector<int> m_dim_of_axis(op->axis.size(), -1);
  for (int pass = 0; pass < 2; ++pass)
    for (size_t k = 0; k < op->axis.size(); ++k) {
      if (output_channel[k] != (pass == 1)) continue;
      const bool row = static_cast<int>(k) == c.axis[0], col = static_cast<int>(k) == c.axis[1];
      Expr extent = row ? num(tiles[0]) : col ? num(tiles[1]) : op->axis[k]->dom.extent;
      m_dim_of_axis[k] = static_cast<int>(m_axes.size());
      m_axes.push_back(axis(row ? "th" : col ? "tw" : op->axis[k].name(), extent));
      m_shape.push_back(extent);
    }
  IterVar rc(Range::from_min_extent(make_zero(c.channel.var().dtype()), c.channel->dom.extent),
             Var(c.channel.name(), c.channel.var().dtype()), IterVarType::Reduce);
  // conv's axis variables (and the tap and channel) as M's.
  std::vector<std::pair<Var, Expr>> in_m;
  for (size_t k = 0; k < op->axis.size(); ++k)
    in_m.emplace_back(op->axis[k].var(), m_axes[static_cast<size_t>(m_dim_of_axis[k])].var());
  in_m.emplace_back(c.channel.var(), rc.var());
  std::vector<Expr> v_at{m_axes[0].var(), m_axes[1].var()};
  for (size_t k = 0; k <= d_dims; ++k) {
    const size_t dim = channels_last(k);
    if (k < d_dims && k == chan_dim) continue;
    if (dim == row_dim || dim == col_dim)
      v_at.push_back(
          m_axes[static_cast<size_t>(m_dim_of_axis[static_cast<size_t>(c.axis[dim == row_dim ? 0 : 1])])].var());
    else
      v_at.push_back(sched::rename_vars(c.input->indices[dim], in_m));
  }
  std::vector<Expr> u_at(u_axes.size());
  u_at[0] = m_axes[0].var();
  u_at[1] = m_axes[1].var();
  for (size_t k = 0; k < g_dims; ++k)
    if (u_dim_of_weight[k] >= 0)
      u_at[static_cast<size_t>(u_dim_of_weight[k])] = sched::rename_vars(c.weights->indices[k], in_m);
  Expr m_body = sum(Tensor(v, 0)(v_at) * Tensor(u, 0)(u_at), {rc});
  Operation m = sched::make_compute(base + "product", m_shape, m_axes, m_body);

  // conv(.., h, .., w, ..) = (Aᵀ M A)[h % 2][w % 2] of the tile (h / 2, w / 2), at
  // conv's axes as `x` gives them.
  const size_t h_axis = static_cast<size_t>(c.axis[0]), w_axis = static_cast<size_t>(c.axis[1]);
  const Tensor m_t(m, 0);
  auto from_tiles = [&](const std::vector<Expr>& x) {
    return output_row(x[h_axis] % num(kOutputs), [&](int xi) {
      return output_row(x[w_axis] % num(kOutputs), [&](int nu) {
        std::vector<Expr> at(m_axes.size());
        at[0] = num(xi);
        at[1] = num(nu);
        for (size_t k = 0; k < x.size(); ++k)
          at[static_cast<size_t>(m_dim_of_axis[k])] = k == h_axis || k == w_axis ? x[k] / num(kOutputs) : x[k];
        return m_t(at);
      });
    });
  };
  std::vector<Expr> conv_at;
  for (const IterVar& x : op->axis) conv_at.push_back(x.var());
  // Output channels not innermost (NCHW): Aᵀ M A with them innermost as M has them,
  // vectors along the channels, then conv a copy of it (a transpose).
  Tensor output;
  if (!output_channel.back()) {
    std::vector<IterVar> y_axes;
    std::vector<Expr> y_shape, y_at(op->axis.size());
    for (size_t j = 2; j < m_axes.size(); ++j)
      for (size_t k = 0; k < op->axis.size(); ++k)
        if (m_dim_of_axis[k] == static_cast<int>(j)) {
          y_axes.push_back(axis(op->axis[k].name(), op->axis[k]->dom.extent));
          y_shape.push_back(op->axis[k]->dom.extent);
          y_at[k] = y_axes.back().var();
        }
    output = Tensor(sched::make_compute(base + "output", y_shape, y_axes, from_tiles(y_at)), 0);
    std::vector<Expr> at;
    for (size_t j = 2; j < m_axes.size(); ++j)
      for (size_t k = 0; k < op->axis.size(); ++k)
        if (m_dim_of_axis[k] == static_cast<int>(j)) at.push_back(conv_at[k]);
    conv_at = {output(at)};
  }
  const Expr out_body = output.defined() ? conv_at[0] : from_tiles(conv_at);
  Operation out = sched::with_bodies(op, {out_body});

  const auto at = static_cast<std::ptrdiff_t>(sched::stage_index(s, st.get()));
  std::vector<std::shared_ptr<StageNode>> added{sched::make_stage(u), sched::make_stage(rows), sched::make_stage(v),
                                                sched::make_stage(m)};
  if (output.defined()) added.push_back(sched::make_stage(output.op()));
  s.stages.insert(s.stages.begin() + at, added.begin(), added.end());
  st->all_iter_vars = op->axis;
  st->leaf_iter_vars = op->axis;
  sched::replace_definition(s, *st, out);
  return {Tensor(u, 0), rows_t, Tensor(v, 0), m_t, output};
}

}  // namespace te
