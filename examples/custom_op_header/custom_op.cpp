// custom_op: a user-defined fused operator (my_ops.h) from definition to deployment.
//   1. Build y = gelu(x + bias) * scale from my_ops.h and print its loop nest with the
//      CPU schedule and with the CUDA schedule.
//   2. Run the CPU schedule through the interpreter and the LLVM JIT and check both
//      against a plain C++ reference.
//   3. Export it ahead of time: <out_dir>/bias_gelu_scale.o and bias_gelu_scale.h, plain
//      C that a program links with libte_runtime alone (use_from_c.c does), and
//      <out_dir>/bias_gelu_scale.cu for nvcc.
// Usage: custom_op [out_dir, default "."]. Exits 1 on a wrong result.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "my_ops.h"

using namespace te;

namespace {

float reference(float x, float bias, float scale) {
  double v = static_cast<double>(x) + bias;
  double g = 0.5 * v * (1.0 + std::tanh(0.7978845608 * (v + 0.044715 * v * v * v)));
  return static_cast<float>(g * scale);
}

void check(const NDArray& y, const std::vector<float>& x, const std::vector<float>& bias, float scale, int64_t cols,
           const char* what) {
  std::vector<float> got = y.to_vector<float>();
  for (size_t k = 0; k < got.size(); ++k) {
    float want = reference(x[k], bias[k % static_cast<size_t>(cols)], scale);
    if (!(std::fabs(got[k] - want) <= 1e-5f * std::max(1.0f, std::fabs(want)))) {
      std::cerr << what << ": y[" << k << "] = " << got[k] << ", expected " << want << "\n";
      std::exit(1);
    }
  }
  std::cout << what << ": all " << got.size() << " values match the C++ reference\n";
}

}  // namespace

int main(int argc, char** argv) {
  const std::string out_dir = argc > 1 ? argv[1] : ".";

  Var n("n"), m("m");
  Var scale("scale", Float(32));
  Tensor X = placeholder({n, m}, Float(32), "x");
  Tensor bias = placeholder({m}, Float(32), "bias");
  Tensor Y = my_ops::bias_gelu_scale(X, bias, scale);

  Schedule cpu_s = create_schedule({Y});
  my_ops::schedule_bias_gelu_scale_cpu(cpu_s, Y);
  LoweredFunc cpu = lower(cpu_s, {X, bias, Y}, "bias_gelu_scale");  // scale: a scalar param
  std::cout << "== CPU schedule ==\n" << cpu;

  Schedule gpu_s = create_schedule({Y});
  my_ops::schedule_bias_gelu_scale_cuda(gpu_s, Y);
  LoweredFunc gpu = lower(gpu_s, {X, bias, Y}, "bias_gelu_scale");
  std::cout << "\n== CUDA schedule ==\n" << gpu;

  const int64_t rows = 37, cols = 53;  // not multiples of the vector width or block size
  std::vector<float> x(rows * cols), b(cols);
  for (size_t k = 0; k < x.size(); ++k) x[k] = static_cast<float>(static_cast<int>(k % 97) - 48) / 16.0f;
  for (size_t k = 0; k < b.size(); ++k) b[k] = static_cast<float>(static_cast<int>(k % 11) - 5) / 8.0f;
  const float s = 1.5f;
  NDArray nx = NDArray::from_vector(x, {rows, cols}), nb = NDArray::from_vector(b, {cols});

  NDArray y1 = NDArray::empty({rows, cols}, Float(32));
  interpret(cpu, {nx, nb, y1, s});
  check(y1, x, b, s, cols, "interpret (CPU schedule)");
  NDArray y2 = NDArray::empty({rows, cols}, Float(32));
  interpret(gpu, {nx, nb, y2, s});
  check(y2, x, b, s, cols, "interpret (CUDA schedule)");
  NDArray y3 = NDArray::empty({rows, cols}, Float(32));
  build(cpu)("bias_gelu_scale")(nx, nb, y3, s);
  check(y3, x, b, s, cols, "LLVM JIT (CPU schedule)");

  export_object(cpu, out_dir + "/bias_gelu_scale.o");
  export_header(cpu, out_dir + "/bias_gelu_scale.h");
  std::ofstream(out_dir + "/bias_gelu_scale.cu") << build_cuda(gpu).source();
  std::cout << "\nwrote " << out_dir << "/bias_gelu_scale.{o,h,cu}\n  " << c_prototype(cpu) << "\n";
  return 0;
}
