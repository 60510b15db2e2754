/*
 * nrt_kmgr.h - test hook, not installed: the facade handle behind a public
 * nrt_model_t, so tests can reach lib/kmgr (a stale or foreign handle, the
 * refcount) where the pointer-based public API cannot express a case.
 */
#ifndef NRT_KMGR_H
#define NRT_KMGR_H

#include <nrt/nrt.h>
#include <nrt/nrt_status.h>

#include "kmgr/kmgr.h"

/* NRT_INVALID for a NULL argument. */
NRT_STATUS nrt_model_get_nn(const nrt_model_t *model, H_NN *h_nn);

#endif /* NRT_KMGR_H */
