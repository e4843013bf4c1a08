/* The remote side of RPMsg over virtio, for a core that Linux starts with
 * remoteproc (an i.MX93's Cortex-M33, boards/imx93_m33): the resource-table
 * records Linux reads from the firmware's `.resource_table` section, and a
 * polled endpoint on the two vrings Linux sets up. No heap, no threads, no
 * interrupts needed: the application calls ptec_rpmsg_receive() in its loop.
 *
 * Everything in shared memory is written by the other side and is treated
 * as hostile: ring indices, descriptor addresses and lengths and message
 * headers are checked before use, and the bytes of a message are copied out
 * before they are looked at. Wire layouts follow Linux's virtio_ring.h,
 * remoteproc.h and virtio_rpmsg_bus.c (legacy split rings, little-endian);
 * the facts are in docs/boards/imx93.md. */
#ifndef PTEC_RPMSG_H
#define PTEC_RPMSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ptec/status.h"

/* Resource table (Linux include/linux/remoteproc.h) ------------------------ */
#define PTEC_RSC_TABLE_VERSION 1u
#define PTEC_RSC_TRACE 2u
#define PTEC_RSC_VDEV 3u
#define PTEC_VIRTIO_ID_RPMSG 7u
#define PTEC_VIRTIO_RPMSG_F_NS 0u          /* feature bit: name service */
#define PTEC_VIRTIO_STATUS_DRIVER_OK 4u    /* vdev status bit Linux sets last */
#define PTEC_RSC_NAME_BYTES 32u

typedef struct ptec_rsc_vring {
    uint32_t da;        /* device address of the ring */
    uint32_t align;     /* alignment of its used part */
    uint32_t num;       /* descriptors, a power of two */
    uint32_t notifyid;  /* written by Linux */
    uint32_t pa;        /* reserved, 0 */
} ptec_rsc_vring;

typedef struct ptec_rsc_vdev {
    uint32_t type;      /* PTEC_RSC_VDEV */
    uint32_t id;        /* PTEC_VIRTIO_ID_RPMSG */
    uint32_t notifyid;
    uint32_t dfeatures; /* what the firmware offers */
    uint32_t gfeatures; /* what Linux accepted (written by Linux) */
    uint32_t config_len;
    uint8_t status;     /* virtio status (written by Linux) */
    uint8_t num_of_vrings;
    uint8_t reserved[2];
    ptec_rsc_vring vring[2]; /* [0] remote -> Linux, [1] Linux -> remote */
} ptec_rsc_vdev;

typedef struct ptec_rsc_trace {
    uint32_t type;      /* PTEC_RSC_TRACE */
    uint32_t da;        /* the log buffer */
    uint32_t len;
    uint32_t reserved;
    char name[PTEC_RSC_NAME_BYTES];
} ptec_rsc_trace;

/* RPMsg ------------------------------------------------------------------- */
#define PTEC_RPMSG_HEADER_BYTES 16u
#define PTEC_RPMSG_NS_ADDR 53u       /* Linux's name-service endpoint */
#define PTEC_RPMSG_BUFFER_BYTES 512u /* what Linux's virtio_rpmsg_bus posts */
#define PTEC_RPMSG_MAX_PAYLOAD (PTEC_RPMSG_BUFFER_BYTES - PTEC_RPMSG_HEADER_BYTES)
#define PTEC_RPMSG_MAX_RING 1024u    /* largest ring this side accepts */

/* Tells the other side a ring has news (on an i.MX93: an MU message).
 * `notifyid` is the ring's id from the live resource table. */
typedef void (*ptec_rpmsg_kick_fn)(void *context, uint32_t notifyid);

typedef struct ptec_rpmsg_config {
    /* The live vdev record: where Linux writes status and notify ids (on an
     * i.MX93 the table copy at 0x2001E000, not the ELF section). */
    volatile const ptec_rsc_vdev *vdev;
    /* The only memory rings and buffers may occupy: device addresses
     * [shared_device, shared_device + shared_size), seen by this core at
     * `shared_local` (the same number on a board; a host test's buffer). */
    uint64_t shared_device;
    volatile uint8_t *shared_local;
    size_t shared_size;
    ptec_rpmsg_kick_fn kick;     /* NULL: the other side polls */
    void *kick_context;
} ptec_rpmsg_config;

typedef struct ptec_rpmsg_queue {
    volatile uint8_t *ring;  /* desc, then avail, then used */
    uint32_t num;
    uint32_t used_offset;    /* bytes from ring to the used part */
    uint32_t notifyid;
    uint16_t next_avail;     /* the next avail entry this side takes */
    uint16_t next_used;      /* this side's copy of used.idx */
} ptec_rpmsg_queue;

typedef struct ptec_rpmsg {
    ptec_rpmsg_config config;
    ptec_rpmsg_queue tx;     /* vring 0: buffers Linux posts for us to fill */
    ptec_rpmsg_queue rx;     /* vring 1: messages Linux sends */
    bool up;
    uint32_t ring_errors;    /* broken ring entries skipped since link-up */
    const char *reason;      /* why the last call failed, in words ("" if none) */
} ptec_rpmsg;

/* What was wrong with a received message, when something was. */
typedef enum ptec_rpmsg_fault {
    PTEC_RPMSG_FAULT_NONE = 0,
    PTEC_RPMSG_FAULT_SHORT,    /* buffer shorter than a header: src/dst may be unknown */
    PTEC_RPMSG_FAULT_LENGTH,   /* header's len beyond the buffer or the payload limit */
    PTEC_RPMSG_FAULT_BUFFER,   /* descriptor outside shared memory, chained or indirect */
} ptec_rpmsg_fault;

typedef struct ptec_rpmsg_message {
    uint32_t src;            /* sender's endpoint (0xFFFFFFFF when unknown) */
    uint32_t dst;            /* our endpoint it was sent to (0xFFFFFFFF when unknown) */
    uint16_t flags;
    size_t len;              /* payload bytes copied to the caller's buffer */
    size_t claimed_len;      /* what the header said */
    ptec_rpmsg_fault fault;
} ptec_rpmsg_message;

void ptec_rpmsg_init(ptec_rpmsg *rpmsg, const ptec_rpmsg_config *config);

/* Link-up. PTEC_INVALID_STATE until Linux sets DRIVER_OK; then the rings
 * are checked (inside shared memory, power-of-two sizes, two of them) and
 * PTEC_OK, or PTEC_INVALID_ARGUMENT with the reason. Cheap once up. */
ptec_status ptec_rpmsg_link(ptec_rpmsg *rpmsg);

/* Announces endpoint `addr` as channel `name` through the name service. */
ptec_status ptec_rpmsg_announce(ptec_rpmsg *rpmsg, uint32_t addr, const char *name);

/* Takes one message from Linux, if any: PTEC_NOT_FOUND when none waits;
 * PTEC_OK with the message (check msg->fault: a malformed one still
 * returns OK, so that the caller can answer it); PTEC_ACCESS_FAILED when
 * the ring itself is broken (the entry is skipped and the queue goes on).
 * At most `capacity` payload bytes are copied to `payload`. */
ptec_status ptec_rpmsg_receive(ptec_rpmsg *rpmsg, ptec_rpmsg_message *msg, uint8_t *payload,
                               size_t capacity);

/* Sends `len` bytes (at most PTEC_RPMSG_MAX_PAYLOAD) from `src` to `dst`.
 * PTEC_OUT_OF_RESOURCES when Linux has posted no free buffer. */
ptec_status ptec_rpmsg_send(ptec_rpmsg *rpmsg, uint32_t src, uint32_t dst, const void *payload,
                            size_t len);

#endif
