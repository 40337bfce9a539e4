/* ioctl.h: the framebuffer and console ioctls (ioctl.c); the structs come from
 * <linux/fb.h> and <linux/kd.h> (prelude.h). */
#ifndef FBGFX_IOCTL_H
#define FBGFX_IOCTL_H

#include "prelude.h"

int fbgfx_get_var(int fd, struct fb_var_screeninfo *var);
int fbgfx_put_var(int fd, struct fb_var_screeninfo *var);
int fbgfx_get_fix(int fd, struct fb_fix_screeninfo *fix);
int fbgfx_pan(int fd, struct fb_var_screeninfo *var);
int fbgfx_get_cmap(int fd, struct fb_cmap *cmap);
int fbgfx_put_cmap(int fd, struct fb_cmap *cmap);
int fbgfx_blank(int fd, int level); /* 0 done, > 0 left undone by the driver, or -errno */
int fbgfx_wait_for_vsync(int fd);
int fbgfx_kd_get_mode(int fd);
int fbgfx_kd_set_mode(int fd, int mode);

#endif
