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
///  - CUDA: with OpDef::cuda (or OpDef::schedule_cuda) the op also gets a CUDA kernel:
///    te's CUDA C for the op (and for its backward), written at build time and compiled
///    by nvcc into the extension by te_add_torch_extension(<name> SOURCES ... CUDA), runs
///    on PyTorch's current stream of the inputs' device. Registration regenerates that
///    source from the definition and refuses an extension whose compiled kernels differ
///    (built from other sources); an op asking for CUDA in an extension built without
///    CUDA, or registered by register_op() directly, is refused (docs/pytorch.md, "CUDA").
#pragma once
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "te/build.h"
#include "te/cuda.h"
#include "te/schedule.h"
#include "te/tensor.h"
#include "te/torch_cuda_kernels.h"

namespace at {
class Tensor;
}

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
  /// Give the operator a CUDA kernel (see the file comment): scheduled by schedule_cuda,
  /// or by te::auto_schedule for target "cuda" where that is empty. Setting
  /// schedule_cuda implies it.
  bool cuda = false;
  /// Schedules the CUDA kernel: called with create_schedule(outputs); it must bind the
  /// loops to blockIdx/threadIdx (te::build_cuda's rules).
  std::function<void(Schedule&)> schedule_cuda;
  /// Schedules the CUDA backward kernel, as schedule_backward_cpu. Empty:
  /// te::auto_schedule(adjoints, "cuda"); where that fails, the backward runs on the CPU
  /// only (a warning says why), while this schedule's failure is the registration's.
  std::function<void(Schedule&, const std::vector<Tensor>& adjoints)> schedule_backward_cuda;
  /// How the CUDA kernels are generated (te::build_cuda's options).
  CudaOptions cuda_options;
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
  bool has_cuda_kernel = false;    ///< Whether the op has a CUDA kernel.
  bool has_cuda_backward = false;  ///< Whether its backward operator has one.
};

/// Registers the operator `qualified_name` ("namespace::name", both C identifiers) with
/// PyTorch's dispatcher: its schema, its CPU kernel and its Autograd kernel (and the
/// backward operator, see the file comment). Both kernels are lowered and JIT-compiled
/// here, once. The registration lasts until the process ends. te::Error naming the
/// problem for a malformed name, an input that is not a placeholder or has a bad name,
/// an undefined output, an output shape no input binds, a CUDA kernel asked for (it needs
/// the extension's compiled kernels: TE_TORCH_LIBRARY in a te_add_torch_extension(...
/// CUDA) extension), a failing schedule or build, or a name PyTorch already has.
TE_API OpInfo register_op(const std::string& qualified_name, OpDef def);

namespace detail {
/// What a TE_TORCH_LIBRARY block does with its operators.
enum class LibraryMode : uint8_t {
  Register,     ///< register them with PyTorch (an extension, a program)
  GenerateCuda  ///< write their CUDA kernels (te_add_torch_extension's generator)
};
class CudaGenerator;
}  // namespace detail

/// The operators of one namespace, as TE_TORCH_LIBRARY gives them.
class TE_API Library {
 public:
  /// The library of namespace ns (a C identifier; checked by def()), registering with
  /// register_op (no CUDA kernels).
  explicit Library(std::string ns) : ns_(std::move(ns)) {}
  /// The library of a TE_TORCH_LIBRARY block (see detail::LibraryInit).
  Library(std::string ns, const te_torch_cuda_kernels* cuda_kernels, detail::CudaGenerator* generator)
      : ns_(std::move(ns)), cuda_kernels_(cuda_kernels), generator_(generator) {}
  /// register_op(ns + "::" + name, def), with the extension's CUDA kernels.
  OpInfo def(const std::string& name, OpDef def);
  /// The namespace.
  const std::string& ns() const { return ns_; }

 private:
  std::string ns_;
  const te_torch_cuda_kernels* cuda_kernels_ = nullptr;
  detail::CudaGenerator* generator_ = nullptr;
};

namespace detail {
/// Runs a TE_TORCH_LIBRARY block when its shared library is loaded (mode Register), with
/// the extension's CUDA kernel table where it has one; or records it for the CUDA
/// generator (mode GenerateCuda: cuda_generator_main runs it). A registration that
/// throws cannot propagate out of the loader: its message is printed to stderr as
/// "te::torch: registering the operators of '<ns>' (<file>:<line>) failed: ..." and the
/// library's remaining operators are not registered.
struct TE_API LibraryInit {
  LibraryInit(const char* ns, void (*init)(Library&), const char* file, int line, LibraryMode mode,
              const te_torch_cuda_kernels* (*cuda_kernels)());
};
/// The main() of te_add_torch_extension's CUDA generator: `<program> <directory>
/// <extension name>` writes the CUDA kernels of every TE_TORCH_LIBRARY block linked into
/// the program, one .cu file per kernel, and the table `<extension name>_cuda_table.cpp`.
/// Returns the exit status (1 with a message on stderr when an operator fails).
TE_API int cuda_generator_main(int argc, char** argv);
/// Runs the CUDA kernel of operator `op` ("ns::op" or "ns::op_backward") on CPU tensors,
/// its outputs allocated on the CPU: for an extension whose kernels were compiled by the
/// host compiler against te's CUDA emulation (te's own tests), where device pointers are
/// host pointers. c10::Error as the CUDA kernel's.
TE_API std::vector<at::Tensor> run_cuda_kernel_on_host(const std::string& op, const std::vector<at::Tensor>& inputs);
}  // namespace detail

}  // namespace te::torch

/// Registers te operators in namespace `ns` when the shared library holding this block
/// is loaded (torch.ops.load_library(path) in Python, or linking it into a program):
///
///     TE_TORCH_LIBRARY(myops, m) { m.def("bias_gelu", {{x, b}, {y}}); }
///
/// At most one block per namespace per source file (as TORCH_LIBRARY_FRAGMENT).
#define TE_TORCH_LIBRARY(ns, m)                                                                                  \
  static void te_torch_library_init_##ns(::te::torch::Library&);                                                 \
  static const ::te::torch::detail::LibraryInit te_torch_library_static_init_##ns(                               \
      #ns, &te_torch_library_init_##ns, __FILE__, __LINE__, TE_TORCH_DETAIL_MODE, TE_TORCH_DETAIL_CUDA_KERNELS); \
  void te_torch_library_init_##ns(::te::torch::Library& m)

// te_add_torch_extension(... CUDA) compiles the sources twice: for its generator
// (TE_TORCH_GENERATE_CUDA) and for the extension, whose generated table of compiled
// kernels TE_TORCH_CUDA_KERNELS names.
#if defined(TE_TORCH_GENERATE_CUDA)
/// What TE_TORCH_LIBRARY blocks do here: record their operators for the CUDA generator.
#define TE_TORCH_DETAIL_MODE ::te::torch::detail::LibraryMode::GenerateCuda
#else
/// What TE_TORCH_LIBRARY blocks do here: register their operators with PyTorch.
#define TE_TORCH_DETAIL_MODE ::te::torch::detail::LibraryMode::Register
#endif
#if defined(TE_TORCH_CUDA_KERNELS) && !defined(TE_TORCH_GENERATE_CUDA)
extern "C" const te_torch_cuda_kernels* TE_TORCH_CUDA_KERNELS(void);
/// The extension's table of compiled CUDA kernels (te_add_torch_extension(... CUDA)).
#define TE_TORCH_DETAIL_CUDA_KERNELS (&TE_TORCH_CUDA_KERNELS)
#else
/// No compiled CUDA kernels in this library.
#define TE_TORCH_DETAIL_CUDA_KERNELS nullptr
#endif
