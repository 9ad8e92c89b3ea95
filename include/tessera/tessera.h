/*-------------------------------------------------------------------------
 *
 * tessera.h
 *	  Shared definitions of the tessera columnar table access method:
 *	  GUC variables, limits, and small helpers used by every module.
 *
 * Copyright (c) 2026, tessera developers
 *
 * IDENTIFICATION
 *	  include/tessera/tessera.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef TESSERA_H
#define TESSERA_H

#include "postgres.h"

#include "access/htup_details.h"
#include "access/tableam.h"
#include "storage/itemptr.h"
#include "utils/rel.h"

#define TESSERA_AM_NAME			"tessera"
#define TESSERA_SCHEMA			"tessera"
#define TESSERA_INTERNAL_SCHEMA "tessera_internal"

/* Compression codecs, as stored on disk (never renumber). */
typedef enum TesseraCodec
{
	TESSERA_CODEC_NONE = 0,
	TESSERA_CODEC_PGLZ = 1,
	TESSERA_CODEC_LZ4 = 2,
	TESSERA_CODEC_ZSTD = 3
} TesseraCodec;

#define TESSERA_CODEC_COUNT 4

/*
 * A setting, never stored: lz4 where it halves a payload, zstd where it
 * saves a quarter more than lz4 (TesseraCodecChoose).
 */
#define TESSERA_CODEC_AUTO	TESSERA_CODEC_COUNT

/* the per-backend fetch cache (MB) and background compaction's pace */
#define TESSERA_MAX_FETCH_CACHE_MB		1024
#define TESSERA_MIN_AUTOCOMPACT_STRIPES	16

/* a delta stripe's bytes are a row of tessera_internal.delta: keep them small */
#define TESSERA_DELTA_MAX_BYTES			((Size) 256 * 1024)

/*
 * A row group is also closed once its raw (decoded) values pass this many
 * bytes, and a stripe once its encoded bytes pass the stripe limit, so that
 * no single allocation ever approaches MaxAllocSize for ordinary values.  A
 * single value larger than the row group limit gets a row group of its own.
 */
#define TESSERA_ROW_GROUP_BYTE_LIMIT	((Size) 64 * 1024 * 1024)
#define TESSERA_STRIPE_BYTE_LIMIT		((Size) 256 * 1024 * 1024)

/*
 * Row numbers and item pointers.
 *
 * Every row has a 64-bit row number, unique within the relation's storage
 * and never reused.  It maps 1:1 onto an ItemPointer whose offset stays in
 * 1..MaxHeapTuplesPerPage, so that TIDBitmaps, indexes and ctid work.  Block
 * numbers with the high bit set are reserved (unused: rows of the delta are
 * stripe rows with ordinary row numbers), so stripe rows use blocks < 2^31.
 */
#define TESSERA_TIDS_PER_BLOCK		((uint64) MaxHeapTuplesPerPage)
#define TESSERA_DELTA_BLOCK_FLAG	((BlockNumber) 0x80000000)
#define TESSERA_MAX_ROWNUM			((uint64) TESSERA_DELTA_BLOCK_FLAG * TESSERA_TIDS_PER_BLOCK)

static inline void
TesseraRownumToTid(uint64 rownum, ItemPointer tid)
{
	ItemPointerSet(tid, (BlockNumber) (rownum / TESSERA_TIDS_PER_BLOCK),
				   (OffsetNumber) (rownum % TESSERA_TIDS_PER_BLOCK + 1));
}

/* Returns false for TIDs that can never name a stripe row. */
static inline bool
TesseraTidToRownum(ItemPointer tid, uint64 *rownum)
{
	BlockNumber blk = ItemPointerGetBlockNumberNoCheck(tid);
	OffsetNumber off = ItemPointerGetOffsetNumberNoCheck(tid);

	if (off < 1 || off > TESSERA_TIDS_PER_BLOCK || (blk & TESSERA_DELTA_BLOCK_FLAG))
		return false;
	*rownum = (uint64) blk * TESSERA_TIDS_PER_BLOCK + (off - 1);
	return true;
}

/*
 * Large executor tables (star join dimensions, groups, memos): allocated
 * huge, with transparent huge pages asked for (vector/memory.c).  flags as
 * MemoryContextAllocExtended's (MCXT_ALLOC_HUGE is implied).
 */
extern void *TesseraAllocLarge(MemoryContext cxt, Size size, int flags);
extern void *TesseraReallocLarge(void *p, Size oldsize, Size newsize);

#endif							/* TESSERA_H */
