/*-------------------------------------------------------------------------
 *
 * star_table.h
 *	  A star join dimension's key table, shared by its build
 *	  (star_build.c) and its probes (star.c): key values, and the lookup.
 *
 * IDENTIFICATION
 *	  src/executor/star_table.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef TESSERA_STAR_TABLE_H
#define TESSERA_STAR_TABLE_H

#include "catalog/pg_type.h"
#include "utils/date.h"

#include "nodes.h"

/* A dimension's key and the row holding it. */
typedef struct StarEntry
{
	int64		key;
	int32		row;
	char		status;
} StarEntry;

#define SH_PREFIX starhash
#define SH_ELEMENT_TYPE StarEntry
#define SH_KEY_TYPE int64
#define SH_KEY key
#define SH_HASH_KEY(tb, key) ((uint32) (((uint64) (key) * UINT64CONST(0x9E3779B97F4A7C15)) >> 32))
#define SH_EQUAL(tb, a, b) ((a) == (b))
#define SH_SCOPE static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

/* a direct table when the keys span at most this many slots per row (and 1M) */
#define STAR_DIRECT_SPREAD	4
#define STAR_DIRECT_MIN		(1 << 20)
/* a hashed dimension's bits of its key range, up to 8 MB of them */
#define STAR_BITS_MAX		((uint64) 1 << 26)

/* An integer-like join key's value. */
static inline int64
star_key(Datum d, Oid type)
{
	switch (type)
	{
		case INT2OID:
			return DatumGetInt16(d);
		case INT4OID:
			return DatumGetInt32(d);
		case DATEOID:
			return DatumGetDateADT(d);
		default:
			return DatumGetInt64(d);
	}
}

/*
 * A composite key of two 32-bit halves (int2, int4 or date values) as one
 * 64-bit key: distinct pairs give distinct keys.
 */
static inline int64
star_key2(int64 a, int64 b)
{
	return (int64) (((uint64) (uint32) a << 32) | (uint64) (uint32) b);
}

/* The row of dimension dim holding key, or -1. */
static inline int32
star_lookup(TesseraStarDim *dim, int64 key)
{
	if (dim->present != NULL)
	{
		uint64		slot = (uint64) key - (uint64) dim->min;

		if (key < dim->min || key > dim->max ||
			!(dim->present[slot / 64] & (UINT64CONST(1) << (slot % 64))))
			return -1;
		return dim->direct != NULL ? dim->direct[slot] : 0;
	}
	if (dim->hash != NULL)
	{
		StarEntry  *e;

		if (dim->bits != NULL)
		{
			uint64		slot = (uint64) key - (uint64) dim->min;

			if (key < dim->min || key > dim->max ||
				!(dim->bits[slot / 64] & (UINT64CONST(1) << (slot % 64))))
				return -1;
		}
		e = starhash_lookup(dim->hash, key);

		return e ? e->row : -1;
	}
	return -1;
}

#endif							/* TESSERA_STAR_TABLE_H */
