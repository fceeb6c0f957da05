// CudaKernel::launch_dims: evaluates the grid and block extents for given variable values.
#include <fmt/format.h>

#include "expr/analysis.h"
#include "te/cuda.h"

namespace te {

namespace {

int64_t launch_extent(const std::string& kernel, const Expr& e, const std::map<std::string, int64_t>& values) {
  std::optional<int64_t> v = evaluate_int(e, [&](const VarNode* n) -> std::optional<int64_t> {
    auto it = values.find(n->name);
    if (it == values.end())
      throw Error(
          fmt::format("CudaKernel::launch_dims: kernel '{}' needs a value for '{}' (its launch sizes "
                      "depend on it)",
                      kernel, n->name));
    return it->second;
  });
  if (!v)
    throw Error(
        fmt::format("CudaKernel::launch_dims: cannot evaluate {} of kernel '{}' on the host (only integer "
                    "arithmetic on the launch arguments)",
                    to_string(e), kernel));
  return *v;
}

}  // namespace

CudaLaunchDims CudaKernel::launch_dims(const std::map<std::string, int64_t>& values) const {
  CudaLaunchDims d;
  for (int i = 0; i < 3; ++i) {
    d.grid[i] = grid[i].defined() ? launch_extent(name, grid[i], values) : 1;
    d.block[i] = block[i].defined() ? launch_extent(name, block[i], values) : 1;
  }
  return d;
}

}  // namespace te
