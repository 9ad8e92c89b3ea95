/*-------------------------------------------------------------------------
 *
 * reader.c
 *	  The stripes a snapshot sees, their directories, and row groups
 *	  decoded column by column on first use.
 *
 * NOTES
 *	  A reader is built for one snapshot: it lists the complete stripes
 *	  visible to it (catalog MVCC) and, for stripes written by the current
 *	  transaction, the prefix of rows inserted by commands before the
 *	  snapshot's command id.  The list is deterministic, so parallel
 *	  workers that share the snapshot agree on a global numbering of row
 *	  groups and can claim them by number.
 *
 *	  Directories are loaded on first use and kept for the reader's life.
 *	  A batch holds one row group; its columns are decoded only when a
 *	  slot or caller asks for them, into a memory context reset when the
 *	  batch moves to another row group.  By-reference Datums stay valid
 *	  until then.
 *
 *	  Everything read from disk is checked (page layout, directory and chunk
 *	  checksums, every size and offset) and a mismatch is reported as
 *	  ERRCODE_DATA_CORRUPTED naming the table, stripe, row group and column.
 *
 * IDENTIFICATION
 *	  src/reader/reader.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/subtrans.h"
#include "access/xact.h"
#include "port/pg_crc32c.h"
#include "storage/predicate.h"
#include "storage/procarray.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "tessera/reader.h"
#include "tessera/shared_cache.h"
#include "tessera/rowstate.h"
#include "tessera/storage.h"
#include "tessera/tessera.h"

/*
 * A reader of rel with no stripes yet, in a new memory context under
 * parent that TesseraReaderEnd deletes (with the reader).
 */
static TesseraReader *
reader_alloc(Relation rel, Snapshot snapshot, MemoryContext parent)
{
	MemoryContext cxt = AllocSetContextCreate(parent, "tessera reader", ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	TesseraReader *r = palloc0(sizeof(TesseraReader));

	r->rel = rel;
	r->snapshot = snapshot;
	r->cxt = cxt;
	r->tupdesc = RelationGetDescr(rel);
	r->natts = r->tupdesc->natts;
	r->types = palloc0(sizeof(TesseraColumnType) * Max(r->natts, 1));
	r->type_ready = palloc0(sizeof(bool) * Max(r->natts, 1));
	r->batch_cxt = AllocSetContextCreate(cxt, "tessera batch", ALLOCSET_DEFAULT_SIZES);
	r->batch.reader = r;
	r->batch.stripe = -1;
	r->batch.values = palloc0(sizeof(Datum *) * Max(r->natts, 1));
	r->batch.isnull = palloc0(sizeof(bool *) * Max(r->natts, 1));
	MemoryContextSwitchTo(old);
	return r;
}

/*
 * TesseraReaderForStripe
 *		A reader of the one stripe s, whose directory the caller loaded (and
 *		may cache), in a new memory context under cxt.  It does not check
 *		row states: fetches and maintenance check the rows they want.
 */
TesseraReader *
TesseraReaderForStripe(Relation rel, TesseraStripe *s, TesseraStripeDir *dir, Snapshot snapshot,
					   MemoryContext cxt)
{
	TesseraReader *r = reader_alloc(rel, snapshot, cxt);
	MemoryContext old = MemoryContextSwitchTo(r->cxt);

	r->check_deleted = false;
	r->rel_nblocks = TesseraPhysicalBlocks(rel);
	r->storage_id = s->storage_id;
	r->stripes = palloc0(sizeof(TesseraScanStripe));
	r->stripes[0].meta = *s;
	if (s->delta != NULL)
	{
		/* the fetch cache may be reset while this reader lives */
		r->stripes[0].meta.delta = palloc(VARSIZE_ANY(s->delta));
		memcpy(r->stripes[0].meta.delta, s->delta, VARSIZE_ANY(s->delta));
	}
	r->stripes[0].dir = dir;
	r->stripes[0].visible_rows = TesseraVisibleRows(s, dir, snapshot);
	r->nstripes = 1;
	r->total_rgs = s->n_row_groups;
	r->total_rows = r->stripes[0].visible_rows;
	r->rownum_end = s->first_rownum + s->row_count;
	MemoryContextSwitchTo(old);
	return r;
}

/* The buffer strategy of the next read (reader_begin's bulk_later). */
static BufferAccessStrategy
reader_strategy(TesseraReader *r)
{
	if (r->bulk_later && r->bytes_read > (uint64) (NBuffers / 4) * BLCKSZ)
	{
		MemoryContext old = MemoryContextSwitchTo(r->cxt);

		r->strategy = GetAccessStrategy(BAS_BULKREAD);
		r->bulk_later = false;
		MemoryContextSwitchTo(old);
	}
	return r->strategy;
}

/*
 * TesseraReaderBegin
 *		Build a reader of rel for snapshot, in a new memory context under
 *		the current one.  bulk selects a ring buffer strategy.
 */
TesseraReader *
TesseraReaderBegin(Relation rel, Snapshot snapshot, bool bulk)
{
	TesseraReader *r = reader_alloc(rel, snapshot, CurrentMemoryContext);
	MemoryContext old = MemoryContextSwitchTo(r->cxt);
	TesseraMeta meta;
	List	   *list = NIL;
	ListCell   *lc;
	int			n = 0;

	/*
	 * A large table read through a ring of buffers, as heap's sequential
	 * scans are -- but only once this scan has read a quarter of
	 * shared_buffers itself: a scan reads its columns' pages only, and
	 * ClickBench's `AVG(UserID)` read its 80 MB of a 1.1 GB table through
	 * the ring, from the kernel's page cache every time (a fifth of its
	 * time copying them in).
	 */
	r->strategy = NULL;
	r->bulk_later = bulk;
	r->check_deleted = true;

	TesseraReadMeta(rel, &meta);
	if (meta.valid)
	{
		r->storage_id = meta.storage_id;
		/* SnapshotAny scans (index builds) want every stripe that exists, not aborted ones */
		list = TesseraListStripes(meta.storage_id,
								  snapshot && snapshot->snapshot_type == SNAPSHOT_ANY ?
								  SnapshotSelf : snapshot);
	}
	/*
	 * After the catalog: a stripe's pages exist before its catalog row does,
	 * and snapshots that see running transactions see stripes written since
	 * the scan began.
	 */
	r->rel_nblocks = TesseraPhysicalBlocks(rel);
	r->stripes = palloc0(sizeof(TesseraScanStripe) * Max(list_length(list), 1));
	foreach(lc, list)
	{
		TesseraStripe *s = lfirst(lc);
		TesseraScanStripe *ss = &r->stripes[n];

		TesseraCheckStripeRow(rel, s, r->rel_nblocks);
		ss->meta = *s;
		ss->visible_rows = s->row_count;
		if (s->own && snapshot && snapshot->snapshot_type == SNAPSHOT_MVCC)
		{
			TesseraReaderDeltaBytes(r, ss);
			ss->dir = TesseraLoadDir(rel, &ss->meta, r->rel_nblocks);
			ss->visible_rows = TesseraVisibleRows(s, ss->dir, snapshot);
		}
		if (ss->visible_rows == 0)
			continue;
		ss->rg_base = r->total_rgs;
		ss->row_base = r->total_rows;
		r->total_rgs += s->n_row_groups;
		r->total_rows += ss->visible_rows;
		r->rownum_end = Max(r->rownum_end, s->first_rownum + s->row_count);
		n++;
	}
	r->nstripes = n;
	list_free_deep(list);

	/* serializable: stripes of concurrent transactions we cannot see */
	if (meta.valid && snapshot && IsMVCCSnapshot(snapshot) &&
		CheckForSerializableConflictOutNeeded(rel, snapshot))
	{
		TransactionId *xids;
		int			nx = TesseraConcurrentInserters(meta.storage_id, snapshot, &xids);

		for (int i = 0; i < nx; i++)
			TesseraSerializableConflictOut(rel, xids[i], snapshot);
	}
	MemoryContextSwitchTo(old);
	return r;
}

/*
 * TesseraReaderExternal
 *		A reader of rel's rows as batches that come from elsewhere (a
 *		Parquet file read through the foreign table rel): it has no stripes,
 *		and a batch's columns are made on first use by fill(arg, b, attidx,
 *		scaled), as Datums (b->values[attidx], b->isnull[attidx]) or, when
 *		scaled is true, as scaled integers (TesseraBatchSetScaled) if it can;
 *		dict, if not NULL, gives a dictionary column's codes and entries.
 *		The kernels of TesseraAgg read such a batch as they read a row group:
 *		through TesseraBatchColumn and the others, which take no encoding's
 *		shortcut for it.
 */
TesseraReader *
TesseraReaderExternal(Relation rel, void (*fill) (void *arg, TesseraBatch *b, int attidx,
												  bool scaled),
					  bool (*dict) (void *arg, TesseraBatch *b, int attidx, int64 **codes,
									Datum **entries, int *ndict),
					  void *arg, MemoryContext parent)
{
	TesseraReader *r = reader_alloc(rel, NULL, parent);

	r->external = true;
	r->fill = fill;
	r->dict = dict;
	r->fill_arg = arg;
	r->check_deleted = false;
	r->batch.rg = -1;
	return r;
}

/*
 * TesseraReaderExternalBatch
 *		Start the external reader's next batch, of nrows rows: what the last
 *		one made is freed.
 */
void
TesseraReaderExternalBatch(TesseraReader *r, int nrows)
{
	TesseraBatch *b = &r->batch;

	Assert(r->external);
	MemoryContextReset(r->batch_cxt);
	memset(b->values, 0, sizeof(Datum *) * r->natts);
	memset(b->isnull, 0, sizeof(bool *) * r->natts);
	b->raw = NULL;
	b->raw_index = NULL;
	b->views = NULL;
	b->scaled = NULL;
	b->access = NULL;
	b->deleted = NULL;
	b->sparse = false;
	b->rg++;
	b->nrows = b->chunk_rows = nrows;
}

/* Make column attidx of an external batch as Datums. */
static void
external_column(TesseraBatch *b, int attidx)
{
	TesseraReader *r = b->reader;

	r->fill(r->fill_arg, b, attidx, false);
	if (b->values[attidx] == NULL)
		elog(ERROR, "external batch source made no column %d", attidx + 1);
}

/*
 * TesseraReaderSetTupleDesc
 *		Decode as desc from now on.  ALTER TABLE rewrites read the old rows
 *		with the table's old descriptor while the relcache already has the
 *		new one; the slot tells which one the caller wants.
 */
void
TesseraReaderSetTupleDesc(TesseraReader *r, TupleDesc desc)
{
	MemoryContext old;

	if (desc == r->tupdesc)
		return;
	old = MemoryContextSwitchTo(r->cxt);
	r->tupdesc = desc;
	if (desc->natts > r->natts)
	{
		r->batch.values = repalloc(r->batch.values, sizeof(Datum *) * desc->natts);
		r->batch.isnull = repalloc(r->batch.isnull, sizeof(bool *) * desc->natts);
	}
	r->natts = desc->natts;
	r->types = palloc0(sizeof(TesseraColumnType) * Max(r->natts, 1));
	r->type_ready = palloc0(sizeof(bool) * Max(r->natts, 1));
	MemoryContextSwitchTo(old);

	/*
	 * What the current batch decoded was decoded as the old types (and sized
	 * by the old column count): forget it, leaving it to the batch's memory
	 * until the next row group.  The batch's row states, deleted flags and
	 * running deleters stay: they are the rows', not the columns', and the
	 * scan that loaded the batch goes on using them.
	 */
	memset(r->batch.values, 0, sizeof(Datum *) * r->natts);
	memset(r->batch.isnull, 0, sizeof(bool *) * r->natts);
	r->batch.raw = NULL;
	r->batch.raw_index = NULL;
	r->batch.views = NULL;
	r->batch.scaled = NULL;
	r->batch.access = NULL;
}

void
TesseraReaderEnd(TesseraReader *r)
{
	if (r->catalog != NULL)
		TesseraCloseDelta(r->catalog);
	if (r->strategy)
		FreeAccessStrategy(r->strategy);
	MemoryContextDelete(r->cxt);
}

/*
 * TesseraReaderDeltaBytes
 *		Make the bytes of a delta stripe available, dropping those (and the
 *		directory) of the delta stripe read before: a scan of many small
 *		writes holds one of them at a time.  Directories are only used for
 *		the stripe being read, and are loaded again when needed.
 */
void
TesseraReaderDeltaBytes(TesseraReader *r, TesseraScanStripe *ss)
{
	MemoryContext old;

	if ((ss->meta.flags & TESSERA_STRIPE_DELTA) == 0 || ss->meta.delta != NULL)
		return;
	if (r->delta_loaded != NULL && r->delta_loaded->meta.delta != NULL)
	{
		TesseraScanStripe *prev = r->delta_loaded;

		/* and its directory: thousands of small writes would pile them up */
		if (prev->dir != NULL && !prev->meta.own)
		{
			TesseraFreeDir(prev->dir);
			prev->dir = NULL;
		}
		pfree(prev->meta.delta);
		prev->meta.delta = NULL;
	}
	if (r->catalog == NULL)
		r->catalog = TesseraOpenDelta();
	old = MemoryContextSwitchTo(r->cxt);
	TesseraFetchDeltaBytes(r->catalog, &ss->meta);
	MemoryContextSwitchTo(old);
	r->delta_loaded = ss;
}

TesseraStripeDir *
TesseraReaderDir(TesseraReader *r, int stripe)
{
	TesseraScanStripe *ss = &r->stripes[stripe];

	if (ss->dir == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(r->cxt);

		TesseraReaderDeltaBytes(r, ss);
		/* (a complete stripe's: kept from scan to scan, dircache.c) */
		ss->dir = TesseraCachedDir(r->rel, &ss->meta, r->rel_nblocks);
		r->bytes_read += ss->meta.dir_bytes;
		MemoryContextSwitchTo(old);
	}
	return ss->dir;
}

/*
 * TesseraReaderChunk
 *		The chunk entry of column attidx (one the stripe stores) in row group
 *		rg of stripe, the column's entries read if they were not.
 */
TesseraChunkDisk *
TesseraReaderChunk(TesseraReader *r, int stripe, int rg, int attidx)
{
	TesseraScanStripe *ss = &r->stripes[stripe];
	TesseraStripeDir *dir = TesseraReaderDir(r, stripe);

	if (dir->col_chunks[attidx] == NULL)
		TesseraDirNeedColumn(r->rel, &ss->meta, dir, attidx);
	return TesseraDirChunk(dir, rg, attidx);
}

uint32
TesseraStripeRowGroups(TesseraReader *r, int stripe)
{
	return r->stripes[stripe].meta.n_row_groups;
}

/*
 * TesseraReaderColumnType
 *		How column attidx is stored (set up on first use).
 */
TesseraColumnType *
TesseraReaderColumnType(TesseraReader *r, int attidx)
{
	if (!r->type_ready[attidx])
	{
		MemoryContext old = MemoryContextSwitchTo(r->cxt);

		TesseraColumnTypeInit(&r->types[attidx], TupleDescAttr(r->tupdesc, attidx));
		r->type_ready[attidx] = true;
		MemoryContextSwitchTo(old);
	}
	return &r->types[attidx];
}

/*
 * TesseraReaderChunkSummary
 *		Row count, non-NULL count and min/max of column attidx in row group
 *		rg of stripe, from the stripe directory alone.  By-reference min/max
 *		are palloc'd in the current memory context.
 */
void
TesseraReaderChunkSummary(TesseraReader *r, int stripe, int rg, int attidx,
						  TesseraChunkSummary *summary)
{
	TesseraStripeDir *dir = TesseraReaderDir(r, stripe);
	Form_pg_attribute attr = TupleDescAttr(r->tupdesc, attidx);

	memset(summary, 0, sizeof(TesseraChunkSummary));
	summary->rows = dir->rgs[rg].row_count;
	if (attr->attisdropped)
		return;					/* all NULL */
	if ((uint32) attidx >= dir->hdr.natts)
	{
		/* added after the stripe was written: every row has the default */
		bool		isnull;
		Datum		missing = getmissingattr(r->tupdesc, attidx + 1, &isnull);

		if (!isnull)
		{
			summary->nonnull = summary->rows;
			summary->has_minmax = true;
			summary->min = summary->max = missing;
		}
	}
	else
	{
		TesseraChunkDisk *cd = TesseraReaderChunk(r, stripe, rg, attidx);
		TesseraColumnType *type = TesseraReaderColumnType(r, attidx);
		const char *stats = dir->col_stats[attidx];

		summary->nonnull = cd->value_count;
		if (cd->min_len > 0 && cd->max_len > 0 && type->stats != TESSERA_STATS_NONE)
		{
			summary->has_minmax = true;
			summary->min = TesseraStatDeserialize(type, stats + cd->min_off, cd->min_len);
			summary->max = TesseraStatDeserialize(type, stats + cd->max_off, cd->max_len);
		}
	}
}

/*
 * TesseraReaderLoad
 *		Make row group rg of stripe the current batch.  Returns false if
 *		the snapshot sees none of its rows.
 */
bool
TesseraReaderLoad(TesseraReader *r, int stripe, int rg)
{
	TesseraScanStripe *ss = &r->stripes[stripe];
	TesseraStripeDir *dir = TesseraReaderDir(r, stripe);
	TesseraRowGroupDisk *rgd = &dir->rgs[rg];
	uint64		start = rgd->first_rownum - ss->meta.first_rownum;
	uint64		visible = 0;
	TesseraBatch *b = &r->batch;

	if (ss->visible_rows > start)
		visible = Min(ss->visible_rows - start, (uint64) rgd->row_count);

	if (b->stripe == stripe && b->rg == rg)
		return visible > 0;

	MemoryContextReset(r->batch_cxt);
	memset(b->values, 0, sizeof(Datum *) * r->natts);
	memset(b->isnull, 0, sizeof(bool *) * r->natts);
	b->stripe = stripe;
	b->rg = rg;
	b->first_rownum = rgd->first_rownum;
	b->nrows = (int) visible;
	if (ss->meta.flags & TESSERA_STRIPE_DELTA)
		r->delta_rows += visible;
	b->chunk_rows = (int) rgd->row_count;
	b->xmin = ss->meta.xmin;
	b->deleted = NULL;
	b->states = NULL;
	b->raw = NULL;
	b->raw_index = NULL;
	b->views = NULL;
	b->sparse = false;
	b->scaled = NULL;
	b->access = NULL;
	b->dirty_xmin = InvalidTransactionId;
	b->dirty_xmax = NULL;
	if (r->snapshot && r->snapshot->snapshot_type == SNAPSHOT_DIRTY && !ss->meta.own &&
		TransactionIdIsNormal(ss->meta.xmin) && TransactionIdIsInProgress(ss->meta.xmin))
		b->dirty_xmin = ss->meta.xmin;

	/* rows deleted or replaced as far as the snapshot is concerned */
	if (visible > 0 && r->check_deleted && r->snapshot &&
		r->snapshot->snapshot_type != SNAPSHOT_ANY)
	{
		MemoryContext old = MemoryContextSwitchTo(r->batch_cxt);
		TesseraRowState *states = palloc(sizeof(TesseraRowState) * b->chunk_rows);

		if (TesseraReadRowStates(r->rel, b->first_rownum, b->chunk_rows, states))
		{
			bool		ssi = IsMVCCSnapshot(r->snapshot) &&
				CheckForSerializableConflictOutNeeded(r->rel, r->snapshot);

			bool		dirty = r->snapshot->snapshot_type == SNAPSHOT_DIRTY;

			b->deleted = palloc0(sizeof(bool) * b->chunk_rows);
			for (int i = 0; i < b->nrows; i++)
			{
				if (TesseraRowStateEmpty(&states[i]))
					continue;
				if (dirty)
					r->snapshot->xmax = InvalidTransactionId;
				if (TesseraRowDeleted(&states[i], r->snapshot))
					b->deleted[i] = true;
				else if (dirty && TransactionIdIsValid(r->snapshot->xmax))
				{
					/* a running deleter: the caller may wait for it */
					if (b->dirty_xmax == NULL)
						b->dirty_xmax = palloc0(sizeof(TransactionId) * b->chunk_rows);
					b->dirty_xmax[i] = r->snapshot->xmax;
				}
				else if (ssi)
				{
					/* visible, but a concurrent transaction deleted it */
					TransactionId upd = TesseraRowUpdateXid(&states[i]);

					if (TransactionIdIsValid(upd))
						TesseraSerializableConflictOut(r->rel, upd, r->snapshot);
				}
			}
		}
		pfree(states);
		MemoryContextSwitchTo(old);
	}
	else if (visible > 0 && r->keep_states)
	{
		MemoryContext old = MemoryContextSwitchTo(r->batch_cxt);
		TesseraRowState *states = palloc(sizeof(TesseraRowState) * b->chunk_rows);

		if (TesseraReadRowStates(r->rel, b->first_rownum, b->chunk_rows, states))
			b->states = states;
		else
			pfree(states);
		MemoryContextSwitchTo(old);
	}

	/*
	 * Folded rows (VACUUM rewrote the stripe without them) are gone for
	 * every snapshot, like pruned heap tuples; their row states may be
	 * cleared already.  Only the raw readers (compaction, the single-row
	 * fetcher, which checks its row itself) see them.
	 */
	if (visible > 0 && dir->dead != NULL && dir->dead[rg].value_count > 0 &&
		(r->check_deleted || r->keep_states))
	{
		MemoryContext old = MemoryContextSwitchTo(r->batch_cxt);
		bool	   *dead = palloc0(sizeof(bool) * b->chunk_rows);

		TesseraDecodeDeadRows(r->rel, &ss->meta, dir, rg, dead);
		if (r->keep_states)
		{
			if (b->states == NULL)
				b->states = palloc0(sizeof(TesseraRowState) * b->chunk_rows);
			for (int i = 0; i < b->chunk_rows; i++)
				if (dead[i])
				{
					memset(&b->states[i], 0, sizeof(TesseraRowState));
					b->states[i].infomask = TESSERA_RS_FROZEN_DELETED | TESSERA_RS_INDEXES_CLEAN;
				}
		}
		if (r->check_deleted)
		{
			if (b->deleted == NULL)
				b->deleted = dead;
			else
				for (int i = 0; i < b->chunk_rows; i++)
					b->deleted[i] |= dead[i];
		}
		MemoryContextSwitchTo(old);
	}
	return visible > 0;
}

/* The chunk of column i in the current batch, and a context naming it. */
static TesseraChunkDisk *
chunk_context(TesseraBatch *b, int i, TesseraCorruptContext *cc)
{
	TesseraReader *r = b->reader;
	TesseraScanStripe *ss = &r->stripes[b->stripe];

	cc->rel = r->rel;
	cc->stripe_id = ss->meta.stripe_id;
	cc->rg = b->rg;
	cc->attidx = i;
	return TesseraReaderChunk(r, b->stripe, b->rg, i);
}

/*
 * Bytes of a stripe a scan reads.  Outside a buffer ring, through the
 * buffers its pages were found in last (kept with the directory, which the
 * backend keeps across queries), without a content lock, each page checked
 * only to be a stripe page (TesseraCopyStripeBytes): every byte is checked
 * against a checksum (the chunk's, its frame table's or its frames') before
 * it is used.  A query of the Star
 * Schema Benchmark pins some 6,800 buffers, each a search of the buffer
 * mapping table, 6% of its time.
 */
static bool
read_stripe_bytes(TesseraReader *r, TesseraScanStripe *ss, uint64 offset, Size len, char *dst)
{
	BufferAccessStrategy strategy = reader_strategy(r);
	TesseraStripeDir *dir = ss->dir;

	if (strategy != NULL || dir == NULL || (ss->meta.flags & TESSERA_STRIPE_DELTA) ||
		ss->meta.nblocks == 0)
		return TesseraReadStripeBytes(r->rel, &ss->meta, offset, len, dst, strategy);
	if (dir->recent == NULL)
	{
		dir->recent = MemoryContextAllocZero(dir->cxt, sizeof(Buffer) * ss->meta.nblocks);
		dir->nrecent = ss->meta.nblocks;
	}
	if (dir->nrecent != ss->meta.nblocks)
		return TesseraReadStripeBytes(r->rel, &ss->meta, offset, len, dst, NULL);
	return TesseraCopyStripeBytes(r->rel, &ss->meta, offset, len, dst, dir->recent);
}

/* The chunk's stored bytes, read and checksummed, in the batch's memory. */
static char *
read_chunk(TesseraBatch *b, TesseraChunkDisk *cd, TesseraCorruptContext *cc)
{
	TesseraReader *r = b->reader;
	TesseraScanStripe *ss = &r->stripes[b->stripe];
	char	   *stored;
	
	stored = MemoryContextAllocHuge(r->batch_cxt, (Size) cd->stored_bytes + TESSERA_DECODE_PADDING);
	r->bytes_read += cd->stored_bytes;
	if (cd->codec != TESSERA_CODEC_NONE)
		r->bytes_decompressed += cd->raw_bytes;
	TesseraReaderDeltaBytes(r, ss);
	if (cd->stored_bytes > 0 &&
		!read_stripe_bytes(r, ss, cd->offset, cd->stored_bytes, stored))
		TesseraChunkCorrupt(cc, "chunk pages are invalid");
	memset(stored + cd->stored_bytes, 0, TESSERA_DECODE_PADDING);
	if (TesseraChunkStoredChecksum(ss->dir->hdr.format_version, cd, stored) != cd->crc)
		TesseraChunkCorrupt(cc, "chunk checksum mismatch");
	return stored;
}

/* Frames of the batch's chunk in the shared cache (TesseraFrameSource). */
typedef struct SharedFrames
{
	TesseraSharedKey key;
	TesseraReader *reader;
} SharedFrames;

static bool
shared_frame_get(void *arg, uint32 k, uint32 sum, uint32 len, char *dst)
{
	SharedFrames *sf = (SharedFrames *) arg;

	sf->key.frame = k;
	if (!TesseraSharedCacheGet(&sf->key, sum, len, dst))
		return false;
	sf->reader->frames_cached++;
	sf->reader->bytes_decompressed -= len;	/* read_chunk counted it */
	return true;
}

static void
shared_frame_put(void *arg, uint32 k, uint32 sum, uint32 len, const char *src)
{
	SharedFrames *sf = (SharedFrames *) arg;

	sf->key.frame = k;
	TesseraSharedCachePut(&sf->key, sum, len, src, false);
}

/*
 * A framed, compressed chunk of a batch whose values are read singly: its
 * frames are read and decompressed as the values asked for need them, not
 * the whole payload (a star join keeping 20 rows of 10,000 reads 20 of a
 * text column's 80 frames).
 */
typedef struct BatchView
{
	TesseraChunkView view;
	TesseraBatch *batch;
	TesseraChunkDisk *cd;
	TesseraCorruptContext cc;
	SharedFrames sf;
	bool		shared;
	uint32		loaded;			/* frames put in place */
} BatchView;

/* TesseraChunkView's load: frame k from the shared cache or the stripe. */
static bool
batch_view_load(void *arg, uint32 k, char *frame, uint32 off, uint32 count)
{
	BatchView  *bv = (BatchView *) arg;
	TesseraReader *r = bv->batch->reader;
	const TesseraFrameTable *ft = &bv->view.ft;
	uint32		raw_len = TesseraFrameRawBytes(bv->cd, ft, k);
	uint32		from = k == 0 ? 0 : ft->ends[k - 1];
	uint32		len = ft->ends[k] - from;
	bool		compressed = len < raw_len;
	char	   *stored;

	bv->loaded++;
	if (compressed)
		r->bytes_decompressed += raw_len;
	if (compressed && bv->shared && shared_frame_get(&bv->sf, k, ft->sums[k], raw_len, frame))
		return true;
	stored = palloc(len);
	r->bytes_read += len;
	if (!read_stripe_bytes(r, &r->stripes[bv->batch->stripe],
						   bv->cd->offset + ft->table_bytes + from, len, stored))
		TesseraChunkCorrupt(&bv->cc, "chunk pages are invalid");
	TesseraFrameDecode(bv->cd, ft, k, stored, len, frame, TesseraChunkCorrupt, &bv->cc);
	pfree(stored);
	if (compressed && bv->shared)
		shared_frame_put(&bv->sf, k, ft->sums[k], raw_len, frame);
	return true;
}

/* Column attidx's chunk (framed) as a view filled frame by frame, for this batch. */
static BatchView *
batch_view(TesseraBatch *b, int attidx, TesseraChunkDisk *cd, TesseraCorruptContext *cc)
{
	TesseraReader *r = b->reader;
	BatchView  *bv;

	if (b->views == NULL)
		b->views = MemoryContextAllocZero(r->batch_cxt, sizeof(struct BatchView *) * r->natts);
	bv = b->views[attidx];
	if (bv == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(r->batch_cxt);
		TesseraScanStripe *ss = &r->stripes[b->stripe];
		TesseraFrameTable ft;

		bv = palloc0(sizeof(BatchView));
		bv->batch = b;
		bv->cd = cd;
		bv->cc = *cc;
		TesseraReadFrameTable(r->rel, &ss->meta, cd, ss->dir->hdr.format_version, &ft,
							  TesseraChunkCorrupt, &bv->cc);
		r->bytes_read += ft.table_bytes;
		TesseraReaderDeltaBytes(r, ss);
		bv->shared = TesseraSharedCacheEnabled();
		if (bv->shared)
		{
			TesseraSharedKeyInit(&bv->sf.key, ss->meta.storage_id, ss->meta.stripe_id,
								 cd->offset, 0);
			bv->sf.reader = r;
		}
		/* (the payload's pages are touched only where frames are put) */
		TesseraViewInit(&bv->view, cd, &ft,
						MemoryContextAllocHuge(r->batch_cxt,
											   (Size) cd->raw_bytes + TESSERA_DECODE_PADDING),
						palloc0(ft.hdr.nframes), batch_view_load, bv);
		MemoryContextSwitchTo(old);
		b->views[attidx] = bv;
	}
	return bv;
}

/* The chunk's payload, decompressed once per batch whoever asks first. */
static const char *
batch_raw(TesseraBatch *b, int attidx, TesseraChunkDisk *cd, TesseraCorruptContext *cc)
{
	TesseraReader *r = b->reader;

	if (b->raw == NULL)
	{
		b->raw = MemoryContextAllocZero(r->batch_cxt, sizeof(char *) * r->natts);
		b->raw_index = MemoryContextAllocZero(r->batch_cxt,
											  sizeof(TesseraValueIndex *) * r->natts);
	}
	if (b->raw[attidx] == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(r->batch_cxt);

		const char *stored = read_chunk(b, cd, cc);

		if ((cd->flags & TESSERA_CHUNK_FRAMED) && cd->codec != TESSERA_CODEC_NONE &&
			TesseraSharedCacheEnabled())
		{
			TesseraScanStripe *ss = &r->stripes[b->stripe];
			SharedFrames sf;
			TesseraFrameSource source = {shared_frame_get, shared_frame_put, &sf};

			TesseraSharedKeyInit(&sf.key, ss->meta.storage_id, ss->meta.stripe_id, cd->offset, 0);
			sf.reader = r;
			b->raw[attidx] = TesseraChunkRawFrom(cd, stored, &source, TesseraChunkCorrupt, cc);
		}
		else
			b->raw[attidx] = TesseraChunkRaw(cd, stored, TesseraChunkCorrupt, cc);
		MemoryContextSwitchTo(old);
	}
	return b->raw[attidx];
}

/* Is column attidx stored in the batch's chunks (not dropped, not added later)? */
static inline bool
column_stored(TesseraBatch *b, int attidx)
{
	TesseraReader *r = b->reader;

	return !TupleDescAttr(r->tupdesc, attidx)->attisdropped &&
		(uint32) attidx < r->stripes[b->stripe].dir->hdr.natts;
}

static void
decode_column(TesseraBatch *b, int i)
{
	TesseraReader *r = b->reader;
	TesseraScanStripe *ss = &r->stripes[b->stripe];
	TesseraStripeDir *dir = ss->dir;
	Form_pg_attribute attr = TupleDescAttr(r->tupdesc, i);
	MemoryContext old = MemoryContextSwitchTo(r->batch_cxt);
	Datum	   *values = palloc(sizeof(Datum) * b->chunk_rows);
	bool	   *isnull = palloc(sizeof(bool) * b->chunk_rows);

	if (attr->attisdropped)
	{
		memset(values, 0, sizeof(Datum) * b->chunk_rows);
		memset(isnull, true, sizeof(bool) * b->chunk_rows);
	}
	else if ((uint32) i >= dir->hdr.natts)
	{
		/* column added after this stripe was written */
		bool		missing_null;
		Datum		missing = getmissingattr(r->tupdesc, i + 1, &missing_null);

		for (int k = 0; k < b->chunk_rows; k++)
		{
			values[k] = missing;
			isnull[k] = missing_null;
		}
	}
	else
	{
		TesseraCorruptContext cc;
		TesseraChunkDisk *cd = chunk_context(b, i, &cc);

		TesseraDecodeChunkRaw(TesseraReaderColumnType(r, i), cd, batch_raw(b, i, cd, &cc),
							  b->chunk_rows, values, isnull, TesseraChunkCorrupt, &cc);
	}
	b->values[i] = values;
	b->isnull[i] = isnull;
	MemoryContextSwitchTo(old);
}

/*
 * TesseraBatchColumn
 *		Values and null flags of column attidx of the current batch.
 */
void
TesseraBatchColumn(TesseraBatch *b, int attidx, Datum **values, bool **isnull)
{
	if (b->values[attidx] == NULL)
	{
		if (b->reader->external)
			external_column(b, attidx);
		else
			decode_column(b, attidx);
	}
	*values = b->values[attidx];
	*isnull = b->isnull[attidx];
}

/* How the rows of a batch have asked for a column not decoded yet. */
typedef struct TesseraColumnAccess
{
	int32		n;				/* values read singly */
	int32		first;			/* the rows of the first and latest of them */
	int32		last;
	bool		sparse;			/* decided: keep reading singly */
} TesseraColumnAccess;

#define TESSERA_ACCESS_PROBE	16	/* single reads before deciding */
#define TESSERA_ACCESS_SPARSE	8	/* sparse: fewer than 1 row in 8 read */

/*
 * Should this read of column attidx decode just the value?  A consumer
 * that reads few, scattered rows of a batch -- the probe side of a
 * selective hash join, a projection above a join -- would otherwise decode
 * the whole column for a handful of values.  The first reads are single;
 * then the spread of the rows read decides: about every row (a scan
 * feeding an Agg) decodes the column, scattered rows keep reading singly.
 * A patient reader (index fetches in index order) reads singly until the
 * single reads have cost about what decoding the column would, a
 * sixteenth of its rows: a range of a hundred rows decoded every value of
 * its row group's columns (10,000 md5 strings for 100).
 */
static bool
read_singly(TesseraBatch *b, int attidx, int row)
{
	TesseraColumnAccess *a;

	if (b->access == NULL)
		b->access = MemoryContextAllocZero(b->reader->batch_cxt,
										   sizeof(TesseraColumnAccess) * Max(b->reader->natts, 1));
	a = &b->access[attidx];
	if (a->sparse)
		return true;
	if (a->n == 0)
		a->first = row;
	a->last = row;
	if (++a->n < (b->reader->patient ? Max(TESSERA_ACCESS_PROBE, b->chunk_rows / 16) :
				  TESSERA_ACCESS_PROBE))
		return true;
	a->sparse = (int64) (a->last > a->first ? a->last - a->first : a->first - a->last) + 1 >= (int64) a->n * TESSERA_ACCESS_SPARSE;
	return a->sparse;
}

#ifdef HAVE_INT128
/*
 * TesseraBatchIntSum
 *		Sum and count of column attidx over all the batch's stored rows when
 *		its chunk's encoding gives them without decoding, or with unpack
 *		from its packed values (TesseraChunkIntSum); false otherwise, or if
 *		the column is decoded already.
 */
bool
TesseraBatchIntSum(TesseraBatch *b, int attidx, bool unpack, int128 *sum, int64 *count)
{
	TesseraChunkDisk *cd;
	TesseraCorruptContext cc;

	if (b->reader->external || b->values[attidx] != NULL || !column_stored(b, attidx))
		return false;
	cd = chunk_context(b, attidx, &cc);
	if (cd->encoding != TESSERA_ENC_INT && cd->encoding != TESSERA_ENC_ABSENT)
		return false;
	return TesseraChunkIntSum(TesseraReaderColumnType(b->reader, attidx), cd,
							  batch_raw(b, attidx, cd, &cc), b->chunk_rows, unpack, sum, count,
							  TesseraChunkCorrupt, &cc);
}
#endif

/*
 * TesseraBatchDict
 *		Column attidx as dictionary codes, one per row (-1: NULL), and the
 *		dictionary's entries, in the batch's memory; false if its chunk is
 *		not dictionary-encoded (TesseraChunkDictCodes).
 */
bool
TesseraBatchDict(TesseraBatch *b, int attidx, int64 **codes, Datum **entries, int *ndict)
{
	TesseraReader *r = b->reader;
	TesseraChunkDisk *cd;
	TesseraCorruptContext cc;
	MemoryContext old;
	bool		ok;

	if (r->external)
	{
		if (r->dict == NULL)
			return false;
		old = MemoryContextSwitchTo(r->batch_cxt);
		ok = r->dict(r->fill_arg, b, attidx, codes, entries, ndict);
		MemoryContextSwitchTo(old);
		return ok;
	}
	if (!column_stored(b, attidx))
		return false;
	cd = chunk_context(b, attidx, &cc);
	if (cd->encoding != TESSERA_ENC_DICT)
		return false;
	batch_raw(b, attidx, cd, &cc);
	old = MemoryContextSwitchTo(r->batch_cxt);
	*codes = palloc(sizeof(int64) * Max(b->chunk_rows, 1));
	ok = TesseraChunkDictCodes(TesseraReaderColumnType(r, attidx), cd, b->raw[attidx],
							   b->chunk_rows, *codes, entries, ndict, TesseraChunkCorrupt, &cc);
	MemoryContextSwitchTo(old);
	return ok;
}

/*
 * TesseraBatchValue
 *		Value of column attidx in row `row` of the current batch.  When the
 *		batch is marked sparse (a filter selected few of its rows), or the
 *		rows read so far are few and scattered (read_singly), and the column
 *		is not decoded yet, only this value is decoded, from the chunk's
 *		decompressed payload; otherwise the column is decoded whole.
 */
Datum
TesseraBatchValue(TesseraBatch *b, int attidx, int row, bool *isnull)
{
	TesseraReader *r = b->reader;
	TesseraStripeDir *dir;
	TesseraChunkDisk *cd;
	TesseraCorruptContext cc;
	MemoryContext old;
	Datum		result;

	if (b->values[attidx] == NULL && r->external)
		external_column(b, attidx);
	if (b->values[attidx] == NULL)
	{
		dir = r->stripes[b->stripe].dir;
		if (TupleDescAttr(r->tupdesc, attidx)->attisdropped ||
			(uint32) attidx >= dir->hdr.natts ||
			!(b->sparse || read_singly(b, attidx, row)))
			decode_column(b, attidx);
	}
	if (b->values[attidx] != NULL)
	{
		*isnull = b->isnull[attidx][row];
		return b->values[attidx][row];
	}

	cd = chunk_context(b, attidx, &cc);
	/* a framed compressed chunk not decompressed yet: just the frames needed */
	if ((cd->flags & TESSERA_CHUNK_FRAMED) && cd->codec != TESSERA_CODEC_NONE &&
		(b->raw == NULL || b->raw[attidx] == NULL))
	{
		BatchView  *bv = batch_view(b, attidx, cd, &cc);

		old = MemoryContextSwitchTo(r->batch_cxt);
		result = TesseraDecodeValueView(TesseraReaderColumnType(r, attidx), &bv->view,
										b->chunk_rows, row, isnull, TesseraChunkCorrupt, &cc,
										NULL, NULL);
		MemoryContextSwitchTo(old);

		/*
		 * Every frame read (a delta or run-length section is read whole, and
		 * walked from its start for each value): the payload is complete,
		 * and the next reads go through its value index, as a decompressed
		 * payload's do
		 */
		if (bv->loaded == bv->view.ft.hdr.nframes)
		{
			if (b->raw == NULL)
			{
				b->raw = MemoryContextAllocZero(r->batch_cxt, sizeof(char *) * r->natts);
				b->raw_index = MemoryContextAllocZero(r->batch_cxt,
													  sizeof(TesseraValueIndex *) * r->natts);
			}
			b->raw[attidx] = bv->view.raw;
		}
		return result;
	}
	batch_raw(b, attidx, cd, &cc);
	old = MemoryContextSwitchTo(r->batch_cxt);
	result = TesseraDecodeValue(TesseraReaderColumnType(r, attidx), cd, b->raw[attidx],
								b->chunk_rows, row, isnull, TesseraChunkCorrupt, &cc,
								&b->raw_index[attidx], r->batch_cxt);
	MemoryContextSwitchTo(old);
	return result;
}

/*
 * TesseraBatchGather
 *		TesseraBatchValue of the rows rows[0..m) (ascending), into
 *		values[rows[j]] / isnull[rows[j]]: an integer chunk's section is
 *		read once for all of them (a sparse batch's few rows), other chunks
 *		value by value.
 */
void
TesseraBatchGather(TesseraBatch *b, int attidx, const int *rows, int m, Datum *values,
				   bool *isnull)
{
	TesseraReader *r = b->reader;
	TesseraChunkDisk *cd;
	TesseraCorruptContext cc;
	MemoryContext old;
	bool		done;

	if (m == 0)
		return;
	/* the first read sets the column up: decoded, or its payload in place */
	values[rows[0]] = TesseraBatchValue(b, attidx, rows[0], &isnull[rows[0]]);
	if (b->values[attidx] != NULL)
	{
		for (int j = 1; j < m; j++)
		{
			values[rows[j]] = b->values[attidx][rows[j]];
			isnull[rows[j]] = b->isnull[attidx][rows[j]];
		}
		return;
	}
	done = false;
	if (b->raw != NULL && b->raw[attidx] != NULL)
	{
		cd = chunk_context(b, attidx, &cc);
		old = MemoryContextSwitchTo(r->batch_cxt);
		done = TesseraDecodeValuesAt(TesseraReaderColumnType(r, attidx), cd, b->raw[attidx],
									 b->chunk_rows, rows + 1, m - 1, values, isnull,
									 &b->raw_index[attidx], r->batch_cxt);
		MemoryContextSwitchTo(old);
	}
	if (!done)
		for (int j = 1; j < m; j++)
			values[rows[j]] = TesseraBatchValue(b, attidx, rows[j], &isnull[rows[j]]);
}

/*
 * TesseraBatchColumnRows
 *		Column attidx's values for the rows rows[0..m) (ascending) of the
 *		batch's n: the column decoded whole where it is already or the rows
 *		are many, else just those rows' values gathered at their positions
 *		into the batch's memory (the other positions left unset).  A filter
 *		or a star join that kept a few hundred rows of a row group then
 *		reads a few hundred values, not 10,000.
 */
void
TesseraBatchColumnRows(TesseraBatch *b, int attidx, const int *rows, int m, int n,
					   Datum **values, bool **isnull)
{
	if (rows != NULL && (int64) m * 16 < n && b->values[attidx] == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(b->reader->batch_cxt);

		*values = palloc(sizeof(Datum) * Max(n, 1));
		*isnull = palloc(sizeof(bool) * Max(n, 1));
		MemoryContextSwitchTo(old);
		TesseraBatchGather(b, attidx, rows, m, *values, *isnull);
		return;
	}
	TesseraBatchColumn(b, attidx, values, isnull);
}

#ifdef HAVE_INT128
/* A numeric column of the batch decoded as scaled integers, or why not. */
typedef struct TesseraScaledColumn
{
	int8		state;			/* 0: not tried, 1: decoded, -1: not decimal */
	int			max_scale;
	int			bits;			/* every |value| < 2^bits */
	int64		dsc_all;		/* the display scale of every value, or -1 */
	int128	   *values;
	int64	   *scales;			/* each value's, when dsc_all is -1 */
	bool	   *isnull;
} TesseraScaledColumn;

/*
 * TesseraBatchScaled
 *		Column attidx of the batch as scaled integers (see
 *		TesseraDecodeChunkScaled), in the batch's memory and decoded once per
 *		batch; false if it is not stored decimal-encoded.
 */
bool
TesseraBatchScaled(TesseraBatch *b, int attidx, int128 **values, int64 **scales, bool **isnull,
				   int *max_scale)
{
	TesseraReader *r = b->reader;
	TesseraStripeDir *dir;
	TesseraScaledColumn *sc;
	TesseraChunkDisk *cd;
	TesseraCorruptContext cc;
	MemoryContext old;

	if (b->scaled == NULL)
		b->scaled = MemoryContextAllocZero(r->batch_cxt,
										   sizeof(TesseraScaledColumn) * Max(r->natts, 1));
	sc = &b->scaled[attidx];
	if (sc->state == 0 && r->external)
	{
		sc->state = -1;
		r->fill(r->fill_arg, b, attidx, true);
	}
	if (sc->state == 0)
	{
		dir = r->stripes[b->stripe].dir;
		sc->state = -1;
		if (!TupleDescAttr(r->tupdesc, attidx)->attisdropped && (uint32) attidx < dir->hdr.natts)
		{
			cd = chunk_context(b, attidx, &cc);
			if (cd->encoding == TESSERA_ENC_DECIMAL || cd->encoding == TESSERA_ENC_ABSENT)
			{
				int			n = Max(b->chunk_rows, 1);

				old = MemoryContextSwitchTo(r->batch_cxt);
				sc->values = MemoryContextAllocHuge(r->batch_cxt, sizeof(int128) * n);
				sc->scales = MemoryContextAllocHuge(r->batch_cxt, sizeof(int64) * n);
				sc->isnull = MemoryContextAllocHuge(r->batch_cxt, sizeof(bool) * n);
				if (TesseraDecodeChunkScaled(TesseraReaderColumnType(r, attidx), cd,
											 batch_raw(b, attidx, cd, &cc), b->chunk_rows,
											 sc->values, sc->scales, sc->isnull,
											 &sc->max_scale, &sc->dsc_all, &sc->bits,
											 TesseraChunkCorrupt, &cc))
					sc->state = 1;
				MemoryContextSwitchTo(old);
			}
		}
	}
	if (sc->state < 0)
		return false;
	*values = sc->values;
	*scales = sc->dsc_all >= 0 ? NULL : sc->scales;
	*isnull = sc->isnull;
	*max_scale = sc->max_scale;
	return true;
}

/*
 * TesseraBatchScaledInfo
 *		TesseraBatchScaled, plus a bound on the values' magnitude (bits) and
 *		the display scale all of them share (-1 if they differ).
 */
bool
TesseraBatchScaledInfo(TesseraBatch *b, int attidx, int128 **values, int64 **scales,
					   bool **isnull, int *max_scale, int *bits, int64 *dsc_all)
{
	TesseraScaledColumn *sc;

	if (!TesseraBatchScaled(b, attidx, values, scales, isnull, max_scale))
		return false;
	sc = &b->scaled[attidx];
	*bits = sc->bits;
	*dsc_all = sc->dsc_all;
	return true;
}

/*
 * TesseraBatchSetScaled
 *		An external source's numeric column attidx as integers scaled by
 *		10^scale, every value of display scale scale, each below 2^bits in
 *		magnitude; values and isnull (never NULL) must stay valid for the
 *		batch.  A NULL row's value must be 0.
 */
void
TesseraBatchSetScaled(TesseraBatch *b, int attidx, int128 *values, bool *isnull, int scale,
					  int bits)
{
	TesseraScaledColumn *sc;

	Assert(b->reader->external && b->scaled != NULL);
	sc = &b->scaled[attidx];
	sc->state = 1;
	sc->values = values;
	sc->isnull = isnull;
	sc->scales = NULL;
	sc->max_scale = scale;
	sc->dsc_all = scale;
	sc->bits = bits;
}

/*
 * TesseraBatchRangeFilter
 *		sel &= lo <= value <= hi (outside: sel &= it does not hold, NULLs
 *		failing either way) for column attidx of the batch, compared on
 *		the stored integers without decoding the column (TesseraChunkFilter:
 *		numerics at the chunk's scale, TesseraBatchDecimalScale).  Rows
 *		0..nsel-1, or those in idx[0..nidx).  TESSERA_FILTER_CANNOT when
 *		the caller must compare decoded values instead: the column is
 *		decoded already, or its chunk has NULLs or another encoding.
 */
TesseraFilterResult
TesseraBatchRangeFilter(TesseraBatch *b, int attidx, int128 lo, int128 hi, bool outside,
						bool *sel, int nsel, const int *idx, int nidx)
{
	TesseraChunkDisk *cd;
	TesseraCorruptContext cc;

	if (b->reader->external || b->values[attidx] != NULL || !column_stored(b, attidx) ||
		(b->scaled != NULL && b->scaled[attidx].state == 1))
		return TESSERA_FILTER_CANNOT;
	cd = chunk_context(b, attidx, &cc);
	if (cd->encoding != TESSERA_ENC_INT && cd->encoding != TESSERA_ENC_DECIMAL &&
		cd->encoding != TESSERA_ENC_ABSENT)
		return TESSERA_FILTER_CANNOT;
	return TesseraChunkFilter(TesseraReaderColumnType(b->reader, attidx), cd,
							  batch_raw(b, attidx, cd, &cc), b->chunk_rows, lo, hi, outside,
							  sel, nsel, idx, nidx, TesseraChunkCorrupt, &cc);
}

/*
 * TesseraBatchDecimalScale
 *		The scale column attidx's chunk stores its numerics at; false if the
 *		chunk is not decimal-encoded.
 */
bool
TesseraBatchDecimalScale(TesseraBatch *b, int attidx, int *max_scale)
{
	TesseraChunkDisk *cd;
	TesseraCorruptContext cc;

	if (b->reader->external || !column_stored(b, attidx))
		return false;
	cd = chunk_context(b, attidx, &cc);
	if (cd->encoding != TESSERA_ENC_DECIMAL)
		return false;
	return TesseraChunkDecimalScale(cd, batch_raw(b, attidx, cd, &cc), b->chunk_rows, max_scale,
									TesseraChunkCorrupt, &cc);
}

/*
 * TesseraBatchScaledGather
 *		TesseraBatchScaledAt for rows[0..m), the chunk's headers read once;
 *		false if the column is not decimal-encoded.
 */
bool
TesseraBatchScaledGather(TesseraBatch *b, int attidx, const int *rows, int m, int128 *values,
						 int64 *dscales, bool *isnull, int *max_scale)
{
	TesseraChunkDisk *cd;
	TesseraCorruptContext cc;
	TesseraScaledColumn *sc;

	if (b->reader->external)
	{
		int128	   *v;
		int64	   *s;
		bool	   *n;

		if (!TesseraBatchScaled(b, attidx, &v, &s, &n, max_scale))
			return false;
	}
	sc = b->scaled ? &b->scaled[attidx] : NULL;
	if (sc != NULL && sc->state != 0)
	{
		if (sc->state < 0)
			return false;
		for (int j = 0; j < m; j++)
		{
			values[j] = sc->values[rows[j]];
			dscales[j] = sc->dsc_all >= 0 ? sc->dsc_all : sc->scales[rows[j]];
			isnull[j] = sc->isnull[rows[j]];
		}
		*max_scale = sc->max_scale;
		return true;
	}
	if (!column_stored(b, attidx))
		return false;
	cd = chunk_context(b, attidx, &cc);
	if (cd->encoding != TESSERA_ENC_DECIMAL && cd->encoding != TESSERA_ENC_ABSENT)
		return false;
	return TesseraChunkScaledGather(cd, batch_raw(b, attidx, cd, &cc), b->chunk_rows, rows, m,
									values, dscales, isnull, max_scale, TesseraChunkCorrupt, &cc);
}

#endif

/*
 * TesseraReaderLocate
 *		Find the visible row with this row number.
 */
bool
TesseraReaderLocate(TesseraReader *r, uint64 rownum, int *stripe, int *rg, int *row)
{
	int			lo = 0,
				hi = r->nstripes - 1;
	TesseraScanStripe *ss = NULL;
	TesseraStripeDir *dir;

	while (lo <= hi)
	{
		int			mid = lo + (hi - lo) / 2;
		TesseraScanStripe *m = &r->stripes[mid];

		if (rownum < m->meta.first_rownum)
			hi = mid - 1;
		else if (rownum >= m->meta.first_rownum + m->meta.row_count)
			lo = mid + 1;
		else
		{
			ss = m;
			*stripe = mid;
			break;
		}
	}
	if (ss == NULL || rownum - ss->meta.first_rownum >= ss->visible_rows)
		return false;

	dir = TesseraReaderDir(r, *stripe);
	*rg = TesseraDirFindRowGroup(dir, rownum, row);
	return *rg >= 0;
}

/* Map a global row group number to (stripe, row group). */
void
TesseraReaderGlobalRg(TesseraReader *r, uint32 g, int *stripe, int *rg)
{
	int			lo = 0,
				hi = r->nstripes - 1;

	while (lo < hi)
	{
		int			mid = lo + (hi - lo + 1) / 2;

		if (r->stripes[mid].rg_base <= g)
			lo = mid;
		else
			hi = mid - 1;
	}
	*stripe = lo;
	*rg = (int) (g - r->stripes[lo].rg_base);
}

/*
 * TesseraSerializableConflictOut
 *		Report a rw-conflict out with xid (a concurrent inserter or deleter
 *		of rows this serializable transaction read around), as heap does.
 */
void
TesseraSerializableConflictOut(Relation rel, TransactionId xid, Snapshot snapshot)
{
	if (!TransactionIdIsValid(xid) || TransactionIdIsCurrentTransactionId(xid) ||
		TransactionIdPrecedes(xid, TransactionXmin))
		return;
	xid = SubTransGetTopmostTransaction(xid);
	if (TransactionIdPrecedes(xid, TransactionXmin) ||
		TransactionIdEquals(xid, GetTopTransactionIdIfAny()))
		return;
	CheckForSerializableConflictOut(rel, xid, snapshot);
}
