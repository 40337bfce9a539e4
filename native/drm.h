/* drm.h: DRM/KMS ioctls (drm.c) on the kernel ABI of drm_uapi.h (vendored, so that
 * building fbgfx needs no libdrm-dev). */
#ifndef FBGFX_DRM_H
#define FBGFX_DRM_H

#include "drm_uapi.h"
#include "prelude.h"

int fbgfx_drm_ioctl(int fd, unsigned long request, void *arg);
int fbgfx_drm_wait_vblank(int fd, unsigned int crtc_index);
int fbgfx_drm_map_pages(int fd, const uint64_t *offsets, int count, size_t size, void **out);
int fbgfx_drm_detach_pages(void *base, size_t length);
int fbgfx_drm_unmap(void *base, size_t length);

#endif
