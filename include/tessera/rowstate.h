/*-------------------------------------------------------------------------
 *
 * rowstate.h
 *	  Per-row state (deleter, updater, lockers) of rows that were changed,
 *	  and its visibility rules.
 *
 * IDENTIFICATION
 *	  include/tessera/rowstate.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef TESSERA_ROWSTATE_H
#define TESSERA_ROWSTATE_H

#include "nodes/lockoptions.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"
#include "utils/snapshot.h"

#include "tessera/format.h"

/* An exclusively locked state entry, ready to be changed. */
typedef struct TesseraStateRef
{
	Buffer		buf;
	TesseraRowState *entry;
	uint64		rownum;
} TesseraStateRef;

/* storage/rowstate.c */
extern bool TesseraReadRowStates(Relation rel, uint64 first, int n, TesseraRowState *out);
extern bool TesseraGetRowState(Relation rel, uint64 rownum, TesseraRowState *out);
extern bool TesseraAnyRowState(Relation rel, uint64 first, uint64 n);
extern void TesseraLockRowState(Relation rel, uint64 rownum, TesseraStateRef *ref);
extern void TesseraLogRowState(Relation rel, TesseraStateRef *ref);
extern void TesseraUnlockRowState(TesseraStateRef *ref);
extern void TesseraBuryRow(Relation rel, uint64 rownum);
extern void TesseraForgetRowStateCache(void);
extern uint64 TesseraClearFoldedStates(Relation rel, uint64 first, int n, const bool *dead);
extern uint64 TesseraUnhookEmptyStatePages(Relation rel);
extern bool TesseraAnyEmptyStatePage(Relation rel);
extern BlockNumber TesseraMarkStatePages(Relation rel, bool *used, BlockNumber nblocks);
extern int	TesseraMoveStatePages(Relation rel, bool *used, BlockNumber nblocks);

typedef void (*TesseraStatePageFn) (Relation rel, BlockNumber blkno, uint64 first_rownum,
									void *arg);
extern void TesseraForEachStatePage(Relation rel, TesseraStatePageFn fn, void *arg);
extern Buffer TesseraLockStatePage(Relation rel, BlockNumber blkno, TesseraRowState **entries);
extern void TesseraCopyStatePage(Relation rel, BlockNumber blkno, TesseraRowState *entries);

/* storage/visibility.c */
extern TransactionId TesseraRowUpdateXid(const TesseraRowState *st);
extern bool TesseraRowDeleted(const TesseraRowState *st, Snapshot snapshot);
extern bool TesseraRowDeadToAll(const TesseraRowState *st, Relation rel);

static inline bool
TesseraRowStateEmpty(const TesseraRowState *st)
{
	return st->xmax == InvalidTransactionId &&
		(st->infomask & TESSERA_RS_FROZEN_DELETED) == 0;
}

static inline uint64
TesseraRowStateNewRownum(const TesseraRowState *st)
{
	return ((uint64) st->new_hi << 32) | st->new_lo;
}

#endif							/* TESSERA_ROWSTATE_H */
