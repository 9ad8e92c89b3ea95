/*-------------------------------------------------------------------------
 *
 * worker.c
 *	  The background worker that compacts a table's delta and, after
 *	  autovacuum, gives its space back.
 *
 * NOTES
 *	  Started by schedule.c at the commit of a transaction that asked for
 *	  it; one worker per table and request, connected to the table's
 *	  database.  Like autovacuum it never waits for the table's lock: if
 *	  someone else holds ShareUpdateExclusiveLock (VACUUM, another worker),
 *	  they do the work.
 *
 * IDENTIFICATION
 *	  src/maintenance/worker.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "storage/ipc.h"
#include "storage/lmgr.h"
#include "storage/procarray.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

#include "tessera/catalog.h"
#include "tessera/maintenance.h"

PGDLLEXPORT void tessera_compaction_main(Datum main_arg);

void
tessera_compaction_main(Datum main_arg)
{
	Oid			relid = DatumGetObjectId(main_arg);
	Oid			dboid;
	bool		reclaim;
	Relation	rel;

	memcpy(&dboid, MyBgworkerEntry->bgw_extra, sizeof(Oid));
	memcpy(&reclaim, MyBgworkerEntry->bgw_extra + sizeof(Oid), sizeof(bool));
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnectionByOid(dboid, InvalidOid, 0);

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	pgstat_report_activity(STATE_RUNNING, "tessera compaction");

	/* like autovacuum: never wait for a lock, somebody else is on it */
	if (ConditionalLockRelationOid(relid, ShareUpdateExclusiveLock))
	{
		rel = try_relation_open(relid, NoLock);
		if (rel != NULL)
		{
			if (IsTesseraRelation(rel))
			{
				TimestampTz start = GetCurrentTimestamp();
				uint64		moved;
				Oid			save_userid;
				int			save_sec_context;
				int			save_nestlevel;

				/*
				 * As VACUUM does for autovacuum: work as the table's owner,
				 * in a security-restricted operation with a safe search_path.
				 * Compaction runs no user code today; whatever it may run one
				 * day must not run as the superuser this worker connects as.
				 */
				GetUserIdAndSecContext(&save_userid, &save_sec_context);
				SetUserIdAndSecContext(rel->rd_rel->relowner,
									   save_sec_context | SECURITY_RESTRICTED_OPERATION);
				save_nestlevel = NewGUCNestLevel();
				(void) set_config_option("search_path", "pg_catalog, pg_temp", PGC_USERSET,
										 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
				moved = TesseraCompact(rel, GetOldestNonRemovableTransactionId(rel),
									   DEBUG1, TesseraAutoCompactMinRun());
				AtEOXact_GUC(false, save_nestlevel);
				SetUserIdAndSecContext(save_userid, save_sec_context);
				if (moved > 0)
				{
					long		secs;
					int			usecs;

					TimestampDifference(start, GetCurrentTimestamp(), &secs, &usecs);
					ereport(tessera_compaction_log_level,
							(errmsg("tessera compaction of \"%s.%s\": " UINT64_FORMAT
									" delta rows moved into stripes in %ld.%03d s",
									get_namespace_name(RelationGetNamespace(rel)),
									RelationGetRelationName(rel), moved, secs, usecs / 1000)));
				}
			}
			relation_close(rel, NoLock);
		}
	}
	CommitTransactionCommand();

	/* after autovacuum: give space back, as an explicit VACUUM does after its work */
	if (reclaim)
	{
		TesseraNoteWorkerTable(relid);
		StartTransactionCommand();
		TesseraReclaimAfterVacuum(DEBUG1);
		CommitTransactionCommand();
	}
	pgstat_report_activity(STATE_IDLE, NULL);
	proc_exit(0);
}
