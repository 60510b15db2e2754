/*
 * prog_roundtrip.c - the focus of this file is the program codec of
 * fuzz/prog/: decoding is total, encode inverts decode, the text form
 * round-trips, the parser is strict, and the minimizer keeps its
 * predicate.
 */
#include <stdlib.h>
#include <string.h>

#include "ktest.h"
#include "prog/prog.h"

static kprog_t p1, p2, p3;
static uint8_t buf[16384], buf2[16384];
static char text[65536], text2[65536];

/* A deterministic byte stream: no rand(), runs are reproducible. */
static uint64_t lcg = 0x9e3779b97f4a7c15ull;
static uint8_t next_byte(void)
{
	lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
	return (uint8_t)(lcg >> 56);
}

/* One hand-written program both ways: src parses into p1, its printed form
 * (text2) holds want (consecutive lines) and parses back to p1, and its
 * bytes (buf, the length returned) decode to p1 in p3.  The cases check
 * p1's fields and buf's bytes after it. */
static size_t roundtrip_both_ways(const char *src, const char *want)
{
	size_t n;

	KT_EQ(kprog_parse(src, &p1, text, sizeof(text)), 0);
	kprog_print(&p1, text2, sizeof(text2));
	if (strstr(text2, want) == NULL)
		KT_FAIL("printed form lacks\n%s\nin\n%s", want, text2);
	KT_EQ(kprog_parse(text2, &p2, text, sizeof(text)), 0);
	KT_ASSERT(kprog_equal(&p1, &p2));
	n = kprog_encode(&p1, buf, sizeof(buf));
	KT_ASSERT(n <= sizeof(buf));
	kprog_decode(buf, n, &p3);
	KT_ASSERT(kprog_equal(&p1, &p3));
	return n;
}

/* roundtrip-1.1: every byte string of every length decodes to an in-range
 * program, and encode(decode(b)) decodes to the same program. */
static void case_decode_total(void)
{
	for (int iter = 0; iter < 3000; iter++) {
		size_t n = (size_t)iter % 700;

		for (size_t i = 0; i < n; i++)
			buf[i] = next_byte();
		kprog_decode(buf, n, &p1);
		KT_LE(p1.nops, KPROG_MAX_OPS);
		KT_LE(p1.plan.n, KPROG_MAX_FAULTS);
		KT_GE(p1.nthreads, 1);
		KT_LE(p1.nthreads, KPROG_MAX_THREADS);
		for (unsigned i = 0; i < p1.nops; i++) {
			const kprog_kind_info_t *k = kprog_kind(p1.ops[i].kind);

			KT_ASSERT(k != NULL);
			KT_LT(p1.ops[i].thread, p1.nthreads);
			for (int f = 0; f < 4; f++)
				if (k->f[f].name) {
					KT_GE(p1.ops[i].a[f], k->f[f].min);
					KT_LE(p1.ops[i].a[f], k->f[f].max);
				}
		}
		n = kprog_encode(&p1, buf2, sizeof(buf2));
		KT_LE(n, sizeof(buf2));
		kprog_decode(buf2, n, &p2);
		KT_ASSERT(kprog_equal(&p1, &p2));
	}
}

/* roundtrip-1.2: parse(print(p)) == p for decoded programs, and printing
 * the parsed program gives the same text. */
static void case_text_roundtrip(void)
{
	char err[256];

	for (int iter = 0; iter < 2000; iter++) {
		size_t n = 4 + (size_t)iter % 400;

		for (size_t i = 0; i < n; i++)
			buf[i] = next_byte();
		kprog_decode(buf, n, &p1);
		KT_LT(kprog_print(&p1, text, sizeof(text)), sizeof(text));
		if (kprog_parse(text, &p2, err, sizeof(err)) != 0)
			KT_FAIL("parse failed: %s\n%s", err, text);
		KT_ASSERT(kprog_equal(&p1, &p2));
		kprog_print(&p2, text2, sizeof(text2));
		KT_STREQ(text, text2);
	}
}

/* roundtrip-1.3: a hand-written program means what it says, and its bytes
 * decode back to it. */
static void case_hand_written(void)
{
	const char *src = "# two threads race an unload against an exec\n"
	                  "config mode=sync nc=2 qdepth=3 threads=2\n"
	                  "fault alloc:kmgr.exec_resources:2\n"
	                  "t0 load slot=1 tmpl=0 start=-1 count=-1\n"
	                  "t1 exec slot=1 in=host out=dev repeat=2\n"
	                  "t0 load slot=2 inline=0a0B start=0 count=1\n"
	                  "t0 fault site=kmgr.dlr_model nth=3\n"
	                  "t0 unload slot=1\n"
	                  "sched 0 1 01 ff\n";
	char err[256];
	size_t n;

	KT_EQ(kprog_parse(src, &p1, err, sizeof(err)), 0);
	KT_EQ(p1.nc, 2);
	KT_EQ(p1.nthreads, 2);
	KT_EQ(p1.qdepth, 3);
	KT_EQ(p1.plan.n, 1);
	KT_EQ(p1.plan.e[0].kind, KFAULT_FAIL_ALLOC);
	KT_EQ(p1.plan.e[0].site, KFAULT_KMGR_EXEC_RESOURCES);
	KT_EQ(p1.plan.e[0].nth, 2);
	KT_EQ(p1.nops, 5);
	KT_EQ(p1.ops[1].kind, KOP_EXEC);
	KT_EQ(p1.ops[1].thread, 1);
	KT_EQ(p1.ops[1].a[1], KPROG_PLACE_HOST);
	KT_EQ(p1.ops[1].a[3], 2);
	KT_EQ(p1.ops[2].a[1], KPROG_TMPL_INLINE);
	KT_EQ(p1.ops[2].blob_len, 2);
	KT_EQ(p1.blob[p1.ops[2].blob_off + 1], 0x0b);
	KT_EQ(p1.ops[0].a[2], -1);
	KT_EQ(p1.nsched, 4);
	KT_EQ(p1.sched[3], 0xff);
	n = kprog_encode(&p1, buf, sizeof(buf));
	kprog_decode(buf, n, &p2);
	KT_ASSERT(kprog_equal(&p1, &p2));
}

/* roundtrip-1.4: the parser rejects what it does not understand, naming
 * the line, and never accepts a value out of range. */
static void case_strict(void)
{
	static const char *const bad[] = {
	    "t0 frobnicate slot=0\n",
	    "t0 exec slot=9\n",
	    "config threads=2\nt2 unload slot=0\n",
	    "t0 exec slot=0 in=gpu\n",
	    "t0 exec slot=0 bogus=1\n",
	    "config nc=3\n",
	    "fault hang:1\n",
	    "sched 100\n",
	    "t0 load slot=0 inline=abc\n",
	    "t0 fault site=no.such nth=1\n",
	    "hello\n",
	};
	char err[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		if (kprog_parse(bad[i], &p1, err, sizeof(err)) == 0)
			KT_FAIL("accepted: %s", bad[i]);
		KT_ASSERT(strncmp(err, "line ", 5) == 0);
	}
}

static bool has_exec_slot2(const kprog_t *p, void *ctx)
{
	(void)ctx;
	for (unsigned i = 0; i < p->nops; i++)
		if (p->ops[i].kind == KOP_EXEC && p->ops[i].a[0] == 2)
			return true;
	return false;
}

/* roundtrip-1.5: the minimizer shrinks a program to the one op its
 * predicate needs and drops unneeded faults, threads and schedule. */
static void case_minimize(void)
{
	char err[256];
	const char *src = "config threads=3\n"
	                  "fault qfull:1\n"
	                  "t0 load slot=0 tmpl=1\nt1 unload slot=0\nt2 exec slot=1\n"
	                  "t1 ifmap_count slot=3\nt2 exec slot=2 repeat=3\nt0 unload_all\n"
	                  "sched 1 2 3 4 5 6 7 8\n";

	KT_EQ(kprog_parse(src, &p3, err, sizeof(err)), 0);
	KT_GT(kprog_minimize(&p3, has_exec_slot2, NULL), 0);
	KT_EQ(p3.nops, 1);
	KT_EQ(p3.ops[0].a[3], 3);
	KT_EQ(p3.plan.n, 0);
	KT_EQ(p3.nsched, 0);
	KT_EQ(p3.nthreads, 3);
}

/* roundtrip-1.6: a kind added after the first KPROG_KINDS_V1 takes one
 * kind byte of its own (0xfd for NC_INFO, 0xfc down to 0xf6 for the public
 * API's NRT_LOAD .. NRT_INIT); every other byte names the kind
 * it always did, b % KPROG_KINDS_V1, so the inputs of every corpus keep
 * their meaning; encode writes the new kind's byte back. */
static void case_kind_bytes(void)
{
	size_t n;

	for (unsigned b = 0; b < 256; b++) {
		uint8_t op[KPROG_HEADER_BYTES + KPROG_OP_BYTES] = {0, 0, 0, 1, (uint8_t)b};

		kprog_decode(op, sizeof(op), &p1);
		KT_EQ(p1.nops, 1);
		if (b <= 0xfd && b > 0xfd - (KOP__COUNT - KPROG_KINDS_V1))
			KT_EQ(p1.ops[0].kind, KPROG_KINDS_V1 + (0xfd - b));
		else
			KT_EQ(p1.ops[0].kind, b % KPROG_KINDS_V1);
	}
	KT_EQ(kprog_kind_of_byte(0xfd), KOP_NC_INFO);
	KT_EQ(kprog_kind_of_byte(0xf7), KOP_NRT_CLOSE);
	KT_EQ(kprog_kind_of_byte(0xf6), KOP_NRT_INIT);
	KT_EQ(kprog_kind_of_byte(0xf5), KOP_NRT_TRACKER);
	KT_EQ(kprog_kind_of_byte(0xf4), KOP_NRT_CALLBACK);
	KT_EQ(kprog_kind_of_byte(0xf3), 0xf3 % KPROG_KINDS_V1);
	KT_EQ(kprog_kind_lookup("nc_info"), KOP_NC_INFO);
	KT_EQ(kprog_kind_lookup("nrt_close"), KOP_NRT_CLOSE);
	KT_EQ(kprog_parse("t0 nc_info slot=2\n", &p1, text, sizeof(text)), 0);
	n = kprog_encode(&p1, buf, sizeof(buf));
	KT_EQ(n, KPROG_HEADER_BYTES + KPROG_OP_BYTES);
	KT_EQ(buf[KPROG_HEADER_BYTES], 0xfd);
	KT_EQ(buf[KPROG_HEADER_BYTES + 2], 2);
}

/* roundtrip-1.7: the `what` selectors print by name, parse by name or by
 * number to the same value, and a name no list has is refused; every
 * value of each selector field has a name (the lists cover the ranges). */
static void case_selector_names(void)
{
	static const unsigned sel[] = {KOP_STALE, KOP_BADARGS, KOP_NRT_META, KOP_NRT_CALLBACK};

	KT_EQ(kprog_parse("t0 badargs slot=1 what=load_no_bytes\n", &p1, text, sizeof(text)), 0);
	KT_EQ(p1.ops[0].a[1], 6);
	KT_EQ(kprog_parse("t0 badargs slot=1 what=6\n", &p2, text, sizeof(text)), 0);
	KT_EQ(p2.ops[0].a[1], 6);
	kprog_print(&p2, text2, sizeof(text2));
	KT_ASSERT(strstr(text2, "t0 badargs slot=1 what=load_no_bytes\n") != NULL);
	KT_ASSERT(kprog_parse("t0 stale slot=0 what=nosuch\n", &p3, text, sizeof(text)) != 0);
	KT_ASSERT(strstr(text, "or a name") != NULL);
	for (size_t i = 0; i < sizeof(sel) / sizeof(sel[0]); i++)
		for (int v = 0; v <= kprog_kind(sel[i])->f[1].max; v++) {
			KT_ASSERT(kprog_field_name(sel[i], 1, v) != NULL);
			KT_EQ(kprog_field_value(sel[i], 1, kprog_field_name(sel[i], 1, v)), v);
			KT_ASSERT(kprog_field_ident(sel[i], 1, v) != NULL);
		}
	KT_ASSERT(kprog_field_name(KOP_EXEC, 1, 0) == NULL);
	KT_EQ(kprog_field_value(KOP_STALE, 1, "exec_no_input"), -1);
}

/* roundtrip-1.10: the error-tracker op (issue 36) prints, parses and
 * encodes like every kind, on its own kind byte 0xf5, every field kept;
 * a bogus value out of range is refused. */
static void case_nrt_tracker(void)
{
	static const char prog[] = "config mode=sync nc=2 qdepth=4 threads=2\n"
	                           "t0 nrt_load slot=1 model=0 start=-1 count=-1\n"
	                           "t1 nrt_tracker slot=1 in=host out=dev bogus=1\n";

	roundtrip_both_ways(prog, "t1 nrt_tracker slot=1 in=host out=dev bogus=1\n");
	KT_EQ(p1.ops[1].kind, KOP_NRT_TRACKER);
	KT_EQ(p1.ops[1].a[0], 1);
	KT_EQ(p1.ops[1].a[1], KPROG_PLACE_HOST);
	KT_EQ(p1.ops[1].a[2], KPROG_PLACE_DEV);
	KT_EQ(p1.ops[1].a[3], 1);
	KT_EQ(buf[KPROG_HEADER_BYTES + KPROG_OP_BYTES], 0xf5);
	KT_ASSERT(kprog_parse("t0 nrt_tracker slot=0 in=dev out=dev bogus=2\n", &p3, text,
	                      sizeof(text)) != 0);
}

/* roundtrip-1.11: the callback registration (issue 36) on its own kind
 * byte 0xf4: the callback prints by name (a, b, null), parses by name or
 * number, and survives the bytes; its byte is field 1 (a1), as every
 * selector's; a callback past null is refused. */
static void case_nrt_callback(void)
{
	static const char prog[] = "config mode=async nc=2 qdepth=4 threads=2\n"
	                           "t1 nrt_callback cb=null\n"
	                           "t0 nrt_callback cb=1\n";

	roundtrip_both_ways(prog, "t1 nrt_callback cb=null\nt0 nrt_callback cb=b\n");
	KT_EQ(p1.ops[0].kind, KOP_NRT_CALLBACK);
	KT_EQ(p1.ops[0].a[1], 2);
	KT_EQ(p1.ops[1].a[1], 1);
	KT_EQ(buf[KPROG_HEADER_BYTES], 0xf4);
	KT_EQ(buf[KPROG_HEADER_BYTES + 3], 2);
	KT_ASSERT(kprog_parse("t0 nrt_callback cb=3\n", &p3, text, sizeof(text)) != 0);
	KT_ASSERT(kprog_parse("t0 nrt_callback cb=c\n", &p3, text, sizeof(text)) != 0);
}

/* roundtrip-1.12: mixed tensor sets (issue 36): an execution's side may
 * be a mix (mix:dh .. mix:vhd), printed and parsed by name, on the bytes
 * 0xe0..0xe7; every other byte keeps b % 4 (0xeb is still missing, 0xdf
 * still missing, 0xe3 no longer), talloc's place has no mix, and a mix
 * gives tensor j the j-th letter of its pattern, cyclically. */
static void case_mixed_sides(void)
{
	static const char prog[] = "config mode=sync nc=2 qdepth=4 threads=1\n"
	                           "t0 exec slot=1 in=mix:dh out=mix:vhd repeat=2\n"
	                           "t0 nrt_schedule slot=0 in=dev out=mix:hv\n";
	uint8_t op[KPROG_HEADER_BYTES + KPROG_OP_BYTES] = {0, 0, 0,    1,    KOP_EXEC,
	                                                   0, 0, 0xeb, 0xdf, 0};

	roundtrip_both_ways(prog, "t0 exec slot=1 in=mix:dh out=mix:vhd repeat=2\n"
	                          "t0 nrt_schedule slot=0 in=dev out=mix:hv\n");
	KT_EQ(p1.ops[0].a[1], KPROG_PLACE_MIX);
	KT_EQ(p1.ops[0].a[2], KPROG_PLACE_MIX + 7);
	KT_EQ(buf[KPROG_HEADER_BYTES + 3], 0xe0);
	KT_EQ(buf[KPROG_HEADER_BYTES + 4], 0xe7);
	kprog_decode(op, sizeof(op), &p3);
	KT_EQ(p3.ops[0].a[1], KPROG_PLACE_MISSING);
	KT_EQ(p3.ops[0].a[2], KPROG_PLACE_MISSING);
	op[7] = 0xe3;
	kprog_decode(op, sizeof(op), &p3);
	KT_EQ(p3.ops[0].a[1], KPROG_PLACE_MIX + 3);
	KT_ASSERT(kprog_parse("t0 talloc ts=0 place=mix:dh size=1\n", &p3, text, sizeof(text)) !=
	          0);
	KT_EQ(kprog_mix_place(KPROG_PLACE_MIX + 6, 0), KPROG_PLACE_DEV);
	KT_EQ(kprog_mix_place(KPROG_PLACE_MIX + 6, 1), KPROG_PLACE_HOST);
	KT_EQ(kprog_mix_place(KPROG_PLACE_MIX + 6, 2), KPROG_PLACE_VIRT);
	KT_EQ(kprog_mix_place(KPROG_PLACE_MIX + 6, 3), KPROG_PLACE_DEV);
	KT_EQ(kprog_mix_place(KPROG_PLACE_HOST, 5), KPROG_PLACE_HOST);
}

/* roundtrip-1.8: an access point names any release up to 1023, past a
 * long-lived thread's 32nd (an exec thread passes about 18 releases per
 * execution): the text form, the bytes (bits 8-9 of the release in bits
 * 6-7 of the entry's first byte) and back; 1024 is refused.  An entry
 * whose first byte has bits 6-7 clear and a second byte below 32 names
 * what it did before the field grew. */
static void case_access_wide(void)
{
	static const char src[] = "config mode=sync nc=1 qdepth=1 threads=2\n"
	                          "access t1:40+2\n"
	                          "access t2:511+8\n"
	                          "access t0:7+1\n"
	                          "t0 load slot=0 tmpl=0 start=-1 count=-1\n";
	uint8_t old[KPROG_HEADER_BYTES + 2] = {1u << 5, 0, 0, 0, 1 | 2 << 3, 17};
	size_t n = roundtrip_both_ways(src, "access t1:40+2\naccess t2:511+8\n");

	KT_EQ(p1.nap, 3);
	KT_EQ(p1.ap[0].point, 40);
	KT_EQ(p1.ap[1].point, 511);
	KT_EQ(buf[n - 6], 1 | 1 << 3);
	KT_EQ(buf[n - 5], 40);
	KT_EQ(buf[n - 4], 2 | 7 << 3 | 1 << 6);
	KT_EQ(buf[n - 3], 0xff);
	KT_ASSERT(kprog_parse("access t1:512+1\n", &p3, text, sizeof(text)) != 0);
	kprog_decode(old, sizeof(old), &p3);
	KT_EQ(p3.nap, 1);
	KT_EQ(p3.ap[0].thread, 1);
	KT_EQ(p3.ap[0].k, 3);
	KT_EQ(p3.ap[0].point, 17);
}

/* roundtrip-1.9: a point may name every release from R on ("R..", bit 7
 * of its first byte: r's top bit), so that any R before a window late in a
 * long-lived thread reaches it; both forms round-trip, and a malformed
 * range is refused. */
static void case_access_every(void)
{
	static const char src[] = "config mode=sync nc=1 qdepth=1 threads=2\n"
	                          "access t1:300..+2\n"
	                          "access t0:5+1\n"
	                          "t0 load slot=0 tmpl=0 start=-1 count=-1\n";
	uint8_t raw[KPROG_HEADER_BYTES + 2] = {1u << 5, 0, 0, 0, 3 | 0 << 3 | 1 << 7, 9};
	size_t n = roundtrip_both_ways(src, "access t1:300..+2\naccess t0:5+1\n");

	KT_EQ(p1.nap, 2);
	KT_ASSERT(p1.ap[0].every);
	KT_ASSERT(!p1.ap[1].every);
	KT_EQ(p1.ap[0].point, 300);
	KT_EQ(buf[n - 4], 1 | 1 << 3 | 1 << 6 | 1 << 7);
	KT_EQ(buf[n - 3], 300 & 0xff);
	p3.ap[0].every = false;
	KT_ASSERT(!kprog_equal(&p1, &p3));
	KT_ASSERT(kprog_parse("access t1:..+1\n", &p3, text, sizeof(text)) != 0);
	KT_ASSERT(kprog_parse("access t1:3.+1\n", &p3, text, sizeof(text)) != 0);
	kprog_decode(raw, sizeof(raw), &p3);
	KT_EQ(p3.nap, 1);
	KT_EQ(p3.ap[0].thread, 3);
	KT_EQ(p3.ap[0].k, 1);
	KT_EQ(p3.ap[0].point, 9);
	KT_ASSERT(p3.ap[0].every);
}

int main(void)
{
	KT_CASE("roundtrip-1.1 decode is total and encode inverts it", case_decode_total);
	KT_CASE("roundtrip-1.2 text form round-trips", case_text_roundtrip);
	KT_CASE("roundtrip-1.3 hand-written program", case_hand_written);
	KT_CASE("roundtrip-1.4 parser is strict", case_strict);
	KT_CASE("roundtrip-1.5 minimizer", case_minimize);
	KT_CASE("roundtrip-1.6 kind bytes of later kinds", case_kind_bytes);
	KT_CASE("roundtrip-1.7 selectors by name", case_selector_names);
	KT_CASE("roundtrip-1.8 access points past the 32nd release", case_access_wide);
	KT_CASE("roundtrip-1.9 access point from a release on", case_access_every);
	KT_CASE("roundtrip-1.10 nrt_tracker: text, bytes, kind byte 0xf5", case_nrt_tracker);
	KT_CASE("roundtrip-1.11 nrt_callback: names, bytes, kind byte 0xf4", case_nrt_callback);
	KT_CASE("roundtrip-1.12 mixed tensor sets: names, bytes 0xe0..0xe7", case_mixed_sides);
	KT_DONE();
}
