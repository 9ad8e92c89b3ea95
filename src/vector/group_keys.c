/*-------------------------------------------------------------------------
 *
 * group_keys.c
 *	  The ids TesseraAgg groups by: a batch's key columns as integers
 *	  (integer-like values as they are, strings interned to dense ids).
 *
 * NOTES
 *	  A dictionary-encoded string column is interned once per distinct value
 *	  per batch, rows mapping through their codes; other string columns look
 *	  up each address once per batch.  A full table of limited groups
 *	  (TesseraGroups.limit) interns nothing more: a value it has not met is
 *	  TAGG_ID_ABSENT.
 *
 * IDENTIFICATION
 *	  src/vector/group_keys.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/numeric.h"

#include "tessera/tessera.h"
#include "tessera/vector.h"
#include "groups_int.h"

/*
 * The dense id of a string key's value d, whose bytes are data (len of them,
 * key_string_hash hash), interned on first sight -- except by a grouped key
 * of a full table, which has no group of a value it has not met
 * (TAGG_ID_ABSENT).
 */
static int32
intern_bytes(TesseraGroups *gt, TAggKey *key, Datum d, const char *data, int len, uint32 hash)
{
	uint32		h;

	if (key->nstrs * 2 >= (int) key->nslots)
	{
		uint32		nslots = Max(key->nslots * 2, 256);
		uint64	   *old = key->slots;

		key->slots = TesseraAllocLarge(gt->cxt, sizeof(uint64) * nslots, 0);
		memset(key->slots, 0xff, sizeof(uint64) * nslots);
		for (uint32 i = 0; i < key->nslots; i++)
		{
			if (old[i] == ~UINT64CONST(0))
				continue;
			h = (uint32) (old[i] >> 32) & (nslots - 1);
			while (key->slots[h] != ~UINT64CONST(0))
				h = (h + 1) & (nslots - 1);
			key->slots[h] = old[i];
		}
		if (old != NULL)
			pfree(old);
		key->nslots = nslots;
	}
	/*
	 * Each slot keeps its value's hash beside its id: a probe compares the
	 * bytes of a value only where the hashes are equal (the values are
	 * elsewhere in memory, a cache miss each: 20% of ClickBench's q13)
	 */
	h = hash & (key->nslots - 1);
	for (;;)
	{
		uint64		slot = key->slots[h];
		int32		id;
		const char *od;
		int			ol;

		if (slot == ~UINT64CONST(0))
			break;
		id = (int32) (uint32) slot;
		if ((uint32) (slot >> 32) == hash)
		{
			TesseraGroupKeyBytes(key, key->strs[id], &od, &ol);
			if (ol == len && memcmp(od, data, len) == 0)
				return id;
		}
		h = (h + 1) & (key->nslots - 1);
	}
	if (groups_full(gt) && key - gt->gkeys < gt->nhash)
		return TAGG_ID_ABSENT;
	/* new: keep a copy of the first value seen, as PostgreSQL's Agg does */
	if (key->nstrs == key->strcap)
	{
		key->strcap = Max(key->strcap * 2, 64);
		key->strs = key->strs == NULL ?
			MemoryContextAlloc(gt->cxt, sizeof(Datum) * key->strcap) :
			repalloc(key->strs, sizeof(Datum) * key->strcap);
	}
	{
		MemoryContext old = MemoryContextSwitchTo(gt->cxt);

		key->strs[key->nstrs] = PointerGetDatum(PG_DETOAST_DATUM_COPY(d));
		MemoryContextSwitchTo(old);
	}
	key->slots[h] = (uint64) hash << 32 | (uint32) key->nstrs;
	return key->nstrs++;
}

/* The dense id of a string key's value, interned on first sight. */
static int32
intern_string(TesseraGroups *gt, TAggKey *key, Datum d)
{
	const char *data;
	int			len;

	TesseraGroupKeyBytes(key, d, &data, &len);
	return intern_bytes(gt, key, d, data, len, key_string_hash(data, len));
}

/*
 * The id of a TAGG_KEY_NUMINT key's value: the integer, or the ends of the
 * int64 range for the infinities (extract's integer fields reach neither).
 */
int64
TesseraGroupNumIntId(Datum d)
{
	Numeric		num = DatumGetNumeric(d);
	int128		v;
	int			scale;

	if (TesseraNumericScaled(d, &v, &scale) && scale == 0 &&
		v > PG_INT64_MIN && v < PG_INT64_MAX)
		return (int64) v;
	if (numeric_is_inf(num))
		return DatumGetBool(DirectFunctionCall2(numeric_gt, d,
												NumericGetDatum(int64_to_numeric(0)))) ?
			PG_INT64_MAX : PG_INT64_MIN;
	elog(ERROR, "TesseraAgg: group key value is not an integer");
	return 0;					/* keep compiler quiet */
}

/* A TAGG_KEY_NUMINT key's value from its id. */
Datum
TesseraGroupNumIntDatum(int64 v)
{
	if (v == PG_INT64_MAX || v == PG_INT64_MIN)
		return DirectFunctionCall3(numeric_in, CStringGetDatum(v > 0 ? "Infinity" : "-Infinity"),
								   ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
	return NumericGetDatum(int64_to_numeric(v));
}

/* The id of one value of key column key. */
int64
TesseraGroupKeyId(TesseraGroups *gt, TAggKey *key, Datum d)
{
	if (key->kind == TAGG_KEY_INT)
		return TesseraIntDatum(d, key->typlen);
	if (key->kind == TAGG_KEY_NUMINT)
		return TesseraGroupNumIntId(d);
	return intern_string(gt, key, d);
}

/*
 * The id of string key key's value v (not NULL).  Dictionary chunks repeat
 * the same addresses: they are looked up once.  Other chunks have an
 * address per row; a value met earlier in the batch is compared with that
 * row's bytes, still in the cache, instead of the interned copy, which is
 * not (ClickBench's SearchPhrase).  The caller clears both caches at the
 * start of each batch.
 */
static inline int32
string_id_hashed(TesseraGroups *gt, TAggKey *key, Datum v, const char *data, int len,
				 uint32 hash)
{
	uint32		h = hash & (TAGG_VALUE_CACHE - 1);

	if (key->vc_data[h] == NULL || key->vc_hash[h] != hash || key->vc_len[h] != len ||
		memcmp(key->vc_data[h], data, len) != 0)
	{
		key->vc_data[h] = data;
		key->vc_hash[h] = hash;
		key->vc_len[h] = len;
		key->vc_id[h] = intern_bytes(gt, key, v, data, len, hash);
	}
	return key->vc_id[h];
}

static inline int32
string_id(TesseraGroups *gt, TAggKey *key, Datum v)
{
	Pointer		ptr = DatumGetPointer(v);
	uint32		c = (uint32) (((uint64) (uintptr_t) ptr * UINT64CONST(0x9E3779B97F4A7C15)) >> 56);

	if (key->ptr_cache[c] != ptr)
	{
		const char *data;
		int			len;

		TesseraGroupKeyBytes(key, v, &data, &len);
		key->ptr_ids[c] = string_id_hashed(gt, key, v, data, len, key_string_hash(data, len));
		key->ptr_cache[c] = ptr;
	}
	return key->ptr_ids[c];
}

/*
 * The ids of a string column: a row whose address an earlier row of the
 * batch had (a dictionary's entries, a star join's dimension values) takes
 * that row's id; the others (a plain chunk: an address per row) are all
 * hashed first and then looked up in order with the lookups of later rows
 * fetched ahead in three steps -- the intern slot of the row STR_AHEAD * 3
 * on, the value the slot of the row STR_AHEAD * 2 on names, that value's
 * bytes for the row STR_AHEAD on -- since past the CPU caches each is a
 * miss that would otherwise wait in turn on the one before it (ClickBench's
 * SearchPhrase, 100,000 distinct, 1.3M rows: the interned value's first
 * byte was most of the lookup; 351 -> 283-304 ms serially at 16 rows
 * apart, 325 at 4, 303 at 32).
 */
#define STR_AHEAD 16

static void
key_ids_strings(TesseraGroups *gt, TAggKey *key, const Datum *values, const bool *isnull,
				const bool *ok, int n)
{
	uint32	   *hv;
	int32	   *src;

	if (key->hbuf_cap < n)
	{
		key->hbuf_cap = Max(n, 1024);
		key->hbuf = MemoryContextAlloc(gt->cxt, sizeof(uint32) * key->hbuf_cap);
		key->sbuf = MemoryContextAlloc(gt->cxt, sizeof(int32) * key->hbuf_cap);
	}
	hv = key->hbuf;
	src = key->sbuf;
	memset(key->ptr_cache, 0, sizeof(key->ptr_cache));
	/* src[i]: -1 looked up, -2 not counted, else the earlier row of the same address */
	for (int i = 0; i < n; i++)
	{
		Pointer		ptr = DatumGetPointer(values[i]);
		uint32		c = (uint32) (((uint64) (uintptr_t) ptr * UINT64CONST(0x9E3779B97F4A7C15)) >> 56);
		const char *data;
		int			len;

		hv[i] = 0;
		if (isnull[i] || (ok && !ok[i]))
		{
			src[i] = -2;
			continue;
		}
		if (key->ptr_cache[c] == ptr)
		{
			src[i] = key->ptr_ids[c];
			continue;
		}
		key->ptr_cache[c] = ptr;
		key->ptr_ids[c] = i;
		src[i] = -1;
		TesseraGroupKeyBytes(key, values[i], &data, &len);
		hv[i] = key_string_hash(data, len);
	}
	for (int i = 0; i < n; i++)
	{
		const char *data;
		int			len;

		if (src[i] != -1)
		{
			key->ids[i] = src[i] >= 0 ? key->ids[src[i]] : 0;
			continue;
		}
		if (key->nslots > 0)
		{
			uint32		mask = key->nslots - 1;
			uint64		slot;

			if (i + STR_AHEAD * 3 < n)
				__builtin_prefetch(&key->slots[hv[i + STR_AHEAD * 3] & mask]);
			if (i + STR_AHEAD * 2 < n)
			{
				slot = key->slots[hv[i + STR_AHEAD * 2] & mask];
				if (slot != ~UINT64CONST(0))
					__builtin_prefetch(&key->strs[(uint32) slot]);
			}
			if (i + STR_AHEAD < n)
			{
				slot = key->slots[hv[i + STR_AHEAD] & mask];
				if (slot != ~UINT64CONST(0) && (uint32) (slot >> 32) == hv[i + STR_AHEAD])
					__builtin_prefetch(DatumGetPointer(key->strs[(uint32) slot]));
			}
		}
		TesseraGroupKeyBytes(key, values[i], &data, &len);
		key->ids[i] = string_id_hashed(gt, key, values[i], data, len, hv[i]);
	}
}

/* Each row's id for key column j of the batch: values or string ids. */
void
TesseraGroupKeyIds(TesseraGroups *gt, TAggKey *key, TesseraBatch *b, const bool *ok, int n)
{
	Datum	   *values;
	bool	   *isnull;

	if (key->attidx >= TAGG_COMPUTED_ATTIDX)
	{
		/* an expression the node computed for this batch */
		values = key->cvalues;
		isnull = key->cnulls;
	}
	else if (key->kind == TAGG_KEY_TEXT || key->kind == TAGG_KEY_BPCHAR)
	{
		int64	   *codes;
		Datum	   *entries;
		int			ndict;

		if (TesseraBatchDict(b, key->attidx, &codes, &entries, &ndict))
		{
			/*
			 * A dictionary chunk: each distinct value is interned once, on
			 * the first row that counts, and rows map through their codes.
			 */
			int32	   *map;
			bool	   *nulls;

			if (key->map_cap < ndict)
			{
				key->map_cap = Max(ndict, 256);
				key->dict_map = MemoryContextAlloc(gt->cxt, sizeof(int32) * key->map_cap);
			}
			if (key->nulls_cap < n)
			{
				key->nulls_cap = Max(n, 1024);
				key->own_nulls = MemoryContextAlloc(gt->cxt, key->nulls_cap);
			}
			map = key->dict_map;
			nulls = key->own_nulls;
			memset(map, 0xff, sizeof(int32) * ndict);
			for (int i = 0; i < n; i++)
			{
				int64		c = codes[i];

				nulls[i] = c < 0;
				if (c < 0 || (ok && !ok[i]))
				{
					key->ids[i] = 0;
					continue;
				}
				if (map[c] == -1)
					map[c] = intern_string(gt, key, entries[c]);
				key->ids[i] = map[c];
			}
			key->nulls = nulls;
			return;
		}
	}
	if (key->attidx < TAGG_COMPUTED_ATTIDX)
		TesseraBatchColumn(b, key->attidx, &values, &isnull);
	key->nulls = isnull;
	if (key->kind == TAGG_KEY_NUMINT)
	{
		/* (a computed key: rows that do not count have no value) */
		if (key->cints != NULL)
			for (int i = 0; i < n; i++)
				key->ids[i] = isnull[i] || (ok && !ok[i]) ? 0 : key->cints[i];
		else
			for (int i = 0; i < n; i++)
				key->ids[i] = isnull[i] || (ok && !ok[i]) ? 0 : TesseraGroupNumIntId(values[i]);
		return;
	}
	if (key->kind == TAGG_KEY_INT)
	{
		int64	   *ids = key->ids;

		/* one loop per width, so that each vectorizes */
		if (memchr(isnull, true, n) == NULL)
		{
			/* no NULLs (the usual case): no test per row */
			if (key->typlen == 1)
				for (int i = 0; i < n; i++)
					ids[i] = (int64) DatumGetBool(values[i]);
			else if (key->typlen == 2)
				for (int i = 0; i < n; i++)
					ids[i] = (int64) DatumGetInt16(values[i]);
			else if (key->typlen == 4)
				for (int i = 0; i < n; i++)
					ids[i] = (int64) DatumGetInt32(values[i]);
			else
				memcpy(ids, values, sizeof(int64) * n);
		}
		else if (key->typlen == 1)
			for (int i = 0; i < n; i++)
				ids[i] = isnull[i] ? 0 : (int64) DatumGetBool(values[i]);
		else if (key->typlen == 2)
			for (int i = 0; i < n; i++)
				ids[i] = isnull[i] ? 0 : (int64) DatumGetInt16(values[i]);
		else if (key->typlen == 4)
			for (int i = 0; i < n; i++)
				ids[i] = isnull[i] ? 0 : (int64) DatumGetInt32(values[i]);
		else
			for (int i = 0; i < n; i++)
				ids[i] = isnull[i] ? 0 : DatumGetInt64(values[i]);
		return;
	}
	/* strings */
	memset(key->vc_data, 0, sizeof(key->vc_data));
	key_ids_strings(gt, key, values, isnull, ok, n);
}

/*
 * key_ids of the rows rows[0..m) only, packed: ids[j] and nulls[j] are row
 * rows[j]'s (a sparse batch: a star join or a filter kept few rows).
 */
void
TesseraGroupKeyIdsListed(TesseraGroups *gt, TAggKey *key, TesseraBatch *b, const int *rows, int m)
{
	int64	   *ids = key->ids;
	bool	   *nulls;
	Datum	   *values;
	bool	   *isnull;

	if (key->nulls_cap < m)
	{
		key->nulls_cap = Max(m, 1024);
		key->own_nulls = MemoryContextAlloc(gt->cxt, key->nulls_cap);
	}
	nulls = key->own_nulls;
	key->nulls = nulls;
	if (key->attidx >= TAGG_COMPUTED_ATTIDX)
	{
		values = key->cvalues;
		isnull = key->cnulls;
	}
	else
	{
		int64	   *codes;
		Datum	   *entries;
		int			ndict;

		if ((key->kind == TAGG_KEY_TEXT || key->kind == TAGG_KEY_BPCHAR) &&
			TesseraBatchDict(b, key->attidx, &codes, &entries, &ndict))
		{
			/* each entry interned once, on the first row that has it */
			if (key->map_cap < ndict)
			{
				key->map_cap = Max(ndict, 256);
				key->dict_map = MemoryContextAlloc(gt->cxt, sizeof(int32) * key->map_cap);
			}
			memset(key->dict_map, 0xff, sizeof(int32) * ndict);
			for (int j = 0; j < m; j++)
			{
				int64		c = codes[rows[j]];

				nulls[j] = c < 0;
				if (c < 0)
					ids[j] = 0;
				else
				{
					if (key->dict_map[c] == -1)
						key->dict_map[c] = intern_string(gt, key, entries[c]);
					ids[j] = key->dict_map[c];
				}
			}
			return;
		}
		/* (few rows: just theirs, not the column decoded) */
		TesseraBatchColumnRows(b, key->attidx, rows, m, Max(b->nrows, b->chunk_rows), &values,
							   &isnull);
	}
	if (key->kind != TAGG_KEY_INT && key->kind != TAGG_KEY_NUMINT)
	{
		memset(key->ptr_cache, 0, sizeof(key->ptr_cache));
		memset(key->vc_data, 0, sizeof(key->vc_data));
	}
	for (int j = 0; j < m; j++)
	{
		int			i = rows[j];

		nulls[j] = isnull[i];
		if (isnull[i])
			ids[j] = 0;
		else if (key->kind == TAGG_KEY_INT)
			ids[j] = TesseraIntDatum(values[i], key->typlen);
		else if (key->kind == TAGG_KEY_NUMINT)
			ids[j] = key->cints != NULL ? key->cints[i] : TesseraGroupNumIntId(values[i]);
		else
			ids[j] = string_id(gt, key, values[i]);
	}
}
