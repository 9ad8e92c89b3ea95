/*-------------------------------------------------------------------------
 *
 * scan.c
 *	  Sequential, parallel, TID range, sample and analyze scans of a
 *	  tessera relation.
 *
 * NOTES
 *	  A scan first writes out this backend's buffered rows of the relation,
 *	  then builds a reader for its snapshot and walks row groups in row
 *	  number order, forward or backward (scrollable cursors).  A parallel
 *	  scan instead claims row groups by global number from a counter in
 *	  shared memory; every participant builds the same reader from the
 *	  shared snapshot, so the numbering agrees.  The leader has written its
 *	  buffered rows before the parallel query started (ExecutorStart hook).
 *
 *	  ANALYZE samples "blocks" as PostgreSQL picks them from the relation's
 *	  size; block b stands for the b-th slice of the visible rows, so the
 *	  sample and the row count estimate are uniform over rows.  TABLESAMPLE
 *	  works on TID blocks (row number / MaxHeapTuplesPerPage), which keeps
 *	  REPEATABLE samples stable.
 *
 * IDENTIFICATION
 *	  src/tableam/scan.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relscan.h"
#include "access/tableam.h"
#include "access/tsmapi.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "pgstat.h"
#include "port/atomics.h"
#include "storage/bufmgr.h"
#include "storage/predicate.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "tessera/reader.h"
#include "tessera/rowstate.h"
#include "tessera/slot.h"
#include "tessera/storage.h"
#include "tessera/tableam.h"
#include "tessera/tessera.h"
#include "tessera/writer.h"

typedef struct TesseraParallelScanDescData
{
	ParallelTableScanDescData base;
	pg_atomic_uint32 next_rg;
	pg_atomic_uint32 total_rgs_plus1;	/* as the first participant counted them; 0: none yet */
} TesseraParallelScanDescData;

typedef struct TesseraParallelScanDescData *TesseraParallelScanDesc;

typedef struct TesseraScanDescData
{
	TableScanDescData base;
	TesseraReader *reader;

	/*
	 * position: stripe -1 = before the first row, nstripes = after the last.
	 * A scan not started yet begins at the end its first call moves away
	 * from, as heap's does: backward from the last row (a scroll cursor's
	 * FETCH LAST restarts a TID range scan that went to its end).
	 */
	bool		started;
	bool		batches_backward;	/* TesseraScanNextBatch: the last row group first */
	int			pos_stripe;
	int			pos_rg;
	int			pos_row;

	/* TID range scans: row numbers [range_lo, range_hi) */
	bool		has_range;
	uint64		range_lo;
	uint64		range_hi;

	/* ANALYZE: visible row ordinals [analyze_pos, analyze_end) */
	BlockNumber analyze_nblocks;
	uint64		analyze_pos;
	uint64		analyze_end;
	/* the row group the last row was in: rows [rg_first, rg_end) */
	int			analyze_stripe;
	int			analyze_rg;
	uint64		analyze_rg_first;
	uint64		analyze_rg_end;

	/* TABLESAMPLE */
	BlockNumber sample_nblocks;
	BlockNumber sample_block;

	/* TesseraScan: row-group and row filters (see TesseraScanSetFilters) */
	TesseraRowGroupFilter rg_filter;
	TesseraBatchFilter batch_filter;
	void	   *filter_arg;
	const bool *sel;			/* rows of the batch that pass; NULL: all */
	int			state_pages;	/* has the table any row state page? -1: not looked */

	/* bitmap scans: candidate row numbers of the current TID block */
	uint64		bm_rows[MaxHeapTuplesPerPage];
	int			bm_n;
	int			bm_pos;
} TesseraScanDescData;

typedef struct TesseraScanDescData *TesseraScanDesc;

const TupleTableSlotOps *
tessera_slot_callbacks(Relation rel)
{
	return &TTSOpsTessera;
}

TableScanDesc
tessera_scan_begin(Relation rel, Snapshot snapshot, int nkeys, struct ScanKeyData *key,
				   ParallelTableScanDesc pscan, uint32 flags)
{
	TesseraScanDesc scan = palloc0(sizeof(TesseraScanDescData));
	bool		bulk;

	/* rows this backend buffered must be on disk before we list stripes */
	if (!IsParallelWorker())
		TesseraFlushRelation(rel);

	if (snapshot == NULL)
	{
		/* ANALYZE: see every committed stripe */
		snapshot = RegisterSnapshot(GetLatestSnapshot());
		flags |= SO_TEMP_SNAPSHOT;
	}

	scan->base.rs_rd = rel;
	scan->base.rs_snapshot = snapshot;
	scan->base.rs_nkeys = nkeys;
	scan->base.rs_key = key;
	scan->base.rs_flags = flags;
	scan->base.rs_parallel = pscan;

	bulk = (flags & SO_ALLOW_STRAT) != 0 &&
		TesseraPhysicalBlocks(rel) > (BlockNumber) (NBuffers / 4);
	scan->reader = TesseraReaderBegin(rel, snapshot, bulk);

	/*
	 * Participants of a parallel scan claim row groups by their number in
	 * the list of stripes each of them builds: the lists must agree, or row
	 * groups are claimed by a participant that does not have them.
	 */
	if (pscan != NULL)
	{
		TesseraParallelScanDesc tpscan = (TesseraParallelScanDesc) pscan;
		uint32		expected = 0;
		uint32		mine = scan->reader->total_rgs + 1;

		if (!pg_atomic_compare_exchange_u32(&tpscan->total_rgs_plus1, &expected, mine) &&
			expected != mine)
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("participants of a parallel scan of tessera table \"%s\" see different stripes (%u and %u row groups)",
							RelationGetRelationName(rel), expected - 1, mine - 1)));
	}

	/* serializable: a sequential scan reads the whole relation */
	if (flags & (SO_TYPE_SEQSCAN | SO_TYPE_SAMPLESCAN))
		PredicateLockRelation(rel, snapshot);
	/* pg_stat_*_tables.seq_scan, counted per scan and rescan as heap does */
	if (flags & SO_TYPE_SEQSCAN)
		pgstat_count_heap_scan(rel);
	scan->pos_stripe = -1;
	scan->sample_block = InvalidBlockNumber;
	scan->state_pages = -1;

	scan->analyze_stripe = -1;
	if (flags & SO_TYPE_ANALYZE)
		scan->analyze_nblocks = RelationGetNumberOfBlocks(rel);
	return (TableScanDesc) scan;
}

void
tessera_scan_end(TableScanDesc sscan)
{
	TesseraScanDesc scan = (TesseraScanDesc) sscan;

	TesseraReaderEnd(scan->reader);
	if (scan->base.rs_flags & SO_TEMP_SNAPSHOT)
		UnregisterSnapshot(scan->base.rs_snapshot);
	pfree(scan);
}

void
tessera_scan_rescan(TableScanDesc sscan, struct ScanKeyData *key, bool set_params,
					bool allow_strat, bool allow_sync, bool allow_pagemode)
{
	TesseraScanDesc scan = (TesseraScanDesc) sscan;

	if (set_params)
	{
		if (allow_strat)
			scan->base.rs_flags |= SO_ALLOW_STRAT;
		else
			scan->base.rs_flags &= ~SO_ALLOW_STRAT;
	}
	scan->started = false;
	scan->pos_stripe = -1;
	scan->sample_block = InvalidBlockNumber;
	scan->bm_n = scan->bm_pos = 0;
	if (scan->base.rs_flags & SO_TYPE_SEQSCAN)
		pgstat_count_heap_scan(scan->base.rs_rd);
}

/* Does row group rg of stripe hold any row of the TID range? */
static bool
rg_in_range(TesseraScanDesc scan, int stripe, int rg)
{
	TesseraStripeDir *dir;
	TesseraRowGroupDisk *g;

	if (!scan->has_range)
		return true;
	dir = TesseraReaderDir(scan->reader, stripe);
	g = &dir->rgs[rg];
	return g->first_rownum < scan->range_hi &&
		g->first_rownum + g->row_count > scan->range_lo;
}

/*
 * The live rows of a row group the scan skips count in seq_tup_read.  The
 * batch is loaded for its row states only (no column is decoded): cheap
 * where the table has no state pages.
 */
static void
count_skipped_rows(TesseraScanDesc scan, int stripe, int rg)
{
	TesseraReader *r = scan->reader;
	TesseraScanStripe *ss = &r->stripes[stripe];
	TesseraBatch *b = &r->batch;
	int			live = 0;

	if (!pgstat_should_count_relation(scan->base.rs_rd))
		return;
	if (scan->state_pages < 0)
	{
		TesseraMeta meta;

		TesseraReadMeta(scan->base.rs_rd, &meta);
		scan->state_pages = meta.valid && meta.state_root != 0;
	}
	/* no row was ever changed: the rows stored, less those VACUUM folded */
	if (!scan->state_pages && !ss->meta.own)
	{
		if ((ss->meta.flags & TESSERA_STRIPE_DELTA) && ss->meta.n_row_groups == 1)
			TesseraCountRowsRead(scan->base.rs_rd, ss->meta.row_count);
		else
		{
			TesseraStripeDir *dir = TesseraReaderDir(r, stripe);

			TesseraCountRowsRead(scan->base.rs_rd, dir->rgs[rg].row_count -
								 (dir->dead ? dir->dead[rg].value_count : 0));
		}
		return;
	}
	if (!TesseraReaderLoad(r, stripe, rg))
		return;
	if (b->deleted == NULL)
		live = b->nrows;
	else
		for (int i = 0; i < b->nrows; i++)
			live += !b->deleted[i];
	TesseraCountRowsRead(scan->base.rs_rd, live);
}

/*
 * May row group rg of stripe hold rows that pass the scan's filter?  Rows
 * of a row group skipped count as read in seq_tup_read, as heap's scan
 * returns them to the quals that reject them.
 */
static inline bool
rg_passes(TesseraScanDesc scan, int stripe, int rg)
{
	if (scan->rg_filter == NULL)
		return true;
	if (scan->rg_filter(scan->filter_arg, scan->reader, stripe, rg))
		return true;
	count_skipped_rows(scan, stripe, rg);
	return false;
}

/* The loaded batch's rows that pass the scan's row filter. */
static inline void
filter_batch(TesseraScanDesc scan)
{
	scan->sel = NULL;
	if (scan->batch_filter != NULL)
		scan->sel = scan->batch_filter(scan->filter_arg, &scan->reader->batch);
}

/*
 * Move to the next (or previous) row group with visible rows and load it.
 * Returns false at the end of the scan.
 */
static bool
advance_rg(TesseraScanDesc scan, ScanDirection dir)
{
	TesseraReader *r = scan->reader;

	if (scan->base.rs_parallel)
	{
		TesseraParallelScanDesc pscan = (TesseraParallelScanDesc) scan->base.rs_parallel;

		for (;;)
		{
			uint32		g = pg_atomic_fetch_add_u32(&pscan->next_rg, 1);
			int			stripe,
						rg;

			if (g >= r->total_rgs)
			{
				scan->pos_stripe = r->nstripes;
				return false;
			}
			TesseraReaderGlobalRg(r, g, &stripe, &rg);
			if (rg_in_range(scan, stripe, rg) && rg_passes(scan, stripe, rg) &&
				TesseraReaderLoad(r, stripe, rg))
			{
				scan->pos_stripe = stripe;
				scan->pos_rg = rg;
				scan->pos_row = -1;
				filter_batch(scan);
				return true;
			}
		}
	}

	for (;;)
	{
		int			stripe = scan->pos_stripe;
		int			rg = scan->pos_rg;

		if (ScanDirectionIsForward(dir))
		{
			if (stripe < 0)
			{
				stripe = 0;
				rg = 0;
			}
			else if (stripe >= r->nstripes)
				return false;
			else if (rg + 1 < (int) TesseraStripeRowGroups(r, stripe))
				rg++;
			else
			{
				stripe++;
				rg = 0;
			}
			if (stripe >= r->nstripes)
			{
				scan->pos_stripe = r->nstripes;
				return false;
			}
		}
		else
		{
			if (stripe >= r->nstripes)
			{
				stripe = r->nstripes - 1;
				rg = stripe >= 0 ? (int) TesseraStripeRowGroups(r, stripe) - 1 : 0;
			}
			else if (stripe < 0)
				return false;
			else if (rg > 0)
				rg--;
			else
			{
				stripe--;
				rg = stripe >= 0 ? (int) TesseraStripeRowGroups(r, stripe) - 1 : 0;
			}
			if (stripe < 0)
			{
				scan->pos_stripe = -1;
				return false;
			}
		}
		scan->pos_stripe = stripe;
		scan->pos_rg = rg;
		if (rg_in_range(scan, stripe, rg) && rg_passes(scan, stripe, rg) &&
			TesseraReaderLoad(r, stripe, rg))
		{
			scan->pos_row = ScanDirectionIsForward(dir) ? -1 : r->batch.nrows;
			filter_batch(scan);
			return true;
		}
	}
}

/*
 * Advance to the next row the scan returns; it is row *row of the reader's
 * current batch.
 */
static inline bool
scan_next_row(TesseraScanDesc scan, ScanDirection dir, int *rowp)
{
	TesseraReader *r = scan->reader;

	if (ScanDirectionIsNoMovement(dir))
		dir = ForwardScanDirection;
	if (unlikely(!scan->started))
	{
		scan->started = true;
		if (ScanDirectionIsBackward(dir) && !scan->base.rs_parallel)
			scan->pos_stripe = r->nstripes;
	}

	for (;;)
	{
		CHECK_FOR_INTERRUPTS();
		if (scan->pos_stripe >= 0 && scan->pos_stripe < r->nstripes)
		{
			TesseraBatch *b = &r->batch;
			int			step = ScanDirectionIsForward(dir) ? 1 : -1;

			/* another user of the reader may have moved the batch */
			if (b->stripe != scan->pos_stripe || b->rg != scan->pos_rg)
			{
				(void) TesseraReaderLoad(r, scan->pos_stripe, scan->pos_rg);
				filter_batch(scan);
			}

			for (;;)
			{
				int			row = scan->pos_row + step;
				uint64		rownum;

				if (step > 0 && scan->sel && b->deleted == NULL)
				{
					/*
					 * past the rows the filters dropped eight at a time
					 * (ClickBench's `WHERE UserID = …` keeps a handful of
					 * 10M rows: the row-by-row walk was a fifth of it),
					 * counted as heap's scan returns them to its quals
					 */
					int			from = row;
					uint64		w;

					while (row + 8 <= b->nrows &&
						   (memcpy(&w, scan->sel + row, sizeof(w)), w == 0))
						row += 8;
					if (row > from)
						TesseraCountTuplesReturned(scan->base.rs_rd, row - from);
				}
				if (row < 0 || row >= b->nrows)
					break;
				scan->pos_row = row;
				if (b->deleted && b->deleted[row])
					continue;
				if (scan->sel && !scan->sel[row])
				{
					/* seq_tup_read counts it, as heap's scan returns it to its quals */
					pgstat_count_heap_getnext(scan->base.rs_rd);
					continue;
				}
				rownum = b->first_rownum + row;
				if (scan->has_range && (rownum < scan->range_lo || rownum >= scan->range_hi))
					continue;
				if (scan->base.rs_snapshot &&
					scan->base.rs_snapshot->snapshot_type == SNAPSHOT_DIRTY)
				{
					/* as HeapTupleSatisfiesDirty reports them, for this row */
					scan->base.rs_snapshot->xmin = b->dirty_xmin;
					scan->base.rs_snapshot->xmax = b->dirty_xmax ? b->dirty_xmax[row] :
						InvalidTransactionId;
					scan->base.rs_snapshot->speculativeToken = 0;
				}
				*rowp = row;
				return true;
			}
		}
		if (!advance_rg(scan, dir))
			return false;
	}
}

static bool
scan_next(TesseraScanDesc scan, ScanDirection dir, TupleTableSlot *slot)
{
	int			row;

	if (!scan_next_row(scan, dir, &row))
	{
		ExecClearTuple(slot);
		return false;
	}
	TesseraSlotStoreRow(slot, &scan->reader->batch, row);
	pgstat_count_heap_getnext(scan->base.rs_rd);
	return true;
}

/*
 * TesseraScanNextRow
 *		The next row of a sequential or parallel scan, as a batch and a row
 *		in it, without storing it in a slot (TesseraScan's fast path).  The
 *		batch stays valid until the next call.
 */
bool
TesseraScanNextRow(TableScanDesc sscan, ScanDirection dir, TesseraBatch **batch, int *row)
{
	TesseraScanDesc scan = (TesseraScanDesc) sscan;

	if (!scan_next_row(scan, dir, row))
		return false;
	*batch = &scan->reader->batch;
	pgstat_count_heap_getnext(scan->base.rs_rd);
	return true;
}

bool
tessera_scan_getnextslot(TableScanDesc sscan, ScanDirection direction, TupleTableSlot *slot)
{
	return scan_next((TesseraScanDesc) sscan, direction, slot);
}

void
tessera_scan_set_tidrange(TableScanDesc sscan, ItemPointer mintid, ItemPointer maxtid)
{
	TesseraScanDesc scan = (TesseraScanDesc) sscan;
	BlockNumber minblk = ItemPointerGetBlockNumberNoCheck(mintid);
	OffsetNumber minoff = ItemPointerGetOffsetNumberNoCheck(mintid);
	BlockNumber maxblk = ItemPointerGetBlockNumberNoCheck(maxtid);
	OffsetNumber maxoff = ItemPointerGetOffsetNumberNoCheck(maxtid);

	/* offsets beyond the per-block range round to the neighbouring row */
	scan->has_range = true;
	if (minblk & TESSERA_DELTA_BLOCK_FLAG)
		scan->range_lo = TESSERA_MAX_ROWNUM;
	else
		scan->range_lo = (uint64) minblk * TESSERA_TIDS_PER_BLOCK +
			(minoff == 0 ? 0 : Min((uint64) minoff - 1, TESSERA_TIDS_PER_BLOCK));
	if (maxblk & TESSERA_DELTA_BLOCK_FLAG)
		scan->range_hi = TESSERA_MAX_ROWNUM;
	else if (maxoff == 0)
		scan->range_hi = (uint64) maxblk * TESSERA_TIDS_PER_BLOCK;
	else
		scan->range_hi = (uint64) maxblk * TESSERA_TIDS_PER_BLOCK +
			Min((uint64) maxoff, TESSERA_TIDS_PER_BLOCK);
	scan->started = false;
	scan->pos_stripe = -1;
}

bool
tessera_scan_getnextslot_tidrange(TableScanDesc sscan, ScanDirection direction,
								  TupleTableSlot *slot)
{
	return scan_next((TesseraScanDesc) sscan, direction, slot);
}

/* ---- parallel scans ---- */

Size
tessera_parallelscan_estimate(Relation rel)
{
	return sizeof(TesseraParallelScanDescData);
}

Size
tessera_parallelscan_initialize(Relation rel, ParallelTableScanDesc ppscan)
{
	TesseraParallelScanDesc pscan = (TesseraParallelScanDesc) ppscan;

	/*
	 * Workers read what is on disk: our buffered rows must be there before
	 * they start.  Parallel queries flushed in ExecutorStart already; a
	 * parallel index build starts its workers right after this, and the
	 * leader's own scan would write the rows only once the workers had
	 * counted the row groups without them.
	 */
	if (!IsParallelWorker())
		TesseraFlushRelation(rel);
	TesseraParallelScanSetRel(&pscan->base, rel);
	pscan->base.phs_syncscan = false;
	pg_atomic_init_u32(&pscan->next_rg, 0);
	pg_atomic_init_u32(&pscan->total_rgs_plus1, 0);
	return sizeof(TesseraParallelScanDescData);
}

void
tessera_parallelscan_reinitialize(Relation rel, ParallelTableScanDesc ppscan)
{
	TesseraParallelScanDesc pscan = (TesseraParallelScanDesc) ppscan;

	pg_atomic_write_u32(&pscan->next_rg, 0);
}

/* ---- ANALYZE ---- */

bool
tessera_scan_analyze_next_block(TableScanDesc sscan, TESSERA_ANALYZE_NEXT_BLOCK_ARGS)
{
	TesseraScanDesc scan = (TesseraScanDesc) sscan;
	uint64		total = scan->reader->total_rows;
	BlockNumber nblocks = Max(scan->analyze_nblocks, 1);
	BlockNumber block;

	/*
	 * Blocks stand for equal shares of the visible rows, in row order, so
	 * that sampling blocks samples rows evenly.
	 */
	if (!TesseraAnalyzeNextBlock(&block))
		return false;
	if (block >= nblocks)
	{
		scan->analyze_pos = scan->analyze_end = 0;
		return false;
	}
	scan->analyze_pos = (uint64) (((uint128) block * total) / nblocks);
	scan->analyze_end = (uint64) (((uint128) (block + 1) * total) / nblocks);
	return true;
}

bool
tessera_scan_analyze_next_tuple(TableScanDesc sscan, TransactionId OldestXmin,
								double *liverows, double *deadrows, TupleTableSlot *slot)
{
	TesseraScanDesc scan = (TesseraScanDesc) sscan;
	TesseraReader *r = scan->reader;

	while (scan->analyze_pos < scan->analyze_end)
	{
		uint64		ord = scan->analyze_pos++;
		int			lo = 0,
					hi = r->nstripes - 1,
					stripe = -1,
					rg,
					row;

		CHECK_FOR_INTERRUPTS();

		/* most rows follow the last one in its row group: no searches */
		if (scan->analyze_stripe >= 0)
		{
			TesseraScanStripe *ss = &r->stripes[scan->analyze_stripe];
			uint64		rownum = ss->meta.first_rownum + (ord - ss->row_base);

			if (ord >= ss->row_base && ord < ss->row_base + ss->visible_rows &&
				rownum >= scan->analyze_rg_first && rownum < scan->analyze_rg_end)
			{
				stripe = scan->analyze_stripe;
				rg = scan->analyze_rg;
				row = (int) (rownum - scan->analyze_rg_first);
				if (!TesseraReaderLoad(r, stripe, rg))
					elog(ERROR, "tessera analyze lost row " UINT64_FORMAT, ord);
				goto found;
			}
		}

		/* the stripe holding the ord-th visible row */
		while (lo <= hi)
		{
			int			mid = lo + (hi - lo) / 2;

			if (ord < r->stripes[mid].row_base)
				hi = mid - 1;
			else if (ord >= r->stripes[mid].row_base + r->stripes[mid].visible_rows)
				lo = mid + 1;
			else
			{
				stripe = mid;
				break;
			}
		}
		if (stripe < 0 ||
			!TesseraReaderLocate(r, r->stripes[stripe].meta.first_rownum +
								 (ord - r->stripes[stripe].row_base), &stripe, &rg, &row) ||
			!TesseraReaderLoad(r, stripe, rg))
			elog(ERROR, "tessera analyze lost row " UINT64_FORMAT, ord);
		{
			const TesseraRowGroupDisk *g = &TesseraReaderDir(r, stripe)->rgs[rg];

			scan->analyze_stripe = stripe;
			scan->analyze_rg = rg;
			scan->analyze_rg_first = g->first_rownum;
			scan->analyze_rg_end = g->first_rownum + g->row_count;
		}

found:
		if (r->batch.deleted && r->batch.deleted[row])
		{
			*deadrows += 1;
			continue;
		}
		TesseraSlotStoreRow(slot, &r->batch, row);
		*liverows += 1;
		return true;
	}
	ExecClearTuple(slot);
	return false;
}

/* ---- TABLESAMPLE ---- */

bool
tessera_scan_sample_next_block(TableScanDesc sscan, SampleScanState *scanstate)
{
	TesseraScanDesc scan = (TesseraScanDesc) sscan;
	TsmRoutine *tsm = scanstate->tsmroutine;
	BlockNumber nblocks;
	BlockNumber blockno;

	nblocks = (BlockNumber) ((scan->reader->rownum_end + TESSERA_TIDS_PER_BLOCK - 1) /
							 TESSERA_TIDS_PER_BLOCK);
	scan->sample_nblocks = nblocks;
	if (nblocks == 0)
		return false;

	if (tsm->NextSampleBlock)
		blockno = tsm->NextSampleBlock(scanstate, nblocks);
	else if (scan->sample_block == InvalidBlockNumber)
		blockno = 0;
	else if (scan->sample_block + 1 < nblocks)
		blockno = scan->sample_block + 1;
	else
		blockno = InvalidBlockNumber;

	scan->sample_block = blockno;
	return BlockNumberIsValid(blockno);
}

bool
tessera_scan_sample_next_tuple(TableScanDesc sscan, SampleScanState *scanstate,
							   TupleTableSlot *slot)
{
	TesseraScanDesc scan = (TesseraScanDesc) sscan;
	TsmRoutine *tsm = scanstate->tsmroutine;
	TesseraReader *r = scan->reader;

	for (;;)
	{
		OffsetNumber off;
		uint64		rownum;
		int			stripe,
					rg,
					row;

		CHECK_FOR_INTERRUPTS();
		off = tsm->NextSampleTuple(scanstate, scan->sample_block,
								   (OffsetNumber) TESSERA_TIDS_PER_BLOCK);
		if (!OffsetNumberIsValid(off))
		{
			ExecClearTuple(slot);
			return false;
		}
		rownum = (uint64) scan->sample_block * TESSERA_TIDS_PER_BLOCK + (off - 1);
		if (TesseraReaderLocate(r, rownum, &stripe, &rg, &row) &&
			TesseraReaderLoad(r, stripe, rg) &&
			!(r->batch.deleted && r->batch.deleted[row]))
		{
			ItemPointerData tid;

			/* serializable: a later update or delete of it is a conflict */
			TesseraRownumToTid(rownum, &tid);
			PredicateLockTID(scan->base.rs_rd, &tid, scan->base.rs_snapshot, r->batch.xmin);
			TesseraSlotStoreRow(slot, &r->batch, row);
			pgstat_count_heap_getnext(scan->base.rs_rd);
			return true;
		}
	}
}

/* ---- bitmap scans ---- */

/*
 * The candidate rows of TID block blockno: the exact offsets (n of them)
 * or, for a lossy block (n < 0), every row.  False if none can exist.
 */
static bool
bitmap_set_block(TesseraScanDesc scan, BlockNumber blockno, const OffsetNumber *offsets, int n)
{
	uint64		base;

	scan->bm_n = scan->bm_pos = 0;
	if (blockno & TESSERA_DELTA_BLOCK_FLAG)
		return false;
	base = (uint64) blockno * TESSERA_TIDS_PER_BLOCK;
	if (n >= 0)
	{
		for (int i = 0; i < n; i++)
		{
			OffsetNumber off = offsets[i];

			if (off >= 1 && off <= TESSERA_TIDS_PER_BLOCK)
				scan->bm_rows[scan->bm_n++] = base + off - 1;
		}
	}
	else
	{
		for (uint64 i = 0; i < TESSERA_TIDS_PER_BLOCK; i++)
			scan->bm_rows[scan->bm_n++] = base + i;
	}
	return scan->bm_n > 0 && base < scan->reader->rownum_end;
}

/* The next visible candidate row of the current block into slot. */
static bool
bitmap_next_row(TesseraScanDesc scan, TupleTableSlot *slot)
{
	TesseraReader *r = scan->reader;

	while (scan->bm_pos < scan->bm_n)
	{
		uint64		rownum = scan->bm_rows[scan->bm_pos++];
		int			stripe,
					rg,
					row;

		if (TesseraReaderLocate(r, rownum, &stripe, &rg, &row) &&
			TesseraReaderLoad(r, stripe, rg) &&
			!(r->batch.deleted && r->batch.deleted[row]))
		{
			ItemPointerData tid;

			/* serializable: a later update or delete of it is a conflict */
			TesseraRownumToTid(rownum, &tid);
			PredicateLockTID(scan->base.rs_rd, &tid, scan->base.rs_snapshot, r->batch.xmin);
			TesseraSlotStoreRow(slot, &r->batch, row);
			pgstat_count_heap_fetch(scan->base.rs_rd);
			return true;
		}
	}
	ExecClearTuple(slot);
	return false;
}

#if TESSERA_BITMAP_AM_ITERATES

bool
tessera_scan_bitmap_next_tuple(TableScanDesc sscan, TupleTableSlot *slot, bool *recheck,
							   uint64 *lossy_pages, uint64 *exact_pages)
{
	TesseraScanDesc scan = (TesseraScanDesc) sscan;

	while (!bitmap_next_row(scan, slot))
	{
		TBMIterateResult tbmres;
		OffsetNumber offsets[TBM_MAX_TUPLES_PER_PAGE];
		int			n;

		CHECK_FOR_INTERRUPTS();
		if (!tbm_iterate(&sscan->st.rs_tbmiterator, &tbmres))
			return false;
		n = TesseraTbmOffsets(&tbmres, offsets, lengthof(offsets));
		*recheck = tbmres.recheck;
		if (n < 0)
			(*lossy_pages)++;
		else
			(*exact_pages)++;
		(void) bitmap_set_block(scan, tbmres.blockno, offsets, n);
	}
	return true;
}

#else

bool
tessera_scan_bitmap_next_block(TableScanDesc sscan, struct TBMIterateResult *tbmres)
{
	OffsetNumber offsets[MaxHeapTuplesPerPage];
	int			n = TesseraTbmOffsets(tbmres, offsets, lengthof(offsets));

	return bitmap_set_block((TesseraScanDesc) sscan, tbmres->blockno, offsets, n);
}

bool
tessera_scan_bitmap_next_tuple(TableScanDesc sscan, struct TBMIterateResult *tbmres,
							   TupleTableSlot *slot)
{
	return bitmap_next_row((TesseraScanDesc) sscan, slot);
}

#endif

/*
 * TesseraScanCurrentState
 *		The row state of the row the scan returned last (with a SnapshotAny
 *		scan, which keeps them), or NULL if it has none.
 */
const TesseraRowState *
TesseraScanCurrentState(TableScanDesc sscan)
{
	TesseraScanDesc scan = (TesseraScanDesc) sscan;
	TesseraBatch *b = &scan->reader->batch;

	if (b->states == NULL || scan->pos_row < 0 || scan->pos_row >= b->chunk_rows ||
		TesseraRowStateEmpty(&b->states[scan->pos_row]))
		return NULL;
	return &b->states[scan->pos_row];
}

/* Restrict a scan to rows whose TID block is in [start, start + nblocks). */
void
TesseraScanSetBlockRange(TableScanDesc sscan, BlockNumber start, BlockNumber nblocks)
{
	TesseraScanDesc scan = (TesseraScanDesc) sscan;

	scan->has_range = true;
	scan->range_lo = (uint64) start * TESSERA_TIDS_PER_BLOCK;
	scan->range_hi = nblocks == InvalidBlockNumber ? TESSERA_MAX_ROWNUM :
		Min((uint64) (start + (uint64) nblocks) * TESSERA_TIDS_PER_BLOCK, TESSERA_MAX_ROWNUM);
	scan->pos_stripe = -1;
}

/* Keep row states in batches (index builds over SnapshotAny scans). */
void
TesseraScanKeepStates(TableScanDesc sscan)
{
	((TesseraScanDesc) sscan)->reader->keep_states = true;
}

/*
 * TesseraScanNextBatch
 *		The next row group (forward) that passes the scan's row-group
 *		filter and has rows the snapshot sees, as a loaded batch; *sel is
 *		the batch filter's selection (NULL: every row).  Rows flagged in
 *		batch->deleted are not visible.  For TesseraAgg, which consumes
 *		whole batches.
 */
bool
TesseraScanNextBatch(TableScanDesc sscan, TesseraBatch **batch, const bool **sel)
{
	TesseraScanDesc scan = (TesseraScanDesc) sscan;

	TesseraBatch *b;
	ScanDirection dir = scan->batches_backward ? BackwardScanDirection : ForwardScanDirection;

	CHECK_FOR_INTERRUPTS();
	if (unlikely(!scan->started))
	{
		scan->started = true;
		if (ScanDirectionIsBackward(dir))
			scan->pos_stripe = scan->reader->nstripes;
	}
	if (!advance_rg(scan, dir))
		return false;
	b = &scan->reader->batch;
	*batch = b;
	*sel = scan->sel;
	/* pg_stat_*_tables.seq_tup_read: the live rows the scan went over */
	if (b->deleted == NULL)
		TesseraCountRowsRead(scan->base.rs_rd, b->nrows);
	else
	{
		int			live = 0;

		for (int i = 0; i < b->nrows; i++)
			live += !b->deleted[i];
		TesseraCountRowsRead(scan->base.rs_rd, live);
	}
	return true;
}

/*
 * TesseraScanSetBatchesBackward
 *		Make a serial scan's TesseraScanNextBatch return the row groups last
 *		first (TesseraTopN of a descending key: data is mostly loaded in
 *		ascending order).  Before the first batch, or after a rescan.
 */
void
TesseraScanSetBatchesBackward(TableScanDesc sscan, bool backward)
{
	TesseraScanDesc scan = (TesseraScanDesc) sscan;

	scan->batches_backward = backward && scan->base.rs_parallel == NULL;
}

/*
 * TesseraCountRowsRead
 *		Count n rows as read by a sequential scan (seq_tup_read), for batches
 *		and for row groups answered from their metadata.
 */
void
TesseraCountRowsRead(Relation rel, uint64 n)
{
	TesseraCountTuplesReturned(rel, n);
}

/*
 * TesseraScanSetFilters
 *		Make a sequential or parallel scan skip the row groups rg_filter
 *		rejects (before they are read) and the rows of a loaded batch that
 *		batch_filter leaves out of the selection it returns (NULL: all
 *		rows).  Used by TesseraScan; either filter may be NULL.
 */
void
TesseraScanSetFilters(TableScanDesc sscan, TesseraRowGroupFilter rg_filter,
					  TesseraBatchFilter batch_filter, void *arg)
{
	TesseraScanDesc scan = (TesseraScanDesc) sscan;

	scan->rg_filter = rg_filter;
	scan->batch_filter = batch_filter;
	scan->filter_arg = arg;
	scan->sel = NULL;
}

/*
 * TesseraScanSetColumns
 *		Only the columns flagged in needed[natts] are decoded; the others
 *		read as NULL.  The caller guarantees nothing looks at them.
 */
void
TesseraScanSetColumns(TableScanDesc sscan, const bool *needed)
{
	((TesseraScanDesc) sscan)->reader->needed = needed;
}

/*
 * TesseraScanBytes
 *		Bytes the scan's reader has read from stripe pages and produced by
 *		decompression so far, the delta rows it loaded and the frames the
 *		shared cache gave it (EXPLAIN ANALYZE of TesseraScan/TesseraAgg).
 */
void
TesseraScanBytes(TableScanDesc sscan, TesseraScanCounts *counts)
{
	TesseraScanDesc scan = (TesseraScanDesc) sscan;
	TesseraReader *r = scan->reader;

	memset(counts, 0, sizeof(TesseraScanCounts));
	if (r == NULL)
		return;
	counts->bytes_read = r->bytes_read;
	counts->bytes_decompressed = r->bytes_decompressed;
	counts->delta_rows = r->delta_rows;
	counts->frames_cached = r->frames_cached;
}
