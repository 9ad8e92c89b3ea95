/*-------------------------------------------------------------------------
 *
 * slot.h
 *	  TTSOpsTessera, the tuple table slot of tessera's scans and fetches.
 *
 * IDENTIFICATION
 *	  include/tessera/slot.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef TESSERA_SLOT_H
#define TESSERA_SLOT_H

#include "executor/tuptable.h"

#include "tessera/reader.h"

extern PGDLLIMPORT const TupleTableSlotOps TTSOpsTessera;
extern void TesseraSlotStoreRow(TupleTableSlot *slot, TesseraBatch *batch, int row);
extern void TesseraSlotSetXmin(TupleTableSlot *slot, TransactionId xmin);
extern void TesseraSlotSetXmax(TupleTableSlot *slot, TransactionId xmax);
extern void TesseraSlotSetNeeded(TupleTableSlot *slot, const bool *needed);
extern const bool *TesseraSlotNeeded(TupleTableSlot *slot);
extern bool TesseraSlotColumnsDiffer(TupleTableSlot *a, TupleTableSlot *b, Bitmapset *attrs);

typedef struct TesseraLazyRowOps
{
	void		(*decode) (void *arg, uint64 rownum, int rg, int row, TupleTableSlot *slot,
						   int from, int to);
	void		(*release) (void *arg, TupleTableSlot *slot);
} TesseraLazyRowOps;

extern void TesseraSlotStoreLazyRow(TupleTableSlot *slot, const TesseraLazyRowOps *ops, void *arg,
									uint64 rownum, int rg, int row, TransactionId xmin,
									Oid relid);

#endif							/* TESSERA_SLOT_H */
