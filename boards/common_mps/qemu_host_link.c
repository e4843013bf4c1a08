/* The host link on the QEMU MPS boards: scripts/run_qemu.sh places the
 * program and the input in memory the firmware does not own (the linker
 * script's slots) and their sizes in the boot info block; text goes to the
 * console; the run ends with semihosting's exit, so QEMU's exit status is
 * the runner's. */
#include "ptec_host_link.h"

#include "ptec_board.h"
#include "qemu_boot_info.h"

static int boot_info_valid(void)
{
    return ptec_boot_info.magic == PTEC_BOOT_INFO_MAGIC;
}

void ptec_host_link_program(ptec_host_bytes *program)
{
    program->data = __ptec_model_slot;
    program->capacity = (size_t)(uintptr_t)__ptec_model_slot_size;
    program->size = boot_info_valid() ? ptec_boot_info.model_size : 0u;
    program->origin = program->size != 0u ? "the program slot, size from the boot info block"
                                          : "the program slot";
}

void ptec_host_link_input(ptec_host_bytes *input)
{
    input->data = NULL;
    input->size = 0;
    input->capacity = (size_t)(uintptr_t)__ptec_input_slot_size;
    input->origin = "nothing";
    if (boot_info_valid() && ptec_boot_info.input_size != 0u) {
        input->data = __ptec_input_slot;
        input->size = ptec_boot_info.input_size;
        if (input->size > input->capacity) {
            input->size = input->capacity;
        }
        input->origin = "the input slot (placed by the loader)";
    }
}

void ptec_host_link_write(const char *text, size_t len)
{
    ptec_board_console_write(text, len);
}

_Noreturn void ptec_host_link_end(int status)
{
    ptec_board_exit(status);
}
