/* The device (remote) side of one legacy split virtqueue in shared memory:
 * layout checks at link-up, taking the driver's avail entries and giving
 * them back through used. Nothing read from the ring is trusted. */
#ifndef PTEC_RPMSG_VIRTQUEUE_DEVICE_H
#define PTEC_RPMSG_VIRTQUEUE_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ptec/rpmsg.h"

#define PTEC_VRING_DESC_F_NEXT 1u
#define PTEC_VRING_DESC_F_INDIRECT 4u
#define PTEC_VRING_AVAIL_F_NO_INTERRUPT 1u

/* One descriptor the driver made available, already checked to lie inside
 * shared memory (data != NULL) or not (data == NULL, then len is 0). */
typedef struct ptec_vq_buffer {
    uint16_t head;            /* descriptor index, for ptec_vq_put */
    volatile uint8_t *data;
    uint32_t len;
    bool chained;             /* NEXT or INDIRECT set: not something RPMsg sends */
} ptec_vq_buffer;

/* Checks a ring's place and geometry against the shared window and sets
 * the queue up (indices from zero, as Linux zeroes rings before DRIVER_OK).
 * Returns NULL or the reason it cannot be used. */
const char *ptec_vq_setup(ptec_rpmsg_queue *queue, const volatile ptec_rsc_vring *vring,
                          const ptec_rpmsg_config *window);

/* 1: `buffer` holds the next avail entry; 0: none waiting; -1: the ring is
 * broken (an index jump or a descriptor index out of range), in which
 * case the queue resynchronises to the driver's avail index. */
int ptec_vq_take(ptec_rpmsg_queue *queue, const ptec_rpmsg_config *window,
                 ptec_vq_buffer *buffer);

/* Returns a buffer to the driver through used, with `written` bytes. */
void ptec_vq_put(ptec_rpmsg_queue *queue, uint16_t head, uint32_t written);

/* Whether the driver asked not to be interrupted for this queue. */
bool ptec_vq_quiet(const ptec_rpmsg_queue *queue);

#endif
