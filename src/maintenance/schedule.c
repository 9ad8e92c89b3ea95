/*-------------------------------------------------------------------------
 *
 * schedule.c
 *	  When maintenance runs: background compaction after small writes,
 *	  more rounds of giving space back after VACUUM.
 *
 * NOTES
 *	  Owns two per-backend lists, both in TopMemoryContext: the tables for
 *	  which this transaction asked for a background worker (started at
 *	  commit by this file's transaction callback, forgotten at abort), and
 *	  the tables the running VACUUM processed (worked through by the
 *	  utility hook after VACUUM returns).  The writer tells this file about
 *	  each delta stripe it writes through tessera_delta_stripe_hook, so the
 *	  writer needs nothing from this layer.
 *
 *	  Nothing here takes a lock on a table except TesseraReclaimAfterVacuum,
 *	  which never waits for one (another VACUUM or worker is on it).
 *
 * IDENTIFICATION
 *	  src/maintenance/schedule.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "postmaster/autovacuum.h"
#include "postmaster/bgworker.h"
#include "storage/lmgr.h"
#include "storage/procarray.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "tessera/catalog.h"
#include "tessera/maintenance.h"
#include "tessera/writer.h"

int			tessera_autocompact_stripes = 1000;
int			tessera_compaction_log_level = LOG;

/* tables whose delta this transaction grew past the trigger (TopMemoryContext) */
static List *pending_launches = NIL;

typedef struct PendingLaunch
{
	Oid			dboid;
	Oid			relid;
	bool		reclaim;		/* also give space back (after autovacuum) */
} PendingLaunch;

/*
 * Automatic compaction (autovacuum, background workers) merges only runs of
 * about tessera.autocompact_stripes delta stripes: every merged stripe takes
 * pages of its own, so merging a few small writes at a time would leave a
 * trail of nearly empty stripes.  VACUUM and tessera.compact() merge any run.
 */
int
TesseraAutoCompactMinRun(void)
{
	return tessera_autocompact_stripes > 0 ? Max(tessera_autocompact_stripes / 2, 2) : 2;
}

/*
 * Background compaction.
 *
 * A transaction that writes a delta stripe whose stripe id is a multiple
 * of tessera.autocompact_stripes -- roughly, every that many small writes
 * to a table -- starts a background worker after it commits, which
 * compacts the table if nobody else holds it (VACUUM, another worker).
 * Dynamic workers need no shared_preload_libraries; a failed launch (no
 * free worker slot) is harmless: VACUUM compacts too.
 */
static void
note_delta_stripe(Relation rel, uint64 stripe_id)
{
	if (tessera_autocompact_stripes <= 0 ||
		(stripe_id + 1) % (uint64) tessera_autocompact_stripes != 0)
		return;
	TesseraRequestBackgroundWork(rel, false);
}

/*
 * TesseraRequestBackgroundWork
 *		Start a background worker for rel once this transaction commits: it
 *		compacts the delta, and with reclaim gives space back (reclaim.c):
 *		what autovacuum's VACUUM leaves to a next transaction.
 */
void
TesseraRequestBackgroundWork(Relation rel, bool reclaim)
{
	PendingLaunch *p;
	MemoryContext old;
	ListCell   *lc;

	if (rel->rd_rel->relpersistence == RELPERSISTENCE_TEMP)
		return;
	foreach(lc, pending_launches)
	{
		p = lfirst(lc);
		if (p->relid == RelationGetRelid(rel))
		{
			p->reclaim |= reclaim;
			return;
		}
	}
	old = MemoryContextSwitchTo(TopMemoryContext);
	p = palloc(sizeof(PendingLaunch));
	p->dboid = MyDatabaseId;
	p->relid = RelationGetRelid(rel);
	p->reclaim = reclaim;
	pending_launches = lappend(pending_launches, p);
	MemoryContextSwitchTo(old);
}

/* At commit: start the workers asked for; at abort: forget them. */
static void
launch_workers(bool commit)
{
	ListCell   *lc;

	foreach(lc, pending_launches)
	{
		PendingLaunch *p = lfirst(lc);
		BackgroundWorker bgw;

		if (!commit)
			continue;
		memset(&bgw, 0, sizeof(bgw));
		snprintf(bgw.bgw_name, BGW_MAXLEN, "tessera compaction of relation %u", p->relid);
		snprintf(bgw.bgw_type, BGW_MAXLEN, "tessera compaction");
		bgw.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
		bgw.bgw_start_time = BgWorkerStart_RecoveryFinished;
		bgw.bgw_restart_time = BGW_NEVER_RESTART;
		snprintf(bgw.bgw_library_name, BGW_MAXLEN, "tessera");
		snprintf(bgw.bgw_function_name, BGW_MAXLEN, "tessera_compaction_main");
		bgw.bgw_main_arg = ObjectIdGetDatum(p->relid);
		memcpy(bgw.bgw_extra, &p->dboid, sizeof(Oid));
		memcpy(bgw.bgw_extra + sizeof(Oid), &p->reclaim, sizeof(bool));
		bgw.bgw_notify_pid = 0;
		if (!RegisterDynamicBackgroundWorker(&bgw, NULL))
			ereport(DEBUG1,
					(errmsg("could not start a tessera compaction worker: no free worker slot"),
					 errhint("VACUUM compacts the table too; max_worker_processes bounds the workers.")));
	}
	list_free_deep(pending_launches);
	pending_launches = NIL;
}

/*
 * An explicit VACUUM finishes the job in transactions of its own.
 *
 * Pages a VACUUM frees (replaced stripes, moved stripes' old copies) are
 * free only once its transaction passes the xmin horizon; VACUUM runs each
 * table in one transaction, so a table would shrink only at the next
 * VACUUM.  VACUUM notes the tessera tables it processed, and the utility
 * hook runs steps 2 and 3 again, each round in a new transaction, right
 * after VACUUM returns (VACUUM never runs inside a transaction block, so
 * this is what vacuum() itself does between tables).  Autovacuum gets
 * there on its next run.
 */
static List *vacuumed = NIL;	/* relids, in TopMemoryContext */

#define RECLAIM_ROUNDS 3

void
TesseraNoteVacuumed(Relation rel, bool more_work)
{
	/* autovacuum: a background worker takes the next rounds */
	if (TesseraAmAutoVacuumWorker())
	{
		if (more_work)
			TesseraRequestBackgroundWork(rel, true);
		return;
	}
	if (!TesseraAmBackgroundWorker())
		TesseraNoteWorkerTable(RelationGetRelid(rel));
}

/* Add relid to the tables TesseraReclaimAfterVacuum goes through. */
void
TesseraNoteWorkerTable(Oid relid)
{
	MemoryContext old;

	if (list_member_oid(vacuumed, relid))
		return;
	old = MemoryContextSwitchTo(TopMemoryContext);
	vacuumed = lappend_oid(vacuumed, relid);
	MemoryContextSwitchTo(old);
}

/* Forget the list (a new VACUUM starts, or one failed). */
void
TesseraForgetVacuumed(void)
{
	list_free(vacuumed);
	vacuumed = NIL;
}

/*
 * TesseraReclaimAfterVacuum
 *		Called by the utility hook after VACUUM returned, in the transaction
 *		it left open.
 */
void
TesseraReclaimAfterVacuum(int elevel)
{
	List	   *rels = vacuumed;
	ListCell   *lc;

	vacuumed = NIL;
	foreach(lc, rels)
	{
		Oid			relid = lfirst_oid(lc);

		for (int round = 0; round < RECLAIM_ROUNDS; round++)
		{
			Relation	rel;
			TesseraReclaimResult result;
			bool		more = false;

			if (round > 0)
			{
				CommitTransactionCommand();
				StartTransactionCommand();
			}
			PushActiveSnapshot(GetTransactionSnapshot());
			/*
			 * Never wait: another VACUUM may hold the table (and a VACUUM
			 * with SKIP_LOCKED must not block here); its own run reclaims.
			 */
			if (!ConditionalLockRelationOid(relid, ShareUpdateExclusiveLock))
				rel = NULL;
			else
				rel = try_relation_open(relid, NoLock);
			if (rel != NULL)
			{
				if (IsTesseraRelation(rel))
					more = TesseraReclaimSpace(rel, GetOldestNonRemovableTransactionId(rel),
											   elevel, &result);
				relation_close(rel, NoLock);
			}
			PopActiveSnapshot();
			if (!more)
				break;
		}
	}
	list_free(rels);
}

static void
schedule_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PREPARE:
			/* background compaction only for what committed */
			launch_workers(event == XACT_EVENT_COMMIT);
			break;
		default:
			break;
	}
}

/* _PG_init: hear of delta stripes, launch workers at commit. */
void
TesseraRegisterMaintenance(void)
{
	tessera_delta_stripe_hook = note_delta_stripe;
	RegisterXactCallback(schedule_xact_callback, NULL);
}
