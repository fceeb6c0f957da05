/* te_alloc, te_alloc_uninitialized, te_free and te_workspace_release, for both runtimes
 * (libte_runtime serves the JIT, libte_c_runtime ahead-of-time objects): 64-byte aligned
 * scratch memory for the buffers a kernel allocates on every call (a padded input, a
 * packed panel).
 *
 * Through malloc alone, a large block freed at the end of one call can come back as fresh
 * pages on the next (glibc unmaps large blocks and trims its heap's top), and the kernel
 * then faults every page in again: a 3x3 convolution's 860 KB padded input took 2.1-2.4
 * ms a call on two threads instead of 0.6 ms once its process had run another kernel. So
 * each thread keeps the large blocks it frees, as TVM's workspace pool does, and hands
 * them out again: a few blocks, up to a byte budget, returned when the thread exits or
 * calls te_workspace_release. Under AddressSanitizer a kept block is poisoned, so that a
 * kernel reading a freed buffer is still caught. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "te/runtime/c_runtime_api.h"

#if defined(__SANITIZE_ADDRESS__)
#define TE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TE_ASAN 1
#endif
#endif
#ifdef TE_ASAN
#include <sanitizer/asan_interface.h>
#define TE_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define TE_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define TE_POISON(p, n) ((void)(p), (void)(n))
#define TE_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

enum { kAlignment = 64, kKeptBlocks = 8 };
/* Blocks from this size on are kept (malloc's own free lists serve smaller ones well). */
static const uint64_t kKeepFrom = (uint64_t)64 << 10;
/* The most bytes a thread keeps. */
static const uint64_t kKeepAtMost = (uint64_t)256 << 20;

/* A block: its capacity in the first bytes, the caller's memory one alignment unit on. */
static uint64_t* header_of(void* p) { return (uint64_t*)((char*)p - kAlignment); }

static uint64_t capacity(void* p) { return *header_of(p); }

typedef struct {
  void* block[kKeptBlocks]; /* the callers' pointers; NULL: a free slot */
  int registered;           /* whether the thread-exit hook knows this cache */
} KeptBlocks;

/* In thread-local storage, so that leak checkers see the kept blocks as reachable. */
static _Thread_local KeptBlocks t_kept;
static pthread_key_t g_exit_key;
static int g_exit_key_made;
static pthread_once_t g_exit_key_once = PTHREAD_ONCE_INIT;

/* Returns k's block in slot i to the system. */
static void drop(KeptBlocks* k, int i) {
  TE_UNPOISON(k->block[i], capacity(k->block[i]));
  free(header_of(k->block[i]));
  k->block[i] = NULL;
}

static void release(KeptBlocks* k) {
  for (int i = 0; i < kKeptBlocks; ++i)
    if (k->block[i] != NULL) drop(k, i);
}

static void release_at_thread_exit(void* k) { release((KeptBlocks*)k); }

static void make_exit_key(void) { g_exit_key_made = pthread_key_create(&g_exit_key, release_at_thread_exit) == 0; }

/* The slot of the smallest kept block that holds `at_least` bytes and at most `at_most`
 * (-1: none). */
static int smallest_kept(uint64_t at_least, uint64_t at_most) {
  int best = -1;
  for (int i = 0; i < kKeptBlocks; ++i) {
    if (t_kept.block[i] == NULL) continue;
    const uint64_t c = capacity(t_kept.block[i]);
    if (c >= at_least && c <= at_most && (best < 0 || c < capacity(t_kept.block[best]))) best = i;
  }
  return best;
}

/* The smallest kept block that holds `rounded` bytes without wasting more than as much
 * again, taken out of the cache; NULL when there is none. */
static void* take_kept(uint64_t rounded) {
  const int i = smallest_kept(rounded, 2 * rounded + 1);
  if (i < 0) return NULL;
  void* p = t_kept.block[i];
  t_kept.block[i] = NULL;
  TE_UNPOISON(p, capacity(p));
  return p;
}

/* Keeps p's block if it is large and fits the budget (making room by dropping smaller
 * kept blocks, smallest first); returns whether it did. */
static int keep(void* p) {
  const uint64_t c = capacity(p);
  if (c < kKeepFrom || c > kKeepAtMost) return 0;
  pthread_once(&g_exit_key_once, make_exit_key);
  if (!g_exit_key_made) return 0;
  if (!t_kept.registered) {
    if (pthread_setspecific(g_exit_key, &t_kept) != 0) return 0;
    t_kept.registered = 1;
  }
  for (;;) {
    int slot = -1;
    uint64_t bytes = 0;
    for (int i = kKeptBlocks - 1; i >= 0; --i) {
      if (t_kept.block[i] == NULL)
        slot = i;
      else
        bytes += capacity(t_kept.block[i]);
    }
    if (slot >= 0 && bytes + c <= kKeepAtMost) {
      t_kept.block[slot] = p;
      TE_POISON(p, c);
      return 1;
    }
    const int smallest = smallest_kept(0, c - 1);
    if (smallest < 0) return 0;
    drop(&t_kept, smallest);
  }
}

void* te_alloc_uninitialized(uint64_t nbytes) {
  /* A multiple of the alignment; zero bytes still get one unit. */
  const int too_large = nbytes > UINT64_MAX - 2 * kAlignment;
  const uint64_t rounded = nbytes == 0 ? kAlignment : (nbytes + kAlignment - 1) / kAlignment * kAlignment;
  void* p = NULL;
  if (!too_large && rounded + kAlignment <= SIZE_MAX) {
    p = rounded >= kKeepFrom ? take_kept(rounded) : NULL;
    if (p == NULL) {
      char* base = aligned_alloc(kAlignment, (size_t)(rounded + kAlignment));
      if (base != NULL) {
        p = base + kAlignment;
        *header_of(p) = rounded;
      }
    }
  }
  if (p == NULL) {
    char message[96];
    snprintf(message, sizeof message, "te_alloc: cannot allocate %llu bytes", (unsigned long long)nbytes);
    te_set_last_error(message);
  }
  return p;
}

void* te_alloc(uint64_t nbytes) {
  void* p = te_alloc_uninitialized(nbytes);
  if (p != NULL) memset(p, 0, (size_t)nbytes);
  return p;
}

void te_free(void* p) {
  if (p != NULL && !keep(p)) free(header_of(p));
}

void te_workspace_release(void) { release(&t_kept); }
