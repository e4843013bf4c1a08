/* The model server's endpoint: one message from Linux in, one reply out.
 * Requests go to the server (remote_server.c); a malformed RPMsg header, a
 * message for an endpoint that does not exist, or a payload that is not a
 * request gets an error reply to its sender naming the problem. Nothing a
 * message holds stops the loop. Board-independent (tests/rpmsg drives it
 * on the host). */
#include "remote_endpoint.h"

#include "ptec_board.h"
#include "remote_server.h"

static uint8_t payload[PTEC_RPMSG_MAX_PAYLOAD];
static uint8_t reply[PTEC_REMOTE_MAX_MESSAGE];

static void say(const char *a, const char *b)
{
    ptec_board_console_puts(a);
    ptec_board_console_puts(b);
    ptec_board_console_puts("\n");
}

static void send(ptec_rpmsg *link, uint32_t dst, size_t len)
{
    ptec_remote_stats *stats = remote_server_stats();
    /* Linux refills vring 0 as it reads; wait a little for a buffer. */
    for (uint32_t attempt = 0; attempt < 1000000u; ++attempt) {
        const ptec_status status = ptec_rpmsg_send(link, PTEC_REMOTE_ENDPOINT, dst, reply, len);
        if (status == PTEC_OK) {
            stats->replies++;
            return;
        }
        if (status != PTEC_OUT_OF_RESOURCES) {
            break;
        }
    }
    stats->send_failures++;
    say("ptec: reply dropped: ", link->reason);
}

static const char *fault_reason(const ptec_rpmsg_message *msg)
{
    switch (msg->fault) {
    case PTEC_RPMSG_FAULT_SHORT:
        return "rpmsg: message shorter than its 16-byte header";
    case PTEC_RPMSG_FAULT_LENGTH:
        return "rpmsg: header length runs past the buffer (or beyond 496 bytes)";
    default:
        return "rpmsg: buffer outside the shared memory, chained or indirect";
    }
}

bool remote_endpoint_serve(ptec_rpmsg *link)
{
    ptec_rpmsg_message msg;
    const ptec_status status = ptec_rpmsg_receive(link, &msg, payload, sizeof(payload));
    ptec_remote_stats *stats = remote_server_stats();
    stats->ring_errors = link->ring_errors;
    if (status == PTEC_NOT_FOUND) {
        return false;
    }
    if (status != PTEC_OK) {
        say("ptec: ", link->reason);
        return true;
    }
    stats->requests++;
    size_t len;
    if (msg.fault != PTEC_RPMSG_FAULT_NONE) {
        if (msg.src == 0xFFFFFFFFu) {
            say("ptec: dropped a message with no sender: ", fault_reason(&msg));
            return true;
        }
        len = remote_server_error_reply(PTEC_REMOTE_E_RPMSG, fault_reason(&msg), reply);
    } else if (msg.dst != PTEC_REMOTE_ENDPOINT) {
        len = remote_server_error_reply(PTEC_REMOTE_E_ENDPOINT,
                                        "rpmsg: no such endpoint (the model server is endpoint 30)", reply);
    } else {
        len = remote_server_handle(payload, msg.len, reply);
    }
    if (len != 0u) {
        send(link, msg.src, len);
    }
    return true;
}

