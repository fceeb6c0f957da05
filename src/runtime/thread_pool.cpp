// te's parallel-for: a fixed pool of worker threads that generated code reaches
// through the C function te_parallel_for (never OpenMP). Each call becomes a job whose
// chunks the caller and any idle workers claim from an atomic counter, so concurrent
// callers from several threads share the pool and each caller always makes progress
// on its own job even when every worker is busy elsewhere.
#include <pthread.h>

#include <algorithm>
#include <atomic>
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

struct Job {
  te_parallel_body body = nullptr;
  void* closure = nullptr;
  int64_t n = 0;
  int64_t chunks = 0;
  std::atomic<int64_t> next_chunk{0};
  std::atomic<int64_t> finished_chunks{0};
  std::atomic<int32_t> status{0};
  std::mutex mutex;  // guards error and the wait below
  std::condition_variable all_finished;
  std::string error;

  // Claims and runs chunks until none is left.
  void run_chunks() {
    for (;;) {
      int64_t c = next_chunk.fetch_add(1);
      if (c >= chunks) return;
      int64_t per = n / chunks, extra = n % chunks;
      int64_t begin = c * per + std::min(c, extra);
      int64_t end = begin + per + (c < extra ? 1 : 0);
      // After a failure the remaining chunks are skipped (they still count as finished).
      if (status.load(std::memory_order_relaxed) == 0) {
        int32_t rc = body(begin, end, closure);
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
    for (int32_t k = 1; k < threads_; ++k) workers_.emplace_back([this] { worker_loop(); });
    // The pool lives until the process exits; workers are never joined.
    for (auto& w : workers_) w.detach();
  }

  int32_t threads() const { return threads_; }

  int32_t run(int64_t n, te_parallel_body body, void* closure) {
    auto job = std::make_shared<Job>();
    job->body = body;
    job->closure = closure;
    job->n = n;
    // Several chunks per thread, claimed in order: a thread slowed by another process
    // leaves its share to the others, and the threads work on neighbouring iterations at
    // any moment (sharing what those read in the last-level cache) rather than each on its
    // own far half.
    job->chunks = std::min<int64_t>(n, int64_t{threads_} * kChunksPerThread);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.push_back(job);
    }
    wake_.notify_all();
    t_inside_parallel = true;
    job->run_chunks();
    t_inside_parallel = false;
    remove(job);
    {
      std::unique_lock<std::mutex> lock(job->mutex);
      job->all_finished.wait(lock, [&] { return job->finished_chunks.load() == job->chunks; });
    }
    if (job->status.load() != 0) te_set_last_error(job->error.c_str());
    return job->status.load();
  }

 private:
  void worker_loop() {
    t_inside_parallel = true;
    for (;;) {
      std::shared_ptr<Job> job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return !queue_.empty(); });
        job = queue_.front();
      }
      job->run_chunks();
      remove(job);
    }
  }

  // Drops a job whose chunks are all claimed, so workers stop picking it up.
  void remove(const std::shared_ptr<Job>& job) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = std::find(queue_.begin(), queue_.end(), job);
    if (it != queue_.end()) queue_.erase(it);
  }

  int32_t threads_;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::shared_ptr<Job>> queue_;
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
