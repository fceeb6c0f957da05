// te's scratch memory (src/c_runtime/workspace.c): te_alloc's blocks are 64-byte aligned
// and zero-filled; a thread keeps the large blocks (64 KiB and more) it frees and hands
// them out again to requests they hold without wasting more than their size, up to 8
// blocks; te_workspace_release and thread exit return them (LeakSanitizer checks that in
// the sanitizer build, where kept blocks are poisoned).
#include <gtest/gtest.h>
#include <te/runtime/c_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

bool all_zero(const void* p, uint64_t n) {
  const auto* b = static_cast<const unsigned char*>(p);
  return std::all_of(b, b + n, [](unsigned char c) { return c == 0; });
}

}  // namespace

TEST(RuntimeWorkspace, BlocksAreAlignedAndZeroFilled) {
  for (uint64_t n : {uint64_t{0}, uint64_t{1}, uint64_t{1000}, uint64_t{64} << 10, kMiB + 7}) {
    void* p = te_alloc(n);
    ASSERT_NE(p, nullptr) << n;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u) << n;
    EXPECT_TRUE(all_zero(p, n)) << n;
    std::memset(p, 0xab, n);
    te_free(p);
    void* q = te_alloc_uninitialized(n);
    ASSERT_NE(q, nullptr) << n;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(q) % 64, 0u) << n;
    te_free(q);
  }
  te_free(nullptr);
}

// A freed large block comes back for the next request it holds, zero-filled again by
// te_alloc, whatever the last user left in it.
TEST(RuntimeWorkspace, ALargeBlockIsReusedAndZeroFilledAgain) {
  te_workspace_release();
  void* p = te_alloc(kMiB);
  ASSERT_NE(p, nullptr);
  std::memset(p, 0xab, kMiB);
  te_free(p);
  void* q = te_alloc(kMiB - 100);
  EXPECT_EQ(q, p);
  EXPECT_TRUE(all_zero(q, kMiB - 100));
  te_free(q);
  // A request under half the block's size gets a block of its own.
  void* small = te_alloc_uninitialized(kMiB / 4);
  EXPECT_NE(small, p);
  te_free(small);
  te_workspace_release();
}

// Up to 8 blocks are kept: of 10 freed, 8 serve the next 10 requests.
TEST(RuntimeWorkspace, EightBlocksAreKept) {
  te_workspace_release();
  std::vector<void*> first, second;
  for (int i = 0; i < 10; ++i) first.push_back(te_alloc_uninitialized(kMiB));
  for (void* p : first) te_free(p);
  for (int i = 0; i < 10; ++i) second.push_back(te_alloc_uninitialized(kMiB));
  int reused = 0;
  for (void* p : second) reused += std::count(first.begin(), first.end(), p) > 0 ? 1 : 0;
  // (malloc may hand out a freed block's address again too: at least the kept ones.)
  EXPECT_GE(reused, 8);
  for (void* p : second) te_free(p);
  te_workspace_release();
}

// Each thread reuses the blocks it freed; those it keeps when it exits are returned
// (LeakSanitizer checks that in the sanitizer build).
TEST(RuntimeWorkspace, ThreadsKeepTheirOwnBlocks) {
  std::vector<std::thread> threads;
  std::vector<int> ok(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([t, &ok] {
      void* p = te_alloc(2 * kMiB);
      te_free(p);
      void* q = te_alloc(2 * kMiB);
      ok[t] = q != nullptr && all_zero(q, 2 * kMiB) && q == p;
      te_free(q);
    });
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(ok[t], 1) << "thread " << t;
}

TEST(RuntimeWorkspace, TooLargeARequestFailsWithTheLastError) {
  te_set_last_error("");
  EXPECT_EQ(te_alloc(UINT64_MAX - 3), nullptr);
  EXPECT_NE(std::string(te_get_last_error()).find("te_alloc: cannot allocate 18446744073709551612 bytes"),
            std::string::npos)
      << te_get_last_error();
  te_set_last_error("");
  EXPECT_EQ(te_alloc_uninitialized(UINT64_MAX - 100), nullptr);
  EXPECT_NE(std::string(te_get_last_error()).find("te_alloc: cannot allocate"), std::string::npos);
}
