// What both te::torch test files need: calling a registered operator through PyTorch's
// dispatcher, and the message of the error a call throws.
#pragma once
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <functional>
#include <string>
#include <vector>

#include "te/error.h"

namespace te_torch_test {

// The operator `name` called boxed (as Python calls it), its outputs in order.
inline std::vector<at::Tensor> call_op(const std::string& name, std::vector<at::Tensor> args) {
  c10::OperatorHandle op = c10::Dispatcher::singleton().findSchemaOrThrow(name.c_str(), "");
  torch::jit::Stack stack(args.begin(), args.end());
  op.callBoxed(&stack);
  std::vector<at::Tensor> out;
  for (c10::IValue& v : stack) out.push_back(v.toTensor());
  return out;
}

// The message of the error f throws: a c10::Error (what PyTorch shows) or a te::Error.
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const c10::Error& e) {
    return e.what_without_backtrace();
  } catch (const te::Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace te_torch_test
