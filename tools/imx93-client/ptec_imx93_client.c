/* ptec-imx93-client: the Linux side of ptec's model server on an i.MX93's
 * Cortex-M33, for the A55 (aarch64) or any Linux host. It speaks the
 * binary protocol of firmware/remote/remote_protocol.h over the RPMsg
 * character device Linux made for the firmware's channel:
 *   /dev/ttyRPMSG30  NXP's imx_rpmsg_tty (the default; put in raw mode here)
 *   /dev/rpmsgN      mainline rpmsg_char, with the firmware announcing rpmsg-raw
 *
 *   ptec-imx93-client [-d DEVICE] info | mem | stats
 *   ptec-imx93-client [-d DEVICE] load MODEL.pte    (after dd put it at 0x80100000;
 *                                                    the file gives the size to check)
 *   ptec-imx93-client [-d DEVICE] run INPUT.bin [-o OUTPUT.bin] [--profile]
 *   ptec-imx93-client [-d DEVICE] ping [COUNT]
 *
 * Each request fits one 256-byte tty write (NXP's driver splits writes
 * there); inputs go in 200-byte pieces. Exit status: 0 ok, 1 the firmware
 * refused or did not answer, 2 usage or file errors. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "remote_protocol.h"

#define INPUT_PIECE 200u
#define REPLY_TIMEOUT_MS 20000

static int fd = -1;
static uint32_t seq;

typedef struct reply {
    ptec_remote_reply head;
    uint8_t body[PTEC_REMOTE_MAX_BODY + 1];
} reply;

static int fail(int code, const char *what, const char *why)
{
    fprintf(stderr, "ptec-imx93-client: %s: %s\n", what, why);
    return code;
}

static int open_device(const char *path)
{
    fd = open(path, O_RDWR | O_NOCTTY);
    if (fd < 0) {
        return fail(2, path, strerror(errno));
    }
    struct termios t;
    if (tcgetattr(fd, &t) == 0) { /* a tty: no echo, no line editing, 8-bit clean */
        t.c_iflag &= ~(tcflag_t)(IGNBRK | BRKINT | PARMRK | ISTRIP | INLCR | IGNCR | ICRNL | IXON);
        t.c_oflag &= ~(tcflag_t)OPOST;
        t.c_lflag &= ~(tcflag_t)(ECHO | ECHONL | ICANON | ISIG | IEXTEN);
        t.c_cflag &= ~(tcflag_t)(CSIZE | PARENB);
        t.c_cflag |= CS8;
        t.c_cc[VMIN] = 1;
        t.c_cc[VTIME] = 0;
        if (tcsetattr(fd, TCSANOW, &t) != 0) {
            return fail(2, path, strerror(errno));
        }
    }
    return 0;
}

static int read_exactly(void *buf, size_t n)
{
    uint8_t *at = buf;
    while (n > 0u) {
        struct pollfd p = {fd, POLLIN, 0};
        const int ready = poll(&p, 1, REPLY_TIMEOUT_MS);
        if (ready <= 0) {
            return -1;
        }
        const ssize_t got = read(fd, at, n);
        if (got <= 0) {
            return -1;
        }
        at += got;
        n -= (size_t)got;
    }
    return 0;
}

/* Sends one request and reads its reply; 0, or the exit status. */
static int call(uint16_t kind, uint16_t index, uint32_t offset, uint32_t length, const void *data,
                size_t data_len, reply *r)
{
    uint8_t msg[PTEC_REMOTE_MAX_MESSAGE];
    const ptec_remote_request req = {PTEC_REMOTE_REQUEST_MAGIC, ++seq, kind, index, offset, length};
    memcpy(msg, &req, sizeof(req));
    if (data_len > 0u) {
        memcpy(msg + sizeof(req), data, data_len);
    }
    const size_t n = sizeof(req) + data_len;
    if (write(fd, msg, n) != (ssize_t)n) {
        return fail(1, "write", strerror(errno));
    }
    memset(r, 0, sizeof(*r));
    if (read_exactly(&r->head, sizeof(r->head)) != 0) {
        return fail(1, "reply", "none within 20 s (is the firmware running? dmesg, remoteproc0/trace0)");
    }
    if (r->head.magic != PTEC_REMOTE_REPLY_MAGIC || r->head.length > PTEC_REMOTE_MAX_BODY) {
        return fail(1, "reply", "not a ptec reply (another program on this device?)");
    }
    if (read_exactly(r->body, r->head.length) != 0) {
        return fail(1, "reply", "cut short");
    }
    if (r->head.status != 0u) {
        fprintf(stderr, "ptec-imx93-client: the firmware refused (status 0x%x): %.*s\n", r->head.status,
                (int)r->head.length, (const char *)r->body);
        return 1;
    }
    if (r->head.seq != seq) {
        return fail(1, "reply", "to another request");
    }
    return 0;
}

static const char *unit_name(uint32_t unit)
{
    return unit == 1u ? "instructions" : unit == 2u ? "cycles" : "ticks";
}

static int info(ptec_remote_info *out, ptec_remote_tensor *tensors)
{
    reply r;
    const int rc = call(PTEC_REMOTE_INFO, 0, 0, 0, NULL, 0, &r);
    if (rc == 0) {
        memcpy(out, r.body, sizeof(*out));
        const size_t n = (r.head.length - sizeof(*out)) / sizeof(ptec_remote_tensor);
        memcpy(tensors, r.body + sizeof(*out), n * sizeof(ptec_remote_tensor));
    }
    return rc;
}

static void print_info(const ptec_remote_info *i, const ptec_remote_tensor *t)
{
    printf("model at 0x%08x: %u bytes, method %s, %u instructions, board %s\n", i->model_address,
           i->program_bytes, i->method, i->instructions, i->board);
    for (unsigned k = 0; k < (unsigned)i->inputs + i->outputs && k < 16u; ++k) {
        printf("  %s %u: dtype %u, %u bytes, shape [", k < i->inputs ? "input" : "output",
               k < i->inputs ? k : k - i->inputs, t[k].dtype, t[k].nbytes);
        for (unsigned d = 0; d < t[k].rank && d < 4u; ++d) {
            printf(d ? ", %d" : "%d", t[k].sizes[d]);
        }
        printf("]\n");
    }
}

static uint8_t *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || st.st_size <= 0) {
        fclose(f);
        return NULL;
    }
    uint8_t *data = malloc((size_t)st.st_size);
    *size = data != NULL ? fread(data, 1, (size_t)st.st_size, f) : 0u;
    fclose(f);
    return data;
}

static int run(const char *input_path, const char *output_path, int profile)
{
    ptec_remote_info i;
    ptec_remote_tensor t[16];
    int rc = info(&i, t);
    if (rc != 0) {
        return rc;
    }
    size_t size = 0;
    uint8_t *input = read_file(input_path, &size);
    if (input == NULL) {
        return fail(2, input_path, "cannot read it");
    }
    if (i.inputs != 1u || size != t[0].nbytes) {
        free(input);
        fprintf(stderr, "ptec-imx93-client: %s: %zu bytes; the model takes one input of %u bytes\n",
                input_path, size, i.inputs ? t[0].nbytes : 0u);
        return 2;
    }
    reply r;
    for (size_t at = 0; at < size && rc == 0; at += INPUT_PIECE) {
        const size_t n = size - at < INPUT_PIECE ? size - at : INPUT_PIECE;
        rc = call(PTEC_REMOTE_INPUT, 0, (uint32_t)at, (uint32_t)n, input + at, n, &r);
    }
    free(input);
    if (rc == 0) {
        rc = call(PTEC_REMOTE_RUN, profile ? PTEC_REMOTE_RUN_PROFILE : 0u, 0, 0, NULL, 0, &r);
    }
    if (rc != 0) {
        return rc;
    }
    ptec_remote_result res;
    memcpy(&res, r.body, sizeof(res));
    const uint64_t cost = (uint64_t)res.cost_hi << 32 | res.cost_lo;
    printf("label %d, %llu %s\n", res.label, (unsigned long long)cost, unit_name(i.tick_unit));
    const ptec_remote_tensor *out = &t[i.inputs];
    uint8_t *bytes = malloc(out->nbytes ? out->nbytes : 1u);
    size_t got = 0;
    while (rc == 0 && got < out->nbytes && bytes != NULL) {
        const uint32_t want = out->nbytes - (uint32_t)got < PTEC_REMOTE_MAX_BODY ? out->nbytes - (uint32_t)got
                                                                                 : PTEC_REMOTE_MAX_BODY;
        rc = call(PTEC_REMOTE_OUTPUT, 0, (uint32_t)got, want, NULL, 0, &r);
        if (rc == 0 && r.head.length == 0u) {
            rc = fail(1, "output", "ended early");
        }
        if (rc == 0) {
            memcpy(bytes + got, r.body, r.head.length);
            got += r.head.length;
        }
    }
    if (rc == 0 && output_path != NULL) {
        FILE *f = fopen(output_path, "wb");
        if (f == NULL || fwrite(bytes, 1, got, f) != got || fclose(f) != 0) {
            rc = fail(2, output_path, "cannot write it");
        }
    } else if (rc == 0) {
        printf("output 0:");
        for (size_t k = 0; k < got && k < 32u; ++k) {
            printf(" %02x", bytes[k]);
        }
        printf(got > 32u ? " ...\n" : "\n");
    }
    free(bytes);
    for (uint32_t k = 0; rc == 0 && profile && k < res.instructions;) {
        rc = call(PTEC_REMOTE_PROFILE, 0, k, 0, NULL, 0, &r);
        const size_t n = r.head.length / sizeof(ptec_remote_op);
        if (rc == 0 && n == 0u) {
            break;
        }
        for (size_t e = 0; rc == 0 && e < n; ++e, ++k) {
            ptec_remote_op op;
            memcpy(&op, r.body + e * sizeof(op), sizeof(op));
            printf("  [%3u] %-40s %12llu\n", k, op.name, (unsigned long long)((uint64_t)op.ticks_hi << 32 | op.ticks_lo));
        }
    }
    return rc;
}

static int usage(void)
{
    fprintf(stderr, "usage: ptec-imx93-client [-d DEVICE] info | mem | stats | load MODEL.pte |\n"
                    "                         run INPUT.bin [-o OUTPUT.bin] [--profile] | ping [COUNT]\n");
    return 2;
}

int main(int argc, char **argv)
{
    const char *device = "/dev/ttyRPMSG30";
    int arg = 1;
    if (arg + 1 < argc && strcmp(argv[arg], "-d") == 0) {
        device = argv[arg + 1];
        arg += 2;
    }
    if (arg >= argc) {
        return usage();
    }
    const char *cmd = argv[arg++];
    int rc = open_device(device);
    if (rc != 0) {
        return rc;
    }
    reply r;
    if (strcmp(cmd, "info") == 0) {
        ptec_remote_info i;
        ptec_remote_tensor t[16];
        rc = info(&i, t);
        if (rc == 0) {
            print_info(&i, t);
        }
    } else if (strcmp(cmd, "mem") == 0) {
        rc = call(PTEC_REMOTE_REQUIREMENTS, 0, 0, 0, NULL, 0, &r);
        if (rc == 0) {
            ptec_remote_memory m;
            memcpy(&m, r.body, sizeof(m));
            uint32_t planned = 0;
            for (uint32_t k = 0; k < m.planned_count && k < 4u; ++k) {
                planned += m.planned_bytes[k];
            }
            printf("metadata %u B (pool %u), planned %u B (pool %u), scratch %u B (pool %u), inputs %u B (pool %u)\n",
                   m.metadata_bytes, m.metadata_pool, planned, m.planned_pool, m.scratch_bytes, m.scratch_pool,
                   m.io_bytes, m.io_pool);
        }
    } else if (strcmp(cmd, "stats") == 0) {
        rc = call(PTEC_REMOTE_STATS, 0, 0, 0, NULL, 0, &r);
        if (rc == 0) {
            ptec_remote_stats s;
            memcpy(&s, r.body, sizeof(s));
            printf("requests %u, replies %u, error replies %u, ring errors %u, dropped %u, loads %u, runs %u, "
                   "stack never used %u B\n", s.requests, s.replies, s.error_replies, s.ring_errors,
                   s.send_failures, s.loads, s.runs, s.stack_unused);
        }
    } else if (strcmp(cmd, "load") == 0 && arg < argc) {
        struct stat st;
        if (stat(argv[arg], &st) != 0) {
            return fail(2, argv[arg], strerror(errno));
        }
        rc = call(PTEC_REMOTE_LOAD, 0, (uint32_t)st.st_size, 0, NULL, 0, &r);
        if (rc == 0) {
            ptec_remote_info i;
            ptec_remote_tensor t[16];
            memcpy(&i, r.body, sizeof(i));
            memcpy(t, r.body + sizeof(i), r.head.length - sizeof(i));
            print_info(&i, t);
        }
    } else if (strcmp(cmd, "run") == 0 && arg < argc) {
        const char *input = argv[arg++];
        const char *output = NULL;
        int profile = 0;
        for (; arg < argc; ++arg) {
            if (strcmp(argv[arg], "-o") == 0 && arg + 1 < argc) {
                output = argv[++arg];
            } else if (strcmp(argv[arg], "--profile") == 0) {
                profile = 1;
            } else {
                return usage();
            }
        }
        rc = run(input, output, profile);
    } else if (strcmp(cmd, "ping") == 0) {
        const long count = arg < argc ? strtol(argv[arg], NULL, 10) : 1;
        for (long k = 0; k < count && rc == 0; ++k) {
            uint8_t data[64];
            for (size_t b = 0; b < sizeof(data); ++b) {
                data[b] = (uint8_t)(k + (long)b);
            }
            rc = call(PTEC_REMOTE_PING, 0, 0, sizeof(data), data, sizeof(data), &r);
            if (rc == 0 && (r.head.length != sizeof(data) || memcmp(r.body, data, sizeof(data)) != 0)) {
                rc = fail(1, "ping", "echo differs");
            }
        }
        if (rc == 0) {
            printf("%ld round trips\n", count);
        }
    } else {
        return usage();
    }
    close(fd);
    return rc;
}
