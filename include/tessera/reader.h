/*-------------------------------------------------------------------------
 *
 * reader.h
 *	  Reading stripes: the list of stripes a snapshot sees, their
 *	  directories, and row groups decoded column by column on demand.
 *
 * IDENTIFICATION
 *	  include/tessera/reader.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef TESSERA_READER_H
#define TESSERA_READER_H

#include "executor/tuptable.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"
#include "utils/snapshot.h"

#include "tessera/catalog.h"
#include "tessera/encoding.h"
#include "tessera/format.h"

/*
 * A stripe's directory in memory.  Column a's chunk of row group g is
 * col_chunks[a][g * chunk_stride] (TesseraDirChunk), its min/max values
 * at col_stats[a]; in a version 5 directory read by TesseraLoadDirHead a
 * column's entries are read on first use (TesseraDirNeedColumn), NULL
 * until then, into cxt.
 */
typedef struct TesseraStripeDir
{
	TesseraDirHeader hdr;
	TesseraRowGroupDisk *rgs;
	TesseraCidRun *cids;
	TesseraChunkDisk *dead;		/* n_row_groups dead row lists, or NULL */
	TesseraChunkDisk **col_chunks;	/* [natts] */
	char	  **col_stats;		/* [natts] */
	uint32		chunk_stride;	/* natts (row group major) or 1 */
	const TesseraDirColumn *cols;	/* version 5's column table, else NULL */
	char	   *bytes;			/* what was read: the head or the whole */
	bool		whole;			/* every column's entries are in bytes */
	MemoryContext cxt;			/* where columns read later go */
	Buffer	   *recent;			/* per block of the stripe: the buffer scans found
								 * it in last (TesseraCopyStripeBytes), or NULL */
	BlockNumber nrecent;		/* its length: the stripe's blocks */
} TesseraStripeDir;

/* Column att's chunk of row group rg (its entries read). */
static inline TesseraChunkDisk *
TesseraDirChunk(const TesseraStripeDir *dir, int rg, int att)
{
	Assert(dir->col_chunks[att] != NULL);
	return &dir->col_chunks[att][(Size) rg * dir->chunk_stride];
}

typedef struct TesseraScanStripe
{
	TesseraStripe meta;
	uint64		visible_rows;	/* a prefix of the stripe's rows */
	TesseraStripeDir *dir;		/* loaded on first use */
	uint32		rg_base;		/* global index of the first row group */
	uint64		row_base;		/* visible rows in earlier stripes */
} TesseraScanStripe;

struct TesseraReader;

/* One row group, its columns decoded on first use. */
typedef struct TesseraBatch
{
	struct TesseraReader *reader;
	int			stripe;			/* -1: none loaded */
	int			rg;
	uint64		first_rownum;
	int			nrows;			/* visible rows */
	int			chunk_rows;		/* rows stored in the chunks */
	TransactionId xmin;
	bool	   *deleted;		/* [chunk_rows]: deleted for the snapshot; NULL if none */
	TesseraRowState *states;	/* [chunk_rows] with keep_states; NULL if none */
	Datum	  **values;			/* [natts]; NULL until decoded */
	bool	  **isnull;
	const char **raw;			/* [natts] decompressed payloads (sparse reads) */
	TesseraValueIndex **raw_index;	/* [natts] their value indexes */
	struct BatchView **views;	/* [natts] framed chunks read frame by frame
								 * (sparse reads), or NULL */
	bool		sparse;			/* few rows will be read: decode values singly */
	struct TesseraScaledColumn *scaled;	/* [natts] numerics as scaled
										 * integers (TesseraBatchScaled) */
	struct TesseraColumnAccess *access; /* [natts] how rows read each column */

	/*
	 * Dirty snapshots: what heap reports per tuple in snapshot->xmin/xmax,
	 * the stripe's running inserter and, per row, its running deleter
	 * (NULL if none); a scan sets them for each row it returns.
	 */
	TransactionId dirty_xmin;
	TransactionId *dirty_xmax;	/* [chunk_rows] */
} TesseraBatch;

typedef struct TesseraReader
{
	Relation	rel;
	Snapshot	snapshot;
	TupleDesc	tupdesc;
	int			natts;
	TesseraColumnType *types;
	bool	   *type_ready;
	uint64		storage_id;
	TesseraScanStripe *stripes;
	int			nstripes;
	uint32		total_rgs;
	uint64		total_rows;		/* visible */
	uint64		rownum_end;		/* one past the highest row number */
	BlockNumber rel_nblocks;
	BufferAccessStrategy strategy;
	bool		bulk_later;		/* a ring once it has read a quarter of shared_buffers */
	bool		check_deleted;	/* compute batch->deleted when loading */
	bool		keep_states;	/* SnapshotAny: keep row states in batch->states */
	bool		patient;		/* index fetches: read values singly until they
								 * have cost about what a column's decoding
								 * would (read_singly) */
	const bool *needed;			/* [natts] columns a slot may decode; NULL: all */
	uint64		bytes_read;		/* chunk and directory bytes read from pages */
	uint64		bytes_decompressed; /* payload bytes produced by a codec */
	uint64		delta_rows;		/* rows of delta stripes loaded */
	uint64		frames_cached;	/* compressed frames the shared cache gave */
	TesseraScanStripe *delta_loaded;	/* the one delta stripe whose bytes are in memory */
	Relation	catalog;		/* tessera_internal.delta, open once a delta stripe is read */
	MemoryContext cxt;			/* lifetime of the reader */
	MemoryContext batch_cxt;	/* reset for every row group */
	TesseraBatch batch;

	/*
	 * An external reader's batches come from elsewhere (a Parquet file):
	 * no stripes; columns are made on demand by fill, as Datums or (scaled
	 * true) as scaled integers through TesseraBatchSetScaled.
	 */
	bool		external;
	void		(*fill) (void *arg, TesseraBatch *b, int attidx, bool scaled);
	/* a dictionary column's codes and entries (TesseraBatchDict), or false */
	bool		(*dict) (void *arg, TesseraBatch *b, int attidx, int64 **codes, Datum **entries,
						 int *ndict);
	void	   *fill_arg;
} TesseraReader;

extern TesseraReader *TesseraReaderBegin(Relation rel, Snapshot snapshot, bool bulk);
extern TesseraReader *TesseraReaderExternal(Relation rel,
											void (*fill) (void *arg, TesseraBatch *b,
														  int attidx, bool scaled),
											bool (*dict) (void *arg, TesseraBatch *b,
														  int attidx, int64 **codes,
														  Datum **entries, int *ndict),
											void *arg, MemoryContext parent);
extern void TesseraReaderExternalBatch(TesseraReader *reader, int nrows);
#ifdef HAVE_INT128
extern void TesseraBatchSetScaled(TesseraBatch *b, int attidx, int128 *values, bool *isnull,
								  int scale, int bits);
#endif
extern void TesseraReaderEnd(TesseraReader *reader);
extern TesseraReader *TesseraReaderForStripe(Relation rel, TesseraStripe *s, TesseraStripeDir *dir,
											 Snapshot snapshot, MemoryContext cxt);
extern void TesseraReaderSetTupleDesc(TesseraReader *reader, TupleDesc desc);
extern TesseraStripeDir *TesseraReaderDir(TesseraReader *reader, int stripe);
extern bool TesseraRowInsertedVisible(Relation rel, uint64 rownum, Snapshot snapshot);
extern int	TesseraDirFindRowGroup(const TesseraStripeDir *dir, uint64 rownum, int *row);
extern void TesseraReaderDeltaBytes(TesseraReader *reader, TesseraScanStripe *ss);
extern bool TesseraReaderLoad(TesseraReader *reader, int stripe, int rg);
extern void TesseraBatchColumn(TesseraBatch *batch, int attidx, Datum **values, bool **isnull);
#ifdef HAVE_INT128
extern bool TesseraBatchScaled(TesseraBatch *batch, int attidx, int128 **values, int64 **scales,
							   bool **isnull, int *max_scale);
extern bool TesseraBatchScaledInfo(TesseraBatch *batch, int attidx, int128 **values,
								   int64 **scales, bool **isnull, int *max_scale, int *bits,
								   int64 *dsc_all);
#endif
#ifdef HAVE_INT128
extern TesseraFilterResult TesseraBatchRangeFilter(TesseraBatch *batch, int attidx, int128 lo,
												   int128 hi, bool outside, bool *sel, int nsel,
												   const int *idx, int nidx);
extern bool TesseraBatchDecimalScale(TesseraBatch *batch, int attidx, int *max_scale);
extern bool TesseraBatchScaledGather(TesseraBatch *batch, int attidx, const int *rows, int m,
									 int128 *values, int64 *dscales, bool *isnull,
									 int *max_scale);
#endif
#ifdef HAVE_INT128
extern bool TesseraBatchIntSum(TesseraBatch *batch, int attidx, bool unpack, int128 *sum,
							   int64 *count);
#endif
extern bool TesseraBatchDict(TesseraBatch *batch, int attidx, int64 **codes, Datum **entries,
							 int *ndict);
extern Datum TesseraBatchValue(TesseraBatch *batch, int attidx, int row, bool *isnull);
extern void TesseraBatchColumnRows(TesseraBatch *batch, int attidx, const int *rows, int m,
								   int n, Datum **values, bool **isnull);
extern void TesseraBatchGather(TesseraBatch *batch, int attidx, const int *rows, int m,
							   Datum *values, bool *isnull);
extern bool TesseraReaderLocate(TesseraReader *reader, uint64 rownum, int *stripe, int *rg, int *row);
extern void TesseraReaderGlobalRg(TesseraReader *reader, uint32 g, int *stripe, int *rg);
extern uint32 TesseraStripeRowGroups(TesseraReader *reader, int stripe);

/* What a row group's chunk says about its values, without reading it. */
typedef struct TesseraChunkSummary
{
	uint32		rows;			/* rows stored in the row group */
	uint32		nonnull;		/* non-NULL values */
	bool		has_minmax;
	Datum		min;			/* of the column's type; valid if has_minmax */
	Datum		max;
} TesseraChunkSummary;

extern void TesseraReaderChunkSummary(TesseraReader *reader, int stripe, int rg, int attidx,
									  TesseraChunkSummary *summary);
extern TesseraColumnType *TesseraReaderColumnType(TesseraReader *reader, int attidx);

/* standalone directory access for introspection and TID fetches */
extern void TesseraCheckStripeRow(Relation rel, const TesseraStripe *s, BlockNumber rel_nblocks);
extern TesseraStripeDir *TesseraLoadDir(Relation rel, const TesseraStripe *stripe,
										BlockNumber rel_nblocks);
extern TesseraStripeDir *TesseraLoadDirHead(Relation rel, const TesseraStripe *stripe,
											BlockNumber rel_nblocks);
extern void TesseraDirNeedColumn(Relation rel, const TesseraStripe *stripe,
								 TesseraStripeDir *dir, int attidx);
extern void TesseraFreeDir(TesseraStripeDir *dir);
extern TesseraStripeDir *TesseraCachedDir(Relation rel, const TesseraStripe *s,
										  BlockNumber rel_nblocks);
extern TesseraChunkDisk *TesseraReaderChunk(TesseraReader *reader, int stripe, int rg,
											int attidx);
extern char *TesseraReadFrameTable(Relation rel, const TesseraStripe *stripe,
								   const TesseraChunkDisk *cd, uint32 dir_version,
								   TesseraFrameTable *ft, TesseraCorruptFn corrupt, void *arg);
extern uint64 TesseraVisibleRows(TesseraStripe *stripe, TesseraStripeDir *dir, Snapshot snapshot);
extern bool TesseraRowFolded(Relation rel, const TesseraStripe *stripe,
							 const TesseraStripeDir *dir, uint64 rownum);
extern int	TesseraDecodeDeadRows(Relation rel, const TesseraStripe *stripe,
								  const TesseraStripeDir *dir, int rg, bool *dead);
typedef struct TesseraCorruptContext
{
	Relation	rel;
	uint64		stripe_id;
	int			rg;
	int			attidx;
} TesseraCorruptContext;

extern void TesseraChunkCorrupt(void *arg, const char *detail) TESSERA_NORETURN;
extern void TesseraSerializableConflictOut(Relation rel, TransactionId xid, Snapshot snapshot);
extern void TesseraReportCorrupt(Relation rel, uint64 stripe_id, int rg, int attidx,
								 const char *detail) TESSERA_NORETURN;

#endif							/* TESSERA_READER_H */
