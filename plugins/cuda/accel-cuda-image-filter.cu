/* accel-cuda-image-filter.cu: filter and morphology on the GPU.
 *
 * Separable filters of up to TILE_MAX_TAPS taps run as one kernel over
 * tiles of TILE_W x TILE_H samples, a template on the channel count: each
 * thread filters a run of ROW_RUN samples of one row of the tile and its
 * halo, reading the source (through the border) once per tap window as
 * it slides along, whole pixels at a time (one 32-bit load for 8-bit
 * RGBA), into a shared array; then each thread filters COL_RUN samples of
 * one column down that array, sliding the same way, and stores whole
 * pixels. Every sum is taken in tap order with fused multiply-adds (so a
 * result may differ from the CPU kernel's, which does not fuse, by one
 * code value where a sum lies on a rounding boundary). Larger kernels
 * take two passes through a binary32 workspace. 2-D kernels and
 * morphology read global memory directly, in the CPU kernel's order (2-D:
 * unfused, so to the bit; morphology is exact anyway).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-cuda-image.cuh"

#define TILE_W 32
#define TILE_H 32
#define BLOCK_H 8
#define ROW_RUN 8                       /* samples per thread along a row */
#define COL_RUN (TILE_H / BLOCK_H)      /* samples per thread down a column */
#define TILE_MAX_TAPS 33
#define SMEM_LIMIT (48 * 1024)

/* The value of channel @c at (@x, @y) through the border, or its constant. */
__device__ __forceinline__ float
bordered (const AccelCudaFilter &f, int x, int y, int c)
{
  return accel_cuda_plane_bordered (f.src, x, y, c, f.border, f.border_value);
}

__device__ __forceinline__ void
store (const AccelCudaFilter &f, int x, int y, int c, float acc)
{
  accel_cuda_plane_put (f.dst, x, y, c, accel_image_quantize (acc * f.scale + f.delta, f.dst.maxv));
}

/* Whether @p holds 8-bit samples of 4 channels packed in 32-bit words. */
__device__ __forceinline__ bool
packed_u8x4 (const AccelCudaPlane &p)
{
  return p.depth == 1 && p.channels == 4 && p.pixel_step == 4 && p.channel_step == 1
      && ((uintptr_t) p.base & 3) == 0 && (p.stride & 3) == 0;
}

/* The @CH channels of pixel (@x, @y) through the border (@packed: as one
 * 32-bit word where inside the image). */
template <int CH>
__device__ __forceinline__ void
load_pixel (const AccelCudaFilter &f, bool packed, int x, int by, float *v)
{
  int bx = accel_image_border_index (x, f.src.width, f.border);
  if (bx < 0 || by < 0)
    {
#pragma unroll
      for (int k = 0; k < CH; k++)
        v[k] = f.border_value;
      return;
    }
  if (CH == 4 && packed)
    {
      uint32_t w = *(const uint32_t *) (f.src.base + by * f.src.stride + (int64_t) bx * 4);
#pragma unroll
      for (int k = 0; k < CH; k++)
        v[k] = (float) ((w >> (8 * k)) & 0xff);
      return;
    }
#pragma unroll
  for (int k = 0; k < CH; k++)
    v[k] = (float) accel_cuda_plane_get (f.src, bx, by, k);
}

static bool
tile_fits (const AccelCudaFilter *f)
{
  return f->nx <= TILE_MAX_TAPS && f->ny <= TILE_MAX_TAPS && f->src.channels <= 4;
}

/* The shared row-filtered tile: sample c of row r at r * ROW_PITCH + c *
 * CH + c / ROW_RUN (one float between runs, so that the threads of a warp
 * storing their runs, and reading a row, hit distinct banks). */
#define ROW_PITCH(ch) (TILE_W * (ch) + TILE_W / ROW_RUN)

static size_t
tile_bytes (const AccelCudaFilter *f)
{
  size_t rows = TILE_H + f->ny - 1;
  return sizeof (float) * (rows * ROW_PITCH (f->src.channels) + f->nx + f->ny);
}

/* Input @j of a run of RUN outputs with taps @w (@n of them): adds @v to
 * every output whose window holds it, so each output's sum runs in tap
 * order. */
template <int RUN, int CH>
__device__ __forceinline__ void
slide (float (&acc)[RUN][CH], const float *v, int j, const float *w, int n)
{
#pragma unroll
  for (int o = 0; o < RUN; o++)
    {
      int t = j - o;
      if (t >= 0 && t < n)
        {
          float wt = w[t];
#pragma unroll
          for (int k = 0; k < CH; k++)
            acc[o][k] = __fmaf_rn (wt, v[k], acc[o][k]);
        }
    }
}

template <int CH>
__global__ void __launch_bounds__ (TILE_W * BLOCK_H)
separable_tile_kernel (const AccelCudaFilter f)
{
  extern __shared__ float smem[];
  const int nx = f.nx, ny = f.ny, ax = nx / 2, ay = ny / 2;
  const int rows = TILE_H + ny - 1;
  float *inter = smem;                       /* [rows][ROW_PITCH] */
  float *kx = inter + rows * ROW_PITCH (CH);
  float *ky = kx + nx;
  const int x0 = blockIdx.x * TILE_W, y0 = blockIdx.y * TILE_H;
  const int tid = threadIdx.y * blockDim.x + threadIdx.x, nthreads = blockDim.x * blockDim.y;
  const bool packed = CH == 4 && packed_u8x4 (f.src);

  for (int i = tid; i < nx; i += nthreads)
    kx[i] = f.dkx ? f.dkx[i] : f.kx[i];
  for (int i = tid; i < ny; i += nthreads)
    ky[i] = f.dky ? f.dky[i] : f.ky[i];
  __syncthreads ();

  /* Along the rows, for every row of the tile and its halo: a run of
   * ROW_RUN outputs per thread, each input pixel read once and added to
   * every output whose window holds it, in tap order. */
  const int runs = TILE_W / ROW_RUN;
  for (int task = tid; task < rows * runs; task += nthreads)
    {
      int r = task / runs, c0 = (task % runs) * ROW_RUN;
      int by = accel_image_border_index (y0 - ay + r, f.src.height, f.border);
      float acc[ROW_RUN][CH] = {};
      for (int j = 0; j < ROW_RUN + nx - 1; j++)
        {
          float v[CH];
          load_pixel<CH> (f, packed, x0 + c0 - ax + j, by, v);
          slide<ROW_RUN, CH> (acc, v, j, kx, nx);
        }
      float *out = inter + r * ROW_PITCH (CH) + c0 * CH + c0 / ROW_RUN;
#pragma unroll
      for (int o = 0; o < ROW_RUN; o++)
#pragma unroll
        for (int k = 0; k < CH; k++)
          out[o * CH + k] = acc[o][k];
    }
  __syncthreads ();

  /* Down the columns: COL_RUN outputs per thread, the same way. */
  const int x = x0 + threadIdx.x, r0 = threadIdx.y * COL_RUN;
  float acc[COL_RUN][CH] = {};
  for (int j = 0; j < COL_RUN + ny - 1; j++)
    {
      const float *in = inter + (r0 + j) * ROW_PITCH (CH) + threadIdx.x * CH + threadIdx.x / ROW_RUN;
      float v[CH];
#pragma unroll
      for (int k = 0; k < CH; k++)
        v[k] = in[k];
      slide<COL_RUN, CH> (acc, v, j, ky, ny);
    }
  if (x >= f.dst.width)
    return;
  const bool packed_out = CH == 4 && packed_u8x4 (f.dst);
#pragma unroll
  for (int o = 0; o < COL_RUN; o++)
    {
      int y = y0 + r0 + o;
      if (y >= f.dst.height)
        break;
      if (packed_out)
        {
          uint32_t w = 0;
#pragma unroll
          for (int k = 0; k < CH; k++)
            w |= (uint32_t) accel_image_quantize (acc[o][k] * f.scale + f.delta, f.dst.maxv) << (8 * k);
          *(uint32_t *) (f.dst.base + y * f.dst.stride + (int64_t) x * 4) = w;
        }
      else
#pragma unroll
        for (int k = 0; k < CH; k++)
          store (f, x, y, k, acc[o][k]);
    }
}

/* Large separable kernels: rows into the workspace, then columns. */
__global__ void
rows_kernel (const AccelCudaFilter f, float *inter)
{
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= f.src.width || y >= f.src.height)
    return;
  const float *kx = f.dkx ? f.dkx : f.kx;
  for (int c = 0; c < f.src.channels; c++)
    {
      float acc = 0.0f;
      for (int t = 0; t < f.nx; t++)
        acc = __fmaf_rn (kx[t], bordered (f, x + t - f.nx / 2, y, c), acc);
      inter[((int64_t) y * f.src.width + x) * f.src.channels + c] = acc;
    }
}

__global__ void
columns_kernel (const AccelCudaFilter f, const float *inter)
{
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= f.dst.width || y >= f.dst.height)
    return;
  const float *kx = f.dkx ? f.dkx : f.kx, *ky = f.dky ? f.dky : f.ky;
  for (int c = 0; c < f.src.channels; c++)
    {
      float acc = 0.0f;
      for (int t = 0; t < f.ny; t++)
        {
          int row = accel_image_border_index (y + t - f.ny / 2, f.src.height, f.border);
          float v;
          if (row >= 0)
            v = inter[((int64_t) row * f.src.width + x) * f.src.channels + c];
          else
            {
              /* A row of the constant, filtered along. */
              v = 0.0f;
              for (int i = 0; i < f.nx; i++)
                v = __fmaf_rn (kx[i], f.border_value, v);
            }
          acc = __fmaf_rn (ky[t], v, acc);
        }
      store (f, x, y, c, acc);
    }
}

/* 2-D kernels, in the CPU kernel's order and rounding. */
__global__ void
direct_kernel (const AccelCudaFilter f)
{
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= f.dst.width || y >= f.dst.height)
    return;
  for (int c = 0; c < f.src.channels; c++)
    {
      float acc = 0.0f;
      for (int j = 0; j < f.ny; j++)
        for (int i = 0; i < f.nx; i++)
          acc += f.dk2[j * f.nx + i] * bordered (f, x + i - f.nx / 2, y + j - f.ny / 2, c);
      store (f, x, y, c, acc);
    }
}

extern "C" size_t
accel_cuda_filter_workspace (const AccelCudaFilter *f)
{
  if (!f->separable || (tile_fits (f) && tile_bytes (f) <= SMEM_LIMIT))
    return 0;
  return sizeof (float) * (size_t) f->src.width * f->src.height * f->src.channels;
}

extern "C" cudaError_t
accel_cuda_launch_filter (const AccelCudaFilter *f, float *workspace, cudaStream_t stream)
{
  dim3 block (32, 8);
  dim3 grid = accel_cuda_image_grid (f->dst.width, f->dst.height, block);

  if (!f->separable)
    direct_kernel<<<grid, block, 0, stream>>> (*f);
  else if (tile_fits (f) && tile_bytes (f) <= SMEM_LIMIT)
    {
      dim3 tiles ((unsigned) ((f->dst.width + TILE_W - 1) / TILE_W), (unsigned) ((f->dst.height + TILE_H - 1) / TILE_H));
      dim3 threads (TILE_W, BLOCK_H);
      size_t bytes = tile_bytes (f);
      switch (f->src.channels)
        {
        case 1: separable_tile_kernel<1><<<tiles, threads, bytes, stream>>> (*f); break;
        case 2: separable_tile_kernel<2><<<tiles, threads, bytes, stream>>> (*f); break;
        case 3: separable_tile_kernel<3><<<tiles, threads, bytes, stream>>> (*f); break;
        default: separable_tile_kernel<4><<<tiles, threads, bytes, stream>>> (*f); break;
        }
    }
  else
    {
      rows_kernel<<<grid, block, 0, stream>>> (*f, workspace);
      columns_kernel<<<grid, block, 0, stream>>> (*f, workspace);
    }
  return cudaGetLastError ();
}

/* morphology */

__global__ void
morphology_kernel (const AccelCudaMorphology m, const AccelCudaPlane src, const AccelCudaPlane dst, int dilate)
{
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= dst.width || y >= dst.height)
    return;
  const int ax = m.kw / 2, ay = m.kh / 2;
  for (int c = 0; c < src.channels; c++)
    {
      int v = dilate ? -1 : 0x7fffffff;
      for (int j = 0; j < m.kh; j++)
        {
          int r = y + j - ay;
          if (r < 0 || r >= src.height)
            continue;
          int i0 = max ((int) m.first[j], ax - x), i1 = min ((int) m.last[j], src.width - 1 + ax - x);
          for (int i = i0; i <= i1; i++)
            {
              int s = accel_cuda_plane_get (src, x + i - ax, r, c);
              v = dilate ? max (v, s) : min (v, s);
            }
        }
      accel_cuda_plane_put (dst, x, y, c, v);
    }
}

extern "C" cudaError_t
accel_cuda_launch_morphology (const AccelCudaMorphology *m, cudaStream_t stream)
{
  dim3 block (32, 8);
  dim3 grid = accel_cuda_image_grid (m->dst.width, m->dst.height, block);
  /* AccelMorphologyOp: erode, dilate, open, close. */
  int op = m->operation;
  int first_dilate = op == 1 || op == 3;
  if (op < 2)
    morphology_kernel<<<grid, block, 0, stream>>> (*m, m->src, m->dst, first_dilate);
  else
    {
      morphology_kernel<<<grid, block, 0, stream>>> (*m, m->src, m->tmp, first_dilate);
      morphology_kernel<<<grid, block, 0, stream>>> (*m, m->tmp, m->dst, !first_dilate);
    }
  return cudaGetLastError ();
}
