/* accel-cutlass-matmul-sm90.cu: matmul with its epilogue and a residual
 * fused into CUTLASS's Hopper GEMM (TMA loads, wgmma, warp-specialised
 * persistent kernel), built for sm_90a only:
 *
 *   c = act (alpha · row_scales[i] · col_scales[j] · (a bᵀ)[i, j] + bias[j])
 *       + residual[i, j]
 *
 * as one epilogue visitor tree: the scales and the bias are broadcasts
 * (a missing one reads as 1 or 0), the activation is chosen at run time
 * (one instance serves none, ReLU and both GELUs), and the residual comes
 * in as CUTLASS's C operand through TMA. That is the pass over the result
 * a separate residual-add kernel would make, saved.
 *
 * Instances: bf16 and f16, a [m, k] and b [n, k] (the torch.nn.Linear
 * layout, K-major both), batched.
 *
 * The schedule is ping-pong (each of two consumer warp groups takes its
 * own 128x128 tile, so one's epilogue runs under the other's main loop),
 * clusters of 1x2. On the H100, bf16 8192 x 4096 x 4096 with bias, tanh
 * GELU and the residual: 616-625 TFLOP/s, against 597-615 with 2x1
 * clusters, 513-531 without clusters, 594-600 with a tile swizzle of 4,
 * and 575-595 for the cooperative schedule with 128x256 tiles (the
 * grouped kernel's), once the activation no longer filled the
 * instruction cache (see activate_fragment; 337-343 before).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-cutlass-kernels.h"
#include "accel-cutlass-act.cuh"

#include <cutlass/cutlass.h>
#include <cute/tensor.hpp>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/gemm/device/gemm_universal_adapter.h>
#include <cutlass/gemm/kernel/gemm_universal.hpp>

using namespace cute;

namespace matmul_sm90 {

/* The activation, picked by an argument rather than a template. */
template <class T>
struct RuntimeAct {
  struct Arguments {
    int act = ACCEL_CUTLASS_ACT_NONE;
  };
  CUTLASS_HOST_DEVICE T
  operator() (T const &x, Arguments const &args) const
  {
#ifdef __CUDA_ARCH__
    return T (accel_cutlass::activate (float (x), args.act));
#else
    return x;
#endif
  }
};

/* One function for a whole fragment, called rather than inlined: the
 * epilogue visits its subtiles in an unrolled loop, and the four
 * activations inlined at each element of each visit made the kernel
 * 10,920 instructions (2,472 without them), more than the instruction
 * cache holds; the branch is taken once a fragment. */
template <int N>
__device__ __noinline__ cutlass::Array<float, N>
activate_fragment (cutlass::Array<float, N> x, int act)
{
  cutlass::Array<float, N> y;
  CUTLASS_PRAGMA_UNROLL
  for (int i = 0; i < N; i++)
    y[i] = accel_cutlass::activate (x[i], act);
  return y;
}

template <int N>
struct RuntimeAct<cutlass::Array<float, N>> {
  using Arguments = typename RuntimeAct<float>::Arguments;
  CUTLASS_HOST_DEVICE cutlass::Array<float, N>
  operator() (cutlass::Array<float, N> const &x, Arguments const &args) const
  {
#ifdef __CUDA_ARCH__
    if (args.act == ACCEL_CUTLASS_ACT_NONE)
      return x;
    return activate_fragment<N> (x, args.act);
#else
    return x;
#endif
  }
};

template <class Element>
struct Fused {
  using LayoutA = cutlass::layout::RowMajor;      /* a [m, k] */
  using LayoutB = cutlass::layout::ColumnMajor;   /* b [n, k] */
  using LayoutC = cutlass::layout::RowMajor;
  static constexpr int kAlign = 8;
  using TileShape = Shape<_128, _128, _64>;
  using ClusterShape = Shape<_1, _2, _1>;
  using RN = cutlass::FloatRoundStyle;
  static constexpr RN kRound = RN::round_to_nearest;

  template <template <class> class Fn, class Out>
  using Compute = cutlass::epilogue::fusion::Sm90Compute<Fn, Out, float, kRound>;
  using Acc = cutlass::epilogue::fusion::Sm90AccFetch;
  using Alpha = cutlass::epilogue::fusion::Sm90ScalarBroadcast<float>;
  using RowScales = cutlass::epilogue::fusion::Sm90ColBroadcast<0, TileShape, float, float, Stride<_1, _0, _0>>;
  using ColScales = cutlass::epilogue::fusion::Sm90RowBroadcast<0, TileShape, float, float, Stride<_0, _1, _0>>;
  using Bias = cutlass::epilogue::fusion::Sm90RowBroadcast<0, TileShape, Element, float, Stride<_0, _1, _0>>;
  using Residual = cutlass::epilogue::fusion::Sm90SrcFetch<Element>;
  template <class... T>
  using EVT = cutlass::epilogue::fusion::Sm90EVT<T...>;

  using Scaled = EVT<Compute<cutlass::multiplies, float>, EVT<Compute<cutlass::multiplies, float>, Alpha, Acc>,
                     RowScales>;
  using PreAct = EVT<Compute<cutlass::homogeneous_multiply_add, float>, Scaled, ColScales, Bias>;
  using Epilogue = EVT<Compute<cutlass::plus, Element>, EVT<Compute<RuntimeAct, float>, PreAct>, Residual>;

  using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
    cutlass::epilogue::collective::EpilogueTileAuto, float, float,
    Element, LayoutC, kAlign, Element, LayoutC, kAlign,
    cutlass::epilogue::TmaWarpSpecialized, Epilogue>::CollectiveOp;

  using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp,
    Element, LayoutA, kAlign, Element, LayoutB, kAlign, float,
    TileShape, ClusterShape,
    cutlass::gemm::collective::StageCountAutoCarveout<
      static_cast<int> (sizeof (typename CollectiveEpilogue::SharedStorage))>,
    cutlass::gemm::KernelTmaWarpSpecializedPingpong>::CollectiveOp;

  using Kernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, CollectiveMainloop,
                                                      CollectiveEpilogue>;
  using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;

  static typename Gemm::Arguments
  arguments (const AccelCutlassMatmulParams *p, int sm_count)
  {
    int m = (int) p->m, n = (int) p->n, k = (int) p->k, l = (int) p->batch;
    typename Kernel::StrideA sa {};
    typename Kernel::StrideB sb {};
    typename Kernel::StrideC sc {};
    typename Kernel::StrideD sd {};
    get<0> (sa) = k, get<2> (sa) = (int64_t) m * k;
    get<0> (sb) = k, get<2> (sb) = (int64_t) n * k;
    get<0> (sc) = n, get<2> (sc) = (int64_t) m * n;
    get<0> (sd) = n, get<2> (sd) = (int64_t) m * n;

    typename Gemm::Arguments args;
    args.mode = cutlass::gemm::GemmUniversalMode::kGemm;
    args.problem_shape = make_shape (m, n, k, l);
    args.mainloop.ptr_A = (const Element *) p->a;
    args.mainloop.dA = sa;
    args.mainloop.ptr_B = (const Element *) p->b;
    args.mainloop.dB = sb;
    args.epilogue.ptr_C = (const Element *) p->residual;
    args.epilogue.dC = sc;
    args.epilogue.ptr_D = (Element *) p->c;
    args.epilogue.dD = sd;
    args.epilogue.thread = {
      {                                       /* act (pre) */
        {                                     /* scaled · col_scales + bias */
          {                                   /* (alpha · acc) · row_scales */
            { { { p->alpha } }, {}, {} },     /* alpha · acc */
            { p->row_scales, 1.0f, {} },
            {},
          },
          { p->col_scales, 1.0f, {} },
          { (const Element *) p->bias, Element (0.0f), {} },
          {},
        },
        { (int) p->act },
      },
      {},                                     /* the residual, C */
      {},                                     /* + */
    };
    args.hw_info.device_id = 0;
    args.hw_info.sm_count = sm_count;
    return args;
  }
};

bool
aligned (const void *ptr)
{
  return ptr == nullptr || (uintptr_t) ptr % 16 == 0;
}

template <class F>
int
run (const AccelCutlassMatmulParams *p, int sm_count, void *workspace, cudaStream_t stream)
{
  typename F::Gemm gemm;
  typename F::Gemm::Arguments args = F::arguments (p, sm_count);
  if (gemm.can_implement (args) != cutlass::Status::kSuccess)
    return ACCEL_CUTLASS_UNSUPPORTED;
  if (gemm.initialize (args, workspace, stream) != cutlass::Status::kSuccess
      || gemm.run (stream) != cutlass::Status::kSuccess)
    {
      cudaError_t status = cudaGetLastError ();
      return status != cudaSuccess ? status : cudaErrorLaunchFailure;
    }
  return cudaGetLastError ();
}

}  // namespace matmul_sm90

using namespace matmul_sm90;

extern "C" int
accel_cutlass_matmul_sm90_supported (const AccelCutlassMatmulParams *p)
{
  bool types = (p->a_type == ACCEL_CUTLASS_BF16 || p->a_type == ACCEL_CUTLASS_F16) && p->b_type == p->a_type
               && p->c_type == p->a_type && (p->bias == nullptr || p->bias_type == p->a_type);
  return types && !p->transa && p->transb && p->beta == 0.0f && p->amax == nullptr && p->c_scale == 1.0f
         && p->residual != nullptr && p->m > 0 && p->n > 0 && p->k > 0 && p->batch > 0
         && p->k % 8 == 0 && p->n % 8 == 0 && p->m < (1LL << 31) && p->n < (1LL << 31) && p->k < (1LL << 31)
         && p->batch < (1LL << 31) && aligned (p->a) && aligned (p->b) && aligned (p->c) && aligned (p->residual)
         && aligned (p->bias) && aligned (p->row_scales) && aligned (p->col_scales);
}

extern "C" size_t
accel_cutlass_matmul_sm90_workspace (const AccelCutlassMatmulParams *p, int sm_count)
{
  if (p->a_type == ACCEL_CUTLASS_BF16)
    return Fused<cutlass::bfloat16_t>::Gemm::get_workspace_size (Fused<cutlass::bfloat16_t>::arguments (p, sm_count));
  return Fused<cutlass::half_t>::Gemm::get_workspace_size (Fused<cutlass::half_t>::arguments (p, sm_count));
}

extern "C" int
accel_cutlass_matmul_sm90 (const AccelCutlassMatmulParams *p, int sm_count, void *workspace, cudaStream_t stream)
{
  if (!accel_cutlass_matmul_sm90_supported (p))
    return ACCEL_CUTLASS_UNSUPPORTED;
  if (p->a_type == ACCEL_CUTLASS_BF16)
    return run<Fused<cutlass::bfloat16_t>> (p, sm_count, workspace, stream);
  return run<Fused<cutlass::half_t>> (p, sm_count, workspace, stream);
}
