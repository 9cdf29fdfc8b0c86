/* accel-cuda-image-filter.cu: filter and morphology on the GPU.
 *
 * Separable filters run as one kernel over tiles: a block reads its tile
 * and the kernel's halo into shared memory once (the border applied
 * there), filters the rows into a second shared array, then the columns,
 * with fused multiply-adds (so a result may differ from the CPU kernel's,
 * which does not fuse, by one code value where a sum lies on a rounding
 * boundary). Kernels too large for a tile take two passes through a
 * binary32 workspace. 2-D kernels and morphology read global memory
 * directly, in the CPU kernel's order (2-D: unfused, so to the bit;
 * morphology is exact anyway).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-cuda-image.cuh"

#define TILE_W 32
#define TILE_H 16
#define BLOCK_H 8
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

static size_t
tile_bytes (const AccelCudaFilter *f)
{
  size_t rows = TILE_H + f->ny - 1, cols = TILE_W + f->nx - 1, ch = f->src.channels;
  return sizeof (float) * (rows * cols * ch + rows * TILE_W * ch + f->nx + f->ny);
}

__global__ void
separable_tile_kernel (const AccelCudaFilter f)
{
  extern __shared__ float smem[];
  const int ch = f.src.channels, nx = f.nx, ny = f.ny, ax = nx / 2, ay = ny / 2;
  const int rows = TILE_H + ny - 1, cols = TILE_W + nx - 1;
  float *in = smem;                          /* [rows][cols * ch] */
  float *inter = in + rows * cols * ch;      /* [rows][TILE_W * ch] */
  float *kx = inter + rows * TILE_W * ch;
  float *ky = kx + nx;
  const int x0 = blockIdx.x * TILE_W, y0 = blockIdx.y * TILE_H;
  const int tid = threadIdx.y * blockDim.x + threadIdx.x, nthreads = blockDim.x * blockDim.y;

  for (int i = tid; i < nx; i += nthreads)
    kx[i] = f.dkx ? f.dkx[i] : f.kx[i];
  for (int i = tid; i < ny; i += nthreads)
    ky[i] = f.dky ? f.dky[i] : f.ky[i];
  for (int i = tid; i < rows * cols; i += nthreads)
    {
      int r = i / cols, c = i % cols;
      for (int k = 0; k < ch; k++)
        in[(r * cols + c) * ch + k] = bordered (f, x0 - ax + c, y0 - ay + r, k);
    }
  __syncthreads ();

  /* Along the rows, for every row of the tile and its halo. */
  for (int i = tid; i < rows * TILE_W * ch; i += nthreads)
    {
      int r = i / (TILE_W * ch), rest = i % (TILE_W * ch);
      const float *src = in + r * cols * ch + rest;
      float acc = 0.0f;
      for (int t = 0; t < nx; t++)
        acc = __fmaf_rn (kx[t], src[t * ch], acc);
      inter[i] = acc;
    }
  __syncthreads ();

  /* Down the columns. */
  for (int i = tid; i < TILE_H * TILE_W * ch; i += nthreads)
    {
      int r = i / (TILE_W * ch), rest = i % (TILE_W * ch);
      int x = x0 + rest / ch, y = y0 + r, k = rest % ch;
      if (x >= f.dst.width || y >= f.dst.height)
        continue;
      const float *src = inter + r * TILE_W * ch + rest;
      float acc = 0.0f;
      for (int t = 0; t < ny; t++)
        acc = __fmaf_rn (ky[t], src[t * TILE_W * ch], acc);
      store (f, x, y, k, acc);
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
  if (!f->separable || tile_bytes (f) <= SMEM_LIMIT)
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
  else if (tile_bytes (f) <= SMEM_LIMIT)
    {
      dim3 tiles ((unsigned) ((f->dst.width + TILE_W - 1) / TILE_W), (unsigned) ((f->dst.height + TILE_H - 1) / TILE_H));
      separable_tile_kernel<<<tiles, dim3 (TILE_W, BLOCK_H), tile_bytes (f), stream>>> (*f);
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
