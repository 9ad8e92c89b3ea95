/*-------------------------------------------------------------------------
 *
 * reclaim.c
 *	  Giving deleted rows' space back: folding dead rows out of stripes,
 *	  clearing their row states, moving stripes down, truncating.
 *
 * NOTES
 *	  A deleted row costs its bytes in a stripe and a 16-byte entry in a
 *	  state page; after VACUUM removes its index entries it is dead for
 *	  everyone (FROZEN_DELETED) and neither is needed, but stripes are
 *	  immutable and a state page is shared by 500 row numbers.  Space comes
 *	  back in three steps, each safe on its own:
 *
 *	  1. Fold (VACUUM, ShareUpdateExclusiveLock).  A stripe with at least
 *		 tessera.vacuum_fold_fraction of its rows dead for everyone is
 *		 rewritten with those rows' values left out (NULL) and the rows
 *		 listed as dead in its directory; every row keeps its row number,
 *		 so TIDs and index entries stay valid (as in compaction).  The new
 *		 stripe is appended; the catalog swap is MVCC, and both versions
 *		 answer every snapshot the same (the rows left out were dead to all
 *		 of them).
 *
 *	  2. Free (under a conditional AccessExclusiveLock, like heap's
 *		 truncation).  Once no snapshot can read a folded stripe's older
 *		 version (its rewriter precedes the xmin horizon), the folded rows'
 *		 states are cleared, and state and map pages left empty are
 *		 unhooked from the map.  Standby queries that might still read the
 *		 older version are cancelled first (conflict record with the
 *		 rewriter's xid).
 *
 *	  3. Move and truncate (same lock).  Pages referenced by nothing a
 *		 snapshot can read -- stripes replaced or rolled back before the
 *		 horizon, unhooked state pages -- are free.  Stripes near the end
 *		 are copied into free ranges lower down (a new catalog row, the
 *		 same bytes and stripe id), and free pages at the end are
 *		 truncated.  The copy's old pages are free only once its own swap
 *		 passes the horizon, so an explicit VACUUM repeats steps 2 and 3 in
 *		 new transactions right after (utility hook); autovacuum gets there
 *		 on its next run.
 *
 *	  Steps 2 and 3 change what readers may have cached across statements:
 *	  map lookups (state_cache), stripe locations and directories (the
 *	  fetch cache).  The AccessExclusiveLock means no backend is using the
 *	  table, and a relcache invalidation makes every backend forget those
 *	  caches before it locks the table again (on a standby the lock is
 *	  replayed and the invalidation comes with the commit record).
 *
 * IDENTIFICATION
 *	  src/maintenance/reclaim.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/table.h"
#include "access/transam.h"
#include "access/xact.h"
#include "catalog/storage.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/autovacuum.h"
#include "postmaster/bgworker.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/procarray.h"
#include "utils/inval.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "tessera/cache.h"
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

double		tessera_vacuum_fold_fraction = 0.1;

/* stripes with fewer live rows than stripe_row_limit / this merge in VACUUM */
#define SMALL_STRIPE_DIVISOR	4

/* how long VACUUM tries for the AccessExclusiveLock of steps 2 and 3 */
#define RECLAIM_LOCK_TRIES		20
#define RECLAIM_LOCK_WAIT_MS	50

/* Is a row state one VACUUM made: deleted for everyone, no index entries? */
static inline bool
foldable_state(const TesseraRowState *st)
{
	return (st->infomask & (TESSERA_RS_FROZEN_DELETED | TESSERA_RS_INDEXES_CLEAN)) ==
		(TESSERA_RS_FROZEN_DELETED | TESSERA_RS_INDEXES_CLEAN);
}

/*
 * Do all snapshots see the stripe's rows as inserted?  Then step 1 may
 * rewrite it (a delta stripe too: it becomes pages).
 */
static bool
foldable_stripe(const TesseraStripe *s, TransactionId oldest_xmin)
{
	if (s->row_count == 0 || s->own)
		return false;
	if (s->flags & TESSERA_STRIPE_FROZEN)
		return true;
	if (TransactionIdIsInProgress(s->xmin) || !TransactionIdDidCommit(s->xmin))
		return false;
	return TransactionIdPrecedes(s->xmin, oldest_xmin);
}

/* ... and step 3 may move it (a stripe of pages). */
static bool
movable_stripe(const TesseraStripe *s, TransactionId oldest_xmin)
{
	return !(s->flags & TESSERA_STRIPE_DELTA) && s->nblocks > 0 &&
		foldable_stripe(s, oldest_xmin);
}

/*
 * Rows of stripe s that could be folded now and are not yet: dead for
 * everyone, not listed in its directory.  With `listed`, rows listed as
 * folded whose states are still there (step 2's work) instead.
 */
static uint64
count_states(Relation rel, TesseraStripe *s, TesseraStripeDir *dir, bool listed,
			 uint64 *pages)
{
	uint64		n = 0;
	uint64		last_page = PG_UINT64_MAX;

	if (pages)
		*pages = 0;

	for (uint32 g = 0; g < dir->hdr.n_row_groups; g++)
	{
		uint32		nrows = dir->rgs[g].row_count;
		TesseraRowState *states = palloc(sizeof(TesseraRowState) * nrows);
		bool	   *dead = palloc0(sizeof(bool) * nrows);

		if (TesseraReadRowStates(rel, dir->rgs[g].first_rownum, (int) nrows, states))
		{
			TesseraDecodeDeadRows(rel, s, dir, (int) g, dead);
			for (uint32 i = 0; i < nrows; i++)
				if (listed ? (dead[i] && (states[i].infomask & TESSERA_RS_FROZEN_DELETED))
					: (!dead[i] && foldable_state(&states[i])))
				{
					uint64		page = (dir->rgs[g].first_rownum + i) / TESSERA_STATE_ROWS;

					n++;
					if (pages && page != last_page)
					{
						(*pages)++;
						last_page = page;
					}
				}
		}
		pfree(states);
		pfree(dead);
	}
	return n;
}

/* Step 1 for one stripe of a run: add its rows, the dead ones folded. */
static uint64
fold_stripe(Relation rel, TesseraStripeBuilder *builder, TesseraStripe *s,
			TesseraStripeDir *dir)
{
	TesseraReader *r = TesseraReaderForStripe(rel, s, dir, GetActiveSnapshot(),
											  CurrentMemoryContext);
	uint64		folded = 0;

	r->check_deleted = false;	/* we decide, from the states and the list */
	for (uint32 g = 0; g < s->n_row_groups; g++)
	{
		TesseraBatch *b = &r->batch;
		TesseraRowState *states = palloc(sizeof(TesseraRowState) * dir->rgs[g].row_count);
		bool	   *dead = palloc0(sizeof(bool) * dir->rgs[g].row_count);

		TesseraReaderLoad(r, 0, (int) g);
		TesseraDecodeDeadRows(rel, s, dir, (int) g, dead);
		if (TesseraReadRowStates(rel, b->first_rownum, b->chunk_rows, states))
			for (int row = 0; row < b->chunk_rows; row++)
				if (foldable_state(&states[row]))
					dead[row] = true;
		folded += TesseraBuilderAddBatch(builder, b, dead);
		pfree(states);
		pfree(dead);
		TesseraVacuumDelayPoint();
	}
	TesseraReaderEnd(r);
	return folded;
}

typedef struct FoldItem
{
	TesseraStripe *s;
	TesseraStripeDir *dir;
} FoldItem;

/*
 * Step 1 for a run of adjacent stripes: rewrite them as one stripe, their
 * dead rows folded.  Neighbours merge so that what is left of them does not
 * pay a page's rounding and a directory each.
 */
static uint64
fold_run(Relation rel, uint64 storage_id, List *run)
{
	TesseraStripeBuilder *builder;
	uint64		got_storage;
	uint64		unused_first;
	uint64		stripe_id;
	uint64		folded = 0;
	uint64		next;
	List	   *replaced = NIL;
	ListCell   *lc;

	TesseraReserve(rel, 0, &got_storage, &unused_first, &stripe_id);
	if (got_storage != storage_id)
		elog(ERROR, "storage of tessera table \"%s\" changed during VACUUM",
			 RelationGetRelationName(rel));

	next = ((FoldItem *) linitial(run))->s->first_rownum;
	builder = TesseraBuilderBegin(rel, next);
	foreach(lc, run)
	{
		FoldItem   *item = lfirst(lc);

		/* row numbers the previous writer reserved and left unused: folded too */
		for (; next < item->s->first_rownum; next++)
			TesseraBuilderAddDead(builder);
		folded += fold_stripe(rel, builder, item->s, item->dir);
		next += item->s->row_count;
		replaced = lappend(replaced, item->s);
	}
	TesseraBuilderFinish(builder, rel, storage_id, stripe_id, replaced);
	return folded;
}

/*
 * TesseraFoldStripes
 *		Step 1: rewrite the stripes enough of whose rows are dead for
 *		everyone.  Returns the number of stripes rewritten; *rows gets the
 *		rows they list as dead.
 */
int
TesseraFoldStripes(Relation rel, TransactionId oldest_xmin, uint64 *rows)
{
	TesseraMeta meta;
	Snapshot	snapshot;
	List	   *stripes;
		int			nfolded = 0;
	bool		pushed = false;
	List	   *run = NIL;
	uint64		run_live = 0;
	uint64		run_first = 0;
	uint64		run_end = 0;
	bool		run_fold = false;
	TesseraOptions opts;
	MemoryContext cxt;
	MemoryContext old;

	*rows = 0;
	if (tessera_vacuum_fold_fraction >= 1.0)
		return 0;
	TesseraReadMeta(rel, &meta);
	if (!meta.valid)
		return 0;

	cxt = AllocSetContextCreate(CurrentMemoryContext, "tessera fold", ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(cxt);
	if (!ActiveSnapshotSet())
	{
		PushActiveSnapshot(GetTransactionSnapshot());
		pushed = true;
	}
	TesseraGetOptions(RelationGetRelid(rel), &opts);
	CommandCounterIncrement();	/* see what compaction just did */
	snapshot = RegisterSnapshot(GetLatestSnapshot());
	stripes = TesseraListCatalogRows(meta.storage_id, snapshot, false);
	for (int pass = 0; pass <= list_length(stripes); pass++)
	{
		TesseraStripe *s = pass < list_length(stripes) ? list_nth(stripes, pass) : NULL;
		TesseraStripeDir *dir = NULL;
		uint64		n = 0;
		uint64		state_pages = 0;
		uint64		live = 0;
		bool		take = false;
		bool		fold = false;

		if (s != NULL && foldable_stripe(s, oldest_xmin))
		{
			dir = TesseraLoadDir(rel, s, TesseraPhysicalBlocks(rel));
			n = meta.state_root != 0 ? count_states(rel, s, dir, false, &state_pages) : 0;
			live = s->row_count - n;
			if (dir->dead != NULL)
				for (uint32 g = 0; g < dir->hdr.n_row_groups; g++)
					live -= Min(dir->dead[g].value_count, live);
			/*
			 * Fold when enough rows are dead, or when the state pages its
			 * dead rows keep alive outweigh the stripe itself (scattered
			 * updates: one changed row makes a 500-row state page).
			 */
			fold = n > 0 && ((double) n >= tessera_vacuum_fold_fraction * (double) s->row_count ||
							 state_pages > s->nblocks);

			/*
			 * Small stripes -- what background compaction merged a few
			 * hundred small writes into, the tail of a load -- merge with
			 * their neighbours too: each pays a directory and a partly
			 * filled last page.
			 */
			take = fold || live < (uint64) opts.stripe_row_limit / SMALL_STRIPE_DIVISOR;
		}

		/* adjacent row numbers (no reservation between) and room: extend the run */
		if (take && run != NIL &&
			s->first_rownum == run_end &&
			run_live + live <= (uint64) opts.stripe_row_limit &&
			run_end + s->row_count - run_first <= TESSERA_MAX_STRIPE_ROWS)
		{
			FoldItem   *item = palloc(sizeof(FoldItem));

			item->s = s;
			item->dir = dir;
			run = lappend(run, item);
			run_live += live;
			run_fold |= fold;
			run_end = s->first_rownum + Max(s->row_count, s->reserved_rows);
			continue;
		}
		/* a run is rewritten if it folds rows or merges stripes */
		if (run != NIL && (run_fold || list_length(run) > 1))
		{
			TesseraLeaveVacuumMode();
			*rows += fold_run(rel, meta.storage_id, run);
			nfolded++;
			CHECK_FOR_INTERRUPTS();
		}
		if (run != NIL)
		{
			list_free_deep(run);
			run = NIL;
		}
		if (take)
		{
			FoldItem   *item = palloc(sizeof(FoldItem));

			item->s = s;
			item->dir = dir;
			run = list_make1(item);
			run_live = live;
			run_fold = fold;
			run_first = s->first_rownum;
			run_end = s->first_rownum + Max(s->row_count, s->reserved_rows);
		}
	}
	UnregisterSnapshot(snapshot);
	if (pushed)
		PopActiveSnapshot();
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
	return nfolded;
}

static int
start_block_desc(const ListCell *a, const ListCell *b)
{
	const TesseraStripe *sa = lfirst(a);
	const TesseraStripe *sb = lfirst(b);

	if (sa->start_block != sb->start_block)
		return sa->start_block > sb->start_block ? -1 : 1;
	return 0;
}

/* The lowest run of n free blocks that ends at or before limit, or 0. */
static BlockNumber
find_free_run(const bool *used, BlockNumber limit, BlockNumber n)
{
	BlockNumber run = 0;

	for (BlockNumber b = 1; b < limit; b++)
	{
		if (used[b])
		{
			run = 0;
			continue;
		}
		if (++run == n)
			return b + 1 - n;
	}
	return 0;
}

/* Pages a snapshot may still read, or that hold the metapage, map or states. */
static bool *
compute_used(Relation rel, uint64 storage_id, TransactionId oldest_xmin,
			 BlockNumber *nblocks, TransactionId *newest_gone, BlockNumber *state_high)
{
	bool	   *used;

	*nblocks = TesseraPhysicalBlocks(rel);
	used = palloc0(sizeof(bool) * Max(*nblocks, 1));
	used[TESSERA_METAPAGE_BLKNO] = true;
	*state_high = TesseraMarkStatePages(rel, used, *nblocks);
	TesseraMarkStripePages(storage_id, oldest_xmin, used, *nblocks, newest_gone);
	return used;
}

/* Would step 3 move or truncate anything? */
static bool
space_to_reclaim(List *stripes, const bool *used, BlockNumber nblocks,
				 BlockNumber state_high, TransactionId oldest_xmin)
{
	ListCell   *lc;

	if (nblocks > 1 && !used[nblocks - 1])
		return true;
	if (state_high > 0 && find_free_run(used, state_high, 1) != 0)
		return true;			/* a map or state page can move down */
	foreach(lc, stripes)
	{
		TesseraStripe *s = lfirst(lc);

		if (movable_stripe(s, oldest_xmin) &&
			find_free_run(used, s->start_block, s->nblocks) != 0)
			return true;
	}
	return false;
}

/* May step 2 clear the states of a folded stripe?  (Its older version is gone.) */
static bool
states_clearable(const TesseraStripe *s, TransactionId oldest_xmin)
{
	return (s->flags & TESSERA_STRIPE_FOLDED) &&
		(!TransactionIdIsNormal(s->catalog_xmin) ||
		 TransactionIdPrecedes(s->catalog_xmin, oldest_xmin));
}

/* Does some folded row still have a state step 2 would clear? */
static bool
folded_states_left(Relation rel, List *stripes, TransactionId oldest_xmin)
{
	ListCell   *lc;

	foreach(lc, stripes)
	{
		TesseraStripe *s = lfirst(lc);

		if (states_clearable(s, oldest_xmin) &&
			count_states(rel, s, TesseraLoadDir(rel, s, TesseraPhysicalBlocks(rel)), true, NULL) > 0)
			return true;
	}
	return false;
}

/* Take the AccessExclusiveLock without waiting for it long, as heap's truncation does. */
static bool
lock_for_reclaim(Relation rel)
{
	for (int i = 0; i < RECLAIM_LOCK_TRIES; i++)
	{
		if (ConditionalLockRelation(rel, AccessExclusiveLock))
			return true;
		CHECK_FOR_INTERRUPTS();
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 RECLAIM_LOCK_WAIT_MS, WAIT_EVENT_VACUUM_TRUNCATE);
		ResetLatch(MyLatch);
	}
	return false;
}

/*
 * Step 2: clear the states of rows that stripes no snapshot can miss list
 * as folded, and unhook the state pages left empty.
 */
static void
clear_folded_states(Relation rel, List *stripes, TransactionId oldest_xmin,
					TesseraReclaimResult *result)
{
	TransactionId newest_fold = InvalidTransactionId;
	ListCell   *lc;

	foreach(lc, stripes)
	{
		TesseraStripe *s = lfirst(lc);

		if (states_clearable(s, oldest_xmin) && TransactionIdIsNormal(s->catalog_xmin) &&
			(!TransactionIdIsValid(newest_fold) ||
			 TransactionIdFollows(s->catalog_xmin, newest_fold)))
			newest_fold = s->catalog_xmin;
	}
	TesseraLogConflictHorizon(rel, newest_fold);
	foreach(lc, stripes)
	{
		TesseraStripe *s = lfirst(lc);
		TesseraStripeDir *dir;

		if (!states_clearable(s, oldest_xmin))
			continue;
		dir = TesseraLoadDir(rel, s, TesseraPhysicalBlocks(rel));
		for (uint32 g = 0; g < dir->hdr.n_row_groups; g++)
		{
			bool	   *dead = palloc0(sizeof(bool) * dir->rgs[g].row_count);

			if (TesseraDecodeDeadRows(rel, s, dir, (int) g, dead) > 0)
				result->states_cleared +=
					TesseraClearFoldedStates(rel, dir->rgs[g].first_rownum,
											 (int) dir->rgs[g].row_count, dead);
			pfree(dead);
		}
		CHECK_FOR_INTERRUPTS();
	}
	result->pages_unhooked = TesseraUnhookEmptyStatePages(rel);
}

/*
 * Step 3's first half: copy stripes from the end into free runs below them,
 * last first, marking the pages they take in used[].  Standby queries that
 * may read what the copies replace are cancelled first (*conflict_logged).
 */
static void
move_stripes_down(Relation rel, List *stripes, bool *used, TransactionId oldest_xmin,
				  TransactionId newest_gone, bool *conflict_logged,
				  TesseraReclaimResult *result)
{
	ListCell   *lc;

	stripes = list_copy(stripes);
	list_sort(stripes, start_block_desc);
	foreach(lc, stripes)
	{
		TesseraStripe *s = lfirst(lc);
		TesseraStripe moved;
		BlockNumber target;
		char	   *data;

		if (!movable_stripe(s, oldest_xmin))
			continue;
		target = find_free_run(used, s->start_block, s->nblocks);
		if (target == 0)
			continue;
		if (LockHasWaitersRelation(rel, AccessExclusiveLock))
			break;				/* somebody needs the table: stop here */
		if (!*conflict_logged)
		{
			TesseraLogConflictHorizon(rel, newest_gone);
			*conflict_logged = true;
		}
		data = palloc(s->data_bytes);
		if (!TesseraReadBytes(rel, s->start_block, s->nblocks, 0, s->data_bytes, data, NULL))
			TesseraReportCorrupt(rel, s->stripe_id, -1, -1, "stripe pages are invalid");
		TesseraWriteStripePagesAt(rel, data, s->data_bytes, target);
		pfree(data);
		moved = *s;
		moved.start_block = target;
		/* its rows were visible to all: the copy is frozen (as compaction's) */
		moved.flags |= TESSERA_STRIPE_FROZEN;
		TesseraReplaceStripes(list_make1(s), &moved);
		for (BlockNumber b = target; b < target + s->nblocks; b++)
			used[b] = true;
		result->stripes_moved++;
		CHECK_FOR_INTERRUPTS();
	}
	list_free(stripes);
}

/*
 * TesseraReclaimSpace
 *		Steps 2 and 3.  The caller holds ShareUpdateExclusiveLock; this
 *		takes AccessExclusiveLock if it can get it within about a second,
 *		and otherwise does nothing.  Fills *result; returns true if it did
 *		anything a further round (in a later transaction) could build on.
 */
bool
TesseraReclaimSpace(Relation rel, TransactionId oldest_xmin, int elevel,
					TesseraReclaimResult *result)
{
	TesseraMeta meta;
	Snapshot	snapshot;
	List	   *stripes;
	TransactionId newest_gone;
	bool		conflict_logged = false;
	BlockNumber nblocks;
	BlockNumber state_high;
	BlockNumber keep;
	bool	   *used;
	bool		pushed = false;
	bool		ran = false;
	MemoryContext cxt;
	MemoryContext old;

	memset(result, 0, sizeof(*result));
	TesseraReadMeta(rel, &meta);
	if (!meta.valid)
		return false;

	cxt = AllocSetContextCreate(CurrentMemoryContext, "tessera reclaim", ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(cxt);
	if (!ActiveSnapshotSet())
	{
		PushActiveSnapshot(GetTransactionSnapshot());
		pushed = true;
	}

	CommandCounterIncrement();	/* see what folding just did */

	/*
	 * Look first, without the lock (concurrent writers may make this
	 * picture stale, which only matters for the decision): an exclusive
	 * lock for nothing would still stall readers and cost an xid.
	 */
	snapshot = RegisterSnapshot(GetLatestSnapshot());
	stripes = TesseraListCatalogRows(meta.storage_id, snapshot, false);
	used = compute_used(rel, meta.storage_id, oldest_xmin, &nblocks, &newest_gone, &state_high);
	if (!space_to_reclaim(stripes, used, nblocks, state_high, oldest_xmin) &&
		!(meta.state_root != 0 && (folded_states_left(rel, stripes, oldest_xmin) ||
								   TesseraAnyEmptyStatePage(rel))))
		goto done;				/* nothing to do */
	UnregisterSnapshot(snapshot);
	snapshot = NULL;

	TesseraLeaveVacuumMode();
	if (!lock_for_reclaim(rel))
	{
		ereport(elevel,
				(errmsg("\"%s\": space not reclaimed: the table is in use",
						RelationGetRelationName(rel))));
		result->skipped = true;
		goto done;
	}
	ran = true;
	TesseraForgetLayoutEverywhere(rel);
	TesseraReadMeta(rel, &meta);
	snapshot = RegisterSnapshot(GetLatestSnapshot());
	stripes = TesseraListCatalogRows(meta.storage_id, snapshot, false);

	/* step 2 */
	if (meta.state_root != 0)
		clear_folded_states(rel, stripes, oldest_xmin, result);

	/* step 3: which pages are free, now that we know */
	used = compute_used(rel, meta.storage_id, oldest_xmin, &nblocks, &newest_gone, &state_high);
	move_stripes_down(rel, stripes, used, oldest_xmin, newest_gone, &conflict_logged, result);

	/* map and state pages fill the single free pages left */
	if (!LockHasWaitersRelation(rel, AccessExclusiveLock))
	{
		if (!conflict_logged && state_high > 0 && find_free_run(used, state_high, 1) != 0)
		{
			TesseraLogConflictHorizon(rel, newest_gone);
			conflict_logged = true;
		}
		result->state_pages_moved = TesseraMoveStatePages(rel, used, nblocks);
	}

	/* give back the free pages at the end */
	keep = nblocks;
	while (keep > 1 && !used[keep - 1])
		keep--;
	if (keep < nblocks)
	{
		if (!conflict_logged)
			TesseraLogConflictHorizon(rel, newest_gone);
		RelationTruncate(rel, keep);
		result->pages_truncated = nblocks - keep;
	}
	for (BlockNumber b = 1; b < keep; b++)
		if (!used[b])
			result->pages_free++;

done:
	if (snapshot != NULL)
		UnregisterSnapshot(snapshot);
	if (pushed)
		PopActiveSnapshot();
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
	if (!ran)
		return false;

	if (result->states_cleared > 0 || result->pages_unhooked > 0 ||
		result->stripes_moved > 0 || result->state_pages_moved > 0 ||
		result->pages_truncated > 0)
	{
		/* other backends forget cached locations and map lookups; so do we */
		CacheInvalidateRelcache(rel);
		TesseraForgetRelationCaches(RelationGetRelid(rel));
	}
	ereport(elevel,
			(errmsg("\"%s\": cleared " UINT64_FORMAT " row states of folded rows, gave back "
					UINT64_FORMAT " state pages, moved %d stripes and %d state pages, truncated %u pages; %u free pages remain",
					RelationGetRelationName(rel), result->states_cleared,
					result->pages_unhooked, result->stripes_moved, result->state_pages_moved,
					result->pages_truncated, result->pages_free)));
	return result->stripes_moved > 0 || result->pages_unhooked > 0 ||
		result->states_cleared > 0;
}
