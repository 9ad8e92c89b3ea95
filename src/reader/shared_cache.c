/*-------------------------------------------------------------------------
 *
 * shared_cache.c
 *	  The shared decoded-frame cache: decompressed frames of compressed
 *	  chunks kept in shared memory, so that a point read in any backend
 *	  finds a value's frame without reading and decompressing it again.
 *
 * NOTES
 *	  Shared buffers hold a tessera table's pages as stored: compressed.  A
 *	  lookup by primary key then decompresses a 4 KB zstd frame of every
 *	  compressed column it returns, and a backend's own fetch cache
 *	  (cache.c) starts empty with every connection.  This cache keeps the
 *	  decompressed frames, up to tessera.shared_cache_size (MB, set at
 *	  server start; 0 turns it off), in blocks of SC_BLOCK_BYTES: a frame
 *	  of 4 KB takes one block, a wide one of 16 KB four.  Frames stored raw
 *	  are not kept: reading them from shared buffers costs what a copy from
 *	  here does.
 *
 *	  Keys and invalidation: a key (TesseraSharedKey) names a frame by
 *	  database, storage id, stripe id, chunk offset and frame number.
 *	  Stripe bytes are written once and never changed in place; VACUUM's
 *	  folds and compaction write new stripes (new ids), TRUNCATE and
 *	  rewrites new storage (new ids, or in-place truncation that keeps
 *	  counting stripe ids), and storage ids come from a sequence.  So a key
 *	  cannot come to name other bytes, and there is nothing to invalidate
 *	  while the bytes live; entries of dropped storage age out, and are
 *	  dropped at once where we know (TesseraSharedCacheForget: TRUNCATE,
 *	  new storage, DROP DATABASE, DROP EXTENSION, which restarts the
 *	  storage id sequence).  Every entry also records the frame's stored
 *	  checksum and raw length, which a reader compares with the frame table
 *	  it read from the pages: an entry that does not match them is not
 *	  used, whatever made it stale.  A standby fills its own cache from
 *	  its own pages under the same rules.
 *
 *	  Locking: the cache is split into SC_PARTITIONS partitions by key
 *	  hash, each with its own LWLock, hash table, blocks and clock hand.  A
 *	  hit copies the frame out under the shared lock and marks the entry
 *	  used; an insert (after the caller decompressed the frame, outside the
 *	  lock) takes the exclusive lock, evicts by clock within the partition
 *	  and copies the frame in.  Nothing is pinned across calls.
 *
 * IDENTIFICATION
 *	  src/reader/shared_cache.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/guc.h"
#include "utils/hsearch.h"

#include "tessera/shared_cache.h"

#define SC_BLOCK_BYTES		4096
#define SC_MAX_BLOCKS		(TESSERA_SHARED_MAX_BYTES / SC_BLOCK_BYTES)
#define SC_PARTITIONS		32
#define SC_MAX_USAGE		3

typedef struct SCEntry
{
	TesseraSharedKey key;		/* hash key */
	int32		desc;
} SCEntry;

typedef struct SCDesc
{
	TesseraSharedKey key;
	uint32		check;			/* the frame's stored checksum */
	uint32		len;			/* its raw bytes */
	bool		in_use;
	uint8		nblocks;
	pg_atomic_uint32 usage;		/* clock: set by hits under the shared lock */
	int32		blocks[SC_MAX_BLOCKS];
} SCDesc;

typedef struct SCPartition
{
	int			nblocks;		/* blocks (and descriptors) of the partition */
	int			nfree_blocks;
	int			nfree_descs;
	int			hand;
	int32	   *free_blocks;
	int32	   *free_descs;
	SCDesc	   *descs;
	char	   *data;			/* nblocks * SC_BLOCK_BYTES */
	pg_atomic_uint64 hits;
	pg_atomic_uint64 misses;
	pg_atomic_uint64 inserts;
	pg_atomic_uint64 evictions;
} SCPartition;

int			tessera_shared_cache_size = 0;

/* this process's pointers to each partition, its lock and its map */
static SCPartition *parts[SC_PARTITIONS];
static LWLock *locks[SC_PARTITIONS];
static HTAB *maps[SC_PARTITIONS];
static bool cache_on = false;
static shmem_request_hook_type prev_shmem_request = NULL;
static shmem_startup_hook_type prev_shmem_startup = NULL;

/* this backend's own hits and misses, for EXPLAIN */
static uint64 my_hits = 0;
static uint64 my_misses = 0;

static int
blocks_per_partition(void)
{
	uint64		total = (uint64) tessera_shared_cache_size * 1024 * 1024 / SC_BLOCK_BYTES;

	return (int) Max(total / SC_PARTITIONS, SC_MAX_BLOCKS);
}

static Size
partition_bytes(int n)
{
	Size		size = MAXALIGN(sizeof(SCPartition));

	size = add_size(size, MAXALIGN(mul_size(n, sizeof(int32))));
	size = add_size(size, MAXALIGN(mul_size(n, sizeof(int32))));
	size = add_size(size, MAXALIGN(mul_size(n, sizeof(SCDesc))));
	size = add_size(size, PG_CACHE_LINE_SIZE);
	size = add_size(size, mul_size(n, SC_BLOCK_BYTES));
	return size;
}

static Size
cache_shmem_size(void)
{
	int			n = blocks_per_partition();
	Size		size = 0;

	for (int p = 0; p < SC_PARTITIONS; p++)
	{
		size = add_size(size, partition_bytes(n));
		size = add_size(size, hash_estimate_size(n, sizeof(SCEntry)));
	}
	return size;
}

static void
cache_shmem_request(void)
{
	if (prev_shmem_request)
		prev_shmem_request();
	RequestAddinShmemSpace(cache_shmem_size());
	RequestNamedLWLockTranche("tessera shared cache", SC_PARTITIONS);
}

static void
cache_shmem_startup(void)
{
	int			n = blocks_per_partition();
	LWLockPadded *tranche;

	if (prev_shmem_startup)
		prev_shmem_startup();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	tranche = GetNamedLWLockTranche("tessera shared cache");
	for (int p = 0; p < SC_PARTITIONS; p++)
	{
		char		name[64];
		HASHCTL		ctl;
		SCPartition *part;
		bool		found;

		snprintf(name, sizeof(name), "tessera shared cache %d", p);
		part = ShmemInitStruct(name, partition_bytes(n), &found);
		snprintf(name, sizeof(name), "tessera shared cache map %d", p);
		memset(&ctl, 0, sizeof(ctl));
		ctl.keysize = sizeof(TesseraSharedKey);
		ctl.entrysize = sizeof(SCEntry);
		maps[p] = ShmemInitHash(name, n, n, &ctl, HASH_ELEM | HASH_BLOBS);
		locks[p] = &tranche[p].lock;
		parts[p] = part;
		if (!found)
		{
			char	   *p0 = (char *) part + MAXALIGN(sizeof(SCPartition));

			memset(part, 0, sizeof(SCPartition));
			part->nblocks = n;
			part->free_blocks = (int32 *) p0;
			p0 += MAXALIGN(sizeof(int32) * n);
			part->free_descs = (int32 *) p0;
			p0 += MAXALIGN(sizeof(int32) * n);
			part->descs = (SCDesc *) p0;
			p0 += MAXALIGN(sizeof(SCDesc) * n);
			part->data = (char *) TYPEALIGN(PG_CACHE_LINE_SIZE, p0);
			for (int i = 0; i < n; i++)
			{
				part->free_blocks[i] = n - 1 - i;
				part->free_descs[i] = n - 1 - i;
				part->descs[i].in_use = false;
				pg_atomic_init_u32(&part->descs[i].usage, 0);
			}
			part->nfree_blocks = n;
			part->nfree_descs = n;
			pg_atomic_init_u64(&part->hits, 0);
			pg_atomic_init_u64(&part->misses, 0);
			pg_atomic_init_u64(&part->inserts, 0);
			pg_atomic_init_u64(&part->evictions, 0);
		}
	}
	cache_on = true;
	LWLockRelease(AddinShmemInitLock);
}

/*
 * _PG_init: the setting (it can only be set at server start).  Loaded
 * later than that (no shared_preload_libraries) there is no cache, and a
 * PGC_POSTMASTER setting may not be defined then (that is FATAL): it is
 * defined as read-only.
 */
void
TesseraSharedCacheDefineGuc(void)
{
	DefineCustomIntVariable("tessera.shared_cache_size",
							"Size of the shared cache of decompressed chunk frames.",
							"Point reads and scans in every backend find frames there "
							"instead of decompressing them. 0 turns the cache off; "
							"it needs tessera in shared_preload_libraries.",
							&tessera_shared_cache_size, 0, 0, 64 * 1024,
							process_shared_preload_libraries_in_progress ?
							PGC_POSTMASTER : PGC_INTERNAL,
							GUC_UNIT_MB, NULL, NULL, NULL);
}

/* _PG_init, when loaded through shared_preload_libraries */
void
TesseraSharedCacheShmemInit(void)
{
	if (tessera_shared_cache_size <= 0)
		return;
	prev_shmem_request = shmem_request_hook;
	shmem_request_hook = cache_shmem_request;
	prev_shmem_startup = shmem_startup_hook;
	shmem_startup_hook = cache_shmem_startup;
}

bool
TesseraSharedCacheEnabled(void)
{
	return cache_on;
}

void
TesseraSharedKeyInit(TesseraSharedKey *key, uint64 storage_id, uint64 stripe_id,
					 uint64 offset, uint32 frame)
{
	memset(key, 0, sizeof(TesseraSharedKey));
	key->dbid = MyDatabaseId;
	key->frame = frame;
	key->storage_id = storage_id;
	key->stripe_id = stripe_id;
	key->offset = offset;
}

/*
 * Lock key's partition (*p) in mode and look key up there (its hash in
 * *hash, for an insert that follows); NULL if absent.
 */
static SCEntry *
lock_and_find(const TesseraSharedKey *key, LWLockMode mode, int *p, uint32 *hash)
{
	*hash = get_hash_value(maps[0], key);
	*p = *hash % SC_PARTITIONS;
	LWLockAcquire(locks[*p], mode);
	return hash_search_with_hash_value(maps[*p], key, *hash, HASH_FIND, NULL);
}

/*
 * TesseraSharedCacheGetRange
 *		Copy bytes [off, off + count) of the cached frame of key to dst if
 *		the cache holds it with this checksum and raw length len.
 */
bool
TesseraSharedCacheGetRange(const TesseraSharedKey *key, uint32 check, uint32 len,
						   uint32 off, uint32 count, char *dst)
{
	uint32		hash;
	int			p;
	SCPartition *part;
	SCEntry    *e;
	bool		hit = false;

	Assert(off <= len && count <= len - off);
	if (!cache_on)
		return false;
	e = lock_and_find(key, LW_SHARED, &p, &hash);
	part = parts[p];
	if (e != NULL)
	{
		SCDesc	   *d = &part->descs[e->desc];

		if (d->check == check && d->len == len)
		{
			/* blocks are not contiguous: copy piece by piece */
			while (count > 0)
			{
				uint32		b = off / SC_BLOCK_BYTES;
				uint32		in = off % SC_BLOCK_BYTES;
				uint32		n = Min(count, SC_BLOCK_BYTES - in);

				memcpy(dst, part->data + (Size) d->blocks[b] * SC_BLOCK_BYTES + in, n);
				dst += n;
				off += n;
				count -= n;
			}
			if (pg_atomic_read_u32(&d->usage) < SC_MAX_USAGE)
				pg_atomic_fetch_add_u32(&d->usage, 1);
			hit = true;
		}
	}
	LWLockRelease(locks[p]);
	if (hit)
	{
		pg_atomic_fetch_add_u64(&part->hits, 1);
		my_hits++;
	}
	else
	{
		pg_atomic_fetch_add_u64(&part->misses, 1);
		my_misses++;
	}
	return hit;
}

/*
 * TesseraSharedCacheGet
 *		Copy the cached frame of key into dst (len bytes) if the cache holds
 *		it with this checksum and length.
 */
bool
TesseraSharedCacheGet(const TesseraSharedKey *key, uint32 check, uint32 len, char *dst)
{
	return TesseraSharedCacheGetRange(key, check, len, 0, len, dst);
}

/* Drop entry desc of partition p (exclusive lock held). */
static void
drop_desc(int p, int desc)
{
	SCPartition *part = parts[p];
	SCDesc	   *d = &part->descs[desc];

	hash_search(maps[p], &d->key, HASH_REMOVE, NULL);
	for (int b = 0; b < d->nblocks; b++)
		part->free_blocks[part->nfree_blocks++] = d->blocks[b];
	d->in_use = false;
	part->free_descs[part->nfree_descs++] = desc;
}

/*
 * Free entries until need blocks and a descriptor are free, by clock
 * (exclusive lock held).  Each entry's usage count is lowered as the hand
 * passes; an entry at zero goes.  Gives up after a few rounds (readers
 * marking every entry used again meanwhile).
 */
static bool
make_room(int p, int need)
{
	SCPartition *part = parts[p];
	int			steps = part->nblocks * (SC_MAX_USAGE + 1);

	while ((part->nfree_blocks < need || part->nfree_descs == 0) && steps-- > 0)
	{
		SCDesc	   *d = &part->descs[part->hand];
		int			desc = part->hand;

		part->hand = (part->hand + 1) % part->nblocks;
		if (!d->in_use)
			continue;
		if (pg_atomic_read_u32(&d->usage) > 0)
		{
			pg_atomic_fetch_sub_u32(&d->usage, 1);
			continue;
		}
		drop_desc(p, desc);
		pg_atomic_fetch_add_u64(&part->evictions, 1);
	}
	return part->nfree_blocks >= need && part->nfree_descs > 0;
}

/*
 * TesseraSharedCachePut
 *		Keep len bytes at src (a frame's raw bytes, checked against its
 *		stored checksum `check` by the caller) under key; in free blocks
 *		only, unless evict (scans: a table read once from end to end must
 *		not push out what point reads use again and again).
 */
void
TesseraSharedCachePut(const TesseraSharedKey *key, uint32 check, uint32 len, const char *src,
					  bool evict)
{
	uint32		hash;
	int			p;
	SCPartition *part;
	SCEntry    *e;
	bool		found;
	int			need = (int) ((len + SC_BLOCK_BYTES - 1) / SC_BLOCK_BYTES);
	int			desc;
	SCDesc	   *d;

	if (!cache_on || len == 0 || len > TESSERA_SHARED_MAX_BYTES)
		return;
	e = lock_and_find(key, LW_EXCLUSIVE, &p, &hash);
	part = parts[p];
	if (e != NULL)
	{
		d = &part->descs[e->desc];
		if (d->check == check && d->len == len)
		{
			LWLockRelease(locks[p]);
			return;				/* another backend was first */
		}
		drop_desc(p, e->desc);	/* stale */
	}
	if (evict ? !make_room(p, need) : (part->nfree_blocks < need || part->nfree_descs == 0))
	{
		LWLockRelease(locks[p]);
		return;
	}
	desc = part->free_descs[--part->nfree_descs];
	d = &part->descs[desc];
	d->key = *key;
	d->check = check;
	d->len = len;
	d->nblocks = (uint8) need;
	pg_atomic_write_u32(&d->usage, 1);
	for (int b = 0; b < need; b++)
	{
		uint32		n = Min(len - (uint32) b * SC_BLOCK_BYTES, SC_BLOCK_BYTES);

		d->blocks[b] = part->free_blocks[--part->nfree_blocks];
		memcpy(part->data + (Size) d->blocks[b] * SC_BLOCK_BYTES,
			   src + (Size) b * SC_BLOCK_BYTES, n);
	}
	e = hash_search_with_hash_value(maps[p], key, hash, HASH_ENTER, &found);
	Assert(!found);
	e->desc = desc;
	d->in_use = true;
	LWLockRelease(locks[p]);
	pg_atomic_fetch_add_u64(&part->inserts, 1);
}

/*
 * TesseraSharedCacheForget
 *		Drop every entry of storage storage_id of database dbid (all of the
 *		database's if storage_id is 0).
 */
void
TesseraSharedCacheForget(Oid dbid, uint64 storage_id)
{
	if (!cache_on)
		return;
	for (int p = 0; p < SC_PARTITIONS; p++)
	{
		SCPartition *part = parts[p];

		LWLockAcquire(locks[p], LW_EXCLUSIVE);
		for (int i = 0; i < part->nblocks; i++)
		{
			SCDesc	   *d = &part->descs[i];

			if (d->in_use && d->key.dbid == dbid &&
				(storage_id == 0 || d->key.storage_id == storage_id))
				drop_desc(p, i);
		}
		LWLockRelease(locks[p]);
	}
}

/* This backend's hits and misses so far. */
void
TesseraSharedCacheBackendCounts(uint64 *hits, uint64 *misses)
{
	*hits = my_hits;
	*misses = my_misses;
}

/*
 * TesseraSharedCacheStats
 *		Totals over the partitions: blocks, blocks in use, entries, hits,
 *		misses, inserts, evictions (all zero when the cache is off).
 */
void
TesseraSharedCacheStats(uint64 *out)
{
	memset(out, 0, sizeof(uint64) * 7);
	if (!cache_on)
		return;
	for (int p = 0; p < SC_PARTITIONS; p++)
	{
		SCPartition *part = parts[p];

		LWLockAcquire(locks[p], LW_SHARED);
		out[0] += part->nblocks;
		out[1] += part->nblocks - part->nfree_blocks;
		out[2] += part->nblocks - part->nfree_descs;
		LWLockRelease(locks[p]);
		out[3] += pg_atomic_read_u64(&part->hits);
		out[4] += pg_atomic_read_u64(&part->misses);
		out[5] += pg_atomic_read_u64(&part->inserts);
		out[6] += pg_atomic_read_u64(&part->evictions);
	}
}
