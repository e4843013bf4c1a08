/* Status codes. The numbers are upstream ExecuTorch's Error values, so that
 * a user who knows "0x21" from upstream logs recognises it here too. */
#ifndef PTEC_STATUS_H
#define PTEC_STATUS_H

typedef enum ptec_status {
    PTEC_OK = 0x00,
    PTEC_INTERNAL = 0x01,
    PTEC_INVALID_STATE = 0x02,
    PTEC_END_OF_METHOD = 0x03,
    PTEC_NOT_SUPPORTED = 0x10,
    PTEC_NOT_IMPLEMENTED = 0x11,
    PTEC_INVALID_ARGUMENT = 0x12,
    PTEC_INVALID_TYPE = 0x13,
    PTEC_OPERATOR_MISSING = 0x14,
    PTEC_NOT_FOUND = 0x20,
    PTEC_MEMORY_ALLOCATION_FAILED = 0x21,
    PTEC_ACCESS_FAILED = 0x22,
    PTEC_INVALID_PROGRAM = 0x23,
    PTEC_INVALID_EXTERNAL_DATA = 0x24,
    PTEC_OUT_OF_RESOURCES = 0x25,
    PTEC_DELEGATE_INVALID_COMPATIBILITY = 0x30,
    PTEC_DELEGATE_MEMORY_ALLOCATION_FAILED = 0x31,
    PTEC_DELEGATE_INVALID_HANDLE = 0x32
} ptec_status;

/* Upstream's name for the code, e.g. "MemoryAllocationFailed". Never NULL. */
const char *ptec_status_str(ptec_status status);

#endif
