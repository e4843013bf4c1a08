/* The model server behind the RPMsg endpoint: one request in, one reply
 * out, with the runtime on static pools and the program read in place from
 * a fixed address (DDR on an i.MX93). Board-independent: the host tests
 * drive it through a simulated Linux side (tests/c/test_remote_server.c). */
#ifndef PTEC_REMOTE_SERVER_H
#define PTEC_REMOTE_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "remote_protocol.h"

typedef struct remote_server_config {
    const uint8_t *model;     /* where the .pte is read, in place */
    size_t model_capacity;    /* bytes readable there */
    uint32_t model_address;   /* the same, as the board's address (for info) */
    const char *board;
} remote_server_config;

/* Takes the configuration and tries a first load (a model placed before
 * boot runs without a LOAD request). Returns NULL when a model loaded, else
 * why not; that is not fatal: a LOAD request tries again. */
const char *remote_server_init(const remote_server_config *config);

/* Answers one payload (binary request or text line) into `reply` (at
 * least PTEC_REMOTE_MAX_MESSAGE bytes); returns the reply's length, 0 for
 * none (a text line that needs no answer). */
size_t remote_server_handle(const uint8_t *payload, size_t len, uint8_t *reply);

/* A PTEC_REMOTE_ERROR reply with `status` and `reason`, for messages that
 * never reached the server (a malformed RPMsg header, an unknown endpoint). */
size_t remote_server_error_reply(uint16_t status, const char *reason, uint8_t *reply);

/* Counters the transport adds to (STATS replies report them). */
ptec_remote_stats *remote_server_stats(void);

#endif
