/// \file
/// te kernels as PyTorch operators (library te_torch, target te::torch; built when
/// libtorch is found, never a dependency of te itself). docs/pytorch.md tells the whole
/// story: define, schedule, register, load, train.
///
///     te::Var n("n");
///     te::Tensor x = te::placeholder({n, 64}, te::Float(32), "x");
///     te::Tensor b = te::placeholder({64}, te::Float(32), "bias");
///     te::Tensor y = te::compute({n, 64}, [&](te::Expr i, te::Expr j) { return te::ops::gelu(x(i, j) + b(j)); },
///                                "y");
///     TE_TORCH_LIBRARY(myops, m) {
///       m.def("bias_gelu", {{x, b}, {y}});   // torch.ops.myops.bias_gelu(x, bias)
///     }
///
/// What an operator registered here does:
///  - Its schema comes from the placeholders' names: `bias_gelu(Tensor x, Tensor bias) ->
///    Tensor` (several outputs: a tuple). Its CPU kernel is te's JIT code, built once at
///    registration with the shapes symbolic: shape variables (te::Var) are bound from the
///    torch tensors' sizes at each call, and the outputs' sizes come from their shape
///    expressions (Function::make_arguments), so one registration serves every shape.
///  - Inputs pass without a copy (their data pointer, as a DLPack tensor). The outputs are
///    te arrays handed to PyTorch through DLPack, or, when the inputs have the sizes of the
///    last successful call, tensors from PyTorch's allocator (no copy either way). An input that is undefined, not on
///    the CPU, not contiguous, of another dtype or rank, or whose sizes contradict a shape
///    variable bound by an earlier input, is a c10::Error (Python: RuntimeError) naming
///    the operator and the argument.
///  - Autograd: when OpDef::differentiable and te::gradient() differentiates every output
///    with respect to the floating-point inputs, the op is differentiable: a second
///    operator `<name>_backward(Tensor grad_<output>..., Tensor <input>...)` (te's JIT code
///    of the adjoints, several outputs' contributions summed) runs in the backward pass.
///    Integer inputs (indices) and integer outputs get no gradient. Otherwise the op still
///    runs under autograd, and backward through it raises an error saying that it has no
///    gradient and why (te::gradient's message). Double backward (create_graph=True
///    through the backward) is an error.
///  - One registration has one dtype per argument (the placeholders'): register float32
///    and float64 variants under two names.
///  - CUDA: not registered yet. OpDef::schedule_cuda is refused with a te::Error at
///    registration (never ignored): on a CPU-only libtorch (Debian's) because PyTorch has
///    no CUDA dispatch there, and otherwise because te_torch does not compile te's CUDA C
///    into the extension yet (docs/pytorch.md, "CUDA").
#pragma once
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "te/build.h"
#include "te/schedule.h"
#include "te/tensor.h"

namespace te::torch {

/// One PyTorch operator made of te computes.
struct OpDef {
  /// An empty definition (fill in inputs and outputs).
  OpDef() = default;
  /// The operator computing `outputs` from `inputs`, with the default schedules:
  /// `m.def("add", {{x, y}, {z}})`.
  OpDef(std::vector<Tensor> inputs_, std::vector<Tensor> outputs_)
      : inputs(std::move(inputs_)), outputs(std::move(outputs_)) {}
  /// The operator's arguments, in order: placeholders, whose names (C identifiers,
  /// distinct) name the schema's arguments. Their shapes may hold te::Var, bound at each
  /// call from the tensors' sizes (a dimension that is exactly a variable binds it).
  std::vector<Tensor> inputs;
  /// The tensors returned to PyTorch, in order (one or more computes of the inputs). Every
  /// shape variable of an output must be bound by an input.
  std::vector<Tensor> outputs;
  /// Schedules the forward kernel: called with create_schedule(outputs). Empty:
  /// te::auto_schedule(outputs) (rules only, for the host CPU), or te's default schedule
  /// with a warning where auto_schedule refuses the graph.
  std::function<void(Schedule&)> schedule_cpu;
  /// Schedules the backward kernel: called with create_schedule(adjoints), where adjoints
  /// holds one tensor per floating-point input, in order (te::gradient's, summed over the
  /// outputs). Empty: te::auto_schedule(adjoints), or te's default schedule with a warning
  /// where auto_schedule refuses the graph; where te cannot build the derived backward
  /// then, the op has no gradient (OpInfo::no_gradient_reason says why) and a warning
  /// says so, while this schedule's failure is the registration's.
  std::function<void(Schedule&, const std::vector<Tensor>& adjoints)> schedule_backward_cpu;
  /// A CUDA kernel's schedule. Not supported yet: registration throws te::Error when this
  /// is set (see the file comment).
  std::function<void(Schedule&)> schedule_cuda;
  /// Derive the backward with te::gradient(). false: backward through the op is an error
  /// saying the op was registered without a gradient.
  bool differentiable = true;
  /// How both kernels are compiled (te::build's options).
  BuildOptions build_options;
};

/// What register_op() registered.
struct OpInfo {
  std::string name;             ///< "myops::bias_gelu"
  std::string schema;           ///< "myops::bias_gelu(Tensor x, Tensor bias) -> Tensor"
  std::string backward_schema;  ///< The backward operator's schema; empty without a gradient.
  bool has_gradient = false;    ///< Whether backward through the op works.
  /// Why the op has no gradient (OpDef::differentiable false, or te::gradient's message);
  /// empty when it has one.
  std::string no_gradient_reason;
};

/// Registers the operator `qualified_name` ("namespace::name", both C identifiers) with
/// PyTorch's dispatcher: its schema, its CPU kernel and its Autograd kernel (and the
/// backward operator, see the file comment). Both kernels are lowered and JIT-compiled
/// here, once. The registration lasts until the process ends. te::Error naming the
/// problem for a malformed name, an input that is not a placeholder or has a bad name,
/// an undefined output, an output shape no input binds, schedule_cuda (see above), a
/// failing schedule or build, or a name PyTorch already has.
TE_API OpInfo register_op(const std::string& qualified_name, OpDef def);

/// The operators of one namespace, as TE_TORCH_LIBRARY gives them.
class TE_API Library {
 public:
  /// The library of namespace ns (a C identifier; checked by def()).
  explicit Library(std::string ns) : ns_(std::move(ns)) {}
  /// register_op(ns + "::" + name, def).
  OpInfo def(const std::string& name, OpDef def);
  /// The namespace.
  const std::string& ns() const { return ns_; }

 private:
  std::string ns_;
};

namespace detail {
/// Runs a TE_TORCH_LIBRARY block when its shared library is loaded. A registration that
/// throws cannot propagate out of the loader: its message is printed to stderr as
/// "te::torch: registering the operators of '<ns>' (<file>:<line>) failed: ..." and the
/// library's remaining operators are not registered.
struct TE_API LibraryInit {
  LibraryInit(const char* ns, void (*init)(Library&), const char* file, int line);
};
}  // namespace detail

}  // namespace te::torch

/// Registers te operators in namespace `ns` when the shared library holding this block
/// is loaded (torch.ops.load_library(path) in Python, or linking it into a program):
///
///     TE_TORCH_LIBRARY(myops, m) { m.def("bias_gelu", {{x, b}, {y}}); }
///
/// At most one block per namespace per source file (as TORCH_LIBRARY_FRAGMENT).
#define TE_TORCH_LIBRARY(ns, m)                                                                                     \
  static void te_torch_library_init_##ns(::te::torch::Library&);                                                    \
  static const ::te::torch::detail::LibraryInit te_torch_library_static_init_##ns(#ns, &te_torch_library_init_##ns, \
                                                                                  __FILE__, __LINE__);              \
  void te_torch_library_init_##ns(::te::torch::Library& m)
