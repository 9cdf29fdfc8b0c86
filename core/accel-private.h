/* accel-private.h: what the files of libaccel share and users must not see.
 * Not installed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "accel.h"

/* The highest lane an op, a graph or a communicator may ask for (their
 * `lane` properties' range is -1 .. this). */
#define ACCEL_LANE_MAX 1024

G_BEGIN_DECLS

/* Kernels: the registry owns them; they live as long as the process. */
struct _AccelKernel {
  char *op_type;
  char *backend;
  guint rank;
  char *plugin_name;
  AccelKernelVTable vtable;
  gboolean has_vtable;   /* FALSE while known only from the cache; atomic */
  AccelPlugin *plugin;   /* unowned: the plugin owns its kernels */
};

/* accel-kernel.c */
AccelKernel *_accel_kernel_new (AccelPlugin *plugin,
                                const char *op_type,
                                const char *backend,
                                guint rank,
                                const AccelKernelVTable *vtable);
void _accel_kernel_set_vtable (AccelKernel *kernel, guint rank, const AccelKernelVTable *vtable);
void _accel_kernel_free (AccelKernel *kernel);

/* ops/accel-ops.c: registers the portable op set with a registry. */
void _accel_ops_register_core (AccelRegistry *registry);
/* Makes the core op classes, so that their names are known. */
void _accel_ops_ensure_core (void);

/* accel-op.c: the registries that can load a plugin's op type by name;
 * each registry adds itself while it lives (held weakly). */
void _accel_op_add_type_source (AccelRegistry *registry);
void _accel_op_remove_type_source (AccelRegistry *registry);

/* accel-registry.c */
void _accel_registry_register_core_op_type (AccelRegistry *self, GType op_type);
GType _accel_op_type_from_name (const char *name);   /* already-registered types only */

/* accel-plugin.c: the registration calls a plugin makes while it is being
 * initialised land in its AccelPlugin; the registry then reads them. */
ACCEL_API
AccelPlugin *_accel_plugin_new (const char *filename);
void _accel_plugin_set_loaded_from_desc (AccelPlugin *self, const AccelPluginDesc *desc);

/* What a plugin provides, by name; type is 0 while it is known only from
 * the cache. Read and written under _accel_plugin_lock(). */
typedef struct {
  char *name;
  GType type;
} AccelPluginFeature;

typedef enum {
  ACCEL_PLUGIN_FEATURE_BACKEND,
  ACCEL_PLUGIN_FEATURE_OP_TYPE,
  ACCEL_PLUGIN_FEATURE_ACTOR_TYPE,
  ACCEL_PLUGIN_FEATURE_MODEL_TYPE,
  ACCEL_PLUGIN_N_FEATURE_KINDS
} AccelPluginFeatureKind;

/* One process-wide recursive lock serialises plugin loading and guards what
 * plugins record; lock order: it, then a registry's table lock. */
void _accel_plugin_lock (void);
void _accel_plugin_unlock (void);
GPtrArray *_accel_plugin_peek_features (AccelPlugin *self, AccelPluginFeatureKind kind);
GPtrArray *_accel_plugin_peek_kernels (AccelPlugin *self);
void _accel_plugin_set_registry (AccelPlugin *self, AccelRegistry *registry);
void _accel_plugin_set_status (AccelPlugin *self, AccelPluginStatus status, const char *reason);
/* Metadata: what the scanner reports and the cache keeps. */
#define ACCEL_PLUGIN_METADATA_TYPE "(ssssasasa(ssu)asasasas)"
ACCEL_API
GVariant *_accel_plugin_to_metadata (AccelPlugin *self);
AccelPlugin *_accel_plugin_new_from_metadata (const char *filename, GVariant *metadata, GError **error);
char *_accel_plugin_dependency_stamp (AccelPlugin *self);
char *_accel_plugin_name_from_filename (const char *filename);

/* accel-plugin-scanner: its answer on stdout, a serialized GVariant of
 * ACCEL_SCAN_RESULT_TYPE: magic, reason ("" on success), metadata if the
 * plugin got as far as naming itself. It exits 0 on success and
 * ACCEL_SCAN_EXIT_REFUSED when the plugin was refused (not 1, which is what
 * sanitizers and many crash handlers exit with). */
#define ACCEL_SCAN_MAGIC "accel-plugin-scan-1"
#define ACCEL_SCAN_EXIT_REFUSED 3
#define ACCEL_SCAN_RESULT_TYPE "(ssm" ACCEL_PLUGIN_METADATA_TYPE ")"

/* accel-registry.c: told by accel_plugin_load() once a plugin registered. */
void _accel_registry_plugin_loaded (AccelRegistry *self, AccelPlugin *plugin);

/* accel-registry-search.c: every `*.so` file on ACCEL_PLUGIN_PATH, then
 * ACCEL_PLUGIN_SYSTEM_PATH; and the duplicate rule and allow/deny policy
 * applied to a registry's plugins (statuses set in place). */
GPtrArray *_accel_registry_list_plugin_files (void);
void _accel_registry_apply_policy (GPtrArray *plugins);

/* accel-registry-cache.c: the metadata cache file. */
typedef struct {
  char *path;
  guint64 size;
  gint64 mtime;            /* µs */
  AccelPluginStatus status;   /* OK or BLACKLISTED */
  char *reason;            /* NULL when OK */
  GVariant *metadata;      /* ACCEL_PLUGIN_METADATA_TYPE; NULL when nothing is known */
  char *dep_stamp;
} AccelRegistryCacheEntry;

void _accel_registry_cache_entry_free (AccelRegistryCacheEntry *entry);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (AccelRegistryCacheEntry, _accel_registry_cache_entry_free)
GHashTable *_accel_registry_cache_read (const char *path);
GHashTable *_accel_registry_cache_parse (GBytes *bytes, const char *where);
gboolean _accel_registry_cache_write (const char *path, GPtrArray *entries, GError **error);
AccelPlugin *_accel_registry_cache_entry_to_plugin (AccelRegistryCacheEntry *entry, GError **error);
AccelPlugin *_accel_registry_cache_find_or_scan (GHashTable *cache,
                                                const char *path,
                                                AccelRegistryCacheEntry **entry_out,
                                                gboolean *scanned);

/* accel-shape.c */
gboolean _accel_layout_span_bytes (const gint64 *dims, const gint64 *strides, guint rank, gsize esize,
                                   guint64 *bytes);

/* accel-buffer.c */
AccelBuffer *_accel_buffer_new (AccelDevice *device,
                                AccelDType dtype,
                                const AccelShape *shape,
                                gpointer memory,
                                gsize size,
                                guint generation,
                                guint64 handle);
gboolean _accel_buffer_offer_backend_data (AccelBuffer *self, gpointer data, GDestroyNotify destroy);
/* A buffer over memory that is not the device's: @owner_free (@owner)
 * releases it when the buffer goes, in place of the device (a DLPack
 * import). @size is the bytes the shape spans. */
AccelBuffer *_accel_buffer_new_external (AccelDevice *device,
                                         AccelDType dtype,
                                         const AccelShape *shape,
                                         gpointer memory,
                                         gsize size,
                                         GDestroyNotify owner_free,
                                         gpointer owner);
/* Makes the memory under @self outlive its device's context, because it is
 * lent to another library (accel_buffer_to_dlpack()); done once per base
 * buffer. %ACCEL_ERROR_STALE_BUFFER when the memory went with an older
 * context, %ACCEL_ERROR_NOT_SUPPORTED when the backend cannot. */
gboolean _accel_buffer_detach_memory (AccelBuffer *self, GError **error);
/* A buffer over @self's memory at @byte_offset (relative to @self), with its
 * own dtype and possibly strided shape; it keeps the base buffer alive and
 * accel_buffer_get_base() returns that base. %NULL with
 * ACCEL_ERROR_SHAPE_MISMATCH if it does not fit. Exported for
 * `accel-device-host`, which makes the views an op's buffer table asks for. */
ACCEL_API
AccelBuffer *_accel_buffer_new_alias (AccelBuffer *self,
                                      guint64 byte_offset,
                                      AccelDType dtype,
                                      const AccelShape *shape,
                                      GError **error);

gboolean _accel_buffer_may_overlap (AccelBuffer *self);

/* accel-device.c, accel-device-submit.c */
void _accel_device_shutdown (AccelDevice *self);
gboolean _accel_device_check_buffer (AccelDevice *self,
                                     AccelBuffer *buffer,
                                     const char *what,
                                     GError **error);
void _accel_device_release_memory (AccelDevice *self,
                                   gpointer memory,
                                   gsize size,
                                   guint generation);
guint64 _accel_device_next_handle (AccelDevice *self);
/* Hands @memory of @generation to the backend's detach_memory, under the
 * context lock; %FALSE if that context is gone or the backend refused. */
gboolean _accel_device_detach_memory (AccelDevice *self,
                                      gpointer memory,
                                      gsize size,
                                      guint generation);

/* accel-work.c: how long a waiting thread (a dispatcher, a blocking
 * caller) spins before it parks ($ACCEL_DISPATCHER_SPIN_US, 50 µs). */
gint64 _accel_spin_us (void);
/* accel-work.c: fewer than 4 cores, where spinning threads starve the ones they wait for. */
ACCEL_API gboolean _accel_have_few_cores (void);

/* actor/accel-dispatcher.c */
gboolean _accel_dispatcher_is_idle (AccelDispatcher *self);
/* A second source of work for a dispatcher's thread (accel-device-host's
 * channel): @poll serves what is there without waiting and says whether it
 * did anything; @park waits until there may be something, @wake is called
 * (from any thread) or @timeout_us passes; @wake ends a park. */
typedef struct {
  gboolean (*poll) (gpointer data);
  void (*park) (gpointer data, gint64 timeout_us);
  void (*wake) (gpointer data);
} AccelDispatcherPoller;
ACCEL_API
void _accel_dispatcher_set_poller (AccelDispatcher *self, const AccelDispatcherPoller *poller, gpointer data);

/* actor/accel-actor.c */
void _accel_actor_set_dispatcher (AccelActor *self, AccelDispatcher *dispatcher);
void _accel_actor_count_restart (AccelActor *self, const GError *reason);
/* Marks @self as the root of @system's supervision tree. */
void _accel_actor_set_system (AccelActor *self, AccelSystem *system);

/* accel-backend.c */
void _accel_backend_setup (AccelBackend *self, AccelSystem *system, const char *name);
AccelRegistry *_accel_backend_get_registry (AccelBackend *self);

/* accel-op.c */
GParamSpec **_accel_op_class_list_buffer_pspecs (AccelOpClass *klass, guint *n);
gboolean _accel_op_check_results_alias (AccelOp *self, GError **error);

/* accel-op-check.c */
/* The buffers of @first and the properties after it (NULL-terminated)
 * share one dtype, one of @allowed: accel_op_check_dtype () on @first,
 * then accel_op_check_same_dtype () of @first and each other, in order. */
gboolean _accel_op_check_dtypes (AccelOp *self,
                                 const AccelDType *allowed,
                                 guint n_allowed,
                                 GError **error,
                                 const char *first,
                                 ...) G_GNUC_NULL_TERMINATED;
/* Whether two buffers' storage overlaps. */
gboolean _accel_buffers_alias (AccelBuffer *a, AccelBuffer *b);
ACCEL_API
void _accel_op_foreach_buffer (AccelOp *self,
                               void (*func) (AccelOp *, GParamSpec *, AccelBuffer *, AccelAccess, gpointer),
                               gpointer data);

/* In a spin-wait: lets the other hardware thread of the core run, and
 * keeps the waiting core from hammering the cache line it watches. */
static inline void
_accel_cpu_relax (void)
{
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause ();
#elif defined(__aarch64__)
  __asm__ __volatile__ ("yield");
#endif
}

/* accel-op.c: how many times the op's properties have changed (notify):
 * what a cache of anything made from them compares. */
guint _accel_op_get_changes (AccelOp *self);
/* A number no other op object of this process has had: tells an op from
 * one made later at the same address. */
guint64 _accel_op_get_serial (AccelOp *self);
/* The last successful validation of the op and choice of its kernel
 * (NULL where it runs elsewhere), for a device (its serial) and the
 * registry's kernels (their serial), at a count of changes: a submit of
 * the op unchanged skips both. */
gboolean _accel_op_ready_lookup (AccelOp *self, guint64 device, guint kernels, guint changes,
                                 gconstpointer *kernel);
void _accel_op_ready_store (AccelOp *self, guint64 device, guint kernels, guint changes, gconstpointer kernel);
/* The body the op was last sent with over a connection (its serial), at a
 * count of changes: a new reference, or NULL. */
GVariant *_accel_op_kept_body_get (AccelOp *self, guint64 connection, guint changes);
void _accel_op_kept_body_set (AccelOp *self, guint64 connection, guint changes, GVariant *body);
/* accel-registry.c: changes whenever the registry's kernels do. */
guint _accel_registry_get_kernels_serial (AccelRegistry *self);

/* accel-stage-trace.c: with ACCEL_REMOTE_TRACE=1, the medians of the
 * stages of remote ops on stderr. Stage names are string literals. */
ACCEL_API int _accel_stage_trace_enabled_;
ACCEL_API gboolean _accel_stage_trace_init (void);
ACCEL_API gint64 _accel_stage_trace_now (void);
ACCEL_API void _accel_stage_trace_add (const char *stage, gint64 ns);

static inline gboolean
_accel_stage_trace_on (void)
{
  int on = g_atomic_int_get (&_accel_stage_trace_enabled_);
  return G_LIKELY (on == 0) ? FALSE : on > 0 ? TRUE : _accel_stage_trace_init ();
}

G_END_DECLS
