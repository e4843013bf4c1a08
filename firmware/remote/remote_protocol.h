/* The model server's messages, carried in RPMsg payloads between a Linux
 * host (tools/ptec-rproc, tools/imx93-client) and the firmware on the
 * remote core (firmware/remote). Little-endian, packed, at most 496 bytes
 * (one RPMsg buffer's payload). This header is the one statement of the
 * layout; tools/ptec-rproc/rpmsg_wire.py restates it for Python, and
 * tests/python/test_imx93.py checks the two agree.
 *
 * A request is a 20-byte head and `length` bytes of data; a reply is a
 * 16-byte head and `length` bytes of body. A reply's status is PTEC_OK (0),
 * a ptec_status from the runtime, or one of PTEC_REMOTE_E_* below; every
 * non-zero status carries a one-line reason as its body. Requests that
 * cannot be parsed (bad magic, a malformed RPMsg header, an unknown
 * endpoint) still get a reply, kind PTEC_REMOTE_ERROR, to the sender.
 *
 * Text mode: a payload that does not start with the request magic is a
 * command line (for /dev/ttyRPMSG* and a person): `info`, `mem`, `run`
 * (on the inputs last given, zeros at first), `load [bytes]`, answered
 * with one line of text. */
#ifndef PTEC_REMOTE_PROTOCOL_H
#define PTEC_REMOTE_PROTOCOL_H

#include <stdint.h>

#define PTEC_REMOTE_REQUEST_MAGIC 0x31515450u /* "PTQ1" */
#define PTEC_REMOTE_REPLY_MAGIC 0x31525450u   /* "PTR1" */
#define PTEC_REMOTE_REQUEST_HEAD 20u
#define PTEC_REMOTE_REPLY_HEAD 16u
#define PTEC_REMOTE_MAX_MESSAGE 496u
#define PTEC_REMOTE_MAX_BODY (PTEC_REMOTE_MAX_MESSAGE - PTEC_REMOTE_REPLY_HEAD)   /* 480 */
#define PTEC_REMOTE_MAX_DATA (PTEC_REMOTE_MAX_MESSAGE - PTEC_REMOTE_REQUEST_HEAD) /* 476 */

/* The endpoint and channel the firmware announces. NXP's imx_rpmsg_tty binds
 * this name and makes /dev/ttyRPMSG30; mainline binds "rpmsg-raw" (rpmsg_char)
 * or "rpmsg-tty": a build option (PTEC_REMOTE_CHANNEL). */
#define PTEC_REMOTE_ENDPOINT 30u
#ifndef PTEC_REMOTE_CHANNEL
#define PTEC_REMOTE_CHANNEL "rpmsg-virtual-tty-channel"
#endif

/* Request kinds (head.kind); a reply has its request's kind. */
enum ptec_remote_kind {
    PTEC_REMOTE_PING = 1,         /* body: the request's data, echoed */
    PTEC_REMOTE_LOAD = 2,         /* offset: the model's size (0: unknown); body: info */
    PTEC_REMOTE_INFO = 3,         /* body: ptec_remote_info, then one ptec_remote_tensor per input, output */
    PTEC_REMOTE_REQUIREMENTS = 4, /* body: ptec_remote_memory */
    PTEC_REMOTE_INPUT = 5,        /* index: input; offset: byte offset; data: the bytes */
    PTEC_REMOTE_RUN = 6,          /* index: PTEC_REMOTE_RUN_PROFILE or 0; body: ptec_remote_result */
    PTEC_REMOTE_OUTPUT = 7,       /* index: output; offset, length: the bytes wanted (<= 480) */
    PTEC_REMOTE_PROFILE = 8,      /* offset: first instruction; body: ptec_remote_op entries */
    PTEC_REMOTE_STATS = 9,        /* body: ptec_remote_stats */
    PTEC_REMOTE_ERROR = 0x7F      /* a reply to something that was not a request */
};
#define PTEC_REMOTE_RUN_PROFILE 1u

/* Statuses beyond ptec_status (which stays below 0x100). */
enum ptec_remote_error {
    PTEC_REMOTE_E_MAGIC = 0x101,    /* not a request */
    PTEC_REMOTE_E_KIND = 0x102,     /* unknown kind */
    PTEC_REMOTE_E_LENGTH = 0x103,   /* head and length disagree with the payload */
    PTEC_REMOTE_E_RPMSG = 0x104,    /* the RPMsg header was malformed */
    PTEC_REMOTE_E_ENDPOINT = 0x105, /* sent to an endpoint that does not exist */
    PTEC_REMOTE_E_NO_MODEL = 0x106, /* no valid model is loaded */
    PTEC_REMOTE_E_RANGE = 0x107     /* index, offset or length out of range */
};

typedef struct ptec_remote_request {
    uint32_t magic;
    uint32_t seq;     /* echoed in the reply */
    uint16_t kind;
    uint16_t index;
    uint32_t offset;
    uint32_t length;  /* data bytes that follow (INPUT) or bytes wanted (OUTPUT) */
} ptec_remote_request;

typedef struct ptec_remote_reply {
    uint32_t magic;
    uint32_t seq;
    uint16_t kind;
    uint16_t status;
    uint32_t length;  /* body bytes that follow */
} ptec_remote_reply;

#define PTEC_REMOTE_NAME_BYTES 32u
typedef struct ptec_remote_info {
    uint32_t model_address;  /* where the firmware reads the .pte */
    uint32_t model_capacity; /* bytes it may read there */
    uint32_t program_bytes;  /* the loaded program's size (header and segments) */
    uint32_t instructions;
    uint16_t inputs;
    uint16_t outputs;
    uint32_t tick_unit;      /* ptec_tick_unit: 1 QEMU instructions, 2 DWT cycles */
    char method[PTEC_REMOTE_NAME_BYTES]; /* NUL-padded */
    char board[PTEC_REMOTE_NAME_BYTES];
} ptec_remote_info;           /* 88 bytes, then (inputs + outputs) tensors */

typedef struct ptec_remote_tensor {
    uint8_t dtype;            /* ptec_dtype (ExecuTorch ScalarType) */
    uint8_t rank;
    uint8_t planned;
    uint8_t dim_order;        /* entry d in bits 2d and 2d+1 (ranks up to 4) */
    uint32_t nbytes;
    int32_t sizes[4];         /* the first four dimensions */
} ptec_remote_tensor;         /* 24 bytes; at most 16 per info reply */

typedef struct ptec_remote_memory {
    uint32_t metadata_bytes;
    uint32_t planned_count;
    uint32_t planned_bytes[4];
    uint32_t scratch_bytes;
    uint32_t fast_scratch_bytes;
    /* What the firmware has for them (its static pools). */
    uint32_t metadata_pool;
    uint32_t planned_pool;
    uint32_t scratch_pool;
    uint32_t fast_scratch_pool;
    uint32_t io_pool;
    uint32_t io_bytes;        /* what staging the inputs takes */
} ptec_remote_memory;         /* 56 bytes */

typedef struct ptec_remote_result {
    uint32_t cost_lo;         /* ticks of the execute, in info.tick_unit */
    uint32_t cost_hi;
    int32_t label;            /* argmax of output 0 (-1: not a tensor) */
    uint32_t outputs;
    uint32_t output0_bytes;
    uint32_t instructions;
} ptec_remote_result;         /* 24 bytes */

#define PTEC_REMOTE_OP_NAME 40u
typedef struct ptec_remote_op {
    uint32_t ticks_lo;
    uint32_t ticks_hi;
    char name[PTEC_REMOTE_OP_NAME]; /* NUL-padded, cut to 39 characters */
} ptec_remote_op;             /* 48 bytes; up to 10 per reply */

typedef struct ptec_remote_stats {
    uint32_t requests;        /* messages taken from vring 1 */
    uint32_t replies;         /* messages put on vring 0 */
    uint32_t error_replies;
    uint32_t ring_errors;     /* broken ring entries skipped */
    uint32_t send_failures;   /* replies dropped: Linux posted no buffer */
    uint32_t stack_unused;    /* stack bytes never written since boot */
    uint32_t loads;
    uint32_t runs;
} ptec_remote_stats;          /* 32 bytes */

#endif
