/* sigbus.h: guarded framebuffer file mappings (sigbus.c). */
#ifndef FBGFX_SIGBUS_H
#define FBGFX_SIGBUS_H

#include <stddef.h>

int fbgfx_guard_add(void *base, size_t length, int writable);
int fbgfx_guard_lost(int slot);
int fbgfx_guard_remove(int slot);

#endif
