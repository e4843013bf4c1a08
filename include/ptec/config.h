/* Every build-time limit of the runtime, with its default. Each one can be
 * overridden with -D on the compiler's command line, or in a header
 * `ptec_user_config.h` on the include path, which is read first when the
 * build defines PTEC_USER_CONFIG (the lwIP opt.h pattern). Change a limit
 * for the whole build: the runtime, the kernels and the application must
 * agree, since several of them size public structures. */
#ifndef PTEC_CONFIG_H
#define PTEC_CONFIG_H

#if defined(PTEC_USER_CONFIG)
#include "ptec_user_config.h"
#endif

/* Planned buffers (memory ids 1..n) a method may declare; sizes
 * ptec_requirements and ptec_memory. */
#ifndef PTEC_MAX_PLANNED_BUFFERS
#define PTEC_MAX_PLANNED_BUFFERS 8u
#endif

/* Bytes of the error-detail message kept with a failed call. */
#ifndef PTEC_DETAIL_LEN
#define PTEC_DETAIL_LEN 160u
#endif

/* Highest tensor rank accepted from a program. */
#ifndef PTEC_MAX_RANK
#define PTEC_MAX_RANK 16
#endif

/* Largest per-operator prepared state a kernel may ask for, in bytes. */
#ifndef PTEC_MAX_KERNEL_STATE
#define PTEC_MAX_KERNEL_STATE 512u
#endif

/* Longest argument list a KernelCall may have. */
#ifndef PTEC_MAX_OP_ARGS
#define PTEC_MAX_OP_ARGS 32u
#endif

/* 1 reads the requirements record ptec's AOT writes into a program
 * (docs/compatibility.md), so that ptec_method_requirements() need not walk
 * the method; 0 always walks it (about 1.2 KB less code: the i.MX93 M33
 * board's default, whose code TCM is full). CMake: -DPTEC_REQUIREMENTS_RECORD=OFF. */
#ifndef PTEC_REQUIREMENTS_RECORD
#define PTEC_REQUIREMENTS_RECORD 1
#endif

/* 1 keeps the prose of error messages; 0 keeps status codes, instruction
 * indices and operator names only (less flash). */
#ifndef PTEC_ERROR_MESSAGES
#define PTEC_ERROR_MESSAGES 1
#endif

/* ptec_npu_model in direct-driver mode (driver_direct.c): the static work
 * buffer for one op's decoded weights, and the NPU the model simulates until
 * ptec_npu_model_configure() says otherwise (a Vela accelerator name). */
#ifndef PTEC_NPU_MODEL_WORK_BYTES
#define PTEC_NPU_MODEL_WORK_BYTES 131072u
#endif
#ifndef PTEC_NPU_MODEL_DEFAULT_CONFIG
#define PTEC_NPU_MODEL_DEFAULT_CONFIG "ethos-u55-128"
#endif

/* EthosUBackend (src/backends/ethos_u): the NPU this build drives, by its
 * Vela accelerator name (ethos-u55-32/64/128/256, ethos-u65-256/512); a blob
 * compiled for another is refused at load. CMake: -DPTEC_ETHOSU_TARGET=NAME. */
#ifndef PTEC_ETHOSU_TARGET
#define PTEC_ETHOSU_TARGET "ethos-u55-128"
#endif

/* EthosUBackend: fast-scratch bytes (base pointer 2, Vela's Dedicated_Sram
 * cache) each delegate asks for. The blob does not record Vela's need, so the
 * build states it; 0 suits Shared_Sram (the U55 default) and Arm's driver
 * given its fast memory by ethosu_init (it substitutes base 2 itself).
 * CMake: -DPTEC_ETHOSU_FAST_SCRATCH_BYTES=N. */
#ifndef PTEC_ETHOSU_FAST_SCRATCH_BYTES
#define PTEC_ETHOSU_FAST_SCRATCH_BYTES 0u
#endif

#endif
