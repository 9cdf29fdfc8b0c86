/* accel-cuda-image-filter.cu: filter and morphology on the GPU.
 *
 * Separable filters of up to TILE_MAX_TAPS taps run as one kernel over
 * tiles of TILE_W x TILE_H samples, a template on the channel count. The
 * block reads the tile and its halo (through the border) once into
 * shared memory, whole pixels at a time (one 32-bit load for 8-bit RGBA),
 * as binary32; each thread then filters ROW_RUN samples of one row of it
 * and COL_RUN of one column of the row-filtered array, each input pixel
 * read once into a window of registers that slides along the taps. Every
 * sum is taken in tap order with fused multiply-adds (so a result may
 * differ from the CPU kernel's, which does not fuse, by one code value
 * where a sum lies on a rounding boundary); the results are those of the
 * sliding kernel before this one, which had each thread test every
 * (input, output) pair of its run against the taps. A 1080p RGBA
 * Gaussian of sigma 2 on the H100 (Nsight Compute): 52.4 µs before;
 * 44.2 with the register windows (8 samples a row-run: 52.4); 37.8 with
 * the tile's loads in flight together (LOAD_ROWS 4: 39.4); 33.8 with
 * the interior tiles' loads free of border arithmetic; 27.7 with a
 * kernel for each odd tap count to 17 (1 and 4 channels, the same taps on
 * both axes), unrolled whole with the weights as operands (23.3 M
 * instructions to 19.0 M; tiles of 48 and 64 rows: 27.8 and 28.3).
 * Larger kernels take two passes through a binary32 workspace; a tile that needs more than 48 KiB of shared memory
 * opts into what the device gives a block. 2-D kernels and
 * morphology read global memory directly, in the CPU kernel's order (2-D:
 * unfused, so to the bit; morphology is exact anyway).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-cuda-image.cuh"
#include "accel-cuda-smem.cuh"

#define TILE_W 32
#define TILE_H 32
#define BLOCK_H 8
#define ROW_RUN 4                       /* samples per thread along a row */
#define LOAD_ROWS 2                     /* rows of source pixels a thread loads at once */
#define COL_RUN (TILE_H / BLOCK_H)      /* samples per thread down a column */
#define TILE_MAX_TAPS 33

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

static size_t tile_bytes (const AccelCudaFilter *f);

/* Whether @f runs as tiles on the current device: past the default 48 KiB
 * a block opts into the shared memory the device gives one (227 KiB on
 * sm_90, 163 on sm_80). */
static bool
tile_fits (const AccelCudaFilter *f)
{
  if (f->nx > TILE_MAX_TAPS || f->ny > TILE_MAX_TAPS || f->src.channels > 4)
    return false;
  return tile_bytes (f) <= (size_t) accel_cuda_smem_optin ();
}

/* One pixel of CH channels in shared memory, aligned so that a pixel of
 * 4 (or 2) channels is one 16-byte (8-byte) access. */
template <int CH>
struct __align__ (CH == 4 ? 16 : CH == 2 ? 8 : 4) Pixel {
  float v[CH];
};

/* The pitches, in pixels, of the tile's two arrays: odd, so that the
 * threads of a warp reading down a column of pixels (one a row) meet no
 * bank twice. */
#define IN_PITCH(nx) ((TILE_W + (nx) - 1) | 1)
#define INTER_PITCH (TILE_W + 1)
/* Where the column kernel starts after the row kernel, in floats: at a
 * multiple of 4, so that four of its taps are one 16-byte load. */
#define KY_AT(nx) (((nx) + 3) & ~3)

/* The shared memory of a tile: the source pixels it reads, [rows]
 * [IN_PITCH] (the tile and its halo, through the border), the
 * row-filtered ones, [rows][INTER_PITCH], then the two kernels. */
static size_t
tile_bytes (const AccelCudaFilter *f)
{
  size_t pixel = f->src.channels == 4 ? 16 : f->src.channels == 2 ? 8 : 4 * (size_t) f->src.channels;
  size_t rows = TILE_H + f->ny - 1;
  return pixel * rows * (IN_PITCH (f->nx) + INTER_PITCH) + sizeof (float) * (KY_AT (f->nx) + f->ny);
}

/* RUN outputs a @step apart, output o the sum over the taps t of @k[t] ×
 * @src[(o + t) × @step], fused, in tap order: each pixel is read once
 * and slides through a window of RUN registers (unrolled RUN times, the
 * window's shifts are renamings). NT > 0: NT taps known when compiled
 * (@n unused), unrolled whole, so that weights @k in the kernel's
 * parameters are operands of the multiply-adds (no load, no loop). */
template <int RUN, int CH, int NT = 0>
__device__ __forceinline__ void
slide_run (float (&acc)[RUN][CH], const Pixel<CH> *src, int step, const float *k, int n)
{
  Pixel<CH> win[RUN];
#pragma unroll
  for (int o = 0; o < RUN - 1; o++)
    win[o] = src[o * step];
#pragma unroll (NT > 0 ? NT : RUN)
  for (int t = 0; t < (NT > 0 ? NT : n); t++)
    {
      win[RUN - 1] = src[(t + RUN - 1) * step];
      const float w = k[t];
#pragma unroll
      for (int o = 0; o < RUN; o++)
#pragma unroll
        for (int c = 0; c < CH; c++)
          acc[o][c] = __fmaf_rn (w, win[o].v[c], acc[o][c]);
#pragma unroll
      for (int o = 0; o < RUN - 1; o++)
        win[o] = win[o + 1];
    }
}

/* A packed 8-bit RGBA pixel @w as binary32 channels. */
template <int CH>
__device__ __forceinline__ void
unpack_rgba8 (uint32_t w, Pixel<CH> &v)
{
#pragma unroll
  for (int k = 0; k < CH; k++)
    v.v[k] = (float) ((w >> (8 * k)) & 0xff);
}

/* The tile's source pixels and halo, [rows][cols] from (@x0 - nx / 2,
 * @y0 - ny / 2), into @in as binary32, through the border. A thread takes
 * two columns (tx and tx + TILE_W) of LOAD_ROWS rows at a time, and finds
 * their border indices, then issues all their loads, then converts and
 * stores them, so that its loads are in flight together (one after
 * another, each waited for, they were what bound the kernel). */
template <int CH>
__device__ __forceinline__ void
load_tile (const AccelCudaFilter &f, bool packed, Pixel<CH> *in, int in_pitch, int rows, int cols, int x0,
           int y0)
{
  static_assert (TILE_MAX_TAPS - 1 <= TILE_W, "two columns of the tile a thread");
  const AccelCudaPlane &p = f.src;
  const int tx = threadIdx.x, left = x0 - f.nx / 2, top = y0 - f.ny / 2;
  if (CH == 4 && packed && left >= 0 && left + cols <= p.width && top >= 0 && top + rows <= p.height)
    {
      /* A tile whose halo lies inside the image (most of them): no
       * border to find, whole pixels from the tile's corner. */
      const uint8_t *corner = p.base + top * p.stride + (int64_t) left * 4;
      for (int r0 = threadIdx.y; r0 < rows; r0 += BLOCK_H * LOAD_ROWS)
        {
          uint32_t w[LOAD_ROWS][2];
#pragma unroll
          for (int i = 0; i < LOAD_ROWS; i++)
#pragma unroll
            for (int h = 0; h < 2; h++)
              if (r0 + i * BLOCK_H < rows && tx + h * TILE_W < cols)
                w[i][h] = __ldg ((const unsigned int *) (corner + (r0 + i * BLOCK_H) * p.stride + (tx + h * TILE_W) * 4));
#pragma unroll
          for (int i = 0; i < LOAD_ROWS; i++)
#pragma unroll
            for (int h = 0; h < 2; h++)
              if (r0 + i * BLOCK_H < rows && tx + h * TILE_W < cols)
                unpack_rgba8 (w[i][h], in[(r0 + i * BLOCK_H) * in_pitch + tx + h * TILE_W]);
        }
      return;
    }
  int bx[2];
#pragma unroll
  for (int h = 0; h < 2; h++)
    bx[h] = accel_image_border_index (x0 - f.nx / 2 + tx + h * TILE_W, p.width, f.border);
  for (int r0 = threadIdx.y; r0 < rows; r0 += BLOCK_H * LOAD_ROWS)
    {
      int by[LOAD_ROWS];
      bool there[LOAD_ROWS][2], inside[LOAD_ROWS][2];
#pragma unroll
      for (int i = 0; i < LOAD_ROWS; i++)
        {
          by[i] = accel_image_border_index (y0 - f.ny / 2 + r0 + i * BLOCK_H, p.height, f.border);
#pragma unroll
          for (int h = 0; h < 2; h++)
            {
              there[i][h] = r0 + i * BLOCK_H < rows && tx + h * TILE_W < cols;
              inside[i][h] = there[i][h] && bx[h] >= 0 && by[i] >= 0;
            }
        }
      Pixel<CH> v[LOAD_ROWS][2];
      if (CH == 4 && packed)
        {
          uint32_t w[LOAD_ROWS][2];
#pragma unroll
          for (int i = 0; i < LOAD_ROWS; i++)
#pragma unroll
            for (int h = 0; h < 2; h++)
              w[i][h] = inside[i][h] ? __ldg ((const unsigned int *) (p.base + by[i] * p.stride + (int64_t) bx[h] * 4))
                                     : 0;
#pragma unroll
          for (int i = 0; i < LOAD_ROWS; i++)
#pragma unroll
            for (int h = 0; h < 2; h++)
              if (inside[i][h])
                unpack_rgba8 (w[i][h], v[i][h]);
              else
#pragma unroll
                for (int k = 0; k < CH; k++)
                  v[i][h].v[k] = f.border_value;
        }
      else
#pragma unroll
        for (int i = 0; i < LOAD_ROWS; i++)
#pragma unroll
          for (int h = 0; h < 2; h++)
#pragma unroll
            for (int k = 0; k < CH; k++)
              v[i][h].v[k] = inside[i][h] ? (float) accel_cuda_plane_get (p, bx[h], by[i], k) : f.border_value;
#pragma unroll
      for (int i = 0; i < LOAD_ROWS; i++)
#pragma unroll
        for (int h = 0; h < 2; h++)
          if (there[i][h])
            in[(r0 + i * BLOCK_H) * in_pitch + tx + h * TILE_W] = v[i][h];
    }
}

/* NT 0: any taps up to TILE_MAX_TAPS, their weights read from shared
 * memory; NT > 0: NT taps on both axes, weights from the parameters (the
 * host's kx and ky). */
template <int CH, int NT>
__global__ void __launch_bounds__ (TILE_W * BLOCK_H)
separable_tile_kernel (const AccelCudaFilter f)
{
  extern __shared__ float4 smem[];
  const int nx = NT ? NT : f.nx, ny = NT ? NT : f.ny;
  const int rows = TILE_H + ny - 1, cols = TILE_W + nx - 1, in_pitch = IN_PITCH (nx);
  Pixel<CH> *in = (Pixel<CH> *) smem;            /* [rows][in_pitch] */
  Pixel<CH> *inter = in + rows * in_pitch;       /* [rows][INTER_PITCH] */
  float *kx = (float *) (inter + rows * INTER_PITCH), *ky = kx + KY_AT (nx);
  const int x0 = blockIdx.x * TILE_W, y0 = blockIdx.y * TILE_H;
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * TILE_W + tx;
  const bool packed = CH == 4 && packed_u8x4 (f.src);

  if constexpr (NT == 0)
    {
      for (int i = tid; i < nx; i += TILE_W * BLOCK_H)
        kx[i] = f.dkx ? f.dkx[i] : f.kx[i];
      for (int i = tid; i < ny; i += TILE_W * BLOCK_H)
        ky[i] = f.dky ? f.dky[i] : f.ky[i];
    }
  load_tile<CH> (f, packed, in, in_pitch, rows, cols, x0, y0);
  __syncthreads ();

  /* Along the rows: ROW_RUN outputs of one row a thread, the threads of a
   * warp on successive rows. */
  for (int task = tid; task < rows * (TILE_W / ROW_RUN); task += TILE_W * BLOCK_H)
    {
      const int r = task % rows, c0 = task / rows * ROW_RUN;
      float acc[ROW_RUN][CH] = {};
      slide_run<ROW_RUN, CH, NT> (acc, in + r * in_pitch + c0, 1, NT ? f.kx : kx, nx);
#pragma unroll
      for (int o = 0; o < ROW_RUN; o++)
#pragma unroll
        for (int c = 0; c < CH; c++)
          inter[r * INTER_PITCH + c0 + o].v[c] = acc[o][c];
    }
  __syncthreads ();

  /* Down the columns: COL_RUN outputs of one column a thread. */
  const int x = x0 + tx, r0 = ty * COL_RUN;
  float acc[COL_RUN][CH] = {};
  slide_run<COL_RUN, CH, NT> (acc, inter + r0 * INTER_PITCH + tx, INTER_PITCH, NT ? f.ky : ky, ny);
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
          for (int c = 0; c < CH; c++)
            w |= (uint32_t) accel_image_quantize (acc[o][c] * f.scale + f.delta, f.dst.maxv) << (8 * c);
          *(uint32_t *) (f.dst.base + y * f.dst.stride + (int64_t) x * 4) = w;
        }
      else
#pragma unroll
        for (int c = 0; c < CH; c++)
          store (f, x, y, c, acc[o][c]);
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

/* Past 48 KiB a kernel must be allowed its shared memory, on each GPU:
 * once, to all the GPU gives a block (tile_fits () has checked @bytes
 * against that). */
template <int CH, int NT = 0>
static cudaError_t
launch_tile (const AccelCudaFilter *f, dim3 tiles, dim3 threads, size_t bytes, cudaStream_t stream)
{
  if (bytes > ACCEL_CUDA_SMEM_DEFAULT)
    {
      cudaError_t err = accel_cuda_smem_once<separable_tile_kernel<CH, NT>> (accel_cuda_smem_optin ());
      if (err != cudaSuccess)
        return err;
    }
  separable_tile_kernel<CH, NT><<<tiles, threads, bytes, stream>>> (*f);
  return cudaSuccess;
}

/* The kernels of fixed taps run @f where it has 1 or 4 channels (a plane,
 * RGBA) and the same odd count of at most 17 taps on both axes (Gaussians
 * to sigma 2.67, boxes to radius 8), their weights the host's; the
 * kernel of any taps runs the rest. */
template <int CH>
static cudaError_t
launch_channels (const AccelCudaFilter *f, dim3 tiles, dim3 threads, size_t bytes, cudaStream_t stream)
{
  if constexpr (CH == 1 || CH == 4)
    if (!f->dkx && !f->dky && f->nx == f->ny)
      switch (f->nx)
        {
        case 3: return launch_tile<CH, 3> (f, tiles, threads, bytes, stream);
        case 5: return launch_tile<CH, 5> (f, tiles, threads, bytes, stream);
        case 7: return launch_tile<CH, 7> (f, tiles, threads, bytes, stream);
        case 9: return launch_tile<CH, 9> (f, tiles, threads, bytes, stream);
        case 11: return launch_tile<CH, 11> (f, tiles, threads, bytes, stream);
        case 13: return launch_tile<CH, 13> (f, tiles, threads, bytes, stream);
        case 15: return launch_tile<CH, 15> (f, tiles, threads, bytes, stream);
        case 17: return launch_tile<CH, 17> (f, tiles, threads, bytes, stream);
        default: break;
        }
  return launch_tile<CH> (f, tiles, threads, bytes, stream);
}

extern "C" size_t
accel_cuda_filter_workspace (const AccelCudaFilter *f)
{
  if (!f->separable || tile_fits (f))
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
  else if (tile_fits (f))
    {
      dim3 tiles ((unsigned) ((f->dst.width + TILE_W - 1) / TILE_W), (unsigned) ((f->dst.height + TILE_H - 1) / TILE_H));
      dim3 threads (TILE_W, BLOCK_H);
      size_t bytes = tile_bytes (f);
      cudaError_t err;
      switch (f->src.channels)
        {
        case 1: err = launch_channels<1> (f, tiles, threads, bytes, stream); break;
        case 2: err = launch_channels<2> (f, tiles, threads, bytes, stream); break;
        case 3: err = launch_channels<3> (f, tiles, threads, bytes, stream); break;
        default: err = launch_channels<4> (f, tiles, threads, bytes, stream); break;
        }
      if (err != cudaSuccess)
        return err;
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
