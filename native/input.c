/* <linux/input.h>: evdev queries and the decoding of struct input_event.
 *
 * struct input_event's time fields are two longs on most systems but two
 * __kernel_ulong_t on 32-bit systems built with 64-bit time_t; the header's
 * input_event_sec/input_event_usec macros name the right ones, so the compiler
 * (not Python) decides the layout, on armhf as on x86-64. */
#include "input.h"
#include <time.h>

/* An ioctl that answers a length (EVIOCG* with a buffer) or 0; -errno on failure. */
static int fbgfx_input_ioctl(int fd, unsigned long request, void *arg)
{
    int rc = ioctl(fd, request, arg);
    return rc < 0 ? -errno : rc;
}

int fbgfx_input_name(int fd, char *buf, int len)
{
    return fbgfx_input_ioctl(fd, EVIOCGNAME(len), buf);
}

int fbgfx_input_bits(int fd, int ev, uint8_t *buf, int len)
{
    return fbgfx_input_ioctl(fd, EVIOCGBIT(ev, len), buf);
}

int fbgfx_input_props(int fd, uint8_t *buf, int len)
{
    return fbgfx_input_ioctl(fd, EVIOCGPROP(len), buf);
}

int fbgfx_input_keys(int fd, uint8_t *buf, int len)
{
    return fbgfx_input_ioctl(fd, EVIOCGKEY(len), buf);
}

int fbgfx_input_absinfo(int fd, int axis, struct input_absinfo *out)
{
    if (axis < 0 || axis > ABS_MAX)
        return -EINVAL;
    return fbgfx_input_ioctl(fd, EVIOCGABS(axis), out);
}

/* values[0] is the ABS_MT_* code asked for; values[1..n-1] receive one value per slot. */
int fbgfx_input_mt_slots(int fd, int32_t *values, int n)
{
    if (n < 2)
        return -EINVAL;
    return fbgfx_input_ioctl(fd, EVIOCGMTSLOTS((size_t)n * sizeof(int32_t)), values);
}

/* Timestamps on CLOCK_MONOTONIC, the clock of Python's time.monotonic(). */
int fbgfx_input_clock_monotonic(int fd)
{
    int clock = CLOCK_MONOTONIC;
    return fbgfx_input_ioctl(fd, EVIOCSCLOCKID, &clock);
}

/* Decode the whole events in buf[0..len) into out[0..max); returns how many. */
int fbgfx_input_decode(const uint8_t *buf, size_t len, struct fbgfx_input_event *out, int max)
{
    struct input_event ev;
    int n = 0;
    for (size_t at = 0; n < max && len - at >= sizeof ev; at += sizeof ev, n++) {
        memcpy(&ev, buf + at, sizeof ev);
        out[n].sec = (int64_t)ev.input_event_sec;
        out[n].usec = (int64_t)ev.input_event_usec;
        out[n].type = ev.type;
        out[n].code = ev.code;
        out[n].value = ev.value;
    }
    return n;
}

/* Encode in[0..n) as struct input_event bytes into out (n * FBGFX_INPUT_EVENT_SIZE
 * bytes): the form /dev/input/eventN hands out, for recordings and tests. */
int fbgfx_input_encode(const struct fbgfx_input_event *in, int n, uint8_t *out, size_t len)
{
    struct input_event ev;
    if (n < 0 || (size_t)n * sizeof ev > len)
        return -EINVAL;
    for (int i = 0; i < n; i++) {
        memset(&ev, 0, sizeof ev);
        ev.input_event_sec = in[i].sec;
        ev.input_event_usec = in[i].usec;
        ev.type = in[i].type;
        ev.code = in[i].code;
        ev.value = in[i].value;
        memcpy(out + (size_t)i * sizeof ev, &ev, sizeof ev);
    }
    return n;
}
