/*-------------------------------------------------------------------------
 *
 * fetch.c
 *	  Fetching single rows by TID: index fetches, TID scans, trigger and
 *	  EvalPlanQual fetches, and the checks by TID (satisfies_snapshot,
 *	  latest version).
 *
 * NOTES
 *	  A TID is a row number.  The stripe holding it comes from the
 *	  per-backend fetch cache (reader/cache.c: stripe, directory and chunk
 *	  payloads, found by one catalog index probe on a miss), its directory
 *	  gives the row group.  Visibility is the stripe's (catalog MVCC and own
 *	  command ids) and then the row state's.
 *
 *	  A lone fetch decodes one value per column it is asked for from the
 *	  cached payloads (lazily, for a tessera slot: only the columns the plan
 *	  reads).  A second fetch from the same row group decodes it whole into
 *	  a one-stripe reader, which serves the following fetches, as long as
 *	  the snapshot and the fetch cache's generation stay the same.
 *
 *	  Rows of other transactions that are reserved but not yet written
 *	  exist for a dirty snapshot (unique checks wait for their inserter, a
 *	  speculative one by its token), and serializable readers report a
 *	  rw-conflict with them, as with an in-progress heap insert.
 *
 * IDENTIFICATION
 *	  src/tableam/fetch.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relscan.h"
#include "access/tableam.h"
#include "storage/predicate.h"
#include "storage/proc.h"
#include "utils/datum.h"
#include "utils/memutils.h"
#include "storage/procarray.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "tessera/cache.h"
#include "tessera/catalog.h"
#include "tessera/compat.h"
#include "tessera/reader.h"
#include "tessera/rowstate.h"
#include "tessera/slot.h"
#include "tessera/storage.h"
#include "tessera/tableam.h"
#include "tessera/tessera.h"
#include "tessera/writer.h"

typedef struct TesseraFetcher
{
	IndexFetchTableData base;
	MemoryContext cxt;
	MemoryContext row_cxt;		/* one fetched row's values; reset per fetch */
	bool		have_meta;
	TesseraMeta meta;
	bool		skip_xmax;		/* SnapshotAny fetches need not report xmax */
	TesseraColumnType *types;	/* per attribute, set up on first use */
	bool	   *type_ready;

	/* index fetches store rows lazily; the slot holding one, if any */
	bool		allow_lazy;
	TupleTableSlot *lazy_slot;
	bool		ended;			/* index_fetch_end came while a slot held a row */

	/* the row group fetched last, and how many fetches in a row hit it */
	uint64		last_stripe_id;
	int			last_rg;
	int			streak;

	/*
	 * cache: one stripe's decoded row group, valid for one snapshot and
	 * while the fetch cache that holds its directory is not reset (a memory
	 * limit, or an invalidation after VACUUM moved stripes)
	 */
	TesseraReader *reader;		/* holds exactly that stripe */
	uint64		reader_generation;
	Snapshot	snapshot;
	SnapshotType snapshot_type;
	CommandId	curcid;
	TransactionId snap_xmin;
	TransactionId snap_xmax;

	/* the table had no row state under this MVCC snapshot (no_states) */
	bool		no_states;
	Snapshot	ns_snapshot;
	CommandId	ns_curcid;
	TransactionId ns_xmin;
	TransactionId ns_xmax;
	uint64		ns_completions;
} TesseraFetcher;

static bool tessera_tuple_fetch_row_version_internal(Relation rel, ItemPointer tid, bool want_xmax,
													 Snapshot snapshot, TupleTableSlot *slot,
													 bool materialize);

/*
 * Fetches in a row from one row group before it is decoded as a batch: an
 * index range scan over rows stored in index order reads many; probes in
 * random key order (a nested loop's inner side) seldom hit one row group
 * twice running, and loading one for them decompressed whole chunks the
 * fetch cache already held (TPC-H q09's supplier probes, 100x heap).
 */
#define FETCH_BATCH_STREAK	8

static TesseraFetcher *
fetcher_create(Relation rel)
{
	TesseraFetcher *f = palloc0(sizeof(TesseraFetcher));

	f->base.rel = rel;
	f->cxt = AllocSetContextCreate(CurrentMemoryContext, "tessera fetch",
								   ALLOCSET_SMALL_SIZES);
	f->row_cxt = AllocSetContextCreate(f->cxt, "tessera fetched row", ALLOCSET_SMALL_SIZES);
	f->last_rg = -1;
	return f;
}

static void
fetcher_reset(TesseraFetcher *f)
{
	if (f->reader)
		TesseraReaderEnd(f->reader);
	f->reader = NULL;
	f->snapshot = NULL;
	f->have_meta = false;
	f->last_rg = -1;
	f->streak = 0;
	f->ns_snapshot = NULL;
}

/*
 * May the row state lookup be skipped, the table having no row state at all
 * (no row of it ever deleted, updated or locked)?  Looking a state up reads
 * the metapage first to find there is none: a buffer access per fetch, 15%
 * of an index nested loop.  Known per MVCC snapshot, from one metapage read
 * under it: a deletion the snapshot sees committed before it was taken (or
 * came from an earlier command of ours, before its command id) and wrote
 * its state first, so the metapage read after that shows it.  The snapshot
 * is known by its address, command id, bounds and count of completed
 * transactions (a snapshot copied to the same address is another one only
 * if one of those differs).  Other kinds of snapshot see changes as they
 * happen: their lookups are never skipped; nor are a serializable
 * transaction's, which reports a conflict with a later update of a row it
 * reads (through its state).
 */
static bool
no_row_states(TesseraFetcher *f, Snapshot snapshot)
{
	TesseraMeta meta;

	if (snapshot->snapshot_type != SNAPSHOT_MVCC || !f->allow_lazy || IsolationIsSerializable())
		return false;
	if (f->ns_snapshot == snapshot && f->ns_curcid == snapshot->curcid &&
		f->ns_xmin == snapshot->xmin && f->ns_xmax == snapshot->xmax &&
		f->ns_completions == snapshot->snapXactCompletionCount)
		return f->no_states;
	TesseraReadMeta(f->base.rel, &meta);
	f->no_states = meta.valid && meta.state_root == 0;
	f->ns_snapshot = snapshot;
	f->ns_curcid = snapshot->curcid;
	f->ns_xmin = snapshot->xmin;
	f->ns_xmax = snapshot->xmax;
	f->ns_completions = snapshot->snapXactCompletionCount;
	return f->no_states;
}

static bool
same_snapshot(TesseraFetcher *f, Snapshot snapshot)
{
	if (f->snapshot != snapshot || f->snapshot_type != snapshot->snapshot_type)
		return false;
	if (snapshot->snapshot_type == SNAPSHOT_MVCC)
		return f->curcid == snapshot->curcid && f->snap_xmin == snapshot->xmin &&
			f->snap_xmax == snapshot->xmax;
	/* other snapshot kinds see changes as they happen: do not cache */
	return snapshot->snapshot_type == SNAPSHOT_ANY;
}

/*
 * Decode columns [from, to) of row `row` of row group rg (row number rownum)
 * straight from the cached chunk payloads into the slot, in the fetcher's
 * row memory (valid until its next row).  The stripe is looked up again:
 * the cache may have been reset since the fetch.
 */
static void
decode_single_columns(void *arg, uint64 rownum, int rg, int row, TupleTableSlot *slot,
					  int from, int to)
{
	TesseraFetcher *f = (TesseraFetcher *) arg;
	Relation	rel = f->base.rel;
	TupleDesc	desc = slot->tts_tupleDescriptor;
	TesseraCachedStripe *cs = TesseraCacheStripe(rel, f->meta.storage_id, rownum);
	TesseraStripeDir *dir;
	int			nrows;
	MemoryContext old;
	TesseraCorruptContext cc;

	if (cs == NULL)
		elog(ERROR, "tessera row " UINT64_FORMAT " of \"%s\" vanished from its stripe",
			 rownum, RelationGetRelationName(rel));
	dir = TesseraCacheDir(rel, cs);

	/*
	 * After a reset the stripe may be a rewrite by VACUUM (the same row
	 * numbers, other row groups): place the row again.
	 */
	rg = TesseraDirFindRowGroup(dir, rownum, &row);
	if (rg < 0)
		elog(ERROR, "tessera row " UINT64_FORMAT " of \"%s\" vanished from its stripe",
			 rownum, RelationGetRelationName(rel));
	nrows = (int) dir->rgs[rg].row_count;
	if (f->types == NULL)
	{
		f->types = MemoryContextAllocZero(f->cxt, sizeof(TesseraColumnType) * Max(desc->natts, 1));
		f->type_ready = MemoryContextAllocZero(f->cxt, sizeof(bool) * Max(desc->natts, 1));
	}
	cc.rel = rel;
	cc.stripe_id = cs->s.stripe_id;
	cc.rg = rg;

	old = MemoryContextSwitchTo(f->row_cxt);
	for (int i = from; i < to; i++)
	{
		Form_pg_attribute attr = TupleDescAttr(desc, i);

		if (attr->attisdropped)
		{
			slot->tts_values[i] = (Datum) 0;
			slot->tts_isnull[i] = true;
		}
		else if ((uint32) i >= dir->hdr.natts)
			slot->tts_values[i] = getmissingattr(desc, i + 1, &slot->tts_isnull[i]);
		else
		{
			TesseraChunkView *view;
			Datum		d;
			TesseraValueIndex **index;
			MemoryContext index_cxt;

			if (!f->type_ready[i])
			{
				MemoryContext tcxt = MemoryContextSwitchTo(f->cxt);

				TesseraColumnTypeInit(&f->types[i], attr);
				f->type_ready[i] = true;
				MemoryContextSwitchTo(tcxt);
			}
			cc.attidx = i;
			view = TesseraCacheChunkView(rel, cs, rg, i, TesseraChunkCorrupt, &cc, &index,
										 &index_cxt);
			if (view->framed)
				d = TesseraDecodeValueView(&f->types[i], view, nrows, row,
										   &slot->tts_isnull[i], TesseraChunkCorrupt, &cc,
										   index, index_cxt);
			else
				d = TesseraDecodeValue(&f->types[i], view->chunk, view->raw, nrows, row,
									   &slot->tts_isnull[i], TesseraChunkCorrupt, &cc, index,
									   index_cxt);
			/* the payload may be evicted by the next column's: copy now */
			if (!slot->tts_isnull[i] && !attr->attbyval)
				d = datumCopy(d, false, attr->attlen);
			slot->tts_values[i] = d;
		}
	}
	MemoryContextSwitchTo(old);
}

static void
fetcher_free(TesseraFetcher *f)
{
	fetcher_reset(f);
	MemoryContextDelete(f->cxt);
	pfree(f);
}

/* The slot let go of the lazily stored row. */
static void
release_lazy_row(void *arg, TupleTableSlot *slot)
{
	TesseraFetcher *f = (TesseraFetcher *) arg;

	if (f->lazy_slot == slot)
		f->lazy_slot = NULL;
	if (f->ended && f->lazy_slot == NULL)
		fetcher_free(f);
}

static const TesseraLazyRowOps lazy_row_ops = {
	.decode = decode_single_columns,
	.release = release_lazy_row,
};

/*
 * Store one row fetched alone.  An index fetch into a tessera slot stores
 * it lazily: only the columns the plan asks for are decoded (an index scan
 * that needs two columns of a wide table does not decompress the others).
 * Other slots get every column.
 */
static void
store_single_row(TesseraFetcher *f, TesseraCachedStripe *cs, int rg, int row,
				 TupleTableSlot *slot, uint64 rownum)
{
	Relation	rel = f->base.rel;
	int			natts = slot->tts_tupleDescriptor->natts;
	const bool *needed;

	/* a row another slot still holds lazily lives in row_cxt: let it copy */
	if (f->lazy_slot != NULL && f->lazy_slot != slot)
		ExecMaterializeSlot(f->lazy_slot);
	if (f->allow_lazy && slot->tts_ops == &TTSOpsTessera)
	{
		ExecClearTuple(slot);
		MemoryContextReset(f->row_cxt);
		TesseraSlotStoreLazyRow(slot, &lazy_row_ops, f, rownum, rg, row, cs->s.xmin,
								RelationGetRelid(rel));
		f->lazy_slot = slot;
		return;
	}
	ExecClearTuple(slot);
	MemoryContextReset(f->row_cxt);
	needed = slot->tts_ops == &TTSOpsTessera ? TesseraSlotNeeded(slot) : NULL;
	if (needed == NULL)
		decode_single_columns(f, rownum, rg, row, slot, 0, natts);
	else
	{
		/*
		 * Just the columns the slot's reader reads (a TID scan's, a top-N's
		 * winners'), in runs; the others NULL: a row of ClickBench's 105
		 * columns decoded every one of them to return a phrase, 2-4 ms a
		 * row in a stripe not read before.
		 */
		for (int from = 0; from < natts;)
		{
			int			to = from;

			if (!needed[from])
			{
				slot->tts_values[from] = (Datum) 0;
				slot->tts_isnull[from] = true;
				from++;
				continue;
			}
			while (to < natts && needed[to])
				to++;
			decode_single_columns(f, rownum, rg, row, slot, from, to);
			from = to;
		}
	}
	ExecStoreVirtualTuple(slot);
	ExecMaterializeSlot(slot);
	TesseraRownumToTid(rownum, &slot->tts_tid);
	slot->tts_tableOid = RelationGetRelid(rel);
	TesseraSlotSetXmin(slot, cs->s.xmin);
}

static bool fetch_row_visible(TesseraFetcher *f, ItemPointer tid, Snapshot snapshot,
							  TupleTableSlot *slot, bool *all_dead);


/*
 * Fetch the row with this TID into slot if snapshot sees it.  A fetch of any
 * version (DELETE ... RETURNING, EvalPlanQual) also reports the row's xmax,
 * as heap's tuple header would.
 */
static bool
fetch_row(TesseraFetcher *f, ItemPointer tid, Snapshot snapshot, TupleTableSlot *slot,
		  bool *all_dead)
{
	uint64		rownum;
	TesseraRowState st;

	if (!fetch_row_visible(f, tid, snapshot, slot, all_dead))
		return false;
	if (snapshot->snapshot_type == SNAPSHOT_ANY && !f->skip_xmax && TesseraTidToRownum(tid, &rownum) &&
		TesseraGetRowState(f->base.rel, rownum, &st) && !TesseraRowStateEmpty(&st))
		TesseraSlotSetXmax(slot, st.xmax);
	return true;
}

/*
 * A serializable reader looked for a row another transaction is inserting
 * and has not written yet (its index entry exists, its stripe does not):
 * a rw-conflict out with the inserter, as heap reports for a tuple whose
 * insert it cannot see.
 */
static void
conflict_out_unwritten(Relation rel, uint64 storage_id, uint64 rownum, Snapshot snapshot)
{
	TesseraStripe s;

	if (!CheckForSerializableConflictOutNeeded(rel, snapshot))
		return;
	if (!TesseraFindReservation(storage_id, rownum, &s) || s.row_count != 0)
		return;
	if (TransactionIdIsCurrentTransactionId(s.xmin))
		return;
	if (TransactionIdIsInProgress(s.xmin) || TransactionIdDidCommit(s.xmin))
		TesseraSerializableConflictOut(rel, s.xmin, snapshot);
}

/*
 * A row number no written stripe holds.  Another transaction may be
 * inserting this row and not have written it yet.  Like an in-progress heap
 * insert it "exists" for a dirty snapshot, with xmin set, so that unique
 * checks wait for the inserter; its values are not available yet.
 */
static bool
fetch_unwritten(TesseraFetcher *f, uint64 rownum, ItemPointer tid, Snapshot snapshot,
				TupleTableSlot *slot, bool *all_dead)
{
	Relation	rel = f->base.rel;
	TesseraStripe s;
	TesseraRowState st;

	if (snapshot->snapshot_type == SNAPSHOT_DIRTY &&
		TesseraFindStripe(f->meta.storage_id, rownum, snapshot, &s) && s.row_count == 0)
	{
		/* a lost ON CONFLICT insertion is gone for everyone at once */
		if (TesseraGetRowState(rel, rownum, &st) && TesseraRowDeleted(&st, snapshot))
		{
			if (all_dead && TesseraRowDeadToAll(&st, rel))
				*all_dead = true;
			return false;
		}
		snapshot->xmin = s.xmin;
		snapshot->speculativeToken = TesseraSpeculativeToken(rel, rownum);
		ExecStoreAllNullTuple(slot);
		slot->tts_tid = *tid;
		slot->tts_tableOid = RelationGetRelid(rel);
		return true;
	}
	if (IsMVCCSnapshot(snapshot))
		conflict_out_unwritten(rel, f->meta.storage_id, rownum, snapshot);
	return false;
}

/*
 * Store visible row `row` of row group rg in the slot.  A lone fetch
 * decodes one value per column from the cached payloads; a streak of
 * fetches from one row group (FETCH_BATCH_STREAK) loads it into a
 * one-stripe reader, which serves the following fetches from that row
 * group.  A fetch from another row group goes back to single values:
 * loading a row group drops what the reader decoded of the last one, and
 * probes in random key order would pay a row group's decompression per
 * probe (the fetch cache keeps payloads of many row groups).
 */
static bool
store_row(TesseraFetcher *f, TesseraCachedStripe *cs, TesseraStripeDir *dir, int rg, int row,
		  uint64 rownum, Snapshot snapshot, TupleTableSlot *slot)
{
	bool		reader_ok = f->reader && same_snapshot(f, snapshot) &&
		f->reader->stripes[0].meta.stripe_id == cs->s.stripe_id;
	bool		use_reader = reader_ok && f->reader->batch.stripe == 0 &&
		f->reader->batch.rg == rg;

	if (f->last_stripe_id == cs->s.stripe_id && f->last_rg == rg)
		f->streak++;
	else
	{
		f->last_stripe_id = cs->s.stripe_id;
		f->last_rg = rg;
		f->streak = 1;
	}
	if (!use_reader && f->streak >= FETCH_BATCH_STREAK &&
		(snapshot->snapshot_type == SNAPSHOT_MVCC || snapshot->snapshot_type == SNAPSHOT_ANY))
		use_reader = true;
	if (use_reader && !reader_ok)
	{
		if (f->reader)
			TesseraReaderEnd(f->reader);
		f->reader = TesseraReaderForStripe(f->base.rel, &cs->s, dir, snapshot, f->cxt);
		f->reader->patient = true;
		f->reader_generation = TesseraFetchCacheGeneration();
		f->snapshot = snapshot;
		f->snapshot_type = snapshot->snapshot_type;
		f->curcid = snapshot->curcid;
		f->snap_xmin = snapshot->xmin;
		f->snap_xmax = snapshot->xmax;
	}
	if (use_reader)
	{
		int			stripe,
					rrg,
					rrow;

		if (TesseraReaderLocate(f->reader, rownum, &stripe, &rrg, &rrow) &&
			TesseraReaderLoad(f->reader, stripe, rrg) && rrow < f->reader->batch.nrows)
		{
			TesseraSlotStoreRow(slot, &f->reader->batch, rrow);
			return true;
		}
		return false;
	}
	store_single_row(f, cs, rg, row, slot, rownum);
	return true;
}

static bool
fetch_row_visible(TesseraFetcher *f, ItemPointer tid, Snapshot snapshot, TupleTableSlot *slot,
				  bool *all_dead)
{
	Relation	rel = f->base.rel;
	uint64		rownum;
	TesseraCachedStripe *cs;
	TesseraStripeDir *dir;
	TesseraRowState st;
	bool		own;
	int			rg,
				row;

	/*
	 * As HeapTupleSatisfiesDirty does first: the caller's snapshot struct is
	 * not initialized (btree's unique check waits on a speculative insertion
	 * if speculativeToken is set, and retries forever).
	 */
	if (snapshot->snapshot_type == SNAPSHOT_DIRTY)
	{
		snapshot->xmin = snapshot->xmax = InvalidTransactionId;
		snapshot->speculativeToken = 0;
	}

	if (!TesseraTidToRownum(tid, &rownum))
		return false;

	/* a row still in this backend's write buffer must be findable */
	TesseraFlushRowIfPending(rel, rownum);

	if (!f->have_meta)
	{
		TesseraReadMeta(rel, &f->meta);
		f->have_meta = true;
	}
	if (!f->meta.valid)
		return false;

	cs = TesseraCacheStripe(rel, f->meta.storage_id, rownum);

	/* the cached reader's directory went with a reset of the fetch cache */
	if (f->reader != NULL && f->reader_generation != TesseraFetchCacheGeneration())
	{
		TesseraReaderEnd(f->reader);
		f->reader = NULL;
		f->snapshot = NULL;
	}
	if (cs == NULL)
		return fetch_unwritten(f, rownum, tid, snapshot, slot, all_dead);
	if (TesseraCachedStripeAborted(cs))
	{
		/* an aborted insert: dead to everyone, the index AM may forget it */
		if (all_dead)
			*all_dead = true;
		return false;
	}
	if (!TesseraCacheStripeVisible(cs, snapshot, &own))
	{
		/* serializable: we read around a concurrent insert, as heap reports */
		if (IsMVCCSnapshot(snapshot))
			TesseraSerializableConflictOut(rel, cs->s.xmin, snapshot);
		return false;
	}
	/* a running insert: perhaps a speculative one, whose token to wait for */
	if (snapshot->snapshot_type == SNAPSHOT_DIRTY && TransactionIdIsValid(snapshot->xmin))
		snapshot->speculativeToken = TesseraSpeculativeToken(rel, rownum);
	dir = TesseraCacheDir(rel, cs);
	if (own && rownum - cs->s.first_rownum >= TesseraVisibleRows(&cs->s, dir, snapshot))
		return false;
	/* probes come in runs within a row group: the last one first */
	if (f->last_stripe_id == cs->s.stripe_id && f->last_rg >= 0 &&
		f->last_rg < (int) dir->hdr.n_row_groups &&
		rownum >= dir->rgs[f->last_rg].first_rownum &&
		rownum - dir->rgs[f->last_rg].first_rownum < dir->rgs[f->last_rg].row_count)
	{
		rg = f->last_rg;
		row = (int) (rownum - dir->rgs[rg].first_rownum);
	}
	else
		rg = TesseraDirFindRowGroup(dir, rownum, &row);
	if (rg < 0)
		return false;

	/* folded by VACUUM: gone for everyone, like a pruned heap tuple */
	if (TesseraCacheRowFolded(rel, cs, rg, row))
	{
		if (all_dead)
			*all_dead = true;
		return false;
	}

	/* deleted or replaced? */
	if (snapshot->snapshot_type != SNAPSHOT_ANY && !no_row_states(f, snapshot) &&
		TesseraGetRowState(rel, rownum, &st))
	{
		if (TesseraRowDeleted(&st, snapshot))
		{
			if (all_dead && TesseraRowDeadToAll(&st, rel))
				*all_dead = true;
			return false;
		}
		if (IsMVCCSnapshot(snapshot))
			TesseraSerializableConflictOut(rel, TesseraRowUpdateXid(&st), snapshot);
	}
	if (IsMVCCSnapshot(snapshot))
		PredicateLockTID(rel, tid, snapshot, cs->s.xmin);

	return store_row(f, cs, dir, rg, row, rownum, snapshot, slot);
}

struct IndexFetchTableData *
tessera_index_fetch_begin(Relation rel)
{
	TesseraFetcher *f = fetcher_create(rel);

	f->allow_lazy = true;
	return (IndexFetchTableData *) f;
}

void
tessera_index_fetch_reset(struct IndexFetchTableData *data)
{
	/*
	 * Called at every rescan (each outer row of a nested loop).  We hold no
	 * buffer pins, and the cached stripe and row group stay valid, so keep
	 * them: the next probe often lands in the same row group.
	 */
}

void
tessera_index_fetch_end(struct IndexFetchTableData *data)
{
	TesseraFetcher *f = (TesseraFetcher *) data;

	/*
	 * A slot may still hold our last row lazily (unique_key_recheck ends the
	 * fetch before it deforms the row): then the slot frees us when it lets
	 * go of the row.
	 */
	if (f->lazy_slot != NULL)
	{
		fetcher_reset(f);
		f->ended = true;
		return;
	}
	fetcher_free(f);
}

bool
tessera_index_fetch_tuple(struct IndexFetchTableData *scan, ItemPointer tid,
						  Snapshot snapshot, TupleTableSlot *slot,
						  bool *call_again, bool *all_dead)
{
	*call_again = false;
	if (all_dead)
		*all_dead = false;
	return fetch_row((TesseraFetcher *) scan, tid, snapshot, slot, all_dead);
}

/*
 * One fetcher kept for the whole transaction (in TopTransactionContext) for
 * tuple_fetch_row_version, which AFTER triggers, foreign key checks and
 * EvalPlanQual call once per row: rebuilding it every time would decode a
 * row group per row.  It is valid while the local transaction id and the
 * relation's storage are the same.
 */
static TesseraFetcher *version_fetcher = NULL;
static LocalTransactionId version_fetcher_lxid = InvalidLocalTransactionId;
static Oid	version_fetcher_relid = InvalidOid;
static RelFileLocator version_fetcher_node;

static bool
tessera_tuple_fetch_row_version_internal(Relation rel, ItemPointer tid, bool want_xmax,
										 Snapshot snapshot,
										 TupleTableSlot *slot, bool materialize)
{
	TesseraFetcher *f;
	bool		found;

	if (version_fetcher == NULL || version_fetcher_lxid != TesseraMyLxid() ||
		version_fetcher_relid != RelationGetRelid(rel) ||
		!RelFileLocatorEquals(version_fetcher_node, TesseraRelLocator(rel)))
	{
		MemoryContext old;

		/* a fetcher of an earlier transaction went with its memory */
		if (version_fetcher != NULL && version_fetcher_lxid == TesseraMyLxid())
		{
			fetcher_reset(version_fetcher);
			MemoryContextDelete(version_fetcher->cxt);
			pfree(version_fetcher);
		}
		old = MemoryContextSwitchTo(TopTransactionContext);
		version_fetcher = fetcher_create(rel);
		MemoryContextSwitchTo(old);
		version_fetcher_lxid = TesseraMyLxid();
		version_fetcher_relid = RelationGetRelid(rel);
		version_fetcher_node = TesseraRelLocator(rel);
	}
	f = version_fetcher;
	/*
	 * The relcache entry may have been rebuilt at another address since the
	 * last call (an invalidation while nobody had the table open): the
	 * fetcher and its reader must use the one passed now.
	 */
	f->base.rel = rel;
	if (f->reader != NULL)
		f->reader->rel = rel;
	/* the metapage may have been re-initialized by a truncate: re-read it */
	f->have_meta = false;

	f->skip_xmax = !want_xmax;
	found = fetch_row(f, tid, snapshot, slot, NULL);
	f->skip_xmax = false;
	/* the slot points into the fetcher's batch: give it its own copy */
	if (found && materialize)
		ExecMaterializeSlot(slot);
	return found;
}

bool
tessera_tuple_fetch_row_version(Relation rel, ItemPointer tid, Snapshot snapshot,
								TupleTableSlot *slot)
{
	return tessera_tuple_fetch_row_version_internal(rel, tid, true, snapshot, slot, true);
}

/*
 * TesseraFetchUnmaterialized
 *		Like tuple_fetch_row_version, but the slot keeps pointing into the
 *		fetcher's decoded row group: use its values before the next fetch.
 */
bool
TesseraFetchUnmaterialized(Relation rel, ItemPointer tid, Snapshot snapshot, TupleTableSlot *slot)
{
	bool		found;

	/* the caller compares values, it needs no xmax */
	found = tessera_tuple_fetch_row_version_internal(rel, tid, false, snapshot, slot, false);
	return found;
}

bool
tessera_tuple_tid_valid(TableScanDesc scan, ItemPointer tid)
{
	TesseraMeta meta;
	uint64		rownum;

	if (!TesseraTidToRownum(tid, &rownum))
		return false;
	TesseraReadMeta(scan->rs_rd, &meta);
	return meta.valid && rownum < meta.next_rownum;
}

/* Follow the update chain from tid to the newest version visible to the scan's snapshot. */
void
tessera_tuple_get_latest_tid(TableScanDesc scan, ItemPointer tid)
{
	Relation	rel = scan->rs_rd;
	ItemPointerData cur = *tid;

	for (;;)
	{
		uint64		rownum;
		TesseraRowState st;
		uint64		newrow;

		if (!TesseraTidToRownum(&cur, &rownum) || !TesseraGetRowState(rel, rownum, &st) ||
			!(st.infomask & TESSERA_RS_UPDATED))
			break;
		newrow = TesseraRowStateNewRownum(&st);
		if (newrow >= TESSERA_MAX_ROWNUM)
			break;
		/* only follow updates the snapshot sees */
		if (!TesseraRowDeleted(&st, scan->rs_snapshot))
			break;
		TesseraRownumToTid(newrow, &cur);
		*tid = cur;
	}
}

bool
tessera_tuple_satisfies_snapshot(Relation rel, TupleTableSlot *slot, Snapshot snapshot)
{
	TesseraRowState st;
	uint64		rownum;
	bool		visible;

	if (!TesseraTidToRownum(&slot->tts_tid, &rownum))
		return false;
	visible = TesseraRowInsertedVisible(rel, rownum, snapshot);
	if (visible && TesseraGetRowState(rel, rownum, &st))
		visible = !TesseraRowDeleted(&st, snapshot);
	return visible;
}
