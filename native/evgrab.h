/* evgrab.h: an exclusive grab of an input device (evgrab.c, fbgfx idle). */
#ifndef FBGFX_EVGRAB_H
#define FBGFX_EVGRAB_H

int fbgfx_input_grab(int fd, int on);

#endif
