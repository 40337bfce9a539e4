/* Headers for every C file in native/. <sys/ioctl.h> must come before <linux/fb.h>:
 * fb.h uses _IOW() for FBIO_WAITFORVSYNC without including it. */
#ifndef FBGFX_PRELUDE_H
#define FBGFX_PRELUDE_H

#include <errno.h>
#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/fb.h>
#include <linux/kd.h>

/* FBGFX_HOT marks a hot loop: on x86-64 GCC builds a baseline and an AVX2 clone and the
 * loader picks one at run time; elsewhere (ARM boards) it is a plain function. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(FBGFX_NO_CLONES)
#define FBGFX_HOT __attribute__((target_clones("avx2", "default")))
#else
#define FBGFX_HOT
#endif

#endif
