// grid_sample, bilinear, zeros padding, align_corners = false, NCHW float32, for the two
// shapes of the grid_sample issue and two grids each: random (i.i.d. U(-1, 1), the worst
// locality) and smooth (an affine warp: mild rotation, scale and shift, as in BEV and image
// warping). te's schedule_grid_sample_cpu against a scalar C++ loop (checked against the
// test suite's independent reference) and Halide (when found).
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
#include "gridsample_reference.h"
#include "te_kernels.h"
#ifdef TE_BENCH_HALIDE
#include "halide_peer.h"
#endif

namespace te_bench {

namespace {

struct Shape {
  int64_t N, C, H, W, Ho, Wo;
  std::string name() const {
    return std::to_string(N) + "x" + std::to_string(C) + "x" + std::to_string(H) + "x" + std::to_string(W) + "-" +
           std::to_string(Ho) + "x" + std::to_string(Wo);
  }
};

struct GsData {
  Shape s;
  te::NDArray data, grid, out;
  std::vector<float> expected;  // from the scalar loop
  GsData(const Shape& shape, bool smooth)
      : s(shape),
        data(te::NDArray::empty({s.N, s.C, s.H, s.W}, te::Float(32))),
        grid(te::NDArray::empty({s.N, s.Ho, s.Wo, 2}, te::Float(32))),
        out(te::NDArray::empty({s.N, s.C, s.Ho, s.Wo}, te::Float(32))) {
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> u(-1, 1);
    float* d = static_cast<float*>(data.data());
    for (int64_t i = 0; i < s.N * s.C * s.H * s.W; ++i) d[i] = u(rng);
    float* g = static_cast<float*>(grid.data());
    for (int64_t n = 0; n < s.N; ++n) {
      // PyTorch's affine_grid (align_corners = false) of a per-image warp.
      const double angle = (10.0 + 2.0 * double(n)) * 3.14159265358979 / 180, scale = 1.05, shift = 0.05;
      for (int64_t h = 0; h < s.Ho; ++h)
        for (int64_t w = 0; w < s.Wo; ++w) {
          float* p = g + ((n * s.Ho + h) * s.Wo + w) * 2;
          if (!smooth) {
            p[0] = u(rng);
            p[1] = u(rng);
            continue;
          }
          const double x = (2.0 * double(w) + 1) / double(s.Wo) - 1;
          const double y = (2.0 * double(h) + 1) / double(s.Ho) - 1;
          p[0] = float(scale * (std::cos(angle) * x - std::sin(angle) * y) + shift);
          p[1] = float(scale * (std::sin(angle) * x + std::cos(angle) * y) - shift);
        }
    }
    expected.resize(size_t(s.N * s.C * s.Ho * s.Wo));
    grid_sample_scalar(d, g, expected.data(), s.N, s.C, s.H, s.W, s.Ho, s.Wo);
  }
  float* out_ptr() { return static_cast<float*>(out.data()); }
  void clear() { std::fill(out_ptr(), out_ptr() + expected.size(), 0.0f); }
  bool check() {
    for (size_t i = 0; i < expected.size(); ++i)
      if (!(std::abs(out_ptr()[i] - expected[i]) <= 1e-4f * (1 + std::abs(expected[i])))) return false;
    return true;
  }
};

// The bench's scalar loop must agree with the test suite's independent reference.
bool scalar_loop_matches_reference() {
  GsData d({2, 3, 7, 9, 5, 6}, false);
  gsref::Options o;  // bilinear, zeros, align_corners = false
  std::vector<float> in(static_cast<const float*>(d.data.data()),
                        static_cast<const float*>(d.data.data()) + 2 * 3 * 7 * 9);
  std::vector<float> grid(static_cast<const float*>(d.grid.data()),
                          static_cast<const float*>(d.grid.data()) + 2 * 5 * 6 * 2);
  std::vector<float> ref = gsref::grid_sample<float>(in, {2, 3, 7, 9}, grid, {2, 5, 6, 2}, o);
  for (size_t i = 0; i < ref.size(); ++i)
    if (std::abs(ref[i] - d.expected[i]) > 1e-5f) return false;
  return true;
}

std::shared_ptr<GsData> data(const Shape& s, bool smooth) {
  static std::map<std::string, std::shared_ptr<GsData>> all;
  auto& d = all[s.name() + (smooth ? "s" : "r")];
  if (!d) d = std::make_shared<GsData>(s, smooth);
  return d;
}

void add_impl(const std::string& g, const Shape& s, bool smooth, const std::string& impl, bool baseline,
              std::function<std::function<void()>(GsData&)> prepare) {
  auto call = std::make_shared<std::function<void()>>();
  add(g, impl, [=](benchmark::State& st) {
    std::shared_ptr<GsData> d = data(s, smooth);
    if (!*call) {
      *call = prepare(*d);
      d->clear();
      (*call)();
      if (!d->check()) return st.SkipWithError((impl + ": wrong result").c_str());
    }
    run_case(st, g, impl, baseline, *call);
    if (baseline) results().add_companion(g, impl, *call);
  });
}

}  // namespace

void register_grid_sample() {
  const bool ok = scalar_loop_matches_reference();
  for (const Shape& s : {Shape{4, 32, 64, 64, 64, 64}, Shape{1, 256, 200, 200, 200, 200}})
    for (bool smooth : {false, true}) {
      const std::string g = "grid_sample/" + s.name() + "/" + (smooth ? "smooth" : "random");
      results().define_group(g, {double(s.N * s.C * s.Ho * s.Wo) * 1e-9, "Goutputs/s"});
      add_impl(g, s, smooth, "scalar", true, [ok, s](GsData& d) -> std::function<void()> {
        if (!ok) return [] {};  // fails its check: the loop disagrees with the reference
        return [&d, s] {
          grid_sample_scalar(static_cast<const float*>(d.data.data()), static_cast<const float*>(d.grid.data()),
                             d.out_ptr(), s.N, s.C, s.H, s.W, s.Ho, s.Wo);
        };
      });
#ifdef TE_BENCH_HALIDE
      add_impl(g, s, smooth, "halide", true, [s](GsData& d) {
        return halide::grid_sample(static_cast<const float*>(d.data.data()), static_cast<const float*>(d.grid.data()),
                                   d.out_ptr(), int(s.N), int(s.C), int(s.H), int(s.W), int(s.Ho), int(s.Wo));
      });
#endif
      add_impl(g, s, smooth, "te", false, [s](GsData& d) {
        te::Function f = te::build(te_grid_sample(s.N, s.C, s.H, s.W, s.Ho, s.Wo))("grid_sample");
        return [f, &d] { f(d.data, d.grid, d.out); };
      });
    }
}

}  // namespace te_bench
