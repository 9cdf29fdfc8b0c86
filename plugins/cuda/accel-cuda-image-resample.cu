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
 * a thread writes one pixel, and its block finds the taps of its 32
 * columns and 8 rows once, into shared memory, rather than every thread
 * its own: the taps' arithmetic (binary64 coordinates, local arrays) and
 * a thread's rows one after another were what bound the kernel. Each
 * thread reads its bytes through the tap rows' addresses and the tap
 * columns' offsets; the arithmetic of a sample is the same, so are the
 * results. On the H100, 4K NV12 to 1080p RGBA: 155 GB/s before, 297
 * after (4 rows a thread with the rows' taps shared: 204; 1 row with
 * only those: 274).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-cuda-image.cuh"

#define ROWS_PER_THREAD 4
#define BLOCK_X 32
#define BLOCK_Y 8

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

/* sample() from 8-bit samples: @rows are the tap rows' addresses,
 * @cols the tap columns' byte offsets, @c_off the channel's. */
template <int MAXT>
__device__ __forceinline__ float
sample_u8 (const uint8_t *const (&rows)[MAXT], const int (&cols)[MAXT], const Taps<MAXT> &tx, const Taps<MAXT> &ty,
           int c_off)
{
  float acc = 0.0f;
#pragma unroll Taps<MAXT>::unroll
  for (int j = 0; j < MAXT; j++)
    {
      if (j >= tx.n)
        break;
      float v = 0.0f;
#pragma unroll Taps<MAXT>::unroll
      for (int k = 0; k < MAXT; k++)
        {
          if (k >= ty.n)
            break;
          v += ty.w[k] * (float) rows[k][cols[j] + c_off];
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
          int take = c < d.channels ? r.take[c] : ACCEL_CUDA_TAKE_OPAQUE;
          float v;
          if (take < 3)
            v = r.t[take * 4] * comp[0] + r.t[take * 4 + 1] * comp[1] + r.t[take * 4 + 2] * comp[2]
              + r.t[take * 4 + 3];
          else if (take == ACCEL_CUDA_TAKE_ALPHA)
            v = comp[3];
          else
            v = (float) d.maxv;
          out[c] = accel_image_quantize (v, d.maxv);
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

/* Destination rows a thread writes. */
template <bool U8>
constexpr int
rows_per_thread ()
{
  return U8 ? 1 : ROWS_PER_THREAD;
}

/* One thread: one destination column, rows_per_thread () rows of it (the
 * column's taps found once). U8: every source plane has 8-bit samples,
 * and the taps of the block's columns and rows come from shared memory
 * (see above). */
template <int MAXT, bool U8>
__global__ void __launch_bounds__ (BLOCK_X * BLOCK_Y, 2)
resample_kernel (const AccelCudaResample r)
{
  constexpr int ROWS = rows_per_thread<U8> ();
  constexpr int PLANES = ACCEL_CUDA_IMAGE_MAX_PLANES;
  static_assert (BLOCK_Y >= 2 * PLANES, "a row of the block's threads finds the taps of each plane and axis");
  static_assert (BLOCK_Y * ROWS <= BLOCK_X, "one thread of a row of the block finds the taps of a tile row");
  const int x = blockIdx.x * BLOCK_X + threadIdx.x;
  const int tile_y = blockIdx.y * BLOCK_Y * ROWS;
  const int y0 = tile_y + threadIdx.y * ROWS;
  const AccelCudaPlane &d = r.dst;

  __shared__ Taps<MAXT> row_taps[U8 ? PLANES : 1][U8 ? BLOCK_Y * ROWS : 1];
  __shared__ Taps<MAXT> col_taps[U8 ? PLANES : 1][U8 ? BLOCK_X : 1];
  if (U8)
    {
      /* Thread rows 0 .. PLANES - 1: the rows' taps of their plane; the
       * next PLANES: the columns'. */
      const int s = threadIdx.y % PLANES;
      const int i = threadIdx.x, y = tile_y + i;
      if (s < r.n_sources)
        {
          if (threadIdx.y < PLANES && i < BLOCK_Y * ROWS && y < d.height)
            taps_of (row_taps[s][i], r.ay[s], y, r.src[s].height);
          else if (threadIdx.y >= PLANES && threadIdx.y < 2 * PLANES && x < d.width)
            taps_of (col_taps[s][i], r.ax[s], x, r.src[s].width);
        }
      __syncthreads ();
    }
  if (x >= d.width || y0 >= d.height)
    return;

  Taps<MAXT> tx[PLANES];
  int cols[PLANES][MAXT];
#pragma unroll
  for (int s = 0; s < PLANES; s++)
    if (s < r.n_sources)
      {
        const AccelCudaPlane &p = r.src[s];
        if (U8)
          {
            tx[s] = col_taps[U8 ? s : 0][threadIdx.x];
#pragma unroll Taps<MAXT>::unroll
            for (int j = 0; j < MAXT; j++)
              cols[s][j] = accel_image_clampi (tx[s].first + j, 0, p.width - 1) * p.pixel_step;
          }
        else
          taps_of (tx[s], r.ax[s], x, p.width);
      }
  const bool packed = d.depth == 1 && d.channels == 4 && d.pixel_step == 4 && d.channel_step == 1
                   && ((uintptr_t) d.base & 3) == 0 && (d.stride & 3) == 0;

  for (int y = y0; y < y0 + ROWS && y < d.height; y++)
    {
      float res[PLANES][4];
#pragma unroll
      for (int s = 0; s < PLANES; s++)
        {
          if (s >= r.n_sources)
            break;
          const AccelCudaPlane &p = r.src[s];
          if (U8)
            {
              const Taps<MAXT> &ty = row_taps[U8 ? s : 0][y - tile_y];
              const uint8_t *rows[MAXT];
#pragma unroll Taps<MAXT>::unroll
              for (int k = 0; k < MAXT; k++)
                rows[k] = p.base + accel_image_clampi (ty.first + k, 0, p.height - 1) * p.stride;
#pragma unroll
              for (int c = 0; c < 4; c++)
                res[s][c] = c < p.channels ? sample_u8 (rows, cols[s], tx[s], ty, c * p.channel_step) : 0.0f;
            }
          else
            {
              Taps<MAXT> ty;
              taps_of (ty, r.ay[s], y, p.height);
#pragma unroll
              for (int c = 0; c < 4; c++)
                res[s][c] = c < p.channels ? sample (p, tx[s], ty, c) : 0.0f;
            }
        }

      store_pixel (r, packed, res, x, y);
    }
}

template <int MAXT, bool U8>
static void
launch (const AccelCudaResample *r, cudaStream_t stream)
{
  constexpr int rows = rows_per_thread<U8> ();
  dim3 block (BLOCK_X, BLOCK_Y);
  dim3 grid = accel_cuda_image_grid (r->dst.width, (r->dst.height + rows - 1) / rows, block);
  resample_kernel<MAXT, U8><<<grid, block, 0, stream>>> (*r);
}

extern "C" cudaError_t
accel_cuda_launch_resample (const AccelCudaResample *r, cudaStream_t stream)
{
  /* Area and lanczos3 take more taps than the fixed kernels' four. */
  bool wide = false, u8 = true;
  for (int s = 0; s < r->n_sources; s++)
    {
      wide = wide || accel_image_taps_needed (r->ax[s].method, r->ax[s].scale) > 4
                  || accel_image_taps_needed (r->ay[s].method, r->ay[s].scale) > 4;
      u8 = u8 && r->src[s].depth == 1;
    }
  if (wide)
    launch<ACCEL_IMAGE_MAX_TAPS, false> (r, stream);
  else if (u8)
    launch<4, true> (r, stream);
  else
    launch<4, false> (r, stream);
  return cudaGetLastError ();
}
