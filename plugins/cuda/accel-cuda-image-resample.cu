/* accel-cuda-image-resample.cu: resize and convert-color on the GPU.
 *
 * One thread per destination column and ROWS_PER_THREAD rows of it. Each
 * source plane a sample needs is sampled through the axis maps and taps
 * of accel-image-sampling.h (the CPU kernel's), summed in the CPU kernel's
 * order: down each tap column first, then along the row, in binary32
 * without fused multiply-adds (this library is built with -fmad=false),
 * so the results are the CPU's to the bit but where sinf() differs
 * (lanczos3). convert-color then maps the components through the same
 * affine transform.
 *
 * Where every source plane has 8-bit samples and no axis takes more than
 * four taps (the fixed methods: a video frame's conversion and scaling),
 * resample_u8_kernel runs instead, a template on the taps an axis (2 or
 * 4) and on the planes' channels (NV12's, I420's and RGBA's, and one for
 * any other layout), so that no loop runs over a count known only at
 * run time. Its block finds the taps of its 32 columns and 32 rows once,
 * one thread each, into shared memory; a thread writes 4 rows of one
 * column, reading each source pixel whole (one 16-bit load for NV12's
 * chroma, 32-bit for RGBA) where the channels are adjacent, all the
 * loads of a row before any sum; an axis whose taps are one sample at
 * weight 1 (nearest; bilinear or area where the samples coincide) reads
 * only that one. The arithmetic of a sample is the same, so are the
 * results. Conversions from NV12 and I420 to packed 4-channel pixels
 * have kernels of their own (FAST), which know where Y, U and V are and
 * that alpha is constant, and read a halved width's two luma taps as one
 * 16-bit load. On the H100, 4K NV12 to 1080p RGBA, timed by Nsight
 * Compute: 77.1 µs with the generic kernel, 26.1 µs with this one (1 row
 * a thread: 31.1; 2 rows: 28.1; 40 registers at 6 blocks a
 * multiprocessor: 31.3–34.0), 24.8 µs once each destination channel
 * became a row of coefficients rather than branches on what it takes
 * (16.8 M instructions); 20.4 µs with the loads of a row together, sums
 * that start at their first term and the one-tap axes (13.0 M); 14.0 µs
 * with the FAST kernels (8.8 M). Loading 2 or 4 rows before summing any
 * took 16.4 and 17.0 µs; 40 registers at 6 blocks, 14.0–14.2.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-cuda-image.cuh"

#define ROWS_PER_THREAD 4
#define BLOCK_X 32
#define BLOCK_Y 8
#define U8_ROWS 4                 /* rows a thread of the 8-bit kernel writes */
enum { FAST_YUV = 1, FAST_PAIRS = 2 };

/* The taps of one axis of one source plane, in registers where MAXT is
 * small (the loops below are unrolled to it). */
template <int MAXT>
struct Taps {
  float w[MAXT];
  int first, n;
  /* Tap loops are unrolled only for the fixed kernels' four. */
  static constexpr int unroll = MAXT <= 4 ? MAXT : 1;
};


template <int MAXT>
__device__ __forceinline__ void
taps_of (Taps<MAXT> &t, AccelImageAxis axis, int x, int n)
{
  float w[MAXT];
  t.n = accel_image_axis_taps (axis, x, n, w, MAXT, &t.first);
#pragma unroll Taps<MAXT>::unroll
  for (int j = 0; j < MAXT; j++)
    t.w[j] = j < t.n ? w[j] : 0.0f;
}

/* Channel @c of plane @p through the taps: down each tap column first,
 * then along the row, as the CPU kernel sums. */
template <int MAXT>
__device__ __forceinline__ float
sample (const AccelCudaPlane &p, const Taps<MAXT> &tx, const Taps<MAXT> &ty, int c)
{
  float acc = 0.0f;
#pragma unroll Taps<MAXT>::unroll
  for (int j = 0; j < MAXT; j++)
    {
      if (j >= tx.n)
        break;
      int sx = accel_image_clampi (tx.first + j, 0, p.width - 1);
      float v = 0.0f;
#pragma unroll Taps<MAXT>::unroll
      for (int k = 0; k < MAXT; k++)
        {
          if (k >= ty.n)
            break;
          v += ty.w[k] * (float) accel_cuda_plane_get (p, sx, accel_image_clampi (ty.first + k, 0, p.height - 1), c);
        }
      acc += tx.w[j] * v;
    }
  return acc;
}

/* res[i / 4][i % 4], or 0 for i outside them (a component no source
 * gives). */
__device__ __forceinline__ float
pick (const float (&res)[ACCEL_CUDA_IMAGE_MAX_PLANES][4], int i)
{
  static_assert (ACCEL_CUDA_IMAGE_MAX_PLANES == 3, "a case for every sum");
  switch (i)
    {
    case 0: return res[0][0];
    case 1: return res[0][1];
    case 2: return res[0][2];
    case 3: return res[0][3];
    case 4: return res[1][0];
    case 5: return res[1][1];
    case 6: return res[1][2];
    case 7: return res[1][3];
    case 8: return res[2][0];
    case 9: return res[2][1];
    case 10: return res[2][2];
    case 11: return res[2][3];
    default: return 0.0f;
    }
}

/* Destination pixel (@x, @y) from the sums @res of each source plane's
 * channels: channel for channel (resize) or through the colour transform
 * (convert-color); whole 8-bit RGBA pixels stored as one word. */
__device__ __forceinline__ void
store_pixel (const AccelCudaResample &r, bool packed, const float (&res)[ACCEL_CUDA_IMAGE_MAX_PLANES][4], int x,
             int y)
{
  const AccelCudaPlane &d = r.dst;
  int out[4];
  if (!r.convert)
    {
#pragma unroll
      for (int c = 0; c < 4; c++)
        out[c] = accel_image_quantize (res[0][c], d.maxv);
    }
  else
    {
      /* The components, picked by a switch on the launch's own choice
       * (the same in every thread): every case reads the sums with a
       * constant index, so they stay in registers. */
      float comp[4];
#pragma unroll
      for (int k = 0; k < 4; k++)
        comp[k] = pick (res, r.comp_source[k] < 0 ? -1 : r.comp_source[k] * 4 + r.comp_channel[k]);
#pragma unroll
      for (int c = 0; c < 4; c++)
        {
          /* ((a0 c0 + a1 c1) + a2 c2) + a3, then + a4 c3: a row of the
           * transform (a4 = 0), the alpha (a4 = 1, the rest 0) or full
           * opacity (a3 = maxv). A term of weight 0 adds ±0, which leaves
           * a sum as it is but for the sign of a zero, and quantising
           * makes no difference there: the values are the CPU's. */
          const float *a = r.rows[c];
          out[c] = accel_image_quantize (a[0] * comp[0] + a[1] * comp[1] + a[2] * comp[2] + a[3] + a[4] * comp[3],
                                         d.maxv);
        }
    }
  if (packed)
    *(uint32_t *) (d.base + y * d.stride + (int64_t) x * 4)
      = (uint32_t) out[0] | (uint32_t) out[1] << 8 | (uint32_t) out[2] << 16 | (uint32_t) out[3] << 24;
  else
#pragma unroll
    for (int c = 0; c < 4; c++)
      if (c < d.channels)
        accel_cuda_plane_put (d, x, y, c, out[c]);
}

/* FAST's store_pixel (): Y from plane 0, U and V from the chroma plane
 * (NSRC 2) or planes (3); destination channels
 * 0 to 2 through their rows (no alpha term: planar YUV has none, so the
 * term would add 0), channel 3 the constant of its row; one word. */
template <int NSRC>
__device__ __forceinline__ void
store_yuv_packed (const AccelCudaResample &r, const float (&res)[ACCEL_CUDA_IMAGE_MAX_PLANES][4], int x, int y)
{
  const AccelCudaPlane &d = r.dst;
  const float comp[3] = { res[0][0], res[1][0], NSRC == 2 ? res[1][1] : res[2][0] };
  uint32_t word = (uint32_t) accel_image_quantize (r.rows[3][3], d.maxv) << 24;
#pragma unroll
  for (int c = 0; c < 3; c++)
    {
      const float *a = r.rows[c];
      word |= (uint32_t) accel_image_quantize (a[0] * comp[0] + a[1] * comp[1] + a[2] * comp[2] + a[3], d.maxv)
              << (8 * c);
    }
  *(uint32_t *) (d.base + y * d.stride + (int64_t) x * 4) = word;
}

/* The generic kernel: one thread per destination column and
 * ROWS_PER_THREAD rows of it (the column's taps found once). */
template <int MAXT>
__global__ void __launch_bounds__ (BLOCK_X * BLOCK_Y, 2)
resample_kernel (const AccelCudaResample r)
{
  constexpr int PLANES = ACCEL_CUDA_IMAGE_MAX_PLANES;
  const int x = blockIdx.x * BLOCK_X + threadIdx.x;
  const int y0 = (blockIdx.y * BLOCK_Y + threadIdx.y) * ROWS_PER_THREAD;
  const AccelCudaPlane &d = r.dst;
  if (x >= d.width || y0 >= d.height)
    return;

  Taps<MAXT> tx[PLANES];
#pragma unroll
  for (int s = 0; s < PLANES; s++)
    if (s < r.n_sources)
      taps_of (tx[s], r.ax[s], x, r.src[s].width);
  const bool packed = packed_u8x4 (d);

  for (int y = y0; y < y0 + ROWS_PER_THREAD && y < d.height; y++)
    {
      float res[PLANES][4];
#pragma unroll
      for (int s = 0; s < PLANES; s++)
        {
          if (s >= r.n_sources)
            break;
          const AccelCudaPlane &p = r.src[s];
          Taps<MAXT> ty;
          taps_of (ty, r.ay[s], y, p.height);
#pragma unroll
          for (int c = 0; c < 4; c++)
            res[s][c] = c < p.channels ? sample (p, tx[s], ty, c) : 0.0f;
        }
      store_pixel (r, packed, res, x, y);
    }
}

/* The 8-bit kernel's taps of a block of BLOCK_X columns and ROWS rows:
 * for each source plane and tap, its columns' byte offsets and weights and
 * its rows' addresses and weights. A pixel with fewer taps than T has the
 * rest at weight zero (at a clamped, readable sample): adding w × v with
 * w = 0 to a sum that is not -0 (no sum of these is) leaves it as it is,
 * so the result is the CPU kernel's, which stops at the pixel's last tap. */
template <int T, int NSRC, int ROWS>
struct BlockTaps {
  int col[NSRC][T][BLOCK_X];
  float col_w[NSRC][T][BLOCK_X];
  const uint8_t *row[NSRC][T][ROWS];
  float row_w[NSRC][T][ROWS];
};

/* The CH channels of the pixel at @at, one per byte of the result: one
 * load where @whole (the channels adjacent and the pixel aligned to its
 * size), else a load a channel, @step apart, of the @n there are. */
template <int CH>
__device__ __forceinline__ uint32_t
load_pixel_u8 (const uint8_t *at, bool whole, int step, int n)
{
  if (CH == 4 && whole)
    return __ldg ((const unsigned int *) at);
  if (CH == 2 && whole)
    return __ldg ((const unsigned short *) at);
  uint32_t px = 0;
#pragma unroll
  for (int c = 0; c < CH; c++)
    if (c < n)
      px |= (uint32_t) __ldg (at + c * step) << (8 * c);
  return px;
}

/* The source pixels plane @s's sample at block row @ly reads, px[j][k]
 * at its column tap j and row tap k: only tap 0 of an axis that takes
 * one (@one_x, @one_y: the same in every thread). With PAIR (1-channel
 * 8-bit samples whose two column taps the launch has found adjacent and
 * 2-byte aligned in every column) a row's two are one 16-bit load. */
template <int T, int NSRC, int ROWS, int CH, bool PAIR = false>
__device__ __forceinline__ void
gather (const BlockTaps<T, NSRC, ROWS> &b, int s, const int (&cols)[T], int ly, const AccelCudaPlane &p,
        bool whole, bool one_x, bool one_y, uint32_t (&px)[T][T])
{
  static_assert (!PAIR || (CH == 1 && T == 2), "pairs of 1-channel samples");
#pragma unroll
  for (int k = 0; k < T; k++)
    {
      if (k > 0 && one_y)
        break;
      const uint8_t *row = b.row[s][k][ly];
      if constexpr (PAIR)
        {
          const uint32_t w = __ldg ((const unsigned short *) (row + cols[0]));
          px[0][k] = w & 0xff;
          px[1][k] = w >> 8;
        }
      else
#pragma unroll
        for (int j = 0; j < T; j++)
          if (j == 0 || !one_x)
            px[j][k] = load_pixel_u8<CH> (row + cols[j], whole, p.channel_step, p.channels);
    }
}

/* The CH channels of plane @s at block row @ly from the pixels gather ()
 * read, summed as sample () sums: down each tap column, then along the
 * row. A sum starts at its first term, not at 0 + that term, which can
 * differ only in the sign of a zero (quantising makes both 0); a tap of
 * weight 0 is left out, which leaves a sum as it is. */
template <int T, int NSRC, int ROWS, int CH>
__device__ __forceinline__ void
reduce (const BlockTaps<T, NSRC, ROWS> &b, int s, const float (&col_w)[T], int ly, bool one_x, bool one_y,
        const uint32_t (&px)[T][T], float (&res)[4])
{
  float acc[CH];
#pragma unroll
  for (int j = 0; j < T; j++)
    {
      if (j > 0 && one_x)
        break;
      float v[CH];
#pragma unroll
      for (int k = 0; k < T; k++)
        {
          if (k > 0 && one_y)
            break;
          const float wy = b.row_w[s][k][ly];
#pragma unroll
          for (int c = 0; c < CH; c++)
            {
              const float t = wy * (float) ((px[j][k] >> (8 * c)) & 0xff);
              v[c] = k == 0 ? t : v[c] + t;
            }
        }
#pragma unroll
      for (int c = 0; c < CH; c++)
        {
          const float t = col_w[j] * v[c];
          acc[c] = j == 0 ? t : acc[c] + t;
        }
    }
#pragma unroll
  for (int c = 0; c < CH; c++)
    res[c] = acc[c];
}

/* Every source plane 8-bit, at most T taps an axis, plane s of CH_s
 * channels at most (0: none; the launch picks these from the formats,
 * with <4, 4, 4> for any other layout). A block writes BLOCK_X columns
 * and BLOCK_Y × U8_ROWS rows, a thread one column of U8_ROWS of them
 * (BLOCK_Y apart), each pixel at once. The block finds the taps of its
 * columns and rows once, one thread each, into shared memory: the taps'
 * arithmetic (binary64 coordinates) and the loops that a run-time count
 * of planes, channels and taps leaves were what bound the kernel.
 *
 * FAST (FAST_YUV or FAST_PAIRS): the launch has found what the kernel
 * would otherwise ask of each pixel: convert-color from planar YUV (no
 * alpha) to packed 8-bit pixels of 4 channels whose fourth is constant,
 * the components Y, U and V in the order of the planes, every source
 * plane's pixels whole and 2-byte aligned; FAST_PAIRS: and the
 * luma columns' two taps adjacent, the first even (a halving of width,
 * bilinear), so a row's two are one 16-bit load. */
template <int T, int CH0, int CH1, int CH2, int FAST>
/* 8 blocks a multiprocessor: 32 registers (a few bytes spill), faster
 * than 40 at 6 blocks (H100, 4K NV12 to 1080p RGBA: 26.1 µs against 34.0). */
__global__ void __launch_bounds__ (BLOCK_X * BLOCK_Y, 8)
resample_u8_kernel (const AccelCudaResample r)
{
  constexpr int NSRC = CH2 ? 3 : CH1 ? 2 : 1;
  constexpr int CH[3] = { CH0, CH1, CH2 };
  constexpr int ROWS = BLOCK_Y * U8_ROWS;
  static_assert (NSRC * (BLOCK_X + ROWS) <= BLOCK_X * BLOCK_Y, "a thread a column or row of a plane");
  static_assert (!FAST || (CH0 == 1 && NSRC > 1 && CH1 * (NSRC - 1) == 2), "FAST converts from planar YUV");
  __shared__ BlockTaps<T, NSRC, ROWS> b;
  const AccelCudaPlane &d = r.dst;
  const int x = blockIdx.x * BLOCK_X + threadIdx.x, y0 = blockIdx.y * ROWS;

  /* The <4, 4, 4> kernel may have fewer planes than NSRC: those past
   * n_sources are neither found nor sampled (their sums stay 0). */
  const int task = threadIdx.y * BLOCK_X + threadIdx.x;
  if (task < min (NSRC, r.n_sources) * (BLOCK_X + ROWS))
    {
      const int s = task / (BLOCK_X + ROWS), i = task % (BLOCK_X + ROWS);
      const AccelCudaPlane &p = r.src[s];
      const bool is_col = i < BLOCK_X;
      const int at = is_col ? blockIdx.x * BLOCK_X + i : y0 + i - BLOCK_X;
      float w[T];
      int first = 0, n = 0;
      if (at < (is_col ? d.width : d.height))
        n = accel_image_axis_taps (is_col ? r.ax[s] : r.ay[s], at, is_col ? p.width : p.height, w, T, &first);
#pragma unroll
      for (int j = 0; j < T; j++)
        {
          const float wj = j < n ? w[j] : 0.0f;
          if (is_col)
            {
              b.col[s][j][i] = accel_image_clampi (first + j, 0, p.width - 1) * p.pixel_step;
              b.col_w[s][j][i] = wj;
            }
          else
            {
              b.row[s][j][i - BLOCK_X] = p.base + accel_image_clampi (first + j, 0, p.height - 1) * p.stride;
              b.row_w[s][j][i - BLOCK_X] = wj;
            }
        }
    }
  __syncthreads ();
  if (x >= d.width)
    return;

  int cols[NSRC][T];
  float col_w[NSRC][T];
  bool whole[NSRC], one_x[NSRC], one_y[NSRC];
#pragma unroll
  for (int s = 0; s < NSRC; s++)
    {
      const AccelCudaPlane &p = r.src[s];
      whole[s] = FAST || whole_pixels (p, CH[s]);
      one_x[s] = (r.one_tap >> (2 * s)) & 1;
      one_y[s] = (r.one_tap >> (2 * s + 1)) & 1;
#pragma unroll
      for (int j = 0; j < T; j++)
        {
          cols[s][j] = b.col[s][j][threadIdx.x];
          col_w[s][j] = b.col_w[s][j][threadIdx.x];
        }
    }
  const bool packed = FAST || packed_u8x4 (d);
#pragma unroll
  for (int i = 0; i < U8_ROWS; i++)
    {
      const int ly = threadIdx.y + i * BLOCK_Y;
      if (y0 + ly >= d.height)
        break;
      uint32_t px[NSRC][T][T];
      gather<T, NSRC, ROWS, CH0, FAST == FAST_PAIRS> (b, 0, cols[0], ly, r.src[0], whole[0], one_x[0], one_y[0], px[0]);
      if constexpr (NSRC > 1)
        if (FAST || r.n_sources > 1)
          gather<T, NSRC, ROWS, CH1> (b, 1, cols[1], ly, r.src[1], whole[1], one_x[1], one_y[1], px[1]);
      if constexpr (NSRC > 2)
        if (FAST || r.n_sources > 2)
          gather<T, NSRC, ROWS, CH2> (b, 2, cols[2], ly, r.src[2], whole[2], one_x[2], one_y[2], px[2]);
      float res[ACCEL_CUDA_IMAGE_MAX_PLANES][4] = {};
      reduce<T, NSRC, ROWS, CH0> (b, 0, col_w[0], ly, one_x[0], one_y[0], px[0], res[0]);
      if constexpr (NSRC > 1)
        if (FAST || r.n_sources > 1)
          reduce<T, NSRC, ROWS, CH1> (b, 1, col_w[1], ly, one_x[1], one_y[1], px[1], res[1]);
      if constexpr (NSRC > 2)
        if (FAST || r.n_sources > 2)
          reduce<T, NSRC, ROWS, CH2> (b, 2, col_w[2], ly, one_x[2], one_y[2], px[2], res[2]);
      if constexpr (FAST != 0)
        store_yuv_packed<NSRC> (r, res, x, y0 + ly);
      else
        store_pixel (r, packed, res, x, y0 + ly);
    }
}

template <int T, int CH0, int CH1, int CH2, int FAST = 0>
static void
launch_u8 (const AccelCudaResample *r, cudaStream_t stream)
{
  dim3 block (BLOCK_X, BLOCK_Y);
  dim3 grid = accel_cuda_image_grid (r->dst.width, (r->dst.height + U8_ROWS - 1) / U8_ROWS, block);
  resample_u8_kernel<T, CH0, CH1, CH2, FAST><<<grid, block, 0, stream>>> (*r);
}

/* Which FAST kernel may run @r, NV12's (@nsrc 2) or I420's (3), or 0
 * (see resample_u8_kernel). */
static int
fast_yuv (const AccelCudaResample *r, int nsrc)
{
  const AccelCudaPlane &d = r->dst;
  if (!r->convert || r->n_sources != nsrc || r->take[3] != ACCEL_CUDA_TAKE_OPAQUE || !packed_u8x4 (d))
    return 0;
  for (int s = 0; s < nsrc; s++)
    {
      const AccelCudaPlane &p = r->src[s];
      if (!whole_pixels (p, p.channels) || (((uintptr_t) p.base | (uintptr_t) p.stride) & 1))
        return 0;
    }
  /* Y, U, V: (0, 0), (1, 0), (1, 1) for NV12, (0, 0), (1, 0), (2, 0) for
   * I420; no alpha. */
  const int *cs = r->comp_source, *cc = r->comp_channel;
  if (cs[0] != 0 || cc[0] != 0 || cs[1] != 1 || cc[1] != 0 || cs[2] != (nsrc == 2 ? 1 : 2)
      || cc[2] != (nsrc == 2 ? 1 : 0) || cs[3] >= 0)
    return 0;
  /* Luma pairs: a bilinear halving of width whose samples lie at 2 x + f,
   * f 0 or 1/2 (so tap 0 is 2 x, tap 1 2 x + 1, never clamped). */
  const AccelImageAxis &ax = r->ax[0];
  const bool pairs = ax.method == ACCEL_IMAGE_BILINEAR && ax.num_a == 2 * ax.den
                     && (ax.num_b == 0 || 2 * ax.num_b == ax.den) && r->src[0].width == 2 * d.width;
  return pairs ? FAST_PAIRS : FAST_YUV;
}

/* NV12 (CH1 2) or I420 (CH1 and CH2 1): the FAST kernel fast_yuv ()
 * allows, else the format's own. */
template <int T, int CH1, int CH2>
static void
launch_yuv (const AccelCudaResample *r, cudaStream_t stream)
{
  switch (fast_yuv (r, CH2 ? 3 : 2))
    {
    case FAST_PAIRS: launch_u8<T, 1, CH1, CH2, T == 2 ? FAST_PAIRS : FAST_YUV> (r, stream); break;
    case FAST_YUV: launch_u8<T, 1, CH1, CH2, FAST_YUV> (r, stream); break;
    default: launch_u8<T, 1, CH1, CH2> (r, stream); break;
    }
}

/* The 8-bit kernel for the planes' channels: NV12's, I420's and RGBA's
 * its own, any other layout the one of 4 channels a plane at most. */
template <int T>
static void
launch_u8_planes (const AccelCudaResample *r, cudaStream_t stream)
{
  int ch[ACCEL_CUDA_IMAGE_MAX_PLANES] = { 0, 0, 0 };
  for (int s = 0; s < r->n_sources; s++)
    ch[s] = r->src[s].channels;
  if (ch[0] == 1 && ch[1] == 2 && ch[2] == 0)
    launch_yuv<T, 2, 0> (r, stream);
  else if (ch[0] == 1 && ch[1] == 1 && ch[2] == 1)
    launch_yuv<T, 1, 1> (r, stream);
  else if (ch[0] == 4 && ch[1] == 0)
    launch_u8<T, 4, 0, 0> (r, stream);
  else
    launch_u8<T, 4, 4, 4> (r, stream);
}

template <int MAXT>
static void
launch (const AccelCudaResample *r, cudaStream_t stream)
{
  dim3 block (BLOCK_X, BLOCK_Y);
  dim3 grid = accel_cuda_image_grid (r->dst.width, (r->dst.height + ROWS_PER_THREAD - 1) / ROWS_PER_THREAD, block);
  resample_kernel<MAXT><<<grid, block, 0, stream>>> (*r);
}

/* Whether every destination index of @a reads one source sample at
 * weight 1, its other taps at weight 0: nearest, and bilinear or area
 * where source and destination samples coincide (a scale of 1 and a
 * whole offset: (num_a x + num_b) / den is then a whole number, which
 * the binary64 coordinate, rounded to binary32, is exactly). */
static bool
one_tap (const AccelImageAxis &a)
{
  if (a.method == ACCEL_IMAGE_NEAREST)
    return true;
  return (a.method == ACCEL_IMAGE_BILINEAR || a.method == ACCEL_IMAGE_AREA) && a.scale == 1.0f && a.num_a == a.den
         && a.num_b % a.den == 0;
}

/* @r with its rows: what each destination channel takes, as the
 * coefficients store_pixel () applies without a branch; and the axes that
 * take one tap. */
static AccelCudaResample
with_rows (const AccelCudaResample *r)
{
  AccelCudaResample out = *r;
  out.one_tap = 0;
  for (int s = 0; s < r->n_sources; s++)
    out.one_tap |= (one_tap (r->ax[s]) ? 1 : 0) << (2 * s) | (one_tap (r->ay[s]) ? 1 : 0) << (2 * s + 1);
  for (int c = 0; c < 4; c++)
    {
      float *a = out.rows[c];
      int take = c < r->dst.channels ? r->take[c] : ACCEL_CUDA_TAKE_OPAQUE;
      for (int k = 0; k < 5; k++)
        a[k] = take < 3 && k < 4 ? r->t[take * 4 + k] : 0.0f;
      if (take == ACCEL_CUDA_TAKE_ALPHA)
        a[4] = 1.0f;
      else if (take == ACCEL_CUDA_TAKE_OPAQUE)
        a[3] = (float) r->dst.maxv;
    }
  return out;
}

extern "C" cudaError_t
accel_cuda_launch_resample (const AccelCudaResample *in, cudaStream_t stream)
{
  const AccelCudaResample rows = with_rows (in), *r = &rows;
  /* Area and lanczos3 may take more taps than the fixed kernels' four. */
  int taps = 1;
  bool u8 = true;
  for (int s = 0; s < r->n_sources; s++)
    {
      taps = max (taps, max (accel_image_taps_needed (r->ax[s].method, r->ax[s].scale),
                             accel_image_taps_needed (r->ay[s].method, r->ay[s].scale)));
      u8 = u8 && r->src[s].depth == 1;
    }
  if (taps > 4)
    launch<ACCEL_IMAGE_MAX_TAPS> (r, stream);
  else if (!u8)
    launch<4> (r, stream);
  else if (taps <= 2)
    launch_u8_planes<2> (r, stream);
  else
    launch_u8_planes<4> (r, stream);
  return cudaGetLastError ();
}
