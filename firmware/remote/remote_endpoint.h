/* The model server's RPMsg endpoint (remote_endpoint.c). */
#ifndef PTEC_REMOTE_ENDPOINT_H
#define PTEC_REMOTE_ENDPOINT_H

#include <stdbool.h>

#include "ptec/rpmsg.h"
#include "remote_protocol.h"

/* Takes one message from Linux and answers it; false when none waited. */
bool remote_endpoint_serve(ptec_rpmsg *link);

#endif
