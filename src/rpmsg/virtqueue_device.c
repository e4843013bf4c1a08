/* Legacy split virtqueue, device side (Linux include/uapi/linux/virtio_ring.h):
 *   desc[num]  {addr u64, len u32, flags u16, next u16}      at +0
 *   avail      {flags u16, idx u16, ring[num] u16, used_event u16}
 *   used       {flags u16, idx u16, ring[num] {id u32, len u32}, avail_event u16}
 *              at the end of avail rounded up to `align`.
 * The driver (Linux) owns desc and avail; this side writes only used. */
#include "virtqueue_device.h"

#define DESC_BYTES 16u

static uint16_t load16(const volatile uint8_t *at)
{
    return *(const volatile uint16_t *)(const volatile void *)at;
}

static uint32_t load32(const volatile uint8_t *at)
{
    return *(const volatile uint32_t *)(const volatile void *)at;
}

static void store16(volatile uint8_t *at, uint16_t value)
{
    *(volatile uint16_t *)(volatile void *)at = value;
}

static void store32(volatile uint8_t *at, uint32_t value)
{
    *(volatile uint32_t *)(volatile void *)at = value;
}

static void barrier(void)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* Where device bytes [address, address + len) are seen locally, or NULL
 * when they are not all inside the shared window; 64-bit arithmetic, so a
 * descriptor address above 4 GiB or a huge length cannot wrap into it. */
static volatile uint8_t *in_window(uint64_t address, uint64_t len, const ptec_rpmsg_config *window)
{
    if (address < window->shared_device) {
        return NULL;
    }
    const uint64_t offset = address - window->shared_device;
    if (offset > (uint64_t)window->shared_size || len > (uint64_t)window->shared_size - offset) {
        return NULL;
    }
    return window->shared_local + (size_t)offset;
}

static bool power_of_two(uint32_t n)
{
    return n != 0u && (n & (n - 1u)) == 0u;
}

const char *ptec_vq_setup(ptec_rpmsg_queue *queue, const volatile ptec_rsc_vring *vring,
                          const ptec_rpmsg_config *window)
{
    const uint32_t da = vring->da;
    const uint32_t align = vring->align;
    const uint32_t num = vring->num;
    if (!power_of_two(num) || num > PTEC_RPMSG_MAX_RING) {
        return "vring size is not a power of two up to 1024";
    }
    if (!power_of_two(align) || align < 4u || align > 0x10000u) {
        return "vring alignment is not a power of two from 4 to 64 KiB";
    }
    if ((da & 15u) != 0u) {
        return "vring address is not 16-byte aligned";
    }
    /* Bounded by the checks above: num <= 1024, align <= 64 KiB. */
    const uint32_t avail_end = DESC_BYTES * num + 2u * (3u + num);
    const uint32_t used_offset = (avail_end + align - 1u) & ~(align - 1u);
    const uint32_t total = used_offset + 6u + 8u * num;
    volatile uint8_t *ring = in_window(da, total, window);
    if (ring == NULL) {
        return "vring lies outside shared memory";
    }
    queue->ring = ring;
    queue->num = num;
    queue->used_offset = used_offset;
    queue->notifyid = vring->notifyid;
    queue->next_avail = 0;
    queue->next_used = 0;
    return NULL;
}

static volatile uint8_t *avail(const ptec_rpmsg_queue *queue)
{
    return queue->ring + DESC_BYTES * queue->num;
}

static volatile uint8_t *used(const ptec_rpmsg_queue *queue)
{
    return queue->ring + queue->used_offset;
}

int ptec_vq_take(ptec_rpmsg_queue *queue, const ptec_rpmsg_config *window,
                 ptec_vq_buffer *buffer)
{
    const uint16_t avail_idx = load16(avail(queue) + 2u);
    const uint16_t waiting = (uint16_t)(avail_idx - queue->next_avail);
    if (waiting == 0u) {
        return 0;
    }
    if (waiting > queue->num) {
        /* The driver cannot have more entries out than the ring holds. */
        queue->next_avail = avail_idx;
        return -1;
    }
    barrier(); /* read the entry only after seeing the index that publishes it */
    const uint32_t slot = queue->next_avail & (queue->num - 1u);
    const uint16_t head = load16(avail(queue) + 4u + 2u * slot);
    queue->next_avail++;
    if (head >= queue->num) {
        return -1;
    }
    const volatile uint8_t *desc = queue->ring + DESC_BYTES * head;
    const uint64_t address = (uint64_t)load32(desc) | ((uint64_t)load32(desc + 4u) << 32);
    const uint32_t len = load32(desc + 8u);
    const uint16_t flags = load16(desc + 12u);
    buffer->head = head;
    buffer->chained = (flags & (PTEC_VRING_DESC_F_NEXT | PTEC_VRING_DESC_F_INDIRECT)) != 0u;
    buffer->data = in_window(address, len, window);
    buffer->len = buffer->data != NULL ? len : 0u;
    return 1;
}

void ptec_vq_put(ptec_rpmsg_queue *queue, uint16_t head, uint32_t written)
{
    const uint32_t slot = queue->next_used & (queue->num - 1u);
    volatile uint8_t *entry = used(queue) + 4u + 8u * slot;
    store32(entry, head);
    store32(entry + 4u, written);
    barrier(); /* the entry before the index that publishes it */
    queue->next_used++;
    store16(used(queue) + 2u, queue->next_used);
    barrier();
}

bool ptec_vq_quiet(const ptec_rpmsg_queue *queue)
{
    return (load16(avail(queue)) & PTEC_VRING_AVAIL_F_NO_INTERRUPT) != 0u;
}
