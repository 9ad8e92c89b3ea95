/*-------------------------------------------------------------------------
 *
 * ddl.c
 *	  Storage lifecycle of a tessera relation: new relfilenodes, truncation,
 *	  tablespace moves, rewrites (VACUUM FULL, CLUSTER, ALTER TABLE), size
 *	  and row estimates.
 *
 * NOTES
 *	  A new relfilenode gets a new storage id (a sequence value) written
 *	  into its metapage; the stripe catalog is keyed by it.  When a
 *	  relfilenode replaces another (TRUNCATE, rewrites), the catalog rows of
 *	  the old storage are deleted in the same transaction, so a rollback
 *	  brings back both the old file and its stripes; rows this backend still
 *	  buffers for the old storage are dropped with it when the replacement
 *	  cannot be undone, and kept otherwise.
 *
 *	  A rewrite copies the rows its snapshot sees.  When every stripe was
 *	  inserted before every running snapshot and no deletion is recent
 *	  enough for one to miss, the new stripes are written frozen, so older
 *	  snapshots see the new storage's rows as they saw the old ones;
 *	  otherwise the rewrite's own transaction inserts them, as heap's does.
 *
 *	  Stripe pages hold no transaction ids; row states of changed rows do,
 *	  so relfrozenxid starts like heap's and VACUUM (vacuum.c) advances it.
 *	  The stripe catalog rows are ordinary heap tuples, vacuumed and frozen
 *	  as such.
 *
 *	  Size estimates report the pages the decoded rows would fill, not the
 *	  compressed pages: what a scan costs is decoding.  A table never
 *	  vacuumed or analyzed gets heap's guess of at least 10 pages, so that
 *	  the planner treats new tables of both access methods alike.
 *
 * IDENTIFICATION
 *	  src/tableam/ddl.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/genam.h"
#include "access/heapam.h"
#include "access/multixact.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "catalog/storage.h"
#include "catalog/storage_xlog.h"
#include "commands/progress.h"
#include "commands/vacuum.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "optimizer/plancat.h"
#include "pgstat.h"
#include "storage/procarray.h"
#include "storage/bufmgr.h"
#include "storage/smgr.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/tuplesort.h"

#include "tessera/catalog.h"
#include "tessera/reader.h"
#include "tessera/rowstate.h"
#include "tessera/shared_cache.h"
#include "tessera/storage.h"
#include "tessera/tableam.h"
#include "tessera/tessera.h"
#include "tessera/writer.h"

/*
 * Delete the catalog rows of rel's current storage (transactionally), and
 * forget its buffered rows if the replacement cannot be undone.
 */
static void
forget_current_storage(Relation rel, TesseraMeta *meta, bool discard_writes)
{
	if (discard_writes)
		TesseraDiscardWrites(&TesseraRelLocator(rel));
	memset(meta, 0, sizeof(TesseraMeta));
	if (!smgrexists(RelationGetSmgr(rel), MAIN_FORKNUM))
		return;
	TesseraReadMeta(rel, meta);
	if (meta->valid)
	{
		TesseraDeleteStripes(meta->storage_id);
		TesseraSharedCacheForget(MyDatabaseId, meta->storage_id);
	}
}

void
tessera_relation_set_new_filenode(Relation rel, const RelFileLocator *newrnode,
								  char persistence, TransactionId *freezeXid,
								  MultiXactId *minmulti)
{
	/*
	 * Row states of changed rows hold transaction ids and multixacts; VACUUM
	 * advances these as heap's does (vacuum.c).
	 */
	*freezeXid = RecentXmin;
	*minmulti = GetOldestMultiXactId();

	/*
	 * pg_upgrade restores the schema, then puts the old cluster's files in
	 * place of the new ones: those carry the metapage, and tessera's own
	 * catalog arrives the same way.  An empty file until then (a storage id
	 * now would come from a sequence pg_restore may not have created yet).
	 */
	if (IsBinaryUpgrade)
	{
		smgrclose(RelationCreateStorage(*newrnode, persistence, true));
		return;
	}

	/*
	 * Replacing an existing relfilenode (TRUNCATE, rewrite)?  Rows this
	 * transaction still buffers for the old one stay buffered under it: a
	 * savepoint rolled back brings the old storage back with them, and
	 * at commit, storage the table no longer has is not written.
	 */
	if (!RelFileLocatorEquals(*newrnode, TesseraRelLocator(rel)))
	{
		uint64		storage_id;

		/*
		 * TRUNCATE is how a damaged table is emptied: a metapage that cannot
		 * be read leaves its catalog rows behind (with a WARNING), it does
		 * not stop the new storage.
		 */
		if (TesseraReadStorageIdForDrop(rel, &storage_id))
		{
			TesseraDeleteStripes(storage_id);
			TesseraSharedCacheForget(MyDatabaseId, storage_id);
		}
	}
	TesseraCreateStorage(newrnode, rel->rd_backend, persistence, TesseraNextStorageId());
}

void
tessera_relation_nontransactional_truncate(Relation rel)
{
	TesseraMeta old;

	/*
	 * The relation (or this storage) was created in this subtransaction:
	 * its rows are ours, and a rollback takes the storage away with them.
	 */
	forget_current_storage(rel, &old, true);
	RelationTruncate(rel, 0);
	TesseraInitMetapage(rel, old.valid ? old.storage_id : TesseraNextStorageId(),
						old.next_rownum, old.next_stripe_id);
}

void
tessera_relation_copy_data(Relation rel, const RelFileLocator *newrnode)
{
	SMgrRelation dstrel;

	/* the copy is made below shared buffers: write out our rows first */
	TesseraFlushRelation(rel);
	FlushRelationBuffers(rel);

	dstrel = smgropen(*newrnode, rel->rd_backend);
	RelationCreateStorage(*newrnode, rel->rd_rel->relpersistence, true);
	RelationCopyStorage(RelationGetSmgr(rel), dstrel, MAIN_FORKNUM,
						rel->rd_rel->relpersistence);
	for (ForkNumber forkNum = MAIN_FORKNUM + 1; forkNum <= MAX_FORKNUM; forkNum++)
	{
		if (smgrexists(RelationGetSmgr(rel), forkNum))
		{
			smgrcreate(dstrel, forkNum, false);
			if (RelationIsPermanent(rel) ||
				(rel->rd_rel->relpersistence == RELPERSISTENCE_UNLOGGED &&
				 forkNum == INIT_FORKNUM))
				log_smgrcreate(newrnode, forkNum);
			RelationCopyStorage(RelationGetSmgr(rel), dstrel, forkNum,
								rel->rd_rel->relpersistence);
		}
	}
	/* the metapage, and with it the storage id, moved along */
	RelationDropStorage(rel);
	smgrclose(dstrel);
}

/*
 * VACUUM FULL and CLUSTER: copy every committed row into the new storage.
 * Nothing can write concurrently (AccessExclusiveLock), so a fresh MVCC
 * snapshot sees exactly the rows that exist.  When every snapshot sees
 * those same rows, they are written visible to all (frozen); otherwise as
 * rows of the rewriting transaction, which snapshots older than it do not
 * see.
 */
/* rewrite_all_visible: any row state of a deletion some snapshot may not see yet? */
static void
find_recent_deletes(Relation rel, BlockNumber blkno, uint64 first_rownum, void *arg)
{
	TransactionId OldestXmin = ((TransactionId *) arg)[0];
	bool	   *recent = (bool *) &((TransactionId *) arg)[1];
	TesseraRowState *entries;
	Buffer		buf = TesseraLockStatePage(rel, blkno, &entries);

	for (int i = 0; i < TESSERA_STATE_ROWS && !*recent; i++)
	{
		TesseraRowState *st = &entries[i];
		TransactionId upd;

		if (TesseraRowStateEmpty(st) || (st->infomask & TESSERA_RS_FROZEN_DELETED))
			continue;
		upd = TesseraRowUpdateXid(st);
		if (!TransactionIdIsValid(upd))
			continue;			/* only locked */
		if (TransactionIdIsCurrentTransactionId(upd) || TransactionIdIsInProgress(upd))
			*recent = true;
		else if (TransactionIdDidCommit(upd) && !TransactionIdPrecedes(upd, OldestXmin))
			*recent = true;
	}
	UnlockReleaseBuffer(buf);
}

/*
 * Does every snapshot see exactly the rows the latest one sees?  Then the
 * rewrite's rows can be visible to all, and a REPEATABLE READ snapshot
 * older than the rewrite reads the new storage as it read the old one.
 * True if every visible stripe was inserted before every running snapshot
 * and no deletion is recent enough for some snapshot to miss it.
 */
static bool
rewrite_all_visible(Relation rel, Snapshot snapshot, TransactionId OldestXmin)
{
	TesseraMeta meta;
	List	   *stripes;
	ListCell   *lc;
	bool		ok = true;
	TransactionId arg[2];

	if (!TransactionIdIsNormal(OldestXmin))
		return false;
	TesseraReadMeta(rel, &meta);
	if (!meta.valid)
		return true;
	stripes = TesseraListStripes(meta.storage_id, snapshot);
	foreach(lc, stripes)
	{
		TesseraStripe *s = lfirst(lc);

		if ((s->flags & TESSERA_STRIPE_FROZEN) || s->xmin == FrozenTransactionId)
			continue;
		if (s->own || !TransactionIdIsNormal(s->xmin) ||
			TransactionIdIsInProgress(s->xmin) || !TransactionIdDidCommit(s->xmin) ||
			!TransactionIdPrecedes(s->xmin, OldestXmin))
		{
			ok = false;
			break;
		}
	}
	list_free_deep(stripes);
	if (!ok)
		return false;
	arg[0] = OldestXmin;
	arg[1] = 0;
	TesseraForEachStatePage(rel, find_recent_deletes, arg);
	return *(bool *) &arg[1] == false;
}

/* Write the row in oldslot to NewTable; dropped columns become NULL. */
static void
copy_row(Relation NewTable, TupleTableSlot *oldslot, TupleTableSlot *newslot, CommandId cid)
{
	TupleDesc	newdesc = RelationGetDescr(NewTable);

	slot_getallattrs(oldslot);
	ExecClearTuple(newslot);
	for (int i = 0; i < newdesc->natts; i++)
	{
		if (TupleDescAttr(newdesc, i)->attisdropped)
		{
			newslot->tts_values[i] = (Datum) 0;
			newslot->tts_isnull[i] = true;
		}
		else
		{
			newslot->tts_values[i] = oldslot->tts_values[i];
			newslot->tts_isnull[i] = oldslot->tts_isnull[i];
		}
	}
	ExecStoreVirtualTuple(newslot);
	TesseraWriteRow(NewTable, newslot, cid);
}

void
tessera_relation_copy_for_cluster(Relation OldTable, Relation NewTable, Relation OldIndex,
								  bool use_sort, TransactionId OldestXmin,
								  TransactionId *xid_cutoff, MultiXactId *multi_cutoff,
								  double *num_tuples, double *tups_vacuumed,
								  double *tups_recently_dead)
{
	Snapshot	snapshot = RegisterSnapshot(GetLatestSnapshot());
	TableScanDesc scan = NULL;
	IndexScanDesc iscan = NULL;
	Tuplesortstate *sort = NULL;
	TupleTableSlot *oldslot = table_slot_create(OldTable, NULL);
	TupleTableSlot *newslot = table_slot_create(NewTable, NULL);
	TupleTableSlot *sortslot = NULL;
	CommandId	cid = GetCurrentCommandId(true);
	TupleDesc	olddesc = RelationGetDescr(OldTable);
	double		n = 0;

	Assert(olddesc->natts == RelationGetDescr(NewTable)->natts);

	if (rewrite_all_visible(OldTable, snapshot, OldestXmin))
		TesseraWriteFrozen(NewTable);

	/*
	 * The rows are those the latest snapshot sees: the command holds an
	 * AccessExclusiveLock, so no other transaction is writing the table.
	 * CLUSTER gives them in index order, either by sorting (what the planner
	 * prefers for large tables) or through an index scan.
	 */
	if (OldIndex != NULL && use_sort)
	{
		sort = tuplesort_begin_cluster(olddesc, OldIndex, maintenance_work_mem, NULL,
									   TUPLESORT_NONE);
		sortslot = MakeSingleTupleTableSlot(olddesc, &TTSOpsHeapTuple);
	}
	if (OldIndex != NULL && !use_sort)
	{
		pgstat_progress_update_param(PROGRESS_CLUSTER_PHASE,
									 PROGRESS_CLUSTER_PHASE_INDEX_SCAN_HEAP);
		iscan = TesseraIndexBeginscan(OldTable, OldIndex, snapshot, 0, 0);
		index_rescan(iscan, NULL, 0, NULL, 0);
	}
	else
	{
		pgstat_progress_update_param(PROGRESS_CLUSTER_PHASE,
									 PROGRESS_CLUSTER_PHASE_SEQ_SCAN_HEAP);
		scan = table_beginscan(OldTable, snapshot, 0, NULL);
	}

	for (;;)
	{
		CHECK_FOR_INTERRUPTS();
		if (iscan != NULL ? !index_getnext_slot(iscan, ForwardScanDirection, oldslot)
			: !table_scan_getnextslot(scan, ForwardScanDirection, oldslot))
			break;
		if (sort != NULL)
		{
			bool		shouldfree;
			HeapTuple	tuple = ExecFetchSlotHeapTuple(oldslot, false, &shouldfree);

			tuplesort_putheaptuple(sort, tuple);
			if (shouldfree)
				heap_freetuple(tuple);
			continue;
		}
		copy_row(NewTable, oldslot, newslot, cid);
		n += 1;
		pgstat_progress_update_param(PROGRESS_CLUSTER_HEAP_TUPLES_WRITTEN, (int64) n);
	}
	if (iscan != NULL)
		index_endscan(iscan);
	if (scan != NULL)
		table_endscan(scan);

	if (sort != NULL)
	{
		HeapTuple	tuple;

		pgstat_progress_update_param(PROGRESS_CLUSTER_PHASE,
									 PROGRESS_CLUSTER_PHASE_SORT_TUPLES);
		tuplesort_performsort(sort);
		pgstat_progress_update_param(PROGRESS_CLUSTER_PHASE,
									 PROGRESS_CLUSTER_PHASE_WRITE_NEW_HEAP);
		while ((tuple = tuplesort_getheaptuple(sort, true)) != NULL)
		{
			CHECK_FOR_INTERRUPTS();
			ExecStoreHeapTuple(tuple, sortslot, false);
			copy_row(NewTable, sortslot, newslot, cid);
			n += 1;
			pgstat_progress_update_param(PROGRESS_CLUSTER_HEAP_TUPLES_WRITTEN, (int64) n);
		}
		tuplesort_end(sort);
		ExecDropSingleTupleTableSlot(sortslot);
	}
	TesseraFlushRelation(NewTable);
	TesseraWriteFrozenEnd();

	ExecDropSingleTupleTableSlot(oldslot);
	ExecDropSingleTupleTableSlot(newslot);
	UnregisterSnapshot(snapshot);

	*num_tuples = n;
	*tups_vacuumed = 0;
	*tups_recently_dead = 0;
}

uint64
tessera_relation_size(Relation rel, ForkNumber forkNumber)
{
	uint64		physical = table_block_relation_size(rel, forkNumber);
	TesseraMeta meta;
	uint64		tid_blocks;

	/*
	 * For the main fork, the TID blocks the row numbers span: that is what
	 * RelationGetNumberOfBlocks means to its users (BRIN summarizes and
	 * scans TID block ranges up to it, ANALYZE samples that many blocks).
	 * The physical size is smgrnblocks (TesseraPhysicalBlocks), and
	 * pg_relation_size reads the files.
	 */
	if (forkNumber != MAIN_FORKNUM || physical == 0 || TesseraAnalyzeReadsBlocks())
		return physical;
	TesseraReadMeta(rel, &meta);
	if (!meta.valid)
		return physical;
	tid_blocks = (meta.next_rownum + TESSERA_TIDS_PER_BLOCK - 1) / TESSERA_TIDS_PER_BLOCK;

	/*
	 * Not the larger of the two: writing out buffered rows adds pages but
	 * not row numbers (they were taken when the rows were inserted), and
	 * ANALYZE counts blocks before its scan starts, which writes them.
	 */
	return tid_blocks * BLCKSZ;
}

bool
tessera_relation_needs_toast_table(Relation rel)
{
	/* large values are stored in stripes, never toasted */
	return false;
}

/*
 * Rows come from ANALYZE/VACUUM's density when known, else from the stripe
 * catalog.  Pages are not the physical ones: the planner sizes both the
 * cost of a scan and the number of parallel workers by pages, and what a
 * scan of tessera costs is decoding the rows, not reading the (compressed)
 * pages.  So report the pages the decoded rows would fill, never fewer
 * than the physical ones.
 */
void
tessera_relation_estimate_size(Relation rel, int32 *attr_widths, BlockNumber *pages,
							   double *tuples, double *allvisfrac)
{
	BlockNumber curpages = RelationGetNumberOfBlocks(rel);
	BlockNumber relpages = (BlockNumber) rel->rd_rel->relpages;
	double		reltuples = (double) rel->rd_rel->reltuples;
	double		ntuples;
	double		width;

	TesseraMeta meta;

	*allvisfrac = 0;

	/*
	 * Heap's estimate for a table never vacuumed or analyzed: at least 10
	 * pages, at the density its column widths give.  A new table is often
	 * loaded right after it is planned for (and plans are cached); the
	 * planner then chooses as it would for a heap table (index scans over
	 * sequential ones for a few rows, so SERIALIZABLE takes row locks
	 * rather than a lock on the whole table).
	 */
	if (relpages == 0 && !rel->rd_rel->relhassubclass)
	{
		double		est_pages;

		TesseraReadMeta(rel, &meta);
		ntuples = meta.valid ? (double) meta.next_rownum : 0;
		width = get_rel_data_width(rel, attr_widths) +
			MAXALIGN(SizeofHeapTupleHeader) + sizeof(ItemIdData);
		est_pages = Max((double) curpages, ceil(ntuples * width / BLCKSZ));
		if (est_pages < 10)
		{
			double		density = floor((BLCKSZ - SizeOfPageHeaderData) *
										(double) RelationGetFillFactor(rel, HEAP_DEFAULT_FILLFACTOR) /
										100 / width);

			*pages = 10;
			*tuples = rint(density * 10);
			return;
		}
	}

	TesseraReadMeta(rel, &meta);
	if (!meta.valid || meta.next_rownum == 0)
	{
		*pages = curpages;
		*tuples = 0;
		return;
	}
	if (reltuples >= 0 && relpages > 1)
	{
		/*
		 * Heap's extrapolation by page count, but capped by the row numbers
		 * handed out so far: pages are not proportional to rows here (state
		 * pages, aborted stripes and compression add pages without rows).
		 */
		ntuples = rint(reltuples / (relpages - 1) * (curpages - 1));
		ntuples = Min(ntuples, (double) meta.next_rownum);
	}
	else
	{
		/*
		 * Never counted, or no pages to extrapolate from (rows written by
		 * small transactions live in the delta, without pages): the row
		 * numbers handed out, which is cheap to know and counts deleted
		 * and aborted rows too, until VACUUM or ANALYZE count them.
		 */
		ntuples = (double) meta.next_rownum;
	}
	width = get_rel_data_width(rel, attr_widths) +
		MAXALIGN(SizeofHeapTupleHeader) + sizeof(ItemIdData);
	*tuples = ntuples;
	*pages = (BlockNumber) Min(Max((double) curpages, ceil(ntuples * width / BLCKSZ)),
							   (double) MaxBlockNumber);
}
