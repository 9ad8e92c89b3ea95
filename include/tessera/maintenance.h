/*-------------------------------------------------------------------------
 *
 * maintenance.h
 *	  Work on a table's storage beyond its rows' reads and writes:
 *	  compaction of the delta, folding dead rows out of stripes, giving
 *	  space back, and the background workers that run them.
 *
 * IDENTIFICATION
 *	  include/tessera/maintenance.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef TESSERA_MAINTENANCE_H
#define TESSERA_MAINTENANCE_H

#include "storage/block.h"
#include "utils/relcache.h"

/* compaction (maintenance/compact.c) */
extern uint64 TesseraCompact(Relation rel, TransactionId oldest_xmin, int elevel, int min_run);
extern void TesseraLeaveVacuumMode(void);

/* folding dead rows and giving space back (maintenance/reclaim.c) */
typedef struct TesseraReclaimResult
{
	bool		skipped;		/* could not get AccessExclusiveLock */
	uint64		states_cleared; /* states of folded rows cleared */
	uint64		pages_unhooked; /* state and map pages taken out of the map */
	int			stripes_moved;	/* stripes copied into free pages below them */
	int			state_pages_moved;	/* map and state pages moved down */
	BlockNumber pages_truncated;
	BlockNumber pages_free;		/* free pages left inside the relation */
} TesseraReclaimResult;

extern double tessera_vacuum_fold_fraction;
extern int	TesseraFoldStripes(Relation rel, TransactionId oldest_xmin, uint64 *rows);
extern bool TesseraReclaimSpace(Relation rel, TransactionId oldest_xmin, int elevel,
								TesseraReclaimResult *result);

/* when maintenance runs (maintenance/schedule.c) */
extern int	tessera_autocompact_stripes;
extern int	tessera_compaction_log_level;
extern void TesseraRegisterMaintenance(void);
extern int	TesseraAutoCompactMinRun(void);
extern void TesseraRequestBackgroundWork(Relation rel, bool reclaim);
extern void TesseraNoteVacuumed(Relation rel, bool more_work);
extern void TesseraNoteWorkerTable(Oid relid);
extern void TesseraReclaimAfterVacuum(int elevel);
extern void TesseraForgetVacuumed(void);

#endif							/* TESSERA_MAINTENANCE_H */
