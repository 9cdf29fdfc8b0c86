/* accel-image-plan.c: the sampling plans of resize and convert-color
 * (accel-image-plan.h), shared by their kernels on every backend.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-image-private.h"
#include "accel-image-plan.h"

static void
layout_of (const AccelImage *image, AccelImageLayout *layout)
{
  gboolean ok = accel_image_get_layout (image, layout, NULL);
  g_return_if_fail (ok);
}

/**
 * accel_image_plan_resize: (skip)
 * @op: a validated `resize` op
 * @plan: (out caller-allocates): its plan
 *
 * Each destination sample plane from the source plane of the same index,
 * at its own size.
 */
void
accel_image_plan_resize (AccelResize *op, AccelImagePlan *plan)
{
  g_return_if_fail (ACCEL_IS_RESIZE (op) && plan != NULL);

  memset (plan, 0, sizeof *plan);
  layout_of (&op->src, &plan->src);
  layout_of (&op->dst, &plan->dst);
  for (guint s = 0; s < plan->dst.n_samples; s++)
    {
      const AccelImageSamples *a = &plan->src.samples[s], *b = &plan->dst.samples[s];
      AccelImageTarget *t = &plan->targets[s];
      t->n_sources = 1;
      t->source[0] = (int) s;
      t->ax[0] = accel_image_axis_resize (a->width, b->width, op->method);
      t->ay[0] = accel_image_axis_resize (a->height, b->height, op->method);
    }
}

static int
component_of (AccelImageChannel channel)
{
  switch (channel)
    {
    case ACCEL_IMAGE_CHANNEL_Y: case ACCEL_IMAGE_CHANNEL_R: return 0;
    case ACCEL_IMAGE_CHANNEL_U: case ACCEL_IMAGE_CHANNEL_G: return 1;
    case ACCEL_IMAGE_CHANNEL_V: case ACCEL_IMAGE_CHANNEL_B: return 2;
    default: return 3;
    }
}

/* 0 where the siting is cosited on @axis (0: horizontal), else 1. */
static int
site_half (AccelChromaSiting siting, int sub, int axis)
{
  gboolean cosited = siting == ACCEL_CHROMA_SITING_COSITED || (siting == ACCEL_CHROMA_SITING_MPEG2 && axis == 0);
  return accel_image_site_half (sub, cosited);
}

/**
 * accel_image_plan_convert: (skip)
 * @op: a validated `convert-color` op
 * @plan: (out caller-allocates): its plan
 *
 * Each destination sample plane from the source planes its channels need
 * (those with a coefficient in its rows of the colour transform, and
 * alpha), sampled at the destination's sample positions.
 */
void
accel_image_plan_convert (AccelConvertColor *op, AccelImagePlan *plan)
{
  g_return_if_fail (ACCEL_IS_CONVERT_COLOR (op) && plan != NULL);
  int comp_plane[4] = { -1, -1, -1, -1 }, comp_channel[4] = { 0 };

  memset (plan, 0, sizeof *plan);
  plan->convert = TRUE;
  layout_of (&op->src, &plan->src);
  layout_of (&op->dst, &plan->dst);
  accel_image_color_transform (op->src.format, op->src_matrix, op->src_range, op->dst.format, op->dst_matrix,
                               op->dst_range, plan->transform);
  for (guint s = 0; s < plan->src.n_samples; s++)
    for (int c = 0; c < plan->src.samples[s].channels; c++)
      {
        int k = component_of (plan->src.samples[s].channel[c]);
        comp_plane[k] = (int) s;
        comp_channel[k] = c;
      }

  for (guint d = 0; d < plan->dst.n_samples; d++)
    {
      const AccelImageSamples *b = &plan->dst.samples[d];
      AccelImageTarget *t = &plan->targets[d];
      gboolean need[ACCEL_IMAGE_MAX_PLANES] = { FALSE };
      for (int c = 0; c < b->channels; c++)
        {
          int k = component_of (b->channel[c]);
          if (k < 3)
            {
              t->take[c] = k;
              for (int j = 0; j < 3; j++)
                if (plan->transform[k * 4 + j] != 0.0f && comp_plane[j] >= 0)
                  need[comp_plane[j]] = TRUE;
            }
          else if (comp_plane[3] >= 0)
            {
              t->take[c] = ACCEL_IMAGE_TAKE_ALPHA;
              need[comp_plane[3]] = TRUE;
            }
          else
            t->take[c] = ACCEL_IMAGE_TAKE_OPAQUE;
        }
      for (int k = 0; k < 4; k++)
        t->comp_source[k] = -1;
      for (guint s = 0; s < plan->src.n_samples; s++)
        {
          if (!need[s])
            continue;
          const AccelImageSamples *a = &plan->src.samples[s];
          int i = t->n_sources++;
          t->source[i] = (int) s;
          t->ax[i] = accel_image_axis_convert (plan->src.width, plan->dst.width, a->sub_x,
                                               site_half (op->src_chroma_siting, a->sub_x, 0), b->sub_x,
                                               site_half (op->dst_chroma_siting, b->sub_x, 0), op->method);
          t->ay[i] = accel_image_axis_convert (plan->src.height, plan->dst.height, a->sub_y,
                                               site_half (op->src_chroma_siting, a->sub_y, 1), b->sub_y,
                                               site_half (op->dst_chroma_siting, b->sub_y, 1), op->method);
          for (int k = 0; k < 4; k++)
            if (comp_plane[k] == (int) s)
              {
                t->comp_source[k] = i;
                t->comp_channel[k] = comp_channel[k];
              }
        }
    }
}

/**
 * accel_image_plan_of: (skip)
 * @op: a validated `resize` or `convert-color` op
 * @plan: (out caller-allocates): its plan
 * @src: (out) (transfer none): its source image's buffer
 * @dst: (out) (transfer none): its destination image's buffer
 *
 * accel_image_plan_resize() or accel_image_plan_convert(), whichever
 * @op is, with its buffers: for a kernel that serves both op types.
 */
void
accel_image_plan_of (AccelOp *op, AccelImagePlan *plan, AccelBuffer **src, AccelBuffer **dst)
{
  g_return_if_fail (ACCEL_IS_RESIZE (op) || ACCEL_IS_CONVERT_COLOR (op));
  g_return_if_fail (src != NULL && dst != NULL);

  if (ACCEL_IS_RESIZE (op))
    {
      AccelResize *self = ACCEL_RESIZE (op);
      accel_image_plan_resize (self, plan);
      *src = self->src.buffer;
      *dst = self->dst.buffer;
    }
  else
    {
      AccelConvertColor *self = ACCEL_CONVERT_COLOR (op);
      accel_image_plan_convert (self, plan);
      *src = self->src.buffer;
      *dst = self->dst.buffer;
    }
}
