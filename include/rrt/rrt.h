/*
 * rrt: a message-passing runtime for scale-out AI and HPC jobs.
 *
 * The public C API. Every call returns an int error code (RRT_SUCCESS or one of RRT_ERR_*);
 * rrt_strerror() names it. Outputs come last. Counts are size_t: there is no 2 GiB limit.
 *
 * Threading: rrt is single-threaded per process (like MPI_THREAD_SERIALIZED): calls may come from
 * any thread, but never from two at once.
 *
 * Buffers may be host memory or, in a build with CUDA support, CUDA device memory: rrt classifies
 * each buffer itself.
 */
#ifndef RRT_RRT_H
#define RRT_RRT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with hidden visibility: what this header declares is all it exports. */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

#define RRT_VERSION_MAJOR 0
#define RRT_VERSION_MINOR 1
#define RRT_VERSION_PATCH 0

/* ---- error codes ---------------------------------------------------------------------------- */
enum {
  RRT_SUCCESS = 0,
  RRT_ERR_ARG = 1,            /* an argument is invalid (names which in the log line)          */
  RRT_ERR_RANK = 2,           /* rank out of range for the communicator                        */
  RRT_ERR_TAG = 3,            /* negative tag (other than RRT_ANY_TAG on receive) or too large  */
  RRT_ERR_COUNT = 4,          /* count invalid (e.g. counts that do not agree)                 */
  RRT_ERR_BUFFER = 5,         /* NULL buffer with a non-zero count                              */
  RRT_ERR_TYPE = 6,           /* unknown or freed datatype                                      */
  RRT_ERR_COMM = 7,           /* unknown or freed communicator                                  */
  RRT_ERR_OP = 8,             /* unknown op, or op not defined on the datatype                  */
  RRT_ERR_ROOT = 9,           /* root out of range                                              */
  RRT_ERR_REQUEST = 10,       /* invalid request handle                                         */
  RRT_ERR_TRUNCATE = 11,      /* message longer than the receive buffer (status.error too)      */
  RRT_ERR_NOT_INITIALIZED = 12, /* call before rrt_init                                         */
  RRT_ERR_FINALIZED = 13,     /* call after rrt_finalize                                        */
  RRT_ERR_PROC_FAILED = 14,   /* the peer process died or became unreachable                    */
  RRT_ERR_NO_MEMORY = 15,     /* out of memory                                                  */
  RRT_ERR_TRANSPORT = 16,     /* a transport failed (details in the log)                        */
  RRT_ERR_TIMEOUT = 17,       /* an operation timed out (RRT_TIMEOUT)                          */
  RRT_ERR_UNSUPPORTED = 18,   /* not supported in this build or on this data                   */
  RRT_ERR_IN_STATUS = 19,     /* waitall/testall: see the per-request statuses                 */
  RRT_ERR_WIREUP = 20,        /* the launcher (PMIx) failed or is unreachable                  */
  RRT_ERR_INTERNAL = 21,      /* a bug in rrt                                                   */
  RRT_ERR_RMA_RANGE = 22,     /* one-sided access outside the target's window                   */
  RRT_ERR_RMA_SYNC = 23,      /* one-sided call in the wrong synchronization state               */
  RRT_ERR_WIN = 24,           /* unknown or freed window                                        */
  RRT_ERR_LAST = 25
};

/* ---- handles -------------------------------------------------------------------------------- */
typedef int rrt_comm_t;               /* communicator handle                                  */
typedef int rrt_datatype_t;           /* datatype handle                                      */
typedef int rrt_op_t;                 /* reduction operation handle                           */
typedef int rrt_errhandler_t;         /* RRT_ERRORS_RETURN or RRT_ERRORS_ARE_FATAL            */
typedef struct rrt_request_s *rrt_request_t; /* request handle (owned by rrt)                */

#define RRT_COMM_NULL ((rrt_comm_t)-1)
#define RRT_COMM_WORLD ((rrt_comm_t)0)
#define RRT_COMM_SELF ((rrt_comm_t)1)
#define RRT_REQUEST_NULL ((rrt_request_t)0)

#define RRT_ANY_SOURCE (-1)
#define RRT_ANY_TAG (-1)
#define RRT_PROC_NULL (-2)
#define RRT_ROOT (-3)      /* reserved */
#define RRT_UNDEFINED (-32766) /* comm_split color: not in any new communicator */
#define RRT_TAG_UB 0x3fffffff  /* largest valid tag */
#define RRT_COUNT_UNDEFINED ((size_t)-1)

#define RRT_IN_PLACE ((void *)1)   /* collectives: operate in the receive buffer */

#define RRT_ERRORS_RETURN ((rrt_errhandler_t)0)     /* default: calls return error codes     */
#define RRT_ERRORS_ARE_FATAL ((rrt_errhandler_t)1)  /* an error aborts the whole job          */

/* ---- datatypes ------------------------------------------------------------------------------ */
enum {
  RRT_DATATYPE_NULL = -1,
  RRT_BYTE = 0,
  RRT_CHAR = 1,       /* char (reductions treat it as signed 8-bit)                      */
  RRT_INT8 = 2,
  RRT_INT16 = 3,
  RRT_INT32 = 4,
  RRT_INT64 = 5,
  RRT_UINT8 = 6,
  RRT_UINT16 = 7,
  RRT_UINT32 = 8,
  RRT_UINT64 = 9,
  RRT_FLOAT = 10,
  RRT_DOUBLE = 11,
  RRT_FLOAT16 = 12,   /* IEEE binary16; reduced in float                                 */
  RRT_BFLOAT16 = 13,  /* bfloat16; reduced in float                                      */
  RRT_LONG_DOUBLE = 14,
  RRT_BOOL = 15,      /* C _Bool / C++ bool                                              */
  RRT_C_FLOAT_COMPLEX = 16,
  RRT_C_DOUBLE_COMPLEX = 17,
  /* (value, index) pairs for RRT_MINLOC / RRT_MAXLOC, laid out as the C structs       */
  RRT_FLOAT_INT = 18,       /* struct { float v; int i; }        */
  RRT_DOUBLE_INT = 19,      /* struct { double v; int i; }       */
  RRT_LONG_INT = 20,        /* struct { long v; int i; }         */
  RRT_2INT = 21,            /* struct { int v; int i; }          */
  RRT_SHORT_INT = 22,       /* struct { short v; int i; }        */
  RRT_LONG_DOUBLE_INT = 23, /* struct { long double v; int i; }  */
  RRT_PREDEFINED_TYPE_COUNT = 24
};

/* A contiguous type: count elements of oldtype. Reductions apply element-wise to the base type. */
int rrt_type_contiguous(size_t count, rrt_datatype_t oldtype, rrt_datatype_t *newtype);
int rrt_type_free(rrt_datatype_t *type);
int rrt_type_size(rrt_datatype_t type, size_t *size);
int rrt_type_extent(rrt_datatype_t type, size_t *extent);

/* ---- reduction operations ------------------------------------------------------------------- */
enum {
  RRT_OP_NULL = -1,
  RRT_SUM = 0,
  RRT_PROD = 1,
  RRT_MIN = 2,
  RRT_MAX = 3,
  RRT_LAND = 4,
  RRT_LOR = 5,
  RRT_LXOR = 6,
  RRT_BAND = 7,
  RRT_BOR = 8,
  RRT_BXOR = 9,
  RRT_MINLOC = 10,
  RRT_MAXLOC = 11,
  RRT_REPLACE = 12, /* one-sided accumulates only: target = origin                    */
  RRT_NO_OP = 13,   /* one-sided get_accumulate / fetch_and_op only: target unchanged   */
  RRT_PREDEFINED_OP_COUNT = 14
};

/* User reduction: inout[i] = in[i] op inout[i] for i < count elements of type. */
typedef void rrt_user_function(const void *in, void *inout, size_t count, rrt_datatype_t type,
                               void *user_data);
int rrt_op_create(rrt_user_function *fn, void *user_data, int commutative, rrt_op_t *op);
int rrt_op_free(rrt_op_t *op);
/* inoutbuf[i] = inbuf[i] op inoutbuf[i] for count elements of type, in this process (no
 * communication; MPI_Reduce_local). Host memory; the buffers must not overlap. */
int rrt_reduce_local(const void *inbuf, void *inoutbuf, size_t count, rrt_datatype_t type,
                     rrt_op_t op);

/* ---- status --------------------------------------------------------------------------------- */
typedef struct rrt_status {
  int source;     /* rank in the communicator the message came from */
  int tag;
  int error;      /* RRT_SUCCESS, RRT_ERR_TRUNCATE, RRT_ERR_PROC_FAILED, ... */
  int cancelled;  /* non-zero when the receive or send was cancelled (rrt_cancel) */
  size_t bytes;   /* bytes received (for a send: bytes sent; 0 when cancelled) */
} rrt_status_t;

#define RRT_STATUS_IGNORE ((rrt_status_t *)0)
#define RRT_STATUSES_IGNORE ((rrt_status_t *)0)

/* Elements of type in status (RRT_COUNT_UNDEFINED when bytes is not a multiple of its size). */
int rrt_get_count(const rrt_status_t *status, rrt_datatype_t type, size_t *count);

/* ---- environment ---------------------------------------------------------------------------- */
int rrt_init(int *argc, char ***argv);
int rrt_finalize(void);
int rrt_initialized(int *flag);
int rrt_finalized(int *flag);
/* 1 when buffers in CUDA device memory may be passed to every call (a CUDA build, libcuda and a
 * GPU present, RRT_CUDA not off), else 0. Valid between rrt_init and rrt_finalize. */
int rrt_cuda_support(int *flag);
int rrt_abort(rrt_comm_t comm, int code);
double rrt_wtime(void);
double rrt_wtick(void);
const char *rrt_strerror(int code);
/* The host name as PMIx reports it (at most len-1 characters, NUL-terminated). */
int rrt_get_processor_name(char *name, size_t len);

/* ---- memory ----------------------------------------------------------------------------------
 * Host memory that the other ranks of the node can map (as MPI_Alloc_mem, NCCL's ncclMemAlloc):
 * collectives on one node read buffers in it where they lie instead of copying them through
 * shared memory first (the allreduce, reduce and reduce-scatter of large vectors: about 1.5x
 * less memory traffic). Any buffer may be passed to any call as before; only the speed differs.
 * Page-aligned; size 0 gives NULL. Usable any time, also outside rrt_init / rrt_finalize.
 * Below 64 KiB, or where the memory cannot be shared (no memfd), it is private and works like
 * malloc'd memory.
 * RRT_ERR_NO_MEMORY when none can be had. */
int rrt_alloc_mem(size_t size, void *baseptr); /* baseptr: a void **, as MPI_Alloc_mem's */
/* Memory from rrt_alloc_mem (NULL: nothing). RRT_ERR_ARG for any other pointer. It must not be
 * in use by a call in progress. */
int rrt_free_mem(void *base);

/* ---- communicators -------------------------------------------------------------------------- */
int rrt_comm_rank(rrt_comm_t comm, int *rank);
int rrt_comm_size(rrt_comm_t comm, int *size);
int rrt_comm_dup(rrt_comm_t comm, rrt_comm_t *newcomm);
/* Non-blocking rrt_comm_dup, a collective of comm (started in the same order as comm's other
 * collectives): *newcomm is set when the request completes (it must stay valid until then) and
 * may be used only after that. Any number may be pending, with other communicator creations. */
int rrt_comm_idup(rrt_comm_t comm, rrt_comm_t *newcomm, rrt_request_t *request);
/* Collective over comm; color RRT_UNDEFINED gives RRT_COMM_NULL. */
int rrt_comm_split(rrt_comm_t comm, int color, int key, rrt_comm_t *newcomm);
int rrt_comm_free(rrt_comm_t *comm);
/* Collective over comm: splits it into the ranks that can share memory (one communicator per
 * node, as the launcher's PMIx node map says), ordered by key, then rank. type
 * RRT_COMM_TYPE_SHARED, or RRT_UNDEFINED (this rank gets RRT_COMM_NULL). */
#define RRT_COMM_TYPE_SHARED 1
int rrt_comm_split_type(rrt_comm_t comm, int type, int key, rrt_comm_t *newcomm);
/* Collective over the n listed ranks of comm only (ranks[i] becomes rank i; the caller is one of
 * them); tag (>= 0) keeps concurrent creations over overlapping ranks apart. */
int rrt_comm_create_group(rrt_comm_t comm, int n, const int *ranks, int tag, rrt_comm_t *newcomm);
/* Collective over all of comm, whose ranks form two disjoint groups: an intercommunicator.
 * Each caller passes its own group (containing itself) and the other group, as ranks of comm in
 * group order. On the result, rrt_comm_rank is the rank in the local group, and rrt_comm_size and
 * the ranks of point-to-point calls (destinations, sources, statuses) are those of the remote
 * group. It carries point-to-point only: collectives, dup and split fail with RRT_ERR_COMM. */
int rrt_comm_create_inter(rrt_comm_t comm, int nlocal, const int *local_ranks, int nremote,
                          const int *remote_ranks, rrt_comm_t *newcomm);
/* The rank in RRT_COMM_WORLD of rank in comm (for group arithmetic). */
int rrt_comm_world_rank(rrt_comm_t comm, int rank, int *world_rank);
int rrt_comm_set_errhandler(rrt_comm_t comm, rrt_errhandler_t handler);
int rrt_comm_get_errhandler(rrt_comm_t comm, rrt_errhandler_t *handler);

/* ---- point-to-point ------------------------------------------------------------------------- */
int rrt_send(const void *buf, size_t count, rrt_datatype_t type, int dest, int tag, rrt_comm_t comm);
/* Synchronous: returns only once the receiver has matched the message. */
int rrt_ssend(const void *buf, size_t count, rrt_datatype_t type, int dest, int tag, rrt_comm_t comm);
int rrt_recv(void *buf, size_t count, rrt_datatype_t type, int source, int tag, rrt_comm_t comm,
             rrt_status_t *status);
int rrt_isend(const void *buf, size_t count, rrt_datatype_t type, int dest, int tag, rrt_comm_t comm,
              rrt_request_t *request);
int rrt_issend(const void *buf, size_t count, rrt_datatype_t type, int dest, int tag,
               rrt_comm_t comm, rrt_request_t *request);
int rrt_irecv(void *buf, size_t count, rrt_datatype_t type, int source, int tag, rrt_comm_t comm,
              rrt_request_t *request);
int rrt_sendrecv(const void *sendbuf, size_t sendcount, rrt_datatype_t sendtype, int dest,
                 int sendtag, void *recvbuf, size_t recvcount, rrt_datatype_t recvtype, int source,
                 int recvtag, rrt_comm_t comm, rrt_status_t *status);
int rrt_probe(int source, int tag, rrt_comm_t comm, rrt_status_t *status);
int rrt_iprobe(int source, int tag, rrt_comm_t comm, int *flag, rrt_status_t *status);
/* Matched probe (MPI_Mprobe / MPI_Mrecv): rrt_improbe / rrt_mprobe take the message they find
 * out of matching, so that no other receive (another thread's, a wildcard one) can take it; it
 * is then received only through *message with rrt_mrecv / rrt_imrecv, which set *message to
 * RRT_MESSAGE_NULL. source RRT_PROC_NULL gives RRT_MESSAGE_NO_PROC (its receive completes at
 * once with source RRT_PROC_NULL). */
typedef struct rrt_request_s *rrt_message_t;
#define RRT_MESSAGE_NULL ((rrt_message_t)0)
#define RRT_MESSAGE_NO_PROC ((rrt_message_t)1)
int rrt_improbe(int source, int tag, rrt_comm_t comm, int *flag, rrt_message_t *message,
                rrt_status_t *status);
int rrt_mprobe(int source, int tag, rrt_comm_t comm, rrt_message_t *message, rrt_status_t *status);
int rrt_imrecv(void *buf, size_t count, rrt_datatype_t type, rrt_message_t *message,
               rrt_request_t *request);
int rrt_mrecv(void *buf, size_t count, rrt_datatype_t type, rrt_message_t *message,
              rrt_status_t *status);

/* ---- completion ----------------------------------------------------------------------------- */
/* wait/test free a completed request and set *request to RRT_REQUEST_NULL. A NULL request
 * completes at once with an empty status. */
int rrt_wait(rrt_request_t *request, rrt_status_t *status);
int rrt_test(rrt_request_t *request, int *flag, rrt_status_t *status);
/* statuses: an array of count, or RRT_STATUSES_IGNORE. Returns RRT_ERR_IN_STATUS when any failed. */
int rrt_waitall(size_t count, rrt_request_t *requests, rrt_status_t *statuses);
int rrt_testall(size_t count, rrt_request_t *requests, int *flag, rrt_status_t *statuses);
/* index: the completed one, or RRT_UNDEFINED when every request is NULL. */
int rrt_waitany(size_t count, rrt_request_t *requests, int *index, rrt_status_t *status);
int rrt_testany(size_t count, rrt_request_t *requests, int *index, int *flag, rrt_status_t *status);
/* Completes at least one; indices/statuses get outcount entries (RRT_UNDEFINED if all NULL). */
int rrt_waitsome(size_t count, rrt_request_t *requests, int *outcount, int *indices,
                 rrt_status_t *statuses);
/* Cancels a receive or send that has not matched: a receive still posted, a send the receiver
 * has not matched (it never sees the message). Local: the request then completes (a completed
 * standard send may complete again, once the receiver answers) and wait/test report
 * status.cancelled, 0 when it had matched and completed normally. The request must not have
 * been waited for or freed. */
int rrt_cancel(rrt_request_t *request);
/* Lets the request complete on its own; the handle becomes RRT_REQUEST_NULL. */
int rrt_request_free(rrt_request_t *request);

/* ---- collectives ---------------------------------------------------------------------------- */
/* Each has a non-blocking twin rrt_i<name>(..., rrt_request_t *request). Counts and
 * displacements of the v-variants are in elements of the given type; rrt reads those arrays
 * during the call only, also in the non-blocking twins, so they may be reused at once. */
int rrt_barrier(rrt_comm_t comm);
int rrt_bcast(void *buf, size_t count, rrt_datatype_t type, int root, rrt_comm_t comm);
int rrt_reduce(const void *sendbuf, void *recvbuf, size_t count, rrt_datatype_t type, rrt_op_t op,
               int root, rrt_comm_t comm);
int rrt_allreduce(const void *sendbuf, void *recvbuf, size_t count, rrt_datatype_t type,
                  rrt_op_t op, rrt_comm_t comm);
int rrt_allgather(const void *sendbuf, size_t sendcount, rrt_datatype_t sendtype, void *recvbuf,
                  size_t recvcount, rrt_datatype_t recvtype, rrt_comm_t comm);
int rrt_allgatherv(const void *sendbuf, size_t sendcount, rrt_datatype_t sendtype, void *recvbuf,
                   const size_t *recvcounts, const size_t *displs, rrt_datatype_t recvtype,
                   rrt_comm_t comm);
int rrt_alltoall(const void *sendbuf, size_t sendcount, rrt_datatype_t sendtype, void *recvbuf,
                 size_t recvcount, rrt_datatype_t recvtype, rrt_comm_t comm);
int rrt_alltoallv(const void *sendbuf, const size_t *sendcounts, const size_t *sdispls,
                  rrt_datatype_t sendtype, void *recvbuf, const size_t *recvcounts,
                  const size_t *rdispls, rrt_datatype_t recvtype, rrt_comm_t comm);
int rrt_gather(const void *sendbuf, size_t sendcount, rrt_datatype_t sendtype, void *recvbuf,
               size_t recvcount, rrt_datatype_t recvtype, int root, rrt_comm_t comm);
int rrt_gatherv(const void *sendbuf, size_t sendcount, rrt_datatype_t sendtype, void *recvbuf,
                const size_t *recvcounts, const size_t *displs, rrt_datatype_t recvtype, int root,
                rrt_comm_t comm);
int rrt_scatter(const void *sendbuf, size_t sendcount, rrt_datatype_t sendtype, void *recvbuf,
                size_t recvcount, rrt_datatype_t recvtype, int root, rrt_comm_t comm);
int rrt_scatterv(const void *sendbuf, const size_t *sendcounts, const size_t *displs,
                 rrt_datatype_t sendtype, void *recvbuf, size_t recvcount, rrt_datatype_t recvtype,
                 int root, rrt_comm_t comm);
int rrt_reduce_scatter_block(const void *sendbuf, void *recvbuf, size_t recvcount,
                             rrt_datatype_t type, rrt_op_t op, rrt_comm_t comm);
int rrt_reduce_scatter(const void *sendbuf, void *recvbuf, const size_t *recvcounts,
                       rrt_datatype_t type, rrt_op_t op, rrt_comm_t comm);
int rrt_scan(const void *sendbuf, void *recvbuf, size_t count, rrt_datatype_t type, rrt_op_t op,
             rrt_comm_t comm);
int rrt_exscan(const void *sendbuf, void *recvbuf, size_t count, rrt_datatype_t type, rrt_op_t op,
               rrt_comm_t comm);

/* Neighbourhood exchange (MPI's neighbourhood collectives): this rank sends block i of sendbuf
 * (sendcounts[i] elements at sdispls[i]) to dests[i] and receives block i of recvbuf from
 * sources[i]. The lists are this rank's own (a stencil, a graph) and must mirror the others'
 * (every block sent to a rank has a receive of it there). Entries are ranks of comm or
 * RRT_PROC_NULL (no message, the slot is left alone); a rank may appear several times, the k-th
 * block sent to a rank meeting that rank's k-th receive from the sender, in list order. A
 * collective of comm: every rank calls it, also one with no neighbours (empty lists may be
 * NULL). RRT_ERR_RANK for an entry out of range, RRT_ERR_ARG for a NULL array of a non-empty
 * list. */
int rrt_neighbor_alltoallv(const void *sendbuf, const size_t *sendcounts, const size_t *sdispls,
                           void *recvbuf, const size_t *recvcounts, const size_t *rdispls,
                           rrt_datatype_t type, size_t nsources, const int *sources,
                           size_t ndests, const int *dests, rrt_comm_t comm);

int rrt_ibarrier(rrt_comm_t comm, rrt_request_t *request);
int rrt_ibcast(void *buf, size_t count, rrt_datatype_t type, int root, rrt_comm_t comm,
               rrt_request_t *request);
int rrt_ireduce(const void *sendbuf, void *recvbuf, size_t count, rrt_datatype_t type, rrt_op_t op,
                int root, rrt_comm_t comm, rrt_request_t *request);
int rrt_iallreduce(const void *sendbuf, void *recvbuf, size_t count, rrt_datatype_t type,
                   rrt_op_t op, rrt_comm_t comm, rrt_request_t *request);
int rrt_iallgather(const void *sendbuf, size_t sendcount, rrt_datatype_t sendtype, void *recvbuf,
                   size_t recvcount, rrt_datatype_t recvtype, rrt_comm_t comm,
                   rrt_request_t *request);
int rrt_iallgatherv(const void *sendbuf, size_t sendcount, rrt_datatype_t sendtype, void *recvbuf,
                    const size_t *recvcounts, const size_t *displs, rrt_datatype_t recvtype,
                    rrt_comm_t comm, rrt_request_t *request);
int rrt_ialltoall(const void *sendbuf, size_t sendcount, rrt_datatype_t sendtype, void *recvbuf,
                  size_t recvcount, rrt_datatype_t recvtype, rrt_comm_t comm,
                  rrt_request_t *request);
int rrt_ialltoallv(const void *sendbuf, const size_t *sendcounts, const size_t *sdispls,
                   rrt_datatype_t sendtype, void *recvbuf, const size_t *recvcounts,
                   const size_t *rdispls, rrt_datatype_t recvtype, rrt_comm_t comm,
                   rrt_request_t *request);
int rrt_igather(const void *sendbuf, size_t sendcount, rrt_datatype_t sendtype, void *recvbuf,
                size_t recvcount, rrt_datatype_t recvtype, int root, rrt_comm_t comm,
                rrt_request_t *request);
int rrt_igatherv(const void *sendbuf, size_t sendcount, rrt_datatype_t sendtype, void *recvbuf,
                 const size_t *recvcounts, const size_t *displs, rrt_datatype_t recvtype, int root,
                 rrt_comm_t comm, rrt_request_t *request);
int rrt_iscatter(const void *sendbuf, size_t sendcount, rrt_datatype_t sendtype, void *recvbuf,
                 size_t recvcount, rrt_datatype_t recvtype, int root, rrt_comm_t comm,
                 rrt_request_t *request);
int rrt_iscatterv(const void *sendbuf, const size_t *sendcounts, const size_t *displs,
                  rrt_datatype_t sendtype, void *recvbuf, size_t recvcount,
                  rrt_datatype_t recvtype, int root, rrt_comm_t comm, rrt_request_t *request);
int rrt_ireduce_scatter_block(const void *sendbuf, void *recvbuf, size_t recvcount,
                              rrt_datatype_t type, rrt_op_t op, rrt_comm_t comm,
                              rrt_request_t *request);
int rrt_ireduce_scatter(const void *sendbuf, void *recvbuf, const size_t *recvcounts,
                        rrt_datatype_t type, rrt_op_t op, rrt_comm_t comm, rrt_request_t *request);
int rrt_iscan(const void *sendbuf, void *recvbuf, size_t count, rrt_datatype_t type, rrt_op_t op,
              rrt_comm_t comm, rrt_request_t *request);
int rrt_iexscan(const void *sendbuf, void *recvbuf, size_t count, rrt_datatype_t type, rrt_op_t op,
                rrt_comm_t comm, rrt_request_t *request);
int rrt_ineighbor_alltoallv(const void *sendbuf, const size_t *sendcounts, const size_t *sdispls,
                            void *recvbuf, const size_t *recvcounts, const size_t *rdispls,
                            rrt_datatype_t type, size_t nsources, const int *sources,
                            size_t ndests, const int *dests, rrt_comm_t comm,
                            rrt_request_t *request);

/* ---- one-sided communication (windows) -------------------------------------------------------
 * A window exposes memory of every rank of a communicator to one-sided put, get and
 * accumulate operations from the others. Creation and rrt_win_free are collective over the
 * communicator. Operations ride on rrt's point-to-point engine on a context of the window's
 * own: a small operation travels in one eager message, a large one is received straight into
 * (put) or sent straight from (get) the target's window memory by the zero-copy rendezvous.
 *
 * Progress: the target takes no part in an operation, but it services them only while it is
 * inside some rrt call (any call that waits or polls: wait/test, collectives, rrt_win_*), as
 * the common MPI implementations do without an asynchronous thread.
 *
 * Memory: window memory and origin / result buffers must be host memory (CUDA device buffers
 * give RRT_ERR_UNSUPPORTED).
 *
 * Displacements: target_disp counts units of the target's disp_unit from its window base; in a
 * dynamic window (rrt_win_create_dynamic) target_disp is an absolute address in the target
 * process, inside memory it attached. An access outside the target's window is not performed;
 * it fails with RRT_ERR_RMA_RANGE at the call that completes it (flush, unlock, fence,
 * complete, or wait on its request).
 *
 * Completion: operations are non-blocking; rrt_win_flush(target) returns once every earlier
 * operation of this rank to target is complete at the target (gets: the data has arrived);
 * flush_local also waits until the origin buffers may be reused (here: the same).
 * Accumulates from one origin to one target are applied in the order they were issued.
 * Synchronization: fence (collective), lock/unlock (passive target: shared or exclusive, one
 * target or all), post/start/complete/wait (generalized active target, groups as ranks of the
 * window's communicator). */
typedef int rrt_win_t;
#define RRT_WIN_NULL ((rrt_win_t)-1)
#define RRT_LOCK_EXCLUSIVE 1
#define RRT_LOCK_SHARED 2
/* assert bits (others are accepted and ignored, as hints) */
#define RRT_MODE_NOCHECK 1 /* lock / post / start: no conflicting lock or epoch; skip the handshake */

/* Collective: size bytes at base (may be NULL when size is 0), disp_unit > 0. */
int rrt_win_create(void *base, size_t size, int disp_unit, rrt_comm_t comm, rrt_win_t *win);
/* Collective: rrt allocates size bytes (64-byte aligned, freed by rrt_win_free). */
int rrt_win_allocate(size_t size, int disp_unit, rrt_comm_t comm, void *baseptr, rrt_win_t *win);
/* Collective over comm, whose ranks must all be on one node (see rrt_comm_split_type): one
 * shared-memory segment holds every rank's size bytes, back to back in rank order, and every rank
 * maps all of it; *baseptr is this rank's part. Loads and stores reach other ranks' parts
 * directly (rrt_win_shared_query); the window takes put / get / accumulate like any other.
 * RRT_ERR_COMM when comm spans several nodes. */
int rrt_win_allocate_shared(size_t size, int disp_unit, rrt_comm_t comm, void *baseptr,
                            rrt_win_t *win);
/* A window from rrt_win_allocate_shared: the size, disp_unit and this process's address
 * (*(void **)baseptr; NULL for an empty part) of rank's part; rank RRT_PROC_NULL gives the first
 * non-empty part (the segment's start when all are empty). RRT_ERR_ARG for other windows. */
int rrt_win_shared_query(rrt_win_t win, int rank, size_t *size, int *disp_unit, void *baseptr);
/* Collective: a window without memory; each rank attaches regions (target_disp = address). */
int rrt_win_create_dynamic(rrt_comm_t comm, rrt_win_t *win);
int rrt_win_attach(rrt_win_t win, void *base, size_t size);
int rrt_win_detach(rrt_win_t win, const void *base);
/* Collective: waits for every operation in flight to and from this rank, then frees. */
int rrt_win_free(rrt_win_t *win);
/* The local window: base (NULL for dynamic), size in bytes (0 for dynamic), disp_unit. Ranks
 * of the window are those of the communicator it was created over. */
int rrt_win_get_info(rrt_win_t win, void **base, size_t *size, int *disp_unit);

/* Data movement. count elements of type (predefined or contiguous); the target's memory is
 * count elements of the same type at target_disp. Accumulates use op (predefined, or
 * RRT_REPLACE; RRT_NO_OP for get_accumulate / fetch_and_op) element-wise on the base type:
 * target = origin op target. get_accumulate / fetch_and_op / compare_and_swap return the
 * target's previous contents in result. compare_and_swap: one element; the target becomes
 * origin if it equals compare. */
int rrt_win_put(const void *origin, size_t count, rrt_datatype_t type, int target,
                size_t target_disp, rrt_win_t win);
int rrt_win_get(void *origin, size_t count, rrt_datatype_t type, int target, size_t target_disp,
                rrt_win_t win);
int rrt_win_accumulate(const void *origin, size_t count, rrt_datatype_t type, int target,
                       size_t target_disp, rrt_op_t op, rrt_win_t win);
int rrt_win_get_accumulate(const void *origin, void *result, size_t count, rrt_datatype_t type,
                           int target, size_t target_disp, rrt_op_t op, rrt_win_t win);
int rrt_win_fetch_and_op(const void *origin, void *result, rrt_datatype_t type, int target,
                         size_t target_disp, rrt_op_t op, rrt_win_t win);
int rrt_win_compare_and_swap(const void *origin, const void *compare, void *result,
                             rrt_datatype_t type, int target, size_t target_disp, rrt_win_t win);
/* Request-based twins: the request completes when the operation is complete at the target
 * (and its result has arrived); rrt_wait / rrt_test as for any request. */
int rrt_win_rput(const void *origin, size_t count, rrt_datatype_t type, int target,
                 size_t target_disp, rrt_win_t win, rrt_request_t *request);
int rrt_win_rget(void *origin, size_t count, rrt_datatype_t type, int target, size_t target_disp,
                 rrt_win_t win, rrt_request_t *request);
int rrt_win_raccumulate(const void *origin, size_t count, rrt_datatype_t type, int target,
                        size_t target_disp, rrt_op_t op, rrt_win_t win, rrt_request_t *request);
int rrt_win_rget_accumulate(const void *origin, void *result, size_t count, rrt_datatype_t type,
                            int target, size_t target_disp, rrt_op_t op, rrt_win_t win,
                            rrt_request_t *request);

/* Synchronization. target -1 in flush / flush_local: every target. */
int rrt_win_flush(int target, rrt_win_t win);
int rrt_win_flush_local(int target, rrt_win_t win);
int rrt_win_fence(int assert_bits, rrt_win_t win);
int rrt_win_lock(int lock_type, int target, int assert_bits, rrt_win_t win);
int rrt_win_unlock(int target, rrt_win_t win);
int rrt_win_lock_all(int assert_bits, rrt_win_t win);
int rrt_win_unlock_all(rrt_win_t win);
/* Exposure (post/wait/test) to the n origins ranks[], access (start/complete) to n targets. */
int rrt_win_post(int n, const int *ranks, int assert_bits, rrt_win_t win);
int rrt_win_start(int n, const int *ranks, int assert_bits, rrt_win_t win);
int rrt_win_complete(rrt_win_t win);
int rrt_win_wait(rrt_win_t win);
int rrt_win_test(rrt_win_t win, int *flag);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif /* RRT_RRT_H */
