// Forward + backward on the CPU, against PyTorch's autograd in the same run (a child
// process at the same thread count: bench/backward_torch.py): grid_sample (bilinear,
// zeros, align_corners = false) with te's schedule_grid_sample_cpu and
// schedule_grid_sample_backward_cpu; softmax and layer_norm with their closed-form
// backward, matmul and a 3x3 conv2d with te::gradient's, auto-scheduled; and bev_pool_v2
// on the realistic golden case with schedule_bev_pool_cpu forward and te::gradient's
// adjoints auto-scheduled. Each te result
// is checked against interpret() of the same computes before it is timed.
#include <te/te.h>

#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench_util.h"
#include "cases.h"
#include "te/auto_schedule.h"
#include "te/autodiff.h"
#include "te/ops/bev_pool.h"
#include "te/ops/grid_sample_backward_cpu.h"
#include "te/ops/matmul.h"
#include "te/ops/normalization_backward.h"

namespace te_bench {

namespace {

std::string torch_command(const std::string& args, int calls) {
  return "/usr/bin/python3 " + std::string(TE_BENCH_SOURCE_DIR) + "/backward_torch.py " + args + " " +
         std::to_string(threads()) + " " + std::to_string(calls);
}

void add_torch(const std::string& g, const std::string& args) {
  add(
      g, "pytorch",
      [g, args](benchmark::State& st) {
        std::vector<double> s = command_samples(torch_command(args, 20));
        if (s.empty()) return st.SkipWithError("PyTorch not found (scripts/deps.sh python3-torch)");
        size_t k = 0;
        for (auto _ : st) st.SetIterationTime(s[k++ % s.size()]);
        results().record(g, "pytorch", true, s);
        report(st, g, "pytorch", true);
      },
      1);
}

te::NDArray uniform(const std::vector<int64_t>& shape, unsigned seed) {
  te::NDArray a = te::NDArray::empty(shape, te::Float(32));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  float* p = static_cast<float*>(a.data());
  for (int64_t i = 0; i < a.size(); ++i) p[i] = u(rng);
  return a;
}

bool close(const te::NDArray& a, const te::NDArray& b) {
  const std::vector<float> x = a.to_vector<float>(), y = b.to_vector<float>();
  for (size_t i = 0; i < x.size(); ++i)
    if (!(std::abs(x[i] - y[i]) <= 1e-4f * (1 + std::abs(y[i])))) return false;
  return true;
}

std::vector<te::Expr> dims(const std::vector<int64_t>& v) {
  std::vector<te::Expr> e;
  for (int64_t x : v) e.push_back(te::make_const(te::Int(32), x));
  return e;
}

// Forward then backward as one call: the step a training loop takes.
struct GridSampleStep {
  te::Function forward, backward;
  te::NDArray data, grid, head, out, grad_data, grad_grid;
  bool ok = false;
  GridSampleStep(int64_t n, int64_t c, int64_t h, int64_t w, int64_t ho, int64_t wo) {
    te::Tensor d = te::placeholder(dims({n, c, h, w}), te::Float(32), "data");
    te::Tensor g = te::placeholder(dims({n, ho, wo, 2}), te::Float(32), "grid");
    te::Tensor hd = te::placeholder(dims({n, c, ho, wo}), te::Float(32), "head");
    te::ops::GridSampleStages f = te::ops::grid_sample_stages(d, g);
    te::Schedule sf = te::create_schedule({f.out});
    te::ops::schedule_grid_sample_cpu(sf, f);
    forward = te::build(te::lower(sf, {d, g, f.out}, "forward"))("forward");
    te::ops::GridSampleBackwardStages b = te::ops::grid_sample_backward_stages(d, g, hd);
    te::Schedule sb = te::create_schedule({b.grad_data, b.grad_grid});
    te::ops::schedule_grid_sample_backward_cpu(sb, b, 32);
    std::vector<te::Tensor> args{d, g, hd, b.grad_data, b.grad_grid};
    backward = te::build(te::lower(sb, args, "backward"))("backward");
    data = uniform({n, c, h, w}, 1);
    grid = uniform({n, ho, wo, 2}, 2);
    head = uniform({n, c, ho, wo}, 3);
    out = te::NDArray::empty({n, c, ho, wo}, te::Float(32));
    grad_data = te::NDArray::empty({n, c, h, w}, te::Float(32));
    grad_grid = te::NDArray::empty({n, ho, wo, 2}, te::Float(32));
    (*this)();
    te::NDArray want_data = te::NDArray::empty({n, c, h, w}, te::Float(32)),
                want_grid = te::NDArray::empty({n, ho, wo, 2}, te::Float(32));
    te::interpret(te::lower(te::create_schedule({b.grad_data, b.grad_grid}), args, "backward"),
                  {data, grid, head, want_data, want_grid});
    ok = close(grad_data, want_data) && close(grad_grid, want_grid);
  }
  void operator()() {
    forward(data, grid, out);
    backward(data, grid, head, grad_data, grad_grid);
  }
};

struct BevPoolStep {
  te::Function forward, backward;
  std::vector<te::NDArray> in;  // depth, feat, ranks (5)
  te::NDArray out, head, grad_depth, grad_feat;
  bool ok = false;
  BevPoolStep() {
    const std::string dir = std::string(TE_BENCH_DATA_DIR) + "/bev_pool/realistic/";
    for (const char* f :
         {"depth", "feat", "ranks_depth", "ranks_feat", "ranks_bev", "interval_starts", "interval_lengths"})
      in.push_back(te::NDArray::load_npy(dir + f + ".npy"));
    const std::vector<int32_t> bev = te::NDArray::load_npy(dir + "bev_shape.npy").to_vector<int32_t>();
    std::vector<te::Tensor> ts;
    for (size_t k = 0; k < in.size(); ++k) ts.push_back(te::placeholder(dims(in[k].shape()), in[k].dtype(), "in"));
    te::Tensor o =
        te::ops::bev_pool_v2(ts[0], ts[1], ts[2], ts[3], ts[4], ts[5], ts[6], {bev[0], bev[1], bev[2], bev[3]});
    te::Schedule sf = te::create_schedule({o});
    te::ops::schedule_bev_pool_cpu(sf, o);
    std::vector<te::Tensor> fargs = ts;
    fargs.push_back(o);
    forward = te::build(te::lower(sf, fargs, "forward"))("forward");
    std::vector<int64_t> out_shape;
    for (const te::Expr& e : o.shape()) out_shape.push_back(*te::as_const_int(e));
    te::Tensor hd = te::placeholder(dims(out_shape), te::Float(32), "head");
    std::vector<te::Tensor> grads = te::gradient(o, {ts[0], ts[1]}, hd);
    std::vector<te::Tensor> bargs = ts;
    bargs.push_back(hd);
    bargs.insert(bargs.end(), grads.begin(), grads.end());
    backward = te::build(te::lower(te::auto_schedule(grads), bargs, "backward"))("backward");
    out = te::NDArray::empty(out_shape, te::Float(32));
    head = uniform(out_shape, 4);
    grad_depth = te::NDArray::empty(in[0].shape(), te::Float(32));
    grad_feat = te::NDArray::empty(in[1].shape(), te::Float(32));
    (*this)();
    te::NDArray wd = te::NDArray::empty(in[0].shape(), te::Float(32)),
                wf = te::NDArray::empty(in[1].shape(), te::Float(32));
    std::vector<te::Argument> a(in.begin(), in.end());
    a.insert(a.end(), {head, wd, wf});
    te::interpret(te::lower(te::create_schedule(grads), bargs, "backward"), a);
    ok = close(grad_depth, wd) && close(grad_feat, wf);
  }
  void operator()() {
    std::vector<te::Argument> f(in.begin(), in.end());
    f.push_back(out);
    forward.call(f);
    std::vector<te::Argument> b(in.begin(), in.end());
    b.insert(b.end(), {head, grad_depth, grad_feat});
    backward.call(b);
  }
};

// Any forward (auto-scheduled) and backward (given computes, auto-scheduled): inputs
// random in [-1, 1], the backward's results checked against interpret().
struct GenericStep {
  te::Function forward, backward;
  std::vector<te::Argument> fargs, bargs;
  bool ok = false;
  GenericStep(const std::vector<te::Tensor>& ins, const te::Tensor& out, const std::vector<te::Tensor>& back_ins,
              const std::vector<te::Tensor>& grads) {
    std::vector<te::Tensor> f = ins;
    f.push_back(out);
    forward = te::build(te::lower(te::auto_schedule({out}), f, "forward"))("forward");
    std::vector<te::Tensor> b = back_ins;
    b.insert(b.end(), grads.begin(), grads.end());
    const te::LoweredFunc lb = te::lower(te::auto_schedule(grads), b, "backward");
    backward = te::build(lb)("backward");
    unsigned seed = 10;
    auto shape = [](const te::Tensor& t) {
      std::vector<int64_t> v;
      for (const te::Expr& e : t.shape()) v.push_back(*te::as_const_int(e));
      return v;
    };
    std::map<const te::OperationNode*, te::NDArray> values;
    for (const te::Tensor& t : ins) fargs.emplace_back(values[t.op().get()] = uniform(shape(t), seed++));
    fargs.emplace_back(te::NDArray::empty(shape(out), te::Float(32)));
    std::vector<te::Argument> want;
    for (const te::Tensor& t : back_ins) {
      auto it = values.find(t.op().get());
      te::NDArray a = it != values.end() ? it->second : uniform(shape(t), seed++);
      bargs.emplace_back(a);
      want.emplace_back(a);
    }
    std::vector<te::NDArray> got, expect;
    for (const te::Tensor& g : grads) {
      got.push_back(te::NDArray::empty(shape(g), te::Float(32)));
      expect.push_back(te::NDArray::empty(shape(g), te::Float(32)));
      bargs.emplace_back(got.back());
      want.emplace_back(expect.back());
    }
    (*this)();
    te::interpret(te::lower(te::create_schedule(grads), b, "backward"), want);
    ok = true;
    for (size_t k = 0; k < got.size(); ++k) ok = ok && close(got[k], expect[k]);
  }
  void operator()() {
    forward.call(fargs);
    backward.call(bargs);
  }
};

template <typename Step, typename Make>
void add_te(const std::string& g, Make make) {
  auto step = std::make_shared<std::shared_ptr<Step>>();
  add(g, "te", [=](benchmark::State& st) {
    if (!*step) *step = make();
    Step& s = **step;
    if (!s.ok) return st.SkipWithError("te: gradients differ from interpret()");
    run_case(st, g, "te", false, [&s] { s(); });
  });
}

}  // namespace

void register_backward() {
  const std::string gs = "grid_sample_fwd_bwd/2x32x64x64-64x64";
  results().define_group(gs, {2.0 * 32 * 64 * 64 * 1e-9, "Gpix/s"});
  add_torch(gs, "grid_sample 2 32 64 64 64 64");
  add_te<GridSampleStep>(gs, [] { return std::make_shared<GridSampleStep>(2, 32, 64, 64, 64, 64); });
  const std::string big = "grid_sample_fwd_bwd/1x64x128x128-128x128";
  results().define_group(big, {64.0 * 128 * 128 * 1e-9, "Gpix/s"});
  add_torch(big, "grid_sample 1 64 128 128 128 128");
  add_te<GridSampleStep>(big, [] { return std::make_shared<GridSampleStep>(1, 64, 128, 128, 128, 128); });
  // softmax and layer_norm with their closed-form backward; matmul and conv2d derived.
  const std::string sm = "softmax_fwd_bwd/256x1024";
  results().define_group(sm, {});
  add_torch(sm, "softmax 256 1024");
  add_te<GenericStep>(sm, [] {
    te::Tensor x = te::placeholder({256, 1024}, te::Float(32), "x"),
               y = te::placeholder({256, 1024}, te::Float(32), "y"),
               dy = te::placeholder({256, 1024}, te::Float(32), "dy");
    return std::make_shared<GenericStep>(std::vector<te::Tensor>{x}, te::ops::softmax(x),
                                         std::vector<te::Tensor>{y, dy},
                                         std::vector<te::Tensor>{te::ops::softmax_backward(y, dy)});
  });
  const std::string ln = "layer_norm_fwd_bwd/256x1024";
  results().define_group(ln, {});
  add_torch(ln, "layer_norm 256 1024");
  add_te<GenericStep>(ln, [] {
    te::Tensor x = te::placeholder({256, 1024}, te::Float(32), "x"), w = te::placeholder({1024}, te::Float(32), "w"),
               b = te::placeholder({1024}, te::Float(32), "b"), dy = te::placeholder({256, 1024}, te::Float(32), "dy");
    te::ops::LayerNormBackward g = te::ops::layer_norm_backward(x, w, dy);
    return std::make_shared<GenericStep>(std::vector<te::Tensor>{x, w, b}, te::ops::layer_norm(x, w, b),
                                         std::vector<te::Tensor>{x, w, dy},
                                         std::vector<te::Tensor>{g.dx, g.dgamma, g.dbeta});
  });
  const std::string mm = "matmul_fwd_bwd/512";
  results().define_group(mm, {3 * 2.0 * 512 * 512 * 512 * 1e-9, "GFLOP/s"});
  add_torch(mm, "matmul 512");
  add_te<GenericStep>(mm, [] {
    te::Tensor a = te::placeholder({512, 512}, te::Float(32), "a"), b = te::placeholder({512, 512}, te::Float(32), "b"),
               h = te::placeholder({512, 512}, te::Float(32), "h");
    te::Tensor c = te::ops::matmul(a, b);
    return std::make_shared<GenericStep>(std::vector<te::Tensor>{a, b}, c, std::vector<te::Tensor>{a, b, h},
                                         te::gradient(c, {a, b}, h));
  });
  const std::string cv = "conv2d_fwd_bwd/8x32x30x30-3x3";
  results().define_group(cv, {3 * 2.0 * 8 * 32 * 28 * 28 * 32 * 9 * 1e-9, "GFLOP/s"});
  add_torch(cv, "conv2d 8 32 30 30 3");
  add_te<GenericStep>(cv, [] {
    te::Tensor x = te::placeholder({8, 32, 30, 30}, te::Float(32), "x"),
               w = te::placeholder({32, 32, 3, 3}, te::Float(32), "w"),
               h = te::placeholder({8, 32, 28, 28}, te::Float(32), "h");
    te::IterVar c = te::reduce_axis({0, 32}, "c"), ky = te::reduce_axis({0, 3}, "ky"),
                kx = te::reduce_axis({0, 3}, "kx");
    te::Tensor y = te::compute(
        {8, 32, 28, 28},
        [&](te::Expr n, te::Expr o, te::Expr i, te::Expr j) {
          return te::sum(x(n, c, i + ky, j + kx) * w(o, c, ky, kx), {c, ky, kx});
        },
        "conv");
    return std::make_shared<GenericStep>(std::vector<te::Tensor>{x, w}, y, std::vector<te::Tensor>{x, w, h},
                                         te::gradient(y, {x, w}, h));
  });
  const std::string bev = "bev_pool_fwd_bwd/realistic";
  results().define_group(bev, {});
  add_torch(bev, "bev_pool " + std::string(TE_BENCH_DATA_DIR) + "/bev_pool/realistic");
  add_te<BevPoolStep>(bev, [] { return std::make_shared<BevPoolStep>(); });
}

}  // namespace te_bench
