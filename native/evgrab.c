/* evgrab.c: take (on = 1) or release (on = 0) an input device for this descriptor
 * alone (EVIOCGRAB): while taken, no other reader gets its events. */
#include "evgrab.h"
#include <errno.h>
#include <linux/input.h>
#include <sys/ioctl.h>

int fbgfx_input_grab(int fd, int on)
{
    return ioctl(fd, EVIOCGRAB, on ? 1 : 0) < 0 ? -errno : 0;
}
