/* The fast scratch (region 2) a blob's command stream uses. Upstream's blob
 * has no field for it: Vela's users size the arena by hand. ptec's compiler
 * writes it as its own compile spec "ptec_fast_scratch_bytes" (decimal ASCII;
 * upstream's runtime ignores compile specs), so the runtime reports it in the
 * method's requirements before load (docs/ethos-u.md, "The compiler"). */
#include <string.h>

#include "backends/ethos_u/ethos_u_npu.h"

#define FAST_SCRATCH_SPEC "ptec_fast_scratch_bytes"
#define MAX_DIGITS 10u /* 4294967295 */

int ptec_ethos_u_parse_byte_count(const uint8_t *text, size_t len, uint32_t *out)
{
    if (text == NULL || out == NULL || len == 0u || len > MAX_DIGITS) {
        return -1;
    }
    uint64_t v = 0;
    for (size_t i = 0; i < len; ++i) {
        if (text[i] < '0' || text[i] > '9') {
            return -1;
        }
        v = v * 10u + (uint64_t)(text[i] - '0'); /* at most 10 digits: below 2^34 */
    }
    if (v > UINT32_MAX) {
        return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

ptec_status ptec_ethos_u_fast_scratch_spec(const ptec_delegate_blob *blob, uint32_t *bytes, const char **detail)
{
    *bytes = 0;
    for (size_t i = 0; i < blob->spec_count; ++i) {
        const char *key;
        size_t key_len, value_len;
        const uint8_t *value;
        if (ptec_delegate_compile_spec(blob, i, &key, &key_len, &value, &value_len) != PTEC_OK) {
            *detail = "a compile spec lies outside the program";
            return PTEC_INVALID_PROGRAM;
        }
        if (key_len == sizeof FAST_SCRATCH_SPEC - 1u && memcmp(key, FAST_SCRATCH_SPEC, key_len) == 0 &&
            ptec_ethos_u_parse_byte_count(value, value_len, bytes) != 0) {
            *detail = "compile spec ptec_fast_scratch_bytes is not a decimal byte count below 2^32";
            return PTEC_INVALID_PROGRAM;
        }
    }
    return PTEC_OK;
}
