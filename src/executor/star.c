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

#include "tessera/tableam.h"
#include "nodes.h"

/* A dimension's key and the row holding it. */
typedef struct StarEntry
{
	int64		key;
	int32		row;
	char		status;
} StarEntry;

#define SH_PREFIX starhash
#define SH_ELEMENT_TYPE StarEntry
#define SH_KEY_TYPE int64
#define SH_KEY key
#define SH_HASH_KEY(tb, key) ((uint32) (((uint64) (key) * UINT64CONST(0x9E3779B97F4A7C15)) >> 32))
#define SH_EQUAL(tb, a, b) ((a) == (b))
#define SH_SCOPE static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

/* a direct table when the keys span at most this many slots per row (and 1M) */
#define STAR_DIRECT_SPREAD	4
#define STAR_DIRECT_MIN		(1 << 20)
/* a hashed dimension's bits of its key range, up to 8 MB of them */
#define STAR_BITS_MAX		((uint64) 1 << 26)

/* An integer-like join key's value. */
static inline int64
star_key(Datum d, Oid type)
{
	switch (type)
	{
		case INT2OID:
			return DatumGetInt16(d);
		case INT4OID:
			return DatumGetInt32(d);
		case DATEOID:
			return DatumGetDateADT(d);
		default:
			return DatumGetInt64(d);
	}
}

/*
 * A composite key of two 32-bit halves (int2, int4 or date values) as one
 * 64-bit key: distinct pairs give distinct keys.
 */
static inline int64
star_key2(int64 a, int64 b)
{
	return (int64) (((uint64) (uint32) a << 32) | (uint64) (uint32) b);
}

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

/* The rows of a dimension being read: their keys, growing. */
typedef struct StarRows
{
	int64	   *keys;
	int64	   *vals;			/* a `<>` join's values, beside keys, */
	bool	   *multi;			/* ... and whether a run of its key had others */
	int			cap;
	int64		min;
	int64		max;
	char	   *arena;			/* where by-reference values are copied to */
	Size		free;
	int		   *idx;			/* a batch's rows selected, where few are */
	int			idx_cap;
} StarRows;

/* Room for more rows of a dimension (in the table's memory). */
static void
star_reserve(TesseraStar *st, TesseraStarDim *dim, StarRows *rows, int more)
{
	MemoryContext old;

	if ((Size) dim->nrows + more <= (Size) rows->cap)
		return;
	old = MemoryContextSwitchTo(st->cxt);
	while ((Size) dim->nrows + more > (Size) rows->cap)
		rows->cap *= 2;
	rows->keys = repalloc_huge(rows->keys, sizeof(int64) * rows->cap);
	for (int c = 0; c < dim->ncols; c++)
	{
		dim->values[c] = repalloc_huge(dim->values[c], sizeof(Datum) * rows->cap);
		dim->nulls[c] = repalloc_huge(dim->nulls[c], sizeof(bool) * rows->cap);
	}
	MemoryContextSwitchTo(old);
}

/*
 * A by-reference value of column c, copied into blocks of the table's
 * memory (not palloc'd one by one).
 */
static Datum
star_copy_value(TesseraStar *st, TesseraStarDim *dim, StarRows *rows, int c, Datum value)
{
	Size		size = datumGetSize(value, false, dim->collen[c]);
	Size		len = MAXALIGN(size);
	char	   *copy;

	if (len > rows->free)
	{
		Size		block = Max(len, (Size) 256 * 1024);

		rows->arena = MemoryContextAllocExtended(st->cxt, block, MCXT_ALLOC_HUGE);
		rows->free = block;
	}
	copy = rows->arena;
	memcpy(copy, DatumGetPointer(value), size);
	rows->arena += len;
	rows->free -= len;
	return PointerGetDatum(copy);
}

/* Add a row (its key, and its gathered columns' values) to a dimension. */
static void
star_append(TesseraStar *st, TesseraStarDim *dim, StarRows *rows, int64 key,
			const Datum *values, const bool *nulls)
{
	star_reserve(st, dim, rows, 1);
	rows->keys[dim->nrows] = key;
	for (int c = 0; c < dim->ncols; c++)
	{
		dim->nulls[c][dim->nrows] = nulls[c];
		if (nulls[c] || dim->colbyval[c])
			dim->values[c][dim->nrows] = nulls[c] ? (Datum) 0 : values[c];
		else
			dim->values[c][dim->nrows] = star_copy_value(st, dim, rows, c, values[c]);
	}
	rows->min = Min(rows->min, key);
	rows->max = Max(rows->max, key);
	dim->nrows++;
}

/*
 * The rows of a batch of a dimension's TesseraScan (its selection sel,
 * less deleted rows): the key of each row (kv, or the pair kv, kv2) and
 * its gathered columns (cv, cn), a column at a time.  A row with a NULL
 * key joins nothing and is not added.  Returns the rows given.
 */
static double
star_append_batch(TesseraStar *st, TesseraStarDim *dim, StarRows *rows, TesseraBatch *b,
				  const bool *sel, const Datum *kv, const bool *kn, const Datum *kv2,
				  const bool *kn2, Datum **cv, bool **cn)
{
	int			n = b->nrows;
	int			m = 0;
	int			nk = dim->nrows;
	double		given = 0;
	int64		mn = rows->min;
	int64		mx = rows->max;

	if (rows->idx_cap < n)
	{
		rows->idx_cap = Max(n, 1024);
		rows->idx = rows->idx != NULL ? repalloc(rows->idx, sizeof(int) * rows->idx_cap) :
			MemoryContextAlloc(st->cxt, sizeof(int) * rows->idx_cap);
	}
	for (int i = 0; i < n; i++)
	{
		bool		counted = (sel == NULL || sel[i]) && (b->deleted == NULL || !b->deleted[i]);

		given += counted;
		rows->idx[m] = i;
		m += counted && !kn[i] && (kn2 == NULL || !kn2[i]);
	}
	star_reserve(st, dim, rows, m);
	for (int j = 0; j < m; j++)
	{
		int			i = rows->idx[j];
		int64		key = star_key(kv[i], dim->key_type);

		if (kv2 != NULL)
			key = star_key2(key, star_key(kv2[i], dim->key_type2));
		rows->keys[nk + j] = key;
		mn = Min(mn, key);
		mx = Max(mx, key);
	}
	for (int c = 0; c < dim->ncols; c++)
	{
		Datum	   *out = dim->values[c] + nk;
		bool	   *outnull = dim->nulls[c] + nk;

		for (int j = 0; j < m; j++)
		{
			int			i = rows->idx[j];

			outnull[j] = cn[c][i];
			out[j] = cn[c][i] ? (Datum) 0 :
				dim->colbyval[c] ? cv[c][i] : star_copy_value(st, dim, rows, c, cv[c][i]);
		}
	}
	rows->min = mn;
	rows->max = mx;
	dim->nrows = nk + m;
	return given;
}

/*
 * A semi or anti join's keys of a batch (a set: a key equal to the one
 * before it is not added again; the table's rows often come in key order,
 * TPC-H's lineitem by l_orderkey), in one loop.  Returns the rows given.
 *
 * The loop has no branch that depends on the data: which rows a filter
 * kept, and whether a key repeats the one before, are random enough to
 * mispredict (TPC-H q04's 6M lineitem rows, 63% kept: this loop was 40% of
 * the query), so each row writes its key and advances the count by
 * whether it counts.  Inlined for each key type, so that the conversion is
 * not a switch per row.
 */
static pg_attribute_always_inline double
star_append_keys_typed(TesseraStarDim *dim, StarRows *rows, TesseraBatch *b, const bool *sel,
					   const Datum *kv, const bool *kn, Oid type, bool all)
{
	const bool *deleted = b->deleted;
	int			n = b->nrows;
	int			nk = dim->nrows;
	int64	   *keys;
	int64		last = nk > 0 ? rows->keys[nk - 1] : 0;
	int64		mn = rows->min;
	int64		mx = rows->max;
	bool		any = nk > 0;
	int			given = 0;
	const int  *idx = NULL;

	/* room for every row of the batch (and one written past the count) */
	if ((Size) nk + n + 1 > (Size) rows->cap)
	{
		while ((Size) nk + n + 1 > (Size) rows->cap)
			rows->cap *= 2;
		rows->keys = repalloc_huge(rows->keys, sizeof(int64) * rows->cap);
	}
	keys = rows->keys;
	/* few rows selected (a selective qual): visit only them */
	if (sel != NULL && TesseraSelCount(sel, n) * 8 < (uint64) n)
	{
		if (rows->idx_cap < n)
		{
			rows->idx_cap = Max(n, 1024);
			rows->idx = rows->idx != NULL ? repalloc(rows->idx, sizeof(int) * rows->idx_cap) :
				MemoryContextAlloc(GetMemoryChunkContext(rows->keys), sizeof(int) * rows->idx_cap);
		}
		idx = rows->idx;
		n = TesseraSelRows(sel, n, rows->idx);
	}
	for (int j = 0; j < n; j++)
	{
		int			i = idx != NULL ? idx[j] : j;
		int			counted = (sel == NULL || sel[i]) & (deleted == NULL || !deleted[i]);
		/* a NULL key joins nothing */
		int			keep = counted & !kn[i];
		int64		key = star_key(kv[i], type);
		int			add = keep & (all | !any | (key != last));

		/* (a row not kept leaves last, min and max as they were) */
		int64		mask = -(int64) keep;
		int64		kept = (key & mask) | (last & ~mask);

		given += counted;
		keys[nk] = key;
		nk += add;
		any |= keep;
		last = kept;
		kept = (key & mask) | (mn & ~mask);
		mn = Min(mn, kept);
		kept = (key & mask) | (mx & ~mask);
		mx = Max(mx, kept);
	}
	dim->nrows = nk;
	rows->min = mn;
	rows->max = mx;
	return given;
}

static double
star_append_keys(TesseraStarDim *dim, StarRows *rows, TesseraBatch *b, const bool *sel,
				 const Datum *kv, const bool *kn)
{
	/* (a counted join's keys, every one: repeats are counted) */
	bool		all = dim->kind == STAR_COUNT;

	switch (dim->key_type)
	{
		case INT2OID:
			return star_append_keys_typed(dim, rows, b, sel, kv, kn, INT2OID, all);
		case INT4OID:
			return star_append_keys_typed(dim, rows, b, sel, kv, kn, INT4OID, all);
		case DATEOID:
			return star_append_keys_typed(dim, rows, b, sel, kv, kn, DATEOID, all);
		default:
			return star_append_keys_typed(dim, rows, b, sel, kv, kn, INT8OID, all);
	}
}

/*
 * A `<>` semi or anti join's row: its key and its value (neither NULL: a
 * NULL never compares unequal, and such a row joins nothing).
 */
static inline void
star_append_pair(TesseraStarDim *dim, StarRows *rows, int64 key, int64 val)
{
	int			n = dim->nrows;

	/* a run of one key (lineitem's lines of an order) is one entry */
	if (n > 0 && rows->keys[n - 1] == key)
	{
		rows->multi[n - 1] |= rows->vals[n - 1] != val;
		return;
	}
	if (n == rows->cap)
	{
		rows->cap *= 2;
		rows->keys = repalloc_huge(rows->keys, sizeof(int64) * rows->cap);
		rows->vals = repalloc_huge(rows->vals, sizeof(int64) * rows->cap);
		rows->multi = repalloc_huge(rows->multi, sizeof(bool) * rows->cap);
	}
	rows->keys[n] = key;
	rows->vals[n] = val;
	rows->multi[n] = false;
	dim->nrows = n + 1;
	rows->min = Min(rows->min, key);
	rows->max = Max(rows->max, key);
}

/*
 * A batch's rows of a `<>` join (star_append_pair's runs of a key folded),
 * in a loop without data-dependent branches (as star_append_keys_typed):
 * each row writes its entry and advances the count by whether it starts
 * a run.  Returns the rows given.
 */
static int
star_append_pairs(TesseraStarDim *dim, StarRows *rows, TesseraBatch *b, const bool *sel,
				  const Datum *kv, const bool *kn, const Datum *vv, const bool *vn)
{
	const bool *deleted = b->deleted;
	int			n = b->nrows;
	int			nk = dim->nrows;
	int64		last = nk > 0 ? rows->keys[nk - 1] : 0;
	int64		first = nk > 0 ? rows->vals[nk - 1] : 0;
	int64		mn = rows->min;
	int64		mx = rows->max;
	int			given = 0;

	if ((Size) nk + n + 1 > (Size) rows->cap)
	{
		while ((Size) nk + n + 1 > (Size) rows->cap)
			rows->cap *= 2;
		rows->keys = repalloc_huge(rows->keys, sizeof(int64) * rows->cap);
		rows->vals = repalloc_huge(rows->vals, sizeof(int64) * rows->cap);
		rows->multi = repalloc_huge(rows->multi, sizeof(bool) * rows->cap);
	}
	for (int i = 0; i < n; i++)
	{
		int			counted = (sel == NULL || sel[i]) & (deleted == NULL || !deleted[i]);
		int			keep = counted & !kn[i] & !vn[i];
		int64		key = star_key(kv[i], dim->key_type);
		int64		val = star_key(vv[i], dim->ne_type);
		int			same = (nk > 0) & (key == last);
		int			start = keep & !same;
		int64		mask = -(int64) start;

		given += counted;
		/* a row of the last run: another value marks it */
		rows->multi[nk - (nk > 0)] |= keep & same & (val != first);
		rows->keys[nk] = key;
		rows->vals[nk] = val;
		rows->multi[nk] = rows->multi[nk] & !start;
		nk += start;
		last = (key & mask) | (last & ~mask);
		first = (val & mask) | (first & ~mask);
		mn = Min(mn, (key & mask) | (mn & ~mask));
		mx = Max(mx, (key & mask) | (mx & ~mask));
	}
	dim->nrows = nk;
	rows->min = mn;
	rows->max = mx;
	return given;
}

/*
 * Read a dimension's rows from a TesseraScan as column vectors (no row is
 * formed); false if its plan is not one that can be read so.
 */
static bool
star_read_vectors(TesseraStar *st, TesseraStarDim *dim, StarRows *rows)
{
	TesseraScanState *ts = TesseraScanVectorSource(dim->child);
	Instrumentation *instr = dim->child->instrument;
	TesseraBatch *b;
	const bool *sel;
	int			katt,
				katt2 = -1;
	int		   *catt;
	Datum	   *cv[TAGG_COMPUTED_MAX_COLUMNS];
	bool	   *cn[TAGG_COMPUTED_MAX_COLUMNS];
	double		emitted = 0;

	if (ts == NULL || dim->ncols > TAGG_COMPUTED_MAX_COLUMNS)
		return false;
	catt = MemoryContextAlloc(st->cxt, sizeof(int) * (dim->ncols + 1));
	katt = ts->proj_att[dim->key_pos];
	if (dim->key_pos2 >= 0)
		katt2 = ts->proj_att[dim->key_pos2];
	for (int c = 0; c < dim->ncols; c++)
		catt[c] = ts->proj_att[dim->cols[c]];
	/* (what EXPLAIN ANALYZE shows of the child: the rows it gave) */
	if (instr)
		InstrStartNode(instr);
	while (TesseraScanNodeBatch(ts, &b, &sel))
	{
		Datum	   *kv,
				   *kv2 = NULL;
		bool	   *kn,
				   *kn2 = NULL;

		CHECK_FOR_INTERRUPTS();
		TesseraBatchColumn(b, katt, &kv, &kn);
		if (dim->ne_pos >= 0)
		{
			Datum	   *vv;
			bool	   *vn;

			TesseraBatchColumn(b, ts->proj_att[dim->ne_pos], &vv, &vn);
			emitted += star_append_pairs(dim, rows, b, sel, kv, kn, vv, vn);
			continue;
		}
		if (katt2 >= 0)
			TesseraBatchColumn(b, katt2, &kv2, &kn2);
		else if (dim->kind == STAR_SEMI || dim->kind == STAR_ANTI || dim->kind == STAR_COUNT)
		{
			emitted += star_append_keys(dim, rows, b, sel, kv, kn);
			continue;
		}
		for (int c = 0; c < dim->ncols; c++)
			TesseraBatchColumn(b, catt[c], &cv[c], &cn[c]);
		emitted += star_append_batch(st, dim, rows, b, sel, kv, kn, kv2, kn2, cv, cn);
	}
	if (instr)
		InstrStopNode(instr, emitted);
	return true;
}

/*
 * The table of a `<>` semi or anti join: a row per distinct key (direct
 * for a dense range of keys, else hashed), holding one of the key's values
 * and whether it has another.  A row of the table with key k and value v
 * then has a match (some row of k whose value is not v) where k has two
 * values or its one value is not v.
 */
static void
star_build_ne(TesseraStar *st, TesseraStarDim *dim, StarRows *rows)
{
	MemoryContext old = MemoryContextSwitchTo(st->cxt);
	int			n = dim->nrows;
	int			nd = 0;
	/* (the range less one: the full range of int64 would wrap to 0 slots) */
	uint64		range = n > 0 ? (uint64) rows->max - (uint64) rows->min : 0;
	Size		span = 0;

	dim->direct = NULL;
	dim->present = NULL;
	dim->bits = NULL;
	dim->hash = NULL;
	dim->min = rows->min;
	dim->max = rows->max;
	dim->ne_first = palloc_extended(sizeof(int64) * Max(n, 1), MCXT_ALLOC_HUGE);
	dim->ne_multi = palloc_extended(Max(n, 1), MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	/*
	 * (direct where its 4 bytes per key of the range take less than a hash
	 * table's ~32 per key: q21's 1.5M orders among 6M keys, 36% of the
	 * query hashed)
	 */
	if (n > 0 && range < (uint64) Max((int64) n * 2 * STAR_DIRECT_SPREAD, STAR_DIRECT_MIN))
	{
		span = (Size) range + 1;
		dim->direct = palloc_extended(sizeof(int32) * span, MCXT_ALLOC_HUGE);
		memset(dim->direct, 0xff, sizeof(int32) * span);
		dim->present = palloc_extended(sizeof(uint64) * (span / 64 + 1),
									   MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
		for (int r = 0; r < n; r++)
		{
			Size		slot = (Size) ((uint64) rows->keys[r] - (uint64) rows->min);
			int32		row = dim->direct[slot];

			if (row < 0)
			{
				row = dim->direct[slot] = nd++;
				dim->present[slot / 64] |= UINT64CONST(1) << (slot % 64);
				dim->ne_first[row] = rows->vals[r];
				dim->ne_multi[row] = rows->multi[r];
			}
			else if (rows->multi[r] || dim->ne_first[row] != rows->vals[r])
				dim->ne_multi[row] = true;
		}
	}
	else if (n > 0)
	{
		if (range < STAR_BITS_MAX)
			dim->bits = palloc_extended(sizeof(uint64) * (range / 64 + 1),
										MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
		dim->hash = starhash_create(st->cxt, n, NULL);
		for (int r = 0; r < n; r++)
		{
			bool		found;
			StarEntry  *e = starhash_insert(dim->hash, rows->keys[r], &found);

			if (!found)
			{
				e->row = nd++;
				dim->ne_first[e->row] = rows->vals[r];
				dim->ne_multi[e->row] = rows->multi[r];
				if (dim->bits != NULL)
				{
					Size		slot = (Size) ((uint64) rows->keys[r] - (uint64) rows->min);

					dim->bits[slot / 64] |= UINT64CONST(1) << (slot % 64);
				}
			}
			else if (rows->multi[r] || dim->ne_first[e->row] != rows->vals[r])
				dim->ne_multi[e->row] = true;
		}
	}
	dim->nrows = nd;
	pfree(rows->keys);
	pfree(rows->vals);
	pfree(rows->multi);
	dim->matched = NULL;
	MemoryContextSwitchTo(old);
}

/*
 * A counted join's entry for one more row of its key (-1: none yet).  A
 * key of more rows than an int32 counts would not fit the rows in memory.
 */
static inline int32
star_count_one_more(int32 count)
{
	if (unlikely(count == PG_INT32_MAX))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("too many rows of one join key in a star join's dimension")));
	return count < 0 ? 1 : count + 1;
}

/*
 * The table of a dimension's keys (its nrows of them, in [min, max]):
 * direct for a dense range of keys, else hashed; keys is freed.
 */
static void
star_build_table(TesseraStar *st, TesseraStarDim *dim, int64 *keys, int64 min, int64 max)
{
	MemoryContext old = MemoryContextSwitchTo(st->cxt);

	dim->direct = NULL;
	dim->present = NULL;
	dim->bits = NULL;
	dim->hash = NULL;
	dim->min = min;
	dim->max = max;
	/* (a semi or anti join's set is bits alone: up to STAR_BITS_MAX of them) */
	if (dim->nrows > 0 && ((uint64) max - (uint64) min <
						   (uint64) Max((int64) dim->nrows * STAR_DIRECT_SPREAD, STAR_DIRECT_MIN) ||
						   ((dim->kind == STAR_SEMI || dim->kind == STAR_ANTI) &&
							(uint64) max - (uint64) min < STAR_BITS_MAX)))
	{
		Size		span = (Size) ((uint64) max - (uint64) min) + 1;

		/* (a semi or anti join's set of keys is the bits alone) */
		if (dim->kind != STAR_SEMI && dim->kind != STAR_ANTI)
		{
			dim->direct = palloc_extended(sizeof(int32) * span, MCXT_ALLOC_HUGE);
			memset(dim->direct, 0xff, sizeof(int32) * span);
		}
		/* a bit per key of the range: most misses never touch the larger array */
		dim->present = palloc_extended(sizeof(uint64) * (span / 64 + 1),
									   MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
		for (int r = 0; r < dim->nrows; r++)
		{
			Size		slot = (Size) ((uint64) keys[r] - (uint64) min);

			dim->present[slot / 64] |= UINT64CONST(1) << (slot % 64);
			if (dim->direct == NULL)
				continue;
			if (dim->kind == STAR_COUNT)
				dim->direct[slot] = star_count_one_more(dim->direct[slot]);
			else if (dim->direct[slot] >= 0)
				elog(ERROR, "TesseraAgg: a dimension's join key is not unique");
			else
				dim->direct[slot] = r;
		}
	}
	else if (dim->nrows > 0)
	{
		/*
		 * A bit per key of the range too where that is small (the keys of
		 * a selective dimension, sparse in a wide range: TPC-H q05's 46,000
		 * orders of a year among 6M keys): most rows of the table miss,
		 * and a miss then never probes the hash table.
		 */
		if ((uint64) max - (uint64) min < STAR_BITS_MAX)
		{
			Size		span = (Size) ((uint64) max - (uint64) min) + 1;

			dim->bits = palloc_extended(sizeof(uint64) * (span / 64 + 1),
										MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
			for (int r = 0; r < dim->nrows; r++)
			{
				Size		slot = (Size) ((uint64) keys[r] - (uint64) min);

				dim->bits[slot / 64] |= UINT64CONST(1) << (slot % 64);
			}
		}
		dim->hash = starhash_create(st->cxt, dim->nrows, NULL);
		for (int r = 0; r < dim->nrows; r++)
		{
			bool		found;
			StarEntry  *e = starhash_insert(dim->hash, keys[r], &found);

			if (found && (dim->kind == STAR_INNER || dim->kind == STAR_LEFT))
				elog(ERROR, "TesseraAgg: a dimension's join key is not unique");
			if (dim->kind == STAR_COUNT)
				e->row = star_count_one_more(found ? e->row : -1);
			else
				e->row = dim->kind == STAR_INNER || dim->kind == STAR_LEFT ? r : 0;
		}
	}
	pfree(keys);
	dim->matched = dim->kind == STAR_LEFT ?
		palloc_extended(Max(dim->nrows, 1), MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO) : NULL;
	MemoryContextSwitchTo(old);
}

/* Read a dimension's rows into its table. */
static void
star_build_dim(TesseraStar *st, TesseraStarDim *dim)
{
	MemoryContext old = MemoryContextSwitchTo(st->cxt);
	StarRows	rows;
	int64		min,
				max;
	int64	   *keys;
	Datum	   *values = palloc(sizeof(Datum) * (dim->ncols + 1));
	bool	   *nulls = palloc(sizeof(bool) * (dim->ncols + 1));

	rows.cap = 1024;
	rows.keys = palloc(sizeof(int64) * rows.cap);
	rows.vals = dim->ne_pos >= 0 ? palloc(sizeof(int64) * rows.cap) : NULL;
	rows.multi = dim->ne_pos >= 0 ? palloc(sizeof(bool) * rows.cap) : NULL;
	rows.arena = NULL;
	rows.free = 0;
	rows.idx = NULL;
	rows.idx_cap = 0;
	rows.min = PG_INT64_MAX;
	rows.max = PG_INT64_MIN;
	dim->nrows = 0;
	dim->values = palloc(sizeof(Datum *) * Max(dim->ncols, 1));
	dim->nulls = palloc(sizeof(bool *) * Max(dim->ncols, 1));
	dim->vbase = NULL;
	for (int c = 0; c < dim->ncols; c++)
	{
		dim->values[c] = palloc(sizeof(Datum) * rows.cap);
		dim->nulls[c] = palloc(sizeof(bool) * rows.cap);
	}
	MemoryContextSwitchTo(old);

	/* a TesseraScan's column vectors, else its rows */
	if (!star_read_vectors(st, dim, &rows))
	{
		for (;;)
		{
			TupleTableSlot *slot;
			int64		key;

			CHECK_FOR_INTERRUPTS();
			slot = ExecProcNode(dim->child);
			if (TupIsNull(slot))
				break;
			slot_getallattrs(slot);

			/* a NULL key joins nothing */
			if (slot->tts_isnull[dim->key_pos] ||
				(dim->key_pos2 >= 0 && slot->tts_isnull[dim->key_pos2]))
				continue;
			if (dim->ne_pos >= 0)
			{
				if (!slot->tts_isnull[dim->ne_pos])
					star_append_pair(dim, &rows,
									 star_key(slot->tts_values[dim->key_pos], dim->key_type),
									 star_key(slot->tts_values[dim->ne_pos], dim->ne_type));
				continue;
			}
			for (int c = 0; c < dim->ncols; c++)
			{
				values[c] = slot->tts_values[dim->cols[c]];
				nulls[c] = slot->tts_isnull[dim->cols[c]];
			}
			key = star_key(slot->tts_values[dim->key_pos], dim->key_type);
			if (dim->key_pos2 >= 0)
				key = star_key2(key, star_key(slot->tts_values[dim->key_pos2], dim->key_type2));
			star_append(st, dim, &rows, key, values, nulls);
		}
	}
	keys = rows.keys;
	min = rows.min;
	max = rows.max;
	if (dim->ne_pos >= 0)
	{
		star_build_ne(st, dim, &rows);
		return;
	}

	star_build_table(st, dim, keys, min, max);
}

/* A hashed dimension's table's arrays, for a copy in shared memory. */
static void
star_hash_arrays(TesseraStarDim *dim, StarHashArrays *h)
{
	memset(h, 0, sizeof(StarHashArrays));
	if (dim->hash == NULL)
		return;
	h->data = dim->hash->data;
	h->size = dim->hash->size;
	h->bytes = sizeof(StarEntry) * dim->hash->size;
	h->members = dim->hash->members;
	h->sizemask = dim->hash->sizemask;
	h->grow = dim->hash->grow_threshold;
}

/* Dimension d's table from its chunk in shared memory (another process built it). */
static void
star_attach_dim(TesseraStar *st, int d)
{
	TesseraStarDim *dim = &st->dims[d];
	StarHashArrays h;

	TesseraStarAttachDim(st, d, &h);
	dim->hash = NULL;
	if (h.data != NULL)
	{
		/* simplehash's table over the shared entries (only looked up) */
		struct starhash_hash *t = MemoryContextAllocZero(st->cxt, sizeof(struct starhash_hash));

		t->data = h.data;
		t->size = h.size;
		t->members = h.members;
		t->sizemask = h.sizemask;
		t->grow_threshold = h.grow;
		t->ctx = st->cxt;
		dim->hash = t;
	}
}

/*
 * Read every dimension into its table, once per scan.  In a parallel plan
 * (star_shared.c) each dimension is built by the process that claims it
 * first, which publishes it; this process then reads the tables the
 * others built (or builds one itself where it could not be published).
 */
static void
star_build(TesseraStar *st)
{
	bool	   *mine;

	MemoryContextReset(st->cxt);
	mine = MemoryContextAllocZero(st->cxt, Max(st->ndims, 1));
	for (int d = 0; d < st->ndims; d++)
	{
		StarHashArrays h;

		if (st->shared != NULL && !TesseraStarClaimDim(st, d))
			continue;
		star_build_dim(st, &st->dims[d]);
		mine[d] = true;
		if (st->shared == NULL)
			continue;
		star_hash_arrays(&st->dims[d], &h);
		TesseraStarDimDone(st, d, TesseraStarPublishDim(st, d, &h));
	}
	for (int d = 0; d < st->ndims; d++)
	{
		if (mine[d])
			continue;
		if (TesseraStarWaitDim(st, d))
			star_attach_dim(st, d);
		else
			star_build_dim(st, &st->dims[d]);
	}
	st->left_next = 0;
	st->built = true;
}

/* The row of dimension dim holding key, or -1. */
static inline int32
star_lookup(TesseraStarDim *dim, int64 key)
{
	if (dim->present != NULL)
	{
		uint64		slot = (uint64) key - (uint64) dim->min;

		if (key < dim->min || key > dim->max ||
			!(dim->present[slot / 64] & (UINT64CONST(1) << (slot % 64))))
			return -1;
		return dim->direct != NULL ? dim->direct[slot] : 0;
	}
	if (dim->hash != NULL)
	{
		StarEntry  *e;

		if (dim->bits != NULL)
		{
			uint64		slot = (uint64) key - (uint64) dim->min;

			if (key < dim->min || key > dim->max ||
				!(dim->bits[slot / 64] & (UINT64CONST(1) << (slot % 64))))
				return -1;
		}
		e = starhash_lookup(dim->hash, key);

		return e ? e->row : -1;
	}
	return -1;
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
		for (int i = 0; i < n; i++) \
		{ \
			STAR_PROBE_HIT(GET); \
			\
			ok[i] = ok[i] & (hit != anti); \
		} \
	else if (dense) \
		for (int i = 0; i < n; i++) \
		{ \
			STAR_PROBE_HIT(GET); \
			int32		row = direct != NULL ? direct[s] : 0; \
			\
			match[i] = hit ? row : -1; \
			ok[i] = ok[i] & (hit != anti); \
		} \
	else \
		for (int i = 0; i < n; i++) \
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

/*
 * The probe of a batch's decoded key column into a direct table (or a
 * hashed one's bits): a loop per key type, with no call or type test per
 * row (most of a star join's time is its probes: SSB q3.1).
 */
static void
star_probe_direct(TesseraStarDim *dim, const Datum *keys, const bool *keynull, bool *ok,
				  int32 *match, int n, int m, bool anti)
{
	bool		dense = (Size) m * 2 >= (Size) n;
	uint64		span = (uint64) dim->max - (uint64) dim->min;
	int64		min = dim->min;
	const uint64 *present = dim->present != NULL ? dim->present : dim->bits;
	const int32 *direct = dim->direct;

	switch (dim->fact_type)
	{
		case INT2OID:
			STAR_PROBE_LOOP(STAR_INT16);
			break;
		case INT4OID:
		case DATEOID:
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
					StarEntry  *e = starhash_lookup(dim->hash, star_key(keys[i], dim->fact_type));

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
		star_build(st);
	if (st->cap < n)
	{
		st->cap = Max(n, 1024);
		st->match = MemoryContextAlloc(bufcxt, sizeof(int32) * st->cap * Max(st->ndims, 1));
		st->rows = MemoryContextAlloc(bufcxt, sizeof(int) * st->cap);
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
			if (keys != NULL && dim->fact_att2 < 0 && (dim->present != NULL || dim->bits != NULL))
				star_probe_direct(dim, keys, keynull, ok, match, n, m, anti);
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
		star_build(st);
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

/* TesseraStarRescan: read the dimensions again (their parameters may have changed). */
void
TesseraStarRescan(TesseraStar *st)
{
	for (int d = 0; d < st->ndims; d++)
		ExecReScan(st->dims[d].child);
	st->built = false;
}
