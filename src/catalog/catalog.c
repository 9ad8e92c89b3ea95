/*-------------------------------------------------------------------------
 *
 * catalog.c
 *	  The stripe catalog: tessera_internal.stripe (one row per stripe) and
 *	  tessera_internal.delta (the bytes of small stripes).
 *
 * NOTES
 *	  One catalog row per stripe, keyed by (storage_id, first_row).  Being a
 *	  heap row, it gives stripes transactional visibility: a stripe written
 *	  by an aborted (sub)transaction is never seen, one being written by a
 *	  concurrent transaction is seen only after it commits.
 *
 *	  A writer inserts the row as a placeholder (row_count = 0, its row
 *	  numbers reserved) when it starts a stripe, inside the subtransaction
 *	  that owns the rows, and fills it in place (heap_inplace_update) when
 *	  the stripe is written, which may happen from a deeper subtransaction
 *	  (a scan there flushes pending rows).  Because only the inserting
 *	  transaction can see the row until it commits, the in-place update is
 *	  never observed half-done.  Readers skip placeholders; unique checks
 *	  and serializable readers look at them (the rows "exist" for a dirty
 *	  snapshot, as an in-progress heap insert does).
 *
 *	  A stripe row never changes once complete: compaction, VACUUM's
 *	  folding and moving replace it (delete and insert in one transaction,
 *	  TesseraReplaceStripes), and a small stripe's delta row is deleted
 *	  with it.  Deleted rows' states live in state pages, not here.
 *
 *	  Every scan of either table goes through CatalogScan (below), which
 *	  keeps SSI off the catalogs and applies the caller's snapshot row by
 *	  row.  Locking: readers take AccessShareLock on the catalog tables,
 *	  writers RowExclusiveLock; the tessera table's own lock orders what
 *	  happens to its stripes.
 *
 * IDENTIFICATION
 *	  src/catalog/catalog.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/detoast.h"
#include "access/heapam.h"
#include "access/heaptoast.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/index.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "executor/tuptable.h"
#include "commands/sequence.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/procarray.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "tessera/catalog.h"
#include "tessera/tessera.h"

/* attribute numbers of tessera_internal.stripe */
#define Anum_stripe_storage_id		1
#define Anum_stripe_stripe_id		2
#define Anum_stripe_first_row		3
#define Anum_stripe_row_count		4
#define Anum_stripe_start_block		5
#define Anum_stripe_block_count		6
#define Anum_stripe_data_bytes		7
#define Anum_stripe_dir_offset		8
#define Anum_stripe_dir_bytes		9
#define Anum_stripe_row_groups		10
#define Anum_stripe_columns			11
#define Anum_stripe_flags			12
#define Anum_stripe_reserved_rows	13
#define Natts_stripe				13

/* attribute numbers of tessera_internal.delta */
#define Anum_delta_storage_id		1
#define Anum_delta_stripe_id		2
#define Anum_delta_bytes			3
#define Natts_delta					3

/*
 * TesseraInternalRelid
 *		OID of a relation in the tessera_internal schema.
 */
Oid
TesseraInternalRelid(const char *name, bool missing_ok)
{
	Oid			nsp = get_namespace_oid(TESSERA_INTERNAL_SCHEMA, true);
	Oid			relid = InvalidOid;

	if (OidIsValid(nsp))
		relid = get_relname_relid(name, nsp);
	if (!OidIsValid(relid) && !missing_ok)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("tessera catalog table %s.%s does not exist",
						TESSERA_INTERNAL_SCHEMA, name),
				 errhint("The tessera extension must be installed in this database: CREATE EXTENSION tessera.")));
	return relid;
}

uint64
TesseraNextStorageId(void)
{
	Oid			seq = TesseraInternalRelid("storage_id_seq", false);

	return (uint64) nextval_internal(seq, false);
}

static HeapTuple
form_stripe_tuple(Relation rel, const TesseraStripe *s)
{
	Datum		values[Natts_stripe];
	bool		nulls[Natts_stripe];

	memset(nulls, 0, sizeof(nulls));
	values[Anum_stripe_storage_id - 1] = Int64GetDatum((int64) s->storage_id);
	values[Anum_stripe_stripe_id - 1] = Int64GetDatum((int64) s->stripe_id);
	values[Anum_stripe_first_row - 1] = Int64GetDatum((int64) s->first_rownum);
	values[Anum_stripe_row_count - 1] = Int64GetDatum((int64) s->row_count);
	values[Anum_stripe_start_block - 1] = Int64GetDatum((int64) s->start_block);
	values[Anum_stripe_block_count - 1] = Int64GetDatum((int64) s->nblocks);
	values[Anum_stripe_data_bytes - 1] = Int64GetDatum((int64) s->data_bytes);
	values[Anum_stripe_dir_offset - 1] = Int64GetDatum((int64) s->dir_offset);
	values[Anum_stripe_dir_bytes - 1] = Int64GetDatum((int64) s->dir_bytes);
	values[Anum_stripe_row_groups - 1] = Int32GetDatum((int32) s->n_row_groups);
	values[Anum_stripe_columns - 1] = Int32GetDatum((int32) s->natts);
	values[Anum_stripe_flags - 1] = Int32GetDatum((int32) s->flags);
	values[Anum_stripe_reserved_rows - 1] = Int64GetDatum((int64) s->reserved_rows);

	return heap_form_tuple(RelationGetDescr(rel), values, nulls);
}

static void
deform_stripe_tuple(Relation rel, HeapTuple tup, TesseraStripe *s)
{
	Datum		values[Natts_stripe];
	bool		nulls[Natts_stripe];

	if (RelationGetDescr(rel)->natts != Natts_stripe)
		elog(ERROR, "tessera_internal.stripe has %d columns, expected %d",
			 RelationGetDescr(rel)->natts, Natts_stripe);
	heap_deform_tuple(tup, RelationGetDescr(rel), values, nulls);
	for (int i = 0; i < Natts_stripe; i++)
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("tessera_internal.stripe has a NULL in column %d", i + 1)));

	s->storage_id = (uint64) DatumGetInt64(values[Anum_stripe_storage_id - 1]);
	s->stripe_id = (uint64) DatumGetInt64(values[Anum_stripe_stripe_id - 1]);
	s->first_rownum = (uint64) DatumGetInt64(values[Anum_stripe_first_row - 1]);
	s->row_count = (uint64) DatumGetInt64(values[Anum_stripe_row_count - 1]);
	s->start_block = (BlockNumber) DatumGetInt64(values[Anum_stripe_start_block - 1]);
	s->nblocks = (BlockNumber) DatumGetInt64(values[Anum_stripe_block_count - 1]);
	s->data_bytes = (uint64) DatumGetInt64(values[Anum_stripe_data_bytes - 1]);
	s->dir_offset = (uint64) DatumGetInt64(values[Anum_stripe_dir_offset - 1]);
	s->dir_bytes = (uint32) DatumGetInt64(values[Anum_stripe_dir_bytes - 1]);
	s->n_row_groups = (uint32) DatumGetInt32(values[Anum_stripe_row_groups - 1]);
	s->natts = (uint32) DatumGetInt32(values[Anum_stripe_columns - 1]);
	s->flags = (uint32) DatumGetInt32(values[Anum_stripe_flags - 1]);
	s->reserved_rows = (uint64) DatumGetInt64(values[Anum_stripe_reserved_rows - 1]);
	s->delta = NULL;			/* TesseraFetchDeltaBytes */
	s->catalog_tid = tup->t_self;
	s->xmin = HeapTupleHeaderGetXmin(tup->t_data);
	s->catalog_xmin = s->xmin;
	s->own = TransactionIdIsCurrentTransactionId(s->xmin);
	/* compacted rows were visible to every snapshot before they moved */
	if (s->flags & TESSERA_STRIPE_FROZEN)
	{
		s->xmin = FrozenTransactionId;
		s->own = false;
	}
}

/*
 * Mark relid as a rewrite target (pg_class.relrewrite = relid), in place,
 * as VACUUM updates relpages: logical decoding leaves out changes to such
 * relations (see tableam/logical.c).
 */
static void
mark_skipped_by_decoding(Oid relid)
{
	Relation	pg_class = table_open(RelationRelationId, RowExclusiveLock);
	ScanKeyData key;
	HeapTuple	tup;
	void	   *state;

	ScanKeyInit(&key, Anum_pg_class_oid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(relid));
	systable_inplace_update_begin(pg_class, ClassOidIndexId, true, NULL, 1, &key, &tup, &state);
	if (HeapTupleIsValid(tup))
	{
		Form_pg_class form = (Form_pg_class) GETSTRUCT(tup);

		if (form->relrewrite != relid)
		{
			form->relrewrite = relid;
			systable_inplace_update_finish(state, tup);
		}
		else
			systable_inplace_update_cancel(state);
		heap_freetuple(tup);
	}
	table_close(pg_class, RowExclusiveLock);
}

/*
 * Open catalog table name to write rows into it.  The extension script
 * marks tessera's catalog tables (and their TOAST tables) for logical
 * decoding to skip; pg_upgrade recreates them unmarked, so the first write
 * at wal_level = logical marks them again.
 */
static Relation
open_for_insert(const char *name)
{
	Relation	rel = table_open(TesseraInternalRelid(name, false), RowExclusiveLock);

	if (XLogLogicalInfoActive() && !OidIsValid(rel->rd_rel->relrewrite) &&
		!IsInParallelMode() && !RecoveryInProgress())
	{
		mark_skipped_by_decoding(RelationGetRelid(rel));
		if (OidIsValid(rel->rd_rel->reltoastrelid))
			mark_skipped_by_decoding(rel->rd_rel->reltoastrelid);
	}
	return rel;
}

/*
 * TesseraInsertStripe
 *		Insert a stripe row (a placeholder or, in parallel mode, a complete
 *		one) in the current subtransaction; fills catalog_tid.
 */
void
TesseraInsertStripe(TesseraStripe *stripe)
{
	Relation	rel = open_for_insert("stripe");
	HeapTuple	tup = form_stripe_tuple(rel, stripe);

	if (stripe->flags & TESSERA_STRIPE_FROZEN)
	{
		/*
		 * A rewrite (VACUUM FULL, CLUSTER) of rows every snapshot sees: the
		 * row is inserted frozen, so that snapshots older than the rewrite
		 * see the new storage's rows as they saw the old ones.  Nobody can
		 * reach the new storage before the rewrite commits; if it aborts,
		 * the storage is dropped and its id is never used again.
		 */
		Relation	idx = index_open(TesseraInternalRelid("stripe_first_row_idx", false),
									 RowExclusiveLock);
		IndexInfo  *ii = BuildIndexInfo(idx);
		Datum		key[2];
		bool		keynull[2] = {false, false};

		heap_insert(rel, tup, GetCurrentCommandId(true), HEAP_INSERT_FROZEN, NULL);
		key[0] = Int64GetDatum((int64) stripe->storage_id);
		key[1] = Int64GetDatum((int64) stripe->first_rownum);
		index_insert(idx, key, keynull, &tup->t_self, rel, UNIQUE_CHECK_NO, false, ii);
		index_close(idx, NoLock);
	}
	else
		CatalogTupleInsert(rel, tup);
	stripe->catalog_tid = tup->t_self;
	heap_freetuple(tup);
	table_close(rel, NoLock);
}

/*
 * TesseraCompleteStripe
 *		Fill in a placeholder inserted by this transaction, in place.
 */
void
TesseraCompleteStripe(TesseraStripe *stripe)
{
	Relation	rel = table_open(TesseraInternalRelid("stripe", false), RowExclusiveLock);
	HeapTuple	tup = form_stripe_tuple(rel, stripe);
	ItemPointer tid = &stripe->catalog_tid;
	HeapTupleData oldtup;
	Buffer		buf;
	Page		page;
	ItemId		lp;

	/*
	 * Our own placeholder, which nobody else changes, overwritten in place
	 * (a new version would leave a dead one per stripe written), as heap's
	 * in-place update does it and WAL-logs it.  Not through
	 * heap_inplace_lock: since 18 it refuses a row inserted by the running
	 * command, which a placeholder usually is.
	 */
	LockTuple(rel, tid, InplaceUpdateTupleLock);
	buf = ReadBuffer(rel, ItemPointerGetBlockNumber(tid));
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	page = BufferGetPage(buf);
	lp = PageGetItemId(page, ItemPointerGetOffsetNumber(tid));
	if (ItemPointerGetOffsetNumber(tid) > PageGetMaxOffsetNumber(page) || !ItemIdIsNormal(lp))
		elog(ERROR, "stripe catalog row (%u,%u) to complete is missing",
			 ItemPointerGetBlockNumber(tid), ItemPointerGetOffsetNumber(tid));
	oldtup.t_tableOid = RelationGetRelid(rel);
	oldtup.t_self = *tid;
	oldtup.t_data = (HeapTupleHeader) PageGetItem(page, lp);
	oldtup.t_len = ItemIdGetLength(lp);
	tup->t_self = *tid;
	/* checks the length, logs, writes, unlocks the buffer and the row */
	heap_inplace_update_and_unlock(rel, &oldtup, tup, buf);
	ReleaseBuffer(buf);
	heap_freetuple(tup);
	table_close(rel, NoLock);
}

/*
 * TesseraInsertDeltaBytes
 *		Store the bytes of a small stripe in tessera_internal.delta, in the
 *		current subtransaction (which must be the one that inserted the
 *		stripe's placeholder: the bytes live and die with the rows).  The
 *		caller then completes the placeholder in place, flagged as a delta
 *		stripe with no pages.
 */
void
TesseraInsertDeltaBytes(const TesseraStripe *stripe, const char *data, Size len)
{
	Relation	rel = open_for_insert("delta");
	bytea	   *bytes = palloc(VARHDRSZ + len);
	Datum		values[Natts_delta];
	bool		nulls[Natts_delta] = {false, false, false};
	HeapTuple	tup;

	SET_VARSIZE(bytes, VARHDRSZ + len);
	memcpy(VARDATA(bytes), data, len);
	values[Anum_delta_storage_id - 1] = Int64GetDatum((int64) stripe->storage_id);
	values[Anum_delta_stripe_id - 1] = Int64GetDatum((int64) stripe->stripe_id);
	values[Anum_delta_bytes - 1] = PointerGetDatum(bytes);
	tup = heap_form_tuple(RelationGetDescr(rel), values, nulls);
	CatalogTupleInsert(rel, tup);
	heap_freetuple(tup);
	pfree(bytes);
	table_close(rel, NoLock);
}

/*
 * Catalog scans.
 *
 * The stripe and delta catalogs are ordinary heap tables.  Read with an
 * MVCC snapshot under SERIALIZABLE, they would get SIRead locks on their
 * pages and rows, and every write to any tessera table writes them: two
 * transactions on unrelated tables would fail each other.  SSI of a
 * tessera table is done on the table itself (its scans lock the relation,
 * its fetches the TID, and readers report the inserters and deleters they
 * read around), so an MVCC snapshot reads the catalog through a SnapshotAny
 * scan, which SSI ignores, with the snapshot's visibility applied to each
 * row here.  A dirty snapshot reads with a copy of its own: a dirty
 * snapshot reports the running inserter or deleter of what it saw in its
 * xmin and xmax, which callers read as the state of the table row they
 * asked about, and a running compaction must not show as the inserter of
 * rows it only moves.
 *
 * Nor is a dirty snapshot applied by the index scan itself: a compaction
 * or fold that commits between the scan's reading of an index page and
 * its fetching of the rows there deletes the old stripes' rows (invisible
 * to a dirty snapshot once committed) after the scan passed the place
 * where their replacement's entry went, and the scan sees neither: the
 * moved rows are missing from a dirty table scan (logical replication's
 * REPLICA IDENTITY FULL apply lost updates so).  So a dirty snapshot reads
 * the catalog as a fresh MVCC snapshot sees it -- one consistent set of
 * stripes, each existing before the scan began -- plus what the dirty
 * snapshot sees beyond it from transactions that are not rewrites
 * (running writers' stripes and placeholders, stripes committed since).
 * A rewrite's new rows are only ever seen together with the deletion of
 * the rows they replace.  Every scan of either catalog goes through these.
 */
typedef struct CatalogScan
{
	ScanKeyData key[2];
	Relation	index;			/* ordered scans only */
	SysScanDesc scan;
	Snapshot	mvcc;			/* applied row by row, or NULL */
	bool		dirty_mode;		/* mvcc is a registered fresh snapshot,
								 * extended by dirty */
	bool		stripes;		/* scanning the stripe catalog */
	SnapshotData dirty;
} CatalogScan;

/* The two catalogs' indexes, and the column each has after storage_id. */
typedef enum CatalogIndex
{
	STRIPE_BY_FIRST_ROW,		/* stripe_first_row_idx (storage_id, first_row) */
	DELTA_BY_STRIPE				/* delta_stripe_idx (storage_id, stripe_id) */
} CatalogIndex;

/*
 * Begin a scan of catalog rel (open) through one of its indexes: the rows
 * of storage_id, and with a strategy other than InvalidStrategy only those
 * whose second index column compares so with value.  ordered: in index
 * order (then either direction).
 */
static void
catalog_scan_begin(CatalogScan *cs, Relation rel, CatalogIndex which, bool ordered,
				   Snapshot snapshot, uint64 storage_id, StrategyNumber strategy, uint64 value)
{
	Oid			indexid = TesseraInternalRelid(which == STRIPE_BY_FIRST_ROW ?
											   "stripe_first_row_idx" : "delta_stripe_idx",
											   false);
	Snapshot	scan_snapshot = snapshot;
	int			nkeys = 1;

	/* heap attribute numbers: the scan maps them to index columns */
	ScanKeyInit(&cs->key[0], which == STRIPE_BY_FIRST_ROW ? Anum_stripe_storage_id :
				Anum_delta_storage_id, BTEqualStrategyNumber, F_INT8EQ,
				Int64GetDatum((int64) storage_id));
	if (strategy != InvalidStrategy)
	{
		RegProcedure proc = strategy == BTEqualStrategyNumber ? F_INT8EQ :
			strategy == BTLessEqualStrategyNumber ? F_INT8LE : F_INT8GT;

		Assert(strategy == BTEqualStrategyNumber || strategy == BTLessEqualStrategyNumber ||
			   strategy == BTGreaterStrategyNumber);
		ScanKeyInit(&cs->key[1], which == STRIPE_BY_FIRST_ROW ? Anum_stripe_first_row :
					Anum_delta_stripe_id, strategy, proc, Int64GetDatum((int64) value));
		nkeys = 2;
	}
	cs->mvcc = NULL;
	cs->index = NULL;
	cs->dirty_mode = false;
	cs->stripes = which == STRIPE_BY_FIRST_ROW;
	if (snapshot != NULL && IsMVCCSnapshot(snapshot))
	{
		cs->mvcc = snapshot;
		scan_snapshot = SnapshotAny;
	}
	else if (snapshot != NULL && snapshot->snapshot_type == SNAPSHOT_DIRTY)
	{
		InitDirtySnapshot(cs->dirty);
		scan_snapshot = &cs->dirty;
		/* no fresh snapshot can be taken in parallel mode (nor is one needed: no writes) */
		if (!IsInParallelMode())
		{
			/* registered: rows it sees cannot be pruned away under the scan */
			cs->mvcc = RegisterSnapshot(GetLatestSnapshot());
			cs->dirty_mode = true;
			scan_snapshot = SnapshotAny;
		}
	}
	if (ordered)
	{
		cs->index = index_open(indexid, AccessShareLock);
		cs->scan = systable_beginscan_ordered(rel, cs->index, scan_snapshot, nkeys, cs->key);
	}
	else
		cs->scan = systable_beginscan(rel, indexid, true, scan_snapshot, nkeys, cs->key);
}

/*
 * Is a catalog row the fresh snapshot does not see a stripe written by
 * another transaction's rewrite (compaction, fold, move)?  Those are
 * frozen; so is a COPY FREEZE's stripe, which no other transaction can
 * reach before it commits.
 */
static bool
catalog_row_is_rewrite(CatalogScan *cs, HeapTuple tup)
{
	TupleDesc	desc;
	bool		isnull;
	Datum		flags;

	if (!cs->stripes ||
		TransactionIdIsCurrentTransactionId(HeapTupleHeaderGetXmin(tup->t_data)))
		return false;
	desc = RelationGetDescr(cs->scan->heap_rel);
	flags = heap_getattr(tup, Anum_stripe_flags, desc, &isnull);
	return !isnull && (DatumGetInt32(flags) & TESSERA_STRIPE_FROZEN) != 0;
}

static HeapTuple
catalog_scan_next(CatalogScan *cs, ScanDirection dir)
{
	for (;;)
	{
		HeapTuple	tup = cs->index ? systable_getnext_ordered(cs->scan, dir) :
			systable_getnext(cs->scan);
		Buffer		buf;
		bool		visible;

		if (!HeapTupleIsValid(tup) || cs->mvcc == NULL)
			return tup;
		buf = ((BufferHeapTupleTableSlot *) cs->scan->slot)->buffer;
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		visible = HeapTupleSatisfiesVisibility(tup, cs->mvcc, buf);
		if (!visible && cs->dirty_mode)
			visible = HeapTupleSatisfiesVisibility(tup, &cs->dirty, buf) &&
				!catalog_row_is_rewrite(cs, tup);
		LockBuffer(buf, BUFFER_LOCK_UNLOCK);
		if (visible)
			return tup;
	}
}

static void
catalog_scan_end(CatalogScan *cs)
{
	if (cs->dirty_mode)
		UnregisterSnapshot(cs->mvcc);
	if (cs->index)
	{
		systable_endscan_ordered(cs->scan);
		index_close(cs->index, AccessShareLock);
	}
	else
		systable_endscan(cs->scan);
}

/* The delta row of a stripe, whatever its visibility (they never change). */
static bool
find_delta_row(Relation rel, uint64 storage_id, uint64 stripe_id, Datum *bytes,
			   ItemPointer tid)
{
	CatalogScan scan;
	HeapTuple	tup;
	bool		found = false;

	catalog_scan_begin(&scan, rel, DELTA_BY_STRIPE, false, SnapshotAny, storage_id,
					   BTEqualStrategyNumber, stripe_id);
	while (HeapTupleIsValid(tup = catalog_scan_next(&scan, ForwardScanDirection)))
	{
		bool		isnull;
		Datum		d = heap_getattr(tup, Anum_delta_bytes, RelationGetDescr(rel), &isnull);

		if (isnull)
			continue;
		if (bytes)
			*bytes = PointerGetDatum(PG_DETOAST_DATUM_COPY(d));
		if (tid)
			*tid = tup->t_self;
		found = true;
		/* a deleted copy is as good as a live one, but prefer the live one */
		if (HeapTupleHeaderGetRawXmax(tup->t_data) == InvalidTransactionId)
			break;
	}
	catalog_scan_end(&scan);
	return found;
}

/*
 * TesseraOpenDelta / TesseraCloseDelta
 *		tessera_internal.delta, for callers that fetch from it repeatedly.
 */
Relation
TesseraOpenDelta(void)
{
	return table_open(TesseraInternalRelid("delta", false), AccessShareLock);
}

void
TesseraCloseDelta(Relation delta)
{
	table_close(delta, AccessShareLock);
}

/*
 * TesseraFetchDeltaBytes
 *		Read the bytes of a delta stripe into stripe->delta, in the current
 *		memory context.  delta may be NULL (opened here).  The row is still
 *		there: whoever sees the stripe's catalog row keeps it from being
 *		vacuumed away, as both are deleted together.
 */
void
TesseraFetchDeltaBytes(Relation delta, TesseraStripe *stripe)
{
	Relation	rel = delta ? delta : TesseraOpenDelta();
	Datum		bytes;

	if (!find_delta_row(rel, stripe->storage_id, stripe->stripe_id, &bytes, NULL))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("bytes of delta stripe " UINT64_FORMAT " of storage " UINT64_FORMAT
						" are missing from tessera_internal.delta",
						stripe->stripe_id, stripe->storage_id)));
	stripe->delta = (struct varlena *) DatumGetPointer(bytes);
	if (delta == NULL)
		TesseraCloseDelta(rel);
}

/*
 * TesseraReplaceStripes
 *		Compaction: delete the catalog rows of old_stripes and insert the
 *		merged stripe that now holds their rows, in the current transaction.
 */
void
TesseraReplaceStripes(List *old_stripes, TesseraStripe *merged)
{
	Relation	rel = table_open(TesseraInternalRelid("stripe", false), RowExclusiveLock);
	ListCell   *lc;
	HeapTuple	tup;

	Relation	delta = table_open(TesseraInternalRelid("delta", false), RowExclusiveLock);

	foreach(lc, old_stripes)
	{
		TesseraStripe *s = lfirst(lc);
		ItemPointerData tid;

		CatalogTupleDelete(rel, &s->catalog_tid);
		if ((s->flags & TESSERA_STRIPE_DELTA) &&
			find_delta_row(delta, s->storage_id, s->stripe_id, NULL, &tid))
			CatalogTupleDelete(delta, &tid);
	}
	table_close(delta, NoLock);
	tup = form_stripe_tuple(rel, merged);
	CatalogTupleInsert(rel, tup);
	merged->catalog_tid = tup->t_self;
	heap_freetuple(tup);
	table_close(rel, NoLock);
}

static int
stripe_cmp(const ListCell *a, const ListCell *b)
{
	const TesseraStripe *sa = lfirst(a);
	const TesseraStripe *sb = lfirst(b);

	if (sa->first_rownum != sb->first_rownum)
		return sa->first_rownum < sb->first_rownum ? -1 : 1;
	return 0;
}

/* Is the stripe the new version written by a running rewrite of another transaction? */
static bool
rewrite_in_progress(const TesseraStripe *s)
{
	return (s->flags & TESSERA_STRIPE_FROZEN) &&
		!TransactionIdIsCurrentTransactionId(s->catalog_xmin) &&
		TransactionIdIsInProgress(s->catalog_xmin);
}

/*
 * TesseraListStripes
 *		Complete stripes of a storage visible to snapshot, in row number
 *		order, palloc'd in the current memory context; without the delta
 *		stripes' bytes (a scan fetches them one stripe at a time).
 */
List *
TesseraListStripes(uint64 storage_id, Snapshot snapshot)
{
	List	   *rows = TesseraListCatalogRows(storage_id, snapshot, false);
	List	   *result = NIL;
	TesseraStripe *prev = NULL;
	ListCell   *lc;

	/*
	 * A dirty snapshot read in parallel mode (no fresh snapshot there: see
	 * CatalogScan) sees the stripes a running compaction or VACUUM fold is
	 * replacing and the stripe replacing them, which hold the same rows:
	 * keep the old ones (the new one starts where the first of them does,
	 * and a list sorted by row number may hold it before or after that
	 * one).  Other snapshots see one or the other, never both.
	 */
	foreach(lc, rows)
	{
		TesseraStripe *s = lfirst(lc);

		if (prev != NULL && s->first_rownum < prev->first_rownum + prev->row_count)
		{
			if (rewrite_in_progress(s))
				continue;
			if (rewrite_in_progress(prev))
				result = list_delete_last(result);
		}
		result = lappend(result, s);
		prev = s;
	}
	list_free(rows);
	return result;
}

/*
 * TesseraListCatalogRows
 *		Catalog rows of a storage visible to snapshot, placeholders too if
 *		asked, in row number order.  Delta stripes come without their bytes
 *		(TesseraFetchDeltaBytes).
 */
List *
TesseraListCatalogRows(uint64 storage_id, Snapshot snapshot, bool placeholders)
{
	Relation	rel = table_open(TesseraInternalRelid("stripe", false), AccessShareLock);
	CatalogScan scan;
	HeapTuple	tup;
	List	   *result = NIL;

	catalog_scan_begin(&scan, rel, STRIPE_BY_FIRST_ROW, false, snapshot, storage_id,
					   InvalidStrategy, 0);
	while (HeapTupleIsValid(tup = catalog_scan_next(&scan, ForwardScanDirection)))
	{
		TesseraStripe *s = palloc(sizeof(TesseraStripe));

		deform_stripe_tuple(rel, tup, s);
		/* those who ask for placeholders check them (compaction, verify) */
		if (s->row_count == 0 && !placeholders && (s->nblocks != 0 || s->dir_bytes != 0))
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("corrupt stripe catalog row: stripe " UINT64_FORMAT " of tessera storage " UINT64_FORMAT " says it holds no rows but lists pages",
							s->stripe_id, s->storage_id),
					 errhint("tessera.verify() checks a table's catalog rows and pages.")));
		if (s->row_count == 0 && !placeholders)
		{
			pfree(s);
			continue;
		}
		result = lappend(result, s);
	}
	catalog_scan_end(&scan);
	table_close(rel, AccessShareLock);

	list_sort(result, stripe_cmp);
	return result;
}

/*
 * TesseraFindStripe
 *		The complete stripe visible to snapshot that holds rownum.
 */
bool
TesseraFindStripe(uint64 storage_id, uint64 rownum, Snapshot snapshot,
				  TesseraStripe *result)
{
	Relation	rel = table_open(TesseraInternalRelid("stripe", false), AccessShareLock);
	CatalogScan scan;
	HeapTuple	tup;
	bool		found = false;
	TesseraStripe placeholder;
	bool		have_placeholder = false;

	catalog_scan_begin(&scan, rel, STRIPE_BY_FIRST_ROW, true, snapshot, storage_id,
					   BTLessEqualStrategyNumber, rownum);

	while (HeapTupleIsValid(tup = catalog_scan_next(&scan, BackwardScanDirection)))
	{
		deform_stripe_tuple(rel, tup, result);
		/* (a placeholder kept aside is the answer unless its complete row follows) */
		if (have_placeholder && result->first_rownum != placeholder.first_rownum)
			break;
		if (result->row_count == 0)
		{
			/*
			 * A stripe still being written by a running transaction: a
			 * dirty snapshot must learn about its rows (unique checks wait
			 * for the inserter, as for an in-progress heap insert).  Unless
			 * its complete row is next: one written in parallel mode is a
			 * complete row beside its placeholder (same first row).
			 */
			if (snapshot->snapshot_type == SNAPSHOT_DIRTY && !result->own &&
				rownum < result->first_rownum + result->reserved_rows && !have_placeholder)
			{
				placeholder = *result;
				have_placeholder = true;
			}
			continue;
		}
		found = rownum < result->first_rownum + result->row_count;
		have_placeholder = false;
		break;
	}
	if (have_placeholder)
	{
		*result = placeholder;
		found = true;
	}
	catalog_scan_end(&scan);
	table_close(rel, AccessShareLock);
	return found;
}

/*
 * TesseraFindReservation
 *		The catalog row, complete stripe or placeholder, whatever its
 *		visibility, whose row numbers (written or reserved) include rownum.
 */
bool
TesseraFindReservation(uint64 storage_id, uint64 rownum, TesseraStripe *result)
{
	Relation	rel = table_open(TesseraInternalRelid("stripe", false), AccessShareLock);
	CatalogScan scan;
	HeapTuple	tup;
	bool		found = false;

	catalog_scan_begin(&scan, rel, STRIPE_BY_FIRST_ROW, true, SnapshotAny, storage_id,
					   BTLessEqualStrategyNumber, rownum);
	while (HeapTupleIsValid(tup = catalog_scan_next(&scan, BackwardScanDirection)))
	{
		TesseraStripe cand;
		TransactionId deleter = HeapTupleHeaderGetUpdateXid(tup->t_data);

		/*
		 * Skip rows a committed transaction deleted: stripes a compaction
		 * replaced (the stripe holding their rows now comes next) or a
		 * TRUNCATE dropped.  Their delta bytes may be gone already.
		 */
		if (!(tup->t_data->t_infomask & HEAP_XMAX_INVALID) &&
			!HEAP_XMAX_IS_LOCKED_ONLY(tup->t_data->t_infomask) &&
			TransactionIdIsValid(deleter) && !TransactionIdIsCurrentTransactionId(deleter) &&
			!TransactionIdIsInProgress(deleter) && TransactionIdDidCommit(deleter))
			continue;

		deform_stripe_tuple(rel, tup, &cand);
		/* past the rows of the reservation found: it is the answer */
		if (found && cand.first_rownum != result->first_rownum)
			break;
		if (rownum < cand.first_rownum + Max(cand.row_count, cand.reserved_rows))
		{
			/*
			 * A stripe written in parallel mode (the leader's buffered rows,
			 * flushed as a parallel index build starts) is a complete row
			 * beside its placeholder, which could not be completed in place:
			 * same first row, so either may come first (heap order).  The
			 * complete one is the answer; a placeholder only if it is alone.
			 */
			if (!found || result->row_count == 0)
				*result = cand;
			found = true;
			if (cand.row_count > 0)
				break;
		}
	}
	catalog_scan_end(&scan);
	table_close(rel, AccessShareLock);
	return found;
}

/*
 * TesseraMarkStripePages
 *		Set used[] for the pages of every catalog row of the storage that a
 *		snapshot may still read: all but those inserted by transactions that
 *		aborted and those deleted by transactions that committed before
 *		oldest_xmin (whose newest *newest_gone gets, for standby conflicts).
 *		Placeholders of running writers have no pages yet; the caller holds
 *		AccessExclusiveLock, so there are none.
 */
void
TesseraMarkStripePages(uint64 storage_id, TransactionId oldest_xmin, bool *used,
					   BlockNumber nblocks, TransactionId *newest_gone)
{
	Relation	rel = table_open(TesseraInternalRelid("stripe", false), AccessShareLock);
	CatalogScan scan;
	HeapTuple	tup;

	*newest_gone = InvalidTransactionId;
	catalog_scan_begin(&scan, rel, STRIPE_BY_FIRST_ROW, false, SnapshotAny, storage_id,
					   InvalidStrategy, 0);
	while (HeapTupleIsValid(tup = catalog_scan_next(&scan, ForwardScanDirection)))
	{
		HeapTupleHeader h = tup->t_data;
		TransactionId xmin = HeapTupleHeaderGetXmin(h);
		TesseraStripe s;
		bool		gone = false;

		if (!HeapTupleHeaderXminFrozen(h) && TransactionIdIsNormal(xmin) &&
			!TransactionIdIsCurrentTransactionId(xmin) &&
			!TransactionIdIsInProgress(xmin) && !TransactionIdDidCommit(xmin))
			gone = true;		/* its writer aborted (or crashed) */
		else if (!(h->t_infomask & HEAP_XMAX_INVALID) &&
				 !HEAP_XMAX_IS_LOCKED_ONLY(h->t_infomask))
		{
			TransactionId xmax = HeapTupleHeaderGetUpdateXid(h);

			if (TransactionIdIsNormal(xmax) && !TransactionIdIsCurrentTransactionId(xmax) &&
				!TransactionIdIsInProgress(xmax) && TransactionIdDidCommit(xmax) &&
				TransactionIdPrecedes(xmax, oldest_xmin))
			{
				gone = true;
				if (!TransactionIdIsValid(*newest_gone) ||
					TransactionIdFollows(xmax, *newest_gone))
					*newest_gone = xmax;
			}
		}
		if (gone)
			continue;
		deform_stripe_tuple(rel, tup, &s);
		if (s.flags & TESSERA_STRIPE_DELTA)
			continue;
		for (BlockNumber b = s.start_block; b < s.start_block + s.nblocks && b < nblocks; b++)
			used[b] = true;
	}
	catalog_scan_end(&scan);
	table_close(rel, AccessShareLock);
}

/*
 * TesseraFindHole
 *		rownum is held by no catalog row: the range around it that no
 *		catalog row holds, [*lo, *hi), bounded above by a later catalog row.
 *		False if no catalog row follows it.  Row numbers are handed out in
 *		order and a placeholder is inserted before any of its rows is, and
 *		only an aborted placeholder can vanish (pruned), so such a hole
 *		held only rows of aborted transactions and stays empty forever.
 */
bool
TesseraFindHole(uint64 storage_id, uint64 rownum, uint64 *lo, uint64 *hi)
{
	Relation	rel = table_open(TesseraInternalRelid("stripe", false), AccessShareLock);
	CatalogScan scan;
	HeapTuple	tup;
	TesseraStripe s;
	bool		found = false;

	*lo = 0;
	catalog_scan_begin(&scan, rel, STRIPE_BY_FIRST_ROW, true, SnapshotAny, storage_id,
					   BTLessEqualStrategyNumber, rownum);
	/* reservations do not overlap: the last one before rownum ends the highest */
	if (HeapTupleIsValid(tup = catalog_scan_next(&scan, BackwardScanDirection)))
	{
		deform_stripe_tuple(rel, tup, &s);
		*lo = s.first_rownum + Max(s.row_count, s.reserved_rows);
	}
	catalog_scan_end(&scan);

	catalog_scan_begin(&scan, rel, STRIPE_BY_FIRST_ROW, true, SnapshotAny, storage_id,
					   BTGreaterStrategyNumber, rownum);
	if (HeapTupleIsValid(tup = catalog_scan_next(&scan, ForwardScanDirection)))
	{
		deform_stripe_tuple(rel, tup, &s);
		*hi = s.first_rownum;
		found = *lo <= rownum && rownum < *hi;
	}
	catalog_scan_end(&scan);
	table_close(rel, AccessShareLock);
	return found;
}

/*
 * TesseraCountRows
 *		Rows in the complete stripes visible to snapshot.
 */
uint64
TesseraCountRows(uint64 storage_id, Snapshot snapshot)
{
	List	   *stripes = TesseraListCatalogRows(storage_id, snapshot, false);
	ListCell   *lc;
	uint64		n = 0;

	foreach(lc, stripes)
		n += ((TesseraStripe *) lfirst(lc))->row_count;
	list_free_deep(stripes);
	return n;
}

/*
 * TesseraCatalogBytes
 *		Bytes the catalog rows of a storage visible to snapshot take in the
 *		catalog's pages (tuples and line pointers; delta bytes moved to
 *		TOAST counted at their stored size).
 */
uint64
TesseraCatalogBytes(uint64 storage_id, Snapshot snapshot)
{
	Relation	rel = table_open(TesseraInternalRelid("stripe", false), AccessShareLock);
	CatalogScan scan;
	HeapTuple	tup;
	uint64		bytes = 0;

	catalog_scan_begin(&scan, rel, STRIPE_BY_FIRST_ROW, false, snapshot, storage_id,
					   InvalidStrategy, 0);
	while (HeapTupleIsValid(tup = catalog_scan_next(&scan, ForwardScanDirection)))
		bytes += MAXALIGN(tup->t_len) + sizeof(ItemIdData);
	catalog_scan_end(&scan);
	table_close(rel, AccessShareLock);

	rel = table_open(TesseraInternalRelid("delta", false), AccessShareLock);
	catalog_scan_begin(&scan, rel, DELTA_BY_STRIPE, false, snapshot, storage_id,
					   InvalidStrategy, 0);
	while (HeapTupleIsValid(tup = catalog_scan_next(&scan, ForwardScanDirection)))
	{
		bool		isnull;
		Datum		d = heap_getattr(tup, Anum_delta_bytes, RelationGetDescr(rel), &isnull);

		bytes += MAXALIGN(tup->t_len) + sizeof(ItemIdData);
		if (!isnull && VARATT_IS_EXTERNAL_ONDISK(DatumGetPointer(d)))
			bytes += toast_datum_size(d);
	}
	catalog_scan_end(&scan);
	table_close(rel, AccessShareLock);
	return bytes;
}

/*
 * TesseraDeleteStripes
 *		Delete every catalog row of a storage (its relfilenode is being
 *		dropped or replaced by this transaction).  Transactional.
 */
void
TesseraDeleteStripes(uint64 storage_id)
{
	static const struct
	{
		const char *table;
		const char *index;
		CatalogIndex which;
	}			catalogs[] = {
		{"stripe", "stripe_first_row_idx", STRIPE_BY_FIRST_ROW},
		{"delta", "delta_stripe_idx", DELTA_BY_STRIPE}
	};

	/*
	 * Stripes written by this very command must be visible to the delete:
	 * ON COMMIT DELETE ROWS truncates right after the pre-commit flush wrote
	 * the transaction's last stripes.
	 */
	CommandCounterIncrement();

	for (int i = 0; i < lengthof(catalogs); i++)
	{
		Oid			relid = TesseraInternalRelid(catalogs[i].table, true);
		Relation	rel;
		CatalogScan scan;
		HeapTuple	tup;

		/* DROP EXTENSION ... CASCADE may have dropped the catalog first */
		if (!OidIsValid(relid) || !OidIsValid(TesseraInternalRelid(catalogs[i].index, true)))
			return;
		rel = table_open(relid, RowExclusiveLock);
		catalog_scan_begin(&scan, rel, catalogs[i].which, false, SnapshotSelf, storage_id,
						   InvalidStrategy, 0);
		while (HeapTupleIsValid(tup = catalog_scan_next(&scan, ForwardScanDirection)))
			simple_heap_delete(rel, &tup->t_self);
		catalog_scan_end(&scan);
		table_close(rel, NoLock);
	}
}

/*
 * TesseraConcurrentInserters
 *		Transactions whose stripes of this storage the MVCC snapshot does not
 *		see although they committed or are running: serializable readers
 *		have read around them (rw-conflicts out).  Returns a palloc'd array.
 */
int
TesseraConcurrentInserters(uint64 storage_id, Snapshot snapshot, TransactionId **xids)
{
	Relation	rel = table_open(TesseraInternalRelid("stripe", false), AccessShareLock);
	CatalogScan scan;
	HeapTuple	tup;
	int			n = 0,
				cap = 8;
	SnapshotData dirty;

	*xids = palloc(sizeof(TransactionId) * cap);
	InitDirtySnapshot(dirty);
	catalog_scan_begin(&scan, rel, STRIPE_BY_FIRST_ROW, false, &dirty, storage_id,
					   InvalidStrategy, 0);
	while (HeapTupleIsValid(tup = catalog_scan_next(&scan, ForwardScanDirection)))
	{
		TransactionId xmin = HeapTupleHeaderGetXmin(tup->t_data);

		if (TransactionIdIsCurrentTransactionId(xmin) ||
			!XidInMVCCSnapshot(xmin, snapshot))
			continue;
		if (n == cap)
		{
			cap *= 2;
			*xids = repalloc(*xids, sizeof(TransactionId) * cap);
		}
		(*xids)[n++] = xmin;
	}
	catalog_scan_end(&scan);
	table_close(rel, AccessShareLock);
	return n;
}
