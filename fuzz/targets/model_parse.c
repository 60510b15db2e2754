/*
 * model_parse.c - fuzz target for the model container parser (lib/model).
 *
 * Each input is parsed twice: as it is (the checksum must catch any change)
 * and with its trailing CRC-32 recomputed, so mutations reach the field
 * checks behind the checksum instead of dying at it.  Oracles, besides the
 * sanitizers: an accepted container re-serializes to exactly its bytes (the
 * format is canonical), and every parse, failed or not, leaves the live
 * kalloc count where it was.  Seeds: corpus/model_parse/, dictionary
 * corpus/model_parse.dict.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/kalloc.h"
#include "base/klog.h"
#include "model/kmodel.h"
#include "model/kmodel_int.h"

static void model_parse_quiet(void *ctx, klog_level_t level, const char *line)
{
	(void)ctx;
	(void)level;
	(void)line;
}

static void model_parse_one(const uint8_t *data, size_t size)
{
	int64_t live = kalloc_live_count();
	kmodel_t *m = NULL;
	uint8_t *out = NULL;
	size_t len = 0;

	if (kmodel_parse(data, size, &m) == NRT_SUCCESS) {
		if (kmodel_serialize(m, &out, &len) != NRT_SUCCESS || len != size ||
		    memcmp(out, data, size) != 0)
			abort(); /* accepted bytes that are not the canonical form */
		kfree(out);
		kmodel_free(m);
	} else if (m) {
		abort(); /* a failed parse handed out a model */
	}
	if (kalloc_live_count() != live)
		abort(); /* leaked (or double-freed) on some path */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *fixed;
	uint32_t crc;

	/* Rejections log at warn: at error level they cost no formatting. */
	klog_set_level(KLOG_ERROR);
	klog_set_sink(model_parse_quiet, NULL);
	model_parse_one(data, size);
	if (size < 4)
		return 0;
	/* An exact-size copy, so a read one past the end is still caught. */
	fixed = malloc(size);
	if (!fixed)
		return 0;
	memcpy(fixed, data, size);
	crc = kmodel__crc32(fixed, size - 4);
	for (int i = 0; i < 4; i++)
		fixed[size - 4 + (size_t)i] = (uint8_t)(crc >> (8 * i));
	model_parse_one(fixed, size);
	free(fixed);
	return 0;
}
