/*-------------------------------------------------------------------------
 *
 * index.c
 *	  Building and validating indexes on a tessera relation.
 *
 * NOTES
 *	  An index entry points at a row's TID (its row number), which never
 *	  changes and is never reused, so any index AM that stores TIDs works:
 *	  btree, hash, GIN, GiST, SP-GiST, BRIN.  BRIN summarizes ranges of TID
 *	  blocks up to RelationGetNumberOfBlocks, which for tessera is the TID
 *	  blocks its row numbers span (relation_size in ddl.c), not its
 *	  (compressed) page count; range scans read the row numbers of the
 *	  blocks asked for.
 *
 *	  A plain CREATE INDEX holds ShareLock, so no one else writes.  It scans
 *	  with SnapshotAny semantics: every row of every stripe that was not
 *	  aborted, except rows whose deletion no snapshot can miss any more;
 *	  rows deleted recently are indexed but flagged not alive, so unique
 *	  checks ignore them (as heap does with RECENTLY_DEAD tuples).
 *	  CREATE INDEX CONCURRENTLY scans with an MVCC snapshot and then
 *	  validates: rows the reference snapshot sees but the index lacks are
 *	  inserted (the scan returns rows in TID order, so this is a merge
 *	  with the sorted TIDs of the index).
 *
 * IDENTIFICATION
 *	  src/tableam/index.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relscan.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "commands/progress.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/procarray.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/tuplesort.h"

#include "tessera/compat.h"
#include "tessera/rowstate.h"
#include "tessera/tableam.h"
#include "tessera/tessera.h"

double
tessera_index_build_range_scan(Relation table_rel, Relation index_rel,
							   struct IndexInfo *index_info, bool allow_sync,
							   bool anyvisible, bool progress,
							   BlockNumber start_blockno, BlockNumber numblocks,
							   IndexBuildCallback callback, void *callback_state,
							   TableScanDesc scan)
{
	EState	   *estate;
	ExprContext *econtext;
	ExprState  *predicate;
	TupleTableSlot *slot;
	Snapshot	snapshot;
	bool		need_unregister = false;
	TransactionId OldestXmin = InvalidTransactionId;
	Datum		values[INDEX_MAX_KEYS];
	bool		isnull[INDEX_MAX_KEYS];
	double		reltuples = 0;


	estate = CreateExecutorState();
	econtext = GetPerTupleExprContext(estate);
	slot = table_slot_create(table_rel, NULL);
	econtext->ecxt_scantuple = slot;
	predicate = ExecPrepareQual(index_info->ii_Predicate, estate);

	if (!IsBootstrapProcessingMode() && !index_info->ii_Concurrent)
		OldestXmin = GetOldestNonRemovableTransactionId(table_rel);

	if (scan == NULL)
	{
		if (!TransactionIdIsValid(OldestXmin))
		{
			snapshot = RegisterSnapshot(GetTransactionSnapshot());
			need_unregister = true;
		}
		else
			snapshot = SnapshotAny;
		scan = table_beginscan_strat(table_rel, snapshot, 0, NULL, true, allow_sync);
	}
	else
		snapshot = scan->rs_snapshot;

	if (snapshot == SnapshotAny)
		TesseraScanKeepStates(scan);
	if (start_blockno != 0 || numblocks != InvalidBlockNumber)
		TesseraScanSetBlockRange(scan, start_blockno, numblocks);
	if (progress)
		pgstat_progress_update_param(PROGRESS_SCAN_BLOCKS_TOTAL,
									 RelationGetNumberOfBlocks(table_rel));

	while (table_scan_getnextslot(scan, ForwardScanDirection, slot))
	{
		bool		alive = true;

		CHECK_FOR_INTERRUPTS();
		MemoryContextReset(econtext->ecxt_per_tuple_memory);

		if (snapshot == SnapshotAny)
		{
			const TesseraRowState *st = TesseraScanCurrentState(scan);

			if (st != NULL)
			{
				TransactionId upd = TesseraRowUpdateXid(st);

				/* gone for every snapshot: no entry at all */
				if (TesseraRowDeadToAll(st, table_rel))
					continue;
				/* deleted by us or by a committed transaction: not alive */
				if ((st->infomask & TESSERA_RS_FROZEN_DELETED) ||
					(TransactionIdIsValid(upd) &&
					 (TransactionIdIsCurrentTransactionId(upd) ||
					  (!TransactionIdIsInProgress(upd) && TransactionIdDidCommit(upd)))))
					alive = false;
			}
		}
		reltuples += 1;

		if (predicate != NULL && !ExecQual(predicate, econtext))
			continue;
		FormIndexDatum(index_info, slot, estate, values, isnull);
		callback(index_rel, &slot->tts_tid, values, isnull, alive, callback_state);
	}

	table_endscan(scan);
	if (need_unregister)
		UnregisterSnapshot(snapshot);
	ExecDropSingleTupleTableSlot(slot);
	FreeExecutorState(estate);
	index_info->ii_ExpressionsState = NIL;
	index_info->ii_PredicateState = NULL;
	return reltuples;
}

void
tessera_index_validate_scan(Relation table_rel, Relation index_rel,
							struct IndexInfo *index_info, Snapshot snapshot,
							struct ValidateIndexState *state)
{
	EState	   *estate = CreateExecutorState();
	ExprContext *econtext = GetPerTupleExprContext(estate);
	TupleTableSlot *slot = table_slot_create(table_rel, NULL);
	ExprState  *predicate;
	TableScanDesc scan;
	ItemPointerData indexcursor;
	bool		have_cursor = false;
	bool		tuplesort_empty = false;
	Datum		values[INDEX_MAX_KEYS];
	bool		isnull[INDEX_MAX_KEYS];

	econtext->ecxt_scantuple = slot;
	predicate = ExecPrepareQual(index_info->ii_Predicate, estate);

	scan = table_beginscan_strat(table_rel, snapshot, 0, NULL, true, false);
	while (table_scan_getnextslot(scan, ForwardScanDirection, slot))
	{
		ItemPointer tid = &slot->tts_tid;

		CHECK_FOR_INTERRUPTS();
		state->htups += 1;

		/* advance the index's sorted TIDs up to this row */
		while (!tuplesort_empty &&
			   (!have_cursor || ItemPointerCompare(&indexcursor, tid) < 0))
		{
			Datum		ts_val;
			bool		ts_isnull;

			tuplesort_empty = !TesseraTuplesortGetDatum(state->tuplesort, true, &ts_val, &ts_isnull);
			if (!tuplesort_empty)
			{
				itemptr_decode(&indexcursor, DatumGetInt64(ts_val));
				have_cursor = true;
			}
		}
		if (!tuplesort_empty && ItemPointerCompare(&indexcursor, tid) == 0)
			continue;			/* already indexed */

		MemoryContextReset(econtext->ecxt_per_tuple_memory);
		if (predicate != NULL && !ExecQual(predicate, econtext))
			continue;
		FormIndexDatum(index_info, slot, estate, values, isnull);
		index_insert(index_rel, values, isnull, tid, table_rel,
					 index_info->ii_Unique ? UNIQUE_CHECK_YES : UNIQUE_CHECK_NO,
					 false, index_info);
		state->tups_inserted += 1;
	}
	table_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	FreeExecutorState(estate);
	index_info->ii_ExpressionsState = NIL;
	index_info->ii_PredicateState = NULL;
}
