/* The model server (firmware/remote: endpoint + server) on the host,
 * behind src/rpmsg, driven by the tests' Linux side: every request kind,
 * bad and missing models (and recovery without a restart), malformed
 * messages, and 10,000 round trips. The oracle for results is upstream's
 * own expected output for add.pte (shared/models/upstream/expected).
 *   test_remote_server SHARED_DIR */
#include <string.h>

#include "../c/test_util.h"
#include "linux_side.h"
#include "ptec/rpmsg.h"
#include "remote_endpoint.h"
#include "remote_server.h"

#define MODEL_REGION 65536u

static uint8_t *shm;
static uint8_t *model_region;
static linux_side lx;
static ptec_rpmsg rp;
static uint32_t seq;

/* What the firmware's board would give the server. */
void ptec_board_console_puts(const char *text)
{
    (void)text;
}

uint32_t remote_stack_unused(void)
{
    return 4096u;
}

/* One message to the server and the one reply back: the reply's length
 * (head and body in `reply`), or -1 when none came. */
static int exchange_raw(uint32_t dst, const uint8_t *payload, uint16_t len, uint8_t *reply)
{
    linux_send(&lx, LINUX_ADDR, dst, payload, len);
    CHECK(remote_endpoint_serve(&rp));
    uint32_t src = 0;
    uint32_t to = 0;
    const int got = linux_receive(&lx, &src, &to, reply);
    if (got >= 0) {
        CHECK(src == PTEC_REMOTE_ENDPOINT && to == LINUX_ADDR);
    }
    return got;
}

typedef struct answer {
    ptec_remote_reply head;
    uint8_t body[PTEC_REMOTE_MAX_BODY + 1];
} answer;

static answer call(uint16_t kind, uint16_t index, uint32_t offset, uint32_t length, const void *data,
                   size_t data_len)
{
    uint8_t msg[PTEC_REMOTE_MAX_MESSAGE];
    const ptec_remote_request req = {PTEC_REMOTE_REQUEST_MAGIC, ++seq, kind, index, offset, length};
    memcpy(msg, &req, sizeof(req));
    if (data_len > 0u) {
        memcpy(msg + sizeof(req), data, data_len);
    }
    uint8_t raw[PTEC_RPMSG_MAX_PAYLOAD];
    answer a;
    memset(&a, 0, sizeof(a));
    const int got = exchange_raw(PTEC_REMOTE_ENDPOINT, msg, (uint16_t)(sizeof(req) + data_len), raw);
    CHECK(got >= (int)sizeof(ptec_remote_reply));
    if (got >= (int)sizeof(ptec_remote_reply)) {
        memcpy(&a.head, raw, sizeof(a.head));
        CHECK(a.head.magic == PTEC_REMOTE_REPLY_MAGIC);
        CHECK(a.head.length == (uint32_t)got - sizeof(a.head));
        memcpy(a.body, raw + sizeof(a.head), a.head.length);
    }
    return a;
}

static void place(const uint8_t *bytes, size_t n)
{
    memset(model_region, 0xEE, MODEL_REGION);
    memcpy(model_region, bytes, n);
}

static void test_models(const char *shared)
{
    char path[1024];
    size_t add_size = 0;
    snprintf(path, sizeof(path), "%s/models/upstream/add.pte", shared);
    uint8_t *add = test_read_file(path, &add_size);
    float in0 = 0;
    float in1 = 0;
    float expect = 0;
    size_t n = 0;
    snprintf(path, sizeof(path), "%s/models/upstream/inputs/add_in0.f32.bin", shared);
    float *f = test_read_file(path, &n);
    in0 = f[0];
    free(f);
    snprintf(path, sizeof(path), "%s/models/upstream/inputs/add_in1.f32.bin", shared);
    f = test_read_file(path, &n);
    in1 = f[0];
    free(f);
    snprintf(path, sizeof(path), "%s/models/upstream/expected/add_inputs.out0.f32.bin", shared);
    f = test_read_file(path, &n);
    expect = f[0];
    free(f);

    /* Nothing there yet: requests that need a model say why. */
    answer a = call(PTEC_REMOTE_INFO, 0, 0, 0, NULL, 0);
    CHECK(a.head.status == PTEC_REMOTE_E_NO_MODEL);
    CHECK(strstr((const char *)a.body, "ET12") != NULL);

    /* The model, then every request kind. */
    place(add, add_size);
    a = call(PTEC_REMOTE_LOAD, 0, (uint32_t)add_size, 0, NULL, 0);
    CHECK(a.head.status == 0 && a.head.seq == seq && a.head.kind == PTEC_REMOTE_LOAD);
    ptec_remote_info info;
    memcpy(&info, a.body, sizeof(info));
    CHECK(info.inputs == 2 && info.outputs == 1 && strcmp(info.method, "forward") == 0);
    CHECK(info.program_bytes == add_size);
    ptec_remote_tensor t;
    memcpy(&t, a.body + sizeof(info), sizeof(t));
    CHECK(t.dtype == 6 && t.nbytes == 4 && t.rank == 1 && t.sizes[0] == 1);

    a = call(PTEC_REMOTE_REQUIREMENTS, 0, 0, 0, NULL, 0);
    ptec_remote_memory mem;
    memcpy(&mem, a.body, sizeof(mem));
    CHECK(a.head.status == 0 && mem.planned_count == 1 && mem.planned_bytes[0] == 48u && mem.scratch_bytes == 0u);
    CHECK(mem.metadata_bytes > 0u && mem.metadata_bytes <= mem.metadata_pool);

    CHECK(call(PTEC_REMOTE_INPUT, 0, 0, 4, &in0, 4).head.status == 0);
    CHECK(call(PTEC_REMOTE_INPUT, 1, 0, 4, &in1, 4).head.status == 0);
    a = call(PTEC_REMOTE_RUN, PTEC_REMOTE_RUN_PROFILE, 0, 0, NULL, 0);
    ptec_remote_result result;
    memcpy(&result, a.body, sizeof(result));
    CHECK(a.head.status == 0 && result.outputs == 1 && result.output0_bytes == 4 && result.label == 0);
    a = call(PTEC_REMOTE_OUTPUT, 0, 0, 4, NULL, 0);
    CHECK(a.head.status == 0 && a.head.length == 4 && memcmp(a.body, &expect, 4) == 0);
    a = call(PTEC_REMOTE_PROFILE, 0, 0, 0, NULL, 0);
    CHECK(a.head.status == 0 && a.head.length == result.instructions * sizeof(ptec_remote_op));
    CHECK(strstr((const char *)a.body + 8, "add") != NULL);

    /* Out of range: each refused with a reason, nothing written. */
    CHECK(call(PTEC_REMOTE_INPUT, 2, 0, 4, &in0, 4).head.status == PTEC_REMOTE_E_RANGE);
    CHECK(call(PTEC_REMOTE_INPUT, 0, 1, 4, &in0, 4).head.status == PTEC_REMOTE_E_RANGE);
    CHECK(call(PTEC_REMOTE_INPUT, 0, 0xFFFFFFFFu, 4, &in0, 4).head.status == PTEC_REMOTE_E_RANGE);
    CHECK(call(PTEC_REMOTE_INPUT, 0, 0, 8, &in0, 4).head.status == PTEC_REMOTE_E_LENGTH);
    CHECK(call(PTEC_REMOTE_OUTPUT, 1, 0, 4, NULL, 0).head.status == PTEC_REMOTE_E_RANGE);
    CHECK(call(PTEC_REMOTE_OUTPUT, 0, 5, 4, NULL, 0).head.status == PTEC_REMOTE_E_RANGE);
    CHECK(call(0x55, 0, 0, 0, NULL, 0).head.status == PTEC_REMOTE_E_KIND);

    /* A bad model: the reply names the problem, the server stays up, and
     * the good model loads again afterwards. */
    uint8_t *bad = test_alloc(add_size);
    memcpy(bad, add, add_size);
    bad[4] = 'X'; /* the identifier */
    place(bad, add_size);
    a = call(PTEC_REMOTE_LOAD, 0, (uint32_t)add_size, 0, NULL, 0);
    CHECK(a.head.status == PTEC_INVALID_PROGRAM && strstr((const char *)a.body, "ET12") != NULL);
    CHECK(call(PTEC_REMOTE_RUN, 0, 0, 0, NULL, 0).head.status == PTEC_REMOTE_E_NO_MODEL);
    place(add, add_size / 2); /* truncated */
    a = call(PTEC_REMOTE_LOAD, 0, (uint32_t)(add_size / 2), 0, NULL, 0);
    CHECK(a.head.status != 0 && a.head.length > 0);
    a = call(PTEC_REMOTE_LOAD, 0, MODEL_REGION + 1u, 0, NULL, 0);
    CHECK(a.head.status == PTEC_INVALID_ARGUMENT);
    place(add, add_size);
    CHECK(call(PTEC_REMOTE_LOAD, 0, (uint32_t)add_size, 0, NULL, 0).head.status == 0);
    CHECK(call(PTEC_REMOTE_INPUT, 0, 0, 4, &in0, 4).head.status == 0);
    CHECK(call(PTEC_REMOTE_INPUT, 1, 0, 4, &in1, 4).head.status == 0);
    CHECK(call(PTEC_REMOTE_RUN, 0, 0, 0, NULL, 0).head.status == 0);
    a = call(PTEC_REMOTE_OUTPUT, 0, 0, 4, NULL, 0);
    CHECK(memcmp(a.body, &expect, 4) == 0);

    /* Text mode, as /dev/ttyRPMSG30 carries it. */
    uint8_t raw[PTEC_RPMSG_MAX_PAYLOAD + 1];
    int got = exchange_raw(PTEC_REMOTE_ENDPOINT, (const uint8_t *)"mem\n", 4, raw);
    raw[got > 0 ? got : 0] = '\0';
    CHECK(got > 0 && strstr((const char *)raw, "ptec metadata=") == (const char *)raw);
    got = exchange_raw(PTEC_REMOTE_ENDPOINT, (const uint8_t *)"run", 3, raw);
    raw[got > 0 ? got : 0] = '\0';
    CHECK(got > 0 && strstr((const char *)raw, "label=0 cost=") != NULL);
    got = exchange_raw(PTEC_REMOTE_ENDPOINT, (const uint8_t *)"frobnicate", 10, raw);
    raw[got > 0 ? got : 0] = '\0';
    CHECK(got > 0 && strstr((const char *)raw, "unknown command") != NULL);
    /* NXP's tty driver greets; no answer is due. */
    linux_send(&lx, LINUX_ADDR, PTEC_REMOTE_ENDPOINT, "hello world!", 12);
    CHECK(remote_endpoint_serve(&rp));
    uint32_t src = 0;
    uint32_t dst = 0;
    CHECK(linux_receive(&lx, &src, &dst, raw) == -1);
    free(bad);
    free(add);
}

static void test_malformed(void)
{
    uint8_t raw[PTEC_RPMSG_MAX_PAYLOAD];
    ptec_remote_reply head;
    /* Unknown endpoint. */
    const ptec_remote_request ping = {PTEC_REMOTE_REQUEST_MAGIC, 1, PTEC_REMOTE_PING, 0, 0, 0};
    int got = exchange_raw(31, (const uint8_t *)&ping, sizeof(ping), raw);
    memcpy(&head, raw, sizeof(head));
    CHECK(got > 0 && head.kind == PTEC_REMOTE_ERROR && head.status == PTEC_REMOTE_E_ENDPOINT);
    /* Binary that is not a request. */
    const uint8_t junk[8] = {1, 2, 3, 4, 0xFF, 0, 7, 8};
    got = exchange_raw(PTEC_REMOTE_ENDPOINT, junk, sizeof(junk), raw);
    memcpy(&head, raw, sizeof(head));
    CHECK(got > 0 && head.status == PTEC_REMOTE_E_MAGIC);
    /* A request shorter than its head. */
    got = exchange_raw(PTEC_REMOTE_ENDPOINT, (const uint8_t *)&ping, 12, raw);
    memcpy(&head, raw, sizeof(head));
    CHECK(got > 0 && head.status == PTEC_REMOTE_E_LENGTH);
    /* An RPMsg header whose length runs past its buffer. */
    uint8_t *b = linux_at(&lx, LINUX_BUFFERS + 0x9000u);
    memset(b, 0, 32);
    b[1] = 0x04;
    b[4] = PTEC_REMOTE_ENDPOINT;
    b[12] = 0xFF;
    b[13] = 0x01; /* 511 bytes claimed */
    linux_post_raw(&lx, LINUX_BUFFERS + 0x9000u, 32, 0, (uint16_t)(lx.tx_avail % LINUX_NUM));
    CHECK(remote_endpoint_serve(&rp));
    uint32_t src = 0;
    uint32_t dst = 0;
    got = linux_receive(&lx, &src, &dst, raw);
    memcpy(&head, raw, sizeof(head));
    CHECK(got > 0 && dst == 0x400u && head.status == PTEC_REMOTE_E_RPMSG);
}

static void test_round_trips(void)
{
    ptec_remote_stats before;
    answer a = call(PTEC_REMOTE_STATS, 0, 0, 0, NULL, 0);
    memcpy(&before, a.body, sizeof(before));
    int bad = 0;
    for (uint32_t i = 0; i < 10000u; ++i) {
        uint8_t data[64];
        for (size_t k = 0; k < sizeof(data); ++k) {
            data[k] = (uint8_t)(i * 31u + k);
        }
        const size_t len = 1u + i % sizeof(data);
        a = call(PTEC_REMOTE_PING, 0, 0, (uint32_t)len, data, len);
        bad += a.head.status != 0 || a.head.seq != seq || a.head.length != len || memcmp(a.body, data, len) != 0;
    }
    CHECK(bad == 0);
    ptec_remote_stats after;
    a = call(PTEC_REMOTE_STATS, 0, 0, 0, NULL, 0);
    memcpy(&after, a.body, sizeof(after));
    CHECK(after.requests - before.requests == 10001u);
    CHECK(after.replies - before.replies == 10001u);
    CHECK(after.error_replies == before.error_replies && after.send_failures == 0u);
    CHECK(after.ring_errors == 0u);
    CHECK(linux_tx_returned(&lx) == lx.tx_avail); /* every buffer came back */
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_remote_server SHARED_DIR\n");
        return 2;
    }
    shm = test_alloc(LINUX_SHM_BYTES);
    model_region = test_alloc(MODEL_REGION);
    memset(model_region, 0, MODEL_REGION);
    linux_init(&lx, shm);
    ptec_rpmsg_config config;
    linux_config(&lx, &config);
    ptec_rpmsg_init(&rp, &config);
    const remote_server_config server = {model_region, MODEL_REGION, 0x80100000u, "host"};
    const char *why = remote_server_init(&server);
    CHECK(why != NULL && strstr(why, "ET12") != NULL);
    linux_start(&lx);
    CHECK_STATUS(ptec_rpmsg_link(&rp), PTEC_OK);
    test_models(argv[1]);
    test_malformed();
    test_round_trips();
    free(model_region);
    free(shm);
    if (test_failures != 0) {
        fprintf(stderr, "%d check(s) failed\n", test_failures);
        return 1;
    }
    printf("remote server: all checks passed\n");
    return 0;
}
