/* fastcall.h: the one-call drawing fast paths as plain CPython functions (fastcall.c). */
#ifndef FBGFX_FASTCALL_H
#define FBGFX_FASTCALL_H

int fastcall_install(void);

#endif
