/*
 * ktest.h - the assertions every kmgr-fuzz test uses.
 *
 * Each failing assertion prints both operands, the expression and the
 * location, then aborts, so a red test says what it compared.  A test file
 * is a main() that runs numbered cases through KT_CASE, each with a comment
 * stating the claim it proves (SQLite style); the final line is the plain
 * "N passed, 0 failed" that CI reads.
 */
#ifndef KTEST_H
#define KTEST_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int kt_passed;

#define KT_FAIL(...)                                                                               \
	do {                                                                                       \
		fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                    \
		fprintf(stderr, __VA_ARGS__);                                                      \
		fputc('\n', stderr);                                                               \
		abort();                                                                           \
	} while (0)

#define KT_ASSERT(cond)                                                                            \
	do {                                                                                       \
		if (!(cond))                                                                       \
			KT_FAIL("assertion failed: %s", #cond);                                    \
	} while (0)

#define KT_CMP_INT(a, op, b)                                                                       \
	do {                                                                                       \
		long long kt_a_ = (long long)(a), kt_b_ = (long long)(b);                          \
		if (!(kt_a_ op kt_b_))                                                             \
			KT_FAIL("%s %s %s: %lld vs %lld", #a, #op, #b, kt_a_, kt_b_);              \
	} while (0)

#define KT_EQ(a, b) KT_CMP_INT(a, ==, b)
#define KT_NE(a, b) KT_CMP_INT(a, !=, b)
#define KT_LT(a, b) KT_CMP_INT(a, <, b)
#define KT_LE(a, b) KT_CMP_INT(a, <=, b)
#define KT_GT(a, b) KT_CMP_INT(a, >, b)
#define KT_GE(a, b) KT_CMP_INT(a, >=, b)

#define KT_STREQ(a, b)                                                                             \
	do {                                                                                       \
		const char *kt_a_ = (a), *kt_b_ = (b);                                             \
		if (!kt_a_ || !kt_b_ || strcmp(kt_a_, kt_b_) != 0)                                 \
			KT_FAIL("%s == %s: \"%s\" vs \"%s\"", #a, #b, kt_a_ ? kt_a_ : "(null)",    \
			        kt_b_ ? kt_b_ : "(null)");                                         \
	} while (0)

#define KT_MEMEQ(a, b, n)                                                                          \
	do {                                                                                       \
		size_t kt_n_ = (n);                                                                \
		const unsigned char *kt_a_ = (const unsigned char *)(a);                           \
		const unsigned char *kt_b_ = (const unsigned char *)(b);                           \
		for (size_t kt_i_ = 0; kt_i_ < kt_n_; kt_i_++)                                     \
			if (kt_a_[kt_i_] != kt_b_[kt_i_])                                          \
				KT_FAIL("%s == %s differ at byte %zu: 0x%02x vs 0x%02x", #a, #b,   \
				        kt_i_, kt_a_[kt_i_], kt_b_[kt_i_]);                        \
	} while (0)

/* Read a whole (small) file into buf, NUL-terminated; empty when missing. */
static inline void kt_slurp(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "rb");
	size_t n = 0;

	if (f) {
		n = fread(buf, 1, cap - 1, f);
		fclose(f);
	}
	buf[n] = 0;
}

static inline int kt_count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* Run only the cases whose name starts with kt_only (NULL, the default:
 * every case); a test's main may set it from its command line. */
static const char *kt_only;

/* Run one case: KT_CASE(name, fn) where fn is void fn(void). */
#define KT_CASE(name, fn)                                                                          \
	do {                                                                                       \
		if (kt_only && strncmp(name, kt_only, strlen(kt_only)) != 0)                       \
			break;                                                                     \
		fprintf(stderr, "--- %s\n", name);                                                 \
		fn();                                                                              \
		kt_passed++;                                                                       \
	} while (0)

#define KT_DONE()                                                                                  \
	do {                                                                                       \
		printf("%d passed, 0 failed\n", kt_passed);                                        \
		return 0;                                                                          \
	} while (0)

#endif /* KTEST_H */
