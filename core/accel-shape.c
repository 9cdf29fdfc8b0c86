/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-private.h"

/**
 * AccelShape:
 *
 * The dimensions of a buffer, with strides counted in elements (row-major
 * when made by accel_shape_new()). A boxed type: copy it to keep it.
 */
struct _AccelShape {
  guint rank;
  gint64 dims[ACCEL_SHAPE_MAX_RANK];
  gint64 strides[ACCEL_SHAPE_MAX_RANK];
};

G_DEFINE_BOXED_TYPE (AccelShape, accel_shape, accel_shape_copy, accel_shape_free)

/**
 * accel_shape_new:
 * @dims: (array length=n_dims): the size of each dimension, outermost first
 * @n_dims: the rank, at most %ACCEL_SHAPE_MAX_RANK
 *
 * Makes a contiguous row-major shape. A rank of 0 is a scalar.
 *
 * Returns: (transfer full): a new shape, or %NULL if a dimension is negative
 *   or the rank is too large
 */
AccelShape *
accel_shape_new (const gint64 *dims, guint n_dims)
{
  g_return_val_if_fail (n_dims <= ACCEL_SHAPE_MAX_RANK, NULL);
  g_return_val_if_fail (n_dims == 0 || dims != NULL, NULL);

  AccelShape *shape = g_new0 (AccelShape, 1);
  shape->rank = n_dims;
  /* Dimensions may come from another process: strides past the range of
   * gint64 saturate (no buffer that large can be made). */
  gint64 stride = 1;
  for (int i = (int) n_dims - 1; i >= 0; i--)
    {
      if (dims[i] < 0)
        {
          g_free (shape);
          g_return_val_if_reached (NULL);
        }
      shape->dims[i] = dims[i];
      shape->strides[i] = stride;
      if (dims[i] > 0 && __builtin_mul_overflow (stride, dims[i], &stride))
        stride = G_MAXINT64;
    }
  return shape;
}

/**
 * accel_shape_new_strided:
 * @dims: (array length=n_dims): the size of each dimension
 * @strides: (array length=n_dims): the stride of each dimension, in elements
 * @n_dims: the rank
 *
 * Makes a shape with explicit strides (in elements, non-negative), such as a
 * view of every other column.
 *
 * Returns: (transfer full): a new shape
 */
AccelShape *
accel_shape_new_strided (const gint64 *dims, const gint64 *strides, guint n_dims)
{
  AccelShape *shape = accel_shape_new (dims, n_dims);
  if (shape == NULL)
    return NULL;
  for (guint i = 0; i < n_dims; i++)
    shape->strides[i] = strides[i];
  return shape;
}

/**
 * accel_shape_new_1d:
 * @d0: the length
 *
 * Makes a contiguous rank-1 shape.
 *
 * Returns: (transfer full): a new rank-1 shape
 */
AccelShape *
accel_shape_new_1d (gint64 d0)
{
  return accel_shape_new (&d0, 1);
}

/**
 * accel_shape_new_2d:
 * @d0: rows
 * @d1: columns
 *
 * Makes a contiguous row-major rank-2 shape.
 *
 * Returns: (transfer full): a new rank-2 shape
 */
AccelShape *
accel_shape_new_2d (gint64 d0, gint64 d1)
{
  gint64 d[] = { d0, d1 };
  return accel_shape_new (d, 2);
}

/**
 * accel_shape_new_3d:
 * @d0: outermost dimension
 * @d1: middle dimension
 * @d2: innermost dimension
 *
 * Makes a contiguous row-major rank-3 shape.
 *
 * Returns: (transfer full): a new rank-3 shape
 */
AccelShape *
accel_shape_new_3d (gint64 d0, gint64 d1, gint64 d2)
{
  gint64 d[] = { d0, d1, d2 };
  return accel_shape_new (d, 3);
}

/**
 * accel_shape_copy:
 * @shape: a shape
 *
 * Copies a shape.
 *
 * Returns: (transfer full): a copy
 */
AccelShape *
accel_shape_copy (const AccelShape *shape)
{
  g_return_val_if_fail (shape != NULL, NULL);
  return g_memdup2 (shape, sizeof *shape);
}

/**
 * accel_shape_free:
 * @shape: (transfer full) (nullable): a shape
 *
 * Frees @shape.
 */
void
accel_shape_free (AccelShape *shape)
{
  g_free (shape);
}

/**
 * accel_shape_get_rank:
 * @shape: a shape
 *
 * Gets the number of dimensions.
 *
 * Returns: the number of dimensions
 */
guint
accel_shape_get_rank (const AccelShape *shape)
{
  g_return_val_if_fail (shape != NULL, 0);
  return shape->rank;
}

/**
 * accel_shape_get_dim:
 * @shape: a shape
 * @axis: a dimension index, 0 for the outermost
 *
 * Gets the size of that dimension, or -1 if @axis is out of range.
 *
 * Returns: the size of that dimension, or -1 if @axis is out of range
 */
gint64
accel_shape_get_dim (const AccelShape *shape, guint axis)
{
  g_return_val_if_fail (shape != NULL, -1);
  if (axis >= shape->rank)
    return -1;
  return shape->dims[axis];
}

/**
 * accel_shape_get_stride:
 * @shape: a shape
 * @axis: a dimension index
 *
 * Gets the stride of that dimension in elements, or 0 if out of range.
 *
 * Returns: the stride of that dimension in elements, or 0 if out of range
 */
gint64
accel_shape_get_stride (const AccelShape *shape, guint axis)
{
  g_return_val_if_fail (shape != NULL, 0);
  if (axis >= shape->rank)
    return 0;
  return shape->strides[axis];
}

/**
 * accel_shape_get_dims:
 * @shape: a shape
 * @n_dims: (out): the rank
 *
 * Gets the dimensions.
 *
 * Returns: (array length=n_dims) (transfer none): the dimensions
 */
const gint64 *
accel_shape_get_dims (const AccelShape *shape, guint *n_dims)
{
  g_return_val_if_fail (shape != NULL, NULL);
  if (n_dims)
    *n_dims = shape->rank;
  return shape->dims;
}

/**
 * accel_shape_get_strides:
 * @shape: a shape
 * @n_dims: (out): the rank
 *
 * Gets the strides, in elements.
 *
 * Returns: (array length=n_dims) (transfer none): the strides, in elements
 */
const gint64 *
accel_shape_get_strides (const AccelShape *shape, guint *n_dims)
{
  g_return_val_if_fail (shape != NULL, NULL);
  if (n_dims)
    *n_dims = shape->rank;
  return shape->strides;
}

/**
 * accel_shape_get_n_elements:
 * @shape: a shape
 *
 * Gets the product of the dimensions (1 for a scalar).
 *
 * Returns: the product of the dimensions (1 for a scalar)
 */
gint64
accel_shape_get_n_elements (const AccelShape *shape)
{
  g_return_val_if_fail (shape != NULL, 0);
  /* Saturates at G_MAXINT64 (dimensions may come from another process). */
  gint64 n = 1;
  for (guint i = 0; i < shape->rank; i++)
    if (shape->dims[i] == 0)
      return 0;
  for (guint i = 0; i < shape->rank; i++)
    if (__builtin_mul_overflow (n, shape->dims[i], &n))
      return G_MAXINT64;
  return n;
}

/* The bytes a layout of @rank @dims and @strides spans with @esize-byte
 * elements: one past its largest offset, times @esize; 0 when a dimension
 * is 0. FALSE for a negative size or stride, or a span past gint64 offsets
 * (where one past the last would wrap) or 64-bit bytes: every step is
 * checked, for layouts from outside bytes (DLPack tensors, the views a
 * device host or a replay makes). */
gboolean
_accel_layout_span_bytes (const gint64 *dims, const gint64 *strides, guint rank, gsize esize, guint64 *bytes)
{
  gboolean empty = FALSE;
  for (guint i = 0; i < rank; i++)
    {
      if (dims[i] < 0 || strides[i] < 0)
        return FALSE;
      empty = empty || dims[i] == 0;
    }
  guint64 last = 0, span;
  for (guint i = 0; !empty && i < rank; i++)
    if (!g_uint64_checked_mul (&span, (guint64) (dims[i] - 1), (guint64) strides[i])
        || !g_uint64_checked_add (&last, last, span))
      return FALSE;
  if (empty)
    {
      *bytes = 0;
      return TRUE;
    }
  return last < (guint64) G_MAXINT64 && g_uint64_checked_mul (bytes, last + 1, esize);
}

/**
 * accel_shape_get_extent:
 * @shape: a shape
 *
 * Gets how many elements of storage the shape spans: one past the largest
 * offset it reaches (0 if it has no elements).
 *
 * Returns: how many elements of storage the shape spans: one past the
 *   largest offset it reaches (0 if it has no elements)
 */
gint64
accel_shape_get_extent (const AccelShape *shape)
{
  g_return_val_if_fail (shape != NULL, 0);
  /* The offset of the last element, plus one; saturates at G_MAXINT64 and
   * is negative when a negative stride reaches before the first element. */
  gint64 last = 0, span;
  for (guint i = 0; i < shape->rank; i++)
    if (shape->dims[i] == 0)
      return 0;
  for (guint i = 0; i < shape->rank; i++)
    if (__builtin_mul_overflow (shape->dims[i] - 1, shape->strides[i], &span)
        || __builtin_add_overflow (last, span, &last))
      return shape->strides[i] < 0 ? G_MININT64 : G_MAXINT64;
  return last < G_MAXINT64 ? last + 1 : G_MAXINT64;
}

/**
 * accel_shape_is_contiguous:
 * @shape: a shape
 *
 * Whether the shape is row-major without gaps (a dimension of size 1 may have
 * any stride).
 *
 * Returns: %TRUE if the strides are the row-major ones of the dimensions,
 *   or the shape has no elements (as numpy counts an empty array
 *   contiguous, whatever its strides)
 */
gboolean
accel_shape_is_contiguous (const AccelShape *shape)
{
  g_return_val_if_fail (shape != NULL, FALSE);
  for (guint i = 0; i < shape->rank; i++)
    if (shape->dims[i] == 0)
      return TRUE;
  gint64 stride = 1;
  for (int i = (int) shape->rank - 1; i >= 0; i--)
    {
      if (shape->dims[i] != 1 && shape->strides[i] != stride)
        return FALSE;
      if (__builtin_mul_overflow (stride, shape->dims[i], &stride))
        stride = G_MAXINT64;
    }
  return TRUE;
}

/**
 * accel_shape_may_overlap:
 * @shape: a shape
 *
 * Whether two elements of @shape may be at the same offset, as in a
 * broadcast (a stride of 0 over a dimension longer than 1). An op refuses
 * to write to such a buffer: its result would depend on the order of the
 * writes. Conservative: it also holds for the rare layouts whose strides
 * interleave without overlapping.
 *
 * Returns: %FALSE if every element has an offset of its own
 */
gboolean
accel_shape_may_overlap (const AccelShape *shape)
{
  g_return_val_if_fail (shape != NULL, TRUE);
  guint order[ACCEL_SHAPE_MAX_RANK];
  guint n = 0;

  /* Each dimension, innermost stride first, must step past every offset
   * the dimensions inside it reach. */
  for (guint i = 0; i < shape->rank; i++)
    {
      if (shape->dims[i] == 0)
        return FALSE;
      if (shape->dims[i] == 1)
        continue;
      guint j = n++;
      for (; j > 0 && ABS (shape->strides[order[j - 1]]) > ABS (shape->strides[i]); j--)
        order[j] = order[j - 1];
      order[j] = i;
    }
  guint64 reach = 0;
  for (guint k = 0; k < n; k++)
    {
      guint i = order[k];
      guint64 stride = shape->strides[i] < 0 ? -(guint64) shape->strides[i] : (guint64) shape->strides[i];
      guint64 span;
      if (stride <= reach || __builtin_mul_overflow (stride, (guint64) (shape->dims[i] - 1), &span)
          || __builtin_add_overflow (reach, span, &reach))
        return TRUE;
    }
  return FALSE;
}

/**
 * accel_shape_same_dims:
 * @a: a shape
 * @b: another shape
 *
 * Compares the dimensions of two shapes, not their strides.
 *
 * Returns: %TRUE if both have the same rank and dimensions (strides aside)
 */
gboolean
accel_shape_same_dims (const AccelShape *a, const AccelShape *b)
{
  g_return_val_if_fail (a != NULL && b != NULL, FALSE);
  if (a->rank != b->rank)
    return FALSE;
  for (guint i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i])
      return FALSE;
  return TRUE;
}

/**
 * accel_shape_equal:
 * @a: a shape
 * @b: another shape
 *
 * Compares two shapes, strides included.
 *
 * Returns: %TRUE if rank, dimensions and strides are all equal
 */
gboolean
accel_shape_equal (const AccelShape *a, const AccelShape *b)
{
  if (!accel_shape_same_dims (a, b))
    return FALSE;
  for (guint i = 0; i < a->rank; i++)
    if (a->strides[i] != b->strides[i])
      return FALSE;
  return TRUE;
}

/**
 * accel_shape_hash:
 * @shape: a shape
 *
 * Hashes a shape, for hash tables keyed by shapes.
 *
 * Returns: a hash consistent with accel_shape_equal()
 */
guint
accel_shape_hash (const AccelShape *shape)
{
  g_return_val_if_fail (shape != NULL, 0);
  guint h = shape->rank;
  for (guint i = 0; i < shape->rank; i++)
    h = h * 31u + (guint) ((guint64) shape->dims[i] * 1000003u + (guint64) shape->strides[i]);
  return h;
}

/**
 * accel_shape_to_string:
 * @shape: a shape
 *
 * Formats the shape for messages.
 *
 * Returns: (transfer full): `[64, 32]`, with strides appended as
 *   `[64, 32]/[1, 64]` when the shape is not contiguous
 */
char *
accel_shape_to_string (const AccelShape *shape)
{
  g_return_val_if_fail (shape != NULL, NULL);
  GString *s = g_string_new ("[");
  for (guint i = 0; i < shape->rank; i++)
    g_string_append_printf (s, "%s%" G_GINT64_FORMAT, i ? ", " : "", shape->dims[i]);
  g_string_append_c (s, ']');
  if (!accel_shape_is_contiguous (shape))
    {
      g_string_append (s, "/[");
      for (guint i = 0; i < shape->rank; i++)
        g_string_append_printf (s, "%s%" G_GINT64_FORMAT, i ? ", " : "", shape->strides[i]);
      g_string_append_c (s, ']');
    }
  return g_string_free (s, FALSE);
}
