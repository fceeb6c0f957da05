// te_gpu_kit OUT_DIR: the GPU check kit (scripts/gpu_check.sh). On this machine (te, LLVM,
// no GPU) it writes, for every kernel of the CUDA test corpus and the reference schedules,
// a folder with the kernel's .cu (with its host launcher), its arguments as .npy files and
// the arrays interpret() leaves in them, and a manifest.json; plus bench.json, the large
// shapes scripts/gpu_check.py times against PyTorch and cuBLAS on the GPU machine.
#include <array>
#include <fmt/format.h>
#include <te/ops/attention_cuda.h>
#include <te/ops/bev_pool.h>
#include <te/ops/bev_pool_cuda.h>
#include <te/ops/grid_sample.h>
#include <te/ops/grid_sample_cuda.h>
#include <te/ops/matmul.h>
#include <te/ops/matmul_wgmma_cuda.h>
#include <te/ops/normalization_backward.h>
#include <te/auto_schedule.h>
#include <te/autodiff.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>

#include "cuda_emulation/kernels.h"
#include "gpu_kit/ansor_bench.h"
#include "gpu_kit/bench_case.h"

namespace te {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// Values every kernel of the corpus accepts: small integers (indices, divisors, shifts),
// floats in [-2, 2), or (integer_floats) floats that are integers in [-2, 2].
NDArray random_array(const std::vector<int64_t>& shape, DataType t, std::mt19937& rng, bool integer_floats = false) {
  NDArray a = NDArray::empty(shape, t);
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::uniform_real_distribution<double> real(-2.0, 2.0);
  std::uniform_int_distribution<int> small(0, 7), signed_small(-2, 2);
  for (int64_t i = 0; i < n; ++i)
    cuda_test::set_element(a, i, !t.is_float() ? small(rng) : integer_floats ? signed_small(rng) : real(rng));
  return a;
}

// The value of a shape or scalar variable: a size that is not a multiple of the usual
// tile and vector widths.
int64_t value_of(const Var& v, std::map<const VarNode*, int64_t>& chosen) {
  auto it = chosen.find(v.get());
  if (it != chosen.end()) return it->second;
  return chosen[v.get()] = v.dtype().is_float() ? 1 : 67;
}

// An extent over the function's shape variables (each a bare dimension of some buffer).
int64_t eval_extent(const Expr& e, const LoweredFunc& f, std::map<const VarNode*, int64_t>& chosen) {
  std::vector<std::pair<Var, Expr>> values;
  for (const Param& p : f.params)
    if (p.is_buffer())
      for (const Expr& d : p.buffer.shape())
        if (const auto* v = d.as<VarNode>()) {
          Var var(std::static_pointer_cast<const VarNode>(d.node()));
          values.emplace_back(var, make_const(var.dtype(), value_of(var, chosen)));
          (void)v;
        }
  Expr c = simplify(substitute(e, values));
  const int64_t* k = as_const_int(c);
  if (!k) throw Error("extent " + to_string(e) + " does not evaluate to a constant");
  return *k;
}

// One kernel's .cu, the arguments given, interpret()'s results in them, manifest.
json write_with_args(const LoweredFunc& func, const CudaOptions& options, std::vector<Argument> args,
                     std::map<const VarNode*, int64_t>& chosen, const fs::path& dir) {
  CudaModule cu = build_cuda(func, options);
  fs::create_directories(dir);
  std::ofstream(dir / "kernel.cu") << cu.source();
  std::vector<Argument> before;
  for (const Argument& a : args) before.push_back(a.is_array() ? Argument(a.array().copy()) : a);
  json manifest = {{"name", func.name}, {"launcher", cu.name()}};
  try {
    interpret(func, args);
  } catch (const Error& e) {
    manifest["skip"] = std::string("interpret() refused the generated arguments: ") + e.what();
    return manifest;
  }
  json params = json::array();
  for (const CudaParam& lp : cu.launcher_params()) {
    size_t j = 0;
    bool found = false;
    for (; j < func.params.size(); ++j) {
      const Param& q = func.params[j];
      if (lp.is_buffer() ? q.is_buffer() && q.buffer.same_as(lp.buffer) : !q.is_buffer() && q.var.same_as(lp.var)) {
        found = true;
        break;
      }
    }
    if (lp.is_buffer()) {
      TE_ICHECK(found, "gpu kit: a launcher buffer that is not a parameter");
      std::string in = fmt::format("in{}.npy", j), out = fmt::format("out{}.npy", j);
      before[j].array().save_npy((dir / in).string());
      args[j].array().save_npy((dir / out).string());
      params.push_back({{"kind", "buffer"},
                        {"name", lp.name},
                        {"dtype", lp.buffer.dtype().to_string()},
                        {"input", in},
                        {"expected", out}});
    } else {
      const bool is_float = lp.var.dtype().is_float();
      json value =
          found ? (is_float ? json(args[j].float_value()) : json(args[j].int_value())) : json(value_of(lp.var, chosen));
      params.push_back({{"kind", is_float ? "float" : "int"},
                        {"name", lp.name},
                        {"dtype", lp.var.dtype().to_string()},
                        {"value", value}});
    }
  }
  manifest["params"] = params;
  return manifest;
}

// One corpus kernel on random arguments of sizes that are not multiples of the usual tiles.
json write_module(const cuda_test::TestModule& m, const fs::path& dir, std::mt19937& rng) {
  std::map<const VarNode*, int64_t> chosen;
  std::vector<Argument> args;
  for (const Param& p : m.func.params) {
    if (p.is_buffer()) {
      std::vector<int64_t> shape;
      for (const Expr& e : p.buffer.shape()) shape.push_back(eval_extent(e, m.func, chosen));
      args.emplace_back(random_array(shape, p.buffer.dtype(), rng, m.integer_inputs));
    } else if (p.var.dtype().is_float()) {
      args.emplace_back(1.5);
    } else {
      args.emplace_back(value_of(p.var, chosen));
    }
  }
  return write_with_args(m.func, m.options, std::move(args), chosen, dir);
}

// bev_pool_v2 (BEVDet) on a golden case of tests/data/bev_pool: its inputs, in the order
// of the lowered function's parameters, and the function (schedule_bev_pool_cuda; the
// point and interval counts are shape variables, as in a deployed plugin).
const char* const kBevInputs[] = {
    "depth", "feat", "ranks_depth", "ranks_feat", "ranks_bev", "interval_starts", "interval_lengths"};

fs::path bev_case_dir(const std::string& name) { return fs::path(TE_TEST_DATA_DIR) / "bev_pool" / name; }

// bev_pool_v2's graph on a golden case: its inputs in kBevInputs order, and its output.
struct BevPoolGraph {
  std::vector<Tensor> inputs;
  Tensor out;
};

BevPoolGraph bev_pool_graph(const std::string& case_name) {
  auto dims = [](const NDArray& a) {
    std::vector<Expr> v;
    for (int64_t e : a.shape()) v.push_back(make_const(Int(32), e));
    return v;
  };
  const fs::path dir = bev_case_dir(case_name);
  NDArray depth_data = NDArray::load_npy((dir / "depth.npy").string());
  NDArray feat_data = NDArray::load_npy((dir / "feat.npy").string());
  std::vector<int32_t> bev = NDArray::load_npy((dir / "bev_shape.npy").string()).to_vector<int32_t>();
  Tensor depth = placeholder(dims(depth_data), Float(32), "depth");
  Tensor feat = placeholder(dims(feat_data), Float(32), "feat");
  Var points("n_points"), intervals("n_intervals");
  Tensor rd = placeholder({points}, Int(32), "ranks_depth"), rf = placeholder({points}, Int(32), "ranks_feat"),
         rb = placeholder({points}, Int(32), "ranks_bev");
  Tensor st = placeholder({intervals}, Int(32), "interval_starts"),
         len = placeholder({intervals}, Int(32), "interval_lengths");
  Tensor out = ops::bev_pool_v2(depth, feat, rd, rf, rb, st, len, {bev[0], bev[1], bev[2], bev[3]});
  return {{depth, feat, rd, rf, rb, st, len}, out};
}

LoweredFunc bev_pool_cuda(const std::string& case_name, const std::string& func_name) {
  BevPoolGraph g = bev_pool_graph(case_name);
  Schedule s = create_schedule({g.out});
  ops::schedule_bev_pool_cuda(s, g.out);
  std::vector<Tensor> args = g.inputs;
  args.push_back(g.out);
  return lower(s, args, func_name);
}

// bev_pool_v2's backward (depth and feat gradients) as te::gradient derives it,
// auto-scheduled for CUDA: the inputs, the output's gradient ("grad_out"), the two gradients.
LoweredFunc bev_pool_backward_cuda(const std::string& case_name, const std::string& func_name) {
  BevPoolGraph g = bev_pool_graph(case_name);
  Tensor head = placeholder(g.out.shape(), Float(32), "grad_out");
  std::vector<Tensor> grads = gradient(g.out, {g.inputs[0], g.inputs[1]}, head);
  AutoScheduleOptions o;
  o.target = "cuda";
  std::vector<Tensor> args = g.inputs;
  args.push_back(head);
  args.insert(args.end(), grads.begin(), grads.end());
  return lower(auto_schedule(grads, o), args, func_name);
}

// The small golden case as a corpus kernel: its own inputs (random ones would not be
// sorted intervals), the shape variables taken from them; the forward, or with
// backward: bev_pool_backward_cuda, on a random output gradient.
json write_bev_pool_corpus(const fs::path& dir, bool backward, std::mt19937& rng) {
  LoweredFunc f =
      backward ? bev_pool_backward_cuda("small", "bev_pool_backward_small") : bev_pool_cuda("small", "bev_pool_small");
  std::vector<Argument> args;
  for (const char* name : kBevInputs)
    args.emplace_back(NDArray::load_npy((bev_case_dir("small") / (std::string(name) + ".npy")).string()));
  NDArray out_golden = NDArray::load_npy((bev_case_dir("small") / "out.npy").string());
  if (backward) {
    args.emplace_back(random_array(out_golden.shape(), Float(32), rng));
    args.emplace_back(NDArray::empty(args[0].array().shape(), Float(32)));
    args.emplace_back(NDArray::empty(args[1].array().shape(), Float(32)));
  } else {
    args.emplace_back(NDArray::empty(out_golden.shape(), Float(32)));
  }
  std::map<const VarNode*, int64_t> chosen;
  for (size_t i = 0; i < f.params.size(); ++i) {
    const std::vector<Expr>& shape = f.params[i].buffer.shape();
    for (size_t k = 0; k < shape.size(); ++k)
      if (const auto* v = shape[k].as<VarNode>()) chosen[v] = args[i].array().shape()[k];
  }
  return write_with_args(f, CudaOptions{}, std::move(args), chosen, dir);
}

// A 16-bit GEMM kernel f (M x N x K) on small integers: every sum is exact, so the GPU's
// tensor cores must give interpret()'s results bit for bit.
// B is K x N, or N x K for a linear layer (b_transposed).
json write_gemm_corpus(const fs::path& dir, const LoweredFunc& f, int M, int N, int K, DataType t, std::mt19937& rng,
                       bool b_transposed = false) {
  std::uniform_int_distribution<int> small(-4, 4);
  auto integers = [&](int64_t rows, int64_t cols) {
    NDArray a = NDArray::empty({rows, cols}, t);
    for (int64_t i = 0; i < rows * cols; ++i) cuda_test::set_element(a, i, small(rng));
    return a;
  };
  std::vector<Argument> args = {integers(M, K), b_transposed ? integers(N, K) : integers(K, N),
                                NDArray::empty({M, N}, Float(32))};
  std::map<const VarNode*, int64_t> chosen;
  return write_with_args(f, CudaOptions{}, std::move(args), chosen, dir);
}

// The tensor-core GEMM (mma.sync, fp16 and bf16) at small shapes.
// `linear`: a linear layer's y = x wᵀ (w N x K), w's fragments by ldmatrix without .trans.
json write_tensor_core_corpus(const fs::path& root, DataType t, const std::string& name, std::mt19937& rng,
                              bool linear = false) {
  ops::MatmulTensorCoreOptions o;
  o.block_m = o.block_n = 64;
  const int M = 128, N = 192, K = 96;
  return write_gemm_corpus(root / name, cuda_test::matmul_tensorcore_func(M, N, K, t, o, name, linear), M, N, K, t, rng,
                           linear);
}

// The warpgroup-MMA GEMM (schedule_matmul_wgmma_cuda) of 16-bit matrices.
LoweredFunc matmul_wgmma_func(int M, int N, int K, DataType t, const ops::MatmulWgmmaOptions& o,
                              const std::string& name) {
  Tensor A = placeholder({M, K}, t, "A"), B = placeholder({K, N}, t, "B");
  Tensor C = ops::matmul(A, B, "C");
  Schedule s = create_schedule({C});
  ops::schedule_matmul_wgmma_cuda(s, C, o);
  return lower(s, {A, B, C}, name);
}

// A bfloat16 linear layer, y = x wᵀ (w N x K), as auto_schedule gives it for sm_90a: the
// wgmma GEMM with fastest_wgmma_options, w's rows the K-major B tiles.
LoweredFunc linear_auto_func(int M, int N, int K, const std::string& name) {
  Tensor x = placeholder({M, K}, BFloat(16), "x"), w = placeholder({N, K}, BFloat(16), "w");
  Tensor y = ops::linear(x, w, "y");
  AutoScheduleOptions o;
  o.target = "cuda -arch=sm_90a";
  return lower(auto_schedule({y}, o), {x, w, y}, name);
}

// The same with a fused epilogue: D = bfloat16(relu(A B + bias)), bias float32.
LoweredFunc matmul_wgmma_bias_relu_func(int M, int N, int K, const ops::MatmulWgmmaOptions& o,
                                        const std::string& name) {
  Tensor A = placeholder({M, K}, BFloat(16), "A"), B = placeholder({K, N}, BFloat(16), "B");
  Tensor bias = placeholder({N}, Float(32), "bias");
  Tensor C = ops::matmul(A, B, "C");
  Tensor D = compute(
      {M, N}, [&](Expr i, Expr j) { return cast(BFloat(16), max(C(i, j) + bias(j), 0.0f)); }, "D");
  Schedule s = create_schedule({D});
  ops::schedule_matmul_wgmma_cuda(s, D, o);
  return lower(s, {A, B, bias, D}, name);
}

// It at a small shape on small integers (sums exact; the bfloat16 rounding the same).
json write_wgmma_epilogue_corpus(const fs::path& root, const std::string& name, std::mt19937& rng) {
  ops::MatmulWgmmaOptions o;
  o.block_n = 64;
  const int M = 256, N = 192, K = 192;
  std::uniform_int_distribution<int> small(-4, 4);
  auto integers = [&](std::vector<int64_t> shape, DataType t) {
    NDArray a = NDArray::empty(shape, t);
    for (int64_t i = 0; i < a.size(); ++i) cuda_test::set_element(a, i, small(rng));
    return a;
  };
  std::vector<Argument> args = {integers({M, K}, BFloat(16)), integers({K, N}, BFloat(16)), integers({N}, Float(32)),
                                NDArray::empty({M, N}, BFloat(16))};
  std::map<const VarNode*, int64_t> chosen;
  return write_with_args(matmul_wgmma_bias_relu_func(M, N, K, o, name), CudaOptions{}, std::move(args), chosen,
                         root / name);
}

// The same at small shapes (the kit builds with -arch=sm_90a on sm_90: wgmma's path);
// `o` picks the copies (TMA or cp.async) and B's layout (MN-major or transposed).
// `shape` is M, N and K.
json write_wgmma_corpus(const fs::path& root, DataType t, ops::MatmulWgmmaOptions o, const std::string& name,
                        std::mt19937& rng, std::array<int, 3> shape = {256, 192, 192}) {
  o.block_n = 64;
  const auto [M, N, K] = shape;
  return write_gemm_corpus(root / name, matmul_wgmma_func(M, N, K, t, o, name), M, N, K, t, rng);
}

// te::ops::attention on tensor cores (schedule_attention_cuda), (batch, heads, seq, dim)
// q, k and v in t. The shapes are int (32-bit index arithmetic, as a user's literals give:
// every buffer has fewer than 2^31 elements).
LoweredFunc attention_cuda(int batch, int heads, int seq_q, int seq_k, int dim, DataType t, bool causal, int warps,
                           int key_block, const std::string& name, int key_splits = 1, bool wgmma = false) {
  Tensor q = placeholder({batch, heads, seq_q, dim}, t, "q");
  Tensor k = placeholder({batch, heads, seq_k, dim}, t, "k"), v = placeholder({batch, heads, seq_k, dim}, t, "v");
  ops::AttentionOptions o;
  o.causal = causal;
  o.key_block = key_block;
  o.query_block = 16 * warps;
  Tensor out = ops::attention(q, k, v, o);
  Schedule s = create_schedule({out});
  ops::AttentionCudaOptions c;
  c.warps = warps;
  c.key_splits = key_splits;
  c.wgmma = wgmma;
  ops::schedule_attention_cuda(s, out, c);
  return lower(s, {q, k, v, out}, name);
}

// The same attention as te::auto_schedule gives it for `target` (the options its rule
// picks: warps, wgmma on sm_90a, split-K), the query tile 64 when causal.
LoweredFunc attention_auto_func(int batch, int heads, int seq_q, int seq_k, int dim, bool causal,
                                const std::string& target) {
  Tensor q = placeholder({batch, heads, seq_q, dim}, Float(16), "q");
  Tensor k = placeholder({batch, heads, seq_k, dim}, Float(16), "k"),
         v = placeholder({batch, heads, seq_k, dim}, Float(16), "v");
  ops::AttentionOptions o;
  o.causal = causal;
  o.key_block = 64;
  o.query_block = causal ? 64 : 16;
  Tensor out = ops::attention(q, k, v, o);
  AutoScheduleOptions a;
  a.target = target;
  return lower(auto_schedule({out}, a), {q, k, v, out}, "attention");
}

// Small attention kernels for the corpus: odd query counts, causal, both 16-bit types;
// `wgmma`: the Hopper form (a warpgroup per 64 queries).
json write_attention_corpus(const fs::path& root, DataType t, bool causal, const std::string& name, std::mt19937& rng,
                            bool wgmma = false) {
  const int64_t B = 2, H = 2, M = 40, N = 96, D = 64;
  LoweredFunc f = attention_cuda(B, H, M, N, D, t, causal, wgmma ? 4 : 2, 32, name, 1, wgmma);
  std::vector<Argument> args = {random_array({B, H, M, D}, t, rng), random_array({B, H, N, D}, t, rng),
                                random_array({B, H, N, D}, t, rng), NDArray::empty({B, H, M, D}, t)};
  std::map<const VarNode*, int64_t> chosen;
  return write_with_args(f, CudaOptions{}, std::move(args), chosen, root / name);
}

json write_bench(const BenchCase& b, const fs::path& root) {
  fs::create_directories(root / b.name);
  CudaModule cu = build_cuda(b.func, b.options);
  std::ofstream(root / b.name / "kernel.cu") << cu.source();
  json scalars = b.scalars;
  if (scalars.is_object()) {
    scalars = json::array();
    for (const CudaParam& lp : cu.launcher_params())
      if (!lp.is_buffer()) {
        TE_ICHECK(b.scalars.contains(lp.name), "gpu kit: no value for the launcher scalar " + lp.name);
        scalars.push_back(b.scalars[lp.name]);
      }
  }
  // Inputs random values would not fit (bev_pool's sorted ranks): a spec's "source" file
  // is copied into the kit as its "file".
  json buffers = b.shapes;
  size_t launcher_buffers = 0;
  for (const CudaParam& lp : cu.launcher_params()) launcher_buffers += lp.is_buffer() ? 1 : 0;
  TE_ICHECK(launcher_buffers == buffers.size(), "gpu kit: " + b.name + ": one buffer spec per launcher buffer");
  for (json& spec : buffers)
    if (spec.contains("source")) {
      fs::copy_file(spec["source"].get<std::string>(), root / b.name / spec["file"].get<std::string>(),
                    fs::copy_options::overwrite_existing);
      spec.erase("source");
    }
  json out = {{"name", b.name},     {"launcher", b.func.name}, {"reference", b.reference}, {"buffers", buffers},
              {"scalars", scalars}, {"bytes", b.bytes},        {"flops", b.flops}};
  if (!b.reference_args.empty()) out["reference_args"] = b.reference_args;
  if (!b.sass.empty()) out["sass"] = b.sass;
  return out;
}

LoweredFunc grid_sample_cuda(int64_t n, int64_t c, int64_t h, int64_t w) {
  Tensor data = placeholder({n, c, h, w}, Float(32), "data");
  Tensor grid = placeholder({n, h, w, 2}, Float(32), "grid");
  ops::GridSampleOptions o;
  Tensor out = ops::grid_sample(data, grid, o);
  Schedule s = create_schedule({out});
  ops::schedule_grid_sample_cuda(s, out);
  return lower(s, {data, grid, out}, "grid_sample_bev");
}

// grid_sample's hand-written backward (bilinear, zeros, align_corners = false): atomicAdd
// into grad_data as aten's grid_sampler_2d_backward, which it is timed against.
LoweredFunc grid_sample_backward_cuda(int64_t n, int64_t c, int64_t h, int64_t w) {
  Tensor data = placeholder({n, c, h, w}, Float(32), "data");
  Tensor grid = placeholder({n, h, w, 2}, Float(32), "grid");
  Tensor head = placeholder({n, c, h, w}, Float(32), "grad_out");
  ops::GridSampleBackwardStages b = ops::grid_sample_backward_stages(data, grid, head);
  Schedule s = create_schedule({b.grad_data, b.grad_grid});
  ops::schedule_grid_sample_backward_cuda(s, b);
  return lower(s, {data, grid, head, b.grad_data, b.grad_grid}, "grid_sample_backward_bev");
}

// bev_pool_v2 on the realistic golden case (6 cameras, D 59, 16x44, C 80, 128x128 BEV):
// the inputs travel with the kit; the reference is the pure-PyTorch index_add_ one. With
// backward: te::gradient's depth and feat gradients (bev_pool_backward_cuda) against
// autograd through that reference.
BenchCase bev_pool_bench(bool backward) {
  const fs::path dir = bev_case_dir("realistic");
  auto shape_of = [&](const std::string& name) { return NDArray::load_npy((dir / (name + ".npy")).string()).shape(); };
  BenchCase b;
  b.name = backward ? "bev_pool_backward_realistic" : "bev_pool_realistic";
  b.func = backward ? bev_pool_backward_cuda("realistic", "bev_pool_backward") : bev_pool_cuda("realistic", "bev_pool");
  b.reference = backward ? "bev_pool_backward" : "bev_pool";
  b.shapes = json::array();
  for (const char* name : kBevInputs)
    b.shapes.push_back({{"shape", shape_of(name)},
                        {"role", "input"},
                        {"file", std::string(name) + ".npy"},
                        {"source", (dir / (std::string(name) + ".npy")).string()}});
  const std::vector<int64_t> out = shape_of("out");
  if (backward) {
    b.shapes.push_back({{"shape", out}, {"role", "input"}});
    b.shapes.push_back({{"shape", shape_of("depth")}, {"role", "output"}});
    b.shapes.push_back({{"shape", shape_of("feat")}, {"role", "output"}});
  } else {
    b.shapes.push_back({{"shape", out}, {"role", "output"}});
  }
  const int64_t points = shape_of("ranks_bev")[0], intervals = shape_of("interval_starts")[0];
  const int64_t channels = out.back();
  int64_t out_elems = 1;
  for (int64_t e : out) out_elems *= e;
  b.scalars = {{"n_points", points}, {"n_intervals", intervals}};
  // One pass: a feature row and a depth per point, the three ranks, the intervals, the
  // output (the backward: also a gradient row per point and the output's gradient).
  b.bytes =
      4.0 * (points * (channels + 4) + 2 * intervals + out_elems) + (backward ? 4.0 * points * (channels + 1) : 0.0);
  b.flops = (backward ? 4.0 : 2.0) * points * channels;
  return b;
}

// A backward op's computes, auto-scheduled for CUDA (the schedule a user gets by asking).
LoweredFunc auto_cuda(const std::vector<Tensor>& outputs, const std::vector<Tensor>& args, const std::string& name) {
  AutoScheduleOptions o;
  o.target = "cuda";
  return lower(auto_schedule(outputs, o), args, name);
}

// softmax's and layer_norm's backward over 8192 rows, against aten's backward kernels.
void add_normalization_backward(std::vector<BenchCase>& v, int64_t rows, int64_t cols) {
  const double f4 = 4.0;
  Tensor y = placeholder({rows, cols}, Float(32), "y"), dy = placeholder({rows, cols}, Float(32), "dy");
  Tensor dx = ops::softmax_backward(y, dy);
  v.push_back({fmt::format("softmax_backward_{}", cols),
               auto_cuda({dx}, {y, dy, dx}, "softmax_backward"),
               "softmax_backward",
               {{{"shape", {rows, cols}}, {"role", "input"}},
                {{"shape", {rows, cols}}, {"role", "input"}},
                {{"shape", {rows, cols}}, {"role", "output"}}},
               json::array(),
               3 * f4 * rows * cols,
               0,
               ""});
  Tensor x = placeholder({rows, cols}, Float(32), "x"), gamma = placeholder({cols}, Float(32), "gamma");
  ops::LayerNormBackward b = ops::layer_norm_backward(x, gamma, dy);
  v.push_back({fmt::format("layer_norm_backward_{}", cols),
               auto_cuda({b.dx, b.dgamma, b.dbeta}, {x, gamma, dy, b.dx, b.dgamma, b.dbeta}, "layer_norm_backward"),
               "layer_norm_backward",
               {{{"shape", {rows, cols}}, {"role", "input"}},
                {{"shape", {cols}}, {"role", "gamma"}},
                {{"shape", {rows, cols}}, {"role", "input"}},
                {{"shape", {rows, cols}}, {"role", "output"}},
                {{"shape", {cols}}, {"role", "output"}},
                {{"shape", {cols}}, {"role", "output"}}},
               json::array(),
               3 * f4 * rows * cols,
               0,
               ""});
}

// matmul's and a 3x3 convolution's backward as te::gradient derives them, auto-scheduled
// for CUDA, against aten's (two mm calls; convolution_backward, cuDNN).
void add_derived_backward(std::vector<BenchCase>& v) {
  const double f4 = 4.0;
  const int64_t n = 2048;
  Tensor a = placeholder({n, n}, Float(32), "a"), b = placeholder({n, n}, Float(32), "b");
  Tensor dc = placeholder({n, n}, Float(32), "dc");
  IterVar k = reduce_axis({0, n}, "k");
  Tensor c = compute(
      {n, n}, [&](Expr i, Expr j) { return sum(a(i, k) * b(k, j), {k}); }, "c");
  std::vector<Tensor> g = gradient(c, {a, b}, dc);
  json nn = {{"shape", {n, n}}, {"role", "input"}};
  v.push_back({"matmul_backward_2048",
               auto_cuda(g, {a, b, dc, g[0], g[1]}, "matmul_backward"),
               "matmul_backward",
               {nn, nn, nn, {{"shape", {n, n}}, {"role", "output"}}, {{"shape", {n, n}}, {"role", "output"}}},
               json::array(),
               5 * f4 * n * n,
               2 * 2.0 * n * n * n,
               ""});
  const int64_t N = 32, C = 64, H = 58, R = H - 2;
  Tensor x = placeholder({N, C, H, H}, Float(32), "x"), w = placeholder({C, C, 3, 3}, Float(32), "w");
  Tensor dy = placeholder({N, C, R, R}, Float(32), "dy");
  IterVar rc = reduce_axis({0, C}, "rc"), ky = reduce_axis({0, 3}, "ky"), kx = reduce_axis({0, 3}, "kx");
  Tensor y = compute(
      {N, C, R, R},
      [&](Expr bn, Expr o, Expr i, Expr j) {
        return sum(x(bn, rc, i + ky, j + kx) * w(o, rc, ky, kx), {rc, ky, kx});
      },
      "conv");
  std::vector<Tensor> cg = gradient(y, {x, w}, dy);
  v.push_back({"conv2d_backward_32x64x58x58",
               auto_cuda(cg, {x, w, dy, cg[0], cg[1]}, "conv2d_backward"),
               "conv2d_backward",
               {{{"shape", {N, C, H, H}}, {"role", "input"}},
                {{"shape", {C, C, 3, 3}}, {"role", "input"}},
                {{"shape", {N, C, R, R}}, {"role", "input"}},
                {{"shape", {N, C, H, H}}, {"role", "output"}},
                {{"shape", {C, C, 3, 3}}, {"role", "output"}}},
               json::array(),
               f4 * (2.0 * N * C * H * H + 2.0 * N * C * R * R),
               2 * 2.0 * N * C * C * 9 * R * R,
               ""});
}

std::vector<BenchCase> bench_cases() {
  std::vector<BenchCase> v;
  const double f4 = 4.0;
  for (int cols : {768, 4096}) {
    const int64_t rows = 8192;
    const int threads = cols == 768 ? 256 : 1024;
    json rowsxcols = {{{"shape", {rows, cols}}, {"role", "input"}}, {{"shape", {rows, cols}}, {"role", "output"}}};
    v.push_back({fmt::format("softmax_{}", cols), cuda_test::softmax_op_func(cols, threads), "softmax", rowsxcols,
                 json::array({rows}), 2 * f4 * rows * cols, 0, "SHFL"});
    json ln = {{{"shape", {rows, cols}}, {"role", "input"}},
               {{"shape", {cols}}, {"role", "gamma"}},
               {{"shape", {cols}}, {"role", "beta"}},
               {{"shape", {rows, cols}}, {"role", "output"}}};
    v.push_back({fmt::format("layer_norm_{}", cols), cuda_test::layer_norm_op_func(cols, threads), "layer_norm", ln,
                 json::array({rows}), 2 * f4 * rows * cols, 0, "SHFL"});
  }
  const int64_t rows = 16384, cols = 4096;
  v.push_back({"row_sum_4096",
               cuda_test::reduce_rows_op_func(4096, 1024),
               "sum",
               {{{"shape", {rows, cols}}, {"role", "input"}}, {{"shape", {rows}}, {"role", "output"}}},
               json::array({rows}),
               f4 * rows * cols,
               static_cast<double>(rows * cols),
               "SHFL"});
  const int64_t n = 4096;
  v.push_back({"sgemm_4096",
               cuda_test::matmul_reference_func(n, n, n, {}, "sgemm"),
               "matmul",
               {{{"shape", {n, n}}, {"role", "input"}},
                {{"shape", {n, n}}, {"role", "input"}},
                {{"shape", {n, n}}, {"role", "output"}}},
               json::array(),
               3 * f4 * n * n,
               2.0 * n * n * n,
               "LDGSTS"});
  // fp16 in, fp32 accumulated and out; cuBLAS through torch.matmul in fp16.
  BenchCase h{"hgemm_4096",
              cuda_test::matmul_tensorcore_func(n, n, n, Float(16), {}, "hgemm"),
              "matmul",
              {{{"shape", {n, n}}, {"role", "input"}, {"dtype", "float16"}},
               {{"shape", {n, n}}, {"role", "input"}, {"dtype", "float16"}},
               {{"shape", {n, n}}, {"role", "output"}}},
              json::array(),
              2.0 * 2 * n * n + f4 * n * n,
              2.0 * n * n * n,
              "HMMA.16816.F32"};
  v.push_back(h);
  h.name = "hgemm_4096_sync";  // the same without cp.async: what the asynchronous copies gain
  h.options.async_copies = false;
  v.push_back(h);
  // Warpgroup MMA (sm_90a): bf16 and fp16 in, fp32 accumulated and out, against
  // torch.matmul (cuBLAS) in the same input type.
  // M x K times K x N.
  auto wgmma_case = [&](const std::string& name, std::array<int64_t, 3> mnk, DataType t,
                        const ops::MatmulWgmmaOptions& o, const std::string& func) {
    const std::string type = t == Float(16) ? "float16" : "bfloat16";
    const auto [M, N, K] = mnk;
    v.push_back({name,
                 matmul_wgmma_func(int(M), int(N), int(K), t, o, func),
                 "matmul",
                 {{{"shape", {M, K}}, {"role", "input"}, {"dtype", type}},
                  {{"shape", {K, N}}, {"role", "input"}, {"dtype", type}},
                  {{"shape", {M, N}}, {"role", "output"}}},
                 json::array(),
                 2.0 * (M * K + K * N) + f4 * M * N,
                 2.0 * M * N * K,
                 "HGMMA"});
  };
  for (int64_t size : {int64_t{4096}, int64_t{8192}})
    for (DataType t : {BFloat(16), Float(16)}) {
      if (size == 8192 && t == Float(16)) continue;
      wgmma_case(fmt::format("{}gemm_wgmma_{}", t == Float(16) ? "h" : "b", size), {size, size, size}, t, {},
                 "gemm_wgmma");
    }
  ops::MatmulWgmmaOptions persistent;  // 128 blocks over 8192^2 / 128^2 = 4096 tiles
  persistent.persistent_blocks = 128;
  wgmma_case("bgemm_wgmma_8192_persistent", {8192, 8192, 8192}, BFloat(16), persistent, "gemm_wgmma_persistent");
  ops::MatmulWgmmaOptions specialized = persistent;  // and a producer warpgroup
  specialized.warp_specialized = true;
  for (const int64_t size : {int64_t{4096}, int64_t{8192}})
    wgmma_case(fmt::format("bgemm_wgmma_{}_warp_specialized", size), {size, size, size}, BFloat(16), specialized,
               fmt::format("gemm_wgmma_ws_{}", size));
  {  // A fused epilogue (bias, relu, bfloat16 out) against cuBLASLt's addmm and relu.
    const int64_t size = 4096;
    v.push_back({"bgemm_wgmma_bias_relu_4096",
                 matmul_wgmma_bias_relu_func(int(size), int(size), int(size), {}, "gemm_wgmma_bias_relu"),
                 "linear_relu",
                 {{{"shape", {size, size}}, {"role", "input"}, {"dtype", "bfloat16"}},
                  {{"shape", {size, size}}, {"role", "input"}, {"dtype", "bfloat16"}},
                  {{"shape", {size}}, {"role", "input"}},
                  {{"shape", {size, size}}, {"role", "output"}, {"dtype", "bfloat16"}}},
                 json::array(),
                 2.0 * 3 * size * size + f4 * size,
                 2.0 * size * size * size,
                 "HGMMA"});
  }
  ops::MatmulWgmmaOptions threads_kmajor;  // the first wgmma GEMM's copies (the threads', B transposed):
  threads_kmajor.tma = threads_kmajor.b_mn_major = false;  // what TMA and MN-major B gain
  wgmma_case("bgemm_wgmma_4096_threads_kmajor", {4096, 4096, 4096}, BFloat(16), threads_kmajor, "gemm_wgmma");
  // Not tile multiples: 4000 x 4104 in 128 x 128 tiles overlaps 96 rows and 120 columns; K's
  // last tile is 32 of 64 wide
  wgmma_case("bgemm_wgmma_4000x4104x4000", {4000, 4104, 4000}, BFloat(16), {}, "gemm_wgmma_uneven");
  // The fastest options measured on an H200 (2026-11-29: 1.06-1.10x cuBLAS at 8192, 0.95x
  // at 4096): two consumer warpgroups of 64 x 256 wgmmas, 3 stages, 128 persistent blocks.
  for (const int64_t size : {int64_t{4096}, int64_t{8192}})
    wgmma_case(fmt::format("bgemm_wgmma_{}_ws_128x256", size), {size, size, size}, BFloat(16),
               ops::fastest_wgmma_options(size, size), fmt::format("gemm_wgmma_ws_wide_{}", size));
  // Four consumer warpgroups: 640 threads launch with 96 registers, so setmaxnreg's split
  // is 40 / 104 (WarpSpecialization::balanced); at 40 / 112 this kernel hung on an H200.
  ops::MatmulWgmmaOptions four = specialized;
  four.block_m = 256;
  four.stages = 4;
  wgmma_case("bgemm_wgmma_8192_ws_256x128", {8192, 8192, 8192}, BFloat(16), four, "gemm_wgmma_ws_four");
  // A linear layer (w N x K, as PyTorch keeps a layer's weights) through auto_schedule,
  // against F.linear (cuBLAS with w transposed).
  for (const int64_t size : {int64_t{4096}, int64_t{8192}})
    v.push_back({fmt::format("blinear_auto_{}", size),
                 linear_auto_func(int(size), int(size), int(size), fmt::format("linear_auto_{}", size)),
                 "linear",
                 {{{"shape", {size, size}}, {"role", "input"}, {"dtype", "bfloat16"}},
                  {{"shape", {size, size}}, {"role", "input"}, {"dtype", "bfloat16"}},
                  {{"shape", {size, size}}, {"role", "output"}}},
                 json::array(),
                 2.0 * 2 * size * size + f4 * size * size,
                 2.0 * size * size * size,
                 "HGMMA"});
  ops::MatmulWgmmaOptions registers;  // A from register fragments: what the RS form costs or gains
  registers.a_from_registers = true;
  wgmma_case("bgemm_wgmma_4096_registers", {4096, 4096, 4096}, BFloat(16), registers, "gemm_wgmma_rs");
  v.push_back({"grid_sample_1x256x200x200",
               grid_sample_cuda(1, 256, 200, 200),
               "grid_sample",
               {{{"shape", {1, 256, 200, 200}}, {"role", "input"}},
                {{"shape", {1, 200, 200, 2}}, {"role", "grid"}},
                {{"shape", {1, 256, 200, 200}}, {"role", "output"}}},
               json::array(),
               f4 * (2.0 * 256 * 200 * 200 + 2 * 200 * 200),
               0,
               ""});
  v.push_back({"grid_sample_backward_1x256x200x200",
               grid_sample_backward_cuda(1, 256, 200, 200),
               "grid_sample_backward",
               {{{"shape", {1, 256, 200, 200}}, {"role", "input"}},
                {{"shape", {1, 200, 200, 2}}, {"role", "grid"}},
                {{"shape", {1, 256, 200, 200}}, {"role", "input"}},
                {{"shape", {1, 256, 200, 200}}, {"role", "output"}},
                {{"shape", {1, 200, 200, 2}}, {"role", "output"}}},
               json::array(),
               f4 * (4.0 * 256 * 200 * 200 + 4 * 200 * 200),
               0,
               ""});
  // Attention: prefill (batch 4, 32 heads, 4096 x 4096, dim 128; causal and not; float16
  // and bfloat16) and decoding (one query against 8192 keys, split-K in 16 parts), against PyTorch's
  // scaled_dot_product_attention (its flash backend where it applies).
  // Prefill at 4 x 32 x 4096 x 128: `warps` warps per block, blocks of `key_block` keys.
  auto prefill = [&](const std::string& name, DataType t, bool causal, int warps, int key_block,
                     CudaOptions options = {}, bool wgmma = false) {
    const int64_t B = 4, H = 32, L = 4096, D = 128;
    const std::string type = t == Float(16) ? "float16" : "bfloat16";
    json qkv = {{"shape", {B, H, L, D}}, {"role", "input"}, {"dtype", type}};
    json out = {{"shape", {B, H, L, D}}, {"role", "output"}, {"dtype", type}};
    v.push_back({name,
                 attention_cuda(B, H, L, L, D, t, causal, warps, key_block, "attention", 1, wgmma),
                 causal ? "attention_causal" : "attention",
                 {qkv, qkv, qkv, out},
                 json::array(),
                 2.0 * 4 * B * H * L * D,
                 (causal ? 2.0 : 4.0) * B * H * L * L * D,
                 wgmma ? "HGMMA" : "HMMA.16816.F32",
                 options});
  };
  for (DataType t : {Float(16), BFloat(16)})
    for (bool causal : {false, true})
      prefill(
          fmt::format("attention_{}_4x32x4096x128{}", t == Float(16) ? "float16" : "bfloat16", causal ? "_causal" : ""),
          t, causal, 4, 64);
  // The same with CUDA's fast float32 intrinsics (CudaOptions::fast_math: exp by __expf,
  // as FlashAttention is built with --use_fast_math): the exponentials' share of the loop.
  CudaOptions fast;
  fast.fast_math = true;
  prefill("attention_float16_4x32x4096x128_fast", Float(16), false, 4, 64, fast);
  // The register form's tile choices, to pick from on the GPU: 4 warps with blocks of 32
  // keys (fewer registers, more blocks per SM) and 8 warps (128 queries per block).
  for (const auto& [warps, key_block] : {std::pair{4, 32}, std::pair{8, 64}})
    prefill(fmt::format("attention_float16_4x32x4096x128_w{}_kb{}", warps, key_block), Float(16), false, warps,
            key_block);
  // The Hopper form (AttentionCudaOptions::wgmma: a warpgroup per 64 queries, the scores
  // and probs · v by wgmma, the probabilities as the second's A registers), one and two
  // warpgroups per block.
  for (bool causal : {false, true})
    prefill(fmt::format("attention_wgmma_float16_4x32x4096x128{}", causal ? "_causal" : ""), Float(16), causal, 4, 64,
            {}, true);
  prefill("attention_wgmma_float16_4x32x4096x128_w8", Float(16), false, 8, 64, {}, true);
  // What auto_schedule gives for sm_90a (bench/README.md, session 56: wgmma, two
  // warpgroups per block; one when causal).
  for (bool causal : {false, true}) {
    const int64_t B = 4, H = 32, L = 4096, D = 128;
    json qkv = {{"shape", {B, H, L, D}}, {"role", "input"}, {"dtype", "float16"}};
    v.push_back({fmt::format("attention_auto_float16_4x32x4096x128{}", causal ? "_causal" : ""),
                 attention_auto_func(B, H, L, L, D, causal, "cuda -arch=sm_90a"),
                 causal ? "attention_causal" : "attention",
                 {qkv, qkv, qkv, {{"shape", {B, H, L, D}}, {"role", "output"}, {"dtype", "float16"}}},
                 json::array(),
                 2.0 * 4 * B * H * L * D,
                 (causal ? 2.0 : 4.0) * B * H * L * L * D,
                 "HGMMA"});
  }
  {
    const int64_t B = 4, H = 32, N = 8192, D = 128;
    json q = {{"shape", {B, H, 1, D}}, {"role", "input"}, {"dtype", "float16"}};
    json kv = {{"shape", {B, H, N, D}}, {"role", "input"}, {"dtype", "float16"}};
    json out = {{"shape", {B, H, 1, D}}, {"role", "output"}, {"dtype", "float16"}};
    // Split-K in 16 parts; in 64 (4 x 32 x 64 blocks of 128 keys); as auto_schedule splits
    // it (until the blocks fill the GPU: 2 parts).
    const std::pair<std::string, LoweredFunc> forms[] = {
        {"attention_decoding_float16_4x32x1x8192x128",
         attention_cuda(B, H, 1, N, D, Float(16), false, 1, 64, "attention", 16)},
        {"attention_decoding_float16_4x32x1x8192x128_s64",
         attention_cuda(B, H, 1, N, D, Float(16), false, 1, 64, "attention", 64)},
        {"attention_decoding_auto_float16_4x32x1x8192x128", attention_auto_func(B, H, 1, N, D, false, "cuda")}};
    for (const auto& [name, func] : forms)
      v.push_back({name,
                   func,
                   "attention",
                   {q, kv, kv, out},
                   json::array(),
                   2.0 * 2 * B * H * N * D,
                   4.0 * B * H * N * D,
                   "HMMA.16816.F32"});
  }
  v.push_back(bev_pool_bench(false));
  v.push_back(bev_pool_bench(true));
  add_normalization_backward(v, 8192, 4096);
  add_derived_backward(v);
  for (BenchCase& b : ansor_bench_cases()) v.push_back(std::move(b));
  return v;
}

}  // namespace
}  // namespace te

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: te_gpu_kit OUT_DIR\n";
    return 2;
  }
  namespace fs = std::filesystem;
  fs::path root = argv[1];
  try {
    fs::create_directories(root / "corpus");
    std::mt19937 rng(2026);
    te::cuda_test::register_extern_device_functions();  // interpret() of the call_extern kernels
    nlohmann::json corpus = nlohmann::json::array();
    for (const te::cuda_test::TestModule& m : te::cuda_test::all_test_modules())
      corpus.push_back(te::write_module(m, root / "corpus" / m.func.name, rng));
    corpus.push_back(te::write_bev_pool_corpus(root / "corpus" / "bev_pool_small", false, rng));
    corpus.push_back(te::write_bev_pool_corpus(root / "corpus" / "bev_pool_backward_small", true, rng));
    corpus.push_back(te::write_tensor_core_corpus(root / "corpus", te::Float(16), "hgemm_tensor_cores", rng));
    corpus.push_back(te::write_tensor_core_corpus(root / "corpus", te::BFloat(16), "bgemm_tensor_cores", rng));
    corpus.push_back(te::write_tensor_core_corpus(root / "corpus", te::Float(16), "hlinear_tensor_cores", rng, true));
    // TMA copies and MN-major B (the default), then each alone: a failure names its part.
    te::ops::MatmulWgmmaOptions threads_kmajor, tma_kmajor, threads_mn;
    threads_kmajor.tma = tma_kmajor.b_mn_major = threads_kmajor.b_mn_major = threads_mn.tma = false;
    corpus.push_back(te::write_wgmma_corpus(root / "corpus", te::Float(16), {}, "hgemm_wgmma", rng));
    corpus.push_back(te::write_wgmma_corpus(root / "corpus", te::BFloat(16), {}, "bgemm_wgmma", rng));
    corpus.push_back(
        te::write_wgmma_corpus(root / "corpus", te::BFloat(16), threads_kmajor, "bgemm_wgmma_threads_kmajor", rng));
    corpus.push_back(
        te::write_wgmma_corpus(root / "corpus", te::BFloat(16), tma_kmajor, "bgemm_wgmma_tma_kmajor", rng));
    corpus.push_back(
        te::write_wgmma_corpus(root / "corpus", te::BFloat(16), threads_mn, "bgemm_wgmma_threads_mn", rng));
    te::ops::MatmulWgmmaOptions specialized;  // a producer warpgroup, 3 tiles over 2 persistent blocks
    specialized.warp_specialized = true;
    specialized.persistent_blocks = 2;
    corpus.push_back(
        te::write_wgmma_corpus(root / "corpus", te::BFloat(16), specialized, "bgemm_wgmma_warp_specialized", rng));
    // C's last tiles shifted inward (200 x 136: rows from 72, columns from 72) and K's last
    // tile 8 wide (zeros past K from TMA), warp-specialized
    corpus.push_back(te::write_wgmma_corpus(root / "corpus", te::BFloat(16), specialized, "bgemm_wgmma_uneven", rng,
                                            {200, 136, 200}));
    te::ops::MatmulWgmmaOptions registers;  // A from register fragments (the wgmma RS form)
    registers.a_from_registers = true;
    corpus.push_back(te::write_wgmma_corpus(root / "corpus", te::BFloat(16), registers, "bgemm_wgmma_registers", rng));
    corpus.push_back(te::write_wgmma_epilogue_corpus(root / "corpus", "bgemm_wgmma_bias_relu", rng));
    // A linear layer through auto_schedule (sm_90a): 2 x 2 tiles of 128 x 256 shifted inward,
    // K's last tile half zeros, w's rows K-major.
    corpus.push_back(te::write_gemm_corpus(root / "corpus" / "blinear_auto",
                                           te::linear_auto_func(200, 272, 96, "blinear_auto"), 200, 272, 96,
                                           te::BFloat(16), rng, true));
    corpus.push_back(te::write_attention_corpus(root / "corpus", te::Float(16), false, "attention_float16", rng));
    corpus.push_back(
        te::write_attention_corpus(root / "corpus", te::BFloat(16), true, "attention_bfloat16_causal", rng));
    corpus.push_back(te::write_attention_corpus(root / "corpus", te::BFloat(16), true,
                                                "attention_wgmma_bfloat16_causal", rng, true));
    std::ofstream(root / "corpus.json") << corpus.dump(1) << "\n";
    nlohmann::json bench = nlohmann::json::array();
    for (const te::BenchCase& b : te::bench_cases()) bench.push_back(te::write_bench(b, root / "bench"));
    std::ofstream(root / "bench.json") << bench.dump(1) << "\n";
    std::cout << "te_gpu_kit: " << corpus.size() << " corpus kernels and " << bench.size() << " bench kernels in "
              << root.string() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "te_gpu_kit: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
