/* Guarded mappings: framebuffer files another program may truncate.
 *
 * Touching a page of a shared file mapping beyond the file's end raises SIGBUS, which
 * kills the process. fbgfx registers each framebuffer file mapping here; when an access
 * faults inside one, the handler puts private zero pages over the whole mapping (same
 * address, same protection: the faulting access then completes on them) and marks it
 * lost. The device is gone from then on: fbgfx checks the mark after every frame, grab
 * and snapshot and raises FramebufferError (ENODEV). Every writer and reader is covered,
 * C kernels and NumPy alike, in any thread, with no lock the truncating program would
 * have to respect. A fault anywhere else goes to the handler that was installed before
 * (faulthandler, say) or ends the process as it would have without fbgfx.
 * (libwayland-server guards its clients' shared memory pools the same way.) */
#include "sigbus.h"
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define FBGFX_GUARD_SLOTS 1024

struct fbgfx_guard_slot {
    _Atomic uintptr_t base; /* 0: a free slot */
    _Atomic size_t length;
    _Atomic int prot;
    _Atomic int lost;
};

static struct fbgfx_guard_slot fbgfx_guard_slots[FBGFX_GUARD_SLOTS];
static struct sigaction fbgfx_guard_previous;
static pthread_mutex_t fbgfx_guard_mutex = PTHREAD_MUTEX_INITIALIZER;

static void fbgfx_guard_handler(int sig, siginfo_t *info, void *context)
{
    uintptr_t addr = (uintptr_t)info->si_addr;
    int saved = errno;
    if (info->si_code > 0) { /* a fault, not a kill() */
        for (int i = 0; i < FBGFX_GUARD_SLOTS; i++) {
            struct fbgfx_guard_slot *slot = &fbgfx_guard_slots[i];
            uintptr_t base = atomic_load(&slot->base);
            size_t length = atomic_load(&slot->length);
            if (base == 0 || addr < base || addr - base >= length) {
                continue;
            }
            void *p = mmap((void *)base, length, atomic_load(&slot->prot),
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
            if (p != MAP_FAILED) {
                atomic_store(&slot->lost, 1);
                errno = saved;
                return; /* the access is made again, on the zero pages */
            }
            break;
        }
    }
    struct sigaction previous = fbgfx_guard_previous;
    if ((previous.sa_flags & SA_SIGINFO) && previous.sa_sigaction != NULL) {
        previous.sa_sigaction(sig, info, context);
    } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN &&
               previous.sa_handler != NULL) {
        previous.sa_handler(sig);
    } else {
        /* the default action: the fault happens again on return and ends the process */
        signal(sig, SIG_DFL);
        if (info->si_code <= 0) {
            raise(sig);
        }
    }
    errno = saved;
}

/* Install the handler unless it is installed (another one, such as faulthandler's,
 * may have replaced it since: that one then becomes the previous handler). */
static int fbgfx_guard_install(void)
{
    struct sigaction now;
    if (sigaction(SIGBUS, NULL, &now) < 0) {
        return -errno;
    }
    if ((now.sa_flags & SA_SIGINFO) && now.sa_sigaction == fbgfx_guard_handler) {
        return 0;
    }
    struct sigaction mine;
    memset(&mine, 0, sizeof mine);
    mine.sa_sigaction = fbgfx_guard_handler;
    mine.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&mine.sa_mask);
    fbgfx_guard_previous = now;
    if (sigaction(SIGBUS, &mine, NULL) < 0) {
        return -errno;
    }
    return 0;
}

int fbgfx_guard_add(void *base, size_t length, int writable)
{
    if (base == NULL || length == 0 || (uintptr_t)base % (uintptr_t)sysconf(_SC_PAGESIZE)) {
        return -EINVAL;
    }
    pthread_mutex_lock(&fbgfx_guard_mutex);
    int rc = fbgfx_guard_install();
    if (rc == 0) {
        rc = -ENOSPC;
        for (int i = 0; i < FBGFX_GUARD_SLOTS; i++) {
            struct fbgfx_guard_slot *slot = &fbgfx_guard_slots[i];
            if (atomic_load(&slot->base) != 0) {
                continue;
            }
            atomic_store(&slot->length, length);
            atomic_store(&slot->prot, writable ? PROT_READ | PROT_WRITE : PROT_READ);
            atomic_store(&slot->lost, 0);
            atomic_store(&slot->base, (uintptr_t)base); /* last: the handler sees a whole slot */
            rc = i;
            break;
        }
    }
    pthread_mutex_unlock(&fbgfx_guard_mutex);
    return rc;
}

/* 1 when the mapping in `slot` was lost (its file shrank under it), else 0. Puts the
 * handler back if another replaced it. */
int fbgfx_guard_lost(int slot)
{
    if (slot < 0 || slot >= FBGFX_GUARD_SLOTS) {
        return -EINVAL;
    }
    if (atomic_load(&fbgfx_guard_slots[slot].lost)) {
        return 1;
    }
    pthread_mutex_lock(&fbgfx_guard_mutex);
    int rc = fbgfx_guard_install();
    pthread_mutex_unlock(&fbgfx_guard_mutex);
    return rc < 0 ? rc : atomic_load(&fbgfx_guard_slots[slot].lost);
}

/* Forget `slot` (before its mapping is unmapped); returns whether it was lost. */
int fbgfx_guard_remove(int slot)
{
    if (slot < 0 || slot >= FBGFX_GUARD_SLOTS) {
        return -EINVAL;
    }
    pthread_mutex_lock(&fbgfx_guard_mutex);
    atomic_store(&fbgfx_guard_slots[slot].base, 0);
    int lost = atomic_load(&fbgfx_guard_slots[slot].lost);
    pthread_mutex_unlock(&fbgfx_guard_mutex);
    return lost;
}
