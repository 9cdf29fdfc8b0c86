/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-private.h"

typedef struct {
  char *name;
  AccelSystem *system;     /* weak: the system owns its backends */
  char *unavailable_reason;
  GMutex lock;
  AccelRegistry *registry;   /* the system's: outlives the system while devices live */
} AccelBackendPrivate;

/**
 * AccelBackend:
 *
 * A backend (`cpu`, `cuda`), registered by a plugin: it finds the devices of
 * its kind on this machine. Each #AccelSystem makes one instance of each
 * backend the first time devices are listed.
 */
G_DEFINE_ABSTRACT_TYPE_WITH_PRIVATE (AccelBackend, accel_backend, G_TYPE_OBJECT)

static const AccelPropertyField backend_fields[] = {
  /**
   * AccelBackend:name:
   *
   * The name devices of this backend carry before their index (`cpu`, `cuda`).
   */
  ACCEL_FIELD_STRING (AccelBackendPrivate, name, "name", "Backend name", NULL,
                      G_PARAM_READABLE | G_PARAM_STATIC_STRINGS),
};

static void
accel_backend_finalize (GObject *object)
{
  AccelBackendPrivate *priv = accel_backend_get_instance_private (ACCEL_BACKEND (object));

  if (priv->system)
    g_object_remove_weak_pointer (G_OBJECT (priv->system), (gpointer *) &priv->system);
  g_clear_object (&priv->registry);
  accel_object_finalize_fields (object, ACCEL_TYPE_BACKEND);
  g_free (priv->unavailable_reason);
  g_mutex_clear (&priv->lock);
  G_OBJECT_CLASS (accel_backend_parent_class)->finalize (object);
}

static void
accel_backend_class_init (AccelBackendClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = accel_backend_finalize;

  accel_object_class_install_private_fields (object_class, backend_fields, G_N_ELEMENTS (backend_fields));
}

static void
accel_backend_init (AccelBackend *self)
{
  AccelBackendPrivate *priv = accel_backend_get_instance_private (self);
  g_mutex_init (&priv->lock);
}

void
_accel_backend_setup (AccelBackend *self, AccelSystem *system, const char *name)
{
  AccelBackendPrivate *priv = accel_backend_get_instance_private (self);
  priv->name = g_strdup (name);
  priv->system = system;
  g_object_add_weak_pointer (G_OBJECT (system), (gpointer *) &priv->system);
  priv->registry = g_object_ref (accel_system_get_registry (system));
}

/* The registry the backend's devices find kernels in: the system's, held
 * so that a device keeps working after the application let its system go. */
AccelRegistry *
_accel_backend_get_registry (AccelBackend *self)
{
  AccelBackendPrivate *priv = accel_backend_get_instance_private (self);
  return priv->registry;
}

/**
 * accel_backend_get_name:
 * @self: a backend
 *
 * Gets its name.
 *
 * Returns: its name
 */
const char *
accel_backend_get_name (AccelBackend *self)
{
  g_return_val_if_fail (ACCEL_IS_BACKEND (self), NULL);
  AccelBackendPrivate *priv = accel_backend_get_instance_private (self);
  return priv->name;
}

/**
 * accel_backend_get_system:
 * @self: a backend
 *
 * Gets the system it belongs to.
 *
 * Returns: (transfer none) (nullable): the system it belongs to
 */
AccelSystem *
accel_backend_get_system (AccelBackend *self)
{
  g_return_val_if_fail (ACCEL_IS_BACKEND (self), NULL);
  AccelBackendPrivate *priv = accel_backend_get_instance_private (self);
  return priv->system;
}

/**
 * accel_backend_get_unavailable_reason:
 * @self: a backend
 *
 * Gets why the backend found no device.
 *
 * Returns: (nullable): why the backend found no device (no driver, no GPU),
 *   or %NULL if it found some or has not looked yet
 */
const char *
accel_backend_get_unavailable_reason (AccelBackend *self)
{
  g_return_val_if_fail (ACCEL_IS_BACKEND (self), NULL);
  AccelBackendPrivate *priv = accel_backend_get_instance_private (self);
  return priv->unavailable_reason;
}

/**
 * accel_backend_set_unavailable_reason:
 * @self: a backend
 * @reason: (nullable): why no device is available
 *
 * For backend implementations, from `enumerate`.
 */
void
accel_backend_set_unavailable_reason (AccelBackend *self, const char *reason)
{
  g_return_if_fail (ACCEL_IS_BACKEND (self));
  AccelBackendPrivate *priv = accel_backend_get_instance_private (self);
  g_mutex_lock (&priv->lock);
  g_free (priv->unavailable_reason);
  priv->unavailable_reason = g_strdup (reason);
  g_mutex_unlock (&priv->lock);
}
