// grid_sample end to end: reads data and grid .npy files (or makes a random pair), runs
// the JIT-compiled kernel with te's CPU schedule, writes the output .npy, prints the time
// per call, and writes the CUDA version to grid_sample.cu.
//
//   grid_sample [data.npy grid.npy [out.npy]] [--mode bilinear|nearest|bicubic]
//               [--padding zeros|border|reflection] [--align-corners]
#include <te/te.h>
#include <te/ops/grid_sample.h>
#include <te/ops/grid_sample_cpu.h>
#include <te/ops/grid_sample_cuda.h>

#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <vector>

using namespace te;

namespace {

// A random image and a smooth warp (a mild rotation and scale), like BEV sampling grids.
std::pair<NDArray, NDArray> make_inputs() {
  const int64_t N = 1, C = 32, H = 64, W = 64;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> val(-1, 1);
  std::vector<float> data(N * C * H * W), grid(N * H * W * 2);
  for (float& v : data) v = val(rng);
  for (int64_t y = 0; y < H; ++y)
    for (int64_t x = 0; x < W; ++x) {
      float u = 2.0f * x / (W - 1) - 1, v = 2.0f * y / (H - 1) - 1;
      grid[(y * W + x) * 2 + 0] = 0.95f * u - 0.2f * v + 0.05f;
      grid[(y * W + x) * 2 + 1] = 0.2f * u + 0.95f * v - 0.05f;
    }
  return {NDArray::from_vector(data, {N, C, H, W}), NDArray::from_vector(grid, {N, H, W, 2})};
}

std::vector<Expr> shape_of(const NDArray& a) {
  std::vector<Expr> s;
  for (int64_t d : a.shape()) s.push_back(Expr(static_cast<int>(d)));
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    ops::GridSampleOptions opts;
    std::vector<std::string> files;
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      if (a == "--mode" && i + 1 < argc)
        opts.mode = argv[++i];
      else if (a == "--padding" && i + 1 < argc)
        opts.padding_mode = argv[++i];
      else if (a == "--align-corners")
        opts.align_corners = true;
      else
        files.push_back(a);
    }
    NDArray data, grid;
    if (files.size() >= 2) {
      data = NDArray::load_npy(files[0]);
      grid = NDArray::load_npy(files[1]);
    } else {
      std::tie(data, grid) = make_inputs();
      std::cout << "no input files given: using a random " << data.shape_string() << " image and a smooth "
                << grid.shape_string() << " grid\n";
    }
    std::string out_path = files.size() >= 3 ? files[2] : "grid_sample_out.npy";

    Tensor D = placeholder(shape_of(data), data.dtype(), "data");
    Tensor G = placeholder(shape_of(grid), grid.dtype(), "grid");
    Tensor out = ops::grid_sample(D, G, opts);

    Schedule cpu = create_schedule({out});
    ops::schedule_grid_sample_cpu(cpu, out);
    Function f = build(lower(cpu, {D, G, out}, "grid_sample"))("grid_sample");
    std::vector<int64_t> out_shape;
    for (const Expr& e : out.shape()) out_shape.push_back(*as_const_int(e));
    NDArray result = NDArray::empty(out_shape, data.dtype());
    f(data, grid, result);
    result.save_npy(out_path);
    TimingResult t = time_evaluator(f, 10, 5)(data, grid, result);
    std::cout << opts.mode << "/" << opts.padding_mode << (opts.align_corners ? "/align_corners" : "") << ": output "
              << result.shape_string() << " written to " << out_path << "; " << t.median() * 1e3
              << " ms per call (median of 5)\n";

    Schedule gpu = create_schedule({out});
    ops::schedule_grid_sample_cuda(gpu, out);
    CudaModule cu = build_cuda(lower(gpu, {D, G, out}, "grid_sample"));
    std::ofstream("grid_sample.cu") << cu.source();
    std::cout << "wrote grid_sample.cu (" << cu.kernels().size() << " kernel, launcher " << cu.name() << ")\n";
    return 0;
  } catch (const Error& e) {
    std::cerr << "grid_sample: " << e.what() << "\n";
    return 1;
  }
}
