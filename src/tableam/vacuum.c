/*-------------------------------------------------------------------------
 *
 * vacuum.c
 *	  VACUUM of a tessera relation: dead rows' index entries, row state
 *	  freezing, relfrozenxid, statistics.
 *
 * NOTES
 *	  Stripes hold no transaction ids; the row states of changed rows do.
 *	  VACUUM walks the state pages (never the stripes) and
 *
 *	  - collects rows whose deletion committed before every running
 *		snapshot (or that a lost ON CONFLICT insertion super-deleted), and
 *		removes their index entries with the index AMs' bulk delete;
 *	  - then marks those rows deleted-for-everyone with no transaction id
 *		left (FROZEN_DELETED | INDEXES_CLEAN);
 *	  - clears entries of aborted deleters and of lockers that are gone;
 *	  - sets relfrozenxid / relminmxid to the oldest id still in use, so
 *		that anti-wraparound VACUUM keeps working as for heap.
 *
 *	  Row numbers are never reused, so no index entry can ever point at a
 *	  different row than the one it was made for, whatever the order of
 *	  these steps.  The stripes' own catalog rows are ordinary heap tuples,
 *	  vacuumed and frozen with tessera_internal.stripe.
 *
 *	  Holding ShareUpdateExclusiveLock, VACUUM runs alongside reads and
 *	  writes: a row that is dead to everyone cannot be changed any more,
 *	  and entries of running transactions are left alone.
 *
 * IDENTIFICATION
 *	  src/tableam/vacuum.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "access/genam.h"
#include "access/multixact.h"
#include "access/transam.h"
#include "access/xact.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/autovacuum.h"
#include "storage/bufmgr.h"
#include "storage/procarray.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "tessera/catalog.h"
#include "tessera/maintenance.h"
#include "tessera/rowstate.h"
#include "tessera/storage.h"
#include "tessera/tableam.h"
#include "tessera/tessera.h"
#include "tessera/xlog.h"

typedef struct VacState
{
	Relation	rel;
	TransactionId OldestXmin;
	MultiXactId OldestMxact;
	TransactionId min_xid;		/* oldest xid still in a state entry */
	MultiXactId min_multi;		/* oldest multixact still in one */
	TesseraDeadTids dead;		/* dead rows whose index entries must go */
	int			nindexes;
	Relation   *indexes;
	IndexBulkDeleteResult **stats;
	BufferAccessStrategy strategy;
	int			elevel;
	uint64		dead_total;
	TransactionId latest_removed;	/* newest deleter of a row made dead */
	uint64		cleared;
	uint64		kept;
	int			index_passes;
} VacState;

static void
note_xid(VacState *vs, TransactionId xid)
{
	if (TransactionIdIsNormal(xid) &&
		(!TransactionIdIsValid(vs->min_xid) || TransactionIdPrecedes(xid, vs->min_xid)))
		vs->min_xid = xid;
}

/* Remove the collected rows' index entries, then freeze their states. */
static void
flush_dead(VacState *vs)
{
	int			i = 0;

	if (vs->dead.num_items == 0)
		return;

	for (int k = 0; k < vs->nindexes; k++)
	{
		IndexVacuumInfo ivinfo;

		TesseraIndexVacuumInfoInit(&ivinfo, vs->rel);
		ivinfo.index = vs->indexes[k];
		ivinfo.analyze_only = false;
		ivinfo.report_progress = false;
		ivinfo.estimated_count = true;
		ivinfo.message_level = vs->elevel;
		ivinfo.num_heap_tuples = vs->rel->rd_rel->reltuples;
		ivinfo.strategy = vs->strategy;
		vs->stats[k] = TesseraDeadTidsBulkDelete(&ivinfo, vs->stats[k], &vs->dead);
	}
	vs->index_passes++;

	/*
	 * Standby queries whose snapshot may still see these rows must be
	 * cancelled before the rows are frozen dead there, as heap's pruning
	 * does.  Rows frozen by an earlier, interrupted VACUUM have no deleter
	 * left to name: the cutoff bounds them all.
	 */
	TesseraLogConflictHorizon(vs->rel, TransactionIdIsValid(vs->latest_removed) ?
							  vs->latest_removed : vs->OldestXmin);

	/* freeze the states, one WAL record per state page */
	while (i < vs->dead.num_items)
	{
		uint64		rownum = 0;
		uint64		page_first;
		TesseraStateRef ref;
		GenericXLogState *xlog;
		Page		page;
		TesseraRowState *entries;

		(void) TesseraTidToRownum(&vs->dead.items[i], &rownum);
		page_first = rownum - rownum % TESSERA_STATE_ROWS;
		TesseraLockRowState(vs->rel, rownum, &ref);
		xlog = GenericXLogStart(vs->rel);
		page = GenericXLogRegisterBuffer(xlog, ref.buf, 0);
		entries = (TesseraRowState *) PageGetContents(page);
		while (i < vs->dead.num_items)
		{
			(void) TesseraTidToRownum(&vs->dead.items[i], &rownum);
			if (rownum - page_first >= TESSERA_STATE_ROWS)
				break;
			memset(&entries[rownum - page_first], 0, sizeof(TesseraRowState));
			entries[rownum - page_first].infomask =
				TESSERA_RS_FROZEN_DELETED | TESSERA_RS_INDEXES_CLEAN;
			i++;
		}
		GenericXLogFinish(xlog);
		TesseraUnlockRowState(&ref);
	}
	vs->dead_total += vs->dead.num_items;
	TesseraDeadTidsReset(&vs->dead);
}

static void
vacuum_state_page(Relation rel, BlockNumber blkno, uint64 first_rownum, void *arg)
{
	VacState   *vs = (VacState *) arg;
	TesseraRowState entries[TESSERA_STATE_ROWS];
	bool		clear[TESSERA_STATE_ROWS];
	bool		any_clear = false;
	TesseraRowState *live;
	Buffer		buf;

	TesseraVacuumDelayPoint();

	/* classify on a copy, without holding the lock while asking clog */
	buf = TesseraLockStatePage(rel, blkno, &live);
	memcpy(entries, live, sizeof(entries));
	UnlockReleaseBuffer(buf);

	memset(clear, 0, sizeof(clear));
	for (int i = 0; i < TESSERA_STATE_ROWS; i++)
	{
		TesseraRowState *st = &entries[i];
		TransactionId upd;
		bool		dead = false;

		if (TesseraRowStateEmpty(st))
			continue;
		if (st->infomask & TESSERA_RS_FROZEN_DELETED)
			dead = (st->infomask & TESSERA_RS_INDEXES_CLEAN) == 0;
		else
		{
			upd = TesseraRowUpdateXid(st);
			if (TransactionIdIsValid(upd) &&
				!TransactionIdIsInProgress(upd) && TransactionIdDidCommit(upd))
			{
				if (TransactionIdPrecedes(upd, vs->OldestXmin))
				{
					dead = true;
					if (!TransactionIdIsValid(vs->latest_removed) ||
						TransactionIdFollows(upd, vs->latest_removed))
						vs->latest_removed = upd;
				}
				else
				{
					note_xid(vs, upd);
					vs->kept++;
				}
			}
			else
			{
				/* no committed updater: is anyone still holding the row? */
				bool		running;

				if (st->infomask & TESSERA_RS_IS_MULTI)
					running = MultiXactIdIsRunning(st->xmax, false);
				else
					running = TransactionIdIsInProgress(st->xmax);
				if (running)
				{
					if (st->infomask & TESSERA_RS_IS_MULTI)
					{
						MultiXactMember *members;
						int			n = GetMultiXactIdMembers(st->xmax, &members, false, false);

						for (int m = 0; m < n; m++)
							note_xid(vs, members[m].xid);
						if (n > 0)
							pfree(members);
						if (!MultiXactIdIsValid(vs->min_multi) ||
							MultiXactIdPrecedes(st->xmax, vs->min_multi))
							vs->min_multi = st->xmax;
					}
					else
						note_xid(vs, st->xmax);
					vs->kept++;
				}
				else
				{
					clear[i] = true;
					any_clear = true;
				}
			}
		}
		if (dead)
		{
			if (vs->dead.num_items >= vs->dead.max_items)
				flush_dead(vs);
			TesseraRownumToTid(first_rownum + i, &vs->dead.items[vs->dead.num_items++]);
		}
	}

	/* clear entries of aborted deleters and finished lockers */
	if (any_clear)
	{
		GenericXLogState *xlog;
		Page		page;
		TesseraRowState *e;

		buf = TesseraLockStatePage(rel, blkno, &live);
		xlog = GenericXLogStart(rel);
		page = GenericXLogRegisterBuffer(xlog, buf, 0);
		e = (TesseraRowState *) PageGetContents(page);
		for (int i = 0; i < TESSERA_STATE_ROWS; i++)
		{
			/* only if nobody changed it since we looked */
			if (clear[i] && memcmp(&e[i], &entries[i], sizeof(TesseraRowState)) == 0)
			{
				memset(&e[i], 0, sizeof(TesseraRowState));
				vs->cleared++;
			}
		}
		GenericXLogFinish(xlog);
		UnlockReleaseBuffer(buf);
	}
}

void
tessera_relation_vacuum(Relation rel, struct VacuumParams *params,
						BufferAccessStrategy bstrategy)
{
	VacState	vs;
	int			folded_stripes;
	uint64		folded_rows;
	TesseraReclaimResult reclaim;
	TransactionId FreezeLimit;
	MultiXactId MultiXactCutoff;
	BlockNumber nblocks;
	TesseraMeta meta;
	uint64		rows = 0;
	Size		mem = (Size) (TesseraAmAutoVacuumWorker() && autovacuum_work_mem != -1 ?
							  autovacuum_work_mem : maintenance_work_mem) * 1024;
	int			max_items;
	TimestampTz started = GetCurrentTimestamp();

	memset(&vs, 0, sizeof(vs));
	vs.rel = rel;
	vs.strategy = bstrategy;
	vs.elevel = (params->options & VACOPT_VERBOSE) ? INFO : DEBUG2;
	TesseraVacuumCutoffs(rel, params, &vs.OldestXmin, &vs.OldestMxact, &FreezeLimit,
						 &MultiXactCutoff);

	/* delta rows every snapshot sees move into stripes first */
	TesseraCompact(rel, vs.OldestXmin, vs.elevel,
				   TesseraAmAutoVacuumWorker() ? TesseraAutoCompactMinRun() : 2);

	max_items = (int) Min(mem / sizeof(ItemPointerData),
						  (Size) (MaxAllocSize / sizeof(ItemPointerData)) - 1);
	max_items = Max(max_items, 1024);
	TesseraDeadTidsInit(&vs.dead, max_items);

	if (params->index_cleanup != VACOPTVALUE_DISABLED)
		vac_open_indexes(rel, RowExclusiveLock, &vs.nindexes, &vs.indexes);

	/* indexes are vacuumed serially; say so where heap would (temp tables) */
	if (params->nworkers > 0 && vs.nindexes > 1 && RelationUsesLocalBuffers(rel))
		ereport(WARNING,
				(errmsg("disabling parallel option of vacuum on \"%s\" --- cannot vacuum temporary tables in parallel",
						RelationGetRelationName(rel))));
	vs.stats = palloc0(sizeof(IndexBulkDeleteResult *) * Max(vs.nindexes, 1));

	TesseraForEachStatePage(rel, vacuum_state_page, &vs);
	flush_dead(&vs);

	/* rewrite stripes that are mostly dead without those rows (reclaim.c) */
	folded_stripes = TesseraFoldStripes(rel, vs.OldestXmin, &folded_rows);

	/* index cleanup pass and statistics */
	for (int k = 0; k < vs.nindexes; k++)
	{
		IndexVacuumInfo ivinfo;

		TesseraIndexVacuumInfoInit(&ivinfo, rel);
		ivinfo.index = vs.indexes[k];
		ivinfo.analyze_only = false;
		ivinfo.report_progress = false;
		ivinfo.estimated_count = true;
		ivinfo.message_level = vs.elevel;
		ivinfo.num_heap_tuples = rel->rd_rel->reltuples;
		ivinfo.strategy = bstrategy;
		vs.stats[k] = vac_cleanup_one_index(&ivinfo, vs.stats[k]);
		if (vs.stats[k] && !vs.stats[k]->estimated_count)
			TesseraUpdateRelStats(vs.indexes[k], vs.stats[k]->num_pages,
								  vs.stats[k]->num_index_tuples, false,
								  InvalidTransactionId, InvalidMultiXactId);
	}
	if (vs.nindexes > 0)
		vac_close_indexes(vs.nindexes, vs.indexes, NoLock);


	/* live rows for the planner */
	/* relpages in TID blocks, as ANALYZE counts them (see relation_size) */
	nblocks = RelationGetNumberOfBlocks(rel);
	TesseraReadMeta(rel, &meta);
	if (meta.valid)
	{
		Snapshot	snapshot = RegisterSnapshot(GetLatestSnapshot());
		TableScanDesc scan = table_beginscan(rel, snapshot, 0, NULL);

		/* counting through a scan hides deleted rows; cheap: nothing is decoded */
		rows = 0;
		{
			TupleTableSlot *slot = table_slot_create(rel, NULL);

			while (table_scan_getnextslot(scan, ForwardScanDirection, slot))
				rows++;
			ExecDropSingleTupleTableSlot(slot);
		}
		table_endscan(scan);
		UnregisterSnapshot(snapshot);
	}

	/* every xid older than the oldest one left is gone from the table */
	{
		TransactionId newfrozen = vs.OldestXmin;
		MultiXactId newminmulti = vs.OldestMxact;

		if (TransactionIdIsValid(vs.min_xid) && TransactionIdPrecedes(vs.min_xid, newfrozen))
			newfrozen = vs.min_xid;
		if (MultiXactIdIsValid(vs.min_multi) && MultiXactIdPrecedes(vs.min_multi, newminmulti))
			newminmulti = vs.min_multi;
		TesseraUpdateRelStats(rel, nblocks, (double) rows,
							  vs.nindexes > 0 || RelationGetForm(rel)->relhasindex,
							  newfrozen, newminmulti);
	}
	TesseraReportVacuum(rel, (PgStat_Counter) rows, 0, started);

	/*
	 * Clear folded rows' states, give empty pages back (needs a moment of
	 * AccessExclusiveLock).  An explicit VACUUM goes on in new transactions
	 * once this one commits (TesseraReclaimAfterVacuum).
	 */
	(void) TesseraReclaimSpace(rel, vs.OldestXmin, vs.elevel, &reclaim);
	TesseraNoteVacuumed(rel, folded_stripes > 0 || reclaim.stripes_moved > 0 ||
						reclaim.pages_unhooked > 0);

	ereport(vs.elevel,
			(errmsg("vacuuming tessera table \"%s.%s\": " UINT64_FORMAT " live rows in %u pages",
					get_namespace_name(RelationGetNamespace(rel)),
					RelationGetRelationName(rel), rows, TesseraPhysicalBlocks(rel)),
			 errdetail("Removed index entries of " UINT64_FORMAT " dead rows in %d index passes; "
					   "cleared " UINT64_FORMAT " row states of aborted or finished transactions; "
					   UINT64_FORMAT " row states still in use; "
					   "rewrote %d stripes without their " UINT64_FORMAT " dead rows; "
					   "moved %d stripes, truncated %u pages, %u free pages remain.",
					   vs.dead_total, vs.index_passes, vs.cleared, vs.kept,
					   folded_stripes, folded_rows, reclaim.stripes_moved,
					   reclaim.pages_truncated, reclaim.pages_free)));
}
