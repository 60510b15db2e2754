/*
 * nrt_internal.h - what the files of lib/nrt share and nothing outside it
 * sees: the runtime's lifecycle state, the layout of nrt_model_t, and the
 * hooks init.c and async.c use to set up and tear down one another's state.
 */
#ifndef NRT_INTERNAL_H
#define NRT_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <nrt/nrt.h>
#include <nrt/nrt_status.h>

#include "kmgr/kmgr.h"

/* The lifecycle: UNINIT -> INIT -> CLOSED -> INIT ...; a child forked
 * while INIT is FORKED for good (init.c, docs/api-contract.md). */
typedef enum nrt_state {
	NRT_STATE_UNINIT = 0,
	NRT_STATE_INIT = 1,
	NRT_STATE_CLOSED = 2,
	NRT_STATE_FORKED = 3,
} nrt_state_t;

/* A loaded model: the facade handle and where it was placed. */
struct nrt_model {
	struct nrt_model *prev, *next; /* every live record, for nrt_close */
	H_NN h_nn;
	uint32_t start_nc; /* first core (the virtual core's vtpb_idx) */
	uint32_t nc_count;
	bool unloading; /* claimed by an nrt_unload, or retired after it */
};

/* model.c: a copy of the live record behind handle: NRT_INVALID for NULL,
 * NRT_INVALID_HANDLE (logged with fn) for a handle that is not a loaded
 * model (unloaded, being unloaded, or never one); the handle is compared,
 * never read, until it is found live. */
NRT_STATUS nrt__model_resolve(const char *fn, const nrt_model_t *handle, nrt_model_t *copy);

nrt_state_t nrt__state(void);

/* The guard of a call that uses the runtime: NRT_SUCCESS when initialized,
 * else NRT_UNINITIALIZED or NRT_CLOSED (logged with the caller's name).  On
 * success the call counts as in flight until nrt__leave(rc), which returns
 * rc; nrt_close waits for every call in flight before it frees anything. */
NRT_STATUS nrt__enter(const char *fn);
NRT_STATUS nrt__leave(NRT_STATUS rc);
/* The same without a log line, for the calls that work in every state and
 * only need to know whether they may ask the facade: true (counted in,
 * nrt__leave to follow) when initialized. */
bool nrt__enter_if_init(void);

/* model.c: free every nrt_model_t still live or retired, and the retired
 * tensor-info arrays (nrt_close, after kmgr_unload_all_nns has unloaded the
 * models). */
void nrt__models_release_all(void);

/* async.c: re-install the registered callback after kmgr_init, and release
 * the completion slots nobody tracks once no device thread runs. */
/* The KMGR_FAULT hook of the test builds (fault_env.c); NRT_SUCCESS at once
 * in the installed library. */
NRT_STATUS nrt__fault_env(void);

void nrt__async_on_init(void);
void nrt__async_on_close(void);

#endif /* NRT_INTERNAL_H */
