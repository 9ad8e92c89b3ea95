/*-------------------------------------------------------------------------
 *
 * compat.h
 *	  What differs between the PostgreSQL versions tessera builds against,
 *	  in one place.
 *
 * NOTES
 *	  The code is written with PostgreSQL 16's names where they were renamed
 *	  (RelFileLocator for RelFileNode); on 15 they name the old types.  A
 *	  difference in a call's arguments gets a Tessera-prefixed wrapper here,
 *	  so that no other file tests PG_VERSION_NUM for it.
 *
 * IDENTIFICATION
 *	  include/tessera/compat.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef TESSERA_COMPAT_H
#define TESSERA_COMPAT_H

#include "access/tableam.h"
#include "catalog/pg_class.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "nodes/parsenodes.h"
#include "pgstat.h"
#include "postmaster/autovacuum.h"
#include "postmaster/bgworker.h"
#include "storage/proc.h"
#include "storage/standby.h"
#include "utils/acl.h"
#include "utils/rel.h"
#include "utils/tuplesort.h"

#if PG_VERSION_NUM >= 160000
#include "parser/parse_relation.h"
#include "storage/relfilelocator.h"
#include "varatt.h"
#else
#include "storage/relfilenode.h"
#endif

#if PG_VERSION_NUM >= 170000
#include "storage/procnumber.h"
#else
#include "storage/backendid.h"
#endif

/* the physical file of a relation: RelFileNode until 15, RelFileLocator since 16 */
#if PG_VERSION_NUM < 160000
typedef RelFileNode RelFileLocator;
#define RelFileLocatorEquals(a, b)	RelFileNodeEquals(a, b)
#define TesseraRelLocator(rel)		((rel)->rd_node)
#define TesseraLocatorSpc(l)		((l).spcNode)
#define TesseraLocatorDb(l)			((l).dbNode)
#define TesseraLocatorRel(l)		((l).relNode)
#else
#define TesseraRelLocator(rel)		((rel)->rd_locator)
#define TesseraLocatorSpc(l)		((l).spcOid)
#define TesseraLocatorDb(l)			((l).dbOid)
#define TesseraLocatorRel(l)		((l).relNumber)
#endif

/* the table AM callback that gives a relation new storage */
#if PG_VERSION_NUM < 160000
#define TESSERA_AM_SET_NEW_STORAGE	relation_set_new_filenode
#else
#define TESSERA_AM_SET_NEW_STORAGE	relation_set_new_filelocator
#endif

/* a backend's number: BackendId (1..MaxBackends) until 16, ProcNumber (0..) since 17 */
#if PG_VERSION_NUM < 170000
typedef BackendId TesseraBackend;
#define TesseraMyBackendSlot()		(MyBackendId)
#else
typedef ProcNumber TesseraBackend;
#define TesseraMyBackendSlot()		(MyProcNumber + 1)
#endif

/* tuple_update's answer about index entries: a bool until 15, TU_UpdateIndexes since 16 */
#if PG_VERSION_NUM < 160000
typedef bool TesseraUpdateIndexes;
#define TESSERA_UPDATE_ALL_INDEXES	true
#define TESSERA_UPDATE_NO_INDEXES	false
#else
typedef TU_UpdateIndexes TesseraUpdateIndexes;
#define TESSERA_UPDATE_ALL_INDEXES	TU_All
#define TESSERA_UPDATE_NO_INDEXES	TU_None
#endif

/* a datum from a tuplesort, copied into the caller's context (16 added the choice) */
static inline bool
TesseraTuplesortGetDatum(Tuplesortstate *state, bool forward, Datum *val, bool *isnull)
{
#if PG_VERSION_NUM < 160000
	return tuplesort_getdatum(state, forward, val, isnull, NULL);
#else
	return tuplesort_getdatum(state, forward, true, val, isnull, NULL);
#endif
}

/* this backend's local transaction id */
#if PG_VERSION_NUM < 170000
#define TesseraMyLxid()				(MyProc->lxid)
#else
#define TesseraMyLxid()				(MyProc->vxid.lxid)
#endif

/* what kind of process this is */
#if PG_VERSION_NUM < 170000
#define TesseraAmAutoVacuumWorker()	IsAutoVacuumWorkerProcess()
#define TesseraAmBackgroundWorker()	(IsBackgroundWorker)
#else
#define TesseraAmAutoVacuumWorker()	AmAutoVacuumWorkerProcess()
#define TesseraAmBackgroundWorker()	AmBackgroundWorkerProcess()
#endif

/* does role own relation relid (16 made the check generic) */
#if PG_VERSION_NUM < 160000
#define TesseraRelationOwnerCheck(relid, role)	pg_class_ownercheck(relid, role)
#else
#define TesseraRelationOwnerCheck(relid, role) \
	object_ownercheck(RelationRelationId, relid, role)
#endif

/* table statistics: an UPDATE (never HOT), n rows read by a scan */
static inline void
TesseraCountUpdate(Relation rel)
{
#if PG_VERSION_NUM < 160000
	pgstat_count_heap_update(rel, false);
#else
	pgstat_count_heap_update(rel, false, false);
#endif
}

static inline void
TesseraCountTuplesReturned(Relation rel, uint64 n)
{
	if (!pgstat_should_count_relation(rel))
		return;
#if PG_VERSION_NUM < 160000
	rel->pgstat_info->t_counts.t_tuples_returned += n;
#else
	rel->pgstat_info->counts.tuples_returned += n;
#endif
}

/*
 * The columns a query reads from range table entry rte (for permission
 * checks; bit attno - FirstLowInvalidHeapAttributeNumber, 0 for a whole
 * row), NULL when there is no such record (no permissions required).
 * 16 moved them to RTEPermissionInfo.
 */
static inline Bitmapset *
TesseraRteSelectedCols(EState *estate, RangeTblEntry *rte)
{
#if PG_VERSION_NUM < 160000
	return rte->requiredPerms != 0 ? rte->selectedCols : NULL;
#else
	if (rte->perminfoindex == 0)
		return NULL;
	return getRTEPermissionInfo(estate->es_rteperminfos, rte)->selectedCols;
#endif
}

/* a recovery conflict with the snapshots that might see rows a record removes */
static inline void
TesseraResolveSnapshotConflict(TransactionId horizon, RelFileLocator locator)
{
#if PG_VERSION_NUM < 160000
	ResolveRecoveryConflictWithSnapshot(horizon, locator);
#else
	ResolveRecoveryConflictWithSnapshot(horizon, false, locator);
#endif
}

#endif							/* TESSERA_COMPAT_H */
