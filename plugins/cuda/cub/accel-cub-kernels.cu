/* accel-cub-kernels.cu: sort, scan, histogram, select and segmented reduce
 * through CUB (CCCL, compiled in), behind the C interface of
 * accel-cub-kernels.h.
 *
 * The sort orders every key type the way a radix sort does (the order the
 * `sort` op defines): each key is mapped to unsigned "ordered bits" (sign
 * bit flipped for integers; for floats all bits flipped when negative, the
 * sign bit set otherwise, -0.0 mapped to +0.0; all bits inverted for a
 * descending sort), the bits are sorted together with each key's index in
 * its row (CUB's radix sort is stable), and keys and values are gathered
 * from copies by that permutation. So one instantiation per bit width
 * (32, 64) covers all nine key types and any value type, which keeps the
 * build small; the price is the extra gather passes over a direct typed
 * sort. The common case of keys alone in one row, of f32, f64, i32, u32 or
 * i64, calls CUB's typed sort directly instead.
 *
 * Integer sums add as unsigned types (two's complement wrapping, as the
 * ops define), so i32 and u32 share one scan.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdint.h>
#include <type_traits>
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cub/device/device_histogram.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>
#include <cub/device/device_segmented_reduce.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include "accel-cub-kernels.h"

#define THREADS 256

static unsigned
blocks_for (long long n)
{
  long long b = (n + THREADS - 1) / THREADS;
  return (unsigned) (b < 1 ? 1 : b > 65535 * 4 ? 65535 * 4 : b);
}

static size_t
round_up (size_t v)
{
  return (v + 255) & ~(size_t) 255;
}

/* sort */

/* @inf: the bits of +infinity of the type. A NaN of either sign orders
 * after +inf (numpy's and PyTorch's rule: NaN is the largest), so its sign
 * bit is cleared first. */
template <typename Bits>
__device__ __forceinline__ Bits
float_order (Bits bits, int width, Bits inf)
{
  Bits sign = (Bits) 1 << (width - 1);
  Bits mask = width == (int) (8 * sizeof (Bits)) ? ~(Bits) 0 : (((Bits) 1 << width) - 1);
  if (bits == sign || (bits & ~sign & mask) > inf)
    bits &= ~sign;
  return (bits & sign) ? (~bits & mask) : (bits | sign);
}

template <typename Bits>
__global__ void
to_order_kernel (AccelCubType type, const void *keys, Bits *bits, unsigned *index, long long total, long long n,
                 int descending, int width)
{
  Bits mask = width == (int) (8 * sizeof (Bits)) ? ~(Bits) 0 : (((Bits) 1 << width) - 1);
  for (long long i = blockIdx.x * (long long) blockDim.x + threadIdx.x; i < total;
       i += (long long) gridDim.x * blockDim.x)
    {
      Bits b;
      switch (type)
        {
        case ACCEL_CUB_U8: b = ((const uint8_t *) keys)[i]; break;
        case ACCEL_CUB_I8: b = (uint8_t) (((const uint8_t *) keys)[i] ^ 0x80u); break;
        case ACCEL_CUB_U32: b = ((const uint32_t *) keys)[i]; break;
        case ACCEL_CUB_I32: b = ((const uint32_t *) keys)[i] ^ 0x80000000u; break;
        case ACCEL_CUB_U64: b = (Bits) ((const uint64_t *) keys)[i]; break;
        case ACCEL_CUB_I64: b = (Bits) (((const uint64_t *) keys)[i] ^ 0x8000000000000000ull); break;
        case ACCEL_CUB_F16: b = float_order<Bits> (((const uint16_t *) keys)[i], 16, 0x7c00u); break;
        case ACCEL_CUB_BF16: b = float_order<Bits> (((const uint16_t *) keys)[i], 16, 0x7f80u); break;
        case ACCEL_CUB_F32: b = float_order<Bits> (((const uint32_t *) keys)[i], 32, 0x7f800000u); break;
        default: b = float_order<Bits> ((Bits) ((const uint64_t *) keys)[i], 64, (Bits) 0x7ff0000000000000ull); break;
        }
      bits[i] = descending ? (~b & mask) : b;
      index[i] = (unsigned) (i % n);
    }
}

/* out[r][j] = in[r][perm[r][j]], element by element of @Size bytes. */
template <int Size>
struct alignas (Size) Element
{
  unsigned char b[Size];
};

template <int Size>
__global__ void
gather_kernel (const Element<Size> *in, Element<Size> *out, const unsigned *perm, long long total, long long n)
{
  for (long long i = blockIdx.x * (long long) blockDim.x + threadIdx.x; i < total;
       i += (long long) gridDim.x * blockDim.x)
    out[i] = in[i - i % n + perm[i]];
}

static cudaError_t
gather (const void *in, void *out, size_t size, const unsigned *perm, long long total, long long n,
        cudaStream_t stream)
{
  unsigned blocks = blocks_for (total);
  switch (size)
    {
    case 1: gather_kernel<1><<<blocks, THREADS, 0, stream>>> ((const Element<1> *) in, (Element<1> *) out, perm, total, n); break;
    case 2: gather_kernel<2><<<blocks, THREADS, 0, stream>>> ((const Element<2> *) in, (Element<2> *) out, perm, total, n); break;
    case 4: gather_kernel<4><<<blocks, THREADS, 0, stream>>> ((const Element<4> *) in, (Element<4> *) out, perm, total, n); break;
    case 8: gather_kernel<8><<<blocks, THREADS, 0, stream>>> ((const Element<8> *) in, (Element<8> *) out, perm, total, n); break;
    case 16: gather_kernel<16><<<blocks, THREADS, 0, stream>>> ((const Element<16> *) in, (Element<16> *) out, perm, total, n); break;
    default: return cudaErrorInvalidValue;
    }
  return cudaGetLastError ();
}

struct RowStart
{
  long long n;
  __host__ __device__ int operator() (long long row) const { return (int) (row * n); }
};

/* CUB's radix sort of the (key bits, index) pairs: all @total at once when
 * @rows is 1, else each row of @n on its own. With a NULL @cub_temp it
 * only sets @cub_bytes, as CUB does. */
template <typename Bits>
static cudaError_t
sort_pairs (void *cub_temp, size_t &cub_bytes, cub::DoubleBuffer<Bits> &d_keys, cub::DoubleBuffer<unsigned> &d_index,
            long long total, long long rows, long long n, int width, cudaStream_t stream)
{
  if (rows == 1)
    return cub::DeviceRadixSort::SortPairs (cub_temp, cub_bytes, d_keys, d_index, total, 0, width, stream);
  auto starts = thrust::make_transform_iterator (thrust::counting_iterator<long long> (0), RowStart { n });
  return cub::DeviceSegmentedRadixSort::SortPairs (cub_temp, cub_bytes, d_keys, d_index, (int) total, (int) rows,
                                                   starts, starts + 1, 0, width, stream);
}

static size_t
key_size (AccelCubType type)
{
  switch (type)
    {
    case ACCEL_CUB_I8: case ACCEL_CUB_U8: return 1;
    case ACCEL_CUB_F16: case ACCEL_CUB_BF16: return 2;
    case ACCEL_CUB_I32: case ACCEL_CUB_U32: case ACCEL_CUB_F32: return 4;
    default: return 8;
    }
}

template <typename Bits>
static cudaError_t
sort_bits (AccelCubType key_type, void *keys, void *values, size_t value_size, long long rows, long long n,
           int descending, void *temp, size_t *temp_bytes, cudaStream_t stream)
{
  long long total = rows * n;
  size_t ks = key_size (key_type);
  int width = (int) (8 * ks);
  size_t sizes[6] = {
    round_up (total * sizeof (Bits)), round_up (total * sizeof (Bits)),
    round_up (total * sizeof (unsigned)), round_up (total * sizeof (unsigned)),
    round_up (total * ks), values ? round_up (total * value_size) : 0,
  };
  char *p = (char *) temp;
  Bits *bits = (Bits *) p, *bits_alt = (Bits *) (p += sizes[0]);
  unsigned *index = (unsigned *) (p += sizes[1]), *index_alt = (unsigned *) (p += sizes[2]);
  void *key_copy = (p += sizes[3]);
  void *value_copy = (p += sizes[4]);
  void *cub_temp = temp ? (p += sizes[5]) : NULL;
  size_t head = sizes[0] + sizes[1] + sizes[2] + sizes[3] + sizes[4] + sizes[5];
  size_t cub_bytes = 0;
  cub::DoubleBuffer<Bits> d_keys (temp ? bits : NULL, temp ? bits_alt : NULL);
  cub::DoubleBuffer<unsigned> d_index (temp ? index : NULL, temp ? index_alt : NULL);

  /* Size the CUB scratch first (no work is done with a NULL pointer). */
  cudaError_t status = sort_pairs<Bits> (NULL, cub_bytes, d_keys, d_index, total, rows, n, width, stream);
  if (status != cudaSuccess)
    return status;
  if (temp == NULL)
    {
      *temp_bytes = head + cub_bytes;
      return cudaSuccess;
    }

  unsigned blocks = blocks_for (total);
  to_order_kernel<Bits><<<blocks, THREADS, 0, stream>>> (key_type, keys, bits, index, total, n, descending, width);
  if ((status = cudaGetLastError ()) != cudaSuccess)
    return status;
  if ((status = sort_pairs<Bits> (cub_temp, cub_bytes, d_keys, d_index, total, rows, n, width, stream))
      != cudaSuccess)
    return status;
  const unsigned *perm = d_index.Current ();
  if ((status = cudaMemcpyAsync (key_copy, keys, total * ks, cudaMemcpyDeviceToDevice, stream)) != cudaSuccess
      || (status = gather (key_copy, keys, ks, perm, total, n, stream)) != cudaSuccess)
    return status;
  if (values != NULL
      && ((status = cudaMemcpyAsync (value_copy, values, total * value_size, cudaMemcpyDeviceToDevice, stream))
            != cudaSuccess
          || (status = gather (value_copy, values, value_size, perm, total, n, stream)) != cudaSuccess))
    return status;
  return cudaSuccess;
}

/* CUB's typed float sort orders a NaN by its bits: those with the sign set
 * come below -inf, so they stand together at the start of an ascending row
 * (the end of a descending one). The op orders every NaN as the largest
 * value: last ascending, first descending. After the sort,
 * count_signed_nan_kernel counts them (one load when there are none, else
 * a binary search over the run), and rotate_kernel moves the run to the
 * other end with the sign cleared (a plain copy when there are none), so
 * that a row without such NaNs costs no pass over its keys. */
template <typename Bits>
__device__ __forceinline__ bool
is_signed_nan (Bits b, Bits inf)
{
  const Bits sign = (Bits) 1 << (8 * sizeof (Bits) - 1);
  return (b & sign) && (b & ~sign) > inf;
}

template <typename Bits>
__global__ void
count_signed_nan_kernel (const Bits *keys, long long n, int descending, Bits inf, long long *count)
{
  /* Ascending: the run is a prefix, [0, lo); descending: a suffix, [lo, n). */
  long long lo = 0, hi = n;
  if (n == 0)
    *count = 0;
  else if (!descending)
    {
      if (!is_signed_nan (keys[0], inf))
        hi = 0;
      while (lo < hi)
        {
          long long mid = lo + (hi - lo) / 2;
          if (is_signed_nan (keys[mid], inf))
            lo = mid + 1;
          else
            hi = mid;
        }
      *count = lo;
    }
  else
    {
      if (!is_signed_nan (keys[n - 1], inf))
        lo = n;
      while (lo < hi)
        {
          long long mid = lo + (hi - lo) / 2;
          if (is_signed_nan (keys[mid], inf))
            hi = mid;
          else
            lo = mid + 1;
        }
      *count = n - lo;
    }
}

/* @dst = @src with the run of *@count signed NaNs moved to the other end,
 * unsigned. With @only_if_any, nothing at all is done when the run is
 * empty. */
template <typename Bits>
__global__ void
rotate_kernel (const Bits *src, Bits *dst, long long n, int descending, const long long *count, int only_if_any)
{
  const long long k = *count;
  if (only_if_any && k == 0)
    return;
  const Bits sign = (Bits) 1 << (8 * sizeof (Bits) - 1);
  for (long long i = blockIdx.x * (long long) blockDim.x + threadIdx.x; i < n; i += (long long) gridDim.x * blockDim.x)
    {
      const bool moved = descending ? i >= n - k : i < k;
      const long long j = !descending ? (moved ? n - k + i : i - k) : (moved ? i - (n - k) : i + k);
      dst[j] = moved ? (Bits) (src[i] & ~sign) : src[i];
    }
}

/* @dst = @src where the run of *@count is not empty. */
template <typename Bits>
__global__ void
copy_if_kernel (const Bits *src, Bits *dst, long long n, const long long *count)
{
  if (*count == 0)
    return;
  for (long long i = blockIdx.x * (long long) blockDim.x + threadIdx.x; i < n; i += (long long) gridDim.x * blockDim.x)
    dst[i] = src[i];
}

/* The grid of the kernels above: enough to stream a row at full bandwidth,
 * few enough that an early return costs little. */
static unsigned
fixup_blocks (long long n)
{
  unsigned b = blocks_for (n);
  return b > 2048 ? 2048 : b;
}

/* CUB's typed radix sort of @n keys, up or down. With a NULL @cub_temp it
 * only sets @cub_bytes. */
template <typename K>
static cudaError_t
sort_keys (void *cub_temp, size_t &cub_bytes, cub::DoubleBuffer<K> &d_keys, long long n, int descending,
           cudaStream_t stream)
{
  return descending
    ? cub::DeviceRadixSort::SortKeysDescending (cub_temp, cub_bytes, d_keys, n, 0, (int) (8 * sizeof (K)), stream)
    : cub::DeviceRadixSort::SortKeys (cub_temp, cub_bytes, d_keys, n, 0, (int) (8 * sizeof (K)), stream);
}

/* Keys alone, one row, of a type CUB sorts natively: CUB's own typed sort,
 * in place through a DoubleBuffer whose other half is scratch; for floats
 * the signed NaNs are moved after it (above). */
template <typename K>
static cudaError_t
sort_keys_typed (K *keys, long long n, int descending, void *temp, size_t *temp_bytes, cudaStream_t stream)
{
  size_t head = round_up (n * sizeof (K)), cub_bytes = 0;
  K *alt = (K *) temp;
  cub::DoubleBuffer<K> d_keys (temp ? keys : NULL, temp ? alt : NULL);
  cudaError_t status = sort_keys<K> (NULL, cub_bytes, d_keys, n, descending, stream);
  if (status != cudaSuccess || temp == NULL)
    {
      *temp_bytes = head + round_up (cub_bytes) + sizeof (long long);
      return status;
    }
  void *cub_temp = (char *) temp + head;
  long long *count = (long long *) ((char *) temp + head + round_up (cub_bytes));
  if ((status = sort_keys<K> (cub_temp, cub_bytes, d_keys, n, descending, stream)) != cudaSuccess)
    return status;
  K *sorted = d_keys.Current ();
  const bool is_float = (K) 0.5 != (K) 0;
  if (!is_float)
    return sorted == keys ? cudaSuccess
                          : cudaMemcpyAsync (keys, sorted, n * sizeof (K), cudaMemcpyDeviceToDevice, stream);
  typedef typename std::conditional<sizeof (K) == 4, uint32_t, unsigned long long>::type Bits;
  const Bits inf = sizeof (K) == 4 ? (Bits) 0x7f800000u : (Bits) 0x7ff0000000000000ull;
  count_signed_nan_kernel<Bits><<<1, 1, 0, stream>>> ((const Bits *) sorted, n, descending, inf, count);
  if (sorted != keys)
    {
      /* Back into keys, rotated where there are signed NaNs. */
      rotate_kernel<Bits><<<fixup_blocks (n), THREADS, 0, stream>>> ((const Bits *) sorted, (Bits *) keys, n,
                                                                      descending, count, 0);
      return cudaGetLastError ();
    }
  /* Only where there are signed NaNs: rotated into the scratch half, then
   * copied back. */
  rotate_kernel<Bits><<<fixup_blocks (n), THREADS, 0, stream>>> ((const Bits *) keys, (Bits *) alt, n, descending,
                                                                  count, 1);
  copy_if_kernel<Bits><<<fixup_blocks (n), THREADS, 0, stream>>> ((const Bits *) alt, (Bits *) keys, n, count);
  return cudaGetLastError ();
}

extern "C" cudaError_t
accel_cub_sort (AccelCubType key_type, void *keys, void *values, size_t value_size, long long rows, long long n,
                int descending, void *temp, size_t *temp_bytes, cudaStream_t stream)
{
  if (values == NULL && rows == 1)
    switch (key_type)
      {
      case ACCEL_CUB_F32: return sort_keys_typed ((float *) keys, n, descending, temp, temp_bytes, stream);
      case ACCEL_CUB_F64: return sort_keys_typed ((double *) keys, n, descending, temp, temp_bytes, stream);
      case ACCEL_CUB_I32: return sort_keys_typed ((int *) keys, n, descending, temp, temp_bytes, stream);
      case ACCEL_CUB_U32: return sort_keys_typed ((uint32_t *) keys, n, descending, temp, temp_bytes, stream);
      case ACCEL_CUB_I64: return sort_keys_typed ((long long *) keys, n, descending, temp, temp_bytes, stream);
      default: break;
      }
  if (key_size (key_type) == 8)
    return sort_bits<uint64_t> (key_type, keys, values, value_size, rows, n, descending, temp, temp_bytes, stream);
  return sort_bits<uint32_t> (key_type, keys, values, value_size, rows, n, descending, temp, temp_bytes, stream);
}

/* scan */

struct RowOf
{
  long long n;
  __host__ __device__ long long operator() (long long i) const { return i / n; }
};

template <typename T>
static cudaError_t
scan_typed (const T *in, T *out, long long rows, long long n, int exclusive, void *temp, size_t *temp_bytes,
            cudaStream_t stream)
{
  long long total = rows * n;
  if (rows == 1)
    return exclusive ? cub::DeviceScan::ExclusiveSum (temp, *temp_bytes, in, out, total, stream)
                     : cub::DeviceScan::InclusiveSum (temp, *temp_bytes, in, out, total, stream);
  auto row = thrust::make_transform_iterator (thrust::counting_iterator<long long> (0), RowOf { n });
  return exclusive ? cub::DeviceScan::ExclusiveSumByKey (temp, *temp_bytes, row, in, out, total,
                                                         ::cuda::std::equal_to<> (), stream)
                   : cub::DeviceScan::InclusiveSumByKey (temp, *temp_bytes, row, in, out, total,
                                                         ::cuda::std::equal_to<> (), stream);
}

extern "C" cudaError_t
accel_cub_scan (AccelCubType type, const void *in, void *out, long long rows, long long n, int exclusive,
                void *temp, size_t *temp_bytes, cudaStream_t stream)
{
  switch (type)
    {
    case ACCEL_CUB_U32:
      return scan_typed ((const uint32_t *) in, (uint32_t *) out, rows, n, exclusive, temp, temp_bytes, stream);
    case ACCEL_CUB_U64:
      return scan_typed ((const unsigned long long *) in, (unsigned long long *) out, rows, n, exclusive, temp,
                         temp_bytes, stream);
    case ACCEL_CUB_F32:
      return scan_typed ((const float *) in, (float *) out, rows, n, exclusive, temp, temp_bytes, stream);
    case ACCEL_CUB_F64:
      return scan_typed ((const double *) in, (double *) out, rows, n, exclusive, temp, temp_bytes, stream);
    default:
      return cudaErrorInvalidValue;
    }
}

/* histogram */

/* Adds the samples equal to @upper to the last bin (numpy's closed last
 * bin); few samples match, so an atomic per match is cheap. */
template <typename T>
__global__ void
count_upper_kernel (const T *samples, long long n, T upper, int *last_bin)
{
  for (long long i = blockIdx.x * (long long) blockDim.x + threadIdx.x; i < n; i += (long long) gridDim.x * blockDim.x)
    if (samples[i] == upper)
      atomicAdd (last_bin, 1);
}

extern "C" cudaError_t
accel_cub_histogram_count_upper (AccelCubType type, const void *samples, long long n, double upper, int *last_bin,
                                 cudaStream_t stream)
{
  if (n == 0)
    return cudaSuccess;
  unsigned blocks = blocks_for (n);
  switch (type)
    {
    case ACCEL_CUB_U8:
      /* An upper edge no u8 holds (256, the usual one, or a negative one)
       * matches no sample; casting it would wrap it onto 0 and count
       * every zero into the last bin. */
      if (upper < 0 || upper > UINT8_MAX)
        return cudaSuccess;
      count_upper_kernel<<<blocks, THREADS, 0, stream>>> ((const uint8_t *) samples, n, (uint8_t) upper, last_bin);
      break;
    case ACCEL_CUB_I32:
      count_upper_kernel<<<blocks, THREADS, 0, stream>>> ((const int *) samples, n, (int) upper, last_bin);
      break;
    case ACCEL_CUB_F32:
      count_upper_kernel<<<blocks, THREADS, 0, stream>>> ((const float *) samples, n, (float) upper, last_bin);
      break;
    case ACCEL_CUB_F64:
      count_upper_kernel<<<blocks, THREADS, 0, stream>>> ((const double *) samples, n, upper, last_bin);
      break;
    default:
      return cudaErrorInvalidValue;
    }
  return cudaGetLastError ();
}

extern "C" cudaError_t
accel_cub_histogram (AccelCubType type, const void *samples, int *bins, int n_bins, double lower, double upper,
                     long long n, void *temp, size_t *temp_bytes, cudaStream_t stream)
{
  switch (type)
    {
    case ACCEL_CUB_U8:
      return cub::DeviceHistogram::HistogramEven (temp, *temp_bytes, (const uint8_t *) samples, bins, n_bins + 1,
                                                  (int) lower, (int) upper, n, stream);
    case ACCEL_CUB_I32:
      return cub::DeviceHistogram::HistogramEven (temp, *temp_bytes, (const int *) samples, bins, n_bins + 1,
                                                  (int) lower, (int) upper, n, stream);
    case ACCEL_CUB_F32:
      return cub::DeviceHistogram::HistogramEven (temp, *temp_bytes, (const float *) samples, bins, n_bins + 1,
                                                  (float) lower, (float) upper, n, stream);
    case ACCEL_CUB_F64:
      return cub::DeviceHistogram::HistogramEven (temp, *temp_bytes, (const double *) samples, bins, n_bins + 1,
                                                  lower, upper, n, stream);
    default:
      return cudaErrorInvalidValue;
    }
}

/* select */

template <int Size>
static cudaError_t
select_typed (const void *in, const unsigned char *flags, void *out, long long *count, long long n, void *temp,
              size_t *temp_bytes, cudaStream_t stream)
{
  return cub::DeviceSelect::Flagged (temp, *temp_bytes, (const Element<Size> *) in, flags, (Element<Size> *) out,
                                     count, n, stream);
}

extern "C" cudaError_t
accel_cub_select (size_t element_size, const void *in, const unsigned char *flags, void *out, long long *count,
                  long long n, void *temp, size_t *temp_bytes, cudaStream_t stream)
{
  switch (element_size)
    {
    case 1: return select_typed<1> (in, flags, out, count, n, temp, temp_bytes, stream);
    case 2: return select_typed<2> (in, flags, out, count, n, temp, temp_bytes, stream);
    case 4: return select_typed<4> (in, flags, out, count, n, temp, temp_bytes, stream);
    case 8: return select_typed<8> (in, flags, out, count, n, temp, temp_bytes, stream);
    case 16: return select_typed<16> (in, flags, out, count, n, temp, temp_bytes, stream);
    default: return cudaErrorInvalidValue;
    }
}

/* segmented reduce */

template <typename T>
static cudaError_t
reduce_typed (AccelCubReduction reduction, const T *in, T *out, const long long *offsets, int n_segments,
              void *temp, size_t *temp_bytes, cudaStream_t stream)
{
  switch (reduction)
    {
    case ACCEL_CUB_SUM:
      return cub::DeviceSegmentedReduce::Sum (temp, *temp_bytes, in, out, n_segments, offsets, offsets + 1, stream);
    case ACCEL_CUB_MIN:
      return cub::DeviceSegmentedReduce::Min (temp, *temp_bytes, in, out, n_segments, offsets, offsets + 1, stream);
    default:
      return cub::DeviceSegmentedReduce::Max (temp, *temp_bytes, in, out, n_segments, offsets, offsets + 1, stream);
    }
}

/* Sums add integers as unsigned (u32, u64); min and max keep their sign
 * (i32, u32, i64). Both take f32 and f64. */
static bool
reduce_takes (AccelCubType type, AccelCubReduction reduction)
{
  switch (type)
    {
    case ACCEL_CUB_U32: case ACCEL_CUB_F32: case ACCEL_CUB_F64: return true;
    case ACCEL_CUB_U64: return reduction == ACCEL_CUB_SUM;
    case ACCEL_CUB_I32: case ACCEL_CUB_I64: return reduction != ACCEL_CUB_SUM;
    default: return false;
    }
}

extern "C" cudaError_t
accel_cub_segmented_reduce (AccelCubType type, AccelCubReduction reduction, const void *in, void *out,
                            const long long *offsets, int n_segments, void *temp, size_t *temp_bytes,
                            cudaStream_t stream)
{
  if (!reduce_takes (type, reduction))
    return cudaErrorInvalidValue;
  switch (type)
    {
    case ACCEL_CUB_I32:
      return reduce_typed (reduction, (const int *) in, (int *) out, offsets, n_segments, temp, temp_bytes, stream);
    case ACCEL_CUB_U32:
      return reduce_typed (reduction, (const uint32_t *) in, (uint32_t *) out, offsets, n_segments, temp, temp_bytes, stream);
    case ACCEL_CUB_I64:
      return reduce_typed (reduction, (const long long *) in, (long long *) out, offsets, n_segments, temp, temp_bytes, stream);
    case ACCEL_CUB_U64:
      return reduce_typed (reduction, (const unsigned long long *) in, (unsigned long long *) out, offsets,
                           n_segments, temp, temp_bytes, stream);
    case ACCEL_CUB_F32:
      return reduce_typed (reduction, (const float *) in, (float *) out, offsets, n_segments, temp, temp_bytes, stream);
    case ACCEL_CUB_F64:
      return reduce_typed (reduction, (const double *) in, (double *) out, offsets, n_segments, temp, temp_bytes, stream);
    default:
      return cudaErrorInvalidValue;
    }
}

/* conversions */

__global__ void
flags_kernel (const void *flags, size_t flag_size, unsigned char *out, long long n)
{
  for (long long i = blockIdx.x * (long long) blockDim.x + threadIdx.x; i < n; i += (long long) gridDim.x * blockDim.x)
    out[i] = flag_size == 1 ? ((const unsigned char *) flags)[i] != 0 : ((const uint32_t *) flags)[i] != 0;
}

extern "C" cudaError_t
accel_cub_flags_to_u8 (const void *flags, size_t flag_size, unsigned char *out, long long n, cudaStream_t stream)
{
  if (n == 0)
    return cudaSuccess;
  flags_kernel<<<blocks_for (n), THREADS, 0, stream>>> (flags, flag_size, out, n);
  return cudaGetLastError ();
}

__global__ void
widen_kernel (const int *in, long long *out, long long n)
{
  for (long long i = blockIdx.x * (long long) blockDim.x + threadIdx.x; i < n; i += (long long) gridDim.x * blockDim.x)
    out[i] = in[i];
}

extern "C" cudaError_t
accel_cub_offsets_to_i64 (const int *offsets, long long *out, long long n, cudaStream_t stream)
{
  widen_kernel<<<blocks_for (n), THREADS, 0, stream>>> (offsets, out, n);
  return cudaGetLastError ();
}

__global__ void
count_kernel (const long long *count, int *out)
{
  *out = (int) *count;
}

extern "C" cudaError_t
accel_cub_count_to_i32 (const long long *count, int *out, cudaStream_t stream)
{
  count_kernel<<<1, 1, 0, stream>>> (count, out);
  return cudaGetLastError ();
}

template <typename T>
__global__ void
divide_kernel (T *sums, const long long *offsets, int n)
{
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    sums[i] = sums[i] / (T) (offsets[i + 1] - offsets[i]);
}

extern "C" cudaError_t
accel_cub_divide_by_length (AccelCubType type, void *sums, const long long *offsets, int n_segments,
                            cudaStream_t stream)
{
  if (n_segments == 0)
    return cudaSuccess;
  if (type == ACCEL_CUB_F32)
    divide_kernel<float><<<blocks_for (n_segments), THREADS, 0, stream>>> ((float *) sums, offsets, n_segments);
  else
    divide_kernel<double><<<blocks_for (n_segments), THREADS, 0, stream>>> ((double *) sums, offsets, n_segments);
  return cudaGetLastError ();
}
