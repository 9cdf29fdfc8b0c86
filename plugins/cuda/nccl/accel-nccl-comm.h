/* accel-nccl-comm.h: this process's NCCL ranks, one per (communicator
 * incarnation, CUDA device). Private to the nccl plugin.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <nccl.h>
#include "accel-cuda.h"

G_BEGIN_DECLS

typedef struct _AccelNcclRank AccelNcclRank;

/* The rank @part runs as on device @ordinal: made on first use from the
 * part's bootstrap bytes (non-blocking init, waited for at most the part's
 * timeout, and given up as soon as the incarnation is aborted here). On
 * the device thread. */
AccelNcclRank *accel_nccl_rank_get (AccelCollective *part, int ordinal, GError **error);
AccelNcclRank *accel_nccl_rank_ref (AccelNcclRank *rank);
void accel_nccl_rank_unref (AccelNcclRank *rank);

/* The communicator to enqueue on, with the rank's lock held (an abort
 * waits for it), or NULL with @error set when the rank was aborted. */
ncclComm_t accel_nccl_rank_lock (AccelNcclRank *rank, GError **error);
/* Finishes a call made with the lock held: NCCL's status, waited for
 * while in progress (a non-blocking communicator), as a GError. Unlocks. */
gboolean accel_nccl_rank_finish (AccelNcclRank *rank, ncclResult_t status, const char *what,
                                 AccelCollective *part, GError **error);

/* Counts a collective in flight on the GPU, for the watchdog, and judges
 * it once it has run (an AccelCudaCheckFunc: it fails if the rank was
 * aborted meanwhile, since an aborted collective returns with garbage). */
void accel_nccl_rank_launched (AccelNcclRank *rank);
gboolean accel_nccl_rank_check (const gint32 *codes, guint n_codes, gpointer rank, GError **error);

/* Aborts this process's rank of @comm_key on @ordinal (ncclCommAbort), if
 * there is one: its running collectives return, and fail. */
void accel_nccl_abort (const char *comm_key, int ordinal, const char *reason);

/* NCCL status as a GError (ACCEL_ERROR_LIBRARY, naming the call). */
gboolean accel_nccl_check (ncclResult_t status, const char *what, GError **error);

G_END_DECLS
