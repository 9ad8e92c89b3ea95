/*-------------------------------------------------------------------------
 *
 * tableam.h
 *	  Table access method callbacks of tessera, grouped by source file.
 *
 * IDENTIFICATION
 *	  include/tessera/tableam.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef TESSERA_TABLEAM_H
#define TESSERA_TABLEAM_H

#include "access/relscan.h"
#include "access/tableam.h"
#include "commands/vacuum.h"
#include "nodes/execnodes.h"

#include "tessera/compat.h"

/* handler.c: the routine tessera_tableam_handler returns */
extern const TableAmRoutine *TesseraTableAmRoutine(void);

/* scan.c */
extern const TupleTableSlotOps *tessera_slot_callbacks(Relation rel);
extern TableScanDesc tessera_scan_begin(Relation rel, Snapshot snapshot, int nkeys,
										struct ScanKeyData *key,
										ParallelTableScanDesc pscan, uint32 flags);
extern void tessera_scan_end(TableScanDesc scan);
extern void tessera_scan_rescan(TableScanDesc scan, struct ScanKeyData *key,
								bool set_params, bool allow_strat,
								bool allow_sync, bool allow_pagemode);
extern bool tessera_scan_getnextslot(TableScanDesc scan, ScanDirection direction,
									 TupleTableSlot *slot);
extern void tessera_scan_set_tidrange(TableScanDesc scan, ItemPointer mintid,
									  ItemPointer maxtid);
extern bool tessera_scan_getnextslot_tidrange(TableScanDesc scan, ScanDirection direction,
											  TupleTableSlot *slot);
extern Size tessera_parallelscan_estimate(Relation rel);
extern Size tessera_parallelscan_initialize(Relation rel, ParallelTableScanDesc pscan);
extern void tessera_parallelscan_reinitialize(Relation rel, ParallelTableScanDesc pscan);
extern bool tessera_scan_analyze_next_block(TableScanDesc scan,
											TESSERA_ANALYZE_NEXT_BLOCK_ARGS);
extern bool tessera_scan_analyze_next_tuple(TableScanDesc scan, TransactionId OldestXmin,
											double *liverows, double *deadrows,
											TupleTableSlot *slot);
#if TESSERA_BITMAP_AM_ITERATES
extern bool tessera_scan_bitmap_next_tuple(TableScanDesc scan, TupleTableSlot *slot,
										   bool *recheck, uint64 *lossy_pages,
										   uint64 *exact_pages);
#else
extern bool tessera_scan_bitmap_next_block(TableScanDesc scan, struct TBMIterateResult *tbmres);
extern bool tessera_scan_bitmap_next_tuple(TableScanDesc scan, struct TBMIterateResult *tbmres,
										   TupleTableSlot *slot);
#endif
extern bool tessera_scan_sample_next_block(TableScanDesc scan, struct SampleScanState *scanstate);
extern bool tessera_scan_sample_next_tuple(TableScanDesc scan, struct SampleScanState *scanstate,
										   TupleTableSlot *slot);

extern const struct TesseraRowState *TesseraScanCurrentState(TableScanDesc scan);
extern void TesseraScanSetBlockRange(TableScanDesc scan, BlockNumber start, BlockNumber nblocks);
extern void TesseraScanKeepStates(TableScanDesc scan);

struct TesseraReader;
struct TesseraBatch;
typedef bool (*TesseraRowGroupFilter) (void *arg, struct TesseraReader *reader, int stripe, int rg);
typedef const bool *(*TesseraBatchFilter) (void *arg, struct TesseraBatch *batch);
extern void TesseraScanSetFilters(TableScanDesc scan, TesseraRowGroupFilter rg_filter,
								  TesseraBatchFilter batch_filter, void *arg);
extern void TesseraScanSetColumns(TableScanDesc scan, const bool *needed);
/* What a scan's reader read (EXPLAIN ANALYZE of TesseraScan/TesseraAgg). */
typedef struct TesseraScanCounts
{
	uint64		bytes_read;			/* chunk and directory bytes read from pages */
	uint64		bytes_decompressed; /* payload bytes produced by a codec */
	uint64		delta_rows;			/* rows of delta stripes loaded */
	uint64		frames_cached;		/* compressed frames taken from the shared cache */
} TesseraScanCounts;

extern void TesseraScanBytes(TableScanDesc scan, TesseraScanCounts *counts);
extern bool TesseraScanNextBatch(TableScanDesc scan, struct TesseraBatch **batch,
								 const bool **sel);
extern void TesseraScanSetBatchesBackward(TableScanDesc scan, bool backward);
extern void TesseraCountRowsRead(Relation rel, uint64 n);
extern bool TesseraScanNextRow(TableScanDesc scan, ScanDirection dir, struct TesseraBatch **batch,
							   int *row);

/* fetch.c */
extern struct IndexFetchTableData *tessera_index_fetch_begin(Relation rel);
extern void tessera_index_fetch_reset(struct IndexFetchTableData *data);
extern void tessera_index_fetch_end(struct IndexFetchTableData *data);
extern bool tessera_index_fetch_tuple(struct IndexFetchTableData *scan, ItemPointer tid,
									  Snapshot snapshot, TupleTableSlot *slot,
									  bool *call_again, bool *all_dead);
extern bool tessera_tuple_fetch_row_version(Relation rel, ItemPointer tid, Snapshot snapshot,
											TupleTableSlot *slot);
extern bool TesseraFetchUnmaterialized(Relation rel, ItemPointer tid, Snapshot snapshot,
									   TupleTableSlot *slot);
extern bool tessera_tuple_tid_valid(TableScanDesc scan, ItemPointer tid);
extern void tessera_tuple_get_latest_tid(TableScanDesc scan, ItemPointer tid);
extern bool tessera_tuple_satisfies_snapshot(Relation rel, TupleTableSlot *slot, Snapshot snapshot);

/* modify.c */
extern TransactionId tessera_index_delete_tuples(Relation rel, TM_IndexDeleteOp *delstate);
extern void tessera_tuple_insert(Relation rel, TupleTableSlot *slot, CommandId cid,
								 int options, struct BulkInsertStateData *bistate);
extern void tessera_tuple_insert_speculative(Relation rel, TupleTableSlot *slot, CommandId cid,
											 int options, struct BulkInsertStateData *bistate,
											 uint32 specToken);
extern void tessera_tuple_complete_speculative(Relation rel, TupleTableSlot *slot,
											   uint32 specToken, bool succeeded);
extern void tessera_multi_insert(Relation rel, TupleTableSlot **slots, int nslots, CommandId cid,
								 int options, struct BulkInsertStateData *bistate);
extern bool TesseraInsertColumns(Relation rel, Datum **values, bool **isnull, int nrows,
								 CommandId cid, int options, ItemPointer tids);
extern TM_Result tessera_tuple_delete(Relation rel, ItemPointer tid, CommandId cid,
									  Snapshot snapshot, Snapshot crosscheck, bool wait,
									  TM_FailureData *tmfd, bool changingPart);
extern TM_Result tessera_tuple_update(Relation rel, ItemPointer otid, TupleTableSlot *slot,
									  CommandId cid, Snapshot snapshot, Snapshot crosscheck,
									  bool wait, TM_FailureData *tmfd, LockTupleMode *lockmode,
									  TesseraUpdateIndexes *update_indexes);
extern TM_Result tessera_tuple_lock(Relation rel, ItemPointer tid, Snapshot snapshot,
									TupleTableSlot *slot, CommandId cid, LockTupleMode mode,
									LockWaitPolicy wait_policy, uint8 flags,
									TM_FailureData *tmfd);
extern void tessera_finish_bulk_insert(Relation rel, int options);

/* ddl.c */
extern void tessera_relation_set_new_filenode(Relation rel, const RelFileLocator *newrnode,
											  char persistence, TransactionId *freezeXid,
											  MultiXactId *minmulti);
extern void tessera_relation_nontransactional_truncate(Relation rel);
extern void tessera_relation_copy_data(Relation rel, const RelFileLocator *newrnode);
extern void tessera_relation_copy_for_cluster(Relation OldTable, Relation NewTable,
											  Relation OldIndex, bool use_sort,
											  TransactionId OldestXmin,
											  TransactionId *xid_cutoff,
											  MultiXactId *multi_cutoff,
											  double *num_tuples, double *tups_vacuumed,
											  double *tups_recently_dead);
extern void tessera_relation_vacuum(Relation rel, struct VacuumParams *params,
									BufferAccessStrategy bstrategy);
extern double tessera_index_build_range_scan(Relation table_rel, Relation index_rel,
											 struct IndexInfo *index_info, bool allow_sync,
											 bool anyvisible, bool progress,
											 BlockNumber start_blockno, BlockNumber numblocks,
											 IndexBuildCallback callback, void *callback_state,
											 TableScanDesc scan);
extern void tessera_index_validate_scan(Relation table_rel, Relation index_rel,
										struct IndexInfo *index_info, Snapshot snapshot,
										struct ValidateIndexState *state);
extern uint64 tessera_relation_size(Relation rel, ForkNumber forkNumber);
extern bool tessera_relation_needs_toast_table(Relation rel);
extern void tessera_relation_estimate_size(Relation rel, int32 *attr_widths,
										   BlockNumber *pages, double *tuples,
										   double *allvisfrac);

/* speculative insertion tokens (tableam/speculative.c) */
extern void TesseraSpeculativeShmemInit(void);
extern void TesseraSpeculativePublish(Relation rel, uint64 rownum, uint32 token);
extern void TesseraSpeculativeClear(void);
extern uint32 TesseraSpeculativeToken(Relation rel, uint64 rownum);


#endif							/* TESSERA_TABLEAM_H */
