/* evgrab.c: take (on = 1) or release (on = 0) an input device for this descriptor
 * alone (EVIOCGRAB): while taken, no other reader gets its events. */
#include <errno.h>
#include <sys/ioctl.h>
#include <linux/input.h>

int fbgfx_input_grab(int fd, int on)
{
    return ioctl(fd, EVIOCGRAB, on ? 1 : 0) < 0 ? -errno : 0;
}
