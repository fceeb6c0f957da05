// int8 GEMM (uint8 x int8 -> int32, B packed as [N/16, K/4, 16, 4]) with the tensorize
// intrinsic x86_dot_16x4_u8s8, against te's best float32 sgemm of the same size in the
// same run: the baseline column vs_te_sgemm_fp32 is the int8 speed-up. Also the same
// int8 schedule on generic vector code (target CPU x86-64-v3: no VNNI) and without the
// intrinsic (te's own loops). Throughput in GOP/s (one multiply-add = 2 operations).
#include <te/ops/gemm_int8.h>
#include <te/ops/gemm_int8_cpu.h>
#include <te/te.h>

#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "bench_util.h"
#include "cases.h"
#include "te_kernels.h"

namespace te_bench {

namespace {

struct Int8Data {
  int n;
  te::NDArray A, B, C, Af, Bf, Cf;  // uint8 / packed int8 / int32, and float32 for sgemm
  std::vector<int32_t> expected;
  explicit Int8Data(int size)
      : n(size),
        A(te::NDArray::empty({size, size}, te::UInt(8))),
        B(te::NDArray::empty({size / 16, size / 4, 16, 4}, te::Int(8))),
        C(te::NDArray::empty({size, size}, te::Int(32))),
        Af(te::NDArray::empty({size, size}, te::Float(32))),
        Bf(te::NDArray::empty({size, size}, te::Float(32))),
        Cf(te::NDArray::empty({size, size}, te::Float(32))) {
    std::mt19937 rng(7);
    const size_t nn = size_t(n) * size_t(n);
    std::vector<uint8_t> a(nn);
    std::vector<int8_t> b(nn);  // N x K
    for (auto& x : a) x = static_cast<uint8_t>(rng());
    for (auto& x : b) x = static_cast<int8_t>(rng());
    std::memcpy(A.data(), a.data(), nn);
    std::vector<int8_t> packed = te::ops::pack_b_u8s8(b.data(), n, n);
    std::memcpy(B.data(), packed.data(), nn);
    for (size_t i = 0; i < nn; ++i) {
      static_cast<float*>(Af.data())[i] = static_cast<float>(a[i]) / 256.0f;
      static_cast<float*>(Bf.data())[i] = static_cast<float>(b[i]) / 128.0f;
    }
    // Rows of C: int32 sums exact (|sum| < 2^31 for n <= 2^16).
    expected.assign(nn, 0);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        int32_t acc = 0;
        for (int k = 0; k < n; ++k) acc += int32_t{a[size_t(i) * n + k]} * int32_t{b[size_t(j) * n + k]};
        expected[size_t(i) * n + j] = acc;
      }
  }
  bool check() const { return C.to_vector<int32_t>() == expected; }
};

std::shared_ptr<Int8Data> data(int n) {
  static std::map<int, std::shared_ptr<Int8Data>> all;
  auto& d = all[n];
  if (!d) d = std::make_shared<Int8Data>(n);
  return d;
}

te::LoweredFunc int8_gemm(int n, bool tensorize) {
  te::ops::GemmU8S8 g = te::ops::gemm_u8s8(n, n, n);
  te::Schedule s = te::create_schedule({g.c});
  te::ops::GemmU8S8CpuOptions o;
  o.tensorize = tensorize;
  te::ops::schedule_gemm_u8s8_cpu(s, g, o);
  return te::lower(s, {g.a, g.b_packed, g.c}, tensorize ? "gemm_u8s8" : "gemm_u8s8_plain");
}

void add_int8(const std::string& g, int n, const std::string& impl, bool tensorize, const std::string& cpu) {
  auto call = std::make_shared<std::function<void()>>();
  add(g, impl, [=](benchmark::State& st) {
    std::shared_ptr<Int8Data> d = data(n);
    if (!*call) {
      te::BuildOptions options;
      options.target.cpu = cpu;
      te::LoweredFunc f = int8_gemm(n, tensorize);
      te::Function fn = te::build(f, options)(f.name);
      *call = [fn, d] { fn(d->A, d->B, d->C); };
      (*call)();
      if (!d->check()) return st.SkipWithError((impl + ": wrong result").c_str());
    }
    run_case(st, g, impl, false, *call);
  });
}

}  // namespace

void register_gemm_int8() {
  for (int n : {1024}) {
    const std::string g = "gemm_int8/" + std::to_string(n);
    results().define_group(g, {2.0 * n * n * n * 1e-9, "GOP/s", 0});
    // The float32 figure to compare with: te's best sgemm schedule (bench_sgemm.cpp).
    auto fp32 = std::make_shared<std::function<void()>>();
    add(g, "te_sgemm_fp32", [=](benchmark::State& st) {
      std::shared_ptr<Int8Data> d = data(n);
      if (!*fp32) {
        te::Function f = te::build(te_sgemm(n, n, n, true))("sgemm_best");
        *fp32 = [f, d] { f(d->Af, d->Bf, d->Cf); };
      }
      run_case(st, g, "te_sgemm_fp32", true, *fp32);
      results().add_companion(g, "te_sgemm_fp32", *fp32);
    });
    add_int8(g, n, "te_int8_tensorize", true, "");                   // the host CPU: vpdpbusd with VNNI
    add_int8(g, n, "te_int8_tensorize_generic", true, "x86-64-v3");  // the fallback sequence
    add_int8(g, n, "te_int8_plain", false, "");                      // the same loops, no intrinsic
  }
}

}  // namespace te_bench
