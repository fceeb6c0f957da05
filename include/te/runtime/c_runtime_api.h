/** \file
 * The C runtime that generated kernels call: parallel loops on te's thread pool, the
 * per-thread last error and aligned scratch memory. It lives in libte_runtime, which
 * ahead-of-time objects link alone (no libte, no LLVM). Plain C, usable from C and C++. */
#ifndef TE_RUNTIME_C_RUNTIME_API_H_
#define TE_RUNTIME_C_RUNTIME_API_H_

#include <stdint.h>

#include "te/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One chunk of a parallel loop: runs iterations [begin, end) and returns 0, or nonzero
 * after te_set_last_error() on failure. */
typedef int32_t (*te_parallel_body)(int64_t begin, int64_t end, void* closure);

/** Runs body over [0, n) split into chunks on the pool (the calling thread takes part)
 * and returns 0, or the first nonzero chunk result with that chunk's error message
 * moved to the caller's last error. Called from inside a chunk (a nested parallel
 * loop), it runs the whole range serially on the calling thread. n <= 0 does nothing.
 * The pool has TE_NUM_THREADS threads (a positive integer; otherwise, or when unset,
 * the hardware concurrency), counting the caller; it starts on first use. */
TE_API int32_t te_parallel_for(int64_t n, te_parallel_body body, void* closure);

/** Threads a parallel loop uses, the caller included. */
TE_API int32_t te_num_threads(void);

/** The calling thread's last error message ("" if none); valid until the next
 * te_set_last_error on this thread. */
TE_API const char* te_get_last_error(void);
/** Sets the calling thread's last error message (copied). */
TE_API void te_set_last_error(const char* message);

/** nbytes of zero-filled memory aligned to 64 bytes, or NULL (with the last error set)
 * when it cannot be had. Free with te_free. A thread keeps the large blocks (64 KiB and
 * more; at most 8 blocks and 256 MiB) it frees and hands them out again, so that the
 * buffers a kernel allocates on every call do not fault in fresh pages each time. */
TE_API void* te_alloc(uint64_t nbytes);
/** te_alloc without the zero-fill: for buffers whose code stores every element before it
 * loads it. */
TE_API void* te_alloc_uninitialized(uint64_t nbytes);
/** Frees memory from te_alloc or te_alloc_uninitialized (NULL does nothing). */
TE_API void te_free(void* p);
/** Returns to the system the blocks the calling thread keeps for reuse (a thread's are
 * returned when it exits). */
TE_API void te_workspace_release(void);

#ifdef __cplusplus
}
#endif

#endif /* TE_RUNTIME_C_RUNTIME_API_H_ */
