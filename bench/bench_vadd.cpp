// Vector add of 2^24 float32 (three 64 MiB arrays: far larger than the caches), against
// a memcpy that moves the same bytes: it copies 96 MiB, so it reads and writes 192 MiB
// as the add does, and the time ratio is the bandwidth ratio.
#include <te/te.h>

#include <cstring>
#include <memory>
#include <vector>

#include "baselines.h"
#include "bench_util.h"
#include "cases.h"
#include "te_kernels.h"
#ifdef TE_BENCH_HALIDE
#include "halide_peer.h"
#endif

namespace te_bench {

namespace {

constexpr int64_t kN = int64_t(1) << 24;

struct VaddData {
  te::NDArray a = te::NDArray::empty({kN}, te::Float(32));
  te::NDArray b = te::NDArray::empty({kN}, te::Float(32));
  te::NDArray c = te::NDArray::empty({kN}, te::Float(32));
  std::vector<char> src = std::vector<char>(kN * 6, 1), dst = std::vector<char>(kN * 6, 0);
  VaddData() {
    float* pa = static_cast<float*>(a.data());
    float* pb = static_cast<float*>(b.data());
    for (int64_t i = 0; i < kN; ++i) {
      pa[i] = static_cast<float>(i % 1000);
      pb[i] = 0.5f;
    }
    std::memset(c.data(), 0, kN * 4);
  }
  bool check() const {
    const float* pc = static_cast<const float*>(c.data());
    for (int64_t i = 0; i < kN; i += 4099)
      if (pc[i] != static_cast<float>(i % 1000) + 0.5f) return false;
    return true;
  }
};

VaddData& data() {
  static VaddData d;
  return d;
}

}  // namespace

void register_vadd() {
  const std::string g = "vadd/2^24";
  results().define_group(g, {12.0 * kN * 1e-9, "GB/s"});
  add(g, "memcpy", [g](benchmark::State& st) {
    VaddData& d = data();
    auto copy = [&d] { copy_bytes(d.dst.data(), d.src.data(), d.src.size()); };
    run_case(st, g, "memcpy", true, copy);
    results().add_companion(g, "memcpy", copy);
  });
#ifdef TE_BENCH_HALIDE
  auto h = std::make_shared<std::function<void()>>();
  add(g, "halide", [g, h](benchmark::State& st) {
    VaddData& d = data();
    if (!*h) {
      std::memset(d.c.data(), 0, kN * 4);
      *h = halide::vadd(static_cast<const float*>(d.a.data()), static_cast<const float*>(d.b.data()),
                        static_cast<float*>(d.c.data()), kN);
      (*h)();
    }
    if (!d.check()) return st.SkipWithError("halide vadd: wrong result");
    run_case(st, g, "halide", true, *h);
    results().add_companion(g, "halide", *h);
  });
#endif
  auto f = std::make_shared<te::Function>();
  add(g, "te", [g, f](benchmark::State& st) {
    VaddData& d = data();
    if (!f->defined()) {
      std::memset(d.c.data(), 0, kN * 4);
      *f = te::build(te_vadd(kN))("vadd");
      (*f)(d.a, d.b, d.c);
    }
    if (!d.check()) return st.SkipWithError("te vadd: wrong result");
    run_case(st, g, "te", false, [&] { (*f)(d.a, d.b, d.c); });
  });
}

}  // namespace te_bench
