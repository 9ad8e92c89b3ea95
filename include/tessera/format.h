/*-------------------------------------------------------------------------
 *
 * format.h
 *	  On-disk structures of a tessera relation and their version.
 *
 * A tessera relation's main fork is a sequence of 8 KB pages with standard
 * page headers (so page checksums, LSNs and full-page images work as for
 * any relation):
 *
 *	block 0			metapage: format version, storage id, row number and
 *					stripe id counters
 *	blocks 1..		stripes.  A stripe occupies a run of consecutive blocks
 *					that one backend wrote in one go; its bytes are laid out
 *					as a logical byte stream over the data area of those
 *					pages: all chunks, then the stripe directory.
 *
 * A stripe holds up to stripe_row_limit rows in row groups; a row group
 * holds one chunk per column.  The directory lists row groups (first row
 * number, row count), chunks (offset, sizes, codec, encoding, checksum,
 * value count, min/max) and the command ids under which the stripe's rows
 * were inserted.  A stripe VACUUM rewrote also lists, per row group, the
 * rows that were deleted for everyone when it was rewritten ("folded"):
 * their values are gone (NULL) and their row states may be cleared.  Which stripes exist, and whether a transaction can see
 * them, is recorded in the catalog table tessera_internal.stripe (MVCC).
 *
 * Everything here is little-endian as written by the machine; the format is
 * not portable across architectures of different endianness, like the rest
 * of a PostgreSQL data directory.
 *
 * Changing any struct below requires a new TESSERA_FORMAT_VERSION and an
 * explicit upgrade path: readers refuse versions they do not know.
 *
 * IDENTIFICATION
 *	  include/tessera/format.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef TESSERA_FORMAT_H
#define TESSERA_FORMAT_H

#include "port/pg_crc32c.h"
#include "storage/bufpage.h"

#define TESSERA_FORMAT_VERSION	1

/*
 * A stripe directory with folded dead rows (TESSERA_DIR_DEAD_ROWS) says
 * version 2; one without says 1 and is laid out exactly as version 1 was.
 */
#define TESSERA_DIR_VERSION_DEAD	2

/*
 * Version 3: chunk and dead row list checksums are XXH3 (its low 32 bits),
 * not CRC-32C; any flags.  Every directory written since says 3.  The
 * directory's own checksum stays CRC-32C in every version.
 */
#define TESSERA_DIR_VERSION_XXH3	3

/*
 * Version 4: chunks may be framed (TESSERA_CHUNK_FRAMED).  Every directory
 * written since says 4; versions 1-3 have no framed chunks.
 */
#define TESSERA_DIR_VERSION_FRAMES	4

/*
 * Version 5: the directory is a head (header, row groups, cid runs, dead
 * row lists, a column table) and one section per column (its chunk
 * entries, then its min/max values), each section checksummed on its own,
 * so that a scan reads the sections of the columns it reads: a directory
 * of 105 columns was 95 KB a stripe, read and checksummed whole by every
 * new backend to count rows.  Every directory written since says 5.
 */
#define TESSERA_DIR_VERSION_COLUMNS	5

/* the newest directory version this build writes and reads */
#define TESSERA_DIR_VERSION_NEWEST	TESSERA_DIR_VERSION_COLUMNS

#define TESSERA_META_MAGIC		0x54535241	/* "TSRA" */
/*
 * tessera's WAL resource manager id, in PostgreSQL's custom range
 * (128-255).  128 is RM_EXPERIMENTAL_ID, which any extension under
 * development may take; the ids registered on PostgreSQL's wiki page
 * "CustomWALResourceManagers" were 129-140 and 241 when this one was
 * chosen (November 2026).  WAL written under one id cannot be replayed
 * under another: never change it.
 */
#define TESSERA_RMGR_ID			196
#define TESSERA_RMGR_NAME		"tessera"

#define TESSERA_PAGE_MAGIC		0x54535250	/* "TSRP" */
#define TESSERA_DIR_MAGIC		0x54535244	/* "TSRD" */

#define TESSERA_METAPAGE_BLKNO	0

/* metapage flags */
#define TESSERA_META_INIT_FORK	0x0001	/* written to an unlogged table's init
										 * fork: after a crash reset the table
										 * is empty and needs a new storage id */

typedef struct TesseraMetaPageData
{
	uint32		magic;
	uint32		format_version;
	uint64		storage_id;		/* key of this storage in the catalog */
	uint64		next_rownum;	/* first row number not yet reserved */
	uint64		next_stripe_id; /* first stripe id not yet reserved */
	uint32		flags;
	BlockNumber state_root;		/* root of the row state map, or 0 */
} TesseraMetaPageData;

/* Special space at the end of every page but the metapage. */
typedef struct TesseraPageOpaqueData
{
	uint32		magic;
	uint16		kind;			/* TESSERA_PAGE_* */
	uint16		level;			/* map pages: 2 (root), 1, 0 */
} TesseraPageOpaqueData;

#define TESSERA_PAGE_STRIPE		0
#define TESSERA_PAGE_MAP		1
#define TESSERA_PAGE_STATE		2

/*
 * Row state pages.
 *
 * A row that has been deleted, updated or locked has a state entry, much
 * like the xmax half of a heap tuple header.  Entries live in state pages
 * of TESSERA_STATE_ROWS consecutive row numbers each, created on the first
 * change of any row they cover; a three-level map (root in the metapage,
 * TESSERA_MAP_FANOUT block numbers per map page) finds them.  Rows never
 * changed cost nothing.
 */
#define TESSERA_STATE_ROWS		500
#define TESSERA_MAP_FANOUT		2000

typedef struct TesseraRowState
{
	TransactionId xmax;			/* deleter, updater or locker; or a MultiXactId */
	CommandId	cmax;			/* command of our own transaction that set it */
	uint16		infomask;		/* TESSERA_RS_* */
	uint16		new_hi;			/* row number of the new version (updates) */
	uint32		new_lo;
} TesseraRowState;

#define TESSERA_RS_XMAX_COMMITTED	0x0001	/* hint: xmax committed */
#define TESSERA_RS_XMAX_INVALID		0x0002	/* hint: xmax aborted or gone */
#define TESSERA_RS_IS_MULTI			0x0004	/* xmax is a MultiXactId */
#define TESSERA_RS_LOCK_ONLY		0x0008	/* xmax only locks the row */
#define TESSERA_RS_UPDATED			0x0010	/* updated: new_hi/new_lo valid */
#define TESSERA_RS_KEYS_UPDATED		0x0020	/* delete or key-changing update */
#define TESSERA_RS_FROZEN_DELETED	0x0040	/* deleted before every snapshot */
#define TESSERA_RS_INDEXES_CLEAN	0x0080	/* VACUUM removed its index entries */
#define TESSERA_RS_LOCK_MASK		0x0300	/* single locker's LockTupleMode */
#define TESSERA_RS_LOCK_SHIFT		8

#define TESSERA_PAGE_DATA_START	SizeOfPageHeaderData
#define TESSERA_PAGE_DATA_SIZE \
	(BLCKSZ - SizeOfPageHeaderData - MAXALIGN(sizeof(TesseraPageOpaqueData)))

/* Row group flags */
#define TESSERA_RG_DENSE		0x0001	/* row numbers are first..first+count-1 */

typedef struct TesseraRowGroupDisk
{
	uint64		first_rownum;
	uint32		row_count;
	uint32		flags;
} TesseraRowGroupDisk;

/* Chunk encodings (never renumber) */
typedef enum TesseraEncoding
{
	TESSERA_ENC_ABSENT = 0,		/* every value is NULL; no bytes */
	TESSERA_ENC_PLAIN = 1,		/* values as PostgreSQL lays them out */
	TESSERA_ENC_INT = 2,		/* integers: FOR / delta / RLE, bit-packed */
	TESSERA_ENC_DICT = 3,		/* dictionary of PLAIN values + INT codes */
	TESSERA_ENC_DECIMAL = 4,	/* numeric as scaled 64/128-bit integers */
	TESSERA_ENC_PACKED = 5		/* strings of at most 16 distinct bytes, 4 bits each */
} TesseraEncoding;

#define TESSERA_ENC_COUNT 6

/* Chunk flags */
#define TESSERA_CHUNK_HAS_STATS		0x01	/* min/max are present */
#define TESSERA_CHUNK_FRAMED		0x02	/* stored as a frame table and frames */
#define TESSERA_CHUNK_FLAGS			0x03

typedef struct TesseraChunkDisk
{
	uint64		offset;			/* from the start of the stripe */
	uint32		stored_bytes;	/* on disk, after the codec */
	uint32		raw_bytes;		/* after decompression */
	uint32		crc;			/* CRC-32C of the stored bytes */
	uint32		value_count;	/* non-NULL values */
	uint8		encoding;		/* TesseraEncoding */
	uint8		codec;			/* TesseraCodec actually applied */
	uint8		flags;
	uint8		reserved;
	uint32		min_off;		/* into the stats area */
	uint32		min_len;
	uint32		max_off;
	uint32		max_len;
	uint32		logical_bytes;	/* the values' own sizes, before any encoding */
} TesseraChunkDisk;

/*
 * A framed chunk's stored bytes: a frame table, then the frames.  The raw
 * payload is cut into frames of frame_bytes (the last one shorter), each
 * compressed on its own with the chunk's codec -- or stored as it is when
 * that saves nothing (its stored size is then its raw size) -- and
 * checksummed on its own, so that one value is read by reading, checking
 * and decompressing the frames that hold its bytes, not the whole chunk.
 * The table is
 *
 *		TesseraFrameHeader
 *		uint32 ends[nframes]		end of each frame's stored bytes, from
 *									the first frame's start
 *		uint32 sums[nframes]		checksum of each frame's stored bytes
 *		uint32 index[index_count]	offset of value i * index_every in the
 *									plain stream starting at raw offset
 *									index_base (variable-length values are
 *									then found without reading the others)
 *
 * padded to MAXALIGN; the frames follow.  The chunk's checksum (crc) is
 * that of the table.
 */
typedef struct TesseraFrameHeader
{
	uint32		nframes;
	uint32		frame_bytes;	/* raw bytes per frame */
	uint32		index_every;	/* 0: no index */
	uint32		index_count;
	uint32		index_base;		/* raw offset of the indexed plain stream */
	uint32		flags;			/* none yet: 0 */
} TesseraFrameHeader;

static inline Size
TesseraFrameTableSize(uint32 nframes, uint32 index_count)
{
	return MAXALIGN(sizeof(TesseraFrameHeader) +
					sizeof(uint32) * (2 * (Size) nframes + index_count));
}

/* Rows [first_row, next run's first_row) were inserted by command cid. */
typedef struct TesseraCidRun
{
	uint32		cid;
	uint32		first_row;		/* index of the row within the stripe */
} TesseraCidRun;

/*
 * Stripe directory, versions 1-4: header, row groups, chunks (row group
 * major, then attribute), cid runs, with TESSERA_DIR_DEAD_ROWS one dead row
 * list per row group, stats area.  The CRC covers the whole directory with
 * the crc field zeroed.
 *
 * Version 5: the head -- header, row groups, cid runs, dead row lists (with
 * TESSERA_DIR_DEAD_ROWS), one TesseraDirColumn per attribute -- padded to
 * MAXALIGN, then per attribute in order its section: the row groups' chunk
 * entries, then the min/max values they point to (min_off/max_off from the
 * section's values), padded to MAXALIGN.  The CRC covers the head with the
 * crc field zeroed; a section's check is TesseraChunkChecksum of its bytes
 * without the padding.  stats_bytes is the sum of the sections' values.
 *
 * A dead row list is a TesseraChunkDisk whose payload is the sorted indexes
 * (within the row group) of folded rows, as TesseraEncodeInts writes them,
 * then the codec; value_count is their number (0: no bytes).
 */
typedef struct TesseraDirHeader
{
	uint32		magic;
	uint32		format_version;
	uint64		stripe_id;
	uint64		first_rownum;
	uint64		row_count;
	uint32		natts;
	uint32		n_row_groups;
	uint32		n_cid_runs;
	uint32		stats_bytes;
	uint32		crc;
	uint32		flags;			/* TESSERA_DIR_*; 0 in version 1 */
} TesseraDirHeader;

#define TESSERA_DIR_DEAD_ROWS	0x0001	/* dead row lists follow the cid runs */

/* Version 5: where a column's section is, and its check. */
typedef struct TesseraDirColumn
{
	uint32		offset;			/* from the directory's start */
	uint32		stats_bytes;	/* the section's min/max values */
	uint32		check;			/* of its chunk entries and values */
	uint32		reserved;
} TesseraDirColumn;

/* Version 5: the head's size, padding included. */
static inline Size
TesseraDirHeadSize(uint32 natts, uint32 n_row_groups, uint32 n_cid_runs, uint32 flags)
{
	return MAXALIGN(sizeof(TesseraDirHeader) +
					(Size) n_row_groups * sizeof(TesseraRowGroupDisk) +
					(Size) n_cid_runs * sizeof(TesseraCidRun) +
					((flags & TESSERA_DIR_DEAD_ROWS) ? (Size) n_row_groups * sizeof(TesseraChunkDisk) : 0) +
					(Size) natts * sizeof(TesseraDirColumn));
}

/* Version 5: a column section's bytes, its padding not counted. */
static inline Size
TesseraDirSectionBytes(uint32 n_row_groups, uint32 stats_bytes)
{
	return (Size) n_row_groups * sizeof(TesseraChunkDisk) + stats_bytes;
}

/* Versions 1-4: the directory's size. */
static inline Size
TesseraDirSize(uint32 natts, uint32 n_row_groups, uint32 n_cid_runs, uint32 stats_bytes,
			   uint32 flags)
{
	return sizeof(TesseraDirHeader) +
		(Size) n_row_groups * sizeof(TesseraRowGroupDisk) +
		(Size) n_row_groups * natts * sizeof(TesseraChunkDisk) +
		(Size) n_cid_runs * sizeof(TesseraCidRun) +
		((flags & TESSERA_DIR_DEAD_ROWS) ? (Size) n_row_groups * sizeof(TesseraChunkDisk) : 0) +
		stats_bytes;
}

/* XXH3 (encoding/checksum.c) */
extern uint64 TesseraXXH3(const void *data, size_t len);
extern const bool TesseraXXH3HaveAVX2;
extern uint64 TesseraXXH3AVX2(const void *data, size_t len);

/*
 * The checksum of a chunk's (or dead row list's) stored bytes, as a
 * directory of this version records it.  XXH3 runs at memory speed; the
 * CRC-32C of older directories was a sixth of a filtered scan's time.
 */
static inline uint32
TesseraChunkChecksum(uint32 dir_version, const char *data, Size len)
{
	pg_crc32c	crc;

	if (dir_version >= TESSERA_DIR_VERSION_XXH3)
		return (uint32) TesseraXXH3(data, len);
	INIT_CRC32C(crc);
	COMP_CRC32C(crc, data, len);
	FIN_CRC32C(crc);
	return crc;
}

#endif							/* TESSERA_FORMAT_H */
