/* accel-op-private.h: what accel-op.c, accel-op-params.c and
 * accel-op-serialize.c share about op classes. Not installed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "accel-private.h"

G_BEGIN_DECLS

/* The key of a serialised op's dictionary under which the class's
 * serialize_extra state goes: no property name starts with '@'. */
#define ACCEL_OP_EXTRA_KEY "@extra"

/* One parameter of an op class as the runtime keeps it: an installed table
 * entry (offset >= 0), or a buffer installed by hand with
 * accel_op_class_install_buffer() (offset -1: read through its property).
 * Slots live as long as the process (op types are never unloaded). */
typedef struct {
  GParamSpec *pspec;        /* name: pspec->name, interned */
  AccelOpParamKind kind;
  gssize offset;            /* from the start of the instance, or -1 */
  AccelAccess access;       /* buffers */
  AccelOpParamFlags flags;
  gint64 min, max;          /* integers, enums: unused */
  double dmin, dmax;
  gpointer enum_class;      /* GEnumClass or GFlagsClass, referenced for good */
} AccelOpSlot;

/* What the runtime knows of one op class, kept as qdata on its GType. */
typedef struct {
  char *name;
  char *description;
  GPtrArray *own;           /* AccelOpSlot: the table entries installed on this class; prop id = index + 1 */
  /* Made on first use, for the class and all its ancestors: */
  const AccelOpSlot **params;    /* every table slot, %NULL-terminated */
  guint n_params;
  const AccelOpSlot **buffers;   /* every buffer slot (tables and by hand), %NULL-terminated */
  guint n_buffers;
  gboolean flat;                 /* atomic: the two lists above are made */
} AccelOpClassInfo;

AccelOpClassInfo *_accel_op_class_info (GType type);
/* Makes the flat lists on first call. */
const AccelOpClassInfo *_accel_op_class_info_flat (GType type);
const AccelOpSlot *_accel_op_slot_of_pspec (GParamSpec *pspec);
AccelOpSlot *_accel_op_slot_new_buffer (GParamSpec *pspec, AccelAccess access, gboolean required);

/* accel-op.c: the op type named @type_name, loading the plugin that
 * registers it if need be. */
GType _accel_op_lookup_type (const char *type_name, GError **error);

/* accel-op-params.c */
void _accel_op_params_set_defaults (AccelOp *self);
void _accel_op_params_dispose (AccelOp *self);
void _accel_op_params_finalize (AccelOp *self);
gboolean _accel_op_params_check (AccelOp *self, const AccelOpClassInfo *info, GError **error);
gboolean _accel_op_slot_check (AccelOp *self, const AccelOpSlot *slot, GError **error);

static inline AccelBuffer *
_accel_op_slot_peek_buffer (AccelOp *self, const AccelOpSlot *slot)
{
  if (G_LIKELY (slot->offset >= 0))
    return G_STRUCT_MEMBER (AccelBuffer *, self, slot->offset);
  GValue v = G_VALUE_INIT;
  g_value_init (&v, ACCEL_TYPE_BUFFER);
  g_object_get_property (G_OBJECT (self), slot->pspec->name, &v);
  AccelBuffer *buffer = g_value_get_object (&v);
  g_value_unset (&v);   /* the op keeps its own reference */
  return buffer;
}

G_END_DECLS
