/*-------------------------------------------------------------------------
 *
 * star_build.c
 *	  A star join's dimensions read into their key tables (star.c probes
 *	  them), and the tables used as runtime filters: a dimension's rows
 *	  and the fact table's row groups that cannot join are left out.
 *
 * NOTES
 *	  Each dimension's plan is read once per scan: a TesseraScan's batches
 *	  as column vectors, any other plan row by row.  A parallel plan's
 *	  tables are built once and shared (star_shared.c).
 *
 * IDENTIFICATION
 *	  src/executor/star_build.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "executor/instrument.h"
#include "miscadmin.h"
#include "utils/datum.h"
#include "utils/memutils.h"

#include "tessera/tableam.h"
#include "tessera/tessera.h"
#include "nodes.h"
#include "star_table.h"

/*
 * May a dimension row of this key (of a composite key: key and key2) join?
 * Not if a dimension already built on the same fact column (one that drops
 * the fact rows it does not match) lacks the key: no fact row could match
 * both.  (TPC-H q18: the orders of the 57 keys its subquery keeps, not all
 * 1.5M, are copied into a table; q09: the 42,000 partsupp rows of the
 * parts whose name has 'green', not 800,000.)
 */
static inline bool
star_key_wanted(TesseraStar *st, int64 key, int64 key2)
{
	for (int i = 0; i < st->npre; i++)
		if (star_lookup(&st->dims[st->pre[i]], st->pre_second[i] ? key2 : key) < 0)
			return false;
	return true;
}

/*
 * A batch's by-reference values that share an address (a dictionary-encoded
 * chunk's rows point at its dictionary: TPC-H orders' five priorities) are
 * copied once per batch: a cache of the last addresses copied, this many.
 */
#define STAR_SEEN	64

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
	Size		oldcap;

	if ((Size) dim->nrows + more <= (Size) rows->cap)
		return;
	old = MemoryContextSwitchTo(st->cxt);
	oldcap = rows->cap;
	while ((Size) dim->nrows + more > (Size) rows->cap)
		rows->cap *= 2;
	rows->keys = TesseraReallocLarge(rows->keys, sizeof(int64) * oldcap,
									 sizeof(int64) * rows->cap);
	for (int c = 0; c < dim->ncols; c++)
	{
		dim->values[c] = TesseraReallocLarge(dim->values[c], sizeof(Datum) * oldcap,
											 sizeof(Datum) * rows->cap);
		dim->nulls[c] = TesseraReallocLarge(dim->nulls[c], sizeof(bool) * oldcap,
											sizeof(bool) * rows->cap);
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

		rows->arena = TesseraAllocLarge(st->cxt, block, 0);
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
	if (st->npre > 0)
	{
		int			kept = 0;

		for (int j = 0; j < m; j++)
		{
			int			i = rows->idx[j];

			rows->idx[kept] = i;
			kept += star_key_wanted(st, star_key(kv[i], dim->key_type),
									kv2 != NULL ? star_key(kv2[i], dim->key_type2) : 0);
		}
		m = kept;
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
		/* a value at an address already copied in this batch: that copy */
		Pointer		seen[STAR_SEEN];
		Datum		copies[STAR_SEEN];

		if (!dim->colbyval[c])
			memset(seen, 0, sizeof(seen));
		for (int j = 0; j < m; j++)
		{
			int			i = rows->idx[j];
			Pointer		p;
			uint32		h;

			outnull[j] = cn[c][i];
			if (cn[c][i] || dim->colbyval[c])
			{
				out[j] = cn[c][i] ? (Datum) 0 : cv[c][i];
				continue;
			}
			p = DatumGetPointer(cv[c][i]);
			h = (uint32) (((uintptr_t) p >> 3) % STAR_SEEN);
			if (seen[h] != p)
			{
				seen[h] = p;
				copies[h] = star_copy_value(st, dim, rows, c, cv[c][i]);
			}
			out[j] = copies[h];
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
		Size		oldcap = rows->cap;

		while ((Size) nk + n + 1 > (Size) rows->cap)
			rows->cap *= 2;
		rows->keys = TesseraReallocLarge(rows->keys, sizeof(int64) * oldcap,
										 sizeof(int64) * rows->cap);
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
		rows->keys = TesseraReallocLarge(rows->keys, sizeof(int64) * n, sizeof(int64) * rows->cap);
		rows->vals = TesseraReallocLarge(rows->vals, sizeof(int64) * n, sizeof(int64) * rows->cap);
		rows->multi = TesseraReallocLarge(rows->multi, sizeof(bool) * n, sizeof(bool) * rows->cap);
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
		Size		oldcap = rows->cap;

		while ((Size) nk + n + 1 > (Size) rows->cap)
			rows->cap *= 2;
		rows->keys = TesseraReallocLarge(rows->keys, sizeof(int64) * oldcap,
										 sizeof(int64) * rows->cap);
		rows->vals = TesseraReallocLarge(rows->vals, sizeof(int64) * oldcap,
										 sizeof(int64) * rows->cap);
		rows->multi = TesseraReallocLarge(rows->multi, sizeof(bool) * oldcap,
										  sizeof(bool) * rows->cap);
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
	dim->ne_first = TesseraAllocLarge(CurrentMemoryContext, sizeof(int64) * Max(n, 1), 0);
	dim->ne_multi = TesseraAllocLarge(CurrentMemoryContext, Max(n, 1), MCXT_ALLOC_ZERO);
	/*
	 * (direct where its 4 bytes per key of the range take less than a hash
	 * table's ~32 per key: q21's 1.5M orders among 6M keys, 36% of the
	 * query hashed)
	 */
	if (n > 0 && range < (uint64) Max((int64) n * 2 * STAR_DIRECT_SPREAD, STAR_DIRECT_MIN))
	{
		span = (Size) range + 1;
		dim->direct = TesseraAllocLarge(CurrentMemoryContext, sizeof(int32) * span, 0);
		memset(dim->direct, 0xff, sizeof(int32) * span);
		dim->present = TesseraAllocLarge(CurrentMemoryContext,
										 sizeof(uint64) * (span / 64 + 1), MCXT_ALLOC_ZERO);
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
			dim->bits = TesseraAllocLarge(CurrentMemoryContext,
										  sizeof(uint64) * (range / 64 + 1), MCXT_ALLOC_ZERO);
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
			dim->direct = TesseraAllocLarge(CurrentMemoryContext, sizeof(int32) * span, 0);
			memset(dim->direct, 0xff, sizeof(int32) * span);
		}
		/* a bit per key of the range: most misses never touch the larger array */
		dim->present = TesseraAllocLarge(CurrentMemoryContext,
										 sizeof(uint64) * (span / 64 + 1), MCXT_ALLOC_ZERO);
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

			dim->bits = TesseraAllocLarge(CurrentMemoryContext,
										  sizeof(uint64) * (span / 64 + 1), MCXT_ALLOC_ZERO);
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
		TesseraAllocLarge(CurrentMemoryContext, Max(dim->nrows, 1), MCXT_ALLOC_ZERO) : NULL;
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
			int64		key,
						key2;

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
			key2 = dim->key_pos2 >= 0 ?
				star_key(slot->tts_values[dim->key_pos2], dim->key_type2) : 0;
			if (st->npre > 0 && !star_key_wanted(st, key, key2))
				continue;
			if (dim->key_pos2 >= 0)
				key = star_key2(key, key2);
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

/* Does a dimension drop the fact rows it does not match (on one key column, if one)? */
static bool
star_dim_filters(TesseraStarDim *dim, bool one)
{
	return (dim->kind == STAR_INNER || dim->kind == STAR_SEMI || dim->kind == STAR_COUNT) &&
		(!one || dim->fact_att2 < 0) && dim->ne_pos < 0;
}

/*
 * Does dimension f filter dimension d's rows (star_key_wanted)?  On one
 * fact column, which d's key or either column of its composite key joins
 * too (*second: the latter's second).
 */
static bool
star_pre_of(TesseraStar *st, int d, int f, bool *second)
{
	TesseraStarDim *dim = &st->dims[d];

	if (f == d || !star_dim_filters(dim, false) || !star_dim_filters(&st->dims[f], true))
		return false;
	*second = false;
	if (st->dims[f].fact_att == dim->fact_att)
		return true;
	*second = true;
	return dim->fact_att2 >= 0 && st->dims[f].fact_att == dim->fact_att2;
}

/* The dimensions ready that filter dimension d's rows. */
static void
star_set_pre(TesseraStar *st, int d, const bool *ready)
{
	st->npre = 0;
	for (int f = 0; f < st->ndims; f++)
	{
		bool		second;

		if (ready[f] && star_pre_of(st, d, f, &second))
		{
			st->pre_second[st->npre] = second;
			st->pre[st->npre++] = f;
		}
	}
}

/*
 * Read every dimension into its table, once per scan.  In a parallel plan
 * (star_shared.c) each dimension is built by the process that claims it
 * first, which publishes it; this process then reads the tables the
 * others built (or builds one itself where it could not be published).
 */
void
TesseraStarBuild(TesseraStar *st)
{
	bool	   *ready;
	int		   *order;

	MemoryContextReset(st->cxt);
	ready = MemoryContextAllocZero(st->cxt, Max(st->ndims, 1));
	order = MemoryContextAlloc(st->cxt, sizeof(int) * Max(st->ndims, 1));
	st->pre = MemoryContextAlloc(st->cxt, sizeof(int) * Max(st->ndims, 1));
	st->pre_second = MemoryContextAlloc(st->cxt, sizeof(bool) * Max(st->ndims, 1));
	st->npre = 0;
	/* the smallest first (as planned): their keys filter the others' rows */
	for (int d = 0; d < st->ndims; d++)
	{
		int			j = d;

		while (j > 0 && st->dims[order[j - 1]].child->plan->plan_rows >
			   st->dims[d].child->plan->plan_rows)
		{
			order[j] = order[j - 1];
			j--;
		}
		order[j] = d;
	}
	for (int i = 0; i < st->ndims; i++)
	{
		int			d = order[i];
		StarHashArrays h;

		if (st->shared != NULL && !TesseraStarClaimDim(st, d))
			continue;
		/*
		 * a dimension before it that filters its rows, which another
		 * process is building: waited for (TPC-H q09's part, before
		 * partsupp).  The first one unbuilt in this order waits for none.
		 */
		for (int j = 0; st->shared != NULL && j < i; j++)
		{
			bool		second;

			if (!ready[order[j]] && star_pre_of(st, d, order[j], &second) &&
				TesseraStarWaitDim(st, order[j]))
			{
				star_attach_dim(st, order[j]);
				ready[order[j]] = true;
			}
		}
		star_set_pre(st, d, ready);
		star_build_dim(st, &st->dims[d]);
		st->npre = 0;
		ready[d] = true;
		if (st->shared == NULL)
			continue;
		star_hash_arrays(&st->dims[d], &h);
		TesseraStarDimDone(st, d, TesseraStarPublishDim(st, d, &h));
	}
	for (int i = 0; i < st->ndims; i++)
	{
		int			d = order[i];

		if (ready[d])
			continue;
		if (TesseraStarWaitDim(st, d))
			star_attach_dim(st, d);
		else
		{
			star_set_pre(st, d, ready);
			star_build_dim(st, &st->dims[d]);
			st->npre = 0;
		}
		ready[d] = true;
	}
	st->left_next = 0;
	st->built = true;
}

/* Is some bit of [lo, hi] (offsets into bits) set?  Unknown past maxwords words: true. */
static bool
star_any_bit(const uint64 *bits, uint64 lo, uint64 hi, uint64 maxwords)
{
	uint64		w0 = lo / 64,
				w1 = hi / 64;

	if (w1 - w0 > maxwords)
		return true;
	for (uint64 w = w0; w <= w1; w++)
	{
		uint64		word = bits[w];

		if (w == w0)
			word &= ~UINT64CONST(0) << (lo % 64);
		if (w == w1 && hi % 64 != 63)
			word &= (UINT64CONST(1) << (hi % 64 + 1)) - 1;
		if (word != 0)
			return true;
	}
	return false;
}

/*
 * TesseraStarRowGroupMayMatch
 *		May some row of the fact table's row group join a row of every
 *		dimension that drops the fact rows it does not match (inner, semi,
 *		counted)?  From the summary of the fact key column's chunk: no
 *		non-NULL key, a key range outside the dimension's keys, or (where
 *		the dimension keeps a bit per key of its range) no key of the
 *		dimension inside the chunk's range.  A runtime filter: the
 *		dimensions are built first if they are not yet.  (TPC-H q18's outer
 *		join of lineitem with the 57 orders its subquery keeps reads the
 *		few row groups that hold them, not 601.)
 */
bool
TesseraStarRowGroupMayMatch(void *arg, TesseraReader *r, int stripe, int rg)
{
	TesseraStar *st = arg;

	if (!st->built)
		TesseraStarBuild(st);
	for (int d = 0; d < st->ndims; d++)
	{
		TesseraStarDim *dim = &st->dims[d];
		TesseraChunkSummary cs;
		const uint64 *bits;
		int64		lo,
					hi;

		if ((dim->kind != STAR_INNER && dim->kind != STAR_SEMI && dim->kind != STAR_COUNT) ||
			dim->fact_att2 >= 0 || dim->ne_pos >= 0)
			continue;
		if (dim->nrows == 0)
			return false;		/* no key to join */
		TesseraReaderChunkSummary(r, stripe, rg, dim->fact_att, &cs);
		if (cs.rows > 0 && cs.nonnull == 0)
			return false;		/* a NULL key joins nothing */
		if (!cs.has_minmax)
			continue;
		lo = star_key(cs.min, dim->fact_type);
		hi = star_key(cs.max, dim->fact_type);
		if (hi < dim->min || lo > dim->max)
			return false;
		bits = dim->present != NULL ? dim->present : dim->bits;
		if (bits != NULL &&
			!star_any_bit(bits, (uint64) Max(lo, dim->min) - (uint64) dim->min,
						  (uint64) Min(hi, dim->max) - (uint64) dim->min, 16384))
			return false;
	}
	return true;
}
