#include "linux_side.h"

#include <string.h>

/* Little-endian field access on the shared bytes. */
static void w16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void w32(uint8_t *p, uint32_t v)
{
    w16(p, (uint16_t)v);
    w16(p + 2, (uint16_t)(v >> 16));
}

static uint16_t r16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t r32(const uint8_t *p)
{
    return (uint32_t)r16(p) | ((uint32_t)r16(p + 2) << 16);
}

uint8_t *linux_at(linux_side *l, uint32_t device_address)
{
    return l->shm + (device_address - LINUX_SHM_DEVICE);
}

/* Ring parts: 16-byte descriptors, avail after them, used on the next
 * LINUX_ALIGN boundary. */
static uint8_t *desc(linux_side *l, uint32_t ring, uint16_t i)
{
    return linux_at(l, ring) + 16u * i;
}

static uint8_t *avail(linux_side *l, uint32_t ring)
{
    return linux_at(l, ring) + 16u * LINUX_NUM;
}

static uint8_t *used(linux_side *l, uint32_t ring)
{
    const uint32_t avail_end = 16u * LINUX_NUM + 2u * (3u + LINUX_NUM);
    return linux_at(l, ring) + ((avail_end + LINUX_ALIGN - 1u) & ~(LINUX_ALIGN - 1u));
}

static void set_desc(linux_side *l, uint32_t ring, uint16_t i, uint64_t addr, uint32_t len, uint16_t flags)
{
    uint8_t *d = desc(l, ring, i);
    w32(d, (uint32_t)addr);
    w32(d + 4, (uint32_t)(addr >> 32));
    w32(d + 8, len);
    w16(d + 12, flags);
    w16(d + 14, 0);
}

static void publish(linux_side *l, uint32_t ring, uint16_t *idx, uint16_t head)
{
    uint8_t *a = avail(l, ring);
    w16(a + 4u + 2u * (*idx % LINUX_NUM), head);
    (*idx)++;
    w16(a + 2u, *idx);
}

static uint32_t rx_buffer(uint16_t i)
{
    return LINUX_BUFFERS + LINUX_BUF_BYTES * i;
}

static uint32_t tx_buffer(uint16_t i)
{
    return LINUX_BUFFERS + LINUX_BUF_BYTES * (LINUX_NUM + i);
}

static void kick(void *context, uint32_t notifyid)
{
    (void)notifyid;
    ((linux_side *)context)->kicks++;
}

void linux_init(linux_side *l, uint8_t *shm)
{
    memset(l, 0, sizeof(*l));
    l->shm = shm;
    memset(shm, 0, LINUX_SHM_BYTES);
    l->vdev.type = PTEC_RSC_VDEV;
    l->vdev.id = PTEC_VIRTIO_ID_RPMSG;
    l->vdev.dfeatures = 1;
    l->vdev.num_of_vrings = 2;
    const ptec_rsc_vring v0 = {LINUX_VRING0, LINUX_ALIGN, LINUX_NUM, 0, 0};
    const ptec_rsc_vring v1 = {LINUX_VRING1, LINUX_ALIGN, LINUX_NUM, 1, 0};
    l->vdev.vring[0] = v0;
    l->vdev.vring[1] = v1;
}

void linux_start(linux_side *l)
{
    for (uint16_t i = 0; i < LINUX_NUM; ++i) {
        set_desc(l, LINUX_VRING0, i, rx_buffer(i), LINUX_BUF_BYTES, 2 /* WRITE */);
        publish(l, LINUX_VRING0, &l->rx_avail, i);
    }
    l->vdev.gfeatures = 1;
    l->vdev.status = 0x0F;
}

void linux_config(linux_side *l, ptec_rpmsg_config *config)
{
    config->vdev = &l->vdev;
    config->shared_device = LINUX_SHM_DEVICE;
    config->shared_local = l->shm;
    config->shared_size = LINUX_SHM_BYTES;
    config->kick = kick;
    config->kick_context = l;
}

void linux_send(linux_side *l, uint32_t src, uint32_t dst, const void *payload, uint16_t len)
{
    const uint16_t slot = (uint16_t)(l->tx_avail % LINUX_NUM);
    uint8_t *b = linux_at(l, tx_buffer(slot));
    w32(b, src);
    w32(b + 4, dst);
    w32(b + 8, 0);
    w16(b + 12, len);
    w16(b + 14, 0);
    memcpy(b + 16, payload, len);
    set_desc(l, LINUX_VRING1, slot, tx_buffer(slot), 16u + len, 0);
    publish(l, LINUX_VRING1, &l->tx_avail, slot);
}

void linux_post_raw(linux_side *l, uint64_t address, uint32_t len, uint16_t flags, uint16_t head)
{
    if (head < LINUX_NUM) {
        set_desc(l, LINUX_VRING1, head, address, len, flags);
    }
    publish(l, LINUX_VRING1, &l->tx_avail, head);
}

void linux_set_tx_avail(linux_side *l, uint16_t idx)
{
    l->tx_avail = idx;
    w16(avail(l, LINUX_VRING1) + 2u, idx);
}

int linux_receive(linux_side *l, uint32_t *src, uint32_t *dst, uint8_t *payload)
{
    uint8_t *u = used(l, LINUX_VRING0);
    if (r16(u + 2) == l->rx_used_seen) {
        return -1;
    }
    const uint8_t *entry = u + 4u + 8u * (l->rx_used_seen % LINUX_NUM);
    const uint32_t id = r32(entry);
    const uint32_t len = r32(entry + 4);
    l->rx_used_seen++;
    if (id >= LINUX_NUM || len < 16u || len > LINUX_BUF_BYTES) {
        return -2;
    }
    const uint8_t *b = linux_at(l, rx_buffer((uint16_t)id));
    *src = r32(b);
    *dst = r32(b + 4);
    const uint16_t plen = r16(b + 12);
    if (16u + plen != len) {
        return -3;
    }
    memcpy(payload, b + 16, plen);
    publish(l, LINUX_VRING0, &l->rx_avail, (uint16_t)id);
    return plen;
}

uint16_t linux_tx_returned(const linux_side *l)
{
    linux_side *m = (linux_side *)(uintptr_t)l;
    return r16(used(m, LINUX_VRING1) + 2);
}
