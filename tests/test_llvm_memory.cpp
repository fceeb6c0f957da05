// Building and dropping modules must not leak: after a warm-up, 1000 more builds of
// fresh kernels (no cache hits) leave the resident set where it was. (Building and
// calling from 8 threads at once is LlvmCache.BuildAndCallFromEightThreads.)
#include <gtest/gtest.h>
#include <unistd.h>

#include <te/te.h>

#include <cstdio>
#include <fstream>

using namespace te;

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif
#else
constexpr bool kAddressSanitizer = false;
#endif

// Resident set size of this process in bytes (/proc/self/statm's second field).
int64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * static_cast<int64_t>(::sysconf(_SC_PAGESIZE));
}

LoweredFunc kernel(int k) {
  Tensor A = placeholder({64}, Float(32), "A");
  Tensor C = compute(
      {64}, [&](Expr i) { return A(i) * static_cast<float>(k) + 1.0f; }, "C");
  return lower(create_schedule({C}), {A, C}, "k");
}

void build_and_run(int k) {
  BuildOptions o;
  o.opt_level = 0;      // fast builds: the JIT's memory is what is measured
  o.use_cache = false;  // a real compilation every time
  Module m = build(kernel(k), o);
  NDArray a = NDArray::empty({64}, Float(32)), c = NDArray::empty({64}, Float(32));
  m("k")(a, c);
  ASSERT_EQ(c.to_vector<float>()[0], 1.0f);
}

}  // namespace

TEST(LlvmMemory, BuildingAndDroppingAThousandModulesKeepsMemoryFlat) {
  if (kAddressSanitizer) {
    // ASan's quarantine holds freed memory, so the resident set grows anyway; LeakSanitizer
    // checks this build for leaks instead. A few builds still run through it.
    for (int k = 0; k < 20; ++k) build_and_run(k);
    GTEST_SKIP() << "resident set not measured under AddressSanitizer (LeakSanitizer checks leaks)";
  }
  uint64_t live = jit_stats().live_code_objects;
  for (int k = 0; k < 100; ++k) build_and_run(k);  // warm-up: allocator pools, LLVM's statics
  const int64_t before = resident_bytes();
  for (int k = 100; k < 1100; ++k) build_and_run(k);
  const int64_t after = resident_bytes();
  EXPECT_EQ(jit_stats().live_code_objects, live) << "modules dropped but their code is still loaded";
  // A module kept alive (its object file and JIT memory) costs about 50 KiB here: 1000
  // leaked ones would add some 50 MB.
  EXPECT_LT(after - before, 16 << 20) << "resident set grew from " << before << " to " << after << " bytes";
  std::printf("resident set: %lld -> %lld bytes over 1000 builds\n", static_cast<long long>(before),
              static_cast<long long>(after));
}
