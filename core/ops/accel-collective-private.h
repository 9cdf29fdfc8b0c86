/* accel-collective-private.h: what the collective op types share in their
 * validation. Not installed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "accel-op-impl-private.h"

G_BEGIN_DECLS

/* As ACCEL_DEFINE_OP_TYPE(), for a final collective op type (with
 * G_DECLARE_FINAL_TYPE (@TN, @t_n, …, AccelCollective) in its header):
 * also sets the class's check_peer and needs_all_ranks. */
#define ACCEL_DEFINE_COLLECTIVE_TYPE(TN, t_n, op_name, description, params, validate_func, check_peer_func, all_ranks) \
  G_DEFINE_FINAL_TYPE (TN, t_n, ACCEL_TYPE_COLLECTIVE)                                           \
  static void                                                                                    \
  t_n##_class_init (TN##Class *klass)                                                            \
  {                                                                                              \
    AccelOpClass *op_class = ACCEL_OP_CLASS (klass);                                             \
    op_class->validate = (validate_func);                                                        \
    ACCEL_COLLECTIVE_CLASS (klass)->check_peer = (check_peer_func);                              \
    ACCEL_COLLECTIVE_CLASS (klass)->needs_all_ranks = (all_ranks);                               \
    accel_op_class_set_metadata (op_class, (op_name), (description));                            \
    accel_op_class_install_params (op_class, (params), G_N_ELEMENTS (params));                   \
  }                                                                                              \
  static void                                                                                    \
  t_n##_init (TN *self)                                                                          \
  {                                                                                              \
  }

/* That the communicator has bound the op to a rank (rank, n-ranks,
 * comm-key), with a message telling users where collectives go. */
gboolean accel_collective_check_binding_ (AccelCollective *self, GError **error);

/* That @value names a rank of the communicator; @property names it. */
gboolean accel_collective_check_rank_value_ (AccelCollective *self, const char *property, int value,
                                             gboolean allow_none, GError **error);

/* That @buffer is set (the optional buffers some ranks need). */
gboolean accel_collective_require_ (AccelCollective *self, const char *property, AccelBuffer *buffer,
                                    GError **error);

/* That @buffer is set, contiguous, and holds @count elements; @why says
 * where the count comes from. */
gboolean accel_collective_check_count_ (AccelCollective *self, const char *property, AccelBuffer *buffer,
                                        gint64 count, const char *why, GError **error);

/* That a reduction of @reduction over @dtype is defined. */
gboolean accel_collective_check_reduction_ (AccelCollective *self, const char *property, AccelDType dtype,
                                            AccelReduction reduction, GError **error);

/* That @a (property @name of this rank) and @b (the same property of the
 * first rank's op) agree in dtype and element count. */
gboolean accel_collective_check_same_ (AccelCollective *self, AccelCollective *first, const char *name,
                                       AccelBuffer *a, AccelBuffer *b, GError **error);

/* That an int parameter is the same on every rank. */
gboolean accel_collective_check_same_int_ (AccelCollective *self, AccelCollective *first, const char *name,
                                           int a, int b, GError **error);

/* That @dst does not overlap @src except where an in-place form allows:
 * @in_place_offset (elements of @dst) is where @src may sit inside @dst
 * (for the in-place forms of all-gather and reduce-scatter), or -1 when
 * only the very same range is allowed. */
gboolean accel_collective_check_alias_ (AccelCollective *self, const char *name_src, AccelBuffer *src,
                                        const char *name_dst, AccelBuffer *dst, gint64 in_place_offset,
                                        GError **error);

G_END_DECLS
