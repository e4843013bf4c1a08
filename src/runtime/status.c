#include "ptec/status.h"

const char *ptec_status_str(ptec_status status)
{
    switch (status) {
    case PTEC_OK: return "Ok";
    case PTEC_INTERNAL: return "Internal";
    case PTEC_INVALID_STATE: return "InvalidState";
    case PTEC_END_OF_METHOD: return "EndOfMethod";
    case PTEC_NOT_SUPPORTED: return "NotSupported";
    case PTEC_NOT_IMPLEMENTED: return "NotImplemented";
    case PTEC_INVALID_ARGUMENT: return "InvalidArgument";
    case PTEC_INVALID_TYPE: return "InvalidType";
    case PTEC_OPERATOR_MISSING: return "OperatorMissing";
    case PTEC_NOT_FOUND: return "NotFound";
    case PTEC_MEMORY_ALLOCATION_FAILED: return "MemoryAllocationFailed";
    case PTEC_ACCESS_FAILED: return "AccessFailed";
    case PTEC_INVALID_PROGRAM: return "InvalidProgram";
    case PTEC_INVALID_EXTERNAL_DATA: return "InvalidExternalData";
    case PTEC_OUT_OF_RESOURCES: return "OutOfResources";
    case PTEC_DELEGATE_INVALID_COMPATIBILITY: return "DelegateInvalidCompatibility";
    case PTEC_DELEGATE_MEMORY_ALLOCATION_FAILED: return "DelegateMemoryAllocationFailed";
    case PTEC_DELEGATE_INVALID_HANDLE: return "DelegateInvalidHandle";
    }
    return "Unknown";
}
