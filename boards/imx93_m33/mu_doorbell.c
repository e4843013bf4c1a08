/* The doorbell between the M33 and Linux: MU1, side A, channel 1
 * (registers from the i.MX9 MU: TR[n] at 0x200 + 4n, RR[n] at 0x280 + 4n,
 * TSR 0x124 with TEn = TR[n] empty, RSR 0x12C with RFn = RR[n] full).
 * Linux kicks with the ring's id in the upper half-word and then needs no
 * answer but the ring itself; it ignores the value we send and scans
 * every ring. The server polls the rings, so a doorbell from Linux only
 * has to be read to free the register. */
#include <stdint.h>

#include "board_config.h"
#include "imx93_board.h"

#define MU_REG(offset) (*(volatile uint32_t *)(uintptr_t)(PTEC_IMX93_MU1_A_BASE + (offset)))
#define MU_TR1 MU_REG(0x204u)
#define MU_RR1 MU_REG(0x284u)
#define MU_TSR MU_REG(0x124u)
#define MU_RSR MU_REG(0x12Cu)
#define CHANNEL_1 (1u << 1)
/* Linux drains TR[1] at once; a stuck A55 must not stop the M33 for good. */
#define SEND_SPINS 100000u

void imx93_mu_kick(void *context, uint32_t notifyid)
{
    (void)context;
    for (uint32_t spin = 0; spin < SEND_SPINS; ++spin) {
        if ((MU_TSR & CHANNEL_1) != 0u) {
            MU_TR1 = notifyid << 16;
            return;
        }
    }
}

void imx93_mu_drain(void)
{
    if ((MU_RSR & CHANNEL_1) != 0u) {
        (void)MU_RR1;
    }
}
