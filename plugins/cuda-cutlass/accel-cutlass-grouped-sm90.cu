/* accel-cutlass-grouped-sm90.cu: grouped-gemm through CUTLASS's ptr-array
 * grouped GEMM for Hopper (TMA loads, wgmma, a persistent grid whose group
 * scheduler walks the problem sizes in device memory), built for sm_90a
 * only.
 *
 * The offsets never come to the host: a one-block kernel (prepare) turns
 * them into the per-group problem sizes, pointers and strides CUTLASS
 * reads, and gives every group zero rows when the check kernel that ran
 * before it found them bad, so that nothing is read out of bounds. The
 * per-group bias is a row broadcast through an array of pointers in the
 * epilogue (CUTLASS's Sm90RowBroadcast indexes it by the group).
 *
 * Instances (a small fixed set, for build time): bf16 and f16 with the same
 * output type, b [G, K, N] or [G, N, K]; fp8-e4m3 with a bf16 output, b
 * [G, N, K] (8-bit wgmma reads K-major operands only).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-cutlass-kernels.h"

#include <cutlass/cutlass.h>
#include <cute/tensor.hpp>
#include <cutlass/gemm/group_array_problem_shape.hpp>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/gemm/device/gemm_universal_adapter.h>
#include <cutlass/gemm/kernel/gemm_universal.hpp>

using namespace cute;

namespace grouped_sm90 {

using ProblemShape = cutlass::gemm::GroupProblemShape<Shape<int, int, int>>;
using Sizes = ProblemShape::UnderlyingProblemShape;

/* A packed stride of one group's matrix, `outer` x `inner` (rows, columns
 * as CUTLASS names them: (M, K) for A, (N, K) for B, (M, N) for D): the
 * dynamic mode is the leading dimension, whichever side holds the unit
 * stride. */
template <class IntT>
__device__ Stride<IntT, _1, _0>
packed (Stride<IntT, _1, _0> s, int outer, int inner)
{
  get<0> (s) = (IntT) inner;
  return s;
}

template <class IntT>
__device__ Stride<_1, IntT, _0>
packed (Stride<_1, IntT, _0> s, int outer, int inner)
{
  get<1> (s) = (IntT) outer;
  return s;
}

template <class ElementAB_, class ElementD_, class LayoutB>
struct Grouped {
  using ElementAB = ElementAB_;
  using ElementD = ElementD_;
  using LayoutA = cutlass::layout::RowMajor;
  using LayoutD = cutlass::layout::RowMajor;
  static constexpr int kAlignAB = 16 / sizeof (ElementAB);
  static constexpr int kAlignD = 16 / sizeof (ElementD);
  static constexpr bool kFp8 = sizeof (ElementAB) == 1;

  /* PyTorch's tile for large groups (GroupMM.cu): 128 x 256, clusters of
   * two along M sharing B through TMA multicast; 128 x 128 for fp8, whose
   * accumulators are kept twice (the promoted sums beside the MMA's) and
   * would spill at 128 x 256. */
  using TileShape = cute::conditional_t<kFp8, Shape<_128, _128, _128>, Shape<_128, _256, _64>>;
  using ClusterShape = Shape<_2, _1, _1>;
  /* fp8 too: the plain schedule promotes the partial sums to f32 every few
   * k-blocks (the fast-accumulation one would not). */
  using KernelSchedule = cutlass::gemm::KernelPtrArrayTmaWarpSpecializedCooperative;
  using EpilogueSchedule = cutlass::epilogue::PtrArrayTmaWarpSpecializedCooperative;

  /* D = alpha · acc + bias[g] (a row vector per group, zero without one). */
  using Epilogue = cutlass::epilogue::fusion::Sm90EVT<
    cutlass::epilogue::fusion::Sm90Compute<cutlass::homogeneous_multiply_add, ElementD, float,
                                           cutlass::FloatRoundStyle::round_to_nearest>,
    cutlass::epilogue::fusion::Sm90ScalarBroadcast<float>,
    cutlass::epilogue::fusion::Sm90AccFetch,
    cutlass::epilogue::fusion::Sm90RowBroadcast<0, TileShape, ElementD *, float, Stride<_0, _1, _0>>>;

  using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
    cutlass::epilogue::collective::EpilogueTileAuto, float, float,
    void, LayoutD *, kAlignD, ElementD, LayoutD *, kAlignD,
    EpilogueSchedule, Epilogue>::CollectiveOp;

  using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp,
    ElementAB, LayoutA *, kAlignAB, ElementAB, LayoutB *, kAlignAB, float,
    TileShape, ClusterShape,
    cutlass::gemm::collective::StageCountAutoCarveout<
      static_cast<int> (sizeof (typename CollectiveEpilogue::SharedStorage))>,
    KernelSchedule>::CollectiveOp;

  using Kernel = cutlass::gemm::kernel::GemmUniversal<ProblemShape, CollectiveMainloop, CollectiveEpilogue>;
  using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;

  using StrideA = typename Kernel::InternalStrideA;
  using StrideB = typename Kernel::InternalStrideB;
  using StrideD = typename Kernel::InternalStrideD;

  /* The per-group arrays CUTLASS reads, carved from the workspace. */
  struct Arrays {
    Sizes *sizes;
    const ElementAB **a;
    const ElementAB **b;
    ElementD **d;
    const ElementD **bias;
    StrideA *sa;
    StrideB *sb;
    StrideD *sd;
  };

  static size_t
  align (size_t n)
  {
    return (n + 255) & ~(size_t) 255;
  }

  static size_t
  arrays_size (int64_t groups)
  {
    size_t g = (size_t) groups;
    return align (g * sizeof (Sizes)) + 4 * align (g * sizeof (void *)) + align (g * sizeof (StrideA))
           + align (g * sizeof (StrideB)) + align (g * sizeof (StrideD));
  }

  static Arrays
  carve (void *workspace, int64_t groups)
  {
    size_t g = (size_t) groups;
    char *p = (char *) workspace;
    Arrays r;
    r.sizes = (Sizes *) p, p += align (g * sizeof (Sizes));
    r.a = (const ElementAB **) p, p += align (g * sizeof (void *));
    r.b = (const ElementAB **) p, p += align (g * sizeof (void *));
    r.d = (ElementD **) p, p += align (g * sizeof (void *));
    r.bias = (const ElementD **) p, p += align (g * sizeof (void *));
    r.sa = (StrideA *) p, p += align (g * sizeof (StrideA));
    r.sb = (StrideB *) p, p += align (g * sizeof (StrideB));
    r.sd = (StrideD *) p;
    return r;
  }

  static typename Gemm::Arguments
  arguments (const AccelCutlassGroupedParams *p, const Arrays &r)
  {
    typename Gemm::Arguments args;
    cutlass::KernelHardwareInfo hw;
    hw.device_id = 0;   /* only read to query the SM count, which is given */
    hw.sm_count = p->sm_count;
    args.mode = cutlass::gemm::GemmUniversalMode::kGrouped;
    args.problem_shape = ProblemShape { (int32_t) p->groups, r.sizes, nullptr };
    args.mainloop = { r.a, r.sa, r.b, r.sb };
    args.epilogue.ptr_C = nullptr;
    args.epilogue.dC = nullptr;
    args.epilogue.ptr_D = r.d;
    args.epilogue.dD = r.sd;
    /* { alpha, acc, bias, multiply-add } */
    args.epilogue.thread = {
      { { p->alpha } },
      {},
      { p->bias ? r.bias : nullptr, ElementD (0.0f), {} },
      {},
    };
    args.hw_info = hw;
    return args;
  }
};

/* Per-group sizes, pointers and strides from the offsets; zero rows for
 * every group when the check found the offsets bad. */
template <class G>
__global__ void
prepare (typename G::Arrays r, const int32_t *offsets, const int32_t *codes, const void *a, const void *b,
         const void *bias, void *out, int64_t groups, int k, int n)
{
  using ElementAB = typename G::ElementAB;
  using ElementD = typename G::ElementD;
  bool bad = codes[0] != 0;
  for (int64_t g = threadIdx.x; g < groups; g += blockDim.x)
    {
      int32_t lo = bad ? 0 : offsets[g], rows = bad ? 0 : offsets[g + 1] - lo;
      r.sizes[g] = Sizes (rows, n, k);
      r.a[g] = (const ElementAB *) a + (int64_t) lo * k;
      r.b[g] = (const ElementAB *) b + g * (int64_t) k * n;
      r.d[g] = (ElementD *) out + (int64_t) lo * n;
      r.bias[g] = bias ? (const ElementD *) bias + g * (int64_t) n : nullptr;
      r.sa[g] = packed (typename G::StrideA {}, max (rows, 1), k);
      r.sb[g] = packed (typename G::StrideB {}, n, k);
      r.sd[g] = packed (typename G::StrideD {}, max (rows, 1), n);
    }
}

template <class G>
size_t
workspace_of (const AccelCutlassGroupedParams *p)
{
  typename G::Arrays r = G::carve (nullptr, p->groups);
  typename G::Gemm::Arguments args = G::arguments (p, r);
  return G::arrays_size (p->groups) + G::align (G::Gemm::get_workspace_size (args));
}

template <class G>
int
run (const AccelCutlassGroupedParams *p, void *workspace, cudaStream_t stream)
{
  typename G::Arrays r = G::carve (workspace, p->groups);
  prepare<G><<<1, 256, 0, stream>>> (r, p->offsets, p->codes, p->a, p->b, p->bias, p->out, p->groups,
                                     (int) p->k, (int) p->n);
  cudaError_t status = cudaGetLastError ();
  if (status != cudaSuccess)
    return status;

  typename G::Gemm gemm;
  typename G::Gemm::Arguments args = G::arguments (p, r);
  void *cutlass_workspace = (char *) workspace + G::arrays_size (p->groups);
  if (gemm.can_implement (args) != cutlass::Status::kSuccess)
    return ACCEL_CUTLASS_UNSUPPORTED;
  if (gemm.initialize (args, cutlass_workspace, stream) != cutlass::Status::kSuccess
      || gemm.run (stream) != cutlass::Status::kSuccess)
    {
      status = cudaGetLastError ();
      return status != cudaSuccess ? status : cudaErrorLaunchFailure;
    }
  return cudaGetLastError ();
}

using Bf16N = Grouped<cutlass::bfloat16_t, cutlass::bfloat16_t, cutlass::layout::RowMajor>;
using Bf16T = Grouped<cutlass::bfloat16_t, cutlass::bfloat16_t, cutlass::layout::ColumnMajor>;
using F16N = Grouped<cutlass::half_t, cutlass::half_t, cutlass::layout::RowMajor>;
using F16T = Grouped<cutlass::half_t, cutlass::half_t, cutlass::layout::ColumnMajor>;
using E4m3T = Grouped<cutlass::float_e4m3_t, cutlass::bfloat16_t, cutlass::layout::ColumnMajor>;

enum Instance { NONE, BF16_N, BF16_T, F16_N, F16_T, E4M3_T };

Instance
instance_of (const AccelCutlassGroupedParams *p)
{
  if (p->in_type == ACCEL_CUTLASS_BF16 && p->out_type == ACCEL_CUTLASS_BF16)
    return p->transb ? BF16_T : BF16_N;
  if (p->in_type == ACCEL_CUTLASS_F16 && p->out_type == ACCEL_CUTLASS_F16)
    return p->transb ? F16_T : F16_N;
  if (p->in_type == ACCEL_CUTLASS_E4M3 && p->out_type == ACCEL_CUTLASS_BF16 && p->transb)
    return E4M3_T;
  return NONE;
}

bool
aligned (const void *ptr)
{
  return ptr == nullptr || (uintptr_t) ptr % 16 == 0;
}

}  // namespace grouped_sm90

using namespace grouped_sm90;

extern "C" int
accel_cutlass_grouped_sm90_supported (const AccelCutlassGroupedParams *p)
{
  Instance which = instance_of (p);
  int in_size = which == E4M3_T ? 1 : 2;
  return which != NONE && p->k > 0 && p->n > 0 && p->groups > 0
         && (p->k * in_size) % 16 == 0 && (p->n * in_size) % 16 == 0 && (p->n * 2) % 16 == 0
         && p->rows < (1LL << 31) && p->k < (1LL << 31) && p->n < (1LL << 31) && p->groups < (1LL << 24)
         && aligned (p->a) && aligned (p->b) && aligned (p->out) && aligned (p->bias) && p->sm_count > 0;
}

extern "C" size_t
accel_cutlass_grouped_sm90_workspace (const AccelCutlassGroupedParams *p)
{
  switch (instance_of (p))
    {
    case BF16_N: return workspace_of<Bf16N> (p);
    case BF16_T: return workspace_of<Bf16T> (p);
    case F16_N: return workspace_of<F16N> (p);
    case F16_T: return workspace_of<F16T> (p);
    case E4M3_T: return workspace_of<E4m3T> (p);
    default: return 0;
    }
}

extern "C" int
accel_cutlass_grouped_sm90 (const AccelCutlassGroupedParams *p, void *workspace, cudaStream_t stream)
{
  if (!accel_cutlass_grouped_sm90_supported (p))
    return ACCEL_CUTLASS_UNSUPPORTED;
  switch (instance_of (p))
    {
    case BF16_N: return run<Bf16N> (p, workspace, stream);
    case BF16_T: return run<Bf16T> (p, workspace, stream);
    case F16_N: return run<F16N> (p, workspace, stream);
    case F16_T: return run<F16T> (p, workspace, stream);
    case E4M3_T: return run<E4m3T> (p, workspace, stream);
    default: return ACCEL_CUTLASS_UNSUPPORTED;
    }
}
