/* image.c: the image ops on cuda:0 against cpu:0, their oracle, on the
 * same random images: odd sizes (1917×1079 among them, and 3×3), rows
 * padded and planes apart in every image, every format and method; and
 * unpadded, aligned frames, which the kernels' whole-pixel paths take.
 *
 * Resampling, warps, 2-D kernels and morphology agree to the bit
 * (lanczos3 within one code, where the two sinf() differ); separable
 * filters within one code (the GPU fuses multiply-adds).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>
#include "cuda-test.h"
#include "image-test.h"


typedef struct {
  int w, h;
} Size;

/* 1917×1079 and 3×3 always; small odd sizes for breadth. */
static const Size sizes[] = { { 1917, 1079 }, { 3, 3 }, { 37, 23 } };

/* Makes the op for images @src and @dst on @device (kernel buffers there). */
typedef AccelOp *(*MakeOp) (AccelDevice *device, ItImage *src, ItImage *dst, gpointer data);

/* Runs the op on both devices from the same source and destination bytes
 * and compares the destinations, padding included. */
static void
run_layout (const char *what, AccelImageFormat sf, Size ss, AccelImageFormat df, Size ds, MakeOp make,
            gpointer data, int tol, gboolean padded)
{
  g_autoptr(ItImage) src_cpu = it_image_new (ct_cpu (), sf, ss.w, ss.h, padded);
  g_autoptr(ItImage) dst_cpu = it_image_new (ct_cpu (), df, ds.w, ds.h, padded);
  g_autoptr(ItImage) src_gpu = it_image_copy_to (src_cpu, ct_gpu ());
  g_autoptr(ItImage) dst_gpu = it_image_copy_to (dst_cpu, ct_gpu ());
  g_autoptr(AccelOp) op_cpu = make (ct_cpu (), src_cpu, dst_cpu, data);
  g_autoptr(AccelOp) op_gpu = make (ct_gpu (), src_gpu, dst_gpu, data);
  g_autofree guint8 *before = g_memdup2 (dst_gpu->bytes, dst_gpu->size);

  ct_submit (ct_cpu (), op_cpu);
  ct_submit (ct_gpu (), op_gpu);
  it_image_download (dst_cpu);
  it_image_download (dst_gpu);
  g_autofree char *full = g_strdup_printf ("%s: %s %dx%d -> %s %dx%d", what, it_format_name (sf), ss.w, ss.h,
                                           it_format_name (df), ds.w, ds.h);
  it_assert_close (full, dst_gpu, dst_cpu, tol);
  it_assert_padding_kept (full, dst_gpu, before);
}

static void
run_both (const char *what, AccelImageFormat sf, Size ss, AccelImageFormat df, Size ds, MakeOp make, gpointer data,
          int tol)
{
  run_layout (what, sf, ss, df, ds, make, data, tol, TRUE);
}

typedef struct {
  int method;
  AccelColorMatrix m;
  AccelColorRange r;
  AccelChromaSiting s;
} Convert;

static AccelOp *
make_convert (AccelDevice *device, ItImage *src, ItImage *dst, gpointer data)
{
  const Convert *c = data;
  AccelOp *op = accel_convert_color_new (NULL, NULL);
  it_set_src (op, src);
  it_set_dst (op, dst, TRUE);
  g_object_set (op, "method", c->method, "src-matrix", c->m, "dst-matrix", (c->m + 1) % 3, "src-range", c->r,
                "dst-range", 1 - c->r, "src-chroma-siting", c->s, "dst-chroma-siting", (c->s + 1) % 3, NULL);
  return op;
}

static void
test_convert (void)
{
  if (!ct_gpu ())
    return;
  for (guint i = 0; i < IT_N_FORMATS; i++)
    for (guint k = 0; k < 2; k++)
      {
        AccelImageFormat sf = it_all_formats[i];
        AccelImageFormat df = it_all_formats[(i + 3 + 4 * k) % IT_N_FORMATS];
        Size ss = sizes[(i + k) % G_N_ELEMENTS (sizes)];
        /* The same size, and scaled (the bench's shape among them). */
        Size ds = k == 0 ? ss : (Size) { MAX (1, ss.w / 2 + 1), MAX (1, ss.h / 2) };
        Convert c = { g_random_int_range (0, 5), g_random_int_range (0, 3), g_random_int_range (0, 2),
                      g_random_int_range (0, 3) };
        run_both ("convert-color", sf, ss, df, ds, make_convert, &c, c.method == ACCEL_INTERPOLATION_LANCZOS3);
      }
  Convert bench = { ACCEL_INTERPOLATION_BILINEAR, ACCEL_COLOR_MATRIX_BT709, ACCEL_COLOR_RANGE_LIMITED,
                    ACCEL_CHROMA_SITING_MPEG2 };
  run_both ("convert-color", ACCEL_IMAGE_FORMAT_NV12, (Size) { 1917, 1079 }, ACCEL_IMAGE_FORMAT_RGBA,
            (Size) { 959, 541 }, make_convert, &bench, 0);
}

static AccelOp *
make_resize (AccelDevice *device, ItImage *src, ItImage *dst, gpointer data)
{
  AccelOp *op = accel_resize_new (NULL, NULL, GPOINTER_TO_INT (data));
  it_set_src (op, src);
  it_set_dst (op, dst, TRUE);
  return op;
}

static void
test_resize (void)
{
  if (!ct_gpu ())
    return;
  for (guint i = 0; i < IT_N_FORMATS; i++)
    for (int method = 0; method < 5; method++)
      {
        Size ss = sizes[(i + method) % G_N_ELEMENTS (sizes)];
        /* Shrinking (within area's and lanczos3's 8×) and growing. */
        Size ds = (i + method) % 2 ? (Size) { MAX (1, ss.w / 3), MAX (1, ss.h / 5) }
                                   : (Size) { ss.w * 3 / 2 + 1, ss.h * 2 + 1 };
        run_both ("resize", it_all_formats[i], ss, it_all_formats[i], ds, make_resize, GINT_TO_POINTER (method),
                  method == ACCEL_INTERPOLATION_LANCZOS3);
      }
}

typedef struct {
  AccelFilterKind kind;
  double sigma;
  int ksize, dx, dy;
  AccelBorderMode border;
} Filter;

static AccelBuffer *
kernel_buffer (AccelDevice *device, gint64 d0, gint64 d1, guint32 seed)
{
  gint64 dims[2] = { d0, d1 };
  g_autoptr(AccelShape) shape = accel_shape_new (dims, d1 ? 2 : 1);
  AccelBuffer *b = accel_device_alloc (device, ACCEL_DTYPE_F32, shape, NULL);
  gsize n = (gsize) (d0 * MAX (d1, 1));
  g_autofree float *v = g_new (float, n);
  GRand *rand = g_rand_new_with_seed (seed);
  for (gsize i = 0; i < n; i++)
    v[i] = (float) g_rand_double_range (rand, -0.1, 0.4);
  g_rand_free (rand);
  g_assert_true (accel_buffer_write (b, (const guint8 *) v, n * sizeof (float), NULL));
  return b;
}

static AccelOp *
make_filter (AccelDevice *device, ItImage *src, ItImage *dst, gpointer data)
{
  const Filter *f = data;
  AccelOp *op = accel_filter_new (NULL, NULL, f->kind);
  it_set_src (op, src);
  it_set_dst (op, dst, FALSE);
  g_object_set (op, "sigma", f->sigma, "ksize", f->ksize, "dx", f->dx, "dy", f->dy, "border", f->border,
                "border-value", 77.0, NULL);
  if (f->kind == ACCEL_FILTER_SOBEL || f->kind == ACCEL_FILTER_SCHARR)
    g_object_set (op, "scale", 0.05, "delta", 100.0, NULL);
  if (f->kind == ACCEL_FILTER_SEPARABLE)
    {
      /* The same values on both devices: the same seed. */
      g_autoptr(AccelBuffer) kx = kernel_buffer (device, 7, 0, 1);
      g_autoptr(AccelBuffer) ky = kernel_buffer (device, 4, 0, 2);
      g_object_set (op, "kernel", kx, "kernel-y", ky, NULL);
    }
  if (f->kind == ACCEL_FILTER_KERNEL)
    {
      g_autoptr(AccelBuffer) k = kernel_buffer (device, 5, 6, 3);
      g_object_set (op, "kernel", k, NULL);
    }
  return op;
}

static void
test_filter (void)
{
  static const Filter filters[] = {
    { ACCEL_FILTER_GAUSSIAN, 2.0, 0, 0, 0, ACCEL_BORDER_REFLECT_101 },
    { ACCEL_FILTER_GAUSSIAN, 10.0, 0, 0, 0, ACCEL_BORDER_CONSTANT },   /* two passes: too large for a tile */
    { ACCEL_FILTER_BOX, 1.0, 6, 0, 0, ACCEL_BORDER_REPLICATE },
    { ACCEL_FILTER_SOBEL, 1.0, 5, 1, 1, ACCEL_BORDER_REFLECT_101 },
    { ACCEL_FILTER_SCHARR, 1.0, 3, 0, 1, ACCEL_BORDER_REPLICATE },
    { ACCEL_FILTER_SEPARABLE, 1.0, 0, 0, 0, ACCEL_BORDER_CONSTANT },
    { ACCEL_FILTER_KERNEL, 1.0, 0, 0, 0, ACCEL_BORDER_REFLECT_101 },
  };
  if (!ct_gpu ())
    return;
  for (guint i = 0; i < G_N_ELEMENTS (filters); i++)
    for (guint k = 0; k < 2; k++)
      {
        AccelImageFormat f = it_all_formats[(2 * i + k) % IT_N_FORMATS];
        Size s = sizes[(i + k) % G_N_ELEMENTS (sizes)];
        run_both ("filter", f, s, f, s, make_filter, (gpointer) &filters[i],
                  filters[i].kind == ACCEL_FILTER_KERNEL ? 0 : 1);
      }
  /* The bench's shape: 1080p-like RGBA, Gaussian of sigma 2. */
  run_both ("filter", ACCEL_IMAGE_FORMAT_RGBA, (Size) { 1917, 1079 }, ACCEL_IMAGE_FORMAT_RGBA,
            (Size) { 1917, 1079 }, make_filter, (gpointer) &filters[0], 1);
}

typedef struct {
  AccelMorphologyOp operation;
  AccelMorphologyShape shape;
  int kw, kh;
} Morph;

static AccelOp *
make_morphology (AccelDevice *device, ItImage *src, ItImage *dst, gpointer data)
{
  const Morph *m = data;
  AccelOp *op = accel_morphology_new (NULL, NULL, m->operation);
  it_set_src (op, src);
  it_set_dst (op, dst, FALSE);
  g_object_set (op, "shape", m->shape, "ksize", m->kw, "ksize-y", m->kh, NULL);
  return op;
}

static void
test_morphology (void)
{
  if (!ct_gpu ())
    return;
  for (guint i = 0; i < 8; i++)
    {
      Morph m = { i % 4, i / 4, 3 + 2 * (int) (i % 3), 2 + (int) (i % 5) };
      AccelImageFormat f = it_all_formats[i % IT_N_FORMATS];
      Size s = sizes[i % G_N_ELEMENTS (sizes)];
      run_both ("morphology", f, s, f, s, make_morphology, &m, 0);
    }
}

typedef struct {
  gboolean perspective;
  int method;
  AccelBorderMode border;
  double m[9];
} Warp;

static AccelOp *
make_warp (AccelDevice *device, ItImage *src, ItImage *dst, gpointer data)
{
  const Warp *w = data;
  AccelOp *op = w->perspective ? accel_warp_perspective_new (NULL, NULL) : accel_warp_affine_new (NULL, NULL);
  it_set_src (op, src);
  it_set_dst (op, dst, TRUE);
  for (int i = 0; i < (w->perspective ? 9 : 6); i++)
    {
      g_autofree char *name = g_strdup_printf ("m%d%d", i / 3, i % 3);
      g_object_set (op, name, w->m[i], NULL);
    }
  g_object_set (op, "method", w->method, "border", w->border, "border-value", 200.0, NULL);
  return op;
}

static void
test_warp (void)
{
  if (!ct_gpu ())
    return;
  for (guint i = 0; i < 12; i++)
    {
      AccelImageFormat f = it_all_formats[i % IT_N_FORMATS];
      Size ss = sizes[i % G_N_ELEMENTS (sizes)];
      Size ds = { MAX (1, ss.w * 4 / 5), MAX (1, ss.h + 3) };
      Warp w = { i % 2, (int) (i / 2) % 3, (AccelBorderMode) (i % 3),
                 { 0.93, 0.21, -3.5, -0.17, 1.08, 4.25, i % 2 ? 1.5e-4 : 0, i % 2 ? -2e-4 : 0, 1.0 } };
      run_both (w.perspective ? "warp-perspective" : "warp-affine", f, ss, f, ds, make_warp, &w, 0);
    }
}

/* Rows not padded, widths a multiple of 4: 4-byte aligned RGBA rows and
 * even NV12 rows, the layouts for which the kernels read and write whole
 * pixels, and the filter's interior tiles their pixels without border
 * arithmetic (radius 1 to 4, and sigma 2's 6). */
static void
test_aligned (void)
{
  if (!ct_gpu ())
    return;
  const Size frame = { 640, 360 }, half = { 320, 180 };
  for (int method = 0; method < 4; method++)
    {
      Convert c = { method, ACCEL_COLOR_MATRIX_BT709, ACCEL_COLOR_RANGE_LIMITED, ACCEL_CHROMA_SITING_MPEG2 };
      run_layout ("convert-color aligned", ACCEL_IMAGE_FORMAT_NV12, frame, ACCEL_IMAGE_FORMAT_RGBA, half,
                  make_convert, &c, 0, FALSE);
      run_layout ("convert-color aligned", ACCEL_IMAGE_FORMAT_RGBA, frame, ACCEL_IMAGE_FORMAT_NV12, half,
                  make_convert, &c, 0, FALSE);
      /* The YUV to 4-channel kernels: I420 halved, and both at full size
       * (luma one tap an axis). */
      run_layout ("convert-color aligned", ACCEL_IMAGE_FORMAT_I420, frame, ACCEL_IMAGE_FORMAT_RGBA, half,
                  make_convert, &c, 0, FALSE);
      run_layout ("convert-color aligned", ACCEL_IMAGE_FORMAT_NV12, frame, ACCEL_IMAGE_FORMAT_BGRA, frame,
                  make_convert, &c, 0, FALSE);
      run_layout ("convert-color aligned", ACCEL_IMAGE_FORMAT_I420, frame, ACCEL_IMAGE_FORMAT_RGBA, frame,
                  make_convert, &c, 0, FALSE);
      run_layout ("resize aligned", ACCEL_IMAGE_FORMAT_RGBA, frame, ACCEL_IMAGE_FORMAT_RGBA, half, make_resize,
                  GINT_TO_POINTER (method), 0, FALSE);
    }
  static const Filter filters[] = {
    { ACCEL_FILTER_GAUSSIAN, 2.0, 0, 0, 0, ACCEL_BORDER_REFLECT_101 },
    { ACCEL_FILTER_GAUSSIAN, 1.0, 3, 0, 0, ACCEL_BORDER_CONSTANT },
    { ACCEL_FILTER_GAUSSIAN, 1.5, 5, 0, 0, ACCEL_BORDER_REPLICATE },
    { ACCEL_FILTER_BOX, 1.0, 7, 0, 0, ACCEL_BORDER_REFLECT_101 },
    { ACCEL_FILTER_GAUSSIAN, 1.8, 9, 0, 0, ACCEL_BORDER_REPLICATE },
  };
  for (guint i = 0; i < G_N_ELEMENTS (filters); i++)
    run_layout ("filter aligned", ACCEL_IMAGE_FORMAT_RGBA, frame, ACCEL_IMAGE_FORMAT_RGBA, frame, make_filter,
                (gpointer) &filters[i], 1, FALSE);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cuda/image/convert-color", test_convert);
  g_test_add_func ("/cuda/image/resize", test_resize);
  g_test_add_func ("/cuda/image/filter", test_filter);
  g_test_add_func ("/cuda/image/morphology", test_morphology);
  g_test_add_func ("/cuda/image/warp", test_warp);
  g_test_add_func ("/cuda/image/aligned", test_aligned);
  return ct_run ();
}
