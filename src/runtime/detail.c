/* Error detail: one human-readable line per failure, built without stdio
 * into the program's fixed buffer (truncated, never overrun). */
#include <string.h>

#include "runtime/runtime_internal.h"

void ptec_detail_strn(ptec_detail_fmt *f, const char *s, size_t n)
{
    char *buf = f->program->error.message;
    for (size_t i = 0; i < n && s[i] != '\0' && f->len + 1u < PTEC_DETAIL_LEN; ++i) {
        buf[f->len++] = s[i];
    }
    buf[f->len] = '\0';
}

void ptec_detail_str(ptec_detail_fmt *f, const char *s)
{
    ptec_detail_strn(f, s, (size_t)-1);
}

void ptec_detail_u64(ptec_detail_fmt *f, uint64_t v)
{
    char digits[21];
    size_t n = 0;
    do {
        digits[sizeof digits - 1u - n++] = (char)('0' + v % 10u);
        v /= 10u;
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

void ptec_detail_begin(ptec_detail_fmt *f, ptec_program *program, ptec_status status, int32_t instruction,
                  const char *op_name, uint32_t op_name_len)
{
    ptec_error_detail *e = &program->error;
    f->program = program;
    f->len = 0;
    e->status = status;
    e->instruction = instruction;
    e->op_name = op_name;
    e->op_name_len = op_name_len;
    e->message[0] = '\0';
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
    ptec_platform_log(PTEC_LOG_ERROR, f->program->error.message);
    return f->program->error.status;
}

ptec_status ptec_detail_fail(ptec_program *program, ptec_status status, const char *message)
{
    ptec_detail_fmt f;
    ptec_detail_begin(&f, program, status, -1, NULL, 0);
    ptec_detail_str(&f, message);
    return ptec_detail_end(&f);
}

void ptec_detail_clear(ptec_program *program)
{
    memset(&program->error, 0, sizeof program->error);
    program->error.instruction = -1;
}

const char *ptec_program_error(const ptec_program *program)
{
    return program->error.message;
}
