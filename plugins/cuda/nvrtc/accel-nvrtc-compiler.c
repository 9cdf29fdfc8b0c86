/* accel-nvrtc-compiler.c: the module compiler of the CUDA backend, an
 * actor that compiles CUDA C++ with NVRTC on its own thread.
 *
 * It answers %ACCEL_MODULE_COMPILE_REQUEST_TYPE messages (see
 * accel-module.h) with an %ACCEL_MODULE_COMPILE_REPLY_TYPE: the image
 * from the disk cache when it has one for the key (nothing is compiled
 * then), else NVRTC's output, which it writes to the cache. The target is
 * a device name, compiled for that GPU's architecture (`sm_90a` on Hopper:
 * the `a` variants where NVRTC has them; PTX for the newest architecture
 * NVRTC knows when the GPU is newer than NVRTC), or an architecture name.
 * NVRTC needs no GPU, so this runs on machines without one.
 *
 * A source that does not compile is an %ACCEL_ERROR_INVALID_ARGUMENT whose
 * message starts with `name:line:column: error: …` (the column from the
 * caret NVRTC prints under the line) and carries NVRTC's whole log; the
 * actor goes on (bad input resumes an actor).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <nvrtc.h>
#include "accel-config.h"
#include "accel-nvrtc-private.h"

/**
 * AccelNvrtcCompiler:
 *
 * The module compiler of the `cuda` backend (NVRTC with a disk cache).
 */
struct _AccelNvrtcCompiler {
  AccelActor parent_instance;

  GWeakRef system;
  guint compilations;     /* atomic */
  guint cache_hits;       /* atomic */
};

G_DEFINE_FINAL_TYPE (AccelNvrtcCompiler, accel_nvrtc_compiler, ACCEL_TYPE_ACTOR)

static const char *
nvrtc_version (void)
{
  static char version[32];
  static gsize once = 0;
  if (g_once_init_enter (&once))
    {
      int major = 0, minor = 0;
      if (nvrtcVersion (&major, &minor) != NVRTC_SUCCESS)
        major = minor = 0;
      g_snprintf (version, sizeof version, "%d.%d", major, minor);
      g_once_init_leave (&once, 1);
    }
  return version;
}

static GError *
nvrtc_error (nvrtcResult status, const char *what)
{
  return g_error_new (ACCEL_ERROR,
                      status == NVRTC_ERROR_OUT_OF_MEMORY ? ACCEL_ERROR_OUT_OF_MEMORY
                      : status == NVRTC_ERROR_INVALID_OPTION || status == NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID
                      ? ACCEL_ERROR_INVALID_ARGUMENT : ACCEL_ERROR_LIBRARY,
                      "NVRTC: %s: %s", what, nvrtcGetErrorString (status));
}

/* The architecture to compile for on a GPU of compute capability
 * @major.@minor: its own, with the `a` features from Hopper on, if NVRTC
 * knows it; else PTX of the newest NVRTC knows below it, which the driver
 * compiles when it loads it. */
static char *
arch_for (int major, int minor, GError **error)
{
  int n = 0;
  if (nvrtcGetNumSupportedArchs (&n) != NVRTC_SUCCESS || n <= 0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_LIBRARY, "NVRTC lists no architectures");
      return NULL;
    }
  g_autofree int *archs = g_new (int, n);
  nvrtcGetSupportedArchs (archs);
  int want = major * 10 + minor, best = 0;
  for (int i = 0; i < n; i++)
    {
      if (archs[i] == want)
        return g_strdup_printf ("sm_%d%s", want, major >= 9 ? "a" : "");
      if (archs[i] < want && archs[i] > best)
        best = archs[i];
    }
  if (best == 0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED,
                   "NVRTC %s cannot compile for compute capability %d.%d", nvrtc_version (), major, minor);
      return NULL;
    }
  return g_strdup_printf ("compute_%d", best);
}

static gboolean
valid_arch (const char *arch)
{
  const char *digits = g_str_has_prefix (arch, "sm_") ? arch + 3
                       : g_str_has_prefix (arch, "compute_") ? arch + 8 : NULL;
  if (digits == NULL || !g_ascii_isdigit (*digits))
    return FALSE;
  while (g_ascii_isdigit (*digits))
    digits++;
  return *digits == '\0' || ((*digits == 'a' || *digits == 'f') && digits[1] == '\0');
}

/* A device name (`cuda:0`) becomes its architecture; an architecture
 * stays as it is. */
static char *
resolve_target (AccelNvrtcCompiler *self, const char *target, GError **error)
{
  if (strchr (target, ':') == NULL)
    {
      if (!valid_arch (target))
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       "“%s” is neither a device name nor an architecture (sm_90a, compute_80)", target);
          return NULL;
        }
      return g_strdup (target);
    }
  g_autoptr(AccelSystem) system = g_weak_ref_get (&self->system);
  if (system == NULL)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NO_DEVICE, "The compiler's system is gone");
      return NULL;
    }
  g_autoptr(AccelDevice) device = accel_system_get_device (system, target, error);
  if (device == NULL)
    return NULL;
  int major, minor;
  if (!accel_cuda_get_compute_capability (device, &major, &minor))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED, "“%s” is not a CUDA device", target);
      return NULL;
    }
  return arch_for (major, minor, error);
}

static gboolean
has_arch_option (const char * const *options)
{
  for (guint i = 0; options[i]; i++)
    if (g_str_has_prefix (options[i], "-arch") || g_str_has_prefix (options[i], "--gpu-architecture"))
      return TRUE;
  return FALSE;
}

/* The options NVRTC gets: the caller's, the architecture, and the
 * toolkit's headers (cuda_fp16.h and friends). */
static char **
full_options (const char * const *options, const char *arch)
{
  GPtrArray *all = g_ptr_array_new ();
  for (guint i = 0; options[i]; i++)
    g_ptr_array_add (all, g_strdup (options[i]));
  if (!has_arch_option (options))
    g_ptr_array_add (all, g_strdup_printf ("-arch=%s", arch));
  if (g_file_test (ACCEL_CUDA_INCLUDE_DIR, G_FILE_TEST_IS_DIR))
    g_ptr_array_add (all, g_strdup ("-I" ACCEL_CUDA_INCLUDE_DIR));
  g_ptr_array_add (all, NULL);
  return (char **) g_ptr_array_free (all, FALSE);
}

/* `name(LINE): error: TEXT`, then the source line and a caret under the
 * column, becomes `name:LINE:COLUMN: error: TEXT`. */
static char *
first_error (const char *log, const char *source)
{
  g_auto(GStrv) lines = g_strsplit (log, "\n", -1);
  for (guint i = 0; lines[i]; i++)
    {
      const char *open = strrchr (lines[i], '(');
      const char *close = open ? strstr (open, "): ") : NULL;
      if (close == NULL || strstr (close, "error") == NULL)
        continue;
      char *end = NULL;
      guint64 line = g_ascii_strtoull (open + 1, &end, 10);
      if (end != close || line == 0)
        continue;
      g_autofree char *file = g_strndup (lines[i], open - lines[i]);
      const char *text = close + 3;

      /* The column: the caret's place in the line NVRTC printed, less the
       * indent it put before the source line. */
      guint64 column = 0;
      if (lines[i + 1] && lines[i + 2] && strchr (lines[i + 2], '^'))
        {
          g_auto(GStrv) src = g_strsplit (source, "\n", -1);
          const char *printed = lines[i + 1];
          glong caret = strchr (lines[i + 2], '^') - lines[i + 2];
          if (line <= g_strv_length (src))
            {
              const char *orig = src[line - 1];
              gsize lp = strlen (printed), lo = strlen (orig);
              glong indent = lp >= lo && strcmp (printed + lp - lo, orig) == 0 ? (glong) (lp - lo) : 0;
              if (caret >= indent)
                column = (guint64) (caret - indent) + 1;
            }
        }
      if (column > 0)
        return g_strdup_printf ("%s:%" G_GUINT64_FORMAT ":%" G_GUINT64_FORMAT ": %s", file, line, column, text);
      return g_strdup_printf ("%s:%" G_GUINT64_FORMAT ": %s", file, line, text);
    }
  return NULL;
}

static gboolean
compile (AccelNvrtcCompiler *self,
         const char *source,
         const char *name,
         const char * const *options,
         const char * const *name_expressions,
         const char *arch,
         AccelNvrtcResult *result,
         GError **error)
{
  nvrtcProgram prog = NULL;
  nvrtcResult status = nvrtcCreateProgram (&prog, source, name, 0, NULL, NULL);
  if (status != NVRTC_SUCCESS)
    {
      g_propagate_error (error, nvrtc_error (status, "nvrtcCreateProgram"));
      return FALSE;
    }
  for (guint i = 0; name_expressions[i]; i++)
    if ((status = nvrtcAddNameExpression (prog, name_expressions[i])) != NVRTC_SUCCESS)
      {
        g_propagate_error (error, nvrtc_error (status, "nvrtcAddNameExpression"));
        nvrtcDestroyProgram (&prog);
        return FALSE;
      }

  g_auto(GStrv) opts = full_options (options, arch);
  g_atomic_int_inc (&self->compilations);
  status = nvrtcCompileProgram (prog, (int) g_strv_length (opts), (const char * const *) opts);

  size_t log_size = 0;
  g_autofree char *log = NULL;
  if (nvrtcGetProgramLogSize (prog, &log_size) == NVRTC_SUCCESS && log_size > 0)
    {
      log = g_malloc0 (log_size + 1);
      if (nvrtcGetProgramLog (prog, log) != NVRTC_SUCCESS)
        log[0] = '\0';
    }
  if (status != NVRTC_SUCCESS)
    {
      g_autofree char *where = log ? first_error (log, source) : NULL;
      if (status == NVRTC_ERROR_COMPILATION)
        g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT, "%s\nNVRTC %s could not compile “%s” for %s:\n%s",
                     where ? where : "the source does not compile", nvrtc_version (), name, arch,
                     log ? log : "(no log)");
      else
        {
          GError *e = nvrtc_error (status, "nvrtcCompileProgram");
          g_set_error (error, ACCEL_ERROR, e->code, "%s%s%s", e->message, log && *log ? "\n" : "", log ? log : "");
          g_error_free (e);
        }
      nvrtcDestroyProgram (&prog);
      return FALSE;
    }

  /* Machine code for a real architecture, PTX for a virtual one. */
  gboolean ptx = g_str_has_prefix (arch, "compute_");
  for (guint i = 0; options[i] && !ptx; i++)
    if (strstr (options[i], "compute_") != NULL)
      ptx = TRUE;
  size_t size = 0;
  status = ptx ? nvrtcGetPTXSize (prog, &size) : nvrtcGetCUBINSize (prog, &size);
  guint8 *image = NULL;
  if (status == NVRTC_SUCCESS && size > 0)
    {
      image = g_malloc (size);
      status = ptx ? nvrtcGetPTX (prog, (char *) image) : nvrtcGetCUBIN (prog, (char *) image);
    }
  if (status != NVRTC_SUCCESS || size == 0)
    {
      g_free (image);
      g_propagate_error (error, nvrtc_error (status, ptx ? "nvrtcGetPTX" : "nvrtcGetCUBIN"));
      nvrtcDestroyProgram (&prog);
      return FALSE;
    }
  result->image = g_bytes_new_take (image, size);
  result->kind = ptx ? ACCEL_MODULE_IMAGE_PTX : ACCEL_MODULE_IMAGE_CUBIN;
  result->lowered = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  for (guint i = 0; name_expressions[i]; i++)
    {
      const char *lowered = NULL;
      if (nvrtcGetLoweredName (prog, name_expressions[i], &lowered) == NVRTC_SUCCESS && lowered)
        g_hash_table_insert (result->lowered, g_strdup (name_expressions[i]), g_strdup (lowered));
    }
  result->log = g_steal_pointer (&log);
  nvrtcDestroyProgram (&prog);
  return TRUE;
}

static GVariant *
reply (const AccelNvrtcResult *result, gboolean compiled, const char *arch)
{
  return g_variant_new ("(@ayu@a{ss}sbs)", g_variant_new_from_bytes (G_VARIANT_TYPE_BYTESTRING, result->image, TRUE),
                        (guint32) result->kind, accel_nvrtc_lowered_to_variant (result->lowered),
                        result->log ? result->log : "", compiled, arch);
}

static GVariant *
accel_nvrtc_compiler_receive (AccelActor *actor, GVariant *message, GError **error)
{
  AccelNvrtcCompiler *self = ACCEL_NVRTC_COMPILER (actor);

  if (message == NULL || !g_variant_is_of_type (message, ACCEL_MODULE_COMPILE_REQUEST_TYPE))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "The NVRTC compiler takes %s messages, not %s", (const char *) ACCEL_MODULE_COMPILE_REQUEST_TYPE,
                   message ? g_variant_get_type_string (message) : "nothing");
      return NULL;
    }
  const char *source, *name, *target;
  g_autofree const char **options = NULL, **names = NULL;
  g_variant_get (message, "(&s&s^a&s^a&s&s)", &source, &name, &options, &names, &target);
  if (*name == '\0')
    name = "module.cu";

  g_autofree char *arch = resolve_target (self, target, error);
  if (arch == NULL)
    return NULL;
  g_autofree char *key = accel_nvrtc_cache_key (source, name, options, names, arch, nvrtc_version ());
  AccelNvrtcResult result = { NULL, };
  gboolean compiled = FALSE;
  if (accel_nvrtc_cache_read (key, &result))
    g_atomic_int_inc (&self->cache_hits);
  else
    {
      if (!compile (self, source, name, options, names, arch, &result, error))
        return NULL;
      accel_nvrtc_cache_write (key, &result);
      compiled = TRUE;
    }
  GVariant *answer = reply (&result, compiled, arch);
  accel_nvrtc_result_clear (&result);
  return answer;
}

static void
accel_nvrtc_compiler_finalize (GObject *object)
{
  g_weak_ref_clear (&ACCEL_NVRTC_COMPILER (object)->system);
  G_OBJECT_CLASS (accel_nvrtc_compiler_parent_class)->finalize (object);
}

static AccelSystem *
dup_system (AccelNvrtcCompiler *self)
{
  return g_weak_ref_get (&self->system);
}

static void
set_system (AccelNvrtcCompiler *self, AccelSystem *system)
{
  g_weak_ref_set (&self->system, system);
}

static guint
get_compilations (AccelNvrtcCompiler *self)
{
  return (guint) g_atomic_int_get (&self->compilations);
}

static guint
get_cache_hits (AccelNvrtcCompiler *self)
{
  return (guint) g_atomic_int_get (&self->cache_hits);
}

static const char *
get_version (AccelNvrtcCompiler *self)
{
  return nvrtc_version ();
}

static const AccelPropertyField compiler_fields[] = {
  /**
   * AccelNvrtcCompiler:system:
   *
   * The system whose devices name targets.
   */
  ACCEL_ACCESSOR_DUP_OBJECT (AccelNvrtcCompiler, dup_system, set_system, "system",
                             "The system whose devices name targets", accel_system_get_type,
                             G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS),
  /**
   * AccelNvrtcCompiler:compilations:
   *
   * How many times NVRTC compiled a program for this actor.
   */
  ACCEL_ACCESSOR_UINT (AccelNvrtcCompiler, get_compilations, NULL, "compilations", "NVRTC compilations run",
                       0, G_MAXUINT, 0, ACCEL_FIELD_READABLE),
  /**
   * AccelNvrtcCompiler:cache-hits:
   *
   * How many requests the disk cache answered.
   */
  ACCEL_ACCESSOR_UINT (AccelNvrtcCompiler, get_cache_hits, NULL, "cache-hits",
                       "Requests answered from the disk cache", 0, G_MAXUINT, 0, ACCEL_FIELD_READABLE),
  /**
   * AccelNvrtcCompiler:version:
   *
   * NVRTC's version, `major.minor`.
   */
  ACCEL_ACCESSOR_STRING (AccelNvrtcCompiler, get_version, "version", "NVRTC version", NULL, ACCEL_FIELD_READABLE),
};

static void
accel_nvrtc_compiler_class_init (AccelNvrtcCompilerClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = accel_nvrtc_compiler_finalize;
  ACCEL_ACTOR_CLASS (klass)->receive = accel_nvrtc_compiler_receive;
  accel_object_class_install_fields (object_class, compiler_fields, G_N_ELEMENTS (compiler_fields));
}

static void
accel_nvrtc_compiler_init (AccelNvrtcCompiler *self)
{
  g_weak_ref_init (&self->system, NULL);
}
