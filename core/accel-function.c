/* accel-function.c: one function of a run-time compiled module, with the
 * signature its caller declared.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-module-private.h"

/**
 * AccelFunction:
 *
 * A kernel of an #AccelModule, got with accel_module_get_function(), and
 * the signature its caller declared: the kind of each argument, in order.
 * A `launch` op (#AccelLaunch) runs it; accel_op_validate() checks the
 * arguments given to the op against the signature, and the device checks
 * the signature against the compiled kernel's parameters (their number and
 * sizes) before the first launch.
 *
 * Immutable, so usable from any thread.
 */
struct _AccelFunction {
  GObject parent_instance;

  AccelModule *module;        /* NULL in a device host: it knows the handle only */
  guint64 module_handle;
  char *name;
  char *symbol;
  AccelArgKind *kinds;
  guint n_args;
};

G_DEFINE_FINAL_TYPE (AccelFunction, accel_function, G_TYPE_OBJECT)

static const struct {
  const char *name;
  AccelArgKind kind;
} kind_names[] = {
  { "buffer", ACCEL_ARG_BUFFER }, { "ptr", ACCEL_ARG_BUFFER },
  { "int32", ACCEL_ARG_INT32 }, { "i32", ACCEL_ARG_INT32 }, { "int", ACCEL_ARG_INT32 },
  { "int64", ACCEL_ARG_INT64 }, { "i64", ACCEL_ARG_INT64 },
  { "float32", ACCEL_ARG_FLOAT32 }, { "f32", ACCEL_ARG_FLOAT32 }, { "float", ACCEL_ARG_FLOAT32 },
  { "float64", ACCEL_ARG_FLOAT64 }, { "f64", ACCEL_ARG_FLOAT64 }, { "double", ACCEL_ARG_FLOAT64 },
};

/**
 * accel_arg_kind_get_name:
 * @kind: an argument kind
 *
 * Its name in signatures (`buffer`, `int32`, `int64`, `float32`, `float64`),
 * or %NULL for a value that is no kind.
 *
 * Returns: its name in signatures (`buffer`, `int32`, `int64`, `float32`,
 *   `float64`), or %NULL for a value that is no kind
 */
const char *
accel_arg_kind_get_name (AccelArgKind kind)
{
  switch (kind)
    {
    case ACCEL_ARG_BUFFER: return "buffer";
    case ACCEL_ARG_INT32: return "int32";
    case ACCEL_ARG_INT64: return "int64";
    case ACCEL_ARG_FLOAT32: return "float32";
    case ACCEL_ARG_FLOAT64: return "float64";
    default: return NULL;
    }
}

/* A signature is a comma-separated list of kinds; spaces around the
 * commas are ignored, and "" declares no arguments. */
GArray *
_accel_function_parse_signature (const char *signature, GError **error)
{
  g_autoptr(GArray) kinds = g_array_new (FALSE, FALSE, sizeof (AccelArgKind));
  g_auto(GStrv) parts = g_strsplit (signature, ",", -1);
  gboolean empty = TRUE;

  for (guint i = 0; parts[i]; i++)
    if (*g_strstrip (parts[i]) != '\0')
      empty = FALSE;
  if (empty)
    return g_steal_pointer (&kinds);

  for (guint i = 0; parts[i]; i++)
    {
      const char *word = parts[i];
      gboolean found = FALSE;
      for (guint k = 0; k < G_N_ELEMENTS (kind_names) && !found; k++)
        if (g_ascii_strcasecmp (word, kind_names[k].name) == 0)
          {
            g_array_append_val (kinds, kind_names[k].kind);
            found = TRUE;
          }
      if (!found)
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       "Argument %u of the signature “%s” is “%s”, which is no argument kind "
                       "(buffer, int32, int64, float32 or float64)", i, signature, word);
          return NULL;
        }
      if (kinds->len > ACCEL_FUNCTION_MAX_ARGS)
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       "The signature “%s” declares more than %d arguments", signature,
                       ACCEL_FUNCTION_MAX_ARGS);
          return NULL;
        }
    }
  return g_steal_pointer (&kinds);
}

AccelFunction *
_accel_function_new (AccelModule *module,
                     guint64 module_handle,
                     const char *name,
                     const char *symbol,
                     const AccelArgKind *kinds,
                     guint n_args)
{
  AccelFunction *self = g_object_new (ACCEL_TYPE_FUNCTION, NULL);
  self->module = module ? g_object_ref (module) : NULL;
  self->module_handle = module_handle;
  self->name = g_strdup (name);
  self->symbol = g_strdup (symbol);
  self->kinds = g_memdup2 (kinds, n_args * sizeof (AccelArgKind));
  self->n_args = n_args;
  return self;
}

gboolean
_accel_function_matches (AccelFunction *self, const char *symbol, const AccelArgKind *kinds, guint n_args)
{
  return self->n_args == n_args && strcmp (self->symbol, symbol) == 0
         && (n_args == 0 || memcmp (self->kinds, kinds, n_args * sizeof (AccelArgKind)) == 0);
}

static void
accel_function_finalize (GObject *object)
{
  AccelFunction *self = ACCEL_FUNCTION (object);

  g_clear_object (&self->module);
  g_free (self->name);
  g_free (self->symbol);
  g_free (self->kinds);
  G_OBJECT_CLASS (accel_function_parent_class)->finalize (object);
}

static void
accel_function_class_init (AccelFunctionClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = accel_function_finalize;
}

static void
accel_function_init (AccelFunction *self)
{
}

/**
 * accel_function_get_module:
 * @self: a function
 *
 * Its module; %NULL in a device host process, which knows the module by its
 * handle only.
 *
 * Returns: (transfer none) (nullable): its module; %NULL in a device host
 *   process, which knows the module by its handle only
 */
AccelModule *
accel_function_get_module (AccelFunction *self)
{
  g_return_val_if_fail (ACCEL_IS_FUNCTION (self), NULL);
  return self->module;
}

/**
 * accel_function_get_module_handle:
 * @self: a function
 *
 * The handle of its module (accel_module_get_handle()).
 *
 * Returns: the handle of its module (accel_module_get_handle())
 */
guint64
accel_function_get_module_handle (AccelFunction *self)
{
  g_return_val_if_fail (ACCEL_IS_FUNCTION (self), 0);
  return self->module_handle;
}

/**
 * accel_function_get_name:
 * @self: a function
 *
 * The name it was asked for by (a kernel name or a name expression such as
 * `scale<float>`).
 *
 * Returns: the name it was asked for by (a kernel name or a name
 *   expression such as `scale<float>`)
 */
const char *
accel_function_get_name (AccelFunction *self)
{
  g_return_val_if_fail (ACCEL_IS_FUNCTION (self), NULL);
  return self->name;
}

/**
 * accel_function_get_symbol:
 * @self: a function
 *
 * The symbol the kernel has in the module's image (the lowered, mangled name
 * of a name expression; else the name).
 *
 * Returns: the symbol the kernel has in the module's image (the lowered,
 *   mangled name of a name expression; else the name)
 */
const char *
accel_function_get_symbol (AccelFunction *self)
{
  g_return_val_if_fail (ACCEL_IS_FUNCTION (self), NULL);
  return self->symbol;
}

/**
 * accel_function_get_n_args:
 * @self: a function
 *
 * How many arguments its signature declares.
 *
 * Returns: how many arguments its signature declares
 */
guint
accel_function_get_n_args (AccelFunction *self)
{
  g_return_val_if_fail (ACCEL_IS_FUNCTION (self), 0);
  return self->n_args;
}

/**
 * accel_function_get_arg_kind:
 * @self: a function
 * @index: an argument index, below accel_function_get_n_args()
 *
 * The declared kind of argument @index.
 *
 * Returns: the declared kind of argument @index
 */
AccelArgKind
accel_function_get_arg_kind (AccelFunction *self, guint index)
{
  g_return_val_if_fail (ACCEL_IS_FUNCTION (self), ACCEL_ARG_BUFFER);
  g_return_val_if_fail (index < self->n_args, ACCEL_ARG_BUFFER);
  return self->kinds[index];
}

/**
 * accel_function_get_signature:
 * @self: a function
 *
 * Its signature in normal form, such as `buffer, buffer, float32, int32`.
 *
 * Returns: (transfer full): its signature in normal form, such as
 *   `buffer, buffer, float32, int32`
 */
char *
accel_function_get_signature (AccelFunction *self)
{
  g_return_val_if_fail (ACCEL_IS_FUNCTION (self), NULL);
  GString *s = g_string_new (NULL);
  for (guint i = 0; i < self->n_args; i++)
    g_string_append_printf (s, "%s%s", i ? ", " : "", accel_arg_kind_get_name (self->kinds[i]));
  return g_string_free (s, FALSE);
}
