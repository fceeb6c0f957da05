#include "torch/cuda_kernel.h"

#include <ATen/ops/empty.h>
#include <c10/core/DeviceGuard.h>
#include <fmt/format.h>

#include <map>
#include <optional>

#include "expr/analysis.h"

namespace te::torch::detail {
namespace {

// PyTorch's dtype of a te type.
at::ScalarType scalar_type_of(DataType t) {
  if (t.is_scalar()) {
    if (t.is_bool()) return at::kBool;
    if (t.is_bfloat()) return at::kBFloat16;
    if (t.is_float() && t.bits() == 16) return at::kHalf;
    if (t.is_float() && t.bits() == 32) return at::kFloat;
    if (t.is_float() && t.bits() == 64) return at::kDouble;
    if (t.is_uint() && t.bits() == 8) return at::kByte;
    if (t.is_int() && t.bits() == 8) return at::kChar;
    if (t.is_int() && t.bits() == 16) return at::kShort;
    if (t.is_int() && t.bits() == 32) return at::kInt;
    if (t.is_int() && t.bits() == 64) return at::kLong;
  }
  throw Error("te::torch: PyTorch has no dtype for te's " + t.to_string());
}

// te's name of a PyTorch dtype ("float64"), for the messages.
std::string te_name_of(at::ScalarType t) {
  for (DataType d : {Bool(), BFloat(16), Float(16), Float(32), Float(64), UInt(8), Int(8), Int(16), Int(32), Int(64)})
    if (scalar_type_of(d) == t) return d.to_string();
  return c10::toString(t);
}

std::string shape_text(c10::IntArrayRef sizes) {
  return sizes.size() == 1 ? fmt::format("({},)", sizes[0]) : fmt::format("({})", fmt::join(sizes, ", "));
}

// The shape variables' values.
using Bindings = std::map<const VarNode*, int64_t>;

// The value of a shape expression with every variable bound; nullopt when one is not.
std::optional<int64_t> value_of(const Expr& e, const Bindings& env) {
  return evaluate_int(e, [&](const VarNode* v) -> std::optional<int64_t> {
    auto it = env.find(v);
    return it == env.end() ? std::nullopt : std::optional<int64_t>(it->second);
  });
}

bool fits(DataType t, int64_t v) {
  if (t.bits() >= 64) return true;
  const int64_t max = (int64_t{1} << (t.bits() - 1)) - 1;
  return v <= max;
}

}  // namespace

CudaKernel make_cuda_kernel(const std::string& op_name, const std::vector<std::string>& arg_names,
                            const LoweredFunc& func, const std::vector<CudaParam>& launcher_params,
                            const te_torch_cuda_kernel* entry, const te_torch_cuda_kernels* table) {
  CudaKernel k;
  k.op_name = op_name;
  k.arg_names = arg_names;
  for (const Param& p : func.params) {
    TE_ICHECK(p.is_buffer(), "te::torch: a CUDA kernel with a scalar parameter");
    (k.inputs.size() < arg_names.size() ? k.inputs : k.outputs).push_back(p.buffer);
  }
  for (const CudaParam& p : launcher_params)
    if (!p.is_buffer()) k.values.push_back(p.var);
  k.entry = entry;
  k.table = table;
  return k;
}

std::vector<at::Tensor> run_cuda_kernel(const CudaKernel& k, c10::ArrayRef<c10::IValue> args,
                                        c10::DeviceType device_type) {
  const size_t n = k.inputs.size();
  std::optional<c10::Device> device;
  std::string device_arg;
  std::vector<at::Tensor> inputs;
  for (size_t i = 0; i < n; ++i) {
    const at::Tensor& t = args[i].toTensor();
    const std::string& name = k.arg_names[i];
    const Buffer& b = k.inputs[i];
    TORCH_CHECK(t.defined(), k.op_name, ": argument '", name, "' is an undefined tensor");
    TORCH_CHECK(t.layout() == c10::kStrided, k.op_name, ": argument '", name, "' has layout ", t.layout(),
                "; te kernels take dense (strided) tensors");
    TORCH_CHECK(t.device().type() == device_type, k.op_name, ": argument '", name, "' is on device ", t.device(),
                ", but the operator's ", c10::DeviceTypeName(device_type, true),
                " kernel runs on the inputs' device: pass every input on one device");
    if (!device) {
      device = t.device();
      device_arg = name;
    }
    TORCH_CHECK(t.device() == *device, k.op_name, ": argument '", name, "' is on device ", t.device(), " but '",
                device_arg, "' is on ", *device, ": pass every input on one device");
    TORCH_CHECK(t.is_contiguous(), k.op_name, ": argument '", name, "' is not contiguous (sizes ", t.sizes(),
                ", strides ", t.strides(), "); pass it as .contiguous()");
    TORCH_CHECK(t.scalar_type() == scalar_type_of(b.dtype()), k.op_name, ": argument ", i + 1, " ('", name,
                "') has dtype ", te_name_of(t.scalar_type()), ", expected ", b.dtype().to_string());
    TORCH_CHECK(t.dim() == static_cast<int64_t>(b.ndim()), k.op_name, ": input '", name, "' has rank ", t.dim(),
                " (shape ", shape_text(t.sizes()), "), expected rank ", b.ndim());
    inputs.push_back(t);
  }

  // The shape variables, from the dimensions that are exactly one; then every dimension
  // checked against its expression.
  Bindings env;
  for (size_t i = 0; i < n; ++i) {
    const std::vector<Expr>& shape = k.inputs[i].shape();
    for (size_t d = 0; d < shape.size(); ++d) {
      const auto* v = shape[d].as<VarNode>();
      if (v == nullptr) continue;
      const int64_t extent = inputs[i].size(static_cast<int64_t>(d));
      TORCH_CHECK(fits(v->dtype, extent), k.op_name, ": input '", k.arg_names[i], "' has ", extent, " in dimension ", d,
                  ", which does not fit shape variable '", v->name, "' of type ", v->dtype.to_string());
      auto [it, fresh] = env.emplace(v, extent);
      TORCH_CHECK(fresh || it->second == extent, k.op_name, ": ", v->name, " is ", it->second,
                  " (given or bound earlier) but input '", k.arg_names[i], "' has ", extent, " in dimension ", d);
    }
  }
  for (size_t i = 0; i < n; ++i) {
    const std::vector<Expr>& shape = k.inputs[i].shape();
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d].as<VarNode>()) continue;
      std::optional<int64_t> expected = value_of(shape[d], env);
      const int64_t extent = inputs[i].size(static_cast<int64_t>(d));
      TORCH_CHECK(expected.has_value(), k.op_name, ": input '", k.arg_names[i], "' dimension ", d, " (",
                  to_string(shape[d]), ") reads a shape variable that no input binds");
      TORCH_CHECK(*expected == extent, k.op_name, ": argument ", i + 1, " ('", k.arg_names[i], "') has shape ",
                  shape_text(inputs[i].sizes()), ", but dimension ", d, " must be ", to_string(shape[d]), " = ",
                  *expected);
    }
  }

  std::vector<at::Tensor> outputs;
  std::vector<void*> buffers;
  for (const at::Tensor& t : inputs) buffers.push_back(t.data_ptr());
  for (const Buffer& b : k.outputs) {
    std::vector<int64_t> sizes;
    for (const Expr& e : b.shape()) {
      std::optional<int64_t> extent = value_of(e, env);
      TORCH_CHECK(extent.has_value() && *extent >= 0, k.op_name, ": output '", b.name(), "' has no size for ",
                  to_string(e));
      sizes.push_back(*extent);
    }
    outputs.push_back(at::empty(
        sizes, at::TensorOptions().dtype(scalar_type_of(b.dtype())).device(device.value_or(c10::Device(device_type)))));
    buffers.push_back(outputs.back().data_ptr());
  }
  std::vector<int64_t> values;
  for (const Var& v : k.values) {
    auto it = env.find(v.get());
    TORCH_CHECK(it != env.end(), k.op_name, ": the kernel needs '", v.name(), "', which no input binds");
    values.push_back(it->second);
  }

  const c10::DeviceIndex index = device && device->has_index() ? device->index() : 0;
  void* stream = device_type == c10::DeviceType::CUDA ? current_cuda_stream(index) : nullptr;
  const int error = k.entry->launch(buffers.data(), values.data(), index, stream);
  TORCH_CHECK(error == 0, k.op_name, ": launching te's CUDA kernel failed: ", k.table->error_string(error), " (error ",
              error, ")");
  return outputs;
}

}  // namespace te::torch::detail
