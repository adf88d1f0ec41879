/* The C API: one default Kolo engine per process, for C programs and for
 * bindings that prefer a flat ABI. Plain C99; every function may be called
 * from any thread.
 *
 *   if (kolo_init() != KOLO_OK) { fprintf(stderr, "%s\n", kolo_last_error()); return 1; }
 *   int64_t shape[1] = {n};
 *   kolo_tensor t = {"grad", grad, grad, KOLO_FLOAT32, 1, shape, KOLO_CPU_DEVICE};
 *   kolo_handle h = kolo_allreduce(&t, KOLO_AVERAGE, 1.0, 1.0, 0);
 *   if (h < 0) { fprintf(stderr, "%s\n", kolo_last_error()); return 1; }
 *   if (kolo_wait(h, 30.0) != KOLO_OK) fprintf(stderr, "%s\n", kolo_handle_error(h));
 *   kolo_release(h);
 *   kolo_shutdown();
 *
 * Errors: functions returning a status return KOLO_OK or a kolo_status code
 * (the numeric values of kolo::StatusCode). Enqueue functions return a
 * handle id > 0, or the negated status code when the call itself failed (bad
 * arguments, unknown process set, a name already in flight, not
 * initialized). In both cases kolo_last_error() has the text; an operation
 * that fails later (a mismatch with another rank, a lost peer) reports
 * through kolo_handle_status() / kolo_handle_error() instead.
 */
#ifndef KOLO_C_API_H_
#define KOLO_C_API_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes: the values of kolo::StatusCode, plus KOLO_IN_PROGRESS for an
 * operation that has not finished (kolo_wait whose timeout expired). */
typedef enum kolo_status {
  KOLO_IN_PROGRESS = -1,
  KOLO_OK = 0,
  KOLO_INVALID_ARGUMENT = 1,
  KOLO_TIMEOUT = 2,
  KOLO_PEER_LOST = 3,
  KOLO_IO_ERROR = 4,
  KOLO_ABORTED = 5,
  KOLO_UNAUTHENTICATED = 6,
  KOLO_NOT_FOUND = 7,
  KOLO_INTERNAL = 8,
  KOLO_REMOVED = 9
} kolo_status;

/* The values of kolo::DataType. */
typedef enum kolo_dtype {
  KOLO_UINT8 = 0,
  KOLO_INT8 = 1,
  KOLO_INT32 = 2,
  KOLO_INT64 = 3,
  KOLO_FLOAT16 = 4,
  KOLO_BFLOAT16 = 5,
  KOLO_FLOAT32 = 6,
  KOLO_FLOAT64 = 7,
  KOLO_BOOL = 8,
  KOLO_INT16 = 9
} kolo_dtype;

/* The values of kolo::ReduceOp. */
typedef enum kolo_reduce_op {
  KOLO_SUM = 0,
  KOLO_AVERAGE = 1,
  KOLO_MIN = 2,
  KOLO_MAX = 3,
  KOLO_PRODUCT = 4,
  KOLO_BIT_AND = 5,
  KOLO_BIT_OR = 6,
  KOLO_ADASUM = 7
} kolo_reduce_op;

#define KOLO_CPU_DEVICE (-1)

/* > 0: an operation in flight or finished, until kolo_release().
 * < 0: the negated kolo_status of an enqueue that failed at once. */
typedef int64_t kolo_handle;

/* Caller-owned memory, valid until the operation's handle completes. */
typedef struct kolo_tensor {
  const char* name; /* identifies the tensor across ranks; NULL or "": call order */
  const void* input;
  void* output;  /* allreduce, broadcast: the result (may equal input); else ignored */
  int32_t dtype; /* a kolo_dtype */
  int32_t ndim;
  const int64_t* shape; /* ndim entries, row-major; may be NULL when ndim is 0 */
  int32_t device;       /* KOLO_CPU_DEVICE */
} kolo_tensor;

/* --- lifecycle --------------------------------------------------------- */

/* Joins the job the KOLO_* (HOROVOD_*) environment describes; with none
 * set, a single process of size 1. Collective. On an initialized Kolo it
 * does nothing and returns KOLO_OK (as hvd.init()). */
int kolo_init(void);
/* Also creates process sets with ids 1..num_sets: set i has set_sizes[i]
 * ranks, taken in order from `ranks`. Every rank passes the same sets.
 * Fails with KOLO_INVALID_ARGUMENT when already initialized (its sets would
 * be ignored). */
int kolo_init_with_process_sets(const int* ranks, const int* set_sizes, int num_sets);
/* Collective. Pending operations complete with KOLO_ABORTED; handles stay
 * readable until released. kolo_init may follow. KOLO_OK when not initialized. */
int kolo_shutdown(void);
int kolo_is_initialized(void); /* 1 or 0 */

/* -1 when not initialized. */
int kolo_rank(void);
int kolo_size(void);
int kolo_local_rank(void);
int kolo_local_size(void);
int kolo_cross_rank(void);
int kolo_cross_size(void);

/* Text of the latest failed call on this thread ("" if none); valid until
 * the next failing call on this thread. Successful calls leave it as is. */
const char* kolo_last_error(void);

/* --- operations (process_set 0 is every rank) ------------------------- */

kolo_handle kolo_allreduce(const kolo_tensor* tensor, int op, double prescale, double postscale,
                           int process_set);
/* Grouped operations are negotiated and run as one unit. `name` names the
 * group (NULL or "": call order); member i is "<name>.<i>", so the tensors'
 * own names must be NULL. Writes `count` handles to `handles` (all negative
 * on failure) and returns a status. */
int kolo_grouped_allreduce(const kolo_tensor* tensors, int count, int op, double prescale,
                           double postscale, int process_set, const char* name,
                           kolo_handle* handles);
/* Result (gathered along the first dimension) in kolo_handle_data(). */
kolo_handle kolo_allgather(const kolo_tensor* tensor, int process_set);
int kolo_grouped_allgather(const kolo_tensor* tensors, int count, int process_set, const char* name,
                           kolo_handle* handles);
/* `root` is a rank within the process set; tensor->output receives its data. */
kolo_handle kolo_broadcast(const kolo_tensor* tensor, int root, int process_set);
/* splits: rows of the first dimension for each rank of the set; NULL (with
 * num_splits 0) for equal parts. Rows received per rank in
 * kolo_handle_received_splits(). */
kolo_handle kolo_alltoall(const kolo_tensor* tensor, const int64_t* splits, int num_splits,
                          int process_set);
/* This rank's rows of the reduced tensor in kolo_handle_data(). */
kolo_handle kolo_reducescatter(const kolo_tensor* tensor, int op, double prescale, double postscale,
                               int process_set);
int kolo_grouped_reducescatter(const kolo_tensor* tensors, int count, int op, double prescale,
                               double postscale, int process_set, const char* name,
                               kolo_handle* handles);
kolo_handle kolo_barrier(int process_set);
/* kolo_handle_value(): the last rank to join. */
kolo_handle kolo_join(int process_set);
/* Collective over all ranks; kolo_handle_value(): the new set's id. */
kolo_handle kolo_add_process_set(const int* ranks, int num_ranks);
kolo_handle kolo_remove_process_set(int process_set);

int kolo_start_timeline(const char* path, int mark_cycles);
int kolo_stop_timeline(void);

/* --- handles ----------------------------------------------------------- */

/* 1 when finished, 0 while running, the negated KOLO_INVALID_ARGUMENT for
 * an unknown handle. */
int kolo_poll(kolo_handle handle);
/* Waits up to timeout_seconds (< 0: no limit). Returns the operation's
 * status once finished, KOLO_IN_PROGRESS if it is still running when the
 * timeout expires, KOLO_INVALID_ARGUMENT for an unknown handle. */
int kolo_wait(kolo_handle handle, double timeout_seconds);
/* The operation's status, KOLO_IN_PROGRESS while it runs. */
int kolo_handle_status(kolo_handle handle);
/* "" while running or after success; NULL for an unknown handle. Valid until
 * kolo_release(handle). */
const char* kolo_handle_error(kolo_handle handle);

/* Outputs the engine allocated, valid until kolo_release(handle); empty
 * (NULL, 0) until the operation finished successfully. For an unknown
 * handle: NULL or -1, and kolo_last_error() says why. */
const void* kolo_handle_data(kolo_handle handle);
int64_t kolo_handle_nbytes(kolo_handle handle);
int kolo_handle_ndim(kolo_handle handle);                /* -1: unknown or running */
const int64_t* kolo_handle_shape(kolo_handle handle);    /* ndim entries */
int kolo_handle_num_received_splits(kolo_handle handle); /* -1: unknown or running */
const int64_t* kolo_handle_received_splits(kolo_handle handle);
int64_t kolo_handle_value(kolo_handle handle); /* -1 when none */

/* Forgets a finished handle. A running one cannot be released (the engine
 * still writes its output): KOLO_IN_PROGRESS. Unknown: KOLO_INVALID_ARGUMENT. */
int kolo_release(kolo_handle handle);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KOLO_C_API_H_ */
