/* accel-property-field-private.h: storing a GValue in a struct field and
 * back, by the value's fundamental type; shared by the property tables of
 * GObject classes (accel-property-field.c) and of op classes
 * (accel-op-params.c). Not installed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "accel-private.h"

G_BEGIN_DECLS

/* Stores @value in @field (a copy of strings, boxed values and variants, a
 * reference to objects; the old value freed); returns whether it changed. */
gboolean _accel_field_store (gpointer field, const GValue *value);
/* Sets @value (initialised to the field's type) from @field. */
void _accel_field_load (gconstpointer field, GValue *value);
/* Frees what @field, of @value_type, owns: only object references if
 * @objects_only. */
void _accel_field_clear (gpointer field, GType value_type, gboolean objects_only);
/* Stores @value in @field and notifies @pspec if it changed and the pspec
 * has G_PARAM_EXPLICIT_NOTIFY (GObject notifies the others itself). */
void _accel_field_set_property (GObject *object, gpointer field, const GValue *value, GParamSpec *pspec);

G_END_DECLS
