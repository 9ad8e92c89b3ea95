/*-------------------------------------------------------------------------
 *
 * shared_cache.h
 *	  The shared decoded-frame cache: decompressed chunk frames in shared
 *	  memory, for every backend.
 *
 * IDENTIFICATION
 *	  include/tessera/shared_cache.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef TESSERA_SHARED_CACHE_H
#define TESSERA_SHARED_CACHE_H

/*
 * What a cached block holds: frame `frame` of the chunk at byte `offset` of
 * stripe `stripe_id` of storage `storage_id` in database `dbid`, or with
 * frame TESSERA_SHARED_WHOLE_CHUNK, an unframed chunk's whole payload.
 * Stripe bytes are never changed once written and storage ids never
 * reused within a database, so a key names the same bytes for as long as
 * they exist (shared_cache.c).
 */
typedef struct TesseraSharedKey
{
	Oid			dbid;
	uint32		frame;
	uint64		storage_id;
	uint64		stripe_id;
	uint64		offset;
} TesseraSharedKey;

#define TESSERA_SHARED_WHOLE_CHUNK	PG_UINT32_MAX

/* the largest value a block holds: a wide frame */
#define TESSERA_SHARED_MAX_BYTES	(16 * 1024)

extern int	tessera_shared_cache_size;

extern void TesseraSharedCacheDefineGuc(void);
extern void TesseraSharedCacheShmemInit(void);
extern bool TesseraSharedCacheEnabled(void);
extern void TesseraSharedKeyInit(TesseraSharedKey *key, uint64 storage_id, uint64 stripe_id,
								 uint64 offset, uint32 frame);
extern bool TesseraSharedCacheGet(const TesseraSharedKey *key, uint32 check, uint32 len,
								  char *dst);
extern bool TesseraSharedCacheGetRange(const TesseraSharedKey *key, uint32 check, uint32 len,
									   uint32 off, uint32 count, char *dst);
extern void TesseraSharedCachePut(const TesseraSharedKey *key, uint32 check, uint32 len,
								  const char *src, bool evict);
extern void TesseraSharedCacheForget(Oid dbid, uint64 storage_id);
extern void TesseraSharedCacheBackendCounts(uint64 *hits, uint64 *misses);

/* blocks, blocks used, entries, hits, misses, inserts, evictions */
#define TESSERA_SHARED_CACHE_NSTATS 7
extern void TesseraSharedCacheStats(uint64 *out);

#endif							/* TESSERA_SHARED_CACHE_H */
