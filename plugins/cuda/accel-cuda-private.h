/* accel-cuda-private.h: what the files of libaccel-cuda-1.0 share. Not
 * installed.
 *
 * Threads: an AccelCudaContext is made and dropped on the device thread
 * (open_context/close_context). The device thread is the only producer of
 * completion entries; the completion thread (or CUDA's callback thread) the
 * only consumer. Events are refcounted and may be released from any thread.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "accel-cuda.h"

G_BEGIN_DECLS

#define ACCEL_CUDA_MAX_LANES 64
/* Completion entries per lane; a full ring makes the device thread wait. */
#define ACCEL_CUDA_RING_SIZE 4096
#define ACCEL_CUDA_CHECK_CODES 16
/* Pageable transfers go through these pinned chunks: small enough that
 * the CPU copy of one overlaps the DMA of the others for most of a video
 * frame (a 4K NV12 frame is 12 MiB), enough of them to keep the copy
 * engine busy. */
#define ACCEL_CUDA_STAGING_SLOTS 8
#define ACCEL_CUDA_STAGING_CHUNK (2 << 20)
/* Peer copies into one device that may be in flight at once. */
#define ACCEL_CUDA_PEER_FLAGS 1024

typedef struct _AccelCudaContext AccelCudaContext;
typedef struct _AccelCudaEvent AccelCudaEvent;
typedef struct _AccelCudaCompleter AccelCudaCompleter;

/* A pooled event; the op that recorded it and the buffers it last wrote
 * each hold a reference. */
struct _AccelCudaEvent {
  gint ref_count;
  cudaEvent_t event;
  AccelCudaContext *ctx;     /* strong */
  guint lane;
};

/* Where the work enqueued on a lane so far ends: with lane flags (poll
 * strategy, the default), the value the lane's flag reaches once it ran,
 * written by the GPU behind it (cuStreamWriteValue32); otherwise an event
 * recorded behind it. Ring entries and buffer records carry marks. */
typedef struct {
  AccelCudaEvent *event;     /* strong; NULL with lane flags */
  guint32 seq;               /* lane flags: the flag's value; 0 with events */
  gint lane;                 /* -1: no mark */
} AccelCudaMark;

#define ACCEL_CUDA_MARK_NONE { NULL, 0, -1 }

typedef struct {
  AccelWork *work;
  AccelCudaMark mark;        /* the end of the entry's work */
  guint64 claim;             /* its ring position while unclaimed; with
                                CLAIMED once the completion thread or the
                                waiting caller took it (atomic) */
  guint64 seq;
  gint done;                 /* callback strategy: 1 once the host function
                                ran, 2 when there is none (watch the event) */
  AccelCudaCompleter *completer;
  GObject *keep;             /* the op or buffer, kept alive until reaped */
  /* accel_cuda_lane_check_after(): run on the completion thread once the
   * work is done, on the codes copied to the lane's pinned slot of this
   * entry. */
  AccelCudaCheckFunc check;
  gpointer check_data;
  GDestroyNotify check_destroy;
  guint check_n;
  gint64 trace_start;        /* ACCEL_CUDA_TRACE: when execute_op began; 0 off */
  guint64 nvtx_range;        /* ACCEL_NVTX: the work's range; 0 off */
} AccelCudaEntry;

struct _AccelCudaLane {
  AccelCudaDevice *device;   /* weak: the device outlives its contexts' use */
  AccelCudaContext *ctx;
  guint index;
  int ordinal;
  cudaStream_t stream;
  GHashTable *handles;       /* key -> LaneHandle; device thread only */
  GPtrArray *workspaces;     /* memory handed out during the current run */

  /* Single-producer single-consumer ring of entries in flight. */
  AccelCudaEntry *ring;
  guint64 head;              /* consumer, atomic */
  guint64 tail;              /* producer, atomic */

  /* Lane flags: a word of mapped pinned host memory that the GPU sets to
   * the lane's sequence number behind each entry's work
   * (cuStreamWriteValue32); NULL when the context uses events. */
  volatile guint32 *flag;
  unsigned long long flag_device;
  guint32 flag_seq;          /* device thread: the last value written */

  /* The check of the op being run (accel_cuda_lane_check_after()), moved
   * into its ring entry when the op is pushed. */
  gint32 *check_codes;       /* pinned, ACCEL_CUDA_CHECK_CODES per ring slot; lazy */
  gint32 *check_device;      /* the running op's codes, in its workspace */
  AccelCudaCheckFunc check;
  gpointer check_data;
  GDestroyNotify check_destroy;
  guint check_n;
  gint64 trace_start;        /* of the op being run, for its entry */
  guint64 nvtx_range;        /* of the work being run, for its entry */
};

typedef struct {
  void *host;
  cudaEvent_t event;
  gboolean busy;
} AccelCudaStaging;

/* In a GLib atomic reference-counted box (g_atomic_rc_box_new0()). */
struct _AccelCudaContext {
  gint alive;                /* atomic: CUDA resources still exist */
  AccelCudaDevice *device;   /* weak */
  int ordinal;
  cudaMemPool_t pool;
  gboolean use_pool;         /* buffers from the pool; FALSE: cudaMalloc (ACCEL_CUDA_MEMPOOL=0) */
  guint n_lanes;
  AccelCudaLane *lanes;
  guint next_lane;
  guint64 next_seq;
  guint64 next_write_serial; /* device thread; see accel_cuda_lane_get_write_serial() */

  GMutex event_lock;
  GPtrArray *free_events;    /* AccelCudaEvent with ref_count 0 */
  unsigned int event_flags;

  void *flags;               /* pinned host memory of the lanes' flags, or NULL */

  AccelCudaStaging staging[ACCEL_CUDA_STAGING_SLOTS];
  guint next_staging;

  AccelCudaCompleter *completer;

  GMutex poison_lock;
  gint poisoned;             /* atomic */
  GError *poison;            /* CONTEXT_POISONED, with the message users see */

  /* accel-cuda-peer.c, device thread: where peer copies into this device
   * wait for their source (made on first use), the peers this context
   * has tried to enable access to, and those its pool was opened to (a
   * bit per ordinal). */
  cudaStream_t peer_stream;
  guint64 peers_tried;
  guint64 pool_peers;        /* peers the pool's memory was opened to */
  guint32 *peer_flags;       /* ACCEL_CUDA_PEER_FLAGS words, pinned, mapped, portable; lazy */
  unsigned long long peer_flags_device;
  guint64 peer_flags_used[ACCEL_CUDA_PEER_FLAGS / 64];
};

/* Per base buffer: who wrote it last, and who read it since, per lane. */
typedef struct {
  AccelCudaContext *ctx;     /* strong */
  guint64 write_serial;      /* ctx->next_write_serial when last written */
  AccelCudaMark writer;
  AccelCudaMark readers[];
} AccelCudaBufferTrack;

/* accel-cuda-nvml.c: GPU telemetry. */
typedef enum {
  ACCEL_CUDA_NVML_TEMPERATURE = 1 << 0,
  ACCEL_CUDA_NVML_POWER_USAGE = 1 << 1,
  ACCEL_CUDA_NVML_POWER_LIMIT = 1 << 2,
  ACCEL_CUDA_NVML_SM_CLOCK = 1 << 3,
  ACCEL_CUDA_NVML_MEMORY_CLOCK = 1 << 4,
  ACCEL_CUDA_NVML_UTILIZATION = 1 << 5,
  ACCEL_CUDA_NVML_MEMORY = 1 << 6,
  ACCEL_CUDA_NVML_ECC = 1 << 7,
  ACCEL_CUDA_NVML_THROTTLE = 1 << 8,
} AccelCudaNvmlHave;

typedef struct {
  guint have;                   /* AccelCudaNvmlHave: the readings NVML gave */
  unsigned int temperature;     /* °C */
  unsigned int power_usage;     /* mW */
  unsigned int power_limit;     /* mW */
  unsigned int sm_clock;        /* MHz */
  unsigned int memory_clock;    /* MHz */
  unsigned int utilization;     /* % of the last sample period with a kernel running */
  unsigned int memory_utilization;
  guint64 memory_used;
  guint64 memory_total;
  guint64 ecc_corrected;
  guint64 ecc_uncorrected;
  guint throttle_reasons;       /* AccelCudaThrottleReasons */
} AccelCudaNvmlReadings;

gboolean accel_cuda_nvml_read (const char *bus_id, AccelCudaNvmlReadings *r, char **why);

/* accel-cuda-gpu.c: the description both kinds of CUDA device hold, and
 * the properties of AccelCudaGpu over it. A class implementing the
 * interface numbers its properties as the interface does. */
typedef struct {
  int ordinal;
  char *device_name;
  char *compute_capability;
  int cc_major, cc_minor;
  int sm_count;
  AccelCudaIsolation isolation;
  AccelCudaCompletion completion;
  char *pci_bus_id;
} AccelCudaGpuInfo;

enum {
  ACCEL_CUDA_GPU_PROP_0,
  ACCEL_CUDA_GPU_PROP_ORDINAL,
  ACCEL_CUDA_GPU_PROP_DEVICE_NAME,
  ACCEL_CUDA_GPU_PROP_COMPUTE_CAPABILITY,
  ACCEL_CUDA_GPU_PROP_COMPUTE_CAPABILITY_MAJOR,
  ACCEL_CUDA_GPU_PROP_COMPUTE_CAPABILITY_MINOR,
  ACCEL_CUDA_GPU_PROP_SM_COUNT,
  ACCEL_CUDA_GPU_PROP_ISOLATION,
  ACCEL_CUDA_GPU_PROP_COMPLETION,
  ACCEL_CUDA_GPU_PROP_PCI_BUS_ID,
  ACCEL_CUDA_GPU_PROP_TEMPERATURE,
  ACCEL_CUDA_GPU_PROP_POWER_USAGE,
  ACCEL_CUDA_GPU_PROP_POWER_LIMIT,
  ACCEL_CUDA_GPU_PROP_SM_CLOCK,
  ACCEL_CUDA_GPU_PROP_MEMORY_CLOCK,
  ACCEL_CUDA_GPU_PROP_UTILIZATION,
  ACCEL_CUDA_GPU_PROP_MEMORY_UTILIZATION,
  ACCEL_CUDA_GPU_PROP_MEMORY_USED,
  ACCEL_CUDA_GPU_PROP_ECC_ERRORS_CORRECTED,
  ACCEL_CUDA_GPU_PROP_ECC_ERRORS_UNCORRECTED,
  ACCEL_CUDA_GPU_PROP_THROTTLE_REASONS,
  ACCEL_CUDA_GPU_PROP_TELEMETRY,
  ACCEL_CUDA_GPU_N_PROPS
};

void accel_cuda_gpu_override_properties (GObjectClass *klass);

/* What a class whose instance embeds an AccelCudaGpuInfo named `gpu` needs
 * to implement AccelCudaGpu: t_n_gpu_init (for G_IMPLEMENT_INTERFACE),
 * t_n_set_property and t_n_get_property. */
#define ACCEL_CUDA_GPU_GLUE(t_n, CAST)                                                         \
  static gpointer t_n##_get_info (AccelCudaGpu *gpu) { return &CAST (gpu)->gpu; }              \
  static void t_n##_gpu_init (AccelCudaGpuInterface *iface) { iface->get_info = t_n##_get_info; } \
  static void t_n##_set_property (GObject *object, guint id, const GValue *value, GParamSpec *pspec) \
  {                                                                                              \
    accel_cuda_gpu_info_set_property (&CAST (object)->gpu, id, value);                           \
  }                                                                                              \
  static void t_n##_get_property (GObject *object, guint id, GValue *value, GParamSpec *pspec)  \
  {                                                                                              \
    accel_cuda_gpu_info_get_property (&CAST (object)->gpu, id, value);                           \
  }
void accel_cuda_gpu_info_set_property (AccelCudaGpuInfo *info, guint prop_id, const GValue *value);
void accel_cuda_gpu_info_get_property (AccelCudaGpuInfo *info, guint prop_id, GValue *value);
void accel_cuda_gpu_info_constructed (AccelCudaGpuInfo *info);
void accel_cuda_gpu_info_clear (AccelCudaGpuInfo *info);
char *accel_cuda_pci_bus_id (const struct cudaDeviceProp *prop);

/* accel-cuda-error.c */
GError *accel_cuda_error_new (cudaError_t status, const char *what);

/* accel-cuda-lane.c */
gboolean accel_cuda_lane_init (AccelCudaLane *lane, AccelCudaContext *ctx, guint index, GError **error);
void accel_cuda_lane_clear (AccelCudaLane *lane);
gboolean accel_cuda_lane_release_workspaces (AccelCudaLane *lane, GError **error);
gboolean accel_cuda_lane_enqueue_check (AccelCudaLane *lane, GError **error);
void accel_cuda_lane_drop_check (AccelCudaLane *lane);
void accel_cuda_lane_wait_for_room (AccelCudaLane *lane);

/* accel-cuda-context.c: events, buffer tracking, poisoning. */
AccelCudaEvent *accel_cuda_event_acquire (AccelCudaContext *ctx, guint lane, GError **error);
AccelCudaEvent *accel_cuda_event_ref (AccelCudaEvent *event);
void accel_cuda_event_unref (AccelCudaEvent *event);
void accel_cuda_event_destroy (AccelCudaEvent *event);
AccelBuffer *accel_cuda_root_buffer (AccelBuffer *buffer);
AccelCudaBufferTrack *accel_cuda_track_peek (AccelCudaContext *ctx, AccelBuffer *root);
AccelCudaContext *accel_cuda_context_ref (AccelCudaContext *ctx);
void accel_cuda_context_unref (AccelCudaContext *ctx);
void accel_cuda_context_poison (AccelCudaContext *ctx, const GError *cause);
GError *accel_cuda_context_poison_error (AccelCudaContext *ctx);
AccelCudaContext *accel_cuda_device_peek_context (AccelCudaDevice *self);

/* accel-cuda-context.c: marks. */
gboolean accel_cuda_lane_mark (AccelCudaLane *lane, AccelCudaMark *mark, GError **error);
gboolean accel_cuda_mark_reached (AccelCudaContext *ctx, const AccelCudaMark *mark);
void accel_cuda_mark_clear (AccelCudaMark *mark);

/* accel-cuda-completion.c */
AccelCudaCompleter *accel_cuda_completer_new (AccelCudaContext *ctx, AccelCudaCompletion strategy, GError **error);
void accel_cuda_completer_push (AccelCudaCompleter *self, AccelCudaLane *lane, AccelWork *work, AccelCudaMark *mark);
void accel_cuda_completer_wake (AccelCudaCompleter *self);
void accel_cuda_completer_free (AccelCudaCompleter *self);
guint accel_cuda_lane_pending (AccelCudaLane *lane);

/* accel-cuda-transfer.c: WRITE, READ and ZERO work. */
gboolean accel_cuda_staging_init (AccelCudaContext *ctx, GError **error);
void accel_cuda_staging_clear (AccelCudaContext *ctx);
void accel_cuda_transfer_execute (AccelCudaDevice *self, AccelCudaContext *ctx, AccelCudaLane *lane, AccelWork *work);

/* accel-cuda-context.c: orders work on @lane after the last writers (and,
 * for writes, readers) of the buffers it touches, and records it. */
gboolean accel_cuda_order_before (AccelCudaContext *ctx, AccelCudaLane *lane, AccelBuffer *buffer,
                                  gboolean writes, GError **error);
void accel_cuda_record_after (AccelCudaContext *ctx, AccelCudaLane *lane, AccelBuffer *buffer,
                              gboolean writes, const AccelCudaMark *mark);

/* accel-cuda-device.c */
void accel_cuda_device_fail_work (AccelCudaDevice *self, AccelCudaContext *ctx, AccelWork *work, GError *error);

/* accel-cuda-driver.c: driver entry points the runtime lacks. */
typedef int AccelCudaDrvResult;   /* CUresult */
#define ACCEL_CUDA_DRIVER_ENTRY_POINTS(X) \
  X (cuCtxGetId, AccelCudaDrvResult, (void *ctx, unsigned long long *id)) \
  X (cuDevicePrimaryCtxGetState, AccelCudaDrvResult, (int dev, unsigned int *flags, int *active)) \
  X (cuStreamWriteValue32, AccelCudaDrvResult, (cudaStream_t stream, unsigned long long addr, guint32 value, unsigned int flags)) \
  X (cuStreamWaitValue32, AccelCudaDrvResult, (cudaStream_t stream, unsigned long long addr, guint32 value, unsigned int flags))

/* accel-cuda-error.c: accel_cuda_check () for a driver call's CUresult. */
gboolean accel_cuda_check_driver (AccelCudaDrvResult result, const char *what, GError **error);

typedef struct {
#define ACCEL_CUDA_DRIVER_FIELD(name, ret, args) ret (*name) args;
  ACCEL_CUDA_DRIVER_ENTRY_POINTS (ACCEL_CUDA_DRIVER_FIELD)
#undef ACCEL_CUDA_DRIVER_FIELD
  gboolean have_stream_memops;
} AccelCudaDriver;

const AccelCudaDriver *accel_cuda_driver_get (void);

/* accel-cuda-remote-device.c */
AccelDevice *accel_cuda_remote_device_new (AccelBackend *backend,
                                           const char *name,
                                           int ordinal,
                                           const struct cudaDeviceProp *prop,
                                           guint lanes,
                                           AccelCudaCompletion completion,
                                           GError **error);

/* accel-cuda-peer.c: the backend's copies between two devices of this process. */
gboolean accel_cuda_backend_can_copy_ (AccelBackend *backend, AccelBuffer *src, AccelBuffer *dst);
void accel_cuda_backend_copy_async_ (AccelBackend *backend, AccelBuffer *src, AccelBuffer *dst,
                                     GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data);
gboolean accel_cuda_backend_copy_finish_ (AccelBackend *backend, GAsyncResult *result, GError **error);

/* accel-cuda-backend.c */
AccelCudaIsolation accel_cuda_isolation_from_env (void);
AccelCudaCompletion accel_cuda_completion_from_env (void);

/* accel-cuda-trace.c */
typedef enum {
  ACCEL_CUDA_TRACE_ORDERED,
  ACCEL_CUDA_TRACE_LAUNCHED,
  ACCEL_CUDA_TRACE_RECORDED,
  ACCEL_CUDA_TRACE_PUSHED,
  ACCEL_CUDA_TRACE_SEEN_DONE,
  ACCEL_CUDA_TRACE_CLEARED,
  ACCEL_CUDA_TRACE_COMPLETED,
  ACCEL_CUDA_TRACE_N_STAGES
} AccelCudaTraceStage;

extern int accel_cuda_trace_enabled_;
gboolean accel_cuda_trace_init (void);
gint64 accel_cuda_trace_now (void);
void accel_cuda_trace_record (AccelCudaTraceStage stage, gint64 start);

/* accel-cuda-nvtx.c */
extern int accel_cuda_nvtx_enabled_;
gboolean accel_cuda_nvtx_init (void);
guint64 accel_cuda_nvtx_start (const char *what, guint lane);
void accel_cuda_nvtx_end (guint64 id);

static inline gboolean
accel_cuda_nvtx_enabled (void)
{
  int on = accel_cuda_nvtx_enabled_;
  if (G_LIKELY (on < 0))
    return FALSE;
  return on > 0 || accel_cuda_nvtx_init ();
}

static inline gboolean
accel_cuda_trace_enabled (void)
{
  int on = accel_cuda_trace_enabled_;
  if (G_LIKELY (on == 0))
    return FALSE;
  return on > 0 || accel_cuda_trace_init ();
}

G_END_DECLS
