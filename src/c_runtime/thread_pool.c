/* te_parallel_for in C (pthreads), as src/runtime/thread_pool.cpp does it for the JIT:
 * chunks claimed in order by the caller and the pool's workers, several per thread; a
 * loop inside a chunk runs serially; the first failing chunk's error goes to the caller. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "te/runtime/c_runtime_api.h"

enum { kChunksPerThread = 16, kMaxThreads = 1024, kMaxError = 1024 };

typedef struct Job {
  te_parallel_body body;
  void* closure;
  int64_t n, chunks;
  atomic_llong next_chunk; /* chunks claimed */
  atomic_llong finished;   /* chunks done (or skipped after a failure) */
  atomic_int status;       /* the first failing chunk's result */
  atomic_int users;        /* workers running its chunks: the caller waits for none */
  char error[kMaxError];
  struct Job* next;
} Job;

/* True on workers and on a caller running chunks: a loop seen there is nested. */
static _Thread_local int t_inside_parallel = 0;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_wake = PTHREAD_COND_INITIALIZER; /* a job was queued */
static pthread_cond_t g_done = PTHREAD_COND_INITIALIZER; /* a worker left a job */
static Job* g_queue = NULL;
static int32_t g_threads = 0; /* 0: the pool has not started */

static int32_t threads_from_environment(void) {
  long hw = sysconf(_SC_NPROCESSORS_ONLN);
  int32_t threads = hw < 1 ? 1 : (int32_t)(hw < kMaxThreads ? hw : kMaxThreads);
  const char* env = getenv("TE_NUM_THREADS");
  if (env != NULL) {
    char* end = NULL;
    long v = strtol(env, &end, 10);
    if (end != env && *end == '\0' && v >= 1) threads = (int32_t)(v < kMaxThreads ? v : kMaxThreads);
  }
  return threads;
}

static void run_chunks(Job* job) {
  for (;;) {
    int64_t c = atomic_fetch_add(&job->next_chunk, 1);
    if (c >= job->chunks) return;
    int64_t per = job->n / job->chunks, extra = job->n % job->chunks;
    int64_t begin = c * per + (c < extra ? c : extra);
    int64_t end = begin + per + (c < extra ? 1 : 0);
    /* After a failure the remaining chunks are skipped (they still count as finished). */
    if (atomic_load(&job->status) == 0) {
      int32_t rc = job->body(begin, end, job->closure);
      int expected = 0;
      if (rc != 0 && atomic_compare_exchange_strong(&job->status, &expected, rc))
        strncpy(job->error, te_get_last_error(), sizeof job->error - 1);
    }
    atomic_fetch_add(&job->finished, 1);
  }
}

/* Drops job from the queue (under g_lock) so that no worker picks it up again. */
static void remove_job(Job* job) {
  for (Job** p = &g_queue; *p != NULL; p = &(*p)->next)
    if (*p == job) {
      *p = job->next;
      return;
    }
}

static void* worker(void* arg) {
  (void)arg;
  t_inside_parallel = 1;
  pthread_mutex_lock(&g_lock);
  for (;;) {
    while (g_queue == NULL) pthread_cond_wait(&g_wake, &g_lock);
    Job* job = g_queue;
    atomic_fetch_add(&job->users, 1); /* under the lock: its caller cannot return now */
    pthread_mutex_unlock(&g_lock);
    run_chunks(job);
    pthread_mutex_lock(&g_lock);
    remove_job(job);
    atomic_fetch_sub(&job->users, 1);
    pthread_cond_broadcast(&g_done);
  }
  return NULL;
}

/* A forked child has none of its parent's workers: it starts a pool of its own. */
static void forget_pool_in_child(void) {
  pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
  g_lock = lock;
  g_wake = cond;
  g_done = cond;
  g_queue = NULL;
  g_threads = 0;
}

/* The pool's size, starting its workers on first use (under g_lock). */
static int32_t start_pool(void) {
  if (g_threads > 0) return g_threads;
  static int registered = 0;
  if (!registered) registered = pthread_atfork(NULL, NULL, forget_pool_in_child) == 0;
  g_threads = threads_from_environment();
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  for (int32_t k = 1; k < g_threads; ++k) {
    pthread_t t;
    if (pthread_create(&t, &attr, worker, NULL) != 0) {
      g_threads = k; /* fewer workers than asked: the loops still run */
      break;
    }
  }
  pthread_attr_destroy(&attr);
  return g_threads;
}

int32_t te_num_threads(void) {
  pthread_mutex_lock(&g_lock);
  int32_t threads = start_pool();
  pthread_mutex_unlock(&g_lock);
  return threads;
}

int32_t te_parallel_for(int64_t n, te_parallel_body body, void* closure) {
  if (n <= 0) return 0;
  if (t_inside_parallel || n == 1 || te_num_threads() == 1) return body(0, n, closure);
  Job job;
  memset(&job, 0, sizeof job);
  job.body = body;
  job.closure = closure;
  job.n = n;
  int64_t most = (int64_t)te_num_threads() * kChunksPerThread;
  job.chunks = n < most ? n : most;
  atomic_init(&job.next_chunk, 0);
  atomic_init(&job.finished, 0);
  atomic_init(&job.status, 0);
  atomic_init(&job.users, 0);
  pthread_mutex_lock(&g_lock);
  Job** tail = &g_queue;
  while (*tail != NULL) tail = &(*tail)->next;
  *tail = &job;
  pthread_cond_broadcast(&g_wake);
  pthread_mutex_unlock(&g_lock);

  t_inside_parallel = 1;
  run_chunks(&job);
  t_inside_parallel = 0;

  pthread_mutex_lock(&g_lock);
  remove_job(&job);
  while (atomic_load(&job.finished) < job.chunks || atomic_load(&job.users) > 0) pthread_cond_wait(&g_done, &g_lock);
  pthread_mutex_unlock(&g_lock);
  int32_t status = atomic_load(&job.status);
  if (status != 0) te_set_last_error(job.error);
  return status;
}
