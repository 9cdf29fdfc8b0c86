/* flashattn-test.h: what the flashattn test programs share on top of
 * tests/cuda/cuda-test.h: the tolerances, the comparisons of cuda:0's
 * results with the CPU oracle's, the checks of refused ops, random ALiBi
 * slopes, and the registration of one case at one dtype and head dims.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "../cuda/cuda-test.h"

G_BEGIN_DECLS

/* What a case-at-a-kind test gets as its data; @c is the program's case. */
typedef struct {
  AccelDType dtype;
  gint64 D, Dv;
  gconstpointer c;
} FtParam;

/* A dtype and a head dim (Dv = D). */
typedef struct {
  AccelDType dtype;
  gint64 D;
} FtKind;

/* The head dims the kernels have specialised instances for (64, 128, 256)
 * in bf16, then in f16: what every case runs at. */
extern const FtKind ft_specialised_kinds[6];

/* Registers @func at "/flashattn/[@group/]DTYPE/DIMS/@name" with a new
 * FtParam as its data, freed with the test list; DIMS is "d@D", or
 * "d@D-dv@Dv" where they differ. */
void ft_add_case_test (const char *group, AccelDType dtype, gint64 D, gint64 Dv, const char *name, gconstpointer c,
                       GTestDataFunc func);

/* The forward pass's tolerance on the relative L2 error: 1e-2 for bf16,
 * 5e-3 for f16, 1e-5 for f32 (f32 arithmetic on both sides). */
double ft_tolerance (AccelDType dtype);

/* Fails the test where @got's relative L2 error against @want is above
 * @tol, or @got holds anything that is not finite. */
void ft_expect_close (const char *what, AccelBuffer *got, AccelBuffer *want, double tol);

/* Fails the test where an lse differs by more than 1e-3 (relative above 1);
 * the lse of rows that see no key is -inf on both sides. */
void ft_expect_lse_close (AccelBuffer *got, AccelBuffer *want);

/* Runs @on_cpu on cpu:0 and @on_gpu on cuda:0 (the same op over the two
 * sides of the pairs), then ft_expect_close() on @out and, where @lse is
 * not NULL, ft_expect_lse_close() on @lse. */
void ft_expect_same_forward (const char *what, AccelOp *on_cpu, AccelOp *on_gpu, const CtPair *out, const CtPair *lse,
                             double tol);

/* Whether the op type @op_name (and so its CPU oracle) exists; skips
 * otherwise. */
gboolean ft_have_op (const char *op_name);

/* Submits @op to cuda:0, which must refuse it with an ACCEL_ERROR; returns
 * that error. */
GError *ft_gpu_refusal (AccelOp *op);

/* Fails the test unless @error's message mentions @fragment (if not NULL). */
void ft_expect_mention (const GError *error, const char *fragment);

/* cuda:0 must refuse @op with ACCEL_ERROR_INVALID_ARGUMENT, in a message
 * that mentions @fragment and @fragment2 (each if not NULL). */
void ft_expect_invalid_argument (AccelOp *op, const char *fragment, const char *fragment2);

/* Random ALiBi slopes in [0.01, 0.5) (as the geometric series, but drawn
 * at random): NULL for @kind 0, f32 [@Hq] for 1, f32 [@B, @Hq] for 2. */
CtPair *ft_alibi_new (int kind, gint64 B, gint64 Hq);

/* The tensors of one attention op, the same on both devices. */
typedef struct {
  CtPair *q, *k, *v, *out, *lse;
  CtPair *alibi;      /* NULL: none */
} FtTensors;

/* Makes @t: q and k of @dtype with fresh values in [-2, 2), v in [-1, 1),
 * out of @out_dtype and the f32 lse holding random garbage (so unwritten
 * elements show), and the slopes of ft_alibi_new (@alibi, @B, @Hq). Q, k,
 * v and out are of @rank dimensions, lse of one less. */
void ft_tensors_init (FtTensors *t, AccelDType dtype, AccelDType out_dtype, guint rank, const gint64 *dq,
                      const gint64 *dk, const gint64 *dv, const gint64 *dout, const gint64 *dlse, int alibi, gint64 B,
                      gint64 Hq);
void ft_tensors_clear (FtTensors *t);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (FtTensors, ft_tensors_clear)

/* Sets element @index of @buffer (an i32 index buffer) to @value. */
void ft_poke (AccelBuffer *buffer, gint64 index, double value);

/* An i32 buffer on @device holding @values. */
AccelBuffer *ft_int_buffer (AccelDevice *device, const gint64 *dims, guint rank, const double *values);

/* @pair's buffer on cuda:0 (@on_gpu) or cpu:0; NULL for a NULL @pair. */
static inline AccelBuffer *
ft_side (const CtPair *pair, gboolean on_gpu)
{
  return pair == NULL ? NULL : on_gpu ? pair->gpu : pair->cpu;
}

G_END_DECLS
