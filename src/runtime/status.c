#include <string.h>

#include "ptec/status.h"

/* The names in a grid of 6 per group of codes (0x00-0x05, 0x10-0x15, ...):
 * one string, "" where a group has no code there. One table of pointers
 * indexed by code would hold 51 of them (204 bytes on a 32-bit core); this
 * costs the 6 empty slots. Only an error message reads it. */
#define NAMES_PER_GROUP 6u
static const char names[] =
    "Ok\0Internal\0InvalidState\0EndOfMethod\0\0\0"                                      /* 0x00 */
    "NotSupported\0NotImplemented\0InvalidArgument\0InvalidType\0OperatorMissing\0\0"    /* 0x10 */
    "NotFound\0MemoryAllocationFailed\0AccessFailed\0InvalidProgram\0InvalidExternalData\0"
    "OutOfResources\0"                                                                   /* 0x20 */
    "DelegateInvalidCompatibility\0DelegateMemoryAllocationFailed\0DelegateInvalidHandle"; /* 0x30 */

const char *ptec_status_str(ptec_status status)
{
    unsigned code = (unsigned)status;
    unsigned slot = (code >> 4) * NAMES_PER_GROUP + (code & 15u);
    if ((code & 15u) >= NAMES_PER_GROUP || code > (unsigned)PTEC_DELEGATE_INVALID_HANDLE) {
        return "Unknown";
    }
    const char *name = names;
    while (slot-- > 0) {
        name += strlen(name) + 1u;
    }
    return *name != '\0' ? name : "Unknown";
}
