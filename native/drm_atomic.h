/* Atomic KMS: the DRM uapi structs and ioctl numbers for properties, property blobs
 * and atomic commits (include/uapi/drm/drm_mode.h and drm.h; MIT licence, see
 * drm_uapi.h and NOTICE). Declared with the kernel's names, field order and types. */
#ifndef FBGFX_DRM_ATOMIC_H
#define FBGFX_DRM_ATOMIC_H

#include "drm_uapi.h"

#define DRM_PROP_NAME_LEN 32

struct drm_mode_obj_get_properties {
    uint64_t props_ptr;
    uint64_t prop_values_ptr;
    uint32_t count_props;
    uint32_t obj_id;
    uint32_t obj_type;
};

struct drm_mode_property_enum {
    uint64_t value;
    char name[DRM_PROP_NAME_LEN];
};

struct drm_mode_get_property {
    uint64_t values_ptr;
    uint64_t enum_blob_ptr;
    uint32_t prop_id;
    uint32_t flags;
    char name[DRM_PROP_NAME_LEN];
    uint32_t count_values;
    uint32_t count_enum_blobs;
};

struct drm_mode_atomic {
    uint32_t flags;
    uint32_t count_objs;
    uint64_t objs_ptr;
    uint64_t count_props_ptr;
    uint64_t props_ptr;
    uint64_t prop_values_ptr;
    uint64_t reserved;
    uint64_t user_data;
};

struct drm_mode_create_blob {
    uint64_t data;
    uint32_t length;
    uint32_t blob_id;
};

struct drm_mode_destroy_blob {
    uint32_t blob_id;
};

#define DRM_CLIENT_CAP_ATOMIC 3

#define DRM_MODE_OBJECT_CRTC 0xccccccccu
#define DRM_MODE_OBJECT_CONNECTOR 0xc0c0c0c0u
#define DRM_MODE_OBJECT_PLANE 0xeeeeeeeeu

#define DRM_MODE_PROP_ENUM (1 << 3)
#define DRM_MODE_PROP_BITMASK (1 << 5)

#define DRM_MODE_ATOMIC_TEST_ONLY 0x0100
#define DRM_MODE_ATOMIC_NONBLOCK 0x0200
#define DRM_MODE_ATOMIC_ALLOW_MODESET 0x0400

#define DRM_IOCTL_MODE_GETPROPERTY DRM_IOWR(0xAA, struct drm_mode_get_property)
#define DRM_IOCTL_MODE_OBJ_GETPROPERTIES DRM_IOWR(0xB9, struct drm_mode_obj_get_properties)
#define DRM_IOCTL_MODE_ATOMIC DRM_IOWR(0xBC, struct drm_mode_atomic)
#define DRM_IOCTL_MODE_CREATEPROPBLOB DRM_IOWR(0xBD, struct drm_mode_create_blob)
#define DRM_IOCTL_MODE_DESTROYPROPBLOB DRM_IOWR(0xBE, struct drm_mode_destroy_blob)

#endif
