/* Mode (b), register level: Arm's unmodified ethos-u-core-driver drives a
 * register file in ordinary RAM, and ptec_npu_model plays the NPU behind it
 * through the driver's weak hooks (docs/ethos-u.md, "Register-level mode").
 *
 * The driver gets this file's RAM as its `reg_base` and does everything it
 * does on silicon: checks CONFIG.product at ethosu_init, soft-resets (RESET,
 * polls STATUS.reset_status, checks PROT), checks the OPTIMIZER_CONFIG
 * against CONFIG/ID, writes AXI limits, QBASE/QSIZE/QCONFIG, BASEPn,
 * REGIONCFG and CMD (transition to running), then waits on its semaphore.
 * The wait is where the NPU runs: ethosu_semaphore_take finds the start
 * command in CMD, runs the model on the stream at QBASE with the regions at
 * BASEPn, writes STATUS (and QREAD) as the hardware would, and raises the
 * interrupt by calling the driver's own ethosu_irq_handler, which clears it
 * through CMD, reads STATUS and gives the semaphore. The driver alone
 * decides the return code.
 *
 * Register offsets are written here from the spec's register map, not taken
 * from Arm's interface header, so a disagreement between the two shows up as
 * a failing run. Compiled against one driver build: ETHOSU55 or ETHOSU65
 * (40-bit QBASE/BASEPn, high word at +4). */
#include <stdbool.h>
#include <string.h>

#include "driver_regs.h"
#include "ethosu_driver.h" /* Arm's, from PTEC_SHARED (struct ethosu_driver, hooks) */
#include "npu_model.h"
#include "ptec/config.h"

#if !defined(ETHOSU55) && !defined(ETHOSU65)
#error "driver_regs.c is built with Arm's driver for ETHOSU55 or ETHOSU65"
#endif

/* ---- The register file --------------------------------------------------- */

/* Byte offsets of the registers the driver touches (Ethos-U55/U65 map). */
#define REG_ID 0x000u
#define REG_STATUS 0x004u
#define REG_CMD 0x008u
#define REG_RESET 0x00Cu
#define REG_QBASE 0x010u /* 64-bit on U65: low word, high word at +4 */
#define REG_QREAD 0x018u
#define REG_QCONFIG 0x01Cu
#define REG_QSIZE 0x020u
#define REG_PROT 0x024u
#define REG_CONFIG 0x028u
#define REG_REGIONCFG 0x03Cu
#define REG_BASEP 0x080u /* eight 64-bit base pointers */
#define REG_FILE_BYTES 0x1000u /* the whole 4 KiB page the driver's struct spans */

#define CMD_TRANSITION_TO_RUNNING (1u << 0)
#define CMD_CLEAR_IRQ (1u << 1)
#define PROT_ACTIVE_CPL_PRIVILEGED (1u << 0)
#define PROT_ACTIVE_CSL_NON_SECURE (1u << 1)

/* What ethosu_init is told: secure and privileged, as Arm's Corstone
 * platforms bring the NPU up. PROT must already show those levels, because
 * the driver checks it right after writing RESET with no hook in between. */
#define NPU_SECURE 1u
#define NPU_PRIVILEGED 1u

static uint32_t the_regs[REG_FILE_BYTES / 4u] __attribute__((aligned(16)));

static uint32_t reg_read(uint32_t offset)
{
    return ((volatile uint32_t *)the_regs)[offset / 4u];
}

static void reg_write(uint32_t offset, uint32_t value)
{
    ((volatile uint32_t *)the_regs)[offset / 4u] = value;
}

/* A 64-bit address register: U65 has 40 address bits (high word at +4);
 * U55 has 32 and the driver writes only the low word. */
static uint64_t reg_read_address(uint32_t offset)
{
    uint64_t address = reg_read(offset);
#if defined(ETHOSU65)
    address |= (uint64_t)reg_read(offset + 4u) << 32;
#endif
    return address;
}

const volatile uint32_t *ptec_npu_regs_file(void)
{
    return the_regs;
}

/* ---- The NPU's bus: where the driver's remapped addresses point ---------- */

/* ethosu_address_remap turns each CPU address into a bus address the NPU
 * can hold (host pointers do not fit U55's 32 or U65's 40 address bits):
 * the stream (index -1) and base i each get a window of their own, 256 MiB
 * on the U55 and 4 GiB on the U65 (so the high words of its 64-bit
 * registers carry part of every address). The model then reads QBASE and
 * BASEPn back and translates them, so what it runs on is exactly what the
 * driver programmed. */
#define WINDOW_COUNT (1 + PTEC_NPU_MAX_REGIONS)
#if defined(ETHOSU65)
#define WINDOW_SHIFT 32u /* -1 -> 0x1_0000_0000 .. 7 -> 0x9_0000_0000 */
#else
#define WINDOW_SHIFT 28u /* -1 -> 0x1000_0000 .. 7 -> 0x9000_0000 */
#endif

static uint64_t window_address(int index)
{
    return (uint64_t)(index + 2) << WINDOW_SHIFT;
}

uint64_t ptec_npu_regs_window(int index)
{
    return window_address(index);
}

typedef struct bus_map {
    uint64_t cpu[WINDOW_COUNT];   /* [0] the stream, [1 + i] base i, as remapped */
    size_t size[PTEC_NPU_MAX_REGIONS]; /* base sizes from ethosu_flush_dcache */
    int count;                    /* bases of the job, -1 when more than the NPU has */
} bus_map;

static bus_map the_bus;

uint64_t ethosu_address_remap(uint64_t address, int index)
{
    if (index < -1 || index >= PTEC_NPU_MAX_REGIONS) {
        return address;
    }
    the_bus.cpu[index + 1] = address;
    return window_address(index);
}

/* The driver passes every base and its size here just before it starts the
 * job, and nowhere else: the sizes bound the model's accesses. */
void ethosu_flush_dcache(const uint64_t *base_addr, const size_t *base_addr_size, int num_base_addr)
{
    (void)base_addr;
    memset(&the_bus, 0, sizeof(the_bus));
    if (num_base_addr < 0 || num_base_addr > PTEC_NPU_MAX_REGIONS) {
        the_bus.count = -1;
        return;
    }
    for (int i = 0; i < num_base_addr; i++) {
        the_bus.size[i] = base_addr_size[i];
    }
    the_bus.count = num_base_addr;
}

/* ---- The NPU ------------------------------------------------------------- */

static struct ethosu_driver the_driver;
static int the_driver_ready;  /* ethosu_init succeeded on the_regs */
static int the_npu_configured;
static ptec_npu_model the_model;
/* Decoded weights of one op; 16-byte aligned for the int16 unpacking. */
static uint8_t the_work[PTEC_NPU_MODEL_WORK_BYTES] __attribute__((aligned(16)));

/* A bus abort on the command channel: what the NPU reports when QBASE or a
 * base pointer is not an address it can reach. */
static void fault_bus(void)
{
    memset(&the_model.stats, 0, sizeof(the_model.stats));
    the_model.fault.status =
        PTEC_NPU_STATUS_BUS_STATUS | PTEC_NPU_CHANNEL_CMD << PTEC_NPU_STATUS_FAULTING_CHANNEL_SHIFT;
    the_model.fault.qread = 0;
    the_model.fault.command_index = 0;
    the_model.fault.detail = "QBASE or a BASEP register outside the bus windows";
}

/* One job: the stream at QBASE (QSIZE bytes), region i at BASEPi. */
static void npu_execute(void)
{
    uint64_t cpu_base[PTEC_NPU_MAX_REGIONS];
    const uint64_t qbase = reg_read_address(REG_QBASE);
    const uint32_t qsize = reg_read(REG_QSIZE);
    int ok = the_bus.count >= 0 && qbase == window_address(-1) && qsize % 4u == 0u;
    for (int i = 0; ok && i < the_bus.count; i++) {
        ok = reg_read_address(REG_BASEP + 8u * (uint32_t)i) == window_address(i);
        cpu_base[i] = the_bus.cpu[1 + i];
    }
    if (!ok) {
        fault_bus();
        return;
    }
    const uint32_t *stream = (const uint32_t *)(uintptr_t)the_bus.cpu[0];
    (void)ptec_npu_model_run(&the_model, stream, qsize / 4u, cpu_base, the_bus.size, the_bus.count);
}

/* The NPU after CMD's transition_to_running: run, stop, write STATUS and
 * QREAD, raise the IRQ (the driver's handler clears it through CMD). */
static void npu_serve(void)
{
    reg_write(REG_CMD, reg_read(REG_CMD) & ~CMD_TRANSITION_TO_RUNNING);
    npu_execute();
    const ptec_npu_fault *fault = ptec_npu_model_fault(&the_model);
    /* STATUS.state (bit 0) reads 0: stopped, at NPU_OP_STOP or the fault */
    reg_write(REG_QREAD, fault->qread);
    reg_write(REG_STATUS, (fault->status & ~1u) | PTEC_NPU_STATUS_IRQ_RAISED);
    ethosu_irq_handler(&the_driver);
    if (reg_read(REG_CMD) & CMD_CLEAR_IRQ) {
        reg_write(REG_STATUS, reg_read(REG_STATUS) & ~PTEC_NPU_STATUS_IRQ_RAISED);
        reg_write(REG_CMD, reg_read(REG_CMD) & ~CMD_CLEAR_IRQ);
    }
}

/* ---- Semaphores: no heap, and the wait that runs the NPU ----------------- */

/* The driver needs two (its global one and one per driver); a few spare. */
#define SEMAPHORE_COUNT 4

typedef struct semaphore {
    int used;
    unsigned count;
} semaphore;

static semaphore the_semaphores[SEMAPHORE_COUNT];

void *ethosu_semaphore_create(void)
{
    for (int i = 0; i < SEMAPHORE_COUNT; i++) {
        if (!the_semaphores[i].used) {
            the_semaphores[i].used = 1;
            the_semaphores[i].count = 0;
            return &the_semaphores[i];
        }
    }
    return NULL;
}

void ethosu_semaphore_destroy(void *sem)
{
    if (sem != NULL) {
        ((semaphore *)sem)->used = 0;
    }
}

int ethosu_semaphore_give(void *sem)
{
    if (sem == NULL) {
        return -1;
    }
    ((semaphore *)sem)->count++;
    return 0;
}

/* One thread: a wait with nothing to come would never end, so it is a
 * timeout (-1), which the driver handles as one. The driver's semaphore
 * with a started job is the NPU's interrupt on its way: serve it first. */
int ethosu_semaphore_take(void *sem, uint64_t timeout)
{
    (void)timeout;
    semaphore *s = sem;
    if (s == NULL) {
        return -1;
    }
    if (s->count == 0u && the_driver_ready && sem == the_driver.semaphore &&
        (reg_read(REG_CMD) & CMD_TRANSITION_TO_RUNNING) != 0u) {
        npu_serve();
    }
    if (s->count == 0u) {
        return -1;
    }
    s->count--;
    return 0;
}

/* ---- Bring-up and ptec's entry points ------------------------------------ */

/* The register file at reset of an NPU that is `hw`: ID and CONFIG, PROT at
 * the levels the driver asks for, everything else 0 (STATUS.reset_status
 * included, so the driver's reset poll ends at once). */
void ptec_npu_model_configure(const ptec_npu_hw *hw)
{
    if (the_driver_ready) {
        ethosu_deinit(&the_driver);
        the_driver_ready = 0;
    }
    ptec_npu_model_init(&the_model, hw, the_work, sizeof(the_work));
    memset(the_regs, 0, sizeof(the_regs));
    memset(&the_bus, 0, sizeof(the_bus));
    reg_write(REG_ID, hw->id);
    reg_write(REG_CONFIG, hw->config);
    reg_write(REG_PROT, (NPU_PRIVILEGED ? PROT_ACTIVE_CPL_PRIVILEGED : 0u) |
                            (NPU_SECURE ? 0u : PROT_ACTIVE_CSL_NON_SECURE));
    the_npu_configured = 1;
    /* Arm's driver refuses an NPU of another product than it was built for */
    the_driver_ready = ethosu_init(&the_driver, the_regs, NULL, 0, NPU_SECURE, NPU_PRIVILEGED) == 0;
}

static void npu_ready(void)
{
    if (!the_npu_configured) {
        ptec_npu_hw hw;
        if (ptec_npu_hw_from_name(PTEC_NPU_MODEL_DEFAULT_CONFIG, &hw) != 0) {
            (void)ptec_npu_hw_from_name("ethos-u55-128", &hw);
        }
        ptec_npu_model_configure(&hw);
    }
}

/* Arm's driver before 1.99 has no variants: the delegate's first call
 * brings the simulated NPU up, then any free driver will do (the driver's
 * OPTIMIZER_CONFIG check refuses a stream for another NPU). */
struct ethosu_driver *ethosu_reserve_driver_ex(uint32_t product, uint32_t log2_macs)
{
    (void)product;
    (void)log2_macs;
    npu_ready();
    return ethosu_reserve_driver();
}

const ptec_npu_model *ptec_npu_model_driver_state(void)
{
    npu_ready();
    return &the_model;
}

int ptec_ethos_u_last_call_stats(ptec_npu_stats *out)
{
    if (out == NULL) {
        return -1;
    }
    *out = *ptec_npu_model_stats(ptec_npu_model_driver_state());
    return 0;
}
