/// \file
/// Tensors: placeholders (inputs) and computes (one expression per output point).
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "te/export.h"
#include "te/expr.h"

namespace te {

/// What an operation is.
enum class OpKind : uint8_t {
  Placeholder,  ///< an input
  Compute       ///< an expression per output point (possibly a reduction)
};

/// One operation of the tensor graph. A compute's body may reference other operations
/// through TensorRead nodes; a Reduce body makes it a reduction.
struct TE_API OperationNode {
  OpKind kind = OpKind::Placeholder;  ///< Placeholder or compute.
  std::string name;                   ///< The tensor's name.
  DataType dtype;                     ///< The element type.
  std::vector<Expr> shape;            ///< The extent of each dimension.
  std::vector<IterVar> axis;          ///< Compute: one data-parallel axis per dimension.
  std::vector<IterVar> reduce_axis;   ///< Compute: the Reduce's axes, if the body is one.
  Expr body;                          ///< Compute: the value at point `axis`.
  /// The operations this one reads, in order of first use.
  std::vector<std::shared_ptr<const OperationNode>> inputs;

  /// An output of a multi-output compute after the first (name, dtype and body above
  /// are output 0's).
  struct Output {
    std::string name;  ///< The output tensor's name.
    DataType dtype;    ///< Its element type.
    Expr body;         ///< Its value at point `axis`.
  };
  /// Outputs 1.. of a compute_tuple (empty for every other operation).
  std::vector<Output> more_outputs;

  /// A scatter (te::scatter): the tensor it updates, of the same shape and type, whose
  /// stage fills the scatter's buffer in place before the scatter runs (null for every
  /// other operation).
  std::shared_ptr<const OperationNode> scatter_base;
  /// A scatter: the element of `shape` that point `axis` writes, one index per dimension.
  std::vector<Expr> scatter_index;
  /// A scatter that adds its values to the elements (ScatterTo::accumulate).
  bool scatter_accumulate = false;
  /// A scatter-add that must not use atomic adds (ScatterTo::deterministic).
  bool scatter_deterministic = false;
  /// Whether it is a scatter: its loops run over `axis` (the domain), its output has
  /// `shape` (the base's).
  bool is_scatter() const { return scatter_base != nullptr; }

  /// A row reduction (compute_rows): outputs [0, row_outputs) are the row values, of shape
  /// row_shape (the first dimensions of `shape`); 0 for every other operation.
  int row_outputs = 0;
  /// A row reduction: the shape of its row values (the leading dimensions of `shape`).
  std::vector<Expr> row_shape;
  /// Whether it is a row reduction (compute_rows).
  bool is_row_reduction() const { return row_outputs > 0; }
  /// Output i's shape: row_shape for a row value, `shape` otherwise.
  const std::vector<Expr>& output_shape(int i) const { return i < row_outputs ? row_shape : shape; }

  /// The number of outputs (1 but for a compute_tuple).
  int num_outputs() const { return 1 + static_cast<int>(more_outputs.size()); }
  /// Output i's name.
  const std::string& output_name(int i) const { return i == 0 ? name : more_outputs[i - 1].name; }
  /// Output i's element type.
  DataType output_dtype(int i) const { return i == 0 ? dtype : more_outputs[i - 1].dtype; }
  /// Output i's body.
  const Expr& output_body(int i) const { return i == 0 ? body : more_outputs[i - 1].body; }
  /// Every output's body, in order.
  std::vector<Expr> bodies() const {
    std::vector<Expr> out{body};
    for (const Output& o : more_outputs) out.push_back(o.body);
    return out;
  }
};
/// A shared, immutable operation.
using Operation = std::shared_ptr<const OperationNode>;

/// The output of an operation: what placeholder() and compute() return, what
/// expressions read (`A(i, j)`) and what schedules and lower() take.
class TE_API Tensor {
 public:
  /// An undefined tensor.
  Tensor() = default;
  /// Output value_index of op (0: its only output, but for a compute_tuple).
  explicit Tensor(Operation op, int value_index = 0) : op_(std::move(op)), value_index_(value_index) {}

  /// Whether the tensor has an operation.
  bool defined() const { return op_ != nullptr; }
  /// The operation that produces the tensor.
  const Operation& op() const { return op_; }
  /// The tensor's name.
  const std::string& name() const { return node("name").output_name(value_index_); }
  /// The element type.
  DataType dtype() const { return node("dtype").output_dtype(value_index_); }
  /// Which output of its operation the tensor is (0 but for a compute_tuple).
  int value_index() const { return value_index_; }
  /// The extent of each dimension.
  const std::vector<Expr>& shape() const { return node("shape").output_shape(value_index_); }
  /// The number of dimensions.
  int ndim() const { return static_cast<int>(shape().size()); }
  /// Whether it is an input (placeholder()).
  bool is_placeholder() const { return node("is_placeholder").kind == OpKind::Placeholder; }
  /// Whether both are the same output of the same operation.
  bool same_as(const Tensor& o) const { return op_ == o.op_ && value_index_ == o.value_index_; }

  /// The k-th data-parallel axis of a compute (te::Error otherwise).
  IterVar axis(int k) const;
  /// The k-th reduction axis of a reduction (te::Error otherwise).
  IterVar reduce_axis(int k) const;

  /// An element read: A(i, j). The index count must equal ndim (te::Error otherwise);
  /// integer indices only.
  Expr operator()(std::vector<Expr> indices) const;
  /// An element read with one index argument per dimension: A(i, j).
  template <typename... Args>
  Expr operator()(Args&&... args) const {
    return (*this)(std::vector<Expr>{Expr(std::forward<Args>(args))...});
  }

 private:
  // The operation, or a te::Error naming the accessor of an undefined tensor.
  const OperationNode& node(const char* accessor) const {
    if (!op_) throw Error(std::string("Tensor::") + accessor + ": the tensor is undefined (default-constructed)");
    return *op_;
  }
  Operation op_;
  int value_index_ = 0;
};

/// An input tensor of the given shape (int32/int64 expressions, usually constants or Vars).
TE_API Tensor placeholder(std::vector<Expr> shape, DataType dtype, std::string name);

/// A compute from a function of one Var per dimension. axis_names, if given, name the
/// axes (default "i", "j", "k", "l", "m", "n" for up to 6 dimensions, "i0".. beyond).
TE_API Tensor compute_from_vars(std::vector<Expr> shape, const std::function<Expr(const std::vector<Var>&)>& fn,
                                std::string name, std::vector<std::string> axis_names = {});

/// A row reduction (a RowReducer such as online_softmax) over the points of row_shape ×
/// element_shape: fn gets the row axes and the element axes and returns the reducer's
/// values in order; names names them. The row values are outputs of row_shape, the
/// element values of row_shape + element_shape; one stage computes them all, each step
/// of the reduction updating a row's values once and then each of its elements. The
/// element axes' loops must stay inside the reduction's (see docs/reductions.md).
TE_API std::vector<Tensor> compute_rows(
    std::vector<Expr> row_shape, std::vector<Expr> element_shape,
    const std::function<std::vector<Expr>(const std::vector<Var>& row, const std::vector<Var>& element)>& fn,
    std::vector<std::string> names, std::vector<std::string> axis_names = {});

/// Several outputs of one shape from one body, one loop nest (TVM's tuple compute): fn
/// returns one Expr per output, names names them. The bodies are either all
/// non-reductions, or the values of one tuple reduction (argmax, welford, a
/// comm_reducer over a tuple) in order. The outputs share one stage: `s[out[0]]` and
/// `s[out[1]]` are the same stage.
TE_API std::vector<Tensor> compute_tuple_from_vars(std::vector<Expr> shape,
                                                   const std::function<std::vector<Expr>(const std::vector<Var>&)>& fn,
                                                   std::vector<std::string> names,
                                                   std::vector<std::string> axis_names = {});

/// What one point of a te::scatter writes: `value` at element `index` of the output.
struct ScatterTo {
  std::vector<Expr> index;  ///< One index per dimension of the output.
  Expr value;               ///< The value (a reduction allowed, as a compute's body, unless accumulate).
  /// Add value to the element instead of replacing it (PyTorch's index_put_ with
  /// accumulate=True, TVM's scatter_nd "add"): every point's value counts, whatever the
  /// order. The value may be a sum, whose every term is added at its own position: the
  /// index may then use the sum's axes, whose ranges may read tensors (a scatter-add over
  /// data-dependent intervals); other reductions are refused. Where the scatter's loops
  /// run in parallel (parallel, vectorized, GPU threads) and two iterations may meet on one element, the
  /// adds are atomic (float32, float64, int32, int64), in an order that may vary between
  /// runs; a loop over an axis that is itself an index of the output (each iteration its
  /// own elements) needs no atomics and stays deterministic.
  bool accumulate = false;
  /// An accumulating scatter whose sums must come out the same every run: lowering
  /// refuses (te::Error naming the loop) a schedule that would need atomic adds, i.e. runs
  /// in parallel, vectorized or on GPU threads a loop over other than an axis that indexes
  /// the output directly. te::gradient's scatter-adds get it from GradientOptions.
  bool deterministic = false;
};

/// A tensor equal to `base` except where the points of `domain` write: point p writes
/// fn(p).value at fn(p).index (PyTorch's index_put_, TVM's scatter_nd "update"). The
/// indices may read tensors (data-dependent positions); the JIT checks them at run time
/// (a te::Error), CUDA kernels trap. `base` must be a compute of the output's shape and
/// type that only this scatter reads: its stage fills the output in place, before the
/// scatter's loops run. When two points write one element, the later one in loop order
/// wins (unspecified across parallel or GPU threads), or both add (ScatterTo::accumulate). The scatter's axes
/// (`axis(k)`) are the domain's; schedule them like a compute's; the scatter and its base stay at the root (compute_at,
/// compute_inline, cache_write and rfactor are refused).
TE_API Tensor scatter_from_vars(const Tensor& base, std::vector<Expr> domain,
                                const std::function<ScatterTo(const std::vector<Var>&)>& fn, std::string name,
                                std::vector<std::string> axis_names = {});

namespace detail {
template <typename F, size_t... I>
auto call_with_vars(F& fn, const std::vector<Var>& v, std::index_sequence<I...>) {
  return fn(Expr(v[I])...);
}
template <typename F, typename Seq>
struct invocable_with_exprs;
template <typename F, size_t... I>
struct invocable_with_exprs<F, std::index_sequence<I...>>
    : std::is_invocable<F, decltype((void)I, std::declval<Expr>())...> {};
template <typename F, size_t N>
constexpr bool invocable_n = invocable_with_exprs<F, std::make_index_sequence<N>>::value;
// How many Expr arguments fn takes (1 to 6; 0: none of those).
template <typename F>
constexpr size_t expr_arity = invocable_n<F, 1>   ? 1
                              : invocable_n<F, 2> ? 2
                              : invocable_n<F, 3> ? 3
                              : invocable_n<F, 4> ? 4
                              : invocable_n<F, 5> ? 5
                              : invocable_n<F, 6> ? 6
                                                  : 0;
// fn(v[0], ..., v[n-1]) for a function of n Exprs; `what` and `space` name the caller
// and its index space in the error for a count mismatch.
template <typename F>
auto call_with_exprs(F& fn, const std::vector<Var>& v, const char* what, const char* space) {
  constexpr size_t n = expr_arity<F>;
  static_assert(n > 0, "te: the function must take 1 to 6 Expr arguments or a const std::vector<Var>&");
  if (v.size() != n)
    throw Error(std::string(what) + ": the function takes " + std::to_string(n) + " index arguments but the " + space +
                " has " + std::to_string(v.size()) + " dimensions");
  return call_with_vars(fn, v, std::make_index_sequence<n>{});
}
}  // namespace detail

/// compute({M, N}, [&](Expr i, Expr j) { return A(i, j) * 2; }, "B"): the lambda takes
/// one Expr per dimension (1 to 6), or a const std::vector<Var>&.
template <typename F>
Tensor compute(std::vector<Expr> shape, F fn, std::string name, std::vector<std::string> axis_names = {}) {
  if constexpr (std::is_invocable_v<F, const std::vector<Var>&>) {
    return compute_from_vars(std::move(shape), fn, std::move(name), std::move(axis_names));
  } else {
    return compute_from_vars(
        std::move(shape),
        [&fn](const std::vector<Var>& v) -> Expr { return detail::call_with_exprs(fn, v, "compute", "shape"); },
        std::move(name), std::move(axis_names));
  }
}

/// compute_tuple({M}, [&](Expr i) { return argmax(A(i, k), {k}); }, {"idx", "val"}): the
/// lambda takes one Expr per dimension (1 to 6), or a const std::vector<Var>&, and
/// returns a std::vector<Expr> (see compute_tuple_from_vars).
template <typename F>
std::vector<Tensor> compute_tuple(std::vector<Expr> shape, F fn, std::vector<std::string> names,
                                  std::vector<std::string> axis_names = {}) {
  if constexpr (std::is_invocable_v<F, const std::vector<Var>&>) {
    return compute_tuple_from_vars(std::move(shape), fn, std::move(names), std::move(axis_names));
  } else {
    return compute_tuple_from_vars(
        std::move(shape),
        [&fn](const std::vector<Var>& v) -> std::vector<Expr> {
          return detail::call_with_exprs(fn, v, "compute_tuple", "shape");
        },
        std::move(names), std::move(axis_names));
  }
}

/// scatter(base, {n, C}, [&](Expr i, Expr c) { return ScatterTo{{rows(i), c}, A(i, c)}; },
/// "out"): the lambda takes one Expr per domain dimension (1 to 6), or a
/// const std::vector<Var>&, and returns a ScatterTo (see scatter_from_vars).
template <typename F>
Tensor scatter(const Tensor& base, std::vector<Expr> domain, F fn, std::string name,
               std::vector<std::string> axis_names = {}) {
  if constexpr (std::is_invocable_v<F, const std::vector<Var>&>) {
    return scatter_from_vars(base, std::move(domain), fn, std::move(name), std::move(axis_names));
  } else {
    return scatter_from_vars(
        base, std::move(domain),
        [&fn](const std::vector<Var>& v) -> ScatterTo { return detail::call_with_exprs(fn, v, "scatter", "domain"); },
        std::move(name), std::move(axis_names));
  }
}

/// All operations reachable from outputs, producers before consumers.
TE_API std::vector<Operation> topo_sort(const std::vector<Tensor>& outputs);

}  // namespace te
