// te::torch::register_op: te computes as PyTorch operators (te/torch.h). The forward and
// backward kernels are te JIT functions called through boxed dispatcher kernels (and, in an
// extension built with CUDA, the compiled CUDA kernels of its table: cuda_kernel.h); the
// Autograd kernel records a torch::autograd::Function whose backward calls the backward
// operator.
#include "te/torch.h"

#include <ATen/DLConvertor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/GradMode.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/library.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>

#include "te/dlpack.h"
#include "te/log.h"
#include "te/module.h"
#include "torch/cuda_generator.h"
#include "torch/cuda_kernel.h"
#include "torch/cuda_source.h"
#include "torch/op_definition.h"

namespace te::torch {
namespace {

using detail::CudaKernel;
using detail::fail;
using detail::OpDefinition;

// One JIT kernel and how the dispatcher's arguments map onto it.
struct Kernel {
  std::string op_name;                 // "ns::op" or "ns::op_backward": the errors' prefix
  std::string no_cuda_reason;          // why it has no CUDA kernel (for a tensor on another device)
  Function fn;                         // reads the arguments, writes the outputs
  std::vector<std::string> arg_names;  // the schema's arguments, in order
  // The outputs of the last successful call's input sizes (make_arguments computed them):
  // a call with the same sizes allocates its outputs with PyTorch's allocator directly.
  struct Shapes {
    std::vector<int64_t> input_sizes;  // each input's rank, then its sizes
    std::vector<std::vector<int64_t>> output_sizes;
    std::vector<at::ScalarType> output_types;
  };
  mutable std::mutex shapes_mutex;
  mutable std::shared_ptr<const Shapes> last_shapes;
};

// What one registered operator needs at each call. Never freed: PyTorch may call the
// operator until the process ends.
struct OpState {
  std::string name;  // "ns::op"
  Kernel forward;
  Kernel backward;  // fn undefined without a gradient
  std::optional<CudaKernel> cuda_forward;
  std::optional<CudaKernel> cuda_backward;
  std::vector<bool> input_is_float;  // which inputs get an adjoint
  std::vector<bool> output_is_float;
  bool has_gradient = false;
  std::string no_gradient_reason;
  std::optional<c10::OperatorHandle> forward_handle;   // set once registered
  std::optional<c10::OperatorHandle> backward_handle;  // set once registered, with a gradient
};

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
// The operators' states and PyTorch registrations, kept until the process ends (never
// destroyed: static destructors of libtorch may already have run at exit).
std::vector<std::unique_ptr<OpState>>& states() {
  static auto* s = new std::vector<std::unique_ptr<OpState>>();
  return *s;
}
std::vector<std::unique_ptr<::torch::Library>>& libraries() {
  static auto* l = new std::vector<std::unique_ptr<::torch::Library>>();
  return *l;
}

// te's message with its function-name prefix ("ns_op: ...") replaced by the operator's.
std::string op_message(const Kernel& k, const std::string& what) {
  const std::string prefix = k.fn.defined() ? k.fn.name() + ": " : std::string();
  if (!prefix.empty() && what.compare(0, prefix.size(), prefix) == 0)
    return k.op_name + ": " + what.substr(prefix.size());
  return k.op_name + ": " + what;
}

// Runs kernel k on torch tensors: inputs borrowed (no copy), outputs te arrays handed to
// PyTorch through DLPack (no copy). Errors are c10::Errors naming the operator and argument.
std::vector<at::Tensor> run_kernel(const Kernel& k, c10::ArrayRef<c10::IValue> args) {
  const size_t n = k.arg_names.size();
  std::vector<dlpack::DLTensor> dl(n);
  std::vector<NDArray> arrays;
  arrays.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const at::Tensor& t = args[i].toTensor();
    const std::string& name = k.arg_names[i];
    TORCH_CHECK(t.defined(), k.op_name, ": argument '", name, "' is an undefined tensor");
    TORCH_CHECK(t.layout() == c10::kStrided, k.op_name, ": argument '", name, "' has layout ", t.layout(),
                "; te kernels take dense (strided) tensors");
    TORCH_CHECK(t.device().is_cpu(), k.op_name, ": argument '", name, "' is on device ", t.device(),
                ", but the operator has a CPU kernel only (",
                t.device().is_cuda() ? k.no_cuda_reason : "te's kernels run on the CPU, and on CUDA with OpDef::cuda",
                ")");
    TORCH_CHECK(t.is_contiguous(), k.op_name, ": argument '", name, "' is not contiguous (sizes ", t.sizes(),
                ", strides ", t.strides(), "); pass it as .contiguous()");
    ::DLDataType type = at::getDLDataType(t);
    dl[i].data = t.data_ptr();
    dl[i].device = {dlpack::kDLCPU, 0};
    dl[i].ndim = static_cast<int32_t>(t.dim());
    dl[i].dtype = {type.code, type.bits, type.lanes};
    dl[i].shape = const_cast<int64_t*>(t.sizes().data());
    dl[i].strides = nullptr;  // contiguous: compact row-major
    dl[i].byte_offset = 0;
  }
  std::vector<int64_t> key;
  for (size_t i = 0; i < n; ++i) {
    key.push_back(dl[i].ndim);
    key.insert(key.end(), dl[i].shape, dl[i].shape + dl[i].ndim);
  }
  std::vector<at::Tensor> outputs;
  try {
    for (size_t i = 0; i < n; ++i) arrays.push_back(NDArray::borrow_dlpack(dl[i]));
    std::shared_ptr<const Kernel::Shapes> known;
    {
      std::lock_guard<std::mutex> lock(k.shapes_mutex);
      if (k.last_shapes && k.last_shapes->input_sizes == key) known = k.last_shapes;
    }
    if (known) {
      // The sizes of the last call: PyTorch allocates the outputs, te writes them.
      std::vector<Argument> call_args(arrays.begin(), arrays.end());
      std::vector<dlpack::DLTensor> out_dl(known->output_sizes.size());
      for (size_t o = 0; o < out_dl.size(); ++o) {
        outputs.push_back(at::empty(known->output_sizes[o], at::TensorOptions().dtype(known->output_types[o])));
        ::DLDataType type = at::getDLDataType(outputs[o]);
        out_dl[o] = {outputs[o].data_ptr(),
                     {dlpack::kDLCPU, 0},
                     static_cast<int32_t>(outputs[o].dim()),
                     {type.code, type.bits, type.lanes},
                     const_cast<int64_t*>(outputs[o].sizes().data()),
                     nullptr,
                     0};
        call_args.emplace_back(&out_dl[o]);
      }
      k.fn.call(call_args);
      return outputs;
    }
    // New sizes: make_arguments binds the shape variables and makes the outputs (te
    // arrays, handed to PyTorch through DLPack).
    std::vector<Argument> call_args = k.fn.make_arguments(arrays);
    k.fn.call(call_args);
    auto shapes = std::make_shared<Kernel::Shapes>();
    shapes->input_sizes = std::move(key);
    for (size_t p = n; p < call_args.size(); ++p) {
      outputs.push_back(at::fromDLPack(dlpack::to_c<DLManagedTensor>(call_args[p].array().to_dlpack())));
      shapes->output_sizes.push_back(outputs.back().sizes().vec());
      shapes->output_types.push_back(outputs.back().scalar_type());
    }
    std::lock_guard<std::mutex> lock(k.shapes_mutex);
    k.last_shapes = std::move(shapes);
  } catch (const Error& e) {
    TORCH_CHECK(false, op_message(k, e.what()));
  }
  return outputs;
}

void push_outputs(::torch::jit::Stack* stack, std::vector<at::Tensor> outputs) {
  for (at::Tensor& t : outputs) stack->emplace_back(std::move(t));
}

// The CPU kernel of an operator (forward or backward): its te JIT function.
class CpuKernel : public c10::OperatorKernel {
 public:
  explicit CpuKernel(const Kernel* k) : k_(k) {}
  void operator()(const c10::OperatorHandle&, c10::DispatchKeySet, ::torch::jit::Stack* stack) {
    const size_t n = k_->arg_names.size();
    std::vector<at::Tensor> outputs = run_kernel(*k_, ::torch::jit::last(*stack, n));
    ::torch::jit::drop(*stack, n);
    push_outputs(stack, std::move(outputs));
  }

 private:
  const Kernel* k_;
};

// The CUDA kernel of an operator: te's CUDA C, compiled into the extension.
class CudaKernelFunctor : public c10::OperatorKernel {
 public:
  explicit CudaKernelFunctor(const CudaKernel* k) : k_(k) {}
  void operator()(const c10::OperatorHandle&, c10::DispatchKeySet, ::torch::jit::Stack* stack) {
    const size_t n = k_->arg_names.size();
    std::vector<at::Tensor> outputs =
        detail::run_cuda_kernel(*k_, ::torch::jit::last(*stack, n), c10::DeviceType::CUDA);
    ::torch::jit::drop(*stack, n);
    push_outputs(stack, std::move(outputs));
  }

 private:
  const CudaKernel* k_;
};

std::vector<at::Tensor> call_boxed(const c10::OperatorHandle& op, std::vector<c10::IValue> args) {
  ::torch::jit::Stack stack(std::make_move_iterator(args.begin()), std::make_move_iterator(args.end()));
  op.callBoxed(&stack);
  std::vector<at::Tensor> out;
  out.reserve(stack.size());
  for (c10::IValue& v : stack) out.push_back(std::move(v).toTensor());
  return out;
}

// The autograd node of a te operator: forward runs the operator below autograd, backward
// its backward operator (or the error saying why there is none).
struct TeAutogradFunction : public ::torch::autograd::Function<TeAutogradFunction> {
  static ::torch::autograd::variable_list forward(::torch::autograd::AutogradContext* ctx, int64_t state,
                                                  at::TensorList inputs) {
    const auto* st = reinterpret_cast<const OpState*>(state);
    ctx->saved_data["te_op"] = state;
    ctx->save_for_backward(inputs.vec());
    std::vector<at::Tensor> outputs;
    {
      at::AutoDispatchBelowADInplaceOrView guard;
      outputs = call_boxed(*st->forward_handle, std::vector<c10::IValue>(inputs.begin(), inputs.end()));
    }
    for (size_t k = 0; k < outputs.size(); ++k)
      if (!st->output_is_float[k]) ctx->mark_non_differentiable({outputs[k]});
    return outputs;
  }

  static ::torch::autograd::variable_list backward(::torch::autograd::AutogradContext* ctx,
                                                   ::torch::autograd::variable_list grads) {
    const auto* st = reinterpret_cast<const OpState*>(ctx->saved_data["te_op"].toInt());
    TORCH_CHECK(st->has_gradient, st->name, " has no gradient: ", st->no_gradient_reason);
    std::vector<at::Tensor> saved = ctx->get_saved_variables();
    std::vector<c10::IValue> args;
    for (size_t k = 0; k < grads.size(); ++k)
      if (st->output_is_float[k]) args.emplace_back(grads[k].contiguous());
    for (at::Tensor& t : saved) args.emplace_back(std::move(t));
    std::vector<at::Tensor> adjoints = call_boxed(*st->backward_handle, std::move(args));
    ::torch::autograd::variable_list result(1 + st->input_is_float.size());  // [0]: the state
    size_t next = 0;
    for (size_t i = 0; i < st->input_is_float.size(); ++i)
      if (st->input_is_float[i]) result[1 + i] = std::move(adjoints[next++]);
    return result;
  }
};

bool any_requires_grad(c10::ArrayRef<c10::IValue> args) {
  for (const c10::IValue& v : args)
    if (v.isTensor() && v.toTensor().defined() && v.toTensor().requires_grad()) return true;
  return false;
}

// The Autograd kernel of a te operator.
class AutogradKernel : public c10::OperatorKernel {
 public:
  explicit AutogradKernel(const OpState* st) : st_(st) {}
  void operator()(const c10::OperatorHandle& op, c10::DispatchKeySet keys, ::torch::jit::Stack* stack) {
    const size_t n = st_->forward.arg_names.size();
    if (!c10::GradMode::is_enabled() || !any_requires_grad(::torch::jit::last(*stack, n))) {
      op.redispatchBoxed(keys & c10::after_autograd_keyset, stack);
      return;
    }
    std::vector<at::Tensor> inputs;
    inputs.reserve(n);
    for (const c10::IValue& v : ::torch::jit::last(*stack, n)) inputs.push_back(v.toTensor());
    ::torch::jit::drop(*stack, n);
    push_outputs(stack, TeAutogradFunction::apply(reinterpret_cast<int64_t>(st_), at::TensorList(inputs)));
  }

 private:
  const OpState* st_;
};

// The Autograd kernel of a backward operator: no double backward.
class BackwardAutogradKernel : public c10::OperatorKernel {
 public:
  explicit BackwardAutogradKernel(const OpState* st) : st_(st) {}
  void operator()(const c10::OperatorHandle& op, c10::DispatchKeySet keys, ::torch::jit::Stack* stack) {
    const size_t n = st_->backward.arg_names.size();
    TORCH_CHECK(!c10::GradMode::is_enabled() || !any_requires_grad(::torch::jit::last(*stack, n)),
                st_->backward.op_name,
                ": double backward (create_graph=True, or a gradient of the gradient) is not supported: "
                "te::torch derives first derivatives only");
    op.redispatchBoxed(keys & c10::after_autograd_keyset, stack);
  }

 private:
  const OpState* st_;
};

// The kernels of one operator: te's JIT function for CPU tensors, the same function for
// every other backend (CompositeExplicitAutograd: its checks then name the argument on the
// wrong device or layout, where PyTorch's message would only name the backend), and the
// Autograd kernel.
template <typename AutogradFunctor>
void impl_kernels(::torch::Library& lib, const std::string& name, const Kernel* kernel, const CudaKernel* cuda,
                  std::unique_ptr<AutogradFunctor> autograd) {
  for (c10::DispatchKey key : {c10::DispatchKey::CPU, c10::DispatchKey::CompositeExplicitAutograd})
    lib.impl(name.c_str(),
             ::torch::dispatch(key, ::torch::CppFunction::makeFromBoxedFunctor(std::make_unique<CpuKernel>(kernel))));
  if (cuda)
    lib.impl(name.c_str(), ::torch::dispatch(c10::DispatchKey::CUDA, ::torch::CppFunction::makeFromBoxedFunctor(
                                                                         std::make_unique<CudaKernelFunctor>(cuda))));
  lib.impl(name.c_str(), ::torch::dispatch(c10::DispatchKey::Autograd,
                                           ::torch::CppFunction::makeFromBoxedFunctor(std::move(autograd))));
}

std::string schema_of(const std::string& name, const std::vector<std::string>& args, size_t outputs) {
  std::ostringstream s;
  s << name << "(";
  for (size_t i = 0; i < args.size(); ++i) s << (i ? ", " : "") << "Tensor " << args[i];
  s << ") -> ";
  if (outputs == 1) return s.str() + "Tensor";
  s << "(";
  for (size_t k = 0; k < outputs; ++k) s << (k ? ", " : "") << "Tensor";
  s << ")";
  return s.str();
}

Function build_kernel(const Schedule& s, const std::vector<Tensor>& args, const std::string& c_name,
                      const BuildOptions& options) {
  return build(detail::lower_kernel(s, args, c_name), options)(c_name);
}

// The extension's compiled kernel for k, checked against the source te makes now.
const te_torch_cuda_kernel* compiled_kernel(const std::string& name, const te_torch_cuda_kernels& table,
                                            const detail::CudaKernelSource& k) {
  for (int i = 0; i < table.count; ++i) {
    const te_torch_cuda_kernel& e = table.kernels[i];
    if (e.op != k.op) continue;
    if (e.source_hash != k.hash)
      fail(name, "the CUDA kernel of '" + k.op +
                     "' compiled into the extension is not the one its definition gives now (the extension's "
                     "generator ran on other sources, or another te): rebuild the extension");
    return &e;
  }
  fail(name, "the extension's compiled CUDA kernels have none for '" + k.op +
                 "' (its generator ran on other sources): rebuild the extension");
}

// The CUDA kernels of op, from the extension's table.
void add_cuda_kernels(OpState& st, const OpDefinition& op, const OpDef& def, const te_torch_cuda_kernels* table) {
  if (!detail::wants_cuda(def)) {
    st.forward.no_cuda_reason = st.backward.no_cuda_reason =
        "it was registered without a CUDA kernel: set OpDef::cuda or OpDef::schedule_cuda";
    return;
  }
  detail::OpCudaKernels k = detail::cuda_kernels_of(op, def);
  st.cuda_forward =
      detail::make_cuda_kernel(op.name, st.forward.arg_names, k.forward->func, k.forward->module.launcher_params(),
                               compiled_kernel(op.name, *table, *k.forward), table);
  if (k.backward && st.has_gradient)
    st.cuda_backward = detail::make_cuda_kernel(k.backward->op, st.backward.arg_names, k.backward->func,
                                                k.backward->module.launcher_params(),
                                                compiled_kernel(op.name, *table, *k.backward), table);
  else
    st.backward.no_cuda_reason =
        "its CUDA backward: " + (k.no_backward_reason.empty() ? st.no_gradient_reason : k.no_backward_reason);
}

OpInfo register_with(const std::string& qualified_name, const OpDef& def, const te_torch_cuda_kernels* cuda_table);

}  // namespace

OpInfo register_op(const std::string& qualified_name, OpDef def) { return register_with(qualified_name, def, nullptr); }

namespace {

OpInfo register_with(const std::string& qualified_name, const OpDef& def, const te_torch_cuda_kernels* cuda_table) {
  const OpDefinition op = detail::define_op(qualified_name, def);
  if (detail::wants_cuda(def) && cuda_table == nullptr)
    fail(qualified_name,
         "OpDef::cuda or OpDef::schedule_cuda asks for a CUDA kernel, but there are no compiled CUDA kernels to "
         "register: define the operator in a TE_TORCH_LIBRARY block of an extension built with "
         "te_add_torch_extension(<name> SOURCES ... CUDA) (docs/pytorch.md, \"CUDA\")");
  {
    std::lock_guard<std::mutex> lock(registry_mutex());
    if (c10::Dispatcher::singleton().findSchema({qualified_name, ""}).has_value())
      fail(qualified_name, "PyTorch already has an operator of this name; register each operator once");
  }

  auto st = std::make_unique<OpState>();
  st->name = qualified_name;
  st->input_is_float = op.input_is_float;
  st->output_is_float = op.output_is_float;
  st->no_gradient_reason = op.no_gradient_reason;
  try {
    Schedule s =
        detail::schedule_kernel(qualified_name, "forward", "schedule_cpu", Target(), def.outputs, def.schedule_cpu);
    st->forward.fn = build_kernel(s, op.forward_args, op.c_name, def.build_options);
  } catch (const Error& e) {
    fail(qualified_name, std::string("the forward kernel: ") + e.what());
  }
  st->forward.op_name = qualified_name;
  st->forward.arg_names = op.input_names;

  if (!op.adjoints.empty()) {
    if (def.schedule_backward_cpu) {
      // The user's schedule: its failure is the registration's.
      try {
        Schedule s = create_schedule(op.adjoints);
        def.schedule_backward_cpu(s, op.adjoints);
        st->backward.fn = build_kernel(s, op.backward_args, op.c_name + "_backward", def.build_options);
      } catch (const Error& e) {
        fail(qualified_name, std::string("the backward kernel: ") + e.what());
      }
    } else {
      // The derived backward with te's schedule: where te cannot build it, the forward
      // still works and backward says why (as without a gradient).
      try {
        Schedule s = detail::schedule_kernel(qualified_name, "backward", "schedule_backward_cpu", Target(), op.adjoints,
                                             nullptr);
        st->backward.fn = build_kernel(s, op.backward_args, op.c_name + "_backward", def.build_options);
      } catch (const Error& e) {
        st->no_gradient_reason = std::string("te cannot build its backward kernel: ") + e.what();
        log_message(LogLevel::Warn, "te::torch::register_op('" + qualified_name + "'): " + st->no_gradient_reason +
                                        " (backward through the op is an error)");
      }
    }
    if (st->backward.fn.defined()) {
      st->backward.op_name = qualified_name + "_backward";
      st->backward.arg_names = op.backward_arg_names;
      st->has_gradient = true;
    }
  }
  add_cuda_kernels(*st, op, def, cuda_table);
  const size_t float_inputs = static_cast<size_t>(std::count(op.input_is_float.begin(), op.input_is_float.end(), true));
  const std::string& ns = op.ns;
  const std::string& short_name = op.short_name;

  OpInfo info;
  info.name = qualified_name;
  info.schema = schema_of(qualified_name, st->forward.arg_names, def.outputs.size());
  info.has_gradient = st->has_gradient;
  info.no_gradient_reason = st->no_gradient_reason;
  if (st->has_gradient) info.backward_schema = schema_of(st->backward.op_name, st->backward.arg_names, float_inputs);
  info.has_cuda_kernel = st->cuda_forward.has_value();
  info.has_cuda_backward = st->cuda_backward.has_value();

  std::lock_guard<std::mutex> lock(registry_mutex());
  const OpState* state = st.get();
  try {
    auto lib = std::make_unique<::torch::Library>(::torch::Library::FRAGMENT, ns, c10::nullopt, __FILE__, __LINE__);
    lib->def(schema_of(short_name, st->forward.arg_names, def.outputs.size()).c_str());
    impl_kernels(*lib, short_name, &state->forward, state->cuda_forward ? &*state->cuda_forward : nullptr,
                 std::make_unique<AutogradKernel>(state));
    st->forward_handle = c10::Dispatcher::singleton().findSchemaOrThrow(qualified_name.c_str(), "");
    if (st->has_gradient) {
      const std::string bwd = short_name + "_backward";
      lib->def(schema_of(bwd, st->backward.arg_names, float_inputs).c_str());
      impl_kernels(*lib, bwd, &state->backward, state->cuda_backward ? &*state->cuda_backward : nullptr,
                   std::make_unique<BackwardAutogradKernel>(state));
      st->backward_handle = c10::Dispatcher::singleton().findSchemaOrThrow(st->backward.op_name.c_str(), "");
    }
    libraries().push_back(std::move(lib));
  } catch (const c10::Error& e) {
    fail(qualified_name, std::string("PyTorch refused the registration: ") + e.what_without_backtrace());
  }
  states().push_back(std::move(st));
  return info;
}

}  // namespace

OpInfo Library::def(const std::string& name, OpDef def) {
  if (generator_) return generator_->def(ns_ + "::" + name, def);
  return register_with(ns_ + "::" + name, def, cuda_kernels_);
}

namespace detail {
LibraryInit::LibraryInit(const char* ns, void (*init)(Library&), const char* file, int line, LibraryMode mode,
                         const te_torch_cuda_kernels* (*cuda_kernels)()) {
  if (mode == LibraryMode::GenerateCuda) {
    record_library(ns, init, file, line);
    return;
  }
  try {
    Library lib(ns, cuda_kernels ? cuda_kernels() : nullptr, nullptr);
    init(lib);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "te::torch: registering the operators of '%s' (%s:%d) failed: %s\n", ns, file, line, e.what());
  }
}

std::vector<at::Tensor> run_cuda_kernel_on_host(const std::string& op, const std::vector<at::Tensor>& inputs) {
  const CudaKernel* k = nullptr;
  {
    std::lock_guard<std::mutex> lock(registry_mutex());
    for (const auto& st : states()) {
      if (st->cuda_forward && st->cuda_forward->op_name == op) k = &*st->cuda_forward;
      if (st->cuda_backward && st->cuda_backward->op_name == op) k = &*st->cuda_backward;
    }
  }
  TORCH_CHECK(k != nullptr, "te::torch: no registered operator has a CUDA kernel named '", op, "'");
  std::vector<c10::IValue> args(inputs.begin(), inputs.end());
  return run_cuda_kernel(*k, args, c10::DeviceType::CPU);
}
}  // namespace detail

}  // namespace te::torch
