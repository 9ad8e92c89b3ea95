/*-------------------------------------------------------------------------
 *
 * compact.c
 *	  Compaction: merging delta stripes into stripes of pages.
 *
 * NOTES
 *	  Small writes keep their stripe's bytes in tessera_internal.delta (see
 *	  writer.c).  Compaction rewrites runs of consecutive delta stripes as
 *	  one ordinary stripe that keeps every row's row number: TIDs, index
 *	  entries and row states (deletes, updates, locks) stay valid, so
 *	  neither readers nor writers of those rows notice the move, and no
 *	  index is touched.  The old catalog rows are deleted and the new one
 *	  inserted in one transaction: an MVCC snapshot sees either the delta
 *	  stripes or the merged one, never both.
 *
 *	  Only stripes whose inserting transaction committed before every
 *	  running snapshot move.  The merged stripe is marked frozen, so that
 *	  a fetch that finds it (through the per-backend stripe cache, whatever
 *	  snapshot asks) sees its rows as inserted for everyone -- as they were.
 *	  Standbys: a conflict record with the newest inserter cancels queries
 *	  whose snapshot might not yet see all of them, as heap's freezing does.
 *
 *	  Row numbers a run does not use (reservations given up, aborted
 *	  writers) become rows of the merged stripe too -- all NULL, and deleted
 *	  for everyone in their row state -- so that a stripe stays one dense
 *	  range of row numbers.  Runs stop at large gaps and at any catalog row
 *	  that is not a movable delta stripe (a running writer's placeholder, a
 *	  stripe of pages), so nothing but holes lies in between.
 *
 *	  The caller holds ShareUpdateExclusiveLock (VACUUM, tessera.compact(),
 *	  the background worker of worker.c): one compaction per table at a
 *	  time, concurrent with reads and writes.  When it runs on its own is
 *	  schedule.c's business.
 *	  The delta stripes' catalog and delta rows are reclaimed by VACUUM of
 *	  tessera_internal.stripe and tessera_internal.delta once no snapshot
 *	  sees them.
 *
 * IDENTIFICATION
 *	  src/maintenance/compact.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/table.h"
#include "access/transam.h"
#include "access/xact.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "storage/ipc.h"
#include "tcop/tcopprot.h"
#include "storage/lmgr.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "tessera/catalog.h"
#include "tessera/maintenance.h"
#include "tessera/options.h"
#include "tessera/reader.h"
#include "tessera/rowstate.h"
#include "tessera/storage.h"
#include "tessera/tableam.h"
#include "tessera/tessera.h"
#include "tessera/writer.h"
#include "tessera/xlog.h"

/* a run ends at a gap of more row numbers than this (or than its rows) */
#define COMPACT_MAX_GAP			1024
/* and before its delta bytes pass this */
#define COMPACT_MAX_RUN_BYTES	((Size) 64 * 1024 * 1024)

PG_FUNCTION_INFO_V1(tessera_compact);

/* Can this catalog row's stripe move? */
static bool
movable(const TesseraStripe *s, TransactionId oldest_xmin)
{
	if ((s->flags & TESSERA_STRIPE_DELTA) == 0 || s->row_count == 0 || s->own)
		return false;
	if (TransactionIdIsInProgress(s->xmin) || !TransactionIdDidCommit(s->xmin))
		return false;
	return TransactionIdPrecedes(s->xmin, oldest_xmin);
}

/* Rewrite one run of delta stripes as a stripe of pages. */
static void
compact_run(Relation rel, uint64 storage_id, List *run)
{
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "tessera compaction",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	TupleDesc	desc = RelationGetDescr(rel);
	int			natts = desc->natts;
	TesseraStripe *first = linitial(run);
	TesseraStripeBuilder *builder;
	Datum	   *values = palloc0(sizeof(Datum) * Max(natts, 1));
	bool	   *isnull = palloc(sizeof(bool) * Max(natts, 1));
	uint64		next;
	uint64		got_storage;
	uint64		unused_first;
	uint64		stripe_id;
	TransactionId newest = InvalidTransactionId;
	Relation	catalog = NULL;
	List	   *holes = NIL;
	ListCell   *lc;
	BlockNumber nblocks = TesseraPhysicalBlocks(rel);

	TesseraReserve(rel, 0, &got_storage, &unused_first, &stripe_id);
	if (got_storage != storage_id)
		elog(ERROR, "storage of tessera table \"%s\" changed during compaction",
			 RelationGetRelationName(rel));

	builder = TesseraBuilderBegin(rel, first->first_rownum);
	next = first->first_rownum;
	foreach(lc, run)
	{
		TesseraStripe *s = lfirst(lc);
		TesseraStripeDir *dir;
		TesseraReader *r;

		/* the listing left the bytes out: one delta stripe in memory at a time */
		if (catalog == NULL)
			catalog = TesseraOpenDelta();
		TesseraFetchDeltaBytes(catalog, s);
		dir = TesseraLoadDir(rel, s, nblocks);
		r = TesseraReaderForStripe(rel, s, dir, GetActiveSnapshot(), cxt);

		r->check_deleted = false;	/* every row moves, deleted or not */
		if (!TransactionIdIsValid(newest) || TransactionIdFollows(s->xmin, newest))
			newest = s->xmin;

		/* row numbers nobody wrote: rows deleted for everyone */
		memset(isnull, true, sizeof(bool) * Max(natts, 1));
		for (; next < s->first_rownum; next++)
		{
			TesseraBuilderAdd(builder, values, isnull);
			holes = lappend(holes, (void *) palloc(sizeof(uint64)));
			*(uint64 *) llast(holes) = next;
		}

		for (uint32 rg = 0; rg < s->n_row_groups; rg++)
		{
			TesseraBatch *b = &r->batch;

			TesseraReaderLoad(r, 0, (int) rg);
			TesseraBuilderAddBatch(builder, b, NULL);
			next += b->chunk_rows;
			CHECK_FOR_INTERRUPTS();
		}
		TesseraReaderEnd(r);
		pfree(s->delta);
		s->delta = NULL;
		Assert(next == s->first_rownum + s->row_count);
	}

	/*
	 * Standbys: queries whose snapshot may not see every moved row's
	 * inserter yet must not meet them frozen.
	 */
	TesseraLogConflictHorizon(rel, newest);

	foreach(lc, holes)
		TesseraBuryRow(rel, *(uint64 *) lfirst(lc));

	if (catalog != NULL)
		TesseraCloseDelta(catalog);
	TesseraBuilderFinish(builder, rel, storage_id, stripe_id, run);

	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
}

/*
 * A lazy VACUUM runs with PROC_IN_VACUUM, which keeps its transaction id
 * out of every other backend's snapshots: a VACUUM is not supposed to
 * write rows.  Compaction writes catalog rows, and a snapshot that does not
 * see the writer as running takes its deletions for aborted ones (and sets
 * hint bits saying so): the moved stripes would stay visible next to the
 * merged one.  So before its first write, a VACUUM leaves that mode, as if
 * it were an ordinary transaction; its transaction id is assigned after
 * this, so snapshots taken before know it as not yet started.
 */
void
TesseraLeaveVacuumMode(void)
{
	if ((MyProc->statusFlags & PROC_IN_VACUUM) == 0)
		return;
	Assert(!TransactionIdIsValid(GetTopTransactionIdIfAny()));
	LWLockAcquire(ProcArrayLock, LW_EXCLUSIVE);
	MyProc->statusFlags &= ~PROC_IN_VACUUM;
	ProcGlobal->statusFlags[MyProc->pgxactoff] = MyProc->statusFlags;
	LWLockRelease(ProcArrayLock);
}

/*
 * TesseraCompact
 *		Move the delta stripes of rel whose writers committed before
 *		oldest_xmin into stripes of pages, in runs of at least min_run delta
 *		stripes.  Returns the number of rows moved.  The caller holds at
 *		least ShareUpdateExclusiveLock.
 */
uint64
TesseraCompact(Relation rel, TransactionId oldest_xmin, int elevel, int min_run)
{
	TesseraMeta meta;
	SnapshotData dirty;
	List	   *rows;
	List	   *run = NIL;
	uint64		run_rows = 0;
	Size		run_bytes = 0;
	uint64		prev_end = 0;
	uint64		moved = 0;
	int			nruns = 0;
	int			nstripes = 0;
	bool		pushed = false;
	bool		writing = false;
	ListCell   *lc;
	TesseraOptions opts;

	TesseraReadMeta(rel, &meta);
	if (!meta.valid)
		return 0;
	TesseraGetOptions(RelationGetRelid(rel), &opts);

	/* reading delta bytes may need TOAST, which needs a snapshot */
	if (!ActiveSnapshotSet())
	{
		PushActiveSnapshot(GetTransactionSnapshot());
		pushed = true;
	}

	/*
	 * A dirty snapshot shows committed rows and those of running
	 * transactions (whose placeholders must end a run); aborted ones are
	 * holes.
	 */
	InitDirtySnapshot(dirty);
	rows = TesseraListCatalogRows(meta.storage_id, &dirty, true);

	for (int pass = 0; pass <= list_length(rows); pass++)
	{
		TesseraStripe *s = pass < list_length(rows) ? list_nth(rows, pass) : NULL;
		bool		take = s != NULL && movable(s, oldest_xmin);

		if (take && run != NIL)
		{
			uint64		gap = s->first_rownum - prev_end;

			/* extend the run, unless it would get too big or too holey */
			if (s->first_rownum >= prev_end &&
				gap <= Max((uint64) COMPACT_MAX_GAP, run_rows) &&
				run_rows + gap + s->row_count <= (uint64) opts.stripe_row_limit &&
				run_bytes + s->data_bytes <= COMPACT_MAX_RUN_BYTES)
			{
				run = lappend(run, s);
				run_rows += gap + s->row_count;
				run_bytes += s->data_bytes;
				prev_end = s->first_rownum + s->row_count;
				continue;
			}
		}

		/* s ends the current run */
		if (list_length(run) >= Max(min_run, 2))
		{
			if (!writing)
			{
				TesseraLeaveVacuumMode();
				writing = true;
			}
			if (TesseraAmBackgroundWorker())
				pgstat_report_activity(STATE_RUNNING,
										psprintf("tessera compaction of %s: " UINT64_FORMAT
												 " rows moved, run %d of up to %d delta stripes",
												 RelationGetRelationName(rel), moved, nruns + 1,
												 list_length(run)));
			compact_run(rel, meta.storage_id, run);
			foreach(lc, run)
				moved += ((TesseraStripe *) lfirst(lc))->row_count;
			nruns++;
			nstripes += list_length(run);
		}
		list_free(run);
		run = NIL;
		run_rows = 0;
		run_bytes = 0;
		if (take)
		{
			run = list_make1(s);
			run_rows = s->row_count;
			run_bytes = s->data_bytes;
			prev_end = s->first_rownum + s->row_count;
		}
	}
	list_free_deep(rows);

	if (pushed)
		PopActiveSnapshot();

	if (nruns > 0)
		ereport(elevel,
				(errmsg("compacted " UINT64_FORMAT " delta rows of \"%s\" from %d delta stripes into %d stripes",
						moved, RelationGetRelationName(rel), nstripes, nruns)));
	return moved;
}

/*
 * tessera.compact(regclass) -> bigint
 *		Move the table's delta rows into stripes now; returns the rows moved.
 */
Datum
tessera_compact(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	Relation	rel;
	uint64		moved;

	rel = table_open(relid, ShareUpdateExclusiveLock);
	if (!IsTesseraRelation(rel))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a tessera table", RelationGetRelationName(rel))));
	if (!TesseraRelationOwnerCheck(relid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_TABLE, RelationGetRelationName(rel));
	if (RELATION_IS_OTHER_TEMP(rel))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot compact temporary tables of other sessions")));

	TesseraFlushRelation(rel);
	moved = TesseraCompact(rel, GetOldestNonRemovableTransactionId(rel), DEBUG1, 2);
	table_close(rel, NoLock);
	PG_RETURN_INT64((int64) moved);
}
