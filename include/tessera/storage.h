/*-------------------------------------------------------------------------
 *
 * storage.h
 *	  Page-level access to a tessera relation: the metapage and the byte
 *	  stream of stripe pages.
 *
 * IDENTIFICATION
 *	  include/tessera/storage.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef TESSERA_STORAGE_H
#define TESSERA_STORAGE_H

#include "storage/bufmgr.h"
#include "storage/smgr.h"
#include "tessera/compat.h"
#include "utils/rel.h"

#include "tessera/format.h"

typedef struct TesseraMeta
{
	bool		valid;			/* false: relation has no usable storage yet */
	uint64		storage_id;
	uint64		next_rownum;
	uint64		next_stripe_id;
	BlockNumber state_root;		/* 0: no row was ever changed */
} TesseraMeta;

extern void TesseraCreateStorage(const RelFileLocator *rnode, TesseraBackend backend,
								 char persistence, uint64 storage_id);
extern void TesseraInitMetapage(Relation rel, uint64 storage_id, uint64 next_rownum,
								uint64 next_stripe_id);
extern void TesseraReadMeta(Relation rel, TesseraMeta *meta);
extern bool TesseraReadStorageIdForDrop(Relation rel, uint64 *storage_id);
extern void TesseraReserve(Relation rel, uint64 nrows, uint64 *storage_id,
						   uint64 *first_rownum, uint64 *stripe_id);
extern bool TesseraExtendReservation(Relation rel, uint64 storage_id,
									 uint64 reserved_end, uint64 nrows);
extern bool TesseraReleaseReservation(Relation rel, uint64 storage_id, uint64 reserved_end,
									  uint64 used_end);
extern BlockNumber TesseraWriteStripePages(Relation rel, const char *data, Size len,
										   BlockNumber *nblocks);
extern void TesseraWriteStripePagesAt(Relation rel, const char *data, Size len,
									  BlockNumber start);
extern bool TesseraReadBytes(Relation rel, BlockNumber start_block, BlockNumber nblocks,
							 uint64 offset, Size len, char *dst,
							 BufferAccessStrategy strategy);

struct TesseraStripe;
extern bool TesseraReadStripeBytes(Relation rel, const struct TesseraStripe *stripe,
								   uint64 offset, Size len, char *dst,
								   BufferAccessStrategy strategy);
extern const char *TesseraPinStripeBytes(Relation rel, const struct TesseraStripe *stripe,
										 uint64 offset, Size len, Buffer *buf,
										 Buffer *recent);
extern bool TesseraCopyStripeBytes(Relation rel, const struct TesseraStripe *stripe,
								   uint64 offset, Size len, char *dst, Buffer *recent);

/*
 * The relation's physical pages.  RelationGetNumberOfBlocks (the table AM's
 * relation_size) reports the TID blocks its row numbers span instead, which
 * is what BRIN, ANALYZE and TID consumers count in.
 */
static inline BlockNumber
TesseraPhysicalBlocks(Relation rel)
{
	return smgrnblocks(RelationGetSmgr(rel), MAIN_FORKNUM);
}

static inline BlockNumber
TesseraBlocksForBytes(Size len)
{
	return (BlockNumber) ((len + TESSERA_PAGE_DATA_SIZE - 1) / TESSERA_PAGE_DATA_SIZE);
}

#endif							/* TESSERA_STORAGE_H */
