/* The tests' own Linux side of RPMsg (what virtio_rpmsg_bus does), written
 * from the virtio and RPMsg layouts without src/rpmsg's code, so that the
 * two check each other. Rings and buffers live in a host buffer that
 * stands for shared memory at device address LINUX_SHM_DEVICE. */
#ifndef PTEC_TEST_LINUX_SIDE_H
#define PTEC_TEST_LINUX_SIDE_H

#include <stddef.h>
#include <stdint.h>

#include "ptec/rpmsg.h"

#define LINUX_SHM_DEVICE 0xA4000000u
#define LINUX_SHM_BYTES 0x60000u
#define LINUX_NUM 16u
#define LINUX_ALIGN 0x1000u
#define LINUX_VRING0 0xA4000000u
#define LINUX_VRING1 0xA4008000u
#define LINUX_BUFFERS 0xA4010000u
#define LINUX_BUF_BYTES 512u
#define LINUX_ADDR 0x400u

typedef struct linux_side {
    uint8_t *shm;                 /* LINUX_SHM_BYTES, 16-byte aligned */
    ptec_rsc_vdev vdev;           /* the live record the remote reads */
    uint16_t rx_avail, rx_used_seen;  /* vring 0: we post empty buffers, read used */
    uint16_t tx_avail, tx_used_seen;  /* vring 1: we post messages */
    uint32_t kicks;
} linux_side;

void linux_init(linux_side *l, uint8_t *shm);
/* Rings zeroed, every RX buffer posted, then DRIVER_OK. */
void linux_start(linux_side *l);
void linux_config(linux_side *l, ptec_rpmsg_config *config);

/* Posts a message (header written here) in TX buffer `slot`. */
void linux_send(linux_side *l, uint32_t src, uint32_t dst, const void *payload, uint16_t len);
/* Posts a raw descriptor: address, length and flags as given (hostile tests). */
void linux_post_raw(linux_side *l, uint64_t address, uint32_t len, uint16_t flags, uint16_t head);
/* Sets vring 1's avail index to `idx` without adding entries. */
void linux_set_tx_avail(linux_side *l, uint16_t idx);

/* The next message from the remote: payload length, or -1 when none. The
 * buffer is posted again. */
int linux_receive(linux_side *l, uint32_t *src, uint32_t *dst, uint8_t *payload);
/* How many of our TX buffers the remote has returned. */
uint16_t linux_tx_returned(const linux_side *l);
/* Device address of byte `offset` of the shared memory, and back. */
uint8_t *linux_at(linux_side *l, uint32_t device_address);

#endif
