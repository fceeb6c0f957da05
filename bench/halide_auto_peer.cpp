// Halide 14's autoschedulers as peers of te's auto_schedule (bench_auto_schedule.cpp): each
// suite kernel's algorithm written in Halide without a schedule, scheduled by the plugin
// Debian's libhalide14-0-dev ships (Adams2019 with its built-in weights, Mullapudi2016),
// JIT-compiled for the host.
#include <Halide.h>

#include <stdexcept>

#include "halide_peer.h"

namespace te_bench::halide {

using namespace Halide;

namespace {

// Halide's dimensions run innermost first: te's (d0, ..., dn) is Halide's (dn, ..., d0).
Buffer<float> wrap(const float* p, std::vector<int64_t> shape) {
  std::vector<int> sizes(shape.rbegin(), shape.rend());
  return Buffer<float>(const_cast<float*>(p), sizes);
}

Func define(const std::string& kernel, const std::vector<Buffer<float>>& in) {
  Var x("x"), y("y"), z("z"), w("w");
  Func out("out");
  if (kernel.rfind("sgemm_", 0) == 0) {
    RDom k(0, in[0].dim(0).extent());
    out(x, y) = 0.0f;
    out(x, y) += in[0](k, y) * in[1](x, k);
  } else if (kernel.rfind("bmm_", 0) == 0) {
    RDom k(0, in[0].dim(0).extent());
    out(x, y, z) = 0.0f;
    out(x, y, z) += in[0](k, y, z) * in[1](x, k, z);
  } else if (kernel.rfind("conv2d_", 0) == 0 || kernel.rfind("depthwise_", 0) == 0) {
    const Buffer<float>& data = in[0];
    Func pad =
        BoundaryConditions::constant_exterior(data, 0.0f, {{0, data.dim(0).extent()}, {0, data.dim(1).extent()}});
    if (kernel.rfind("conv2d_", 0) == 0) {
      RDom r(0, 3, 0, 3, 0, data.dim(2).extent());
      out(x, y, z, w) = 0.0f;
      out(x, y, z, w) += pad(x + r.x - 1, y + r.y - 1, r.z, w) * in[1](r.x, r.y, r.z, z);
    } else {
      RDom r(0, 3, 0, 3);
      out(x, y, z, w) = 0.0f;
      out(x, y, z, w) += pad(x + r.x - 1, y + r.y - 1, z, w) * in[1](r.x, r.y, z);
    }
  } else if (kernel.rfind("softmax_", 0) == 0) {
    RDom r(0, in[0].dim(0).extent());
    Func mx("mx"), e("e"), s("s");
    mx(y) = maximum(in[0](r, y));
    e(x, y) = exp(in[0](x, y) - mx(y));
    s(y) = sum(e(r, y));
    out(x, y) = e(x, y) / s(y);
  } else if (kernel.rfind("layer_norm_", 0) == 0) {
    const int C = in[0].dim(0).extent();
    RDom r(0, C);
    Func mean("mean"), var("var");
    mean(y) = sum(in[0](r, y)) / C;
    var(y) = sum((in[0](r, y) - mean(y)) * (in[0](r, y) - mean(y))) / C;
    out(x, y) = (in[0](x, y) - mean(y)) / sqrt(var(y) + 1e-5f) * in[1](x) + in[2](x);
  } else if (kernel.rfind("transpose_add_relu_", 0) == 0) {
    out(x, y) = max(in[0](y, x) + in[1](x, y), 0.0f);
  } else {
    throw std::runtime_error("no Halide algorithm for " + kernel);
  }
  return out;
}

}  // namespace

std::function<void()> auto_scheduled(const std::string& scheduler, const std::string& kernel,
                                     const std::vector<const float*>& inputs,
                                     const std::vector<std::vector<int64_t>>& input_shapes, float* out,
                                     const std::vector<int64_t>& out_shape, int threads) {
  std::string lower = scheduler;
  for (char& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
  load_plugin(std::string(TE_BENCH_HALIDE_PLUGIN_DIR) + "/libautoschedule_" + lower + ".so");
  std::vector<Buffer<float>> in;
  for (size_t i = 0; i < inputs.size(); ++i) in.push_back(wrap(inputs[i], input_shapes[i]));
  Func f = define(kernel, in);
  Buffer<float> result = wrap(out, out_shape);
  Region region;
  for (int d = 0; d < result.dimensions(); ++d) region.push_back(Range(0, result.dim(d).extent()));
  f.set_estimates(region);
  Pipeline p(f);
  const Target t = get_jit_target_from_environment();
  p.auto_schedule(scheduler, t, MachineParams(threads, 32 << 20, 40));
  p.compile_jit(t);
  return [p, result]() mutable { p.realize(result); };
}

}  // namespace te_bench::halide
