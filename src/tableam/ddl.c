/*-------------------------------------------------------------------------
 *
 * ddl.c
 *	  Storage lifecycle of a tessera relation: new relfilenodes, truncation,
 *	  tablespace moves, rewrites, VACUUM, size estimates.
 *
 * NOTES
 *	  A new relfilenode gets a new storage id (a sequence value) written
 *	  into its metapage; the stripe catalog is keyed by it.  When a
 *	  relfilenode replaces another (TRUNCATE, rewrites), the catalog rows of
 *	  the old storage are deleted in the same transaction, so a rollback
 *	  brings back both the old file and its stripes.
 *
 *	  Stripe pages hold no transaction ids; row states of changed rows do,
 *	  so relfrozenxid starts like heap's and VACUUM advances it.  The stripe
 *	  catalog rows are ordinary heap tuples, vacuumed and frozen as such.
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
#include "storage/bufmgr.h"
#include "storage/smgr.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/tuplesort.h"

#include "tessera/catalog.h"
#include "tessera/reader.h"
#include "tessera/storage.h"
#include "tessera/tableam.h"
#include "tessera/tessera.h"
#include "tessera/writer.h"

/* Delete the catalog rows of rel's current storage and forget its buffered rows. */
static void
forget_current_storage(Relation rel, TesseraMeta *meta)
{
	TesseraDiscardWrites(&rel->rd_node);
	memset(meta, 0, sizeof(TesseraMeta));
	if (!smgrexists(RelationGetSmgr(rel), MAIN_FORKNUM))
		return;
	TesseraReadMeta(rel, meta);
	if (meta->valid)
		TesseraDeleteStripes(meta->storage_id);
}

void
tessera_relation_set_new_filenode(Relation rel, const RelFileNode *newrnode,
								  char persistence, TransactionId *freezeXid,
								  MultiXactId *minmulti)
{
	/*
	 * Row states of changed rows hold transaction ids and multixacts; VACUUM
	 * advances these as heap's does (vacuum.c).
	 */
	*freezeXid = RecentXmin;
	*minmulti = GetOldestMultiXactId();

	/* replacing an existing relfilenode (TRUNCATE, rewrite)? */
	if (!RelFileNodeEquals(*newrnode, rel->rd_node))
	{
		TesseraMeta old;

		forget_current_storage(rel, &old);
	}
	TesseraCreateStorage(newrnode, rel->rd_backend, persistence, TesseraNextStorageId());
}

void
tessera_relation_nontransactional_truncate(Relation rel)
{
	TesseraMeta old;

	/* the relation was created in this transaction: its rows are ours */
	forget_current_storage(rel, &old);
	RelationTruncate(rel, 0);
	TesseraInitMetapage(rel, old.valid ? old.storage_id : TesseraNextStorageId(),
						old.next_rownum, old.next_stripe_id);
}

void
tessera_relation_copy_data(Relation rel, const RelFileNode *newrnode)
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
 * snapshot sees exactly the rows that exist.
 */
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
		iscan = index_beginscan(OldTable, OldIndex, snapshot, 0, 0);
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
	if (forkNumber != MAIN_FORKNUM || physical == 0)
		return physical;
	TesseraReadMeta(rel, &meta);
	if (!meta.valid)
		return physical;
	tid_blocks = (meta.next_rownum + TESSERA_TIDS_PER_BLOCK - 1) / TESSERA_TIDS_PER_BLOCK;
	return Max(physical, tid_blocks * BLCKSZ);
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
