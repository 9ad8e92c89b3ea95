/*-------------------------------------------------------------------------
 *
 * fetch.c
 *	  Fetching single rows by TID: index fetches, TID scans, trigger and
 *	  EvalPlanQual fetches.
 *
 * NOTES
 *	  A TID is a row number.  The stripe holding it is found with one
 *	  catalog index probe (first_row <= rownum, backwards) under the
 *	  caller's snapshot; the stripe's directory gives the row group, whose
 *	  columns are decoded on demand into the fetcher's batch.  The stripe,
 *	  its directory and the decoded row group stay cached in the fetcher,
 *	  so consecutive fetches from the same row group decode nothing again.
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
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "tessera/catalog.h"
#include "tessera/reader.h"
#include "tessera/rowstate.h"
#include "tessera/storage.h"
#include "tessera/tableam.h"
#include "tessera/tessera.h"
#include "tessera/writer.h"

typedef struct TesseraFetcher
{
	IndexFetchTableData base;
	MemoryContext cxt;
	bool		have_meta;
	TesseraMeta meta;

	/* cache: one stripe, valid for one snapshot */
	TesseraReader *reader;		/* holds exactly that stripe */
	Snapshot	snapshot;
	SnapshotType snapshot_type;
	CommandId	curcid;
	TransactionId snap_xmin;
	TransactionId snap_xmax;
} TesseraFetcher;

static TesseraFetcher *
fetcher_create(Relation rel)
{
	TesseraFetcher *f = palloc0(sizeof(TesseraFetcher));

	f->base.rel = rel;
	f->cxt = AllocSetContextCreate(CurrentMemoryContext, "tessera fetch",
								   ALLOCSET_SMALL_SIZES);
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
 * A reader holding just the stripe with this row number, or NULL if the
 * snapshot sees no such stripe.
 */
static TesseraReader *
reader_for_stripe(Relation rel, TesseraStripe *s, Snapshot snapshot, MemoryContext cxt)
{
	MemoryContext old = MemoryContextSwitchTo(cxt);
	TesseraReader *r = palloc0(sizeof(TesseraReader));

	r->rel = rel;
	r->snapshot = snapshot;
	r->cxt = AllocSetContextCreate(cxt, "tessera fetch reader", ALLOCSET_SMALL_SIZES);
	MemoryContextSwitchTo(r->cxt);
	r->tupdesc = RelationGetDescr(rel);
	r->natts = r->tupdesc->natts;
	r->types = palloc0(sizeof(TesseraColumnType) * Max(r->natts, 1));
	r->type_ready = palloc0(sizeof(bool) * Max(r->natts, 1));
	r->batch_cxt = AllocSetContextCreate(r->cxt, "tessera batch", ALLOCSET_DEFAULT_SIZES);
	r->batch.reader = r;
	r->batch.stripe = -1;
	r->check_deleted = false;	/* fetch_row checks the one row it wants */
	r->batch.values = palloc0(sizeof(Datum *) * Max(r->natts, 1));
	r->batch.isnull = palloc0(sizeof(bool *) * Max(r->natts, 1));
	r->rel_nblocks = RelationGetNumberOfBlocks(rel);
	r->storage_id = s->storage_id;
	r->stripes = palloc0(sizeof(TesseraScanStripe));
	r->stripes[0].meta = *s;
	r->stripes[0].dir = TesseraLoadDir(rel, s, r->rel_nblocks);
	r->stripes[0].visible_rows = TesseraVisibleRows(s, r->stripes[0].dir, snapshot);
	r->nstripes = 1;
	r->total_rgs = s->n_row_groups;
	r->total_rows = r->stripes[0].visible_rows;
	r->rownum_end = s->first_rownum + s->row_count;
	MemoryContextSwitchTo(old);
	return r;
}

/*
 * Fetch the row with this TID into slot if snapshot sees it.
 */
static bool
fetch_row(TesseraFetcher *f, ItemPointer tid, Snapshot snapshot, TupleTableSlot *slot,
		  bool *all_dead)
{
	Relation	rel = f->base.rel;
	uint64		rownum;
	int			stripe,
				rg,
				row;

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

	if (f->reader == NULL || !same_snapshot(f, snapshot) ||
		rownum < f->reader->stripes[0].meta.first_rownum ||
		rownum >= f->reader->rownum_end)
	{
		TesseraStripe s;

		if (f->reader)
		{
			TesseraReaderEnd(f->reader);
			f->reader = NULL;
		}
		if (!TesseraFindStripe(f->meta.storage_id, rownum, snapshot, &s))
			return false;
		if (s.row_count == 0)
		{
			/*
			 * Another transaction is inserting this row and has not written
			 * it yet (only dirty snapshots get here).  Like an in-progress
			 * heap insert it "exists" with xmin set in the snapshot, so that
			 * unique checks wait for the inserter; its values are not
			 * available yet.
			 */
			snapshot->xmin = s.xmin;
			ExecStoreAllNullTuple(slot);
			slot->tts_tid = *tid;
			slot->tts_tableOid = RelationGetRelid(rel);
			return true;
		}
		f->reader = reader_for_stripe(rel, &s, snapshot, f->cxt);
		f->snapshot = snapshot;
		f->snapshot_type = snapshot->snapshot_type;
		f->curcid = snapshot->curcid;
		f->snap_xmin = snapshot->xmin;
		f->snap_xmax = snapshot->xmax;
	}

	if (!TesseraReaderLocate(f->reader, rownum, &stripe, &rg, &row) ||
		!TesseraReaderLoad(f->reader, stripe, rg) ||
		row >= f->reader->batch.nrows)
		return false;

	/* deleted or replaced? */
	if (snapshot->snapshot_type != SNAPSHOT_ANY)
	{
		TesseraRowState st;

		if (TesseraGetRowState(rel, rownum, &st))
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
			PredicateLockTID(rel, tid, snapshot, f->reader->batch.xmin);
	}

	TesseraSlotStoreRow(slot, &f->reader->batch, row);
	return true;
}

struct IndexFetchTableData *
tessera_index_fetch_begin(Relation rel)
{
	return (IndexFetchTableData *) fetcher_create(rel);
}

void
tessera_index_fetch_reset(struct IndexFetchTableData *data)
{
	fetcher_reset((TesseraFetcher *) data);
}

void
tessera_index_fetch_end(struct IndexFetchTableData *data)
{
	TesseraFetcher *f = (TesseraFetcher *) data;

	fetcher_reset(f);
	MemoryContextDelete(f->cxt);
	pfree(f);
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
static RelFileNode version_fetcher_node;

bool
tessera_tuple_fetch_row_version(Relation rel, ItemPointer tid, Snapshot snapshot,
								TupleTableSlot *slot)
{
	TesseraFetcher *f;
	bool		found;

	if (version_fetcher == NULL || version_fetcher_lxid != MyProc->lxid ||
		version_fetcher_relid != RelationGetRelid(rel) ||
		!RelFileNodeEquals(version_fetcher_node, rel->rd_node))
	{
		MemoryContext old;

		/* a fetcher of an earlier transaction went with its memory */
		if (version_fetcher != NULL && version_fetcher_lxid == MyProc->lxid)
		{
			fetcher_reset(version_fetcher);
			MemoryContextDelete(version_fetcher->cxt);
			pfree(version_fetcher);
		}
		old = MemoryContextSwitchTo(TopTransactionContext);
		version_fetcher = fetcher_create(rel);
		MemoryContextSwitchTo(old);
		version_fetcher_lxid = MyProc->lxid;
		version_fetcher_relid = RelationGetRelid(rel);
		version_fetcher_node = rel->rd_node;
	}
	f = version_fetcher;
	f->base.rel = rel;
	/* the metapage may have been re-initialized by a truncate: re-read it */
	f->have_meta = false;

	found = fetch_row(f, tid, snapshot, slot, NULL);
	/* the slot points into the fetcher's batch: give it its own copy */
	if (found)
		ExecMaterializeSlot(slot);
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
	TesseraMeta meta;
	TesseraStripe s;
	TesseraStripeDir *dir;
	TesseraRowState st;
	uint64		rownum;
	bool		visible;

	if (!TesseraTidToRownum(&slot->tts_tid, &rownum))
		return false;
	TesseraReadMeta(rel, &meta);
	if (!meta.valid || !TesseraFindStripe(meta.storage_id, rownum, snapshot, &s))
		return false;
	dir = TesseraLoadDir(rel, &s, RelationGetNumberOfBlocks(rel));
	visible = rownum - s.first_rownum < TesseraVisibleRows(&s, dir, snapshot);
	if (visible && TesseraGetRowState(rel, rownum, &st))
		visible = !TesseraRowDeleted(&st, snapshot);
	return visible;
}
