/* EthosUBackend's two facts outside its own file: the backend table entry
 * (src/backends/all_backends.def names it) and the persistent bytes each
 * delegate takes from the metadata region, for tools/ptec-layout. */
#ifndef PTEC_ETHOS_U_BACKEND_H
#define PTEC_ETHOS_U_BACKEND_H

#include <stddef.h>

#include "ptec/backend.h"

extern const ptec_backend ptec_backend_ethos_u;
extern const size_t ptec_ethos_u_persistent_bytes;

#endif
