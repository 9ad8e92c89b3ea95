/*-------------------------------------------------------------------------
 *
 * catalog.h
 *	  The stripe catalog (tessera_internal.stripe) and its readers.
 *
 * IDENTIFICATION
 *	  include/tessera/catalog.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef TESSERA_CATALOG_H
#define TESSERA_CATALOG_H

#include "access/tableam.h"
#include "storage/block.h"
#include "storage/itemptr.h"
#include "utils/relcache.h"
#include "utils/snapshot.h"

/* stripe flags */
#define TESSERA_STRIPE_DELTA	0x0001	/* bytes in tessera_internal.delta, no pages */
#define TESSERA_STRIPE_FROZEN	0x0002	/* rows visible to every snapshot (compacted) */
#define TESSERA_STRIPE_FOLDED	0x0004	/* its directory lists folded dead rows */

/* One row of tessera_internal.stripe. */
typedef struct TesseraStripe
{
	uint64		storage_id;
	uint64		stripe_id;
	uint64		first_rownum;
	uint64		row_count;		/* 0: placeholder of a stripe being written */
	BlockNumber start_block;
	BlockNumber nblocks;
	uint64		data_bytes;		/* chunks + directory */
	uint64		dir_offset;
	uint32		dir_bytes;
	uint32		n_row_groups;
	uint32		natts;
	uint32		flags;
	uint64		reserved_rows;	/* row numbers reserved from first_rownum */
	struct varlena *delta;		/* TESSERA_STRIPE_DELTA: the stripe's bytes */

	/* from the catalog tuple, filled by readers */
	ItemPointerData catalog_tid;
	TransactionId xmin;
	TransactionId catalog_xmin;	/* the catalog row's own xmin, even if FROZEN */
	bool		own;			/* inserted by the current transaction */
} TesseraStripe;

/* which relations are tessera tables (catalog/am.c) */
extern void TesseraSetAmRoutine(const TableAmRoutine *routine);
extern bool IsTesseraRelation(Relation rel);
extern bool IsTesseraAmOid(Oid amoid);

/* the stripe catalog (catalog/catalog.c) */
extern uint64 TesseraNextStorageId(void);
extern void TesseraInsertStripe(TesseraStripe *stripe);
extern void TesseraCompleteStripe(TesseraStripe *stripe);
extern void TesseraInsertDeltaBytes(const TesseraStripe *stripe, const char *data, Size len);
extern void TesseraReplaceStripes(List *old_stripes, TesseraStripe *merged);
extern Relation TesseraOpenDelta(void);
extern void TesseraCloseDelta(Relation delta);
extern void TesseraFetchDeltaBytes(Relation delta, TesseraStripe *stripe);
extern List *TesseraListStripes(uint64 storage_id, Snapshot snapshot);
extern List *TesseraListCatalogRows(uint64 storage_id, Snapshot snapshot, bool placeholders);
extern bool TesseraFindStripe(uint64 storage_id, uint64 rownum, Snapshot snapshot,
							  TesseraStripe *result);
extern void TesseraDeleteStripes(uint64 storage_id);
extern uint64 TesseraCountRows(uint64 storage_id, Snapshot snapshot);
extern uint64 TesseraCatalogBytes(uint64 storage_id, Snapshot snapshot);
extern Oid	TesseraInternalRelid(const char *name, bool missing_ok);
extern int	TesseraConcurrentInserters(uint64 storage_id, Snapshot snapshot,
									   TransactionId **xids);

extern void TesseraMarkStripePages(uint64 storage_id, TransactionId oldest_xmin, bool *used,
								   BlockNumber nblocks, TransactionId *newest_gone);
extern bool TesseraFindHole(uint64 storage_id, uint64 rownum, uint64 *lo, uint64 *hi);
extern bool TesseraFindReservation(uint64 storage_id, uint64 rownum, TesseraStripe *result);

#endif							/* TESSERA_CATALOG_H */
