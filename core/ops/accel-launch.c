/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-impl-private.h"
#include "../accel-module-private.h"

/**
 * AccelLaunch:
 *
 * Runs a kernel of a run-time compiled module (#AccelModule) over a grid
 * of blocks, as `cuLaunchKernel` does, with the arguments added in order
 * with accel_launch_add_buffer(), accel_launch_add_int32() and friends.
 * Each buffer argument carries how the kernel uses it (read, write or
 * both), so the device orders the launch after the last writers of what
 * it reads and checks buffer generations as for any op.
 *
 * accel_op_validate() checks the number and kinds of the arguments
 * against the function's declared signature; the device then checks the
 * signature against the compiled kernel (number and sizes of its
 * parameters), the block against what the kernel can run, and the shared
 * memory against the device, before it launches anything. A kernel that
 * faults (an illegal address) fails with %ACCEL_ERROR_CONTEXT_POISONED and
 * the device rebuilds its context, as for any op.
 *
 * Op name: `launch`.
 */

static void accel_launch_dispose (GObject *object);
static void accel_launch_finalize (GObject *object);

static guint
count_args (AccelLaunch *self)
{
  return self->args ? self->args->len : 0;
}

static gboolean
accel_launch_validate (AccelOp *op, GError **error)
{
  AccelLaunch *self = ACCEL_LAUNCH (op);
  AccelFunction *fn = self->function;
  guint64 threads = (guint64) self->block_x * self->block_y * self->block_z;

  if (threads > 1024)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "launch: a block of %u×%u×%u is %" G_GUINT64_FORMAT " threads; a block has at most 1024",
                   self->block_x, self->block_y, self->block_z, threads);
      return FALSE;
    }
  guint n = accel_function_get_n_args (fn);
  if (count_args (self) != n)
    {
      g_autofree char *sig = accel_function_get_signature (fn);
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "launch: “%s” takes %u argument%s (%s); the op has %u", accel_function_get_name (fn),
                   n, n == 1 ? "" : "s", sig, count_args (self));
      return FALSE;
    }
  for (guint i = 0; i < n; i++)
    {
      const AccelLaunchArg *arg = &g_array_index (self->args, AccelLaunchArg, i);
      AccelArgKind want = accel_function_get_arg_kind (fn, i);
      if (arg->kind != want)
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       "launch: argument %u of “%s” is declared %s, but the op gives %s", i,
                       accel_function_get_name (fn), accel_arg_kind_get_name (want),
                       accel_arg_kind_get_name (arg->kind));
          return FALSE;
        }
    }
  return TRUE;
}

static guint
accel_launch_get_n_extra_buffers (AccelOp *op)
{
  return ACCEL_LAUNCH (op)->n_buffers;
}

static AccelBuffer *
accel_launch_peek_extra_buffer (AccelOp *op, guint index, AccelAccess *access)
{
  AccelLaunch *self = ACCEL_LAUNCH (op);
  const AccelLaunchArg *arg = &g_array_index (self->args, AccelLaunchArg, self->buffer_args[index]);
  *access = arg->access;
  return arg->value.buffer;
}

/* `(tssaua(uv))`: the module's handle, the function's name and symbol,
 * its declared kinds, and the arguments as (kind, value), a buffer's value
 * being `(ut)`: its access and handle. */
#define EXTRA_TYPE "(tssaua(uv))"

static GVariant *
accel_launch_serialize_extra (AccelOp *op)
{
  AccelLaunch *self = ACCEL_LAUNCH (op);
  AccelFunction *fn = self->function;

  if (fn == NULL && count_args (self) == 0)
    return NULL;
  GVariantBuilder kinds, args;
  g_variant_builder_init (&kinds, G_VARIANT_TYPE ("au"));
  for (guint i = 0; fn && i < accel_function_get_n_args (fn); i++)
    g_variant_builder_add (&kinds, "u", (guint32) accel_function_get_arg_kind (fn, i));
  g_variant_builder_init (&args, G_VARIANT_TYPE ("a(uv)"));
  for (guint i = 0; i < count_args (self); i++)
    {
      const AccelLaunchArg *arg = &g_array_index (self->args, AccelLaunchArg, i);
      GVariant *v = NULL;
      switch (arg->kind)
        {
        case ACCEL_ARG_BUFFER:
          v = g_variant_new ("(ut)", (guint32) arg->access, accel_buffer_get_handle (arg->value.buffer));
          break;
        case ACCEL_ARG_INT32: v = g_variant_new_int32 (arg->value.i32); break;
        case ACCEL_ARG_INT64: v = g_variant_new_int64 (arg->value.i64); break;
        case ACCEL_ARG_FLOAT32: v = g_variant_new_double (arg->value.f32); break;
        case ACCEL_ARG_FLOAT64: v = g_variant_new_double (arg->value.f64); break;
        }
      g_variant_builder_add (&args, "(uv)", (guint32) arg->kind, v);
    }
  return g_variant_new (EXTRA_TYPE, fn ? accel_function_get_module_handle (fn) : 0,
                        fn ? accel_function_get_name (fn) : "", fn ? accel_function_get_symbol (fn) : "",
                        &kinds, &args);
}

static gboolean
bad_extra (GError **error, const char *what)
{
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT, "launch: serialised %s", what);
  return FALSE;
}

static gboolean
accel_launch_deserialize_extra (AccelOp *op, GVariant *extra, AccelBufferResolveFunc resolve,
                                gpointer user_data, GError **error)
{
  AccelLaunch *self = ACCEL_LAUNCH (op);

  if (!g_variant_is_of_type (extra, G_VARIANT_TYPE (EXTRA_TYPE)))
    return bad_extra (error, "state of the wrong type");
  guint64 module;
  const char *name, *symbol;
  g_autoptr(GVariant) kinds_v = NULL;
  g_autoptr(GVariantIter) args = NULL;
  g_variant_get (extra, "(t&s&s@aua(uv))", &module, &name, &symbol, &kinds_v, &args);

  gsize n_kinds;
  const guint32 *kinds = g_variant_get_fixed_array (kinds_v, &n_kinds, sizeof (guint32));
  if (n_kinds > ACCEL_FUNCTION_MAX_ARGS || g_variant_iter_n_children (args) > ACCEL_FUNCTION_MAX_ARGS)
    return bad_extra (error, "arguments: too many");
  AccelArgKind decl[ACCEL_FUNCTION_MAX_ARGS];
  for (gsize i = 0; i < n_kinds; i++)
    {
      if (kinds[i] > ACCEL_ARG_FLOAT64)
        return bad_extra (error, "signature: unknown kind");
      decl[i] = kinds[i];
    }
  accel_launch_clear_args (self);
  if (*symbol != '\0')
    {
      g_clear_object (&self->function);
      self->function = _accel_module_function_for_handle (module, name, symbol, decl, n_kinds);
    }

  guint32 kind;
  GVariant *next;
  while (g_variant_iter_next (args, "(uv)", &kind, &next))
    {
      g_autoptr(GVariant) value = next;
      switch (kind)
        {
        case ACCEL_ARG_BUFFER:
          {
            guint32 access;
            guint64 handle;
            if (!g_variant_is_of_type (value, G_VARIANT_TYPE ("(ut)")))
              return bad_extra (error, "buffer argument of the wrong type");
            g_variant_get (value, "(ut)", &access, &handle);
            if (access == 0 || (access & ~(guint32) ACCEL_ACCESS_READ_WRITE) != 0)
              return bad_extra (error, "buffer argument with an unknown access");
            g_autoptr(AccelBuffer) b = resolve ? resolve (handle, user_data) : NULL;
            if (b == NULL)
              {
                g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_STALE_BUFFER,
                             "launch: an argument names buffer handle %" G_GUINT64_FORMAT ", which is not known here",
                             handle);
                return FALSE;
              }
            accel_launch_add_buffer (self, b, access);
          }
          break;
        case ACCEL_ARG_INT32:
          if (!g_variant_is_of_type (value, G_VARIANT_TYPE_INT32))
            return bad_extra (error, "int32 argument of the wrong type");
          accel_launch_add_int32 (self, g_variant_get_int32 (value));
          break;
        case ACCEL_ARG_INT64:
          if (!g_variant_is_of_type (value, G_VARIANT_TYPE_INT64))
            return bad_extra (error, "int64 argument of the wrong type");
          accel_launch_add_int64 (self, g_variant_get_int64 (value));
          break;
        case ACCEL_ARG_FLOAT32:
        case ACCEL_ARG_FLOAT64:
          if (!g_variant_is_of_type (value, G_VARIANT_TYPE_DOUBLE))
            return bad_extra (error, "float argument of the wrong type");
          if (kind == ACCEL_ARG_FLOAT32)
            accel_launch_add_float32 (self, (float) g_variant_get_double (value));
          else
            accel_launch_add_float64 (self, g_variant_get_double (value));
          break;
        default:
          return bad_extra (error, "argument of an unknown kind");
        }
    }
  return TRUE;
}

ACCEL_DEFINE_OP_TYPE_WITH_CODE (AccelLaunch, accel_launch, "launch",
                                "Runs a kernel of a run-time compiled module over a grid of blocks",
                                _accel_launch_params, accel_launch_validate,
                                {
                                  G_OBJECT_CLASS (klass)->dispose = accel_launch_dispose;
                                  G_OBJECT_CLASS (klass)->finalize = accel_launch_finalize;
                                  op_class->get_n_extra_buffers = accel_launch_get_n_extra_buffers;
                                  op_class->peek_extra_buffer = accel_launch_peek_extra_buffer;
                                  op_class->serialize_extra = accel_launch_serialize_extra;
                                  op_class->deserialize_extra = accel_launch_deserialize_extra;
                                })

static void
accel_launch_dispose (GObject *object)
{
  accel_launch_clear_args (ACCEL_LAUNCH (object));
  G_OBJECT_CLASS (accel_launch_parent_class)->dispose (object);
}

static void
accel_launch_finalize (GObject *object)
{
  g_clear_pointer (&ACCEL_LAUNCH (object)->args, g_array_unref);
  G_OBJECT_CLASS (accel_launch_parent_class)->finalize (object);
}


/**
 * accel_launch_set_grid:
 * @self: a launch
 * @x: blocks along x
 * @y: blocks along y
 * @z: blocks along z
 *
 * Sets the grid (#AccelLaunch:grid-x, #AccelLaunch:grid-y, #AccelLaunch:grid-z).
 */
void
accel_launch_set_grid (AccelLaunch *self, guint x, guint y, guint z)
{
  g_return_if_fail (ACCEL_IS_LAUNCH (self));
  g_object_set (self, "grid-x", x, "grid-y", y, "grid-z", z, NULL);
}

/**
 * accel_launch_set_block:
 * @self: a launch
 * @x: threads along x
 * @y: threads along y
 * @z: threads along z
 *
 * Sets the block (#AccelLaunch:block-x, #AccelLaunch:block-y, #AccelLaunch:block-z).
 */
void
accel_launch_set_block (AccelLaunch *self, guint x, guint y, guint z)
{
  g_return_if_fail (ACCEL_IS_LAUNCH (self));
  g_object_set (self, "block-x", x, "block-y", y, "block-z", z, NULL);
}

static AccelLaunchArg *
add_arg (AccelLaunch *self, AccelArgKind kind)
{
  g_return_val_if_fail (count_args (self) < ACCEL_FUNCTION_MAX_ARGS, NULL);
  if (self->args == NULL)
    self->args = g_array_new (FALSE, TRUE, sizeof (AccelLaunchArg));
  AccelLaunchArg arg = { kind, 0, { NULL } };
  g_array_append_val (self->args, arg);
  return &g_array_index (self->args, AccelLaunchArg, self->args->len - 1);
}

/**
 * accel_launch_add_buffer:
 * @self: a launch
 * @buffer: the buffer whose device address the kernel gets
 * @access: how the kernel uses it
 *
 * Adds a buffer argument (a pointer parameter of the kernel).
 */
void
accel_launch_add_buffer (AccelLaunch *self, AccelBuffer *buffer, AccelAccess access)
{
  g_return_if_fail (ACCEL_IS_LAUNCH (self));
  g_return_if_fail (ACCEL_IS_BUFFER (buffer));
  g_return_if_fail (access != 0 && (access & ~ACCEL_ACCESS_READ_WRITE) == 0);
  AccelLaunchArg *arg = add_arg (self, ACCEL_ARG_BUFFER);
  if (arg == NULL)
    return;
  arg->access = access;
  arg->value.buffer = g_object_ref (buffer);
  self->buffer_args[self->n_buffers++] = (guint8) (self->args->len - 1);
}

/**
 * accel_launch_add_int32:
 * @self: a launch
 * @value: the value
 *
 * Adds a 32-bit integer argument.
 */
void
accel_launch_add_int32 (AccelLaunch *self, gint32 value)
{
  g_return_if_fail (ACCEL_IS_LAUNCH (self));
  AccelLaunchArg *arg = add_arg (self, ACCEL_ARG_INT32);
  if (arg)
    arg->value.i32 = value;
}

/**
 * accel_launch_add_int64:
 * @self: a launch
 * @value: the value
 *
 * Adds a 64-bit integer argument.
 */
void
accel_launch_add_int64 (AccelLaunch *self, gint64 value)
{
  g_return_if_fail (ACCEL_IS_LAUNCH (self));
  AccelLaunchArg *arg = add_arg (self, ACCEL_ARG_INT64);
  if (arg)
    arg->value.i64 = value;
}

/**
 * accel_launch_add_float32:
 * @self: a launch
 * @value: the value
 *
 * Adds a `float` argument.
 */
void
accel_launch_add_float32 (AccelLaunch *self, float value)
{
  g_return_if_fail (ACCEL_IS_LAUNCH (self));
  AccelLaunchArg *arg = add_arg (self, ACCEL_ARG_FLOAT32);
  if (arg)
    arg->value.f32 = value;
}

/**
 * accel_launch_add_float64:
 * @self: a launch
 * @value: the value
 *
 * Adds a `double` argument.
 */
void
accel_launch_add_float64 (AccelLaunch *self, double value)
{
  g_return_if_fail (ACCEL_IS_LAUNCH (self));
  AccelLaunchArg *arg = add_arg (self, ACCEL_ARG_FLOAT64);
  if (arg)
    arg->value.f64 = value;
}

/**
 * accel_launch_clear_args:
 * @self: a launch
 *
 * Removes every argument.
 */
void
accel_launch_clear_args (AccelLaunch *self)
{
  g_return_if_fail (ACCEL_IS_LAUNCH (self));
  for (guint i = 0; i < count_args (self); i++)
    {
      AccelLaunchArg *arg = &g_array_index (self->args, AccelLaunchArg, i);
      if (arg->kind == ACCEL_ARG_BUFFER)
        g_clear_object (&arg->value.buffer);
    }
  if (self->args)
    g_array_set_size (self->args, 0);
  self->n_buffers = 0;
}

/**
 * accel_launch_get_n_args:
 * @self: a launch
 *
 * How many arguments were added.
 *
 * Returns: how many arguments were added
 */
guint
accel_launch_get_n_args (AccelLaunch *self)
{
  g_return_val_if_fail (ACCEL_IS_LAUNCH (self), 0);
  return count_args (self);
}

/**
 * accel_launch_get_arg_kind:
 * @self: a launch
 * @index: an argument index
 *
 * The kind of argument @index.
 *
 * Returns: the kind of argument @index
 */
AccelArgKind
accel_launch_get_arg_kind (AccelLaunch *self, guint index)
{
  g_return_val_if_fail (ACCEL_IS_LAUNCH (self), ACCEL_ARG_BUFFER);
  g_return_val_if_fail (index < count_args (self), ACCEL_ARG_BUFFER);
  return g_array_index (self->args, AccelLaunchArg, index).kind;
}

/**
 * accel_launch_peek_args: (skip)
 * @self: a launch
 * @n_args: (out): how many
 *
 * For kernels: the arguments, in order.
 *
 * Returns: (array length=n_args) (transfer none): the arguments
 */
const AccelLaunchArg *
accel_launch_peek_args (AccelLaunch *self, guint *n_args)
{
  g_return_val_if_fail (ACCEL_IS_LAUNCH (self), NULL);
  *n_args = self->args ? self->args->len : 0;
  return self->args ? (const AccelLaunchArg *) self->args->data : NULL;
}
