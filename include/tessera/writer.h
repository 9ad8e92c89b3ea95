/*-------------------------------------------------------------------------
 *
 * writer.h
 *	  Buffered writes: rows are collected per backend, relation and
 *	  subtransaction, encoded into row groups and written as stripes.
 *
 * IDENTIFICATION
 *	  include/tessera/writer.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef TESSERA_WRITER_H
#define TESSERA_WRITER_H

#include "executor/tuptable.h"
#include "tessera/compat.h"
#include "utils/rel.h"

extern void TesseraWriteRow(Relation rel, TupleTableSlot *slot, CommandId cid);
extern void TesseraWriteColumns(Relation rel, Datum **values, bool **isnull, int nrows,
								CommandId cid, ItemPointer tids);
extern void TesseraFlushRelation(Relation rel);
extern void TesseraFlushAll(void);
extern void TesseraFlushRowIfPending(Relation rel, uint64 rownum);
extern bool TesseraHavePendingWrites(void);
extern void TesseraDiscardWrites(const RelFileLocator *node);
extern void TesseraRegisterXactCallbacks(void);
extern void TesseraWriteFrozen(Relation rel);
extern void TesseraWriteFrozenEnd(void);

/* called after each delta stripe is written (set by maintenance/schedule.c) */
typedef void (*TesseraDeltaStripeHook) (Relation rel, uint64 stripe_id);
extern PGDLLIMPORT TesseraDeltaStripeHook tessera_delta_stripe_hook;

/* stripes of given row numbers (compaction) */
typedef struct TesseraStripeBuilder TesseraStripeBuilder;
extern TesseraStripeBuilder *TesseraBuilderBegin(Relation rel, uint64 first_rownum);
extern void TesseraBuilderAdd(TesseraStripeBuilder *builder, Datum *values, bool *isnull);
extern void TesseraBuilderAddDead(TesseraStripeBuilder *builder);
struct TesseraBatch;
extern uint64 TesseraBuilderAddBatch(TesseraStripeBuilder *builder, struct TesseraBatch *batch,
									 const bool *dead);
extern uint64 TesseraBuilderRows(TesseraStripeBuilder *builder);
extern Size TesseraBuilderBytes(TesseraStripeBuilder *builder);
extern void TesseraBuilderFinish(TesseraStripeBuilder *builder, Relation rel, uint64 storage_id,
								 uint64 stripe_id, List *replaced);

/* a stripe's layout (stripe_dir.c) */
struct TesseraBuf;
struct TesseraChunkDisk;
extern void TesseraOrderByColumn(struct TesseraBuf *data, struct TesseraChunkDisk *chunks,
								 struct TesseraChunkDisk *dead, int nrgs, int natts);
extern void TesseraAppendSections(struct TesseraBuf *data, const struct TesseraBuf *stats_area,
								  const struct TesseraChunkDisk *chunks, int nrgs, int natts,
								  Size dir_start);

#endif							/* TESSERA_WRITER_H */
