// The persistent compile cache (TE_CACHE_DIR): a build of an unchanged kernel after its
// code was unloaded (as in a new process) loads it from disk; damaged entries are replaced,
// never loaded; TE_CACHE=0 writes nothing; the size cap evicts the least recently used.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "te/te.h"
#include "test_llvm_util.h"

using namespace te;
using namespace te::llvm_test;
namespace fs = std::filesystem;

namespace {

LoweredFunc scale(float k) {
  Var n("n"), i("i");
  Buffer A("A", Float(32), {n}), B("B", Float(32), {n});
  return make_func("scale", {buffer_param(A), buffer_param(B)},
                   serial(i, 0, n, store(B, load(A, {i}) * k + 1.0f, {i})));
}

// Without FMA contraction, so results compare exactly with k * a + 1 computed here.
Module build_exact(const LoweredFunc& f, bool use_cache = true) {
  BuildOptions options = exact_options();
  options.use_cache = use_cache;
  return build(f, options);
}

// Runs scale(k)'s kernel once, checking its result.
void check_runs(const Module& m, float k) {
  NDArray a = random_array<float>({9}, 4), b = NDArray::empty({9}, Float(32));
  m("scale")(a, b);
  EXPECT_EQ(b.to_vector<float>()[5], a.to_vector<float>()[5] * k + 1.0f);
}

class DiskCache : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("te_disk_cache_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    setenv("TE_CACHE", "1", 1);
    setenv("TE_CACHE_DIR", dir_.c_str(), 1);
    unsetenv("TE_CACHE_MAX_MB");
  }
  void TearDown() override {
    setenv("TE_CACHE", "0", 1);
    unsetenv("TE_CACHE_DIR");
    unsetenv("TE_CACHE_MAX_MB");
    fs::remove_all(dir_);
  }
  // The entries, oldest use first.
  std::vector<fs::path> entries() const {
    std::vector<fs::path> out;
    if (fs::exists(dir_))
      for (const auto& e : fs::directory_iterator(dir_)) out.push_back(e.path());
    std::sort(out.begin(), out.end(),
              [](const fs::path& a, const fs::path& b) { return fs::last_write_time(a) < fs::last_write_time(b); });
    return out;
  }
  fs::path dir_;
};

TEST_F(DiskCache, UnloadedCodeComesBackFromDisk) {
  JitStats before = jit_stats();
  { check_runs(build_exact(scale(7.0f)), 7.0f); }  // compiled, stored, unloaded
  ASSERT_EQ(entries().size(), 1u);
  EXPECT_EQ(jit_stats().compilations - before.compilations, 1u);
  { check_runs(build_exact(scale(7.0f)), 7.0f); }
  EXPECT_EQ(jit_stats().compilations - before.compilations, 1u) << "compiled again";
  EXPECT_EQ(jit_stats().disk_cache_hits - before.disk_cache_hits, 1u);
  // Other code, another entry; use_cache = false neither reads nor writes it.
  { check_runs(build_exact(scale(8.0f)), 8.0f); }
  { check_runs(build_exact(scale(9.0f), /*use_cache=*/false), 9.0f); }
  EXPECT_EQ(entries().size(), 2u);
  // A live copy from the cache and an uncached one of the same code run side by side.
  Module m1 = build_exact(scale(7.0f)), m2 = build_exact(scale(7.0f), /*use_cache=*/false);
  check_runs(m1, 7.0f);
  check_runs(m2, 7.0f);
}

TEST_F(DiskCache, DamagedEntriesAreReplacedNeverLoaded) {
  { build_exact(scale(3.0f)); }
  ASSERT_EQ(entries().size(), 1u);
  const fs::path entry = entries()[0];
  const auto whole = fs::file_size(entry);
  for (const std::string& damage : {std::string("garbage"), std::string()}) {
    if (damage.empty())
      fs::resize_file(entry, whole / 2);  // a torn write
    else
      std::ofstream(entry, std::ios::binary) << damage;
    JitStats before = jit_stats();
    { check_runs(build_exact(scale(3.0f)), 3.0f); }
    EXPECT_EQ(jit_stats().compilations - before.compilations, 1u) << "a damaged entry was loaded";
    EXPECT_EQ(fs::file_size(entry), whole) << "the entry was not replaced";
  }
  // A flipped byte in the code fails the checksum.
  {
    std::fstream f(entry, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(std::streamoff(whole) - 20);
    f.put('\x5a');
  }
  JitStats before = jit_stats();
  { check_runs(build_exact(scale(3.0f)), 3.0f); }
  EXPECT_EQ(jit_stats().compilations - before.compilations, 1u);
}

TEST_F(DiskCache, OffWritesNothing) {
  setenv("TE_CACHE", "0", 1);
  { build_exact(scale(4.0f)); }
  EXPECT_FALSE(fs::exists(dir_) && !fs::is_empty(dir_));
}

TEST_F(DiskCache, SizeCapEvictsTheLeastRecentlyUsed) {
  { build_exact(scale(11.0f)); }
  { build_exact(scale(12.0f)); }
  std::vector<fs::path> two = entries();
  ASSERT_EQ(two.size(), 2u);
  const fs::path first = two[0], second = two[1];
  { build_exact(scale(11.0f)); }  // a hit: the first is now the most recently used
  EXPECT_EQ(entries().back(), first);
  // Room for two entries and a half: the third evicts the second, unused the longest.
  const double size = double(std::max(fs::file_size(first), fs::file_size(second)));
  setenv("TE_CACHE_MAX_MB", std::to_string(2.5 * size / (1 << 20)).c_str(), 1);
  { build_exact(scale(13.0f)); }
  std::vector<fs::path> left = entries();
  ASSERT_EQ(left.size(), 2u);
  EXPECT_TRUE(fs::exists(first));
  EXPECT_FALSE(fs::exists(second));
}

}  // namespace
