// The process-wide table of host functions (te::register_extern), read by interpret()
// when it compiles a function: like the JIT's symbol table, state that belongs to the
// process rather than to one call.
#include "interpret/extern_registry.h"

#include <fmt/format.h>

#include <mutex>
#include <unordered_map>

#include "expr/extern_calls.h"

namespace te {
namespace {

struct HostFunctionRegistry {
  std::mutex mutex;
  std::unordered_map<std::string, std::shared_ptr<const HostFunction>> functions;
};

HostFunctionRegistry& host_functions() {
  static HostFunctionRegistry* r = new HostFunctionRegistry();  // outlives static objects that interpret() at exit
  return *r;
}

}  // namespace

void register_extern(const std::string& name, HostFunction fn) {
  if (!is_c_identifier(name))
    throw Error(fmt::format("register_extern: '{}' is not a C identifier (the name call_extern uses)", name));
  if (!fn.fn) throw Error(fmt::format("register_extern '{}': the function is empty", name));
  for (DataType t : fn.params)
    if (!is_extern_type(t))
      throw Error(
          fmt::format("register_extern '{}': parameter type {} is not one call_extern passes (bool, "
                      "int8..int64, uint8..uint64, float32, float64)",
                      name, t.to_string()));
  if (!is_extern_type(fn.ret))
    throw Error(
        fmt::format("register_extern '{}': result type {} is not one call_extern returns (bool, "
                    "int8..int64, uint8..uint64, float32, float64)",
                    name, fn.ret.to_string()));
  HostFunctionRegistry& r = host_functions();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.functions[name] = std::make_shared<const HostFunction>(std::move(fn));
}

bool unregister_extern(const std::string& name) {
  HostFunctionRegistry& r = host_functions();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.functions.erase(name) != 0;
}

std::shared_ptr<const HostFunction> interp::find_host_function(const std::string& name) {
  HostFunctionRegistry& r = host_functions();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.functions.find(name);
  return it == r.functions.end() ? nullptr : it->second;
}

}  // namespace te
