/* DRM/KMS ioctls. The structs are the kernel ABI, declared in drm_uapi.h (vendored so
 * that building fbgfx needs no libdrm-dev). */
#include "drm.h"
#include <sys/mman.h>
#include <unistd.h>

int fbgfx_drm_ioctl(int fd, unsigned long request, void *arg)
{
    int rc;
    do {
        rc = ioctl(fd, request, arg);
    } while (rc < 0 && (errno == EINTR || errno == EAGAIN));
    return rc < 0 ? -errno : 0;
}

int fbgfx_drm_wait_vblank(int fd, unsigned int crtc_index)
{
    union drm_wait_vblank vbl;
    memset(&vbl, 0, sizeof vbl);
    /* CRTC 0 and 1 have their own bits; higher ones are shifted into a field. */
    unsigned int high = crtc_index > 1 ? ((crtc_index << 1) & 0x3e) : (crtc_index == 1 ? 0x20000000u : 0);
    vbl.request.type = (enum drm_vblank_seq_type)(_DRM_VBLANK_RELATIVE | high);
    vbl.request.sequence = 1;
    return fbgfx_drm_ioctl(fd, DRM_IOCTL_WAIT_VBLANK, &vbl);
}

int fbgfx_drm_map_pages(int fd, const uint64_t *offsets, int count, size_t size, void **out)
{
    if (count <= 0 || size == 0 || size % (size_t)sysconf(_SC_PAGESIZE))
        return -EINVAL;
    size_t total = size * (size_t)count;
    /* Reserve the whole range first, then put each buffer at its place in it. */
    char *base = mmap(NULL, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED)
        return -errno;
    for (int i = 0; i < count; i++) {
        void *p = mmap(base + (size_t)i * size, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
                       (off_t)offsets[i]);
        if (p == MAP_FAILED) {
            int err = errno;
            munmap(base, total);
            return -err;
        }
    }
    *out = base;
    return 0;
}

int fbgfx_drm_detach_pages(void *base, size_t length)
{
    void *p = mmap(base, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    return p == MAP_FAILED ? -errno : 0;
}

int fbgfx_drm_unmap(void *base, size_t length)
{
    return munmap(base, length) < 0 ? -errno : 0;
}
