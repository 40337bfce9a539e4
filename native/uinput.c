/* <linux/uinput.h>: a single-touch touchscreen made from user space, so that tests
 * can touch a real kernel's display. UI_DEV_SETUP and UI_ABS_SETUP need Linux 4.5. */
#include "uinput.h"
#include <linux/uinput.h>

static int fbgfx_uinput_ioctl(int fd, unsigned long request, unsigned long arg)
{
    return ioctl(fd, request, arg) < 0 ? -errno : 0;
}

int fbgfx_uinput_create(int fd, const char *name, int width, int height)
{
    struct uinput_setup setup;
    struct uinput_abs_setup abs;
    int rc;

    if (width < 1 || height < 1)
        return -EINVAL;
    if ((rc = fbgfx_uinput_ioctl(fd, UI_SET_EVBIT, EV_SYN)) < 0 ||
        (rc = fbgfx_uinput_ioctl(fd, UI_SET_EVBIT, EV_KEY)) < 0 ||
        (rc = fbgfx_uinput_ioctl(fd, UI_SET_KEYBIT, BTN_TOUCH)) < 0 ||
        (rc = fbgfx_uinput_ioctl(fd, UI_SET_EVBIT, EV_ABS)) < 0 ||
        (rc = fbgfx_uinput_ioctl(fd, UI_SET_ABSBIT, ABS_X)) < 0 ||
        (rc = fbgfx_uinput_ioctl(fd, UI_SET_ABSBIT, ABS_Y)) < 0 ||
        (rc = fbgfx_uinput_ioctl(fd, UI_SET_PROPBIT, INPUT_PROP_DIRECT)) < 0)
        return rc;
    memset(&abs, 0, sizeof(abs));
    abs.code = ABS_X;
    abs.absinfo.maximum = width - 1;
    if (ioctl(fd, UI_ABS_SETUP, &abs) < 0)
        return -errno;
    abs.code = ABS_Y;
    abs.absinfo.maximum = height - 1;
    if (ioctl(fd, UI_ABS_SETUP, &abs) < 0)
        return -errno;
    memset(&setup, 0, sizeof(setup));
    setup.id.bustype = BUS_VIRTUAL;
    setup.id.vendor = 0x1209; /* pid.codes' test vendor */
    setup.id.product = 0x0001;
    strncpy(setup.name, name, UINPUT_MAX_NAME_SIZE - 1);
    if (ioctl(fd, UI_DEV_SETUP, &setup) < 0)
        return -errno;
    return ioctl(fd, UI_DEV_CREATE) < 0 ? -errno : 0;
}

int fbgfx_uinput_sysname(int fd, char *buf, int len)
{
    return ioctl(fd, UI_GET_SYSNAME(len), buf) < 0 ? -errno : 0;
}

int fbgfx_uinput_destroy(int fd)
{
    return ioctl(fd, UI_DEV_DESTROY) < 0 ? -errno : 0;
}
