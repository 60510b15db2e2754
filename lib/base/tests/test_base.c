/*
 * test_base.c - the focus of this file is lib/base: accounted allocation,
 * fault plans (text form both ways, n-th hit semantics) and the log sink.
 */
#include <stdint.h>
#include <string.h>

#include "base/kalloc.h"
#include "base/kfault.h"
#include "base/klog.h"
#include "base/knum.h"
#include "ktest.h"
#include "ktest_log.h"

/* base-1.1: kalloc counts live bytes and blocks exactly and kfree returns
 * them; the memory is zeroed. */
static void kalloc_accounting(void)
{
	int64_t b0 = kalloc_live_bytes(), c0 = kalloc_live_count();
	uint8_t *p = kalloc(KFAULT_MODEL_PARSE, 100);
	char *s;

	KT_ASSERT(p != NULL);
	for (int i = 0; i < 100; i++)
		KT_EQ(p[i], 0);
	KT_EQ(kalloc_live_bytes(), b0 + 100);
	KT_EQ(kalloc_live_count(), c0 + 1);
	p = krealloc(KFAULT_MODEL_PARSE, p, 300);
	KT_ASSERT(p != NULL);
	KT_EQ(p[299], 0);
	KT_EQ(kalloc_live_bytes(), b0 + 300);
	s = kstrdup(KFAULT_MODEL_PARSE, "abc");
	KT_STREQ(s, "abc");
	kfree(s);
	kfree(p);
	KT_EQ(kalloc_live_bytes(), b0);
	KT_EQ(kalloc_live_count(), c0);
}

/* base-1.2: an overflowing array size gives NULL, not a short block. */
static void kalloc_overflow(void)
{
	KT_ASSERT(kalloc_array(KFAULT_MODEL_PARSE, SIZE_MAX / 2, 4) == NULL);
	KT_ASSERT(kalloc(KFAULT_MODEL_PARSE, SIZE_MAX - 4) == NULL);
}

/* base-2.1: alloc:SITE:N fails exactly the N-th allocation at that site and
 * no other; "any" counts every site. */
static void fault_nth_alloc(void)
{
	kfault_plan_t plan;
	char err[128];
	void *p[4];

	KT_EQ(kfault_plan_parse("alloc:model.parse:3", &plan, err, sizeof(err)), 0);
	kfault_set_plan(&plan);
	KT_ASSERT((p[0] = kalloc(KFAULT_MODEL_TENSORS, 8)) != NULL); /* other site: not counted */
	KT_ASSERT((p[1] = kalloc(KFAULT_MODEL_PARSE, 8)) != NULL);
	KT_ASSERT((p[2] = kalloc(KFAULT_MODEL_PARSE, 8)) != NULL);
	KT_ASSERT(kalloc(KFAULT_MODEL_PARSE, 8) == NULL);
	KT_ASSERT((p[3] = kalloc(KFAULT_MODEL_PARSE, 8)) != NULL);
	KT_EQ(kfault_fired(), 1);
	for (int i = 0; i < 4; i++)
		kfree(p[i]);

	KT_EQ(kfault_plan_parse("alloc:any:2", &plan, err, sizeof(err)), 0);
	kfault_set_plan(&plan);
	KT_ASSERT((p[0] = kalloc(KFAULT_NRT_MODEL, 8)) != NULL);
	KT_ASSERT(kalloc(KFAULT_EMU_HOST_SET, 8) == NULL);
	kfree(p[0]);
	kfault_clear();
	KT_ASSERT((p[0] = kalloc(KFAULT_EMU_HOST_SET, 8)) != NULL);
	kfree(p[0]);
}

/* base-2.2: the execution-side kinds fire on their n-th call with their
 * argument, once. */
static void fault_exec_kinds(void)
{
	kfault_plan_t plan;
	char err[128];

	KT_EQ(kfault_plan_parse("status:1004:2,delay:7:1,qfull:2,hang:3", &plan, err, sizeof(err)),
	      0);
	KT_EQ(plan.n, 4);
	kfault_set_plan(&plan);
	KT_EQ(kfault_exec_status(), 0);
	KT_EQ(kfault_exec_status(), 1004);
	KT_EQ(kfault_exec_status(), 0);
	KT_EQ(kfault_exec_delay(), 7);
	KT_EQ(kfault_exec_delay(), 0);
	KT_ASSERT(!kfault_queue_full());
	KT_ASSERT(kfault_queue_full());
	KT_ASSERT(!kfault_exec_hangs());
	KT_ASSERT(!kfault_exec_hangs());
	KT_ASSERT(kfault_exec_hangs());
	kfault_clear();
}

/* base-2.3: the text form round-trips, and malformed plans are refused with
 * a message (never accepted partially). */
static void fault_text_form(void)
{
	static const char *bad[] = {"alloc:nosuch:1", "alloc:any:0", "status:7:1", "qfull",
	                            "qfull:x",        "delay:1",     "hang:1:2:3", "bogus:1"};
	kfault_plan_t plan, again;
	char err[128], buf[256];
	const char *text = "alloc:emu.dev_tensor:3,status:1202:1,delay:5:2,qfull:4,hang:9";

	KT_EQ(kfault_plan_parse(text, &plan, err, sizeof(err)), 0);
	kfault_plan_format(&plan, buf, sizeof(buf));
	KT_STREQ(buf, text);
	KT_EQ(kfault_plan_parse("alloc:100:3", &again, err, sizeof(err)), 0);
	KT_EQ(again.e[0].site, KFAULT_EMU_DEV_TENSOR);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		KT_EQ(kfault_plan_parse(bad[i], &plan, err, sizeof(err)), -1);
		KT_ASSERT(err[0] != 0);
	}
}

/* base-2.4: every site in the table has a unique number and name, and
 * looks up by both. */
/* base-2.5: the plan parser is strict: a plan means exactly what is
 * written or is refused, and the refusal names the entry. */
static void fault_plan_strict(void)
{
	static const char *const bad[] = {
	    "alloc:any:+1",   "alloc:any: 1",   "alloc:any:-1",     "qfull:1:",
	    "qfull::1",       "status:1003:1,", ",hang:1",          "alloc:any:1,,qfull:2",
	    "delay:100001:1", "alloc:any:0x10", "hang:99999999999", "",
	};
	kfault_plan_t plan;
	char err[200];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		if (kfault_plan_parse(bad[i], &plan, err, sizeof(err)) == 0)
			KT_FAIL("plan '%s' accepted as %u entries", bad[i], plan.n);
		KT_ASSERT(err[0] != 0);
	}
	KT_NE(kfault_plan_parse("alloc:any:+1", &plan, err, sizeof(err)), 0);
	KT_ASSERT(strstr(err, "'alloc:any:+1'") != NULL);
	KT_EQ(kfault_plan_parse("delay:100000:1,qfull:3", &plan, err, sizeof(err)), 0);
	KT_EQ(plan.n, 2u);
}

static void fault_site_table(void)
{
	size_t n;
	const kfault_site_info_t *t = kfault_sites(&n);

	KT_GT(n, 20);
	for (size_t i = 0; i < n; i++) {
		KT_EQ(kfault_site_lookup(t[i].name), t[i].site);
		for (size_t j = i + 1; j < n; j++) {
			KT_NE(t[i].site, t[j].site);
			KT_ASSERT(strcmp(t[i].name, t[j].name) != 0);
		}
	}
}

/* base-3.1: the level filters and a sink captures exactly what passes. */
static void log_sink(void)
{
	kt_log_capture(KLOG_WARN);
	klog_debug("hidden %d", 1);
	klog_warn("Failed to find model: %u", 7u);
	klog_set_level(KLOG_DEBUG);
	klog_debug("Unloading %u", 7u);
	klog_set_sink(NULL, NULL);
	KT_STREQ(kt_log_text(), "Failed to find model: 7\nUnloading 7\n");
	KT_STREQ(kt_log_levels(), "13");
}

/* base-3.2: a filter sees the level and the format string before the line
 * is formatted, and only what it accepts reaches the sink; removing it
 * restores every line at the level. */
static int filter_calls;
static bool only_freed(klog_level_t level, const char *fmt)
{
	filter_calls++;
	return level == KLOG_ERROR && strstr(fmt, "freed") != NULL;
}

static void log_filter(void)
{
	kt_log_capture(KLOG_WARN);
	klog_set_filter(only_freed);
	klog_error("model %u not found", 3u);
	klog_error("tensor %s freed twice", "x");
	klog_warn("freed %d", 1);
	klog_debug("freed below the level %d", 2);
	klog_set_filter(NULL);
	klog_error("model %u not found", 4u);
	klog_set_sink(NULL, NULL);
	KT_EQ(filter_calls, 3); /* the debug line is dropped by the level first */
	KT_STREQ(kt_log_text(), "tensor x freed twice\nmodel 4 not found\n");
	KT_STREQ(kt_log_levels(), "00");
}

/* base-4.1: the one number rule of every variable and flag: decimal
 * digits only (leading zeros are decimal), within the bound; no sign, no
 * space, no prefix, nothing empty; no overflow past UINT64_MAX. */
static void number_rule(void)
{
	static const char *const bad[] = {"", " 4", "+4", "-1", "4 ", "0x10", "4x", "1e3", "\t4"};
	const char *range = "12-3";
	uint64_t v = 7;
	uint32_t u;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		KT_EQ(knum_parse(bad[i], UINT64_MAX, &v), -1);
		KT_EQ(v, 7);
	}
	KT_EQ(knum_parse(NULL, 10, &v), -1);
	KT_EQ(knum_parse("010", 10, &v), 0);
	KT_EQ(v, 10);
	KT_EQ(knum_parse("11", 10, &v), -1);
	KT_EQ(knum_parse("18446744073709551615", UINT64_MAX, &v), 0);
	KT_ASSERT(v == UINT64_MAX);
	KT_EQ(knum_parse("18446744073709551616", UINT64_MAX, &v), -1);
	KT_EQ(knum_parse("5", 0, &v), -1);
	KT_EQ(knum_parse_range(range, NULL, 99, &v), -1);
	KT_EQ(knum_parse_range(range, range + 2, 99, &v), 0);
	KT_EQ(v, 12);
	KT_EQ(knum_parse_u32("0", 1, 8, &u), -1);
	KT_EQ(knum_parse_u32("8", 1, 8, &u), 0);
	KT_EQ(u, 8);
}

int main(void)
{
	KT_CASE("base-1.1 kalloc accounting", kalloc_accounting);
	KT_CASE("base-1.2 kalloc overflow", kalloc_overflow);
	KT_CASE("base-2.1 fault nth alloc", fault_nth_alloc);
	KT_CASE("base-2.2 fault exec kinds", fault_exec_kinds);
	KT_CASE("base-2.3 fault text form", fault_text_form);
	KT_CASE("base-2.4 fault site table", fault_site_table);
	KT_CASE("base-2.5 fault plan strict", fault_plan_strict);
	KT_CASE("base-3.1 log sink", log_sink);
	KT_CASE("base-3.2 log filter", log_filter);
	KT_CASE("base-4.1 the one number rule", number_rule);
	KT_DONE();
}
