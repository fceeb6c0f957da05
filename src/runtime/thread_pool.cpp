// te's parallel-for: a fixed pool of worker threads that generated code reaches
// through the C function te_parallel_for (never OpenMP). Each call becomes a job whose
// chunks the caller and any idle workers claim from atomic counters (one per thread's
// share, see Job), so concurrent callers from several threads share the pool and each
// caller always makes progress on its own job even when every worker is busy elsewhere.
//
// Idle workers, and a caller waiting for the last chunks, spin a short while before they
// sleep: a kernel's parallel loops follow each other within microseconds, and waking a
// sleeping thread (a futex, on a VM an idle vCPU's interrupt) costs tens of them, more
// than a small loop's whole work (OpenMP and TVM's pool spin for the same reason).
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "te/runtime/c_runtime_api.h"

namespace {

// True on pool workers and on a caller while it runs chunks: a te_parallel_for seen
// there is nested and runs serially.
thread_local bool t_inside_parallel = false;

constexpr int64_t kChunksPerThread = 16;

// How long an idle thread polls before it sleeps.
constexpr std::chrono::microseconds kSpinTime{200};

// One step of a polling loop: tells the core that this is a spin (a hyper-thread sibling
// gets the pipeline, the loop's exit does not mispredict).
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Polls `ready` for up to kSpinTime; true as soon as it holds.
template <typename Ready>
bool spin_until(Ready ready) {
  const auto deadline = std::chrono::steady_clock::now() + kSpinTime;
  for (int i = 0;; ++i) {
    if (ready()) return true;
    cpu_relax();
    if (i % 64 == 63 && std::chrono::steady_clock::now() > deadline) return false;
  }
}

// A parallel-for call. Its chunks are dealt out in contiguous shares, one per pool
// thread (the caller takes share 0, worker k share k), as OpenMP's static schedule does:
// the loops of a kernel then give each thread the same part of their iterations, so a
// thread reads back, from its own cache, what it wrote in the loop before (a row's
// result consumed by a copy or an epilogue). On another core those bytes would cost a
// cache-to-cache transfer each: GRP NCHW's copy back took 4x its one-thread time that
// way. A thread that finishes its share takes chunks from the others' (in order, from
// the front of the next share), so a thread slowed by another process leaves its work
// to the rest.
struct Job {
  te_parallel_body body = nullptr;
  void* closure = nullptr;
  int64_t n = 0;
  int64_t chunks = 0;
  // Per share: the next chunk to claim, and the end of the share.
  std::unique_ptr<std::atomic<int64_t>[]> next;
  std::unique_ptr<int64_t[]> end;
  int32_t shares = 0;
  std::atomic<int64_t> finished_chunks{0};
  std::atomic<int32_t> status{0};
  std::mutex mutex;  // guards error and the wait below
  std::condition_variable all_finished;
  std::string error;

  Job(te_parallel_body body, void* closure, int64_t n, int64_t chunks, int32_t shares)
      : body(body),
        closure(closure),
        n(n),
        chunks(chunks),
        next(new std::atomic<int64_t>[static_cast<size_t>(shares)]),
        end(new int64_t[static_cast<size_t>(shares)]),
        shares(shares) {
    for (int32_t k = 0; k < shares; ++k) {
      next[k].store(chunks * k / shares, std::memory_order_relaxed);
      end[k] = chunks * (k + 1) / shares;
    }
  }

  // Claims and runs chunks until none is left: share `own` first, then the others.
  void run_chunks(int32_t own) {
    for (int32_t i = 0; i < shares; ++i) {
      const int32_t k = (own + i) % shares;
      for (int64_t c = next[k].fetch_add(1); c < end[k]; c = next[k].fetch_add(1)) run_chunk(c);
    }
  }

 private:
  void run_chunk(int64_t c) {
    int64_t per = n / chunks, extra = n % chunks;
    int64_t begin = c * per + std::min(c, extra);
    int64_t stop = begin + per + (c < extra ? 1 : 0);
    // After a failure the remaining chunks are skipped (they still count as finished).
    if (status.load(std::memory_order_relaxed) == 0) {
      int32_t rc = body(begin, stop, closure);
      if (rc != 0) {
        std::lock_guard<std::mutex> lock(mutex);
        if (status.load() == 0) {
          status.store(rc);
          error = te_get_last_error();
        }
      }
    }
    if (finished_chunks.fetch_add(1) + 1 == chunks) {
      std::lock_guard<std::mutex> lock(mutex);
      all_finished.notify_all();
    }
  }
};

int32_t threads_from_environment() {
  unsigned hw = std::thread::hardware_concurrency();
  int32_t threads = hw == 0 ? 1 : static_cast<int32_t>(std::min(hw, 1024u));
  if (const char* env = std::getenv("TE_NUM_THREADS")) {
    char* end = nullptr;
    long v = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && v >= 1) threads = static_cast<int32_t>(std::min(v, 1024L));
  }
  return threads;
}

class ThreadPool {
 public:
  explicit ThreadPool(int32_t threads) : threads_(threads) {
    for (int32_t k = 1; k < threads_; ++k) workers_.emplace_back([this, k] { worker_loop(k); });
    // The pool lives until the process exits; workers are never joined.
    for (auto& w : workers_) w.detach();
  }

  int32_t threads() const { return threads_; }

  int32_t run(int64_t n, te_parallel_body body, void* closure) {
    // Several chunks per thread: a thread slowed by another process leaves part of its
    // share to the others.
    auto job =
        std::make_shared<Job>(body, closure, n, std::min<int64_t>(n, int64_t{threads_} * kChunksPerThread), threads_);
    bool sleepers = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.push_back(job);
      queued_.store(queue_.size(), std::memory_order_release);
      sleepers = sleeping_ > 0;
    }
    if (sleepers) wake_.notify_all();
    t_inside_parallel = true;
    job->run_chunks(0);
    t_inside_parallel = false;
    remove(job);
    if (!spin_until([&] { return job->finished_chunks.load() == job->chunks; })) {
      std::unique_lock<std::mutex> lock(job->mutex);
      job->all_finished.wait(lock, [&] { return job->finished_chunks.load() == job->chunks; });
    }
    if (job->status.load() != 0) te_set_last_error(job->error.c_str());
    return job->status.load();
  }

 private:
  // Worker `share` (1 .. threads - 1) takes that share of each job first.
  void worker_loop(int32_t share) {
    t_inside_parallel = true;
    for (;;) {
      std::shared_ptr<Job> job;
      spin_until([&] { return queued_.load(std::memory_order_acquire) > 0; });
      {
        std::unique_lock<std::mutex> lock(mutex_);
        ++sleeping_;
        wake_.wait(lock, [&] { return !queue_.empty(); });
        --sleeping_;
        job = queue_.front();
      }
      job->run_chunks(share);
      remove(job);
    }
  }

  // Drops a job whose chunks are all claimed, so workers stop picking it up.
  void remove(const std::shared_ptr<Job>& job) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = std::find(queue_.begin(), queue_.end(), job);
    if (it != queue_.end()) queue_.erase(it);
    queued_.store(queue_.size(), std::memory_order_release);
  }

  int32_t threads_;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::shared_ptr<Job>> queue_;
  std::atomic<size_t> queued_{0};  // queue_.size(), for workers polling without the lock
  int sleeping_ = 0;               // workers waiting on wake_ (guarded by mutex_)
};

// The pool, made on first use. A forked child has none of its parent's workers (only the
// forking thread survives a fork, and the pool's lock may have been held): the child
// forgets the parent's pool and makes its own on first use, so that kernels in a forked
// process (the auto-tuner's workers) run on as many threads as in the parent.
std::atomic<ThreadPool*> g_pool{nullptr};
std::atomic_flag g_making_pool = ATOMIC_FLAG_INIT;

void forget_pool_in_child() {
  g_pool.store(nullptr, std::memory_order_relaxed);
  g_making_pool.clear();
}

ThreadPool& pool() {
  if (ThreadPool* p = g_pool.load(std::memory_order_acquire)) return *p;
  while (g_making_pool.test_and_set(std::memory_order_acquire)) std::this_thread::yield();
  ThreadPool* p = g_pool.load(std::memory_order_acquire);
  if (!p) {
    static const bool registered = (pthread_atfork(nullptr, nullptr, forget_pool_in_child) == 0);
    (void)registered;
    // Intentionally leaked: detached workers may still wait on it during exit.
    p = new ThreadPool(threads_from_environment());
    g_pool.store(p, std::memory_order_release);
  }
  g_making_pool.clear(std::memory_order_release);
  return *p;
}

}  // namespace

extern "C" int32_t te_parallel_for(int64_t n, te_parallel_body body, void* closure) {
  if (n <= 0) return 0;
  if (t_inside_parallel || n == 1) return body(0, n, closure);
  ThreadPool& p = pool();
  if (p.threads() == 1) return body(0, n, closure);
  return p.run(n, body, closure);
}

extern "C" int32_t te_num_threads(void) { return pool().threads(); }
