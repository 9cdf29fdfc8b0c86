/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-impl-private.h"
#include "accel-op-check-private.h"
#include "accel-enum-types.h"

/**
 * AccelFft:
 *
 * Discrete Fourier transform of the last `n-axes` dimensions of contiguous
 * buffers; the leading dimensions are a batch. The inverse is unnormalised,
 * as in FFTW and cuFFT (a forward then inverse pass scales by the product of
 * the transformed lengths): `numpy.fft.ifft (x)` is this inverse divided by
 * the length, `numpy.fft.ifft (x, norm="forward")` this inverse itself.
 *
 * - C2C: c64 to c64 or c128 to c128, same shape, either direction; in place
 *   when `input` and `output` are the same buffer.
 * - R2C (forward only): f32 to c64 or f64 to c128; the output's last
 *   dimension is `n / 2 + 1`, the others equal the input's.
 * - C2R (inverse only): c64 to f32 or c128 to f64; the input's last
 *   dimension is `n / 2 + 1` where `n` is the output's last dimension.
 *
 * Op name: `fft`.
 */

static gboolean
accel_fft_check_types (AccelFft *self, GError **error)
{
  AccelDType in = accel_buffer_get_dtype (self->input);
  AccelDType out = accel_buffer_get_dtype (self->output);
  gboolean ok;
  const char *want;

  switch (self->kind)
    {
    case ACCEL_FFT_C2C:
      ok = (in == ACCEL_DTYPE_C64 || in == ACCEL_DTYPE_C128) && out == in;
      want = "c64 -> c64 or c128 -> c128";
      break;
    case ACCEL_FFT_R2C:
      ok = (in == ACCEL_DTYPE_F32 && out == ACCEL_DTYPE_C64) || (in == ACCEL_DTYPE_F64 && out == ACCEL_DTYPE_C128);
      want = "f32 -> c64 or f64 -> c128";
      break;
    case ACCEL_FFT_C2R:
      ok = (in == ACCEL_DTYPE_C64 && out == ACCEL_DTYPE_F32) || (in == ACCEL_DTYPE_C128 && out == ACCEL_DTYPE_F64);
      want = "c64 -> f32 or c128 -> f64";
      break;
    default:
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "fft: property “kind” has the unknown value %d", self->kind);
      return FALSE;
    }
  if (!ok)
    {
      GEnumValue *kv = g_enum_get_value (g_type_class_peek (ACCEL_TYPE_FFT_KIND), self->kind);
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_DTYPE_UNSUPPORTED,
                   "fft: “input” %s -> “output” %s does not fit kind %s (%s)",
                   accel_dtype_get_name (in), accel_dtype_get_name (out),
                   kv ? kv->value_nick : "?", want);
      return FALSE;
    }
  return TRUE;
}

static gboolean
accel_fft_validate (AccelOp *op, GError **error)
{
  AccelFft *self = ACCEL_FFT (op);

  if (self->n_axes < 1 || self->n_axes > 3)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "fft: property “n-axes” is %u, expected 1 to 3", self->n_axes);
      return FALSE;
    }
  if (self->kind == ACCEL_FFT_R2C && self->direction != ACCEL_FFT_FORWARD)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "fft: property “direction” must be forward for kind r2c");
      return FALSE;
    }
  if (self->kind == ACCEL_FFT_C2R && self->direction != ACCEL_FFT_INVERSE)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "fft: property “direction” must be inverse for kind c2r");
      return FALSE;
    }
  if (!accel_fft_check_types (self, error))
    return FALSE;
  if (!accel_op_check_rank (op, "input", self->n_axes, ACCEL_SHAPE_MAX_RANK, error)
      || !accel_op_check_rank (op, "output", self->n_axes, ACCEL_SHAPE_MAX_RANK, error)
      || !accel_op_check_contiguous (op, "input", error)
      || !accel_op_check_contiguous (op, "output", error))
    return FALSE;

  const AccelShape *si = accel_buffer_get_shape (self->input);
  const AccelShape *so = accel_buffer_get_shape (self->output);
  guint rank = accel_shape_get_rank (si);
  if (accel_shape_get_rank (so) != rank)
    {
      g_autofree char *a = accel_op_describe_shape_ (self->input);
      g_autofree char *b = accel_op_describe_shape_ (self->output);
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_SHAPE_MISMATCH,
                   "fft: “input” %s and “output” %s differ in rank", a, b);
      return FALSE;
    }

  if (self->kind == ACCEL_FFT_C2C)
    {
      if (!accel_op_check_same_dims_ ("fft", "input", self->input, "output", self->output, error))
        return FALSE;
    }
  else
    {
      /* The real side gives n; the complex side has n / 2 + 1 in the last axis. */
      AccelBuffer *real = self->kind == ACCEL_FFT_R2C ? self->input : self->output;
      AccelBuffer *cplx = self->kind == ACCEL_FFT_R2C ? self->output : self->input;
      const AccelShape *sr = accel_buffer_get_shape (real);
      gint64 expected[ACCEL_SHAPE_MAX_RANK];
      for (guint i = 0; i < rank; i++)
        expected[i] = accel_shape_get_dim (sr, i);
      expected[rank - 1] = expected[rank - 1] / 2 + 1;
      g_autoptr (AccelShape) want = accel_shape_new (expected, rank);
      if (!accel_shape_same_dims (want, accel_buffer_get_shape (cplx)))
        {
          g_autofree char *ws = accel_shape_to_string (want);
          g_autofree char *rs = accel_op_describe_shape_ (real);
          g_autofree char *why = g_strdup_printf ("%s (the real side “%s” is %s, so its last axis n/2+1)",
                                                  ws, self->kind == ACCEL_FFT_R2C ? "input" : "output", rs);
          return accel_op_shape_error_ (error, "fft", self->kind == ACCEL_FFT_R2C ? "output" : "input",
                                        cplx, why);
        }
      /* r2c and c2r are out of place only. */
      if (!accel_op_check_no_alias_ (error, "fft", "output", self->output, "input", self->input))
        return FALSE;
    }

  if (!accel_op_check_in_place_ (error, "fft", "output", self->output, "input", self->input))
    return FALSE;

  for (guint i = rank - self->n_axes; i < rank; i++)
    {
      gint64 n = accel_shape_get_dim (self->kind == ACCEL_FFT_C2R ? so : si, i);
      if (n < 1 || n > G_MAXINT)
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_SHAPE_MISMATCH,
                       "fft: transformed axis %u has length %" G_GINT64_FORMAT ", expected 1 to %d",
                       i, n, G_MAXINT);
          return FALSE;
        }
    }
  return TRUE;
}

ACCEL_DEFINE_OP_TYPE (AccelFft, accel_fft, "fft",
                      "Batched 1-3 dimensional FFT (c2c, r2c, c2r; unnormalised inverse)",
                      _accel_fft_params, accel_fft_validate)
