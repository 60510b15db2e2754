/*
 * kpt_svcomp.c - the SV-COMP verification interface (sv-benchmarks' c/
 * folders), so that a benchmark program runs under kpt unchanged:
 *   __VERIFIER_nondet_<type>()   a value taken from the fuzz input (its last
 *                                bytes, from the end; 0 when they run out)
 *   __VERIFIER_assume(c)         c false: this path is not one of the
 *                                program's; the run ends without a finding
 *   __VERIFIER_error()           the property violated: KPT REACH_ERROR
 *   __VERIFIER_atomic_begin/end  one lock around every atomic section
 * and, for a program built with KPT_SVCOMP (kpt_add_program SVCOMP,
 * ci/kpt.sh --svcomp: -finstrument-functions on its file), SV-COMP's
 * meaning of its own two functions: entering reach_error() is the finding
 * (KPT REACH_ERROR), whatever its body (often empty, then abort()), and
 * abort() ends an infeasible path (kpt_sv_abort), as assume(0) does.
 * Only linked when the program calls them (a member of libkpt.a of its own).
 */
#define KPT_NO_MACROS
#include "kpt.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t nondet(size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)kpt_input_byte() << (8 * i);
	return v;
}

int __VERIFIER_nondet_int(void);
unsigned __VERIFIER_nondet_uint(void);
unsigned __VERIFIER_nondet_unsigned(void);
long __VERIFIER_nondet_long(void);
unsigned long __VERIFIER_nondet_ulong(void);
char __VERIFIER_nondet_char(void);
unsigned char __VERIFIER_nondet_uchar(void);
short __VERIFIER_nondet_short(void);
unsigned short __VERIFIER_nondet_ushort(void);
_Bool __VERIFIER_nondet_bool(void);
void *__VERIFIER_nondet_pointer(void);
void __VERIFIER_assume(int cond);
void __VERIFIER_error(void);
void __VERIFIER_atomic_begin(void);
void __VERIFIER_atomic_end(void);

int __VERIFIER_nondet_int(void)
{
	return (int)nondet(sizeof(int));
}

unsigned __VERIFIER_nondet_uint(void)
{
	return (unsigned)nondet(sizeof(unsigned));
}

unsigned __VERIFIER_nondet_unsigned(void)
{
	return (unsigned)nondet(sizeof(unsigned));
}

long __VERIFIER_nondet_long(void)
{
	return (long)nondet(sizeof(long));
}

unsigned long __VERIFIER_nondet_ulong(void)
{
	return (unsigned long)nondet(sizeof(unsigned long));
}

char __VERIFIER_nondet_char(void)
{
	return (char)nondet(1);
}

unsigned char __VERIFIER_nondet_uchar(void)
{
	return (unsigned char)nondet(1);
}

short __VERIFIER_nondet_short(void)
{
	return (short)nondet(sizeof(short));
}

unsigned short __VERIFIER_nondet_ushort(void)
{
	return (unsigned short)nondet(sizeof(short));
}

_Bool __VERIFIER_nondet_bool(void)
{
	return nondet(1) & 1;
}

void *__VERIFIER_nondet_pointer(void)
{
	return NULL; /* a pointer from nowhere: none but NULL is safe to give */
}

void __VERIFIER_assume(int cond)
{
	if (!cond)
		kpt_infeasible("__VERIFIER_assume");
}

void __VERIFIER_error(void)
{
	fprintf(stderr, "KPT REACH_ERROR: __VERIFIER_error() reached\n");
	abort();
}

static pthread_mutex_t kpt_atomic_lock = PTHREAD_MUTEX_INITIALIZER;

void __VERIFIER_atomic_begin(void)
{
	kpt_mutex_lock(&kpt_atomic_lock, "__VERIFIER_atomic_begin");
}

void __VERIFIER_atomic_end(void)
{
	kpt_mutex_unlock(&kpt_atomic_lock, "__VERIFIER_atomic_end");
}

/* The program's own reach_error, if it has one (weak: NULL otherwise). */
void reach_error(void) __attribute__((weak));
void kpt_sv_abort(void) __attribute__((noreturn));
void __cyg_profile_func_enter(void *fn, void *site) __attribute__((no_instrument_function));
void __cyg_profile_func_exit(void *fn, void *site) __attribute__((no_instrument_function));

void kpt_sv_abort(void)
{
	kpt_infeasible("abort");
}

void __cyg_profile_func_enter(void *fn, void *site)
{
	(void)site;
	if (reach_error && fn == (void *)reach_error) {
		fprintf(stderr, "KPT REACH_ERROR: reach_error() reached\n");
		abort();
	}
}

void __cyg_profile_func_exit(void *fn, void *site)
{
	(void)fn;
	(void)site;
}
