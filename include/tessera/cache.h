/*-------------------------------------------------------------------------
 *
 * cache.h
 *	  Per-backend caches of stripes, directories and chunk payloads for
 *	  single-row fetches.
 *
 * IDENTIFICATION
 *	  include/tessera/cache.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef TESSERA_CACHE_H
#define TESSERA_CACHE_H

#include "utils/rel.h"
#include "utils/snapshot.h"

#include "tessera/catalog.h"
#include "tessera/encoding.h"
#include "tessera/reader.h"

typedef struct TesseraCachedStripe
{
	TesseraStripe s;
	bool		committed;		/* xmin known committed */
	bool		aborted;		/* xmin known aborted: its rows never existed */
	uint64		span;			/* row numbers it covers (reserved ones if aborted) */
	TesseraStripeDir *dir;		/* loaded on first use */
	bool	  **folded;			/* per row group: its folded rows, decoded on use */
	void	  **chunks;			/* per row group and column: its payload in the fetch
								 * cache (cache.c), or NULL */
	Buffer	   *recent;			/* per block: the shared buffer it was last read
								 * in (TesseraPinStripeBytes), or 0 */
} TesseraCachedStripe;

extern int	tessera_fetch_cache_size;

extern TesseraCachedStripe *TesseraCacheStripe(Relation rel, uint64 storage_id, uint64 rownum);
extern bool TesseraCachedStripeAborted(TesseraCachedStripe *cs);
extern TesseraCachedStripe *TesseraCacheStripeLookup(uint64 storage_id, uint64 rownum);
extern bool TesseraCacheStripeVisible(TesseraCachedStripe *cs, Snapshot snapshot, bool *own);
extern TesseraStripeDir *TesseraCacheDir(Relation rel, TesseraCachedStripe *cs);
extern TesseraChunkView *TesseraCacheChunkView(Relation rel, TesseraCachedStripe *cs, int rg,
											   int att, TesseraCorruptFn corrupt, void *arg,
											   TesseraValueIndex ***index,
											   MemoryContext *index_cxt);
extern bool TesseraCacheRowFolded(Relation rel, TesseraCachedStripe *cs, int rg, int row);
extern void TesseraResetFetchCache(void);
extern uint64 TesseraFetchCacheGeneration(void);
extern void TesseraForgetRelationCaches(Oid relid);

#endif							/* TESSERA_CACHE_H */
