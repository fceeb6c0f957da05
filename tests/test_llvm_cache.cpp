// The compile cache (same kernel, same code; different variables, different code), code
// unloading when the last Module goes, and building and calling from 8 threads at once.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "te/te.h"
#include "test_llvm_util.h"

using namespace te;
using namespace te::llvm_test;

namespace {

// B[i] = A[i] * k + 1, built from fresh variables and buffers each time.
LoweredFunc scale(float k, const std::string& name = "scale") {
  Var n("n"), i("i");
  Buffer A("A", Float(32), {n}), B("B", Float(32), {n});
  return make_func(name, {buffer_param(A), buffer_param(B)}, serial(i, 0, n, store(B, load(A, {i}) * k + 1.0f, {i})));
}

TEST(LlvmCache, IdenticalKernelsCompileOnce) {
  JitStats before = jit_stats();
  Module m1 = build(scale(3.0f));
  Module m2 = build(scale(3.0f));  // equal IR from distinct nodes
  JitStats after = jit_stats();
  EXPECT_EQ(after.compilations - before.compilations, 1u);
  EXPECT_EQ(after.cache_hits - before.cache_hits, 1u);
  EXPECT_EQ(after.live_code_objects - before.live_code_objects, 1u);
  // Other constants, names or options are other kernels.
  Module m3 = build(scale(4.0f));
  Module m4 = build(scale(3.0f, "scale2"));
  Module m5 = build(scale(3.0f), exact_options());
  BuildOptions uncached;
  uncached.use_cache = false;
  Module m6 = build(scale(3.0f), uncached);
  EXPECT_EQ(jit_stats().compilations - after.compilations, 4u);
  NDArray a = random_array<float>({10}, 1), b = NDArray::empty({10}, Float(32));
  m2("scale")(a, b);
  EXPECT_EQ(b.to_vector<float>()[3], a.to_vector<float>()[3] * 3.0f + 1.0f);
}

// The key reads every BuildOptions field (src/codegen_llvm/build_options.h): a build that
// differs from an earlier live one in any single option that shapes the code compiles anew.
TEST(LlvmCache, EveryOptionIsPartOfTheKey) {
  std::vector<BuildOptions> variants(9);
  variants[1].opt_level = 2;
  variants[2].fma_contraction = false;
  variants[3].fast_vector_math = false;
  variants[4].check_data_indices = false;
  variants[5].streaming_store_min_bytes = -1;
#if defined(__x86_64__)
  variants[6].target.triple = "x86_64-linux-gnu";
  variants[8].target.features = "+sse2";
#elif defined(__aarch64__)
  variants[6].target.triple = "aarch64-linux-gnu";
  variants[8].target.features = "+neon";
#endif
#if defined(__x86_64__)
  variants[7].target.cpu = "x86-64";  // the baseline: every x86-64 host runs it
#else
  variants[7].target.cpu = "generic";
#endif
  variants.emplace_back();
  variants.back().target.vector_bits = 128;
  variants.emplace_back();
  variants.back().extern_libraries = {"libm.so.6"};
  std::vector<Module> live;
  JitStats before = jit_stats();
  for (const BuildOptions& o : variants) live.push_back(build(scale(5.0f, "keyed"), o));
  EXPECT_EQ(jit_stats().compilations - before.compilations, variants.size());
  // use_cache only decides whether to look: the same options again are a hit.
  JitStats again = jit_stats();
  for (const BuildOptions& o : variants) live.push_back(build(scale(5.0f, "keyed"), o));
  EXPECT_EQ(jit_stats().compilations, again.compilations);
  EXPECT_EQ(jit_stats().cache_hits - again.cache_hits, variants.size());
}

TEST(LlvmCache, SameTextDifferentVariablesAreDifferentKernels) {
  // Two shape variables both named n: the loop runs to A's extent in one kernel and to
  // B's in the other. (The key records variable identity, whatever the printer shows.)
  auto fill = [](bool to_b) {
    Var na("n"), nb("n"), i("i");
    Buffer A("A", Float(32), {na}), B("B", Float(32), {nb});
    return make_func("fill", {buffer_param(A), buffer_param(B)}, serial(i, 0, to_b ? nb : na, store(B, 1.0f, {i})));
  };
  Module by_a = build(fill(false));
  JitStats before = jit_stats();
  Module by_b = build(fill(true));
  EXPECT_EQ(jit_stats().compilations - before.compilations, 1u);
  NDArray a = NDArray::empty({3}, Float(32)), b1 = NDArray::empty({8}, Float(32)), b2 = NDArray::empty({8}, Float(32));
  by_a("fill")(a, b1);
  by_b("fill")(a, b2);
  EXPECT_EQ(b1.to_vector<float>(), (std::vector<float>{1, 1, 1, 0, 0, 0, 0, 0}));
  EXPECT_EQ(b2.to_vector<float>(), std::vector<float>(8, 1.0f));
}

TEST(LlvmCache, DroppedModulesUnloadTheirCode) {
  uint64_t live = jit_stats().live_code_objects;
  {
    Module m = build(scale(5.0f));
    Function f = m("scale");
    EXPECT_EQ(jit_stats().live_code_objects, live + 1);
    m = Module();
    EXPECT_EQ(jit_stats().live_code_objects, live + 1);  // f still holds it
  }
  EXPECT_EQ(jit_stats().live_code_objects, live);
  // Building it again compiles again (the cache holds no code alive).
  JitStats before = jit_stats();
  Module again = build(scale(5.0f));
  EXPECT_EQ(jit_stats().compilations - before.compilations, 1u);
  NDArray a = random_array<float>({4}, 2), b = NDArray::empty({4}, Float(32));
  again("scale")(a, b);
  EXPECT_EQ(b.to_vector<float>()[0], a.to_vector<float>()[0] * 5.0f + 1.0f);
}

TEST(LlvmCache, BuildAndCallFromEightThreads) {
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([t, &failures] {
      try {
        for (int round = 0; round < 6; ++round) {
          // Half the threads share kernels (cache hits and races on one key), half build
          // their own.
          float k = t % 2 == 0 ? static_cast<float>(round) : static_cast<float>(100 + t * 10 + round);
          Module m = build(scale(k), exact_options());
          NDArray a = random_array<float>({257}, static_cast<uint32_t>(t * 100 + round));
          NDArray b = NDArray::empty({257}, Float(32));
          for (int call = 0; call < 20; ++call) m("scale")(a, b);
          auto av = a.to_vector<float>(), bv = b.to_vector<float>();
          for (size_t j = 0; j < av.size(); ++j)
            if (bv[j] != av[j] * k + 1.0f) {
              if (failures++ < 5)
                ADD_FAILURE() << "scale " << k << " element " << j << ": " << bv[j] << " vs " << av[j] * k + 1.0f;
            }
          // And a parallel kernel, calling into the shared pool.
          Var n("n"), i("i");
          Buffer A("A", Float(32), {n}), B("B", Float(32), {n});
          Module p = build(
              make_func("par", {buffer_param(A), buffer_param(B)}, parallel(i, 0, n, store(B, load(A, {i}) + k, {i}))));
          p("par")(a, b);
          bv = b.to_vector<float>();
          for (size_t j = 0; j < av.size(); ++j)
            if (bv[j] != av[j] + k) {
              if (failures++ < 5)
                ADD_FAILURE() << "par " << k << " element " << j << ": " << bv[j] << " vs " << av[j] + k;
            }
        }
      } catch (const std::exception& e) {
        ADD_FAILURE() << "thread " << t << ": " << e.what();
        failures++;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
