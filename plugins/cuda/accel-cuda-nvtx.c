/* accel-cuda-nvtx.c: NVTX ranges around every op and transfer when
 * ACCEL_NVTX=1, for Nsight Systems: in the domain "Accel", named after the
 * op type (`gemm`, `launch`, `write`), in the category of its lane
 * (`lane 0`, …). A range starts when the device thread takes the work and
 * ends when the completion thread sees its GPU work done, so it shows the
 * op's whole life in the device. NVTX is header-only: with no tool
 * attached, its calls cost a branch.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <nvtx3/nvToolsExt.h>
#include "accel-cuda-private.h"

int accel_cuda_nvtx_enabled_;   /* 0: unknown, 1: on, -1: off */

static nvtxDomainHandle_t domain;
G_LOCK_DEFINE_STATIC (names);
static GHashTable *names;       /* interned op type name -> nvtxStringHandle_t */
static guint64 named_lanes;     /* bit i: category i + 1 was named */

gboolean
accel_cuda_nvtx_init (void)
{
  static gsize once = 0;
  if (g_once_init_enter (&once))
    {
      gboolean on = g_strcmp0 (g_getenv ("ACCEL_NVTX"), "1") == 0;
      if (on)
        {
          domain = nvtxDomainCreateA ("Accel");
          names = g_hash_table_new (NULL, NULL);
        }
      g_atomic_int_set (&accel_cuda_nvtx_enabled_, on ? 1 : -1);
      g_once_init_leave (&once, 1);
    }
  return g_atomic_int_get (&accel_cuda_nvtx_enabled_) > 0;
}

/* Starts a range for work named @what (an op type name, or a transfer's
 * kind) on lane @lane. Returns its id, never 0. */
guint64
accel_cuda_nvtx_start (const char *what, guint lane)
{
  const char *key = g_intern_string (what);

  G_LOCK (names);
  nvtxStringHandle_t handle = g_hash_table_lookup (names, key);
  if (handle == NULL)
    {
      handle = nvtxDomainRegisterStringA (domain, key);
      g_hash_table_insert (names, (gpointer) key, handle);
    }
  if (lane < 64 && (named_lanes & (G_GUINT64_CONSTANT (1) << lane)) == 0)
    {
      char category[32];
      g_snprintf (category, sizeof category, "lane %u", lane);
      nvtxDomainNameCategoryA (domain, lane + 1, category);
      named_lanes |= G_GUINT64_CONSTANT (1) << lane;
    }
  G_UNLOCK (names);

  nvtxEventAttributes_t attr = { 0 };
  attr.version = NVTX_VERSION;
  attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attr.category = lane + 1;
  attr.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  attr.message.registered = handle;
  nvtxRangeId_t id = nvtxDomainRangeStartEx (domain, &attr);
  return id ? id : 1;
}

void
accel_cuda_nvtx_end (guint64 id)
{
  if (id != 0)
    nvtxDomainRangeEnd (domain, id);
}
