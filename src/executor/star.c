/*-------------------------------------------------------------------------
 *
 * star.c
 *	  Star joins inside TesseraAgg: the dimensions' rows hashed on their
 *	  unique keys, probed with the fact table's key column vectors, their
 *	  columns gathered beside the batch as extra columns of the row.
 *
 * NOTES
 *	  The planner (planner/star_path.c) hands a TesseraAgg over a join of
 *	  one tessera table F with dimension relations D1..Dn, each joined to F
 *	  alone by F.fk = D.key with D.key unique in D, as a plan over F whose
 *	  custom_plans are the dimensions' own plans (their quals included).
 *	  Here every dimension's rows are read once into a table keyed on the
 *	  join key (a direct array for a dense key range, else a hash table),
 *	  and each batch of F is joined by looking its key column up: a row
 *	  without a match in any dimension is no longer counted (inner join;
 *	  a NULL key matches nothing), and for the others the dimension
 *	  columns the aggregation reads are gathered into arrays that the
 *	  computed expressions read as the columns after F's own
 *	  (TesseraComputed's extra columns).  Since each key is unique, a fact
 *	  row matches at most one row of each dimension: the join never
 *	  multiplies rows, so every aggregate counts exactly the rows the
 *	  join would produce.
 *
 *	  Join keys are integers (int2, int4, int8, compared as values, as
 *	  the integer btree family's cross-type equality does) or dates, or
 *	  pairs of 32-bit ones (int2, int4, date) packed into one 64-bit key.
 *	  A dimension's plan may be a join of several relations (a snowflake):
 *	  the planner made sure its key is still unique in the join's rows.
 *
 *	  A semi or anti join (EXISTS, NOT EXISTS) of a relation is a
 *	  dimension whose rows are just a set of keys, duplicates and all: a
 *	  row is kept when its key is in the set (semi) or is not (anti; a
 *	  NULL key is never in it, so NOT EXISTS keeps that row, as
 *	  PostgreSQL's anti join does).
 *
 *	  An inner join on a key that is not unique, none of whose columns is
 *	  read (a counted dimension, STAR_COUNT), is a table of the number of
 *	  rows of each key: a row of the table joins that many rows, the
 *	  product over such dimensions (weight), and TesseraAgg folds it that
 *	  many times (agg_node.c).
 *
 * IDENTIFICATION
 *	  src/executor/star.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "common/int.h"
#include "common/hashfn.h"
#include "executor/executor.h"
#include "executor/instrument.h"
#include "miscadmin.h"
#include "utils/datum.h"
#include "utils/date.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "tessera/plan.h"
#include "tessera/tableam.h"
#include "nodes.h"

#include "star_table.h"

/*
 * TesseraStarInit
 *		Set up the star join described by desc (TAGG_PRIVATE_STAR) over the
 *		plans children; returns the row type the computed expressions read:
 *		the relation's columns, then the gathered dimension columns.
 */
TupleDesc
TesseraStarInit(TesseraStar *st, List *desc, List *children, TupleDesc reldesc)
{
	List	   *dims = linitial(desc);
	List	   *ext = lsecond(desc);
	TupleDesc	td;
	ListCell   *lc;

	memset(st, 0, sizeof(TesseraStar));
	st->filters = lthird(desc);
	if (list_length(desc) > 3 && lfourth(desc) != NIL)
	{
		List	   *keys = linitial(lfourth(desc));
		List	   *aggs = lsecond(lfourth(desc));

		st->left = true;
		st->nleft_keys = list_length(keys);
		st->left_keys = palloc(sizeof(int) * Max(list_length(keys), 1));
		st->left_aggs = palloc(sizeof(int) * Max(list_length(aggs), 1));
		foreach(lc, keys)
			st->left_keys[foreach_current_index(lc)] = lfirst_int(lc);
		foreach(lc, aggs)
			st->left_aggs[foreach_current_index(lc)] = lfirst_int(lc);
	}
	st->ndims = list_length(dims);
	st->dims = palloc0(sizeof(TesseraStarDim) * st->ndims);
	st->next = list_length(ext);
	st->natts = reldesc->natts;
	st->cxt = AllocSetContextCreate(CurrentMemoryContext, "TesseraAgg star join",
									ALLOCSET_DEFAULT_SIZES);
	foreach(lc, dims)
	{
		List	   *d = lfirst(lc);
		TesseraStarDim *dim = &st->dims[foreach_current_index(lc)];

		dim->child = list_nth(children, foreach_current_index(lc));
		dim->fact_att = desc_int(d, STAR_DIM_FACT_ATTIDX);
		dim->fact_type = (Oid) desc_int(d, STAR_DIM_FACT_TYPE);
		dim->key_pos = desc_int(d, STAR_DIM_KEY_POS);
		dim->key_type = (Oid) desc_int(d, STAR_DIM_KEY_TYPE);
		dim->kind = desc_int(d, STAR_DIM_KIND);
		st->counting |= dim->kind == STAR_COUNT;
		dim->fact_att2 = desc_int(d, STAR_DIM_FACT_ATTIDX2);
		dim->fact_type2 = (Oid) desc_int(d, STAR_DIM_FACT_TYPE2);
		dim->key_pos2 = desc_int(d, STAR_DIM_KEY_POS2);
		dim->key_type2 = (Oid) desc_int(d, STAR_DIM_KEY_TYPE2);
		dim->ne_fact_att = desc_int(d, STAR_DIM_NE_FACT_ATTIDX);
		dim->ne_fact_type = (Oid) desc_int(d, STAR_DIM_NE_FACT_TYPE);
		dim->ne_pos = desc_int(d, STAR_DIM_NE_POS);
		dim->ne_type = (Oid) desc_int(d, STAR_DIM_NE_TYPE);
		dim->cols = palloc(sizeof(int) * (st->next + 1));
		dim->ext = palloc(sizeof(int) * (st->next + 1));
		dim->collen = palloc(sizeof(int16) * (st->next + 1));
		dim->colbyval = palloc(sizeof(bool) * (st->next + 1));
	}

	/* the row the expressions read: the relation's, then the extra columns */
	td = CreateTemplateTupleDesc(reldesc->natts + st->next);
	for (int i = 0; i < reldesc->natts; i++)
		TupleDescCopyEntry(td, i + 1, reldesc, i + 1);
	foreach(lc, ext)
	{
		List	   *e = lfirst(lc);
		int			k = foreach_current_index(lc);
		TesseraStarDim *dim = &st->dims[desc_int(e, STAR_EXT_DIM)];

		dim->cols[dim->ncols] = desc_int(e, STAR_EXT_POS);
		get_typlenbyval((Oid) desc_int(e, STAR_EXT_TYPE), &dim->collen[dim->ncols],
						&dim->colbyval[dim->ncols]);
		dim->ext[dim->ncols++] = k;
		TupleDescInitEntry(td, reldesc->natts + k + 1, NULL, (Oid) desc_int(e, STAR_EXT_TYPE),
						   desc_int(e, STAR_EXT_TYPMOD), 0);
		TupleDescInitEntryCollation(td, reldesc->natts + k + 1,
									(Oid) desc_int(e, STAR_EXT_COLLATION));
	}
	return td;
}


/* A key of the table's column att for row i: from the decoded column, or read singly. */
static inline bool
star_fact_key1(TesseraBatch *b, int att, Oid type, Datum *keys, bool *keynull, int i, int64 *key)
{
	Datum		d;
	bool		isnull;

	if (keys != NULL)
	{
		if (keynull[i])
			return false;
		d = keys[i];
	}
	else
	{
		d = TesseraBatchValue(b, att, i, &isnull);
		if (isnull)
			return false;
	}
	*key = star_key(d, type);
	return true;
}

/* The key of row i (false: NULL), of one column or two (a composite key). */
static inline bool
star_fact_key(TesseraBatch *b, TesseraStarDim *dim, Datum *keys, bool *keynull,
			  Datum *keys2, bool *keynull2, int i, int64 *key)
{
	int64		k2;

	if (!star_fact_key1(b, dim->fact_att, dim->fact_type, keys, keynull, i, key))
		return false;
	if (dim->fact_att2 < 0)
		return true;
	if (!star_fact_key1(b, dim->fact_att2, dim->fact_type2, keys2, keynull2, i, &k2))
		return false;
	*key = star_key2(*key, k2);
	return true;
}

/*
 * One loop of star_probe_direct for a key type: the key's offset in the
 * direct table's range as an unsigned number (keys below the range wrap
 * past its end), its bit, its row.  Where most rows are still counted,
 * with no branch on the data (a key outside the range reads slot 0): SSB
 * q3.1, every row counted, 96 -> 87 ms serial; where few are (SSB q1.1's
 * 14% after its quals), the rows not counted are skipped instead (43 vs
 * 46 ms).
 */
/* row i's slot s (0 outside the range) and whether its bit is set, without a branch */
#define STAR_PROBE_HIT(GET) \
			uint64		slot = (uint64) (GET(keys[i])) - (uint64) min; \
			bool		inside = slot <= span; \
			uint64		s = inside ? slot : 0; \
			bool		hit = ok[i] & !keynull[i] & inside & \
				(bool) ((present[s >> 6] >> (s & 63)) & 1)

#define STAR_PROBE_LOOP(GET) \
	if (dense && direct == NULL) \
		/* (bits alone: the rows' matches are not read, or the hash lookup writes them) */ \
		for (int i = done; i < n; i++) \
		{ \
			STAR_PROBE_HIT(GET); \
			\
			ok[i] = ok[i] & (hit != anti); \
		} \
	else if (dense) \
		for (int i = done; i < n; i++) \
		{ \
			STAR_PROBE_HIT(GET); \
			int32		row = direct != NULL ? direct[s] : 0; \
			\
			match[i] = hit ? row : -1; \
			ok[i] = ok[i] & (hit != anti); \
		} \
	else \
		for (int i = done; i < n; i++) \
		{ \
			uint64		slot = (uint64) (GET(keys[i])) - (uint64) min; \
			bool		hit = ok[i] && !keynull[i] && slot <= span && \
				((present[slot >> 6] >> (slot & 63)) & 1) != 0; \
			\
			match[i] = !hit ? -1 : direct != NULL ? direct[slot] : 0; \
			ok[i] = ok[i] && hit != anti; \
		}

#define STAR_INT16(d)	((int64) DatumGetInt16(d))
#define STAR_INT32(d)	((int64) DatumGetInt32(d))
#define STAR_INT64(d)	DatumGetInt64(d)

/* tessera.enable_simd: AVX2 loops where the CPU has them */
bool		tessera_enable_simd = true;

/*
 * Does this CPU run star_probe_avx2.c's loop (and was it built with AVX2),
 * and may it (tessera.enable_simd)?
 */
static bool
star_have_avx2(void)
{
	static int	have = -1;

	if (have < 0)
	{
		have = 0;
#if defined(__x86_64__) && defined(__GNUC__)
		if (TesseraStarHaveAVX2 && __builtin_cpu_supports("avx2"))
			have = 1;
#endif
	}
	return have == 1 && tessera_enable_simd;
}

/*
 * The probe of a batch's decoded key column into a direct table (or a
 * hashed one's bits): a loop per key type, with no call or type test per
 * row (most of a star join's time is its probes: SSB q3.1).
 */
static void
star_probe_direct(TesseraStarDim *dim, Oid type, const Datum *keys, const bool *keynull, bool *ok,
				  int32 *match, bool need_match, int n, int m, bool anti)
{
	bool		dense = (Size) m * 2 >= (Size) n;
	uint64		span = (uint64) dim->max - (uint64) dim->min;
	int64		min = dim->min;
	const uint64 *present = dim->present != NULL ? dim->present : dim->bits;
	const int32 *direct = dim->direct;
	int			done = 0;		/* rows the AVX2 loop probed */

	switch (type)
	{
		case INT2OID:
			STAR_PROBE_LOOP(STAR_INT16);
			break;
		case INT4OID:
		case DATEOID:
			/* (all n rows, counted or not: still cheaper than a branch per row) */
			if (star_have_avx2() && min >= PG_INT32_MIN && dim->max <= PG_INT32_MAX)
			{
				done = n & ~7;
				TesseraStarProbe32AVX2(keys, keynull, ok, need_match ? match : NULL, done,
									   (int32) min, (uint32) span, present, direct, anti);
			}
			STAR_PROBE_LOOP(STAR_INT32);
			break;
		default:
			STAR_PROBE_LOOP(STAR_INT64);
			break;
	}
	/* a hashed dimension's bits say which keys it has: the hits' rows */
	if (dim->present == NULL && dim->kind != STAR_SEMI && dim->kind != STAR_ANTI)
		for (int i0 = 0; i0 < n; i0 += 8)
		{
			uint64		word = 0;

			/* (eight rows at a time: where the bits keep few, most words are 0) */
			memcpy(&word, ok + i0, Min(8, n - i0));
			if (word == 0)
				continue;
			for (int i = i0; i < Min(i0 + 8, n); i++)
				if (ok[i])
				{
					StarEntry  *e = starhash_lookup(dim->hash, star_key(keys[i], type));

					match[i] = e != NULL ? e->row : -1;
					ok[i] = e != NULL;
				}
		}
}

/*
 * The probe of a `<>` semi or anti join (star_build_ne): the key's row,
 * then the row's value against the table's.  Rows of ok (all n, or the m
 * listed) are updated in place; returns the rows still counted.
 */
static int
star_probe_ne(TesseraStar *st, TesseraStarDim *dim, TesseraBatch *b, Datum *keys, bool *keynull,
			  bool *ok, int32 *match, int n, int m, bool *listed)
{
	Datum	   *vals = NULL;
	bool	   *valnull = NULL;
	bool		anti = dim->kind == STAR_ANTI;
	int			kept = 0;

	if (keys != NULL)
		TesseraBatchColumn(b, dim->ne_fact_att, &vals, &valnull);
	/* every row, decoded columns, a direct table: one pass with no branch per row */
	if (!*listed && keys != NULL && dim->direct != NULL)
	{
		uint64		span = (uint64) dim->max - (uint64) dim->min;

		for (int i = 0; i < n; i++)
		{
			uint64		slot = (uint64) star_key(keys[i], dim->fact_type) - (uint64) dim->min;
			bool		inside = !keynull[i] && slot <= span;
			uint64		s = inside ? slot : 0;
			bool		hit = inside && ((dim->present[s >> 6] >> (s & 63)) & 1) != 0;
			int32		row = hit ? dim->direct[s] : 0;
			bool		unequal = dim->ne_multi[row] ||
				dim->ne_first[row] != star_key(vals[i], dim->ne_fact_type);

			hit = hit && !valnull[i] && unequal;
			match[i] = hit ? row : -1;
			ok[i] = ok[i] && hit != anti;
		}
		m = (int) TesseraSelCount(ok, n);
		if ((Size) m * 8 < (Size) n)
		{
			m = TesseraSelRows(ok, n, st->rows);
			*listed = true;
		}
		return m;
	}
	for (int j = 0; j < (*listed ? m : n); j++)
	{
		int			i = *listed ? st->rows[j] : j;
		int32		row = -1;
		int64		key;
		int64		val;
		bool		hit = false;

		if (ok[i] && star_fact_key(b, dim, keys, keynull, NULL, NULL, i, &key) &&
			(row = star_lookup(dim, key)) >= 0 &&
			star_fact_key1(b, dim->ne_fact_att, dim->ne_fact_type, vals, valnull, i, &val))
			hit = dim->ne_multi[row] || dim->ne_first[row] != val;
		match[i] = hit ? row : -1;
		ok[i] = ok[i] && hit != anti;
		if (*listed)
		{
			st->rows[kept] = i;
			kept += ok[i];
		}
	}
	if (*listed)
		return kept;
	m = (int) TesseraSelCount(ok, n);
	/* few rows left: visit only them from now on */
	if ((Size) m * 8 < (Size) n)
	{
		m = TesseraSelRows(ok, n, st->rows);
		*listed = true;
	}
	return m;
}

/*
 * The rows each row still counted joins: the product of the counted
 * dimensions' counts of its keys (0 for the rows not counted), and the
 * most of them.
 */
static void
star_weights(TesseraStar *st, const bool *ok, int n, int m, bool listed)
{
	int64	   *w = st->weight;
	int64		most = 0;

	memset(w, 0, sizeof(int64) * n);
	if (!listed)
		m = TesseraSelRows(ok, n, st->rows);
	for (int j = 0; j < m; j++)
	{
		int			i = st->rows[j];
		int64		p = 1;

		for (int d = 0; d < st->ndims; d++)
			if (st->dims[d].kind == STAR_COUNT &&
				unlikely(pg_mul_s64_overflow(p, st->match[(Size) d * st->cap + i], &p)))
				ereport(ERROR,
						(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
						 errmsg("a star join's row joins too many rows")));
		w[i] = p;
		most = Max(most, p);
	}
	st->max_weight = most;
}

/*
 * The dimension columns of the rows still counted (ok, or st->rows[0..m)
 * when listed) into the computed columns c reads; other rows read NULLs.
 */
static void
star_gather(TesseraStar *st, const bool *ok, int n, int m, bool listed, TesseraComputed *c)
{
	for (int d = 0; d < st->ndims; d++)
	{
		TesseraStarDim *dim = &st->dims[d];
		int32	   *match = st->match + (Size) d * st->cap;

		for (int k = 0; k < dim->ncols; k++)
		{
			Datum	   *src = dim->values[k];
			bool	   *srcnull = dim->nulls[k];
			Datum	   *out = c->ext_values[dim->ext[k]];
			bool	   *outnull = c->ext_nulls[dim->ext[k]];
			char	   *vbase = dim->vbase != NULL ? dim->vbase[k] : NULL;

			if (vbase != NULL)
			{
				/* shared by-reference values: offsets made pointers here */
				memset(outnull, true, n);
				for (int j = 0; j < ((listed || m == 0) ? m : n); j++)
				{
					int			i = (listed || m == 0) ? st->rows[j] : j;

					if (!(listed || m == 0) && !ok[i])
						continue;
					outnull[i] = srcnull[match[i]];
					out[i] = outnull[i] ? (Datum) 0 :
						PointerGetDatum(vbase + (Size) src[match[i]]);
				}
				continue;
			}
			/* (rows not counted read as NULLs) */
			if (listed || m == 0)
			{
				memset(outnull, true, n);
				for (int j = 0; j < m; j++)
				{
					int			i = st->rows[j];

					out[i] = src[match[i]];
					outnull[i] = srcnull[match[i]];
				}
				continue;
			}
			for (int i = 0; i < n; i++)
			{
				if (ok[i])
				{
					out[i] = src[match[i]];
					outnull[i] = srcnull[match[i]];
				}
				else
				{
					out[i] = (Datum) 0;
					outnull[i] = true;
				}
			}
		}
	}
}

/*
 * TesseraStarProbe
 *		Join the batch's counted rows (ok, n of them; updated in place) with
 *		every dimension, and gather the dimension columns of the rows still
 *		counted into c's extra columns.  Once few rows are left, only they
 *		are visited (a list of them), and once very few, their keys are read
 *		singly instead of decoding the key columns.
 */
void
TesseraStarProbe(TesseraStar *st, TesseraBatch *b, bool *ok, int n, TesseraComputed *c,
				 MemoryContext bufcxt)
{
	int			m;				/* rows still counted */
	bool		listed = false; /* ...and they are st->rows[0..m) */

	if (!st->built)
		TesseraStarBuild(st);
	if (st->cap < n)
	{
		st->cap = Max(n, 1024);
		st->match = MemoryContextAlloc(bufcxt, sizeof(int32) * st->cap * Max(st->ndims, 1));
		st->rows = MemoryContextAlloc(bufcxt, sizeof(int) * st->cap);
		st->gkeys = MemoryContextAlloc(bufcxt, sizeof(Datum) * st->cap);
		st->gnulls = MemoryContextAlloc(bufcxt, st->cap);
		st->gkeys2 = MemoryContextAlloc(bufcxt, sizeof(Datum) * st->cap);
		st->gnulls2 = MemoryContextAlloc(bufcxt, st->cap);
		if (st->counting)
			st->weight = MemoryContextAlloc(bufcxt, sizeof(int64) * st->cap);
		for (int k = 0; k < st->next; k++)
		{
			c->ext_values[k] = MemoryContextAlloc(bufcxt, sizeof(Datum) * st->cap);
			c->ext_nulls[k] = MemoryContextAlloc(bufcxt, sizeof(bool) * st->cap);
		}
	}
	m = (int) TesseraSelCount(ok, n);
	st->rows_removed += m;

	for (int d = 0; d < st->ndims && m > 0; d++)
	{
		TesseraStarDim *dim = &st->dims[d];
		int32	   *match = st->match + (Size) d * st->cap;
		Datum	   *keys = NULL,
				   *keys2 = NULL;
		bool	   *keynull = NULL,
				   *keynull2 = NULL;
		int64		key;
		bool		anti = dim->kind == STAR_ANTI;	/* keeps rows without a match */

		if (!b->sparse && (Size) m * 32 >= (Size) n)
		{
			TesseraBatchColumn(b, dim->fact_att, &keys, &keynull);
			if (dim->fact_att2 >= 0)
				TesseraBatchColumn(b, dim->fact_att2, &keys2, &keynull2);
		}
		if (dim->ne_pos >= 0)
		{
			m = star_probe_ne(st, dim, b, keys, keynull, ok, match, n, m, &listed);
			continue;
		}
		if (!listed)
		{
			/*
			 * (a row's match is read for the dimension's columns, a counted
			 * dimension's counts and a left join's rows; where none is
			 * read, the AVX2 probe gathers no row numbers: SSB q1.1)
			 */
			if (keys != NULL && dim->fact_att2 < 0 && (dim->present != NULL || dim->bits != NULL))
				star_probe_direct(dim, dim->fact_type, keys, keynull, ok, match,
								  dim->ncols > 0 || dim->kind == STAR_COUNT || st->left,
								  n, m, anti);
			else
				for (int i = 0; i < n; i++)
				{
					int32		row = -1;

					if (ok[i] && star_fact_key(b, dim, keys, keynull, keys2, keynull2, i, &key))
						row = star_lookup(dim, key);
					match[i] = row;
					ok[i] = ok[i] && (row >= 0) != anti;
				}
			m = (int) TesseraSelCount(ok, n);
			/* few rows left: visit only them from now on */
			if ((Size) m * 8 < (Size) n)
			{
				m = TesseraSelRows(ok, n, st->rows);
				listed = true;
			}
		}
		else
		{
			int			kept = 0;

			/* the listed rows' keys read together, not one call each */
			if (keys == NULL)
			{
				TesseraBatchGather(b, dim->fact_att, st->rows, m, st->gkeys, st->gnulls);
				keys = st->gkeys;
				keynull = st->gnulls;
				if (dim->fact_att2 >= 0)
				{
					TesseraBatchGather(b, dim->fact_att2, st->rows, m, st->gkeys2, st->gnulls2);
					keys2 = st->gkeys2;
					keynull2 = st->gnulls2;
				}
			}
			for (int j = 0; j < m; j++)
			{
				int			i = st->rows[j];
				int32		row = -1;

				if (star_fact_key(b, dim, keys, keynull, keys2, keynull2, i, &key))
					row = star_lookup(dim, key);
				match[i] = row;
				ok[i] = (row >= 0) != anti;
				st->rows[kept] = i;
				kept += ok[i];
			}
			m = kept;
		}
	}
	st->rows_removed -= m;
	st->listed = listed ? st->rows : NULL;
	st->nlisted = m;
	if (st->counting)
		star_weights(st, ok, n, m, listed);

	/* a left join: the dimension rows some row of the table joined */
	if (st->left)
	{
		bool	   *matched = st->dims[0].matched;

		if (listed)
			for (int j = 0; j < m; j++)
				matched[st->match[st->rows[j]]] = true;
		else if (m > 0)
			for (int i = 0; i < n; i++)
				if (ok[i])
					matched[st->match[i]] = true;
	}

	star_gather(st, ok, n, m, listed, c);
	/* few rows joined: their other columns are read value by value */
	if ((Size) m * 32 < (Size) n)
		b->sparse = true;
}

/*
 * TesseraStarNextUnmatched
 *		A left join's next dimension row that no row of the table joined:
 *		its GROUP BY columns' values (valid until the dimensions are read
 *		again); false when there are no more.  Called once every row of the
 *		table has been probed.
 */
bool
TesseraStarNextUnmatched(TesseraStar *st, Datum *values, bool *isnull)
{
	TesseraStarDim *dim = &st->dims[0];

	if (!st->left)
		return false;
	/* (a table without a row: its dimension never read) */
	if (!st->built)
		TesseraStarBuild(st);
	while (st->left_next < dim->nrows)
	{
		int			r = st->left_next++;

		if (dim->matched[r])
			continue;
		for (int j = 0; j < st->nleft_keys; j++)
		{
			int			c = 0;

			while (c < dim->ncols && dim->ext[c] != st->left_keys[j])
				c++;
			if (c == dim->ncols)
				elog(ERROR, "TesseraAgg: a left join's group column is not gathered");
			values[j] = dim->values[c][r];
			isnull[j] = dim->nulls[c][r];
			if (dim->vbase != NULL && dim->vbase[c] != NULL && !isnull[j])
				values[j] = PointerGetDatum(dim->vbase[c] + (Size) values[j]);
		}
		return true;
	}
	return false;
}

/* Is value (of integer or date type `type`) a key of the dimension? */
bool
TesseraStarDimHasKey(TesseraStarDim *dim, Datum value, Oid type)
{
	return star_lookup(dim, star_key(value, type)) >= 0;
}

/*
 * Clear ok[i] of the batch's rows whose column att (of integer or date type
 * `type`) is NULL or not a key of the dimension.  The key range and its
 * bits (where the dimension keeps them) rule most rows out without a
 * lookup; a batch left with few rows is marked sparse, as a probe marks it.
 */
void
TesseraStarDimFilter(TesseraStarDim *dim, TesseraBatch *b, int att, Oid type, bool *ok, int n)
{
	Datum	   *keys = NULL;
	bool	   *keynull = NULL;
	const uint64 *bits = dim->present != NULL ? dim->present : dim->bits;
	uint64		span = (uint64) dim->max - (uint64) dim->min;
	int			m = 0;

	if (!b->sparse)
		TesseraBatchColumn(b, att, &keys, &keynull);
	if (keys != NULL && bits != NULL && dim->nrows > 0)
	{
		/* as a probe does (the rows' matches are not kept) */
		int32	   *match = palloc(sizeof(int32) * n);

		star_probe_direct(dim, type, keys, keynull, ok, match, false, n,
						  (int) TesseraSelCount(ok, n), false);
		pfree(match);
		if (TesseraSelCount(ok, n) * 32 < (uint64) n)
			b->sparse = true;
		return;
	}
	for (int i = 0; i < n; i++)
	{
		int64		key;
		uint64		slot;

		if (!ok[i])
			continue;
		if (!star_fact_key1(b, att, type, keys, keynull, i, &key) || dim->nrows == 0)
		{
			ok[i] = false;
			continue;
		}
		slot = (uint64) key - (uint64) dim->min;
		if (slot > span || (bits != NULL && !((bits[slot / 64] >> (slot % 64)) & 1)) ||
			(dim->present == NULL && star_lookup(dim, key) < 0))
			ok[i] = false;
		else
			m++;
	}
	if ((Size) m * 32 < (Size) n)
		b->sparse = true;
}

/*
 * TesseraStarRescan
 *		The scan of parent starts again: read the dimensions again if one of
 *		their plans reads a parameter that changed (parent's chgParam, which
 *		each is told of, as PostgreSQL's nodes tell their children), else
 *		keep their tables, as a hash join keeps its hash table.  A left
 *		join's, whose rows are marked as matched, and a parallel plan's
 *		shared ones are read again.  True if they will be.
 */
bool
TesseraStarRescan(TesseraStar *st, PlanState *parent)
{
	bool		again = !st->built || st->left || st->shared != NULL;

	for (int d = 0; d < st->ndims; d++)
	{
		PlanState  *child = st->dims[d].child;

		if (parent->chgParam != NULL)
			UpdateChangedParamSet(child, parent->chgParam);
		again |= child->chgParam != NULL;
	}
	if (!again)
		return false;
	/* (a plan whose parameters changed is rescanned by its next ExecProcNode) */
	for (int d = 0; d < st->ndims; d++)
		if (st->dims[d].child->chgParam == NULL)
			ExecReScan(st->dims[d].child);
	st->built = false;
	return true;
}
