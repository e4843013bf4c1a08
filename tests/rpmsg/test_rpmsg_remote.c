/* src/rpmsg against the tests' own Linux side (linux_side.c): link-up,
 * the name-service announcement, messages both ways, and everything a
 * hostile or broken Linux side could put in the rings. Under the host-asan
 * preset the shared memory is exactly LINUX_SHM_BYTES, so a read one byte
 * outside it is a report. */
#include <string.h>

#include "../c/test_util.h"
#include "linux_side.h"
#include "ptec/rpmsg.h"

static uint8_t *shm;
static linux_side lx;
static ptec_rpmsg rp;

static void fresh(void)
{
    linux_init(&lx, shm);
    ptec_rpmsg_config config;
    linux_config(&lx, &config);
    ptec_rpmsg_init(&rp, &config);
}

static void up(void)
{
    fresh();
    linux_start(&lx);
    CHECK_STATUS(ptec_rpmsg_link(&rp), PTEC_OK);
}

static void test_link(void)
{
    fresh();
    CHECK_STATUS(ptec_rpmsg_link(&rp), PTEC_INVALID_STATE); /* before DRIVER_OK */
    linux_start(&lx);
    CHECK_STATUS(ptec_rpmsg_link(&rp), PTEC_OK);

    /* Rings Linux could never have made, each refused with a reason. */
    const struct {
        uint32_t da, align, num;
    } bad[] = {{LINUX_VRING0, LINUX_ALIGN, 12},                 /* not a power of two */
               {LINUX_VRING0, LINUX_ALIGN, 4096},               /* larger than accepted */
               {LINUX_VRING0, 0, LINUX_NUM},                    /* no alignment */
               {LINUX_VRING0 + 8u, LINUX_ALIGN, LINUX_NUM},     /* misaligned */
               {LINUX_SHM_DEVICE - 0x1000u, LINUX_ALIGN, LINUX_NUM}, /* below shared memory */
               {LINUX_SHM_DEVICE + LINUX_SHM_BYTES - 0x1000u, LINUX_ALIGN, LINUX_NUM}, /* runs past it */
               {0xFFFFF000u, LINUX_ALIGN, LINUX_NUM}};           /* wraps 32 bits */
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
        fresh();
        linux_start(&lx);
        lx.vdev.vring[i % 2].da = bad[i].da;
        lx.vdev.vring[i % 2].align = bad[i].align;
        lx.vdev.vring[i % 2].num = bad[i].num;
        CHECK_STATUS(ptec_rpmsg_link(&rp), PTEC_INVALID_ARGUMENT);
        CHECK(rp.reason[0] != '\0');
    }
    fresh();
    linux_start(&lx);
    lx.vdev.num_of_vrings = 1;
    CHECK_STATUS(ptec_rpmsg_link(&rp), PTEC_INVALID_ARGUMENT);
}

static void test_announce(void)
{
    up();
    CHECK_STATUS(ptec_rpmsg_announce(&rp, 30, "rpmsg-virtual-tty-channel"), PTEC_OK);
    uint32_t src = 0;
    uint32_t dst = 0;
    uint8_t payload[512];
    CHECK(linux_receive(&lx, &src, &dst, payload) == 40);
    CHECK(src == 30 && dst == 53);
    CHECK(strcmp((const char *)payload, "rpmsg-virtual-tty-channel") == 0);
    CHECK(payload[32] == 30 && payload[33] == 0 && payload[36] == 0); /* addr 30, flags 0 (create) */
    CHECK(lx.kicks == 1);
    CHECK_STATUS(ptec_rpmsg_announce(&rp, 30, "a name of thirty-two characters!"), PTEC_INVALID_ARGUMENT);
}

static void test_round_trip(void)
{
    up();
    uint8_t got[PTEC_RPMSG_MAX_PAYLOAD];
    ptec_rpmsg_message msg;
    CHECK_STATUS(ptec_rpmsg_receive(&rp, &msg, got, sizeof(got)), PTEC_NOT_FOUND);
    const char hello[] = "run 1";
    linux_send(&lx, LINUX_ADDR, 30, hello, 5);
    CHECK_STATUS(ptec_rpmsg_receive(&rp, &msg, got, sizeof(got)), PTEC_OK);
    CHECK(msg.fault == PTEC_RPMSG_FAULT_NONE && msg.src == LINUX_ADDR && msg.dst == 30 && msg.len == 5);
    CHECK(memcmp(got, hello, 5) == 0);
    CHECK(linux_tx_returned(&lx) == 1);
    /* A full-size reply, and one byte more refused. */
    uint8_t big[PTEC_RPMSG_MAX_PAYLOAD + 1];
    memset(big, 0x5A, sizeof(big));
    CHECK_STATUS(ptec_rpmsg_send(&rp, 30, LINUX_ADDR, big, sizeof(big)), PTEC_INVALID_ARGUMENT);
    CHECK_STATUS(ptec_rpmsg_send(&rp, 30, LINUX_ADDR, big, PTEC_RPMSG_MAX_PAYLOAD), PTEC_OK);
    uint32_t src = 0;
    uint32_t dst = 0;
    uint8_t payload[512];
    CHECK(linux_receive(&lx, &src, &dst, payload) == (int)PTEC_RPMSG_MAX_PAYLOAD);
    CHECK(src == 30 && dst == LINUX_ADDR && payload[495] == 0x5A);
}

/* 10,000 messages each way through 16-entry rings: every buffer comes
 * back, nothing is lost, no index drifts. */
static void test_many(void)
{
    up();
    uint8_t got[PTEC_RPMSG_MAX_PAYLOAD];
    uint8_t payload[512];
    int lost = 0;
    for (uint32_t i = 0; i < 10000u; ++i) {
        uint8_t word[4] = {(uint8_t)i, (uint8_t)(i >> 8), (uint8_t)(i >> 16), 0};
        linux_send(&lx, LINUX_ADDR, 30, word, 4);
        ptec_rpmsg_message msg;
        if (ptec_rpmsg_receive(&rp, &msg, got, sizeof(got)) != PTEC_OK || msg.len != 4 ||
            memcmp(got, word, 4) != 0) {
            ++lost;
            continue;
        }
        if (ptec_rpmsg_send(&rp, 30, msg.src, got, msg.len) != PTEC_OK) {
            ++lost;
            continue;
        }
        uint32_t src = 0;
        uint32_t dst = 0;
        if (linux_receive(&lx, &src, &dst, payload) != 4 || memcmp(payload, word, 4) != 0) {
            ++lost;
        }
    }
    CHECK(lost == 0);
    CHECK(linux_tx_returned(&lx) == (uint16_t)10000u);
    CHECK(rp.ring_errors == 0);
}

static void test_hostile(void)
{
    uint8_t got[PTEC_RPMSG_MAX_PAYLOAD];
    ptec_rpmsg_message msg;

    /* Header longer than the buffer holds. */
    up();
    uint8_t raw[32] = {0};
    raw[0] = 0x00;
    raw[1] = 0x04; /* src 0x400 */
    raw[4] = 30;
    raw[12] = 200; /* len 200 in a 32-byte buffer */
    memcpy(linux_at(&lx, LINUX_BUFFERS + 0x8000u), raw, sizeof(raw));
    linux_post_raw(&lx, LINUX_BUFFERS + 0x8000u, sizeof(raw), 0, 0);
    CHECK_STATUS(ptec_rpmsg_receive(&rp, &msg, got, sizeof(got)), PTEC_OK);
    CHECK(msg.fault == PTEC_RPMSG_FAULT_LENGTH && msg.src == 0x400u && msg.dst == 30 && msg.len == 0);
    CHECK(linux_tx_returned(&lx) == 1); /* the buffer still goes back */

    /* Longer than the caller's buffer: refused, not truncated. */
    raw[12] = 16;
    memcpy(linux_at(&lx, LINUX_BUFFERS + 0x8000u), raw, sizeof(raw));
    linux_post_raw(&lx, LINUX_BUFFERS + 0x8000u, sizeof(raw), 0, 1);
    CHECK_STATUS(ptec_rpmsg_receive(&rp, &msg, got, 8), PTEC_OK);
    CHECK(msg.fault == PTEC_RPMSG_FAULT_LENGTH);

    /* Shorter than a header: with and without the addresses. */
    linux_post_raw(&lx, LINUX_BUFFERS + 0x8000u, 12, 0, 2);
    CHECK_STATUS(ptec_rpmsg_receive(&rp, &msg, got, sizeof(got)), PTEC_OK);
    CHECK(msg.fault == PTEC_RPMSG_FAULT_SHORT && msg.src == 0x400u);
    linux_post_raw(&lx, LINUX_BUFFERS + 0x8000u, 4, 0, 3);
    CHECK_STATUS(ptec_rpmsg_receive(&rp, &msg, got, sizeof(got)), PTEC_OK);
    CHECK(msg.fault == PTEC_RPMSG_FAULT_SHORT && msg.src == 0xFFFFFFFFu);

    /* Buffers outside shared memory, across its end, above 4 GiB, chained. */
    const uint64_t outside[] = {0x10000000u, LINUX_SHM_DEVICE + LINUX_SHM_BYTES - 8u,
                                0x1A4000000ull, LINUX_SHM_DEVICE - 16u};
    for (size_t i = 0; i < 4; ++i) {
        linux_post_raw(&lx, outside[i], 64, 0, (uint16_t)(4 + i));
        CHECK_STATUS(ptec_rpmsg_receive(&rp, &msg, got, sizeof(got)), PTEC_OK);
        CHECK(msg.fault == PTEC_RPMSG_FAULT_BUFFER);
    }
    linux_post_raw(&lx, LINUX_BUFFERS + 0x8000u, 64, 1 /* NEXT */, 8);
    CHECK_STATUS(ptec_rpmsg_receive(&rp, &msg, got, sizeof(got)), PTEC_OK);
    CHECK(msg.fault == PTEC_RPMSG_FAULT_BUFFER);
    linux_post_raw(&lx, LINUX_BUFFERS + 0x8000u, 64, 4 /* INDIRECT */, 9);
    CHECK_STATUS(ptec_rpmsg_receive(&rp, &msg, got, sizeof(got)), PTEC_OK);
    CHECK(msg.fault == PTEC_RPMSG_FAULT_BUFFER);

    /* A descriptor index past the ring: skipped, counted. */
    linux_post_raw(&lx, 0, 0, 0, 700);
    CHECK_STATUS(ptec_rpmsg_receive(&rp, &msg, got, sizeof(got)), PTEC_ACCESS_FAILED);
    CHECK(rp.ring_errors == 1);

    /* An avail index that jumps by more than the ring holds, by one entry
     * or by far: resync, then the next real message gets through. */
    linux_set_tx_avail(&lx, (uint16_t)(lx.tx_avail + LINUX_NUM + 1u));
    CHECK_STATUS(ptec_rpmsg_receive(&rp, &msg, got, sizeof(got)), PTEC_ACCESS_FAILED);
    CHECK_STATUS(ptec_rpmsg_receive(&rp, &msg, got, sizeof(got)), PTEC_NOT_FOUND);
    linux_set_tx_avail(&lx, (uint16_t)(lx.tx_avail + 1000u));
    CHECK_STATUS(ptec_rpmsg_receive(&rp, &msg, got, sizeof(got)), PTEC_ACCESS_FAILED);
    CHECK_STATUS(ptec_rpmsg_receive(&rp, &msg, got, sizeof(got)), PTEC_NOT_FOUND);
    linux_send(&lx, LINUX_ADDR, 30, "ok", 2);
    CHECK_STATUS(ptec_rpmsg_receive(&rp, &msg, got, sizeof(got)), PTEC_OK);
    CHECK(msg.fault == PTEC_RPMSG_FAULT_NONE && msg.len == 2);

    /* Sending with no buffer posted, or only unusable ones. */
    up();
    for (int i = 0; i < (int)LINUX_NUM; ++i) {
        CHECK_STATUS(ptec_rpmsg_send(&rp, 30, LINUX_ADDR, "x", 1), PTEC_OK);
    }
    CHECK_STATUS(ptec_rpmsg_send(&rp, 30, LINUX_ADDR, "x", 1), PTEC_OUT_OF_RESOURCES);
    /* Not up: every call says so. */
    fresh();
    CHECK_STATUS(ptec_rpmsg_send(&rp, 30, LINUX_ADDR, "x", 1), PTEC_INVALID_STATE);
    CHECK_STATUS(ptec_rpmsg_receive(&rp, &msg, got, sizeof(got)), PTEC_INVALID_STATE);
}

int main(void)
{
    shm = test_alloc(LINUX_SHM_BYTES);
    test_link();
    test_announce();
    test_round_trip();
    test_many();
    test_hostile();
    free(shm);
    if (test_failures != 0) {
        fprintf(stderr, "%d check(s) failed\n", test_failures);
        return 1;
    }
    printf("rpmsg remote: all checks passed\n");
    return 0;
}
