/* Error detail: one human-readable line per failure, built without stdio
 * into a fixed buffer (truncated, never overrun): the method's, or during
 * ptec_program_init the program's. */
#include <string.h>

#include "runtime/runtime_internal.h"

void ptec_detail_strn(ptec_detail_fmt *f, const char *s, size_t n)
{
    if (f->sink == NULL) {
        return;
    }
    char *buf = f->sink->message;
    /* A detail is one line: a control byte from the file (an operator's
     * name, say) reads as '?'. */
    for (size_t i = 0; i < n && s[i] != '\0' && f->len + 1u < PTEC_DETAIL_LEN; ++i) {
        const unsigned char c = (unsigned char)s[i];
        buf[f->len++] = c < 0x20u || c == 0x7fu ? '?' : (char)c;
    }
    buf[f->len] = '\0';
}

void ptec_detail_str(ptec_detail_fmt *f, const char *s)
{
    ptec_detail_strn(f, s, (size_t)-1);
}

/* v / 10, its remainder in *digit, by shifts and adds (Hacker's Delight's
 * divu10, widened to 64 bits): on a 32-bit core a 64-bit division is a
 * library call (__aeabi_uldivmod) that the runtime does not link. The
 * estimate is at most a few short; the loop corrects it. */
static uint64_t div10(uint64_t v, unsigned *digit)
{
    uint64_t q = (v >> 1) + (v >> 2);
    q += q >> 4;
    q += q >> 8;
    q += q >> 16;
    q += q >> 32;
    q >>= 3;
    uint64_t r = v - q * 10u;
    while (r > 9u) {
        ++q;
        r -= 10u;
    }
    *digit = (unsigned)r;
    return q;
}

void ptec_detail_u64(ptec_detail_fmt *f, uint64_t v)
{
    char digits[21];
    size_t n = 0;
    do {
        unsigned digit;
        v = div10(v, &digit);
        digits[sizeof digits - 1u - n++] = (char)('0' + digit);
    } while (v != 0);
    ptec_detail_strn(f, digits + sizeof digits - n, n);
}

void ptec_detail_i64(ptec_detail_fmt *f, int64_t v)
{
    if (v < 0) {
        ptec_detail_str(f, "-");
        ptec_detail_u64(f, (uint64_t)0 - (uint64_t)v);
    } else {
        ptec_detail_u64(f, (uint64_t)v);
    }
}

static void ptec_detail_hex8(ptec_detail_fmt *f, unsigned v)
{
    static const char hex[] = "0123456789abcdef";
    char s[4] = {'0', 'x', hex[(v >> 4) & 15u], hex[v & 15u]};
    ptec_detail_strn(f, s, 4);
}

void ptec_detail_begin(ptec_detail_fmt *f, ptec_error_detail *sink, ptec_status status, int32_t instruction,
                       const char *op_name, uint32_t op_name_len)
{
    f->sink = sink;
    f->status = status;
    f->len = 0;
    if (sink != NULL) {
        sink->status = status;
        sink->instruction = instruction;
        sink->op_name = op_name;
        sink->op_name_len = op_name_len;
        sink->message[0] = '\0';
    }
    ptec_detail_str(f, ptec_status_str(status));
    ptec_detail_str(f, " (");
    ptec_detail_hex8(f, (unsigned)status);
    ptec_detail_str(f, "): ");
    if (instruction >= 0) {
        ptec_detail_str(f, "instruction ");
        ptec_detail_i64(f, instruction);
        if (op_name != NULL) {
            ptec_detail_str(f, " (");
            ptec_detail_strn(f, op_name, op_name_len);
            ptec_detail_str(f, ")");
        }
        ptec_detail_str(f, ": ");
    }
}

ptec_status ptec_detail_end(ptec_detail_fmt *f)
{
    /* Every failure also goes to the platform log, so firmware that only
     * checks status codes still leaves the reason on its console. */
    if (f->sink != NULL) {
        ptec_platform_log(PTEC_LOG_ERROR, f->sink->message);
    }
    return f->status;
}

ptec_status ptec_detail_fail(ptec_error_detail *sink, ptec_status status, const char *message)
{
    ptec_detail_fmt f;
    ptec_detail_begin(&f, sink, status, -1, NULL, 0);
    ptec_detail_str(&f, message);
    return ptec_detail_end(&f);
}

void ptec_detail_clear(ptec_error_detail *sink)
{
    sink->status = PTEC_OK;
    sink->instruction = -1;
    sink->op_name = NULL;
    sink->op_name_len = 0;
    sink->message[0] = '\0';
}

const char *ptec_program_error(const ptec_program *program)
{
    return program != NULL ? program->error.message : "";
}

const char *ptec_method_error(const ptec_method *method)
{
    return method != NULL ? method->error.message : "";
}
