/* Tests of conv2d against a direct loop over the definition; of its two
 * backward ops through the adjoint identities
 *   <conv (x, w), dy> = <x, backward-data (dy, w)> = <w, backward-filter (x, dy)>;
 * of pool2d against direct loops; nchw and nhwc, strides, padding,
 * dilation, groups, f32, f16 and bf16; then bad geometry.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include "libs-test.h"

typedef struct {
  gint64 n, c, h, w, k, r, s;
  int sh, sw, ph, pw, dh, dw, groups;
  gboolean nhwc, bias;
} Case;

static const Case cases[] = {
  { 2, 3, 7, 9, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, FALSE, TRUE },
  { 1, 4, 11, 8, 6, 3, 2, 2, 1, 1, 0, 2, 1, 2, FALSE, FALSE },
  { 3, 6, 9, 9, 6, 3, 3, 2, 2, 2, 2, 1, 2, 6, TRUE, TRUE },     /* depthwise */
  { 2, 5, 6, 7, 3, 1, 1, 1, 1, 0, 0, 1, 1, 1, TRUE, FALSE },     /* 1x1 */
  { 1, 2, 5, 5, 2, 5, 5, 1, 1, 0, 0, 1, 1, 1, FALSE, TRUE },     /* filter = image */
};

static gint64
out_len (gint64 in, gint64 win, int stride, int pad, int dil)
{
  return (in + 2 * pad - dil * (win - 1) - 1) / stride + 1;
}

/* Logical (n, c, h, w) to a flat index in the layout. */
static gint64
at4 (gboolean nhwc, gint64 d1, gint64 d2, gint64 d3, gint64 a, gint64 b, gint64 y, gint64 x)
{
  /* d1, d2, d3: sizes of channel, height, width */
  return nhwc ? ((a * d2 + y) * d3 + x) * d1 + b : ((a * d1 + b) * d2 + y) * d3 + x;
}

static void
dims4 (gboolean nhwc, gint64 a, gint64 b, gint64 y, gint64 x, gint64 out[4])
{
  out[0] = a;
  out[1] = nhwc ? y : b;
  out[2] = nhwc ? x : y;
  out[3] = nhwc ? b : x;
}

static void
set_geometry (AccelOp *op, const Case *t)
{
  g_object_set (op, "layout", t->nhwc ? ACCEL_CONV_LAYOUT_NHWC : ACCEL_CONV_LAYOUT_NCHW,
                "stride-h", t->sh, "stride-w", t->sw, "pad-h", t->ph, "pad-w", t->pw,
                "dilation-h", t->dh, "dilation-w", t->dw, "groups", t->groups, NULL);
}

static double
dot (const double *a, const double *b, gint64 n)
{
  double s = 0;
  for (gint64 i = 0; i < n; i++)
    s += a[i] * b[i];
  return s;
}

static void
run_case (const Case *t, AccelDType dt)
{
  gint64 cg = t->c / t->groups, kg = t->k / t->groups;
  gint64 p = out_len (t->h, t->r, t->sh, t->ph, t->dh), q = out_len (t->w, t->s, t->sw, t->pw, t->dw);
  gint64 dx[4], dw[4], dy[4], db[1] = { t->k };
  dims4 (t->nhwc, t->n, t->c, t->h, t->w, dx);
  dims4 (t->nhwc, t->k, cg, t->r, t->s, dw);
  dims4 (t->nhwc, t->n, t->k, p, q, dy);
  gint64 nx = t->n * t->c * t->h * t->w, nw = t->k * cg * t->r * t->s, ny = t->n * t->k * p * q;

  g_autofree double *x = lt_random (dt, nx, -1, 1);
  g_autofree double *w = lt_random (dt, nw, -1, 1);
  g_autofree double *bias = lt_random (dt, t->k, -1, 1);
  g_autofree double *g = lt_random (dt, ny, -1, 1);
  g_autoptr(AccelBuffer) bx = lt_new (dt, dx, 4, x);
  g_autoptr(AccelBuffer) bw = lt_new (dt, dw, 4, w);
  g_autoptr(AccelBuffer) bb = lt_new (dt, db, 1, bias);
  g_autoptr(AccelBuffer) by = lt_alloc (dt, dy, 4);
  g_autoptr(AccelBuffer) bg = lt_new (dt, dy, 4, g);
  g_autoptr(AccelBuffer) bdx = lt_alloc (dt, dx, 4);
  g_autoptr(AccelBuffer) bdw = lt_alloc (dt, dw, 4);

  /* Forward against the definition. */
  g_autoptr(AccelOp) fwd = accel_conv2d_new (bx, bw, by);
  set_geometry (fwd, t);
  if (t->bias)
    g_object_set (fwd, "bias", bb, NULL);
  double rtol = dt == ACCEL_DTYPE_F32 ? 1e-5 : 4 * lt_eps (dt);
  double atol = dt == ACCEL_DTYPE_F32 ? 1e-5 : 4 * lt_eps (dt) * sqrt ((double) cg * t->r * t->s);
  lt_submit_compare (fwd, rtol, atol, "*", NULL);
  g_autofree double *y = lt_read (by);
  g_autofree double *want = g_new (double, ny);
  for (gint64 n = 0; n < t->n; n++)
    for (gint64 k = 0; k < t->k; k++)
      for (gint64 i = 0; i < p; i++)
        for (gint64 j = 0; j < q; j++)
          {
            double acc = t->bias ? bias[k] : 0;
            gint64 group = k / kg;
            for (gint64 ci = 0; ci < cg; ci++)
              for (gint64 r = 0; r < t->r; r++)
                for (gint64 s = 0; s < t->s; s++)
                  {
                    gint64 hh = i * t->sh - t->ph + r * t->dh, ww = j * t->sw - t->pw + s * t->dw;
                    if (hh < 0 || hh >= t->h || ww < 0 || ww >= t->w)
                      continue;
                    acc += x[at4 (t->nhwc, t->c, t->h, t->w, n, group * cg + ci, hh, ww)]
                           * w[at4 (t->nhwc, cg, t->r, t->s, k, ci, r, s)];
                  }
            want[at4 (t->nhwc, t->k, p, q, n, k, i, j)] = lt_round (dt, acc);
          }
  lt_assert_close ("conv2d", y, want, ny, rtol, atol);

  /* The backward ops through the adjoint identities (no bias there). */
  g_autoptr(AccelOp) fwd0 = accel_conv2d_new (bx, bw, by);
  set_geometry (fwd0, t);
  lt_submit (fwd0);
  g_autofree double *y0 = lt_read (by);
  g_autoptr(AccelOp) bwd_data = accel_conv2d_backward_data_new (bg, bw, bdx);
  set_geometry (bwd_data, t);
  lt_submit_compare (bwd_data, rtol, atol * 4, "*", NULL);
  g_autoptr(AccelOp) bwd_filter = accel_conv2d_backward_filter_new (bx, bg, bdw);
  set_geometry (bwd_filter, t);
  lt_submit_compare (bwd_filter, rtol, atol * 8, "*", NULL);
  g_autofree double *gx = lt_read (bdx);
  g_autofree double *gw = lt_read (bdw);

  double lhs = dot (y0, g, ny);
  double scale = sqrt ((double) ny) * sqrt ((double) cg * t->r * t->s) + 1;
  double ttol = (dt == ACCEL_DTYPE_F32 ? 1e-5 : 8 * lt_eps (dt)) * scale * 4;
  double rd = dot (x, gx, nx), rf = dot (w, gw, nw);
  if (fabs (lhs - rd) > ttol || fabs (lhs - rf) > ttol)
    g_error ("conv2d adjoints (%s): <y, g> = %g, <x, dx> = %g, <w, dw> = %g, tolerance %g",
             accel_dtype_get_name (dt), lhs, rd, rf, ttol);
}

static void
test_conv2d (void)
{
  if (lt_device_for ("conv2d", "conv2d-backward-data", "conv2d-backward-filter", NULL) == NULL)
    return;
  const AccelDType dts[] = { ACCEL_DTYPE_F32, ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16 };
  for (guint d = 0; d < G_N_ELEMENTS (dts); d++)
    for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
      run_case (&cases[i], dts[d]);
}

static void
test_pool2d (void)
{
  if (lt_device_for ("pool2d", NULL) == NULL)
    return;
  const struct { gint64 n, c, h, w; int wh, ww, sh, sw, ph, pw; gboolean nhwc; } pc[] = {
    { 2, 3, 8, 8, 2, 2, 2, 2, 0, 0, FALSE },
    { 1, 5, 9, 7, 3, 3, 2, 2, 1, 1, TRUE },
    { 2, 2, 7, 11, 3, 2, 1, 3, 1, 0, FALSE },
  };
  const AccelDType dts[] = { ACCEL_DTYPE_F32, ACCEL_DTYPE_BF16 };
  for (guint d = 0; d < G_N_ELEMENTS (dts); d++)
    for (guint i = 0; i < G_N_ELEMENTS (pc); i++)
      for (guint mode = 0; mode < 3; mode++)
        {
          AccelDType dt = dts[d];
          gboolean is_max = mode == 0, include_pad = mode == 1;
          gint64 p = (pc[i].h + 2 * pc[i].ph - pc[i].wh) / pc[i].sh + 1;
          gint64 q = (pc[i].w + 2 * pc[i].pw - pc[i].ww) / pc[i].sw + 1;
          gint64 dx[4], dy[4];
          dims4 (pc[i].nhwc, pc[i].n, pc[i].c, pc[i].h, pc[i].w, dx);
          dims4 (pc[i].nhwc, pc[i].n, pc[i].c, p, q, dy);
          gint64 nx = pc[i].n * pc[i].c * pc[i].h * pc[i].w, ny = pc[i].n * pc[i].c * p * q;
          g_autofree double *x = lt_random (dt, nx, -2, 2);
          g_autoptr(AccelBuffer) bx = lt_new (dt, dx, 4, x);
          g_autoptr(AccelBuffer) by = lt_alloc (dt, dy, 4);
          g_autoptr(AccelOp) op = accel_pool2d_new (bx, by, is_max ? ACCEL_POOL_MAX : ACCEL_POOL_AVG);
          g_object_set (op, "layout", pc[i].nhwc ? ACCEL_CONV_LAYOUT_NHWC : ACCEL_CONV_LAYOUT_NCHW,
                        "window-h", pc[i].wh, "window-w", pc[i].ww, "stride-h", pc[i].sh,
                        "stride-w", pc[i].sw, "pad-h", pc[i].ph, "pad-w", pc[i].pw,
                        "count-include-pad", include_pad, NULL);
          lt_submit_compare (op, 2 * lt_eps (dt), 1e-6, "*", NULL);
          g_autofree double *y = lt_read (by);
          g_autofree double *want = g_new (double, ny);
          for (gint64 n = 0; n < pc[i].n; n++)
            for (gint64 c = 0; c < pc[i].c; c++)
              for (gint64 a = 0; a < p; a++)
                for (gint64 b = 0; b < q; b++)
                  {
                    double acc = is_max ? -INFINITY : 0;
                    int count = 0;
                    for (int u = 0; u < pc[i].wh; u++)
                      for (int v = 0; v < pc[i].ww; v++)
                        {
                          gint64 hh = a * pc[i].sh - pc[i].ph + u, ww = b * pc[i].sw - pc[i].pw + v;
                          if (hh < 0 || hh >= pc[i].h || ww < 0 || ww >= pc[i].w)
                            continue;
                          double e = x[at4 (pc[i].nhwc, pc[i].c, pc[i].h, pc[i].w, n, c, hh, ww)];
                          acc = is_max ? MAX (acc, e) : acc + e;
                          count++;
                        }
                    if (!is_max)
                      acc /= include_pad ? pc[i].wh * pc[i].ww : count;
                    want[at4 (pc[i].nhwc, pc[i].c, p, q, n, c, a, b)] = lt_round (dt, acc);
                  }
          lt_assert_close ("pool2d", y, want, ny, 2 * lt_eps (dt), 1e-6);
        }
}

static void
test_bad_input (void)
{
  if (lt_device_for ("conv2d", "conv2d-backward-data", "pool2d", "scan", NULL) == NULL)
    return;
  gint64 dx[4] = { 1, 6, 8, 8 }, dw[4] = { 4, 3, 3, 3 }, dy[4] = { 1, 4, 6, 6 };
  g_autoptr(AccelBuffer) x = lt_new (ACCEL_DTYPE_F32, dx, 4, NULL);
  g_autoptr(AccelBuffer) w = lt_new (ACCEL_DTYPE_F32, dw, 4, NULL);
  g_autoptr(AccelBuffer) y = lt_alloc (ACCEL_DTYPE_F32, dy, 4);

  /* groups 2: 6 channels, 3 per group; fine. Then groups 4 does not divide 6. */
  {
    g_autoptr(AccelOp) op = accel_conv2d_new (x, w, y);
    g_object_set (op, "groups", 2, NULL);
    lt_submit (op);
    g_object_set (op, "groups", 4, NULL);
    lt_expect_error (op, ACCEL_ERROR_INVALID_ARGUMENT, "groups");
  }
  /* Without groups the filter needs 6 channels. */
  {
    g_autoptr(AccelOp) op = accel_conv2d_new (x, w, y);
    lt_expect_error (op, ACCEL_ERROR_SHAPE_MISMATCH, "“w”");
  }
  /* Output of the wrong size (padding 1 makes it 8 x 8). */
  {
    g_autoptr(AccelOp) op = accel_conv2d_new (x, w, y);
    g_object_set (op, "groups", 2, "pad-h", 1, "pad-w", 1, NULL);
    lt_expect_error (op, ACCEL_ERROR_SHAPE_MISMATCH, "“y”");
  }
  /* A dilated filter larger than the image. */
  {
    g_autoptr(AccelOp) op = accel_conv2d_new (x, w, y);
    g_object_set (op, "groups", 2, "dilation-h", 5, NULL);
    lt_expect_error (op, ACCEL_ERROR_SHAPE_MISMATCH, "does not fit");
  }
  /* f64 is not a conv type; a bias of the wrong length. */
  {
    g_autoptr(AccelBuffer) x64 = lt_new (ACCEL_DTYPE_F64, dx, 4, NULL);
    g_autoptr(AccelOp) op = accel_conv2d_new (x64, w, y);
    lt_expect_error (op, ACCEL_ERROR_DTYPE_UNSUPPORTED, NULL);
  }
  {
    gint64 d3[1] = { 3 };
    g_autoptr(AccelBuffer) bias = lt_new (ACCEL_DTYPE_F32, d3, 1, NULL);
    g_autoptr(AccelOp) op = accel_conv2d_new (x, w, y);
    g_object_set (op, "groups", 2, "bias", bias, NULL);
    lt_expect_error (op, ACCEL_ERROR_SHAPE_MISMATCH, "“bias”");
  }
  /* A negative stride set on the struct, past the property's range check. */
  {
    g_autoptr(AccelOp) op = accel_conv2d_backward_data_new (y, w, x);
    ACCEL_CONV2D_BACKWARD_DATA (op)->params.stride_w = 0;
    lt_expect_error (op, ACCEL_ERROR_INVALID_ARGUMENT, "stride-w");
  }
  /* Pool padding must stay below the window. */
  {
    gint64 dp[4] = { 1, 6, 5, 5 };
    g_autoptr(AccelBuffer) py = lt_alloc (ACCEL_DTYPE_F32, dp, 4);
    g_autoptr(AccelOp) op = accel_pool2d_new (x, py, ACCEL_POOL_MAX);
    g_object_set (op, "pad-h", 2, "pad-w", 2, NULL);
    lt_expect_error (op, ACCEL_ERROR_INVALID_ARGUMENT, "pad-h");
  }
}

const LtTest lt_tests[] = {
  { "/libs/conv/conv2d", test_conv2d },
  { "/libs/conv/pool2d", test_pool2d },
  { "/libs/conv/bad-input", test_bad_input },
  { NULL, NULL },
};
