/*-------------------------------------------------------------------------
 *
 * groups.c
 *	  Group tables of TesseraAgg: each row of a batch mapped to its group,
 *	  groups created on first sight, with their aggregate states.
 *
 * NOTES
 *	  A group is its keys: integer-like values, or dense ids of interned
 *	  strings (byte equality, so only deterministic collations; char(n)
 *	  without trailing blanks).  Groups are found through an
 *	  open-addressing hash table, and most rows skip it:
 *	  - one key: a direct-mapped array covers the keys near the first one
 *		seen (TAGG_DIRECT of them, widened towards keys it misses while
 *		they are dense enough), and once every key of a batch is there a
 *		tight loop maps the batch;
 *	  - several keys that are small non-negative values or ids (strings
 *		always are) pack losslessly into 64 bits, and a direct-mapped cache
 *		of packed keys finds their group;
 *	  - the keys' ids come from group_keys.c, strings interned there.
 *	  The NULL key of a single-key table has a group found without hashing.
 *	  A table may be limited to the first groups it makes (a LIMIT with no
 *	  ORDER BY): full, it leaves out rows of other keys, most of them by a
 *	  bitmap of its keys' values before any lookup.
 *
 * IDENTIFICATION
 *	  src/vector/groups.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/numeric.h"

#include "tessera/tessera.h"
#include "tessera/vector.h"
#include "groups_int.h"

/* Set up a table keyed as the planner's key descriptions say, states of nspecs aggregates. */
void
TesseraGroupsInit(TesseraGroups *gt, List *key_descs, int nspecs, MemoryContext cxt)
{
	ListCell   *lc;

	memset(gt, 0, sizeof(TesseraGroups));
	gt->pcache_used = true;		/* not yet cleared */
	gt->cxt = cxt;
	gt->nspecs = nspecs;
	gt->group_bytes = sizeof(TAggState) * nspecs;
	gt->nkeys = list_length(key_descs);
	gt->nhash = gt->nkeys;
	gt->gkeys = palloc0(sizeof(TAggKey) * Max(gt->nkeys, 1));
	foreach(lc, key_descs)
	{
		TAggKey    *key = &gt->gkeys[foreach_current_index(lc)];
		List	   *desc = lfirst(lc);

		key->attidx = desc_int(desc, KEY_DESC_ATTIDX);
		key->typid = (Oid) desc_int(desc, KEY_DESC_TYPID);
		key->collation = (Oid) desc_int(desc, KEY_DESC_COLLATION);
		key->typlen = (int16) desc_int(desc, KEY_DESC_TYPLEN);
		key->kind = (TAggKeyKind) desc_int(desc, KEY_DESC_KIND);
	}
}

/*
 * The last ncarried keys are carried, not grouped on: the planner proved
 * each a function of the others (TesseraAgg's tagg_carry_keys), so equal
 * in every row of a group.  Set before the first group is made.
 */
void
TesseraGroupsCarry(TesseraGroups *gt, int ncarried)
{
	Assert(ncarried >= 0 && ncarried < gt->nkeys && gt->slots == NULL);
	gt->nhash = gt->nkeys - ncarried;
}

/*
 * A table grouping keys for one count only (count(*) or count(x)): its
 * states are the counts alone, 8 bytes a group, not 48 (TesseraGroupState),
 * so that many groups stay in the CPU caches longer (ClickBench's GROUP BY
 * ClientIP, 475,000 groups).  Set before the first group is made.
 */
void
TesseraGroupsCountOnly(TesseraGroups *gt)
{
	Assert(gt->nspecs == 1 && gt->nkeys > 0 && gt->slots == NULL);
	StaticAssertStmt(offsetof(TAggState, count) == 0, "a count-only state is TAggState.count");
	gt->group_bytes = sizeof(int64);
}

/* The bytes of cap groups' states (room for one state at least). */
static inline Size
states_bytes(const TesseraGroups *gt, int cap)
{
	return Max((Size) gt->group_bytes * cap, sizeof(TAggState));
}

/* Forget every group; room for cap of them. */
void
TesseraGroupsReset(TesseraGroups *gt, int cap)
{
	MemoryContextReset(gt->cxt);
	gt->cap = cap;
	/* (a group's states are zeroed as it is made: new_group) */
	gt->states = TesseraAllocLarge(gt->cxt, states_bytes(gt, gt->cap), 0);
	gt->keys = TesseraAllocLarge(gt->cxt, sizeof(int64) * gt->cap * Max(gt->nkeys, 1), 0);
	gt->keynull = TesseraAllocLarge(gt->cxt, sizeof(bool) * gt->cap * Max(gt->nkeys, 1), 0);
	gt->ngroups = gt->nkeys > 0 ? 0 : 1;
	if (gt->nkeys == 0)
		memset(gt->states, 0, states_bytes(gt, 1));
	gt->null_group = -1;
	/* (only where lookups filled it: a spill's merge resets once per group) */
	if (gt->pcache_used)
		memset(gt->pcache_g, 0xff, sizeof(gt->pcache_g));
	gt->pcache_used = false;
	gt->nslots = 0;
	gt->slots = NULL;
	gt->kfilter = NULL;
	gt->kfilter_null = NULL;
	gt->frows = NULL;
	gt->fpass = NULL;
	gt->frows_cap = 0;
	gt->direct = NULL;
	gt->gidx = NULL;
	gt->lgidx = NULL;
	gt->pend = NULL;
	gt->carry_rows = NULL;
	gt->phash = NULL;
	gt->ppacked = NULL;
	gt->row_cap = 0;
	gt->shash = NULL;
	gt->srows = NULL;
	gt->sdict = NULL;
	gt->shash_cap = gt->sdict_cap = 0;
	for (int j = 0; j < gt->nkeys; j++)
	{
		TAggKey    *key = &gt->gkeys[j];

		key->strs = NULL;
		key->nstrs = key->strcap = 0;
		key->slots = NULL;
		key->nslots = 0;
		key->ids = NULL;
		key->ids_cap = 0;
		key->nulls = NULL;
		key->dict_map = NULL;
		key->map_cap = 0;
		key->own_nulls = NULL;
		key->nulls_cap = 0;
		key->hbuf = NULL;
		key->sbuf = NULL;
		key->hbuf_cap = 0;
	}
}

#define TAGG_DIRECT 65536
/* an integer key's direct-mapped window: at most this many entries ... */
#define TAGG_DIRECT_MAX (1 << 22)
/* ... and this many per group found so far (keys denser than 1 in 8) */
#define TAGG_DIRECT_PER_GROUP 8

static void rehash(TesseraGroups *gt, uint32 nslots);
static void groups_grow(TesseraGroups *gt, int cap);

/*
 * The size of a slot of gt: one key (never NULL in the table) is kept in the
 * slot, which then alone decides a lookup, and the group's keys are not
 * read (with 237k groups of ClientIP, reading them missed the CPU caches on
 * every row: half of the lookup, 606 -> 416 ms); several keys are compared
 * with the group's, and their slots stay 8 bytes (16 made UserID,
 * SearchPhrase 15% slower).
 */
static inline uint32
slot_size(const TesseraGroups *gt)
{
	return gt->nhash == 1 ? sizeof(TAggSlot) : offsetof(TAggSlot, key);
}

/* slot h of gt */
static inline TAggSlot *
slot_at(const TesseraGroups *gt, uint32 h)
{
	return (TAggSlot *) ((char *) gt->slots + (Size) h * gt->slot_bytes);
}

/*
 * Size the hash table for the groups expected, so that a large grouping
 * does not rehash its way up (with an eighth of hash_mem at most: the
 * groups' keys and states need the rest).  (Presizing the groups' arrays
 * too was measured no faster, when glibc grew them by mremap.)
 */
void
TesseraGroupsPresize(TesseraGroups *gt, double groups)
{
	uint32		nslots = 1024;
	Size		limit = get_hash_memory_limit() / 8;

	if (gt->nkeys == 0)
		return;
	while (nslots < groups * 4 / 3 && nslots < ((uint32) 1 << 30) &&
		   (Size) nslots * 2 * slot_size(gt) <= limit)
		nslots *= 2;
	if (nslots > 1024)
		rehash(gt, nslots);
}

/*
 * Room for the states and keys of the groups expected, within a quarter of
 * hash_mem, for a table that is given up rather than spilled past hash_mem
 * (a memo: grown by doubling, TPC-H q20's 543,000 groups were copied a
 * dozen times).  (Not for one that spills: growing from a size off the
 * doubling-then-a-quarter steps of new_group overshot hash_mem with TPC-H
 * q18's 1.5M groups, which then spilled.)
 */
void
TesseraGroupsReserve(TesseraGroups *gt, double groups)
{
	double		per = states_bytes(gt, 1) + (sizeof(int64) + 1) * gt->nkeys;
	double		want = Min(groups, (double) (get_hash_memory_limit() / 4) / per);

	if (gt->nkeys > 0 && want > gt->cap)
		groups_grow(gt, (int) want);
}

/* The hash of group g's keys, or of a row's (keys/nulls at stride 1). */
static inline uint64
hash_keys(const int64 *keys, const bool *nulls, int nkeys)
{
	uint64		h = 0;

	for (int j = 0; j < nkeys; j++)
		h = (h ^ (nulls[j] ? UINT64CONST(0x5bd1e995) : (uint64) keys[j])) *
			UINT64CONST(0x9E3779B97F4A7C15);
	return h;
}

/* The entry of the packed-key cache for packed keys. */
static inline uint32
pcache_of(uint64 packed)
{
	return (uint32) ((packed * UINT64CONST(0x9E3779B97F4A7C15)) >> 52);
}

/* A slot's tag: the hash bits slot_of does not use. */
static inline uint32
slot_tag(uint64 h)
{
	return (uint32) h;
}

/* The first slot to probe for hash h. */
static inline uint32
slot_of(TesseraGroups *gt, uint64 h)
{
	return (uint32) (h >> 32) & (gt->nslots - 1);
}

/*
 * Room for cap groups' keys and states (those of groups not made yet are not
 * zeroed).  Past 4 MB the new arrays are advised as huge pages before the
 * copy (TesseraReallocLarge): repalloc_huge let glibc grow them by mremap,
 * which left them in 4 kB pages, a TLB miss per group looked up at random
 * (ClickBench 10M `RegionID, ..., count(DISTINCT UserID)`, 1.17M groups
 * of region and user, serially 801 -> 723 ms; `UserID, SearchPhrase` and
 * `WatchID, ClientIP WHERE SearchPhrase <> ''` 5-7% faster parallel).
 */
static void
groups_grow(TesseraGroups *gt, int cap)
{
	gt->states = TesseraReallocLarge(gt->states, states_bytes(gt, gt->cap), states_bytes(gt, cap));
	gt->keys = TesseraReallocLarge(gt->keys, sizeof(int64) * gt->cap * Max(gt->nkeys, 1),
								   sizeof(int64) * cap * Max(gt->nkeys, 1));
	gt->keynull = TesseraReallocLarge(gt->keynull, sizeof(bool) * gt->cap * Max(gt->nkeys, 1),
									  sizeof(bool) * cap * Max(gt->nkeys, 1));
	gt->cap = cap;
}

static int
new_group(TesseraGroups *gt, const int64 *keys, const bool *nulls)
{
	int			g = gt->ngroups++;
	int			k = gt->nkeys;

	if (g == gt->cap)
	{
		/*
		 * doubling while small; past a million groups a quarter more at a
		 * time, so that the room not yet used does not push a grouping that
		 * fits past hash_mem into a spill (TPC-H q18's 1.5M groups: 2M
		 * states allocated by doubling, 100 MB of 48-byte states)
		 */
		int			newcap = gt->cap < (1 << 20) ? gt->cap * 2 : gt->cap + gt->cap / 4;

		groups_grow(gt, newcap);
	}
	memset(TesseraGroupState(gt, g, 0), 0, gt->group_bytes);
	memcpy(&gt->keys[(Size) g * k], keys, sizeof(int64) * k);
	memcpy(&gt->keynull[(Size) g * k], nulls, sizeof(bool) * k);
	return g;
}

static void
rehash(TesseraGroups *gt, uint32 nslots)
{
	int			k = gt->nkeys;
	int			nh = gt->nhash;

	if (gt->slots)
		pfree(gt->slots);
	gt->nslots = nslots;
	gt->slot_bytes = slot_size(gt);
	gt->slots = TesseraAllocLarge(gt->cxt, (Size) gt->slot_bytes * nslots, 0);
	for (uint32 i = 0; i < nslots; i++)
		slot_at(gt, i)->group = -1;
	for (int g = 0; g < gt->ngroups; g++)
	{
		const int64 *keys = &gt->keys[(Size) g * k];
		uint64		hash;
		uint32		h;

		if (nh == 1 && gt->keynull[(Size) g * k])
			continue;			/* the NULL group of one key is found without hashing */
		hash = hash_keys(keys, &gt->keynull[(Size) g * k], nh);
		h = slot_of(gt, hash);
		while (slot_at(gt, h)->group >= 0)
			h = (h + 1) & (nslots - 1);
		if (nh == 1)
			slot_at(gt, h)->key = keys[0];
		slot_at(gt, h)->tag = slot_tag(hash);
		slot_at(gt, h)->group = g;
	}
}

/*
 * The group of these keys, whose hash_keys is hash, created if new (-1 if
 * new and the table is full).  (One NULL key is not looked up here:
 * TesseraGroupsLookup and the callers keep its group aside.)
 */
static inline int
find_group_hashed(TesseraGroups *gt, const int64 *keys, const bool *nulls, uint64 hash)
{
	int			k = gt->nkeys;
	int			nh = gt->nhash;
	uint32		tag,
				h;

	/* at most three quarters full: the tags keep probes cheap */
	if ((Size) gt->ngroups * 4 >= (Size) gt->nslots * 3)
		rehash(gt, Max(gt->nslots * 2, 1024));
	tag = slot_tag(hash);
	h = slot_of(gt, hash);
	for (;;)
	{
		TAggSlot   *slot = slot_at(gt, h);

		if (slot->group < 0)
		{
			if (groups_full(gt))
				return -1;
			slot->group = new_group(gt, keys, nulls);
			if (nh == 1)
				slot->key = keys[0];
			slot->tag = tag;
			return slot->group;
		}
		if (nh == 1)
		{
			/* one key (never NULL here): the slot's copy decides (slot_size) */
			Assert(!nulls[0]);
			if (slot->tag == tag && slot->key == keys[0])
				return slot->group;
		}
		else if (slot->tag == tag)
		{
			const int64 *gk = &gt->keys[(Size) slot->group * k];
			const bool *gn = &gt->keynull[(Size) slot->group * k];
			int			j;

			for (j = 0; j < nh; j++)
				if (gk[j] != keys[j] || gn[j] != nulls[j])
					break;
			if (j == nh)
				return slot->group;
		}
		h = (h + 1) & (gt->nslots - 1);
	}
}

static inline int
find_group(TesseraGroups *gt, const int64 *keys, const bool *nulls)
{
	return find_group_hashed(gt, keys, nulls, hash_keys(keys, nulls, gt->nhash));
}

/*
 * Bring the slots a lookup of hash h will probe into the cache: the first
 * one's line and the next (a probe past a full table's first slot runs
 * on into it).  Always inlined: GCC deems a function that only prefetches
 * free of side effects and drops calls to it.
 */
static pg_attribute_always_inline void
prefetch_slots(TesseraGroups *gt, uint64 h)
{
	uint32		first = slot_of(gt, h);

	__builtin_prefetch(slot_at(gt, first));
	__builtin_prefetch(slot_at(gt, (first + 8) & (gt->nslots - 1)));
}

/*
 * While the pending lookup p of np is made: the slots of lookup p + 16, and
 * (several keys) the keys and NULL flags of the group in the first slot of
 * lookup p + 8 (fetched by now).
 */
static pg_attribute_always_inline void
prefetch_ahead(TesseraGroups *gt, int p, int np)
{
	if (gt->slots == NULL)
		return;
	if (p + 16 < np)
		prefetch_slots(gt, gt->phash[p + 16]);
	if (p + 8 < np && gt->nhash > 1)
	{
		TAggSlot   *ahead = slot_at(gt, slot_of(gt, gt->phash[p + 8]));

		/* (its NULL flags too: they are compared, a second wait on memory) */
		if (ahead->group >= 0)
		{
			__builtin_prefetch(&gt->keys[(Size) ahead->group * gt->nkeys]);
			__builtin_prefetch(&gt->keynull[(Size) ahead->group * gt->nkeys]);
		}
	}
}

/*
 * Row i's keys as new_group stores them: the grouped ones; the carried ones
 * are filled in after the batch's lookups (TesseraGroupsFillCarried), from
 * one row per new group.
 */
static inline void
row_keys(TesseraGroups *gt, int i, int64 *keys, bool *nulls)
{
	for (int j = 0; j < gt->nhash; j++)
	{
		nulls[j] = gt->gkeys[j].nulls[i];
		keys[j] = nulls[j] ? 0 : gt->gkeys[j].ids[i];
	}
	for (int j = gt->nhash; j < gt->nkeys; j++)
	{
		nulls[j] = true;
		keys[j] = 0;
	}
}

/*
 * Row i made the newest group: where there are carried keys, the row to
 * read them from (TesseraGroupsFillCarried).  Groups are numbered as they
 * are made, so the c-th row noted is group carry_first + c's.
 */
static inline void
note_new_group(TesseraGroups *gt, int i)
{
	if (gt->nhash < gt->nkeys)
		gt->carry_rows[gt->ncarry++] = i;
}

/*
 * Several keys.  Rows whose keys are all small non-negative ids or values
 * (strings always are) pack losslessly into 64 bits, and a direct-mapped
 * cache of packed keys finds their group without hashing them one by one.
 * The other rows are hashed first and then looked up with the slot of a
 * later row and that slot's group keys fetched ahead: past the CPU caches
 * (ClickBench's UserID and SearchPhrase, 256k groups) a lookup otherwise
 * waits on memory twice, for the slot and for the keys it compares.
 */
static void
assign_multi(TesseraGroups *gt, const bool *ok, int n, int32 *gidx)
{
	int			k = gt->nhash;	/* (carried keys: only stored, below) */
	int			shift = 64 / k;
	int			np = 0;
	bool		runs = false;
	int64		rowkeys[INDEX_MAX_KEYS];
	bool		rownulls[INDEX_MAX_KEYS];

	for (int i = 0; i < n; i++)
	{
		uint64		packed = 0;
		bool		packs = true;
		bool		absent = false;

		if (ok && !ok[i])
		{
			gidx[i] = -1;
			continue;
		}
		for (int j = 0; j < k; j++)
		{
			int64		id = gt->gkeys[j].ids[i];

			rownulls[j] = gt->gkeys[j].nulls[i];
			rowkeys[j] = rownulls[j] ? 0 : id;
			if (rownulls[j] || id < 0 || (shift < 64 && (uint64) id >= (UINT64CONST(1) << (shift - 1))))
				packs = false;
			if (id == TAGG_ID_ABSENT && !rownulls[j] && key_dense(&gt->gkeys[j]))
				absent = true;
			packed = (packed << shift) | (uint64) id;
		}
		if (absent)
		{
			/* a string no group has, of a full table */
			gidx[i] = -1;
			continue;
		}
		if (packs)
		{
			uint32		c = pcache_of(packed);

			if (gt->pcache_g[c] >= 0 && gt->pcache_key[c] == packed)
			{
				gidx[i] = gt->pcache_g[c];
				continue;
			}
		}
		/* the keys of the row before (a table loaded in their order): its group, below */
		if (i > 0 && gidx[i - 1] != -1)
		{
			int			j;

			for (j = 0; j < k; j++)
				if (gt->gkeys[j].ids[i] != gt->gkeys[j].ids[i - 1] ||
					gt->gkeys[j].nulls[i] != gt->gkeys[j].nulls[i - 1])
					break;
			if (j == k)
			{
				gidx[i] = -2;
				runs = true;
				continue;
			}
		}
		gidx[i] = -3;			/* looked up below */
		gt->pend[np] = packs ? i : -1 - i;
		gt->phash[np] = hash_keys(rowkeys, rownulls, k);
		gt->ppacked[np] = packed;
		np++;
	}
	for (int p = 0; p < np; p++)
	{
		int			i = gt->pend[p] >= 0 ? gt->pend[p] : -1 - gt->pend[p];
		int			g;
		int			made;

		prefetch_ahead(gt, p, np);
		row_keys(gt, i, rowkeys, rownulls);
		made = gt->ngroups;
		g = find_group_hashed(gt, rowkeys, rownulls, gt->phash[p]);
		if (gt->ngroups != made)
			note_new_group(gt, i);
		if (gt->pend[p] >= 0)
		{
			uint32		c = pcache_of(gt->ppacked[p]);

			gt->pcache_key[c] = gt->ppacked[p];
			gt->pcache_g[c] = g;
			gt->pcache_used = true;
		}
		gidx[i] = g;
	}
	if (runs)
		for (int i = 1; i < n; i++)
			if (gidx[i] == -2)
				gidx[i] = gidx[i - 1];
}

/*
 * Widen the direct-mapped window of an integer key to cover key, by
 * doubling it towards key, where it stays within TAGG_DIRECT_MAX entries
 * and TAGG_DIRECT_PER_GROUP per group (4 bytes each: no more than a group
 * costs anyway): keys spread over a range a few times the window's
 * (TPC-H's 200,000 part keys) all come to be looked up there, not hashed,
 * while sparse keys keep the window they have.
 */
static void
direct_widen(TesseraGroups *gt, int64 key)
{
	uint64		cap = gt->direct_cap;
	int64		base = gt->direct_base;
	uint64		span;
	uint64		newcap = cap;
	int64		newbase = base;
	int32	   *direct;

	if (key < base)
		span = (uint64) base - (uint64) key + cap;
	else
		span = (uint64) key - (uint64) base + 1;
	if (span > TAGG_DIRECT_MAX || key < PG_INT64_MIN + TAGG_DIRECT_MAX ||
		key > PG_INT64_MAX - TAGG_DIRECT_MAX)
		return;
	while (newcap < span)
		newcap *= 2;
	if (newcap > TAGG_DIRECT_MAX ||
		newcap > (uint64) TAGG_DIRECT_PER_GROUP * (uint64) (gt->ngroups + 1))
		return;
	if (key < base)
		newbase = base - (int64) (newcap - cap);
	direct = TesseraAllocLarge(gt->cxt, sizeof(int32) * newcap, 0);
	memset(direct, 0xff, sizeof(int32) * newcap);
	memcpy(direct + (base - newbase), gt->direct, sizeof(int32) * cap);
	pfree(gt->direct);
	gt->direct = direct;
	gt->direct_cap = newcap;
	gt->direct_base = newbase;
}

/*
 * One key, rows first to n.  A run of one key (a table loaded in its order:
 * TPC-H lineitem's l_orderkey) is looked up once; the NULL key's group is
 * kept aside; keys near the first one seen find their group in a
 * direct-mapped array.  The others are hashed first and then looked up
 * with a later row's slot and that slot's group key fetched ahead, as for
 * several keys (assign_multi).
 */
static void
assign_one(TesseraGroups *gt, const bool *ok, int first, int n, int32 *gidx)
{
	const int64 *ids = gt->gkeys[0].ids;
	const bool *nulls = gt->gkeys[0].nulls;
	int64		rowkeys[INDEX_MAX_KEYS];
	bool		rownulls[INDEX_MAX_KEYS];
	bool		runs = false;
	bool		dense = key_dense(&gt->gkeys[0]);
	int			np = 0;

	rownulls[0] = false;

	for (int i = first; i < n; i++)
	{
		uint64		d;

		if (ok && !ok[i])
		{
			gidx[i] = -1;
			continue;
		}
		if (nulls[i])
		{
			if (gt->null_group < 0 && groups_full(gt))
			{
				gidx[i] = -1;
				continue;
			}
			if (gt->null_group < 0)
			{
				row_keys(gt, i, rowkeys, rownulls);
				rowkeys[0] = 0;
				gt->null_group = new_group(gt, rowkeys, rownulls);
				note_new_group(gt, i);
				rownulls[0] = false;
			}
			gidx[i] = gt->null_group;
			continue;
		}
		if (dense && ids[i] == TAGG_ID_ABSENT)
		{
			/* a string no group has, of a full table */
			gidx[i] = -1;
			continue;
		}
		d = (uint64) (ids[i] - gt->direct_base);
		if (gt->direct != NULL && d < gt->direct_cap && gt->direct[d] >= 0)
		{
			gidx[i] = gt->direct[d];
			continue;
		}
		if (i > 0 && gidx[i - 1] != -1 && !nulls[i - 1] && ids[i - 1] == ids[i])
		{
			gidx[i] = -2;		/* the group of the row before, below */
			runs = true;
			continue;
		}
		gidx[i] = -3;			/* looked up below */
		gt->pend[np] = i;
		gt->phash[np] = hash_keys(&ids[i], rownulls, 1);
		np++;
	}
	for (int p = 0; p < np; p++)
	{
		int			i = gt->pend[p];
		int64		key = ids[i];
		uint64		d;
		int			made;

		prefetch_ahead(gt, p, np);
		if (gt->nkeys > 1)
			row_keys(gt, i, rowkeys, rownulls);
		else
			rowkeys[0] = key;
		made = gt->ngroups;
		gidx[i] = find_group_hashed(gt, rowkeys, rownulls, gt->phash[p]);
		if (gt->ngroups != made)
			note_new_group(gt, i);
		if (gt->direct == NULL)
		{
			gt->direct_cap = TAGG_DIRECT;
			gt->direct = MemoryContextAlloc(gt->cxt, sizeof(int32) * gt->direct_cap);
			memset(gt->direct, 0xff, sizeof(int32) * gt->direct_cap);
			/* a string's ids are dense from 0: the array grows to cover them all */
			gt->direct_base = key_dense(&gt->gkeys[0]) ? 0 : key - TAGG_DIRECT / 2;
		}
		d = (uint64) (key - gt->direct_base);
		if (d >= gt->direct_cap && key_dense(&gt->gkeys[0]) && d < PG_INT32_MAX / 2)
		{
			uint64		cap = gt->direct_cap;

			while (cap <= d)
				cap *= 2;
			gt->direct = repalloc_huge(gt->direct, sizeof(int32) * cap);
			memset(gt->direct + gt->direct_cap, 0xff, sizeof(int32) * (cap - gt->direct_cap));
			gt->direct_cap = cap;
		}
		else if (d >= gt->direct_cap && !key_dense(&gt->gkeys[0]))
		{
			direct_widen(gt, key);
			d = (uint64) key - (uint64) gt->direct_base;
		}
		if (d < gt->direct_cap)
			gt->direct[d] = gidx[i];
	}
	if (runs)
		for (int i = Max(first, 1); i < n; i++)
			if (gidx[i] == -2)
				gidx[i] = gidx[i - 1];
}

/*
 * A full table of few groups (limit, below) is met by few values of each
 * key: a bitmap of their hashes per key passes the rows that may be in a
 * group and drops the others before any string is hashed or group looked
 * up (`GROUP BY UserID, SearchPhrase LIMIT 10`: 10 user ids pass a row in
 * a million, whose phrases alone are then read).
 */
#define TAGG_KFILTER_BITS 16384
#define TAGG_KFILTER_MAX_GROUPS 1024

static inline uint32
kfilter_bit(int64 id)
{
	return (uint32) (((uint64) id * UINT64CONST(0x9E3779B97F4A7C15)) >> 50);
}

static void
kfilter_build(TesseraGroups *gt)
{
	int			words = TAGG_KFILTER_BITS / 64;

	gt->kfilter = MemoryContextAllocZero(gt->cxt, sizeof(uint64) * words * gt->nhash);
	gt->kfilter_null = MemoryContextAllocZero(gt->cxt, sizeof(bool) * gt->nhash);
	for (int g = 0; g < gt->ngroups; g++)
		for (int j = 0; j < gt->nhash; j++)
		{
			Size		at = (Size) g * gt->nkeys + j;

			if (gt->keynull[at])
				gt->kfilter_null[j] = true;
			else
			{
				uint32		bit = kfilter_bit(gt->keys[at]);

				gt->kfilter[j * words + bit / 64] |= UINT64CONST(1) << (bit % 64);
			}
		}
}

/*
 * The rows of the batch (of those ok keeps) whose keys' values all pass the
 * bitmaps, into gt->frows; how many.  Only the keys whose ids are cheap are
 * tested: integers, and strings of a dictionary chunk (ids per entry); -1
 * if none is.
 */
static int
kfilter_rows(TesseraGroups *gt, TesseraBatch *b, const bool *ok, int n)
{
	int			words = TAGG_KFILTER_BITS / 64;
	bool	   *pass = NULL;
	int			m = 0;

	for (int j = 0; j < gt->nhash; j++)
	{
		TAggKey    *key = &gt->gkeys[j];
		const uint64 *bits = &gt->kfilter[j * words];
		int64	   *codes;
		Datum	   *entries;
		int			ndict;

		if (key->kind != TAGG_KEY_INT && key->kind != TAGG_KEY_NUMINT &&
			(key->attidx >= TAGG_COMPUTED_ATTIDX ||
			 !TesseraBatchDict(b, key->attidx, &codes, &entries, &ndict)))
			continue;
		if (key->ids == NULL || key->ids_cap < n)
		{
			key->ids_cap = Max(n, 1024);
			key->ids = MemoryContextAlloc(gt->cxt, sizeof(int64) * key->ids_cap);
		}
		TesseraGroupKeyIds(gt, key, b, pass != NULL ? pass : ok, n);
		if (pass == NULL)
		{
			pass = gt->fpass;
			if (ok != NULL)
				memcpy(pass, ok, n);
			else
				memset(pass, true, n);
		}
		for (int i = 0; i < n; i++)
		{
			uint32		bit = kfilter_bit(key->ids[i]);

			pass[i] &= key->nulls[i] ? gt->kfilter_null[j] :
				(bits[bit / 64] >> (bit % 64)) & 1;
		}
	}
	if (pass == NULL)
		return -1;
	for (int i = 0; i < n; i++)
	{
		gt->frows[m] = i;
		m += pass[i];
	}
	return m;
}

/*
 * Each of the batch's n rows' group (-1 for rows ok leaves out), in an array
 * owned by the table (valid until the next call).  rows, when not NULL, are
 * the m rows ok keeps, ascending (a sparse batch): only they are looked at.
 */
int32 *
TesseraGroupsAssign(TesseraGroups *gt, TesseraBatch *b, const bool *ok, int n, const int *rows,
					int m)
{
	int32	   *gidx;
	int			first_slow;

	if (gt->row_cap < n)
	{
		gt->row_cap = Max(n, 1024);
		gt->gidx = MemoryContextAlloc(gt->cxt, sizeof(int32) * gt->row_cap);
		gt->lgidx = MemoryContextAlloc(gt->cxt, sizeof(int32) * gt->row_cap);
		gt->pend = MemoryContextAlloc(gt->cxt, sizeof(int32) * gt->row_cap);
		gt->carry_rows = MemoryContextAlloc(gt->cxt, sizeof(int32) * gt->row_cap);
		gt->phash = MemoryContextAlloc(gt->cxt, sizeof(uint64) * gt->row_cap);
		gt->ppacked = MemoryContextAlloc(gt->cxt, sizeof(uint64) * gt->row_cap);
	}
	gt->carry_first = gt->ngroups;
	gt->ncarry = 0;
	/* a full table of few groups: the rows its keys' bitmaps pass, as a list */
	if (rows == NULL && groups_full(gt) && gt->limit <= TAGG_KFILTER_MAX_GROUPS)
	{
		int			passed;

		if (gt->kfilter == NULL)
			kfilter_build(gt);
		if (gt->frows_cap < n)
		{
			gt->frows_cap = Max(n, 1024);
			gt->frows = MemoryContextAlloc(gt->cxt, sizeof(int32) * gt->frows_cap);
			gt->fpass = MemoryContextAlloc(gt->cxt, gt->frows_cap);
		}
		passed = kfilter_rows(gt, b, ok, n);
		if (passed >= 0)
		{
			rows = gt->frows;
			m = passed;
		}
	}
	/* (carried keys: read for the new groups only, TesseraGroupsFillCarried) */
	for (int j = 0; j < gt->nhash; j++)
	{
		TAggKey    *key = &gt->gkeys[j];

		if (key->ids == NULL || key->ids_cap < n)
		{
			key->ids_cap = Max(n, 1024);
			key->ids = MemoryContextAlloc(gt->cxt, sizeof(int64) * key->ids_cap);
		}
		if (rows != NULL)
			TesseraGroupKeyIdsListed(gt, key, b, rows, m);
		else
			TesseraGroupKeyIds(gt, key, b, ok, n);
	}
	if (rows != NULL)
	{
		/* the listed rows' groups, packed, then each put at its row */
		int32	   *lgidx = gt->lgidx;

		if (gt->nhash > 1)
			assign_multi(gt, NULL, m, lgidx);
		else
			assign_one(gt, NULL, 0, m, lgidx);
		gidx = gt->gidx;
		memset(gidx, 0xff, sizeof(int32) * n);
		for (int j = 0; j < m; j++)
			gidx[rows[j]] = lgidx[j];
		for (int c = 0; c < gt->ncarry; c++)
			gt->carry_rows[c] = rows[gt->carry_rows[c]];
		return gidx;
	}
	gidx = gt->gidx;
	first_slow = 0;
	if (gt->nhash == 1 && ok == NULL && gt->direct != NULL &&
		memchr(gt->gkeys[0].nulls, true, n) == NULL)
	{
		/*
		 * One key, every row, no NULL, the group of each key already in the
		 * direct-mapped cache (after the first batches of a low-cardinality
		 * key): a tight loop; the general one takes over at the first row
		 * that misses.
		 */
		const int64 *ids = gt->gkeys[0].ids;
		const int32 *direct = gt->direct;
		int64		base = gt->direct_base;

		for (; first_slow < n; first_slow++)
		{
			uint64		d = (uint64) (ids[first_slow] - base);

			if (d >= gt->direct_cap || direct[d] < 0)
				break;
			gidx[first_slow] = direct[d];
		}
	}
	if (gt->nhash > 1)
		assign_multi(gt, ok, n, gidx);
	else
		assign_one(gt, ok, first_slow, n, gidx);
	return gidx;
}

/*
 * TesseraGroupsNewRows
 *		After TesseraGroupsAssign of a table with carried keys, the rows
 *		that made its new groups (the first of the batch for each), set in
 *		mask (of n rows; the others cleared): a caller computes what
 *		TesseraGroupsFillCarried reads for those rows only.  Returns how
 *		many.
 */
int
TesseraGroupsNewRows(TesseraGroups *gt, int n, bool *mask)
{
	Assert(gt->ncarry == gt->ngroups - gt->carry_first);
	memset(mask, false, n);
	for (int c = 0; c < gt->ncarry; c++)
		mask[gt->carry_rows[c]] = true;
	return gt->ncarry;
}

/*
 * TesseraGroupsFillCarried
 *		The carried keys of the groups the last TesseraGroupsAssign made,
 *		from the row of batch b that made each: a column's value read singly, an expression's
 *		from its computed values (which must cover those rows).  A carried
 *		key is a function of the grouped ones, so any row of the group
 *		would do; reading it per new group rather than per row spares
 *		each row computing and interning it (ClickBench's ClientIP - 1,
 *		- 2, - 3 over 10M rows of 474,000 groups; TPC-H q10's customer
 *		name, address, phone and comment).
 */
void
TesseraGroupsFillCarried(TesseraGroups *gt, TesseraBatch *b)
{
	int			k = gt->nkeys;

	for (int j = gt->nhash; j < k; j++)
	{
		TAggKey    *key = &gt->gkeys[j];

		for (int c = 0; c < gt->ncarry; c++)
		{
			int			i = gt->carry_rows[c];
			Size		at = (Size) (gt->carry_first + c) * k + j;
			bool		isnull;
			Datum		d;

			if (key->attidx >= TAGG_COMPUTED_ATTIDX)
			{
				isnull = key->cnulls[i];
				d = key->cvalues[i];
			}
			else
				d = TesseraBatchValue(b, key->attidx, i, &isnull);
			gt->keynull[at] = isnull;
			if (isnull)
				gt->keys[at] = 0;
			else if (key->kind == TAGG_KEY_NUMINT && key->cints != NULL)
				gt->keys[at] = key->cints[i];
			else
				gt->keys[at] = TesseraGroupKeyId(gt, key, d);
		}
	}
	gt->ncarry = 0;
}

/* A new group of these keys, which no group has yet (not hashed: never looked up). */
int
TesseraGroupsAdd(TesseraGroups *gt, const int64 *keys, const bool *nulls)
{
	return new_group(gt, keys, nulls);
}

/* The group of a row of keys (created if new); keys[0] is reset for a NULL key. */
int
TesseraGroupsLookup(TesseraGroups *gt, int64 *keys, bool *nulls)
{
	if (gt->nkeys == 0)
		return 0;
	if (gt->nhash == 1 && nulls[0])
	{
		if (gt->null_group < 0)
		{
			keys[0] = 0;
			gt->null_group = new_group(gt, keys, nulls);
		}
		return gt->null_group;
	}
	return find_group(gt, keys, nulls);
}

/*
 * The keys of a row whose first nkeys columns are key values (a partial
 * node's output, a spilled row), strings interned.  ids: a NUMINT key's
 * column holds its id as an int8 (TesseraGroupsKeyDatums's).
 */
void
TesseraGroupsKeysOf(TesseraGroups *gt, TupleTableSlot *slot, int64 *keys, bool *nulls, bool ids)
{
	slot_getsomeattrs(slot, gt->nkeys);
	TesseraGroupsKeysOfDatums(gt, slot->tts_values, slot->tts_isnull, keys, nulls, ids);
}

/* ... of key values as Datums (a spilled record's) */
void
TesseraGroupsKeysOfDatums(TesseraGroups *gt, const Datum *values, const bool *isnull,
						  int64 *keys, bool *nulls, bool ids)
{
	for (int j = 0; j < gt->nkeys; j++)
	{
		TAggKey    *key = &gt->gkeys[j];

		nulls[j] = isnull[j];
		if (nulls[j])
			keys[j] = 0;
		else if (ids && key->kind == TAGG_KEY_NUMINT)
			keys[j] = DatumGetInt64(values[j]);
		else
			keys[j] = TesseraGroupKeyId(gt, key, values[j]);
	}
}

/* The group of these key values (the first nkeys), made if new. */
int
TesseraGroupsLookupDatums(TesseraGroups *gt, const Datum *values, const bool *isnull)
{
	int64		keys[INDEX_MAX_KEYS];
	bool		nulls[INDEX_MAX_KEYS];

	Assert(gt->nkeys <= INDEX_MAX_KEYS);
	for (int j = 0; j < gt->nkeys; j++)
	{
		TAggKey    *key = &gt->gkeys[j];

		nulls[j] = isnull[j];
		keys[j] = nulls[j] ? 0 : TesseraGroupKeyId(gt, key, values[j]);
	}
	return TesseraGroupsLookup(gt, keys, nulls);
}

/*
 * The group of these key values, or -1 if there is none: nothing is made.
 * Keys of integer kinds only (a string is not interned here).
 */
int
TesseraGroupsFindInts(TesseraGroups *gt, const Datum *values, const bool *isnull)
{
	int64		keys[INDEX_MAX_KEYS];
	uint64		hash;
	uint32		tag,
				h;
	int			k = gt->nkeys;

	Assert(k > 0 && k <= INDEX_MAX_KEYS);
	if (gt->slots == NULL)
		return -1;
	for (int j = 0; j < k; j++)
	{
		Assert(gt->gkeys[j].kind == TAGG_KEY_INT);
		if (isnull[j])
			return -1;			/* (the memo's callers: `= NULL` keeps no row) */
		keys[j] = TesseraIntDatum(values[j], gt->gkeys[j].typlen);
	}
	hash = hash_keys(keys, (const bool *) isnull, gt->nhash);
	tag = slot_tag(hash);
	h = slot_of(gt, hash);
	for (;;)
	{
		TAggSlot   *slot = slot_at(gt, h);

		if (slot->group < 0)
			return -1;
		if (slot->tag == tag &&
			memcmp(&gt->keys[(Size) slot->group * k], keys, sizeof(int64) * gt->nhash) == 0 &&
			memcmp(&gt->keynull[(Size) slot->group * k], isnull, sizeof(bool) * gt->nhash) == 0)
			return slot->group;
		h = (h + 1) & (gt->nslots - 1);
	}
}

/*
 * Group g's keys as Datums of their columns; ids: a NUMINT key's as its id,
 * an int8 (a spilled row: no numeric made per group, which was 16% of
 * ClickBench's 10M `UserID, extract(minute …), SearchPhrase`).
 */
void
TesseraGroupsKeyDatums(TesseraGroups *gt, int g, Datum *values, bool *isnull, bool ids)
{
	for (int j = 0; j < gt->nkeys; j++)
	{
		TAggKey    *key = &gt->gkeys[j];
		int64		v = gt->keys[(Size) g * gt->nkeys + j];

		isnull[j] = gt->keynull[(Size) g * gt->nkeys + j];
		if (isnull[j])
			values[j] = (Datum) 0;
		else if (key->kind == TAGG_KEY_NUMINT)
			values[j] = ids ? Int64GetDatum(v) : TesseraGroupNumIntDatum(v);	/* in the caller's memory */
		else if (key->kind != TAGG_KEY_INT)
			values[j] = key->strs[v];
		else
			values[j] = key->typlen == 2 ? Int16GetDatum((int16) v) :
				key->typlen == 4 ? Int32GetDatum((int32) v) : Int64GetDatum(v);
	}
}
