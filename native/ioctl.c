/* Thin ioctl wrappers: each returns 0 (or a value) on success and -errno on failure,
 * so Python never reads a stale errno. */
#include "ioctl.h"

static int fbgfx_ioctl(int fd, unsigned long request, void *arg)
{
    return ioctl(fd, request, arg) < 0 ? -errno : 0;
}

int fbgfx_get_var(int fd, struct fb_var_screeninfo *var)
{
    return fbgfx_ioctl(fd, FBIOGET_VSCREENINFO, var);
}
int fbgfx_put_var(int fd, struct fb_var_screeninfo *var)
{
    return fbgfx_ioctl(fd, FBIOPUT_VSCREENINFO, var);
}
int fbgfx_get_fix(int fd, struct fb_fix_screeninfo *fix)
{
    return fbgfx_ioctl(fd, FBIOGET_FSCREENINFO, fix);
}
int fbgfx_pan(int fd, struct fb_var_screeninfo *var)
{
    return fbgfx_ioctl(fd, FBIOPAN_DISPLAY, var);
}
int fbgfx_get_cmap(int fd, struct fb_cmap *cmap)
{
    return fbgfx_ioctl(fd, FBIOGETCMAP, cmap);
}
int fbgfx_put_cmap(int fd, struct fb_cmap *cmap)
{
    return fbgfx_ioctl(fd, FBIOPUTCMAP, cmap);
}

int fbgfx_blank(int fd, int level)
{
    /* A driver may answer 1: "not done in hardware, let the console blank" (cirrusfb at
     * FB_BLANK_NORMAL). Pass it on so Python does not claim a blank that did not happen. */
    int rc = ioctl(fd, FBIOBLANK, (unsigned long)level);
    return rc < 0 ? -errno : rc;
}

int fbgfx_wait_for_vsync(int fd)
{
    uint32_t crtc = 0;
    return fbgfx_ioctl(fd, FBIO_WAITFORVSYNC, &crtc);
}

int fbgfx_kd_get_mode(int fd)
{
    int mode = 0;
    return ioctl(fd, KDGETMODE, &mode) < 0 ? -errno : mode;
}

int fbgfx_kd_set_mode(int fd, int mode)
{
    return ioctl(fd, KDSETMODE, (unsigned long)mode) < 0 ? -errno : 0;
}
