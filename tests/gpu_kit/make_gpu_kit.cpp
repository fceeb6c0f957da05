// te_gpu_kit OUT_DIR: the GPU check kit (scripts/gpu_check.sh). On this machine (te, LLVM,
// no GPU) it writes, for every kernel of the CUDA test corpus and the reference schedules,
// a folder with the kernel's .cu (with its host launcher), its arguments as .npy files and
// the arrays interpret() leaves in them, and a manifest.json; plus bench.json, the large
// shapes scripts/gpu_check.py times against PyTorch and cuBLAS on the GPU machine.
#include <fmt/format.h>
#include <te/ops/grid_sample.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>

#include "cuda_emulation/kernels.h"

namespace te {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// Values every kernel of the corpus accepts: small integers (indices, divisors, shifts),
// floats in [-2, 2).
NDArray random_array(const std::vector<int64_t>& shape, DataType t, std::mt19937& rng) {
  NDArray a = NDArray::empty(shape, t);
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::uniform_real_distribution<double> real(-2.0, 2.0);
  std::uniform_int_distribution<int> small(0, 7);
  for (int64_t i = 0; i < n; ++i) cuda_test::set_element(a, i, t.is_float() ? real(rng) : small(rng));
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

// One corpus kernel: its .cu, arguments, interpret()'s results, manifest.
json write_module(const cuda_test::TestModule& m, const fs::path& dir, std::mt19937& rng) {
  CudaModule cu = build_cuda(m.func, m.options);
  fs::create_directories(dir);
  std::ofstream(dir / "kernel.cu") << cu.source();
  std::map<const VarNode*, int64_t> chosen;
  std::vector<Argument> args;
  for (const Param& p : m.func.params) {
    if (p.is_buffer()) {
      std::vector<int64_t> shape;
      for (const Expr& e : p.buffer.shape()) shape.push_back(eval_extent(e, m.func, chosen));
      args.emplace_back(random_array(shape, p.buffer.dtype(), rng));
    } else if (p.var.dtype().is_float()) {
      args.emplace_back(1.5);
    } else {
      args.emplace_back(value_of(p.var, chosen));
    }
  }
  std::vector<Argument> before;
  for (const Argument& a : args) before.push_back(a.is_array() ? Argument(a.array().copy()) : a);
  json manifest = {{"name", m.func.name}, {"launcher", cu.name()}};
  try {
    interpret(m.func, args);
  } catch (const Error& e) {
    manifest["skip"] = std::string("interpret() refused the generated arguments: ") + e.what();
    return manifest;
  }
  json params = json::array();
  for (const CudaParam& lp : cu.launcher_params()) {
    size_t j = 0;
    bool found = false;
    for (; j < m.func.params.size(); ++j) {
      const Param& q = m.func.params[j];
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
      params.push_back({{"kind", "buffer"}, {"name", lp.name}, {"dtype", lp.buffer.dtype().to_string()},
                        {"input", in}, {"expected", out}});
    } else {
      const bool is_float = lp.var.dtype().is_float();
      json value = found ? (is_float ? json(args[j].float_value()) : json(args[j].int_value()))
                         : json(value_of(lp.var, chosen));
      params.push_back({{"kind", is_float ? "float" : "int"}, {"name", lp.name},
                        {"dtype", lp.var.dtype().to_string()}, {"value", value}});
    }
  }
  manifest["params"] = params;
  return manifest;
}

// A kernel timed at a large shape: its .cu in dir, how to make its arguments on the GPU,
// which PyTorch call it is compared with, and the bytes / FLOPs one call moves / does.
struct BenchCase {
  std::string name;
  LoweredFunc func;
  std::string reference;         // scripts/gpu_check.py's name for the PyTorch call
  json shapes;                   // per launcher buffer, in order: shape and role
  json scalars = json::array();  // per launcher scalar, in order
  double bytes = 0, flops = 0;
};

json write_bench(const BenchCase& b, const fs::path& root) {
  fs::create_directories(root / b.name);
  std::ofstream(root / b.name / "kernel.cu") << build_cuda(b.func).source();
  return {{"name", b.name}, {"launcher", b.func.name}, {"reference", b.reference}, {"buffers", b.shapes},
          {"scalars", b.scalars}, {"bytes", b.bytes}, {"flops", b.flops}};
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

std::vector<BenchCase> bench_cases() {
  std::vector<BenchCase> v;
  const double f4 = 4.0;
  for (int cols : {768, 4096}) {
    const int64_t rows = 8192;
    const int threads = cols == 768 ? 256 : 1024;
    json rowsxcols = {{{"shape", {rows, cols}}, {"role", "input"}}, {{"shape", {rows, cols}}, {"role", "output"}}};
    v.push_back({fmt::format("softmax_{}", cols), cuda_test::softmax_op_func(cols, threads), "softmax", rowsxcols,
                 json::array({rows}), 2 * f4 * rows * cols, 0});
    json ln = {{{"shape", {rows, cols}}, {"role", "input"}},
               {{"shape", {cols}}, {"role", "gamma"}},
               {{"shape", {cols}}, {"role", "beta"}},
               {{"shape", {rows, cols}}, {"role", "output"}}};
    v.push_back({fmt::format("layer_norm_{}", cols), cuda_test::layer_norm_op_func(cols, threads), "layer_norm", ln,
                 json::array({rows}), 2 * f4 * rows * cols, 0});
  }
  const int64_t rows = 16384, cols = 4096;
  v.push_back({"row_sum_4096", cuda_test::reduce_rows_op_func(4096, 1024), "sum",
               {{{"shape", {rows, cols}}, {"role", "input"}}, {{"shape", {rows}}, {"role", "output"}}},
               json::array({rows}), f4 * rows * cols, static_cast<double>(rows * cols)});
  const int64_t n = 4096;
  v.push_back({"sgemm_4096", cuda_test::matmul_reference_func(n, n, n, {}, "sgemm"), "matmul",
               {{{"shape", {n, n}}, {"role", "input"}}, {{"shape", {n, n}}, {"role", "input"}},
                {{"shape", {n, n}}, {"role", "output"}}},
               json::array(), 3 * f4 * n * n, 2.0 * n * n * n});
  v.push_back({"grid_sample_1x256x200x200", grid_sample_cuda(1, 256, 200, 200), "grid_sample",
               {{{"shape", {1, 256, 200, 200}}, {"role", "input"}},
                {{"shape", {1, 200, 200, 2}}, {"role", "grid"}},
                {{"shape", {1, 256, 200, 200}}, {"role", "output"}}},
               json::array(), f4 * (2.0 * 256 * 200 * 200 + 2 * 200 * 200), 0});
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
