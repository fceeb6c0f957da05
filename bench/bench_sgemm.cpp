// sgemm, float32, M = N = K = 512 and 1024: te's naive and best schedules against a plain
// C++ triple loop, OpenBLAS (when found) and Halide (when found). Throughput in GFLOP/s
// and as a fraction of the measured FMA peak of the same threads.
#include <te/te.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "baselines.h"
#include "bench_util.h"
#include "cases.h"
#include "te_kernels.h"
#ifdef TE_BENCH_OPENBLAS
#include <cblas.h>
#endif
#ifdef TE_BENCH_HALIDE
#include "halide_peer.h"
#endif

namespace te_bench {

namespace {

struct SgemmData {
  int n;
  te::NDArray A, B, C;
  std::vector<float> expected;  // C from the C++ loop, to check every other result against
  explicit SgemmData(int size)
      : n(size),
        A(te::NDArray::empty({size, size}, te::Float(32))),
        B(te::NDArray::empty({size, size}, te::Float(32))),
        C(te::NDArray::empty({size, size}, te::Float(32))) {
    std::mt19937 rng(42);
    std::uniform_real_distribution<float> dist(-1, 1);
    for (float* p : {a(), b()})
      for (int64_t i = 0; i < int64_t(n) * n; ++i) p[i] = dist(rng);
    expected.resize(size_t(n) * n);
    sgemm_loop(a(), b(), expected.data(), n, n, n);
  }
  float* a() { return static_cast<float*>(A.data()); }
  float* b() { return static_cast<float*>(B.data()); }
  float* c() { return static_cast<float*>(C.data()); }
  void clear() { std::fill(c(), c() + int64_t(n) * n, 0.0f); }
  // The largest difference from the loop's result, relative to sqrt(K) (the rounding
  // error a K-term sum of products of numbers in [-1, 1] can accumulate).
  bool check() {
    double worst = 0;
    for (int64_t i = 0; i < int64_t(n) * n; ++i) worst = std::max(worst, double(std::abs(c()[i] - expected[i])));
    return worst <= 1e-4 * std::sqrt(double(n)) * 4;
  }
};

// One set of arrays per size, made on first use and kept (calls refer to them).
std::shared_ptr<SgemmData> data(int n) {
  static std::map<int, std::shared_ptr<SgemmData>> all;
  auto& d = all[n];
  if (!d) d = std::make_shared<SgemmData>(n);
  return d;
}

// Registers one implementation: prepare() builds it once (its call), the first call is
// checked against the loop's result, then it is timed. A fast baseline is also a companion
// of the te cases (bench_util.h); the C++ loop, 5 to 20 times slower than te, is not.
void add_impl(const std::string& g, int n, const std::string& impl, bool baseline,
              std::function<std::function<void()>(SgemmData&)> prepare, int iterations = 0) {
  const bool companion = baseline && impl != "cpp_loop";
  auto call = std::make_shared<std::function<void()>>();
  add(
      g, impl,
      [=](benchmark::State& st) {
        std::shared_ptr<SgemmData> d = data(n);
        if (!*call) {
          *call = prepare(*d);
          d->clear();
          (*call)();
          if (!d->check()) return st.SkipWithError((impl + ": wrong result").c_str());
        }
        run_case(st, g, impl, baseline, *call);
        if (companion) results().add_companion(g, impl, *call);
      },
      iterations);
}

}  // namespace

void register_sgemm(const Peak& peak) {
#ifdef TE_BENCH_OPENBLAS
  openblas_set_num_threads(threads());
#endif
  for (int n : {512, 1024}) {
    const std::string g = "sgemm/" + std::to_string(n);
    results().define_group(g, {2.0 * n * n * n * 1e-9, "GFLOP/s", peak.gflops});
    add_impl(g, n, "cpp_loop", true,
             [n](SgemmData& d) { return [&d, n] { sgemm_loop(d.a(), d.b(), d.c(), n, n, n); }; });
#ifdef TE_BENCH_OPENBLAS
    add_impl(g, n, "openblas", true, [n](SgemmData& d) {
      return [&d, n] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, d.a(), n, d.b(), n, 0.0f, d.c(), n);
      };
    });
#endif
#ifdef TE_BENCH_HALIDE
    add_impl(g, n, "halide", true, [n](SgemmData& d) { return halide::sgemm(d.a(), d.b(), d.c(), n, n, n); });
#endif
    for (bool best : {false, true}) {
      add_impl(
          g, n, best ? "te_best" : "te_naive", false,
          [n, best](SgemmData& d) {
            te::Function f = te::build(te_sgemm(n, n, n, best))(best ? "sgemm_best" : "sgemm_naive");
            return [f, &d] { f(d.A, d.B, d.C); };
          },
          // The naive schedule takes seconds at 1024: one timed call is enough to rank it.
          !best && n >= 1024 ? 1 : 0);
    }
  }
}

}  // namespace te_bench
