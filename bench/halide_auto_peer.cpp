// Halide 14's autoschedulers as peers of te's auto_schedule (bench_auto_schedule.cpp): each
// suite kernel's algorithm (the Ansor suite's too) written in Halide without a schedule,
// scheduled by the plugin
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

// x zero-padded outside its extent along `dims` (Halide's order), unbounded there.
Func zero_padded(const Buffer<float>& x, const std::vector<int>& dims) {
  Region bounds(static_cast<size_t>(x.dimensions()));
  for (int d : dims) bounds[static_cast<size_t>(d)] = Range(0, x.dim(d).extent());
  return BoundaryConditions::constant_exterior(x, 0.0f, bounds);
}

// The Ansor suite (bench/ansor_suite.h) in Halide's dimension order: activations
// (c, x, y, n) for NHWC and (x, y, c, n) for NCHW, the same math as te's.
bool define_ansor(const std::string& kernel, const std::vector<Buffer<float>>& in, Func& out) {
  if (kernel.rfind("ansor_", 0) != 0) return false;
  const bool nchw = kernel.size() > 5 && kernel.compare(kernel.size() - 5, 5, "_nchw") == 0;
  const std::string op = kernel.substr(6, kernel.size() - 6 - (nchw ? 5 : 0));
  const Buffer<float>& x = in[0];
  const Buffer<float>& w = in[1];
  Var co("co"), ox("ox"), oy("oy"), n("n"), oz("oz");
  if (op == "c1d") {  // x (ci, l, n), w (co, ci, k)
    Func pad = zero_padded(x, {1});
    RDom r(0, w.dim(2).extent(), 0, x.dim(0).extent());
    out(co, ox, n) = 0.0f;
    out(co, ox, n) += pad(r.y, ox * 2 + r.x - 1, n) * w(co, r.y, r.x);
  } else if (op == "c2d" || op == "dil" || op == "c2d_small") {
    const int S = op == "c2d_small" ? 1 : 2, P = op == "c2d_small" ? 0 : 3, D = op == "dil" ? 2 : 1;
    if (nchw) {  // x (x, y, ci, n), w (kx, ky, ci, co)
      Func pad = zero_padded(x, {0, 1});
      RDom r(0, w.dim(0).extent(), 0, w.dim(1).extent(), 0, x.dim(2).extent());
      out(ox, oy, co, n) = 0.0f;
      out(ox, oy, co, n) += pad(ox * S + r.x * D - P, oy * S + r.y * D - P, r.z, n) * w(r.x, r.y, r.z, co);
    } else {  // x (ci, x, y, n), w (co, ci, kx, ky)
      Func pad = zero_padded(x, {1, 2});
      RDom r(0, x.dim(0).extent(), 0, w.dim(2).extent(), 0, w.dim(3).extent());
      out(co, ox, oy, n) = 0.0f;
      out(co, ox, oy, n) += pad(r.x, ox * S + r.y * D - P, oy * S + r.z * D - P, n) * w(co, r.x, r.y, r.z);
    }
  } else if (op == "c3d") {  // x (ci, x, y, z, n), w (co, ci, kx, ky, kz)
    Func pad = zero_padded(x, {1, 2, 3});
    RDom r(0, x.dim(0).extent(), 0, 7, 0, 7, 0, 7);
    out(co, ox, oy, oz, n) = 0.0f;
    out(co, ox, oy, oz, n) +=
        pad(r[0], ox * 2 + r[1] - 3, oy * 2 + r[2] - 3, oz * 2 + r[3] - 3, n) * w(co, r[0], r[1], r[2], r[3]);
  } else if (op == "grp") {  // 4 groups of 16 -> 32 channels
    if (nchw) {              // x (x, y, ci, n), w (kx, ky, gi, co)
      Func pad = zero_padded(x, {0, 1});
      RDom r(0, 3, 0, 3, 0, w.dim(2).extent());
      out(ox, oy, co, n) = 0.0f;
      out(ox, oy, co, n) += pad(ox * 2 + r.x - 1, oy * 2 + r.y - 1, co / 32 * 16 + r.z, n) * w(r.x, r.y, r.z, co);
    } else {  // x (ci, x, y, n), w (co, gi, kx, ky)
      Func pad = zero_padded(x, {1, 2});
      RDom r(0, w.dim(1).extent(), 0, 3, 0, 3);
      out(co, ox, oy, n) = 0.0f;
      out(co, ox, oy, n) += pad(co / 32 * 16 + r.x, ox * 2 + r.y - 1, oy * 2 + r.z - 1, n) * w(co, r.x, r.y, r.z);
    }
  } else if (op == "dep") {
    RDom r(0, 3, 0, 3);
    if (nchw) {  // x (x, y, c, n), w (kx, ky, 1, c)
      Func pad = zero_padded(x, {0, 1});
      out(ox, oy, co, n) = 0.0f;
      out(ox, oy, co, n) += pad(ox + r.x - 1, oy + r.y - 1, co, n) * w(r.x, r.y, 0, co);
    } else {  // x (c, x, y, n), w (1, c, kx, ky)
      Func pad = zero_padded(x, {1, 2});
      out(co, ox, oy, n) = 0.0f;
      out(co, ox, oy, n) += pad(co, ox + r.x - 1, oy + r.y - 1, n) * w(0, co, r.x, r.y);
    }
  } else if (op == "t2d") {  // as te writes it: zeros inserted, then the flipped kernel
    const int H = nchw ? x.dim(0).extent() : x.dim(1).extent(), S = 2, B = 2, K = 4;
    auto on_grid = [&](Expr v) { return v >= B && v < B + (H - 1) * S + 1 && (v - B) % S == 0; };
    auto source = [&](Expr v) { return clamp((v - B) / S, 0, H - 1); };
    Var c("c"), dx("dx"), dy("dy");
    Func dilated("dilated");
    if (nchw) {  // x (x, y, ci, n), w (kx, ky, co, ci)
      dilated(dx, dy, c, n) = select(on_grid(dx) && on_grid(dy), x(source(dx), source(dy), c, n), 0.0f);
      RDom r(0, K, 0, K, 0, x.dim(2).extent());
      out(ox, oy, co, n) = 0.0f;
      out(ox, oy, co, n) += dilated(ox + r.x, oy + r.y, r.z, n) * w(K - 1 - r.x, K - 1 - r.y, co, r.z);
    } else {  // x (ci, x, y, n), w (co, ci, kx, ky)
      dilated(c, dx, dy, n) = select(on_grid(dx) && on_grid(dy), x(c, source(dx), source(dy), n), 0.0f);
      RDom r(0, x.dim(0).extent(), 0, K, 0, K);
      out(co, ox, oy, n) = 0.0f;
      out(co, ox, oy, n) += dilated(r.x, ox + r.y, oy + r.z, n) * w(co, r.x, K - 1 - r.y, K - 1 - r.z);
    }
  } else if (op == "cap") {  // x (c, k, i, x, y, n), w (co, c, j, k, kx, ky); out (co, j, i, x, y, n)
    Func pad = zero_padded(x, {3, 4});
    Var i("i"), j("j");
    RDom r(0, x.dim(0).extent(), 0, x.dim(1).extent(), 0, 3, 0, 3);
    out(co, j, i, ox, oy, n) = 0.0f;
    out(co, j, i, ox, oy, n) +=
        pad(r[0], r[1], i, ox * 2 + r[2] - 1, oy * 2 + r[3] - 1, n) * w(co, r[0], j, r[1], r[2], r[3]);
  } else if (op == "nrm") {  // a (j, i, b)
    RDom r(0, x.dim(0).extent(), 0, x.dim(1).extent());
    Func s("sum_squares");
    s(n) = 0.0f;
    s(n) += x(r.x, r.y, n) * x(r.x, r.y, n);
    out(n) = sqrt(s(n));
  } else if (op == "gmm") {
    return false;  // a batched matmul: the bmm algorithm below
  } else {
    throw std::runtime_error("no Halide algorithm for " + kernel);
  }
  return true;
}

Func define(const std::string& kernel, const std::vector<Buffer<float>>& in) {
  Var x("x"), y("y"), z("z"), w("w");
  Func out("out");
  if (define_ansor(kernel, in, out)) return out;
  if (kernel.rfind("sgemm_", 0) == 0) {
    RDom k(0, in[0].dim(0).extent());
    out(x, y) = 0.0f;
    out(x, y) += in[0](k, y) * in[1](x, k);
  } else if (kernel.rfind("bmm_", 0) == 0 || kernel == "ansor_gmm") {
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
