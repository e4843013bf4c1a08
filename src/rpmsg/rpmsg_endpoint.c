/* RPMsg on two virtqueues, remote side (Linux drivers/rpmsg/virtio_rpmsg_bus.c
 * is the other end): vring 0 carries our messages in buffers Linux posted,
 * vring 1 carries Linux's. Every message starts with a 16-byte header
 * {src u32, dst u32, reserved u32, len u16, flags u16}; the name service
 * at endpoint 53 takes {name[32], addr u32, flags u32}. */
#include <string.h>

#include "ptec/rpmsg.h"
#include "virtqueue_device.h"

#define UNKNOWN_ADDR 0xFFFFFFFFu
#define NS_CREATE 0u
#define NS_BODY_BYTES (PTEC_RSC_NAME_BYTES + 8u)

static uint32_t get32(const uint8_t *at)
{
    return (uint32_t)at[0] | ((uint32_t)at[1] << 8) | ((uint32_t)at[2] << 16) | ((uint32_t)at[3] << 24);
}

static void put32(uint8_t *at, uint32_t value)
{
    at[0] = (uint8_t)value;
    at[1] = (uint8_t)(value >> 8);
    at[2] = (uint8_t)(value >> 16);
    at[3] = (uint8_t)(value >> 24);
}

/* Byte copies to and from shared memory: volatile, so the compiler neither
 * merges nor re-reads them (the other side may change the bytes meanwhile). */
static void copy_in(uint8_t *dst, const volatile uint8_t *src, size_t len)
{
    for (size_t i = 0; i < len; ++i) {
        dst[i] = src[i];
    }
}

static void copy_out(volatile uint8_t *dst, const uint8_t *src, size_t len)
{
    for (size_t i = 0; i < len; ++i) {
        dst[i] = src[i];
    }
}

static void kick(ptec_rpmsg *rpmsg, const ptec_rpmsg_queue *queue)
{
    if (rpmsg->config.kick != NULL && !ptec_vq_quiet(queue)) {
        rpmsg->config.kick(rpmsg->config.kick_context, queue->notifyid);
    }
}

void ptec_rpmsg_init(ptec_rpmsg *rpmsg, const ptec_rpmsg_config *config)
{
    memset(rpmsg, 0, sizeof(*rpmsg));
    rpmsg->config = *config;
    rpmsg->reason = "";
}

ptec_status ptec_rpmsg_link(ptec_rpmsg *rpmsg)
{
    if (rpmsg->up) {
        return PTEC_OK;
    }
    const volatile ptec_rsc_vdev *vdev = rpmsg->config.vdev;
    if ((vdev->status & PTEC_VIRTIO_STATUS_DRIVER_OK) == 0u) {
        rpmsg->reason = "Linux has not set up the vdev yet (status without DRIVER_OK)";
        return PTEC_INVALID_STATE;
    }
    __atomic_thread_fence(__ATOMIC_SEQ_CST); /* the rings after the status that says they are ready */
    if (vdev->type != PTEC_RSC_VDEV || vdev->id != PTEC_VIRTIO_ID_RPMSG || vdev->num_of_vrings != 2u) {
        rpmsg->reason = "the live vdev record is not an RPMsg device with two vrings";
        return PTEC_INVALID_ARGUMENT;
    }
    const char *why = ptec_vq_setup(&rpmsg->tx, &vdev->vring[0], &rpmsg->config);
    if (why == NULL) {
        why = ptec_vq_setup(&rpmsg->rx, &vdev->vring[1], &rpmsg->config);
    }
    if (why != NULL) {
        rpmsg->reason = why;
        return PTEC_INVALID_ARGUMENT;
    }
    rpmsg->up = true;
    rpmsg->ring_errors = 0;
    rpmsg->reason = "";
    return PTEC_OK;
}

ptec_status ptec_rpmsg_send(ptec_rpmsg *rpmsg, uint32_t src, uint32_t dst, const void *payload,
                            size_t len)
{
    if (!rpmsg->up) {
        rpmsg->reason = "the link is not up";
        return PTEC_INVALID_STATE;
    }
    if (len > PTEC_RPMSG_MAX_PAYLOAD) {
        rpmsg->reason = "payload larger than an RPMsg buffer holds";
        return PTEC_INVALID_ARGUMENT;
    }
    /* Bounded: a ring holds at most num entries, so a driver that keeps
     * posting broken ones cannot keep this side here. */
    for (uint32_t tries = 0; tries <= rpmsg->tx.num; ++tries) {
        ptec_vq_buffer buffer;
        const int got = ptec_vq_take(&rpmsg->tx, &rpmsg->config, &buffer);
        if (got == 0) {
            rpmsg->reason = "Linux has posted no free buffer";
            return PTEC_OUT_OF_RESOURCES;
        }
        if (got < 0) {
            rpmsg->ring_errors++;
            continue;
        }
        if (buffer.data == NULL || buffer.chained || buffer.len < PTEC_RPMSG_HEADER_BYTES + len) {
            /* Unusable: give it back empty and try the next one. */
            rpmsg->ring_errors++;
            ptec_vq_put(&rpmsg->tx, buffer.head, 0);
            continue;
        }
        uint8_t header[PTEC_RPMSG_HEADER_BYTES];
        put32(header, src);
        put32(header + 4, dst);
        put32(header + 8, 0);
        put32(header + 12, (uint32_t)len); /* len u16, flags u16 = 0 */
        copy_out(buffer.data, header, sizeof(header));
        copy_out(buffer.data + PTEC_RPMSG_HEADER_BYTES, (const uint8_t *)payload, len);
        ptec_vq_put(&rpmsg->tx, buffer.head, (uint32_t)(PTEC_RPMSG_HEADER_BYTES + len));
        kick(rpmsg, &rpmsg->tx);
        return PTEC_OK;
    }
    rpmsg->reason = "every buffer Linux posted was unusable";
    return PTEC_OUT_OF_RESOURCES;
}

ptec_status ptec_rpmsg_announce(ptec_rpmsg *rpmsg, uint32_t addr, const char *name)
{
    uint8_t body[NS_BODY_BYTES];
    memset(body, 0, sizeof(body));
    const size_t name_len = strlen(name);
    if (name_len >= PTEC_RSC_NAME_BYTES) {
        rpmsg->reason = "channel name longer than 31 characters";
        return PTEC_INVALID_ARGUMENT;
    }
    memcpy(body, name, name_len);
    put32(body + PTEC_RSC_NAME_BYTES, addr);
    put32(body + PTEC_RSC_NAME_BYTES + 4u, NS_CREATE);
    return ptec_rpmsg_send(rpmsg, addr, PTEC_RPMSG_NS_ADDR, body, sizeof(body));
}

ptec_status ptec_rpmsg_receive(ptec_rpmsg *rpmsg, ptec_rpmsg_message *msg, uint8_t *payload,
                               size_t capacity)
{
    memset(msg, 0, sizeof(*msg));
    msg->src = UNKNOWN_ADDR;
    msg->dst = UNKNOWN_ADDR;
    if (!rpmsg->up) {
        rpmsg->reason = "the link is not up";
        return PTEC_INVALID_STATE;
    }
    ptec_vq_buffer buffer;
    const int got = ptec_vq_take(&rpmsg->rx, &rpmsg->config, &buffer);
    if (got == 0) {
        return PTEC_NOT_FOUND;
    }
    if (got < 0) {
        rpmsg->ring_errors++;
        rpmsg->reason = "broken vring 1 entry (index jump or descriptor out of range) skipped";
        return PTEC_ACCESS_FAILED;
    }
    if (buffer.data == NULL || buffer.chained) {
        msg->fault = PTEC_RPMSG_FAULT_BUFFER;
    } else {
        /* Copy the header out once: the fields are judged on these bytes. */
        uint8_t header[PTEC_RPMSG_HEADER_BYTES] = {0};
        const size_t have = buffer.len < sizeof(header) ? buffer.len : sizeof(header);
        copy_in(header, buffer.data, have);
        if (have >= 8u) {
            msg->src = get32(header);
            msg->dst = get32(header + 4);
        }
        if (have < sizeof(header)) {
            msg->fault = PTEC_RPMSG_FAULT_SHORT;
        } else {
            msg->claimed_len = (size_t)header[12] | ((size_t)header[13] << 8);
            msg->flags = (uint16_t)(header[14] | (header[15] << 8));
            const size_t room = buffer.len - PTEC_RPMSG_HEADER_BYTES;
            if (msg->claimed_len > room || msg->claimed_len > capacity ||
                msg->claimed_len > PTEC_RPMSG_MAX_PAYLOAD) {
                msg->fault = PTEC_RPMSG_FAULT_LENGTH;
            } else {
                copy_in(payload, buffer.data + PTEC_RPMSG_HEADER_BYTES, msg->claimed_len);
                msg->len = msg->claimed_len;
            }
        }
    }
    /* The buffer goes back at once: its bytes are copied. */
    ptec_vq_put(&rpmsg->rx, buffer.head, 0);
    kick(rpmsg, &rpmsg->rx);
    return PTEC_OK;
}
