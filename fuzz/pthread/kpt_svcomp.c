/*
 * kpt_svcomp.c - the SV-COMP verification interface (sv-benchmarks' c/
 * folders), so that a benchmark program runs under kpt unchanged:
 *   __VERIFIER_nondet_<type>()   a value taken from the fuzz input (its last
 *                                bytes, from the end; 0 when they run out)
 *   __VERIFIER_assume(c)         c false: this path is not one of the
 *                                program's; the run ends without a finding
 *   __VERIFIER_error()           the property violated: KPT REACH_ERROR
 *   __VERIFIER_atomic_begin/end  an atomic section: no other thread runs
 *                                between the two while this one can
 * and, for a program built with KPT_SVCOMP (kpt_add_program SVCOMP,
 * ci/kpt.sh --svcomp: -finstrument-functions on its file), SV-COMP's
 * meaning of its own two functions: entering reach_error() is the finding
 * (KPT REACH_ERROR), whatever its body (often empty, then abort()),
 * a function of its own named __VERIFIER_atomic_* runs as an atomic
 * section, and abort() ends an infeasible path (kpt_sv_abort), as
 * assume(0) does.
 * Only linked when the program calls them (a member of libkpt.a of its own).
 */
#define KPT_NO_MACROS
#include "kpt.h"

#include <elf.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sched/kctl.h"

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

void __VERIFIER_atomic_begin(void)
{
	if (ks_controlled())
		ks_ctl_atomic_begin("__VERIFIER_atomic_begin");
}

void __VERIFIER_atomic_end(void)
{
	if (ks_controlled())
		ks_ctl_atomic_end("__VERIFIER_atomic_end");
}

/* ---- the program's __VERIFIER_atomic_* functions -------------------------
 * -finstrument-functions hands __cyg_profile_func_enter a function's
 * address only, so the names come from the executable's own symbol table
 * (.symtab), read once; the load bias is where __VERIFIER_atomic_begin,
 * this file's, is against its symbol.  The mapping stays: the names are
 * the sections' sites. */
#define SV_ATOMIC_MAX 256
#define SV_ATOMIC     "__VERIFIER_atomic_"

static struct {
	uintptr_t addr;
	const char *name;
} sv_atomic[SV_ATOMIC_MAX];
static int sv_natomic;
static pthread_once_t sv_once = PTHREAD_ONCE_INIT;

/* The image's .symtab, and its string table in *str; NULL without one. */
static const Elf64_Shdr *sv_symtab(const uint8_t *img, size_t size, const Elf64_Shdr **str)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
	const Elf64_Shdr *sh;

	if (size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shoff == 0 ||
	    eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(*sh) > size)
		return NULL;
	sh = (const Elf64_Shdr *)(img + eh->e_shoff);
	for (int i = 0; i < eh->e_shnum; i++)
		if (sh[i].sh_type == SHT_SYMTAB && sh[i].sh_link < eh->e_shnum &&
		    sh[i].sh_offset + sh[i].sh_size <= size &&
		    sh[sh[i].sh_link].sh_offset + sh[sh[i].sh_link].sh_size <= size) {
			*str = &sh[sh[i].sh_link];
			return &sh[i];
		}
	return NULL;
}

static void sv_collect(const uint8_t *img, const Elf64_Shdr *sym, const Elf64_Shdr *str)
{
	const Elf64_Sym *s = (const Elf64_Sym *)(img + sym->sh_offset);
	const char *names = (const char *)(img + str->sh_offset);
	size_t n = sym->sh_size / sizeof(*s);
	uintptr_t bias = 0;
	bool have_bias = false;

	for (size_t i = 0; i < n && !have_bias; i++)
		if (s[i].st_name < str->sh_size &&
		    strcmp(names + s[i].st_name, "__VERIFIER_atomic_begin") == 0) {
			bias = (uintptr_t)__VERIFIER_atomic_begin - (uintptr_t)s[i].st_value;
			have_bias = true;
		}
	for (size_t i = 0; i < n && have_bias; i++) {
		const char *name = names + s[i].st_name;

		if (ELF64_ST_TYPE(s[i].st_info) != STT_FUNC || s[i].st_value == 0 ||
		    s[i].st_name >= str->sh_size ||
		    strncmp(name, SV_ATOMIC, strlen(SV_ATOMIC)) != 0 ||
		    strcmp(name, "__VERIFIER_atomic_begin") == 0 ||
		    strcmp(name, "__VERIFIER_atomic_end") == 0)
			continue;
		if (sv_natomic == SV_ATOMIC_MAX) {
			fprintf(stderr,
			        "KPT LIMIT: more than %d __VERIFIER_atomic_* functions; "
			        "the others are not atomic (SV_ATOMIC_MAX in kpt_svcomp.c)\n",
			        SV_ATOMIC_MAX);
			return;
		}
		sv_atomic[sv_natomic].addr = (uintptr_t)s[i].st_value + bias;
		sv_atomic[sv_natomic++].name = name;
	}
}

static void sv_read(void)
{
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	struct stat st;
	void *img = MAP_FAILED;
	const Elf64_Shdr *sym, *str = NULL;

	if (fd >= 0 && fstat(fd, &st) == 0 && st.st_size > 0)
		img = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (fd >= 0)
		close(fd);
	if (img == MAP_FAILED) {
		fprintf(stderr, "KPT: cannot read the program's symbols (/proc/self/exe): its "
		                "__VERIFIER_atomic_* functions are not atomic\n");
		return;
	}
	sym = sv_symtab(img, (size_t)st.st_size, &str);
	if (sym)
		sv_collect(img, sym, str);
	else
		fprintf(stderr, "KPT: the program has no symbol table (stripped?): its "
		                "__VERIFIER_atomic_* functions are not atomic\n");
}

/* fn's name if it is one of them, else NULL */
static const char *sv_atomic_name(void *fn)
{
	pthread_once(&sv_once, sv_read);
	for (int i = 0; i < sv_natomic; i++)
		if (sv_atomic[i].addr == (uintptr_t)fn)
			return sv_atomic[i].name;
	return NULL;
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
	const char *atomic;

	(void)site;
	if (reach_error && fn == (void *)reach_error) {
		fprintf(stderr, "KPT REACH_ERROR: reach_error() reached\n");
		abort();
	}
	if (ks_controlled() && (atomic = sv_atomic_name(fn)) != NULL)
		ks_ctl_atomic_begin(atomic);
}

void __cyg_profile_func_exit(void *fn, void *site)
{
	const char *atomic;

	(void)site;
	if (ks_controlled() && (atomic = sv_atomic_name(fn)) != NULL)
		ks_ctl_atomic_end(atomic);
}
