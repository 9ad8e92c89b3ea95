/*-------------------------------------------------------------------------
 *
 * slices.c
 *	  Hashes of group keys' values, which stay the same whichever process
 *	  or table computed them: the slice of a sliced parallel grouping a row
 *	  belongs to, and the partition a spilled group goes to.
 *
 * NOTES
 *	  Never a hash of ids: a string's id is its order of first sight in
 *	  one table.  Split out of groups.c (2026-11-30) when lazily carried
 *	  keys took it past the file limit.
 *
 * IDENTIFICATION
 *	  src/vector/slices.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "utils/builtins.h"

#include "tessera/tessera.h"
#include "tessera/vector.h"

/* the header-only build of Debian's libxxhash: nothing to link */
#define XXH_INLINE_ALL
#include <xxhash.h>

/* murmur3's 64-bit finalizer (PostgreSQL 16's murmurhash64; 15 has none) */
static inline uint64
mix64(uint64 x)
{
	x ^= x >> 33;
	x *= UINT64CONST(0xff51afd7ed558ccd);
	x ^= x >> 33;
	x *= UINT64CONST(0xc4ceb9fe1a85ec53);
	x ^= x >> 33;
	return x;
}

/*
 * One key's part of a value hash: its integer id v (integer kinds), or
 * the bytes of its value d (strings); NULL a constant.
 */
static inline uint64
key_value_hash(TAggKey *key, bool isnull, Datum d, int64 v)
{
	uint64		x;

	if (isnull)
		x = UINT64CONST(0x5bd1e995);
	else if (key->kind == TAGG_KEY_INT || key->kind == TAGG_KEY_NUMINT)
		x = (uint64) v;
	else
	{
		const char *data;
		int			len;

		TesseraGroupKeyBytes(key, d, &data, &len);
		x = hash_bytes_extended((const unsigned char *) data, len, 0);
	}
	return mix64(x);
}

/*
 * A hash of group g's grouped keys by their values, not their ids (a
 * string's id depends on the order the table met the strings in): the
 * same in every table that holds these keys (a spill's partitions).
 */
uint64
TesseraGroupsValueHash(TesseraGroups *gt, int g)
{
	uint64		h = 0;

	for (int j = 0; j < gt->nhash; j++)
	{
		TAggKey    *key = &gt->gkeys[j];
		int64		v = gt->keys[(Size) g * gt->nkeys + j];
		bool		isnull = gt->keynull[(Size) g * gt->nkeys + j];

		h = hash_combine64(h, key_value_hash(key, isnull, isnull ? (Datum) 0 :
											 key->kind == TAGG_KEY_INT ||
											 key->kind == TAGG_KEY_NUMINT ?
											 (Datum) v : key->strs[v], v));
	}
	return h;
}

/*
 * TesseraGroupsValueHash of the group these key values (a spilled row's
 * first keys) make, without looking it up or interning anything.
 */
uint64
TesseraGroupsDatumsValueHash(TesseraGroups *gt, const Datum *values, const bool *isnull,
							 bool ids)
{
	uint64		h = 0;

	for (int j = 0; j < gt->nhash; j++)
	{
		TAggKey    *key = &gt->gkeys[j];
		int64		v = 0;

		if (!isnull[j] && key->kind == TAGG_KEY_INT)
			v = TesseraIntDatum(values[j], key->typlen);
		else if (!isnull[j] && key->kind == TAGG_KEY_NUMINT)
			v = ids ? DatumGetInt64(values[j]) : TesseraGroupNumIntId(values[j]);
		h = hash_combine64(h, key_value_hash(key, isnull[j], values[j], v));
	}
	return h;
}

/*
 * A key value's part of a row's slice hash: its integer (integer kinds) or
 * a hash of its bytes, mixed (murmur3's finalizer, from another start than
 * key_value_hash's, so that a slice's groups still spread over a spill's
 * partitions).
 */
static inline uint64
slice_mix(uint64 x)
{
	return mix64(x ^ UINT64CONST(0x2545f4914f6cdd1d));
}

/* ... of a string's bytes */
static inline uint64
slice_string(TAggKey *key, Datum d)
{
	const char *data;
	int			len;

	TesseraGroupKeyBytes(key, d, &data, &len);
	return slice_mix(XXH3_64bits(data, len));
}

/*
 * TesseraGroupsValueHashes
 *		A hash of the first nk keys of each row mask keeps: the rows in
 *		gt->srows, their hashes in gt->shash; how many.  The hash is of the
 *		keys' values, never of ids (a string's id is this process's, and
 *		the batch's), so a group's rows hash alike in every batch and every
 *		process.  Computed keys must already point at the batch's values.
 */
int
TesseraGroupsValueHashes(TesseraGroups *gt, int nk, TesseraBatch *b, const bool *mask, int n)
{
	const uint64 null_hash = slice_mix(UINT64CONST(0x5bd1e995));
	uint64	   *h;
	int32	   *rows;
	int			m = 0;

	if (gt->shash_cap < n)
	{
		gt->shash_cap = Max(n, 1024);
		gt->shash = MemoryContextAlloc(gt->cxt, sizeof(uint64) * gt->shash_cap);
		gt->srows = MemoryContextAlloc(gt->cxt, sizeof(int32) * gt->shash_cap);
	}
	h = gt->shash;
	rows = gt->srows;
	/* the rows counted, without a branch per row (ClickBench's filters keep 13%) */
	for (int i = 0; i < n; i++)
	{
		rows[m] = i;
		m += mask[i];
	}
	memset(h, 0, sizeof(uint64) * m);
	Assert(nk > 0 && nk <= gt->nhash);
	for (int j = 0; j < nk; j++)
	{
		TAggKey    *key = &gt->gkeys[j];
		Datum	   *values;
		bool	   *isnull;
		int64	   *codes;
		Datum	   *entries;
		int			ndict;

		if (key->attidx < TAGG_COMPUTED_ATTIDX &&
			(key->kind == TAGG_KEY_TEXT || key->kind == TAGG_KEY_BPCHAR) &&
			TesseraBatchDict(b, key->attidx, &codes, &entries, &ndict))
		{
			/* a dictionary chunk: each entry hashed once */
			if (gt->sdict_cap < ndict)
			{
				gt->sdict_cap = Max(ndict, 256);
				gt->sdict = MemoryContextAlloc(gt->cxt, sizeof(uint64) * gt->sdict_cap);
			}
			for (int c = 0; c < ndict; c++)
				gt->sdict[c] = slice_string(key, entries[c]);
			for (int r = 0; r < m; r++)
			{
				int64		c = codes[rows[r]];

				h[r] = hash_combine64(h[r], c < 0 ? null_hash : gt->sdict[c]);
			}
			continue;
		}
		if (key->attidx >= TAGG_COMPUTED_ATTIDX)
		{
			values = key->cvalues;
			isnull = key->cnulls;
		}
		else
			TesseraBatchColumn(b, key->attidx, &values, &isnull);
		for (int r = 0; r < m; r++)
		{
			int			i = rows[r];
			uint64		x;

			if (isnull[i])
				x = null_hash;
			else if (key->kind == TAGG_KEY_INT)
				x = slice_mix((uint64) TesseraIntDatum(values[i], key->typlen));
			else if (key->kind == TAGG_KEY_NUMINT)
				x = slice_mix((uint64) (key->cints != NULL ? key->cints[i] :
										TesseraGroupNumIntId(values[i])));
			else
				x = slice_string(key, values[i]);
			h[r] = hash_combine64(h[r], x);
		}
	}
	return m;
}

/*
 * TesseraGroupsSlice
 *		Sliced aggregation (executor/agg_node.c): clear in mask the rows of
 *		the batch whose first nk keys (the GROUP BY columns: not
 *		count(DISTINCT)'s, whose groups roll up across its values) do not
 *		hash into slice `slice` of nslices: every process puts a group in
 *		the same slice, and each group is finished by exactly one of them.
 *		The rows left and their hashes stay in gt->srows and gt->shash
 *		(gt->nshash of them).
 */
void
TesseraGroupsSlice(TesseraGroups *gt, int nk, TesseraBatch *b, bool *mask, int n, int slice,
				   int nslices)
{
	int			m = TesseraGroupsValueHashes(gt, nk, b, mask, n);
	int			kept = 0;

	for (int r = 0; r < m; r++)
	{
		bool		in = (int) (((gt->shash[r] >> 32) * (uint64) nslices) >> 32) == slice;

		mask[gt->srows[r]] = in;
		gt->srows[kept] = gt->srows[r];
		gt->shash[kept] = gt->shash[r];
		kept += in;
	}
	gt->nshash = kept;
}
