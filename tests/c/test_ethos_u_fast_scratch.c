/* The fast-scratch compile spec's number parser
 * (src/backends/ethos_u/ethos_u_fast_scratch.c): 1 to 10 decimal digits up
 * to 2^32 - 1, nothing else. Whole programs carrying hostile values of the
 * spec are refused by the loader in tests/fuzz (seeds-hostile) and
 * tests/python/test_ethos_u_compiler.py. */
#include <stdint.h>
#include <string.h>

#include "backends/ethos_u/ethos_u_npu.h"
#include "test_util.h"

static int parse(const char *text, uint32_t *out)
{
    return ptec_ethos_u_parse_byte_count((const uint8_t *)text, strlen(text), out);
}

int main(void)
{
    int checks = 0;
    uint32_t v = 7;
    static const struct {
        const char *text;
        uint32_t value;
    } good[] = {{"0", 0u}, {"64", 64u}, {"393216", 393216u}, {"0000000001", 1u}, {"4294967295", 4294967295u}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; ++i) {
        CHECK(parse(good[i].text, &v) == 0 && v == good[i].value);
        checks++;
    }
    static const char *const bad[] = {"", "4294967296", "9999999999", "00000000001", "12a", "-1", "+1", " 1",
                                      "1 ", "0x10", "1.5"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        v = 7;
        CHECK(parse(bad[i], &v) == -1 && v == 7);
        checks++;
    }
    const uint8_t digit = '5';
    CHECK(ptec_ethos_u_parse_byte_count(NULL, 1, &v) == -1);
    CHECK(ptec_ethos_u_parse_byte_count(&digit, 1, NULL) == -1);
    CHECK(ptec_ethos_u_parse_byte_count(&digit, 0, &v) == -1);
    checks += 3;
    const ptec_delegate_blob no_specs = {NULL, 0, NULL, 0, NULL, 0};
    const char *detail = NULL;
    CHECK_STATUS(ptec_ethos_u_fast_scratch_spec(&no_specs, &v, &detail), PTEC_OK);
    CHECK(v == 0);
    checks += 2;
    return test_summary("ethos-u fast scratch spec", checks);
}
