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

/* the varlena macros: their own header since 16, no longer in postgres.h since 18 */
#if PG_VERSION_NUM >= 160000
#include "varatt.h"
#endif

#include "access/genam.h"
#include "access/tableam.h"
#include "catalog/pg_class.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "nodes/parsenodes.h"
#include "nodes/tidbitmap.h"
#include "pgstat.h"
#include "postmaster/autovacuum.h"
#include "postmaster/bgworker.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/proc.h"
#include "storage/standby.h"
#include "utils/acl.h"
#include "utils/backend_progress.h"
#include "utils/backend_status.h"
#include "utils/rel.h"
#include "utils/tuplesort.h"

#include "executor/executor.h"
#include "parser/parse_relation.h"
#if PG_VERSION_NUM >= 160000
#include "storage/relfilelocator.h"
#else
#include "storage/relfilenode.h"
#endif

#if PG_VERSION_NUM >= 180000
#include "commands/explain_format.h"
#include "commands/explain_state.h"
#endif
#if PG_VERSION_NUM >= 170000
#include "access/tidstore.h"
#include "storage/procnumber.h"
#include "storage/read_stream.h"
#else
#include "storage/backendid.h"
#endif

/* the physical file of a relation: RelFileNode until 15, RelFileLocator since 16 */
#if PG_VERSION_NUM < 160000
typedef RelFileNode RelFileLocator;
#define RelFileLocatorEquals(a, b)	RelFileNodeEquals(a, b)
#define TesseraRelLocator(rel)		((rel)->rd_node)
#define TesseraRelFirstLocatorSubid(rel) ((rel)->rd_firstRelfilenodeSubid)
#define TesseraLocatorSpc(l)		((l).spcNode)
#define TesseraLocatorDb(l)			((l).dbNode)
#define TesseraLocatorRel(l)		((l).relNode)
#else
#define TesseraRelLocator(rel)		((rel)->rd_locator)
#define TesseraRelFirstLocatorSubid(rel) ((rel)->rd_firstRelfilelocatorSubid)
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

/*
 * VACUUM's cutoffs: the xmin horizon and the freeze limits for rel (16
 * gathered them in struct VacuumCutoffs).
 */
static inline void
TesseraVacuumCutoffs(Relation rel, struct VacuumParams *params, TransactionId *oldest_xmin,
					 MultiXactId *oldest_mxact, TransactionId *freeze_limit,
					 MultiXactId *multixact_cutoff)
{
#if PG_VERSION_NUM < 160000
	(void) vacuum_set_xid_limits(rel, params->freeze_min_age, params->freeze_table_age,
								 params->multixact_freeze_min_age,
								 params->multixact_freeze_table_age,
								 oldest_xmin, oldest_mxact, freeze_limit, multixact_cutoff);
#else
	struct VacuumCutoffs c;

	(void) vacuum_get_cutoffs(rel, params, &c);
	*oldest_xmin = c.OldestXmin;
	*oldest_mxact = c.OldestMxact;
	*freeze_limit = c.FreezeLimit;
	*multixact_cutoff = c.MultiXactCutoff;
#endif
}

/*
 * A slot's "was the row inserted by this transaction" callback, asked by
 * the RI triggers since 17 (before, they read xmin through getsysattr).
 */
#if PG_VERSION_NUM >= 170000
#define TESSERA_SLOT_OPS_IS_CURRENT_XACT(fn)	.is_current_xact_tuple = (fn),
#else
#define TESSERA_SLOT_OPS_IS_CURRENT_XACT(fn)
#endif

/* an index's VACUUM arguments, zeroed; 16 added the table they index */
static inline void
TesseraIndexVacuumInfoInit(IndexVacuumInfo *ivinfo, Relation heaprel)
{
	memset(ivinfo, 0, sizeof(IndexVacuumInfo));
#if PG_VERSION_NUM >= 160000
	ivinfo->heaprel = heaprel;
#endif
}

/*
 * TIDs of dead rows whose index entries VACUUM removes, in TID order: an
 * array in VacDeadItems until 16; since 17 the indexes take a TidStore,
 * built from the array once per pass over the indexes.  Add TIDs to
 * items[num_items++], delete through every index, then reset.
 */
typedef struct TesseraDeadTids
{
	int			max_items;
	int			num_items;
	ItemPointerData *items;
#if PG_VERSION_NUM < 170000
	VacDeadItems *vac;			/* items is its array */
#else
	TidStore   *store;			/* built for this pass, or NULL */
#endif
} TesseraDeadTids;

static inline void
TesseraDeadTidsInit(TesseraDeadTids *d, int max_items)
{
	d->max_items = max_items;
	d->num_items = 0;
#if PG_VERSION_NUM < 170000
	d->vac = palloc(vac_max_items_to_alloc_size(max_items));
	d->vac->max_items = max_items;
	d->vac->num_items = 0;
	d->items = d->vac->items;
#else
	d->items = palloc(sizeof(ItemPointerData) * max_items);
	d->store = NULL;
#endif
}

/* ambulkdelete of index ivinfo->index for every TID in d */
static inline IndexBulkDeleteResult *
TesseraDeadTidsBulkDelete(IndexVacuumInfo *ivinfo, IndexBulkDeleteResult *istat,
						  TesseraDeadTids *d)
{
#if PG_VERSION_NUM < 170000
	d->vac->num_items = d->num_items;
	return vac_bulkdel_one_index(ivinfo, istat, d->vac);
#else
	VacDeadItemsInfo info;

	if (d->store == NULL)
	{
		OffsetNumber offsets[MaxOffsetNumber];
		int			i = 0;

		d->store = TidStoreCreateLocal((size_t) d->num_items * sizeof(ItemPointerData) + 65536,
									   true);
		while (i < d->num_items)
		{
			BlockNumber blk = ItemPointerGetBlockNumber(&d->items[i]);
			int			n = 0;

			/* a block's offsets together, once (setting a block replaces it) */
			while (i < d->num_items && ItemPointerGetBlockNumber(&d->items[i]) == blk)
				offsets[n++] = ItemPointerGetOffsetNumber(&d->items[i++]);
			TidStoreSetBlockOffsets(d->store, blk, offsets, n);
		}
	}
	info.max_bytes = TidStoreMemoryUsage(d->store);
	info.num_items = d->num_items;
	return vac_bulkdel_one_index(ivinfo, istat, d->store, &info);
#endif
}

/* empty d for the next pass */
static inline void
TesseraDeadTidsReset(TesseraDeadTids *d)
{
	d->num_items = 0;
#if PG_VERSION_NUM >= 170000
	if (d->store != NULL)
		TidStoreDestroy(d->store);
	d->store = NULL;
#endif
}

/*
 * ANALYZE's next sample block: the callback got its number until 16; since
 * 17 it takes it from a read stream (false at the stream's end).  tessera
 * samples rows by ordinal and needs only the number: 18 hands it out
 * without reading; 17 can only read the block, so while ANALYZE runs the
 * main fork's size is the physical one (TesseraAnalyzeReadsBlocks), not the
 * TID blocks the row numbers span.
 */
#if PG_VERSION_NUM < 170000
#define TESSERA_ANALYZE_NEXT_BLOCK_ARGS	BlockNumber blockno, BufferAccessStrategy bstrategy
#define TesseraAnalyzeNextBlock(out)	(*(out) = blockno, true)
#else
#define TESSERA_ANALYZE_NEXT_BLOCK_ARGS	ReadStream *stream
static inline bool
TesseraReadStreamNextBlock(ReadStream *stream, BlockNumber *out)
{
#if PG_VERSION_NUM >= 180000
	BufferAccessStrategy strategy;

	*out = read_stream_next_block(stream, &strategy);
	return *out != InvalidBlockNumber;
#else
	Buffer		buf = read_stream_next_buffer(stream, NULL);

	if (!BufferIsValid(buf))
		return false;
	*out = BufferGetBlockNumber(buf);
	ReleaseBuffer(buf);
	return true;
#endif
}
#define TesseraAnalyzeNextBlock(out)	TesseraReadStreamNextBlock(stream, out)
#endif

/* Is this backend running ANALYZE, which reads the blocks it samples (17)? */
static inline bool
TesseraAnalyzeReadsBlocks(void)
{
#if PG_VERSION_NUM >= 170000 && PG_VERSION_NUM < 180000
	return MyBEEntry != NULL && MyBEEntry->st_progress_command == PROGRESS_COMMAND_ANALYZE;
#else
	return false;
#endif
}

/* ---- 18 ---- */

/* VACUUM's cost-based delay (18: says whether ANALYZE is asking) */
#if PG_VERSION_NUM >= 180000
#define TesseraVacuumDelayPoint()	vacuum_delay_point(false)
#else
#define TesseraVacuumDelayPoint()	vacuum_delay_point()
#endif

/* an index scan without instrumentation (18 added it) */
#if PG_VERSION_NUM >= 180000
#define TesseraIndexBeginscan(heap, index, snapshot, nkeys, norderbys) \
	index_beginscan(heap, index, snapshot, NULL, nkeys, norderbys)
#else
#define TesseraIndexBeginscan(heap, index, snapshot, nkeys, norderbys) \
	index_beginscan(heap, index, snapshot, nkeys, norderbys)
#endif

/* lock attempts that may fail (18 can log the failure; we do not) */
#if PG_VERSION_NUM >= 180000
#define TesseraConditionalLockTuple(rel, tid, mode)	ConditionalLockTuple(rel, tid, mode, false)
#define TesseraConditionalXactLockTableWait(xid)	ConditionalXactLockTableWait(xid, false)
#else
#define TesseraConditionalLockTuple(rel, tid, mode)	ConditionalLockTuple(rel, tid, mode)
#define TesseraConditionalXactLockTableWait(xid)	ConditionalXactLockTableWait(xid)
#endif

/*
 * A slot's copy_minimal_tuple callback: 18 asks for extra bytes in front
 * of the tuple (TesseraFormMinimalTupleExtra uses the argument's name).
 */
#if PG_VERSION_NUM >= 180000
#define TESSERA_COPY_MINIMAL_TUPLE_ARGS	TupleTableSlot *slot, Size extra
#define TesseraFormMinimalTupleExtra(desc, values, isnull) \
	heap_form_minimal_tuple(desc, values, isnull, extra)
#else
#define TESSERA_COPY_MINIMAL_TUPLE_ARGS	TupleTableSlot *slot
#define TesseraFormMinimalTupleExtra(desc, values, isnull) \
	heap_form_minimal_tuple(desc, values, isnull)
#endif

/* pg_class statistics after VACUUM (18 added all-frozen pages; tessera has no visibility map) */
static inline void
TesseraUpdateRelStats(Relation rel, BlockNumber pages, double tuples, bool hasindex,
					  TransactionId frozenxid, MultiXactId minmulti)
{
#if PG_VERSION_NUM >= 180000
	vac_update_relstats(rel, pages, tuples, 0, 0, hasindex, frozenxid, minmulti,
						NULL, NULL, false);
#else
	vac_update_relstats(rel, pages, tuples, 0, hasindex, frozenxid, minmulti,
						NULL, NULL, false);
#endif
}

/* the cumulative statistics of a VACUUM (18 adds its duration) */
static inline void
TesseraReportVacuum(Relation rel, PgStat_Counter live, PgStat_Counter dead,
					TimestampTz started)
{
#if PG_VERSION_NUM >= 180000
	pgstat_report_vacuum(RelationGetRelid(rel), rel->rd_rel->relisshared, live, dead, started);
#else
	pgstat_report_vacuum(RelationGetRelid(rel), rel->rd_rel->relisshared, live, dead);
#endif
}

/* a parallel scan names its relation (18: by its file) */
#if PG_VERSION_NUM >= 180000
#define TesseraParallelScanSetRel(pscan, rel)	((pscan)->phs_locator = (rel)->rd_locator)
#else
#define TesseraParallelScanSetRel(pscan, rel)	((pscan)->phs_relid = RelationGetRelid(rel))
#endif

/*
 * Bitmap scans: until 17 the executor iterates the bitmap and hands the AM
 * one block at a time (scan_bitmap_next_block / _tuple); since 18 the AM
 * iterates scan->st.rs_tbmiterator itself in scan_bitmap_next_tuple.
 * TesseraTbmOffsets gives a block's exact offsets (count), or -1 for a
 * lossy block.
 */
#if PG_VERSION_NUM >= 180000
#define TESSERA_BITMAP_AM_ITERATES 1
#else
#define TESSERA_BITMAP_AM_ITERATES 0
#endif

/*
 * A pathkey's sort direction and its ordering operator: 18 keeps a
 * CompareType where 15 and 17 keep a btree strategy.
 */
#if PG_VERSION_NUM >= 180000
#define TesseraPathKeyDescending(pk)	((pk)->pk_cmptype == COMPARE_GT)
#define TesseraPathKeySortOp(pk, type) \
	get_opfamily_member_for_cmptype((pk)->pk_opfamily, (type), (type), (pk)->pk_cmptype)
#else
#define TesseraPathKeyDescending(pk)	((pk)->pk_strategy == BTGreaterStrategyNumber)
#define TesseraPathKeySortOp(pk, type) \
	get_opfamily_member((pk)->pk_opfamily, (type), (type), (pk)->pk_strategy)
#endif

static inline int
TesseraTbmOffsets(TBMIterateResult *tbmres, OffsetNumber *offsets, int max)
{
#if PG_VERSION_NUM >= 180000
	if (tbmres->lossy)
		return -1;
	return tbm_extract_page_tuple(tbmres, offsets, max);
#else
	if (tbmres->ntuples < 0)
		return -1;
	memcpy(offsets, tbmres->offsets, sizeof(OffsetNumber) * Min(tbmres->ntuples, max));
	return Min(tbmres->ntuples, max);
#endif
}

/*
 * The range table index an outer, semi or anti join has in join relations'
 * relids (16 gave anti joins and outer joins one; 0 for none).
 */
#if PG_VERSION_NUM >= 160000
#define TesseraSpecialJoinRelid(sjinfo) ((sjinfo)->ojrelid)
#else
#define TesseraSpecialJoinRelid(sjinfo) ((Index) 0)
#endif

/* run a query to completion (18 dropped execute_once) */
#if PG_VERSION_NUM >= 180000
#define TesseraExecutorRunAll(qd)	ExecutorRun((qd), ForwardScanDirection, 0)
#else
#define TesseraExecutorRunAll(qd)	ExecutorRun((qd), ForwardScanDirection, 0, true)
#endif

/*
 * Require INSERT on the columns cols (attribute numbers offset by
 * FirstLowInvalidHeapAttributeNumber) of the relation of nsitem, the only
 * one in pstate's range table (16 moved permissions out of the range
 * table entry).
 */
static inline void
TesseraCheckInsertPermission(ParseState *pstate, ParseNamespaceItem *nsitem, Bitmapset *cols)
{
#if PG_VERSION_NUM >= 160000
	nsitem->p_perminfo->requiredPerms = ACL_INSERT;
	nsitem->p_perminfo->insertedCols = cols;
	ExecCheckPermissions(pstate->p_rtable, list_make1(nsitem->p_perminfo), true);
#else
	nsitem->p_rte->requiredPerms = ACL_INSERT;
	nsitem->p_rte->insertedCols = cols;
	ExecCheckRTPerms(pstate->p_rtable, true);
#endif
}

/* a ForeignPath (17 added its restrictinfos, 18 its disabled nodes) */
#if PG_VERSION_NUM >= 180000
#define TesseraCreateForeignscanPath(root, rel, target, rows, startup, total, pathkeys, outer, outerpath, priv) \
	create_foreignscan_path(root, rel, target, rows, 0, startup, total, pathkeys, outer, outerpath, NIL, priv)
#elif PG_VERSION_NUM >= 170000
#define TesseraCreateForeignscanPath(root, rel, target, rows, startup, total, pathkeys, outer, outerpath, priv) \
	create_foreignscan_path(root, rel, target, rows, startup, total, pathkeys, outer, outerpath, NIL, priv)
#else
#define TesseraCreateForeignscanPath(root, rel, target, rows, startup, total, pathkeys, outer, outerpath, priv) \
	create_foreignscan_path(root, rel, target, rows, startup, total, pathkeys, outer, outerpath, priv)
#endif

/*
 * An insert into the one relation of pstate's range table, outside a plan
 * (COPY FROM Parquet into a tessera table): the range table in the
 * executor (16 took the permission infos, 18 the unpruned relations), the
 * result relation checked (17 added MERGE's actions, 18 ON CONFLICT's
 * action), index entries made (16 added onlySummarizing).
 */
#if PG_VERSION_NUM >= 180000
#define TesseraExecInitRangeTable(estate, pstate) \
	ExecInitRangeTable(estate, (pstate)->p_rtable, (pstate)->p_rteperminfos, bms_make_singleton(1))
#define TesseraCheckValidInsertRel(rri) CheckValidResultRel(rri, CMD_INSERT, ONCONFLICT_NONE, NIL)
#elif PG_VERSION_NUM >= 170000
#define TesseraExecInitRangeTable(estate, pstate) \
	ExecInitRangeTable(estate, (pstate)->p_rtable, (pstate)->p_rteperminfos)
#define TesseraCheckValidInsertRel(rri) CheckValidResultRel(rri, CMD_INSERT, NIL)
#else
#define TesseraExecInitRangeTable(estate, pstate) ExecInitRangeTable(estate, (pstate)->p_rtable)
#define TesseraCheckValidInsertRel(rri) CheckValidResultRel(rri, CMD_INSERT)
#endif
#if PG_VERSION_NUM >= 160000
#define TesseraExecInsertIndexTuples(rri, slot, estate) \
	ExecInsertIndexTuples(rri, slot, estate, false, false, NULL, NIL, false)
#else
#define TesseraExecInsertIndexTuples(rri, slot, estate) \
	ExecInsertIndexTuples(rri, slot, estate, false, false, NULL, NIL)
#endif

#endif							/* TESSERA_COMPAT_H */
