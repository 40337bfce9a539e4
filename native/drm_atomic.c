/* Atomic KMS (native/drm_atomic.h): declarations only; the ioctls go through
 * fbgfx_drm_ioctl (drm.c). */
#include "drm_atomic.h"
