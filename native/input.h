/* input.h: evdev queries and struct input_event in one layout (input.c). */
#ifndef FBGFX_INPUT_H
#define FBGFX_INPUT_H

#include "prelude.h"
#include <linux/input.h>

struct fbgfx_input_event {
    int64_t sec;
    int64_t usec;
    uint16_t type;
    uint16_t code;
    int32_t value;
};

#define FBGFX_INPUT_EVENT_SIZE ((int)sizeof(struct input_event))

int fbgfx_input_name(int fd, char *buf, int len);
int fbgfx_input_bits(int fd, int ev, uint8_t *buf, int len); /* ev 0: event types */
int fbgfx_input_props(int fd, uint8_t *buf, int len);
int fbgfx_input_keys(int fd, uint8_t *buf, int len); /* keys held now */
int fbgfx_input_absinfo(int fd, int axis, struct input_absinfo *out);
int fbgfx_input_mt_slots(int fd, int32_t *values, int n);
int fbgfx_input_clock_monotonic(int fd);
int fbgfx_input_decode(const uint8_t *buf, size_t len, struct fbgfx_input_event *out, int max);
int fbgfx_input_encode(const struct fbgfx_input_event *in, int n, uint8_t *out, size_t len);

#endif
