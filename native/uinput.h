/* uinput.h: a touchscreen made from user space (uinput.c). */
#ifndef FBGFX_UINPUT_H
#define FBGFX_UINPUT_H

#include "prelude.h"

int fbgfx_uinput_create(int fd, const char *name, int width, int height);
int fbgfx_uinput_sysname(int fd, char *buf, int len);
int fbgfx_uinput_destroy(int fd);

#endif
