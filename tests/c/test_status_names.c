/* ptec_status_str: every status's name (upstream's Error names), "Unknown"
 * for every other code, including the gaps between groups; ptec_dtype_name:
 * every dtype's name, "invalid" for every other code. */
#include <string.h>

#include "ptec/status.h"
#include "ptec/types.h"
#include "test_util.h"

static int checks;

int main(void)
{
    static const struct {
        ptec_status status;
        const char *name;
    } want[] = {
        {PTEC_OK, "Ok"},
        {PTEC_INTERNAL, "Internal"},
        {PTEC_INVALID_STATE, "InvalidState"},
        {PTEC_END_OF_METHOD, "EndOfMethod"},
        {PTEC_NOT_SUPPORTED, "NotSupported"},
        {PTEC_NOT_IMPLEMENTED, "NotImplemented"},
        {PTEC_INVALID_ARGUMENT, "InvalidArgument"},
        {PTEC_INVALID_TYPE, "InvalidType"},
        {PTEC_OPERATOR_MISSING, "OperatorMissing"},
        {PTEC_NOT_FOUND, "NotFound"},
        {PTEC_MEMORY_ALLOCATION_FAILED, "MemoryAllocationFailed"},
        {PTEC_ACCESS_FAILED, "AccessFailed"},
        {PTEC_INVALID_PROGRAM, "InvalidProgram"},
        {PTEC_INVALID_EXTERNAL_DATA, "InvalidExternalData"},
        {PTEC_OUT_OF_RESOURCES, "OutOfResources"},
        {PTEC_DELEGATE_INVALID_COMPATIBILITY, "DelegateInvalidCompatibility"},
        {PTEC_DELEGATE_MEMORY_ALLOCATION_FAILED, "DelegateMemoryAllocationFailed"},
        {PTEC_DELEGATE_INVALID_HANDLE, "DelegateInvalidHandle"},
    };
    int named = 0;
    for (unsigned code = 0; code < 0x200; ++code) {
        const char *expect = "Unknown";
        for (size_t i = 0; i < sizeof want / sizeof want[0]; ++i) {
            if ((unsigned)want[i].status == code) {
                expect = want[i].name;
                ++named;
            }
        }
        const char *got = ptec_status_str((ptec_status)code);
        ++checks;
        if (got == NULL || strcmp(got, expect) != 0) {
            fprintf(stderr, "FAIL: status 0x%x is \"%s\", want \"%s\"\n", code, got ? got : "(null)", expect);
            return 1;
        }
    }
    ++checks;
    CHECK(named == (int)(sizeof want / sizeof want[0]));

    static const char *const dtypes[] = {
        "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64", NULL, NULL, NULL,
        "bool", "qint8", "quint8", "qint32", "bfloat16", "quint4x2", "quint2x4", NULL, NULL, NULL, NULL,
        "bits16", "float8_e5m2", "float8_e4m3fn", "float8_e5m2fnuz", "float8_e4m3fnuz",
        "uint16", "uint32", "uint64"};
    CHECK(sizeof dtypes / sizeof dtypes[0] == PTEC_DTYPE_UINT64 + 1);
    for (int code = -300; code < 300; ++code) {
        const char *expect = code >= 0 && code <= PTEC_DTYPE_UINT64 && dtypes[code] ? dtypes[code] : "invalid";
        const char *got = ptec_dtype_name(code);
        ++checks;
        if (got == NULL || strcmp(got, expect) != 0) {
            fprintf(stderr, "FAIL: dtype %d is \"%s\", want \"%s\"\n", code, got ? got : "(null)", expect);
            return 1;
        }
    }
    return test_summary("status and dtype names", checks);
}
