#include "gpu_kit/ansor_bench.h"

#include <te/auto_schedule.h>

#include <map>

#include "ansor_suite.h"

namespace te {

namespace {

using nlohmann::json;

// How PyTorch computes a suite kernel from the same buffers: a convolution through
// F.conv{1,2,3}d / conv_transpose2d with the activation viewed channels-first and the
// weight permuted into PyTorch's (out, in / groups, k...) ((in, out, k...) transposed),
// or a reference of its own.
struct TorchCall {
  std::string reference;
  json args = json::object();
};

// groups: a count, or "channels" (depthwise: one group per input channel).
TorchCall conv(int dims, bool channels_last, std::vector<int> weight_perm, int stride, int padding, int dilation = 1,
               json groups = 1, bool transposed = false) {
  return {"conv",
          {{"dims", dims},
           {"channels_last", channels_last},
           {"weight_perm", weight_perm},
           {"stride", stride},
           {"padding", padding},
           {"dilation", dilation},
           {"groups", groups},
           {"transposed", transposed}}};
}

// The suite's kernels by name (bench/ansor_suite.h's definitions: TVM's weights are
// (k..., in, out); depthwise (k, k, channels, 1)).
const std::map<std::string, TorchCall>& torch_calls() {
  static const std::map<std::string, TorchCall> calls = {
      {"ansor_c1d", conv(1, true, {2, 1, 0}, 2, 1)},
      {"ansor_c2d", conv(2, true, {3, 2, 0, 1}, 2, 3)},
      {"ansor_c3d", conv(3, true, {4, 3, 0, 1, 2}, 2, 3)},
      {"ansor_gmm", {"matmul", json::object()}},
      {"ansor_grp", conv(2, true, {3, 2, 0, 1}, 2, 1, 1, 4)},
      {"ansor_dil", conv(2, true, {3, 2, 0, 1}, 2, 3, 2)},
      {"ansor_dep", conv(2, true, {2, 3, 0, 1}, 1, 1, 1, "channels")},
      {"ansor_t2d", conv(2, true, {2, 3, 0, 1}, 2, 1, 1, 1, true)},
      {"ansor_cap", {"capsule_conv", {{"kernel", 3}, {"stride", 2}, {"padding", 1}}}},
      {"ansor_nrm", {"norm", json::object()}},
      {"ansor_c2d_nchw", conv(2, false, {0, 1, 2, 3}, 2, 3)},
      {"ansor_grp_nchw", conv(2, false, {0, 1, 2, 3}, 2, 1, 1, 4)},
      {"ansor_dil_nchw", conv(2, false, {0, 1, 2, 3}, 2, 3, 2)},
      {"ansor_dep_nchw", conv(2, false, {0, 1, 2, 3}, 1, 1, 1, "channels")},
      {"ansor_t2d_nchw", conv(2, false, {0, 1, 2, 3}, 2, 1, 1, 1, true)},
      {"ansor_c2d_small", conv(2, true, {3, 2, 0, 1}, 1, 0)},
      {"ansor_c2d_small_nchw", conv(2, false, {0, 1, 2, 3}, 1, 0)},
      {"ansor_c2d_deep", conv(2, true, {3, 2, 0, 1}, 1, 1)},
      {"ansor_c2d_deep_nchw", conv(2, false, {0, 1, 2, 3}, 1, 1)},
  };
  return calls;
}

std::vector<int64_t> const_shape(const Tensor& t) {
  std::vector<int64_t> shape;
  for (const Expr& e : t.shape()) shape.push_back(*as_const_int(e));
  return shape;
}

}  // namespace

json ansor_torch_call(const std::string& name) {
  auto call = torch_calls().find(name);
  TE_ICHECK(call != torch_calls().end(), "gpu kit: no PyTorch call for " + name);
  return {{"reference", call->second.reference}, {"reference_args", call->second.args}};
}

std::vector<BenchCase> ansor_bench_cases() {
  std::vector<BenchCase> cases;
  AutoScheduleOptions o;
  o.target = "cuda";
  for (const te_bench::SuiteKernel& k : te_bench::ansor_suite()) {
    const json call = ansor_torch_call(k.name);
    BenchCase b;
    b.name = k.name;
    b.func = lower(auto_schedule({k.output}, o), k.args, k.name);
    b.reference = call["reference"];
    b.reference_args = call["reference_args"];
    b.shapes = json::array();
    for (size_t i = 0; i < k.args.size(); ++i) {
      std::vector<int64_t> shape = const_shape(k.args[i]);
      int64_t elems = 1;
      for (int64_t e : shape) elems *= e;
      b.bytes += 4.0 * static_cast<double>(elems);
      b.shapes.push_back({{"shape", shape}, {"role", i + 1 == k.args.size() ? "output" : "input"}});
    }
    b.flops = k.work * 1e9;
    cases.push_back(std::move(b));
  }
  return cases;
}

}  // namespace te
