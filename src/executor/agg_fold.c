/*-------------------------------------------------------------------------
 *
 * agg_fold.c
 *	  TesseraAgg's folding of a batch (executor/agg_node.c): the counted
 *	  rows' groups (vector/groups.c), then each aggregate's values over
 *	  them -- a column's vector, a computed expression, single values of a
 *	  sparse batch, or the chunk's summary -- into the groups' states
 *	  (vector/aggtrans.c).
 *
 * NOTES
 *	  Where fewer than one row in eight of a batch counts, the counted
 *	  rows are listed (TAGG_LIST_BELOW): the groups are assigned over the
 *	  list and the loops visit only it.
 *
 * IDENTIFICATION
 *	  src/executor/agg_fold.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "common/int.h"
#include "executor/executor.h"
#include "utils/datum.h"
#include "utils/float.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "tessera/tableam.h"
#include "nodes.h"

/* Point the computed group keys at this batch's values. */
static void
tagg_computed_keys(TesseraAggState *as)
{
	int			nfold = as->fold != &as->groups ? as->fold->nkeys : 0;

	for (int k = 0; k < as->groups.nkeys + nfold; k++)
	{
		TAggKey    *key = k < as->groups.nkeys ? &as->groups.gkeys[k] :
			&as->fold->gkeys[k - as->groups.nkeys];

		if (key->attidx >= TAGG_COMPUTED_ATTIDX)
		{
			key->cvalues = as->comp.values[key->attidx - TAGG_COMPUTED_ATTIDX];
			key->cnulls = as->comp.nulls[key->attidx - TAGG_COMPUTED_ATTIDX];
			key->cints = as->comp.ivalues != NULL ?
				as->comp.ivalues[key->attidx - TAGG_COMPUTED_ATTIDX] : NULL;
		}
	}
}

/*
 * An aggregate argument's values over the batch: a column, or computed.
 * Of a sparse batch (few rows counted: those of gidx, else of ok), the
 * column's values are read singly for the counted rows, the others NULL.
 */
static void
tagg_column(TesseraAggState *as, TesseraBatch *b, int attidx, const bool *ok,
			const int32 *gidx, int n, Datum **values, bool **isnull)
{
	if (attidx >= TAGG_COMPUTED_ATTIDX)
	{
		*values = as->comp.values[attidx - TAGG_COMPUTED_ATTIDX];
		*isnull = as->comp.nulls[attidx - TAGG_COMPUTED_ATTIDX];
	}
	else if (b->sparse && as->listed != NULL)
	{
		/* (the rows not listed are NULL, without a value) */
		memset(as->snulls, true, n);
		TesseraBatchGather(b, attidx, as->listed, as->nlisted, as->svalues, as->snulls);
		*values = as->svalues;
		*isnull = as->snulls;
	}
	else if (b->sparse)
	{
		for (int i = 0; i < n; i++)
		{
			if (gidx ? gidx[i] < 0 : ok && !ok[i])
			{
				as->svalues[i] = (Datum) 0;
				as->snulls[i] = true;
				continue;
			}
			as->svalues[i] = TesseraBatchValue(b, attidx, i, &as->snulls[i]);
		}
		*values = as->svalues;
		*isnull = as->snulls;
	}
	else
		TesseraBatchColumn(b, attidx, values, isnull);
}

/* The length of an aggregate argument's type. */
static int16
tagg_typlen(TesseraAggState *as, TesseraBatch *b, int attidx)
{
	if (attidx >= TAGG_COMPUTED_ATTIDX)
		return as->comp.typlen[attidx - TAGG_COMPUTED_ATTIDX];
	return TupleDescAttr(b->reader->tupdesc, attidx)->attlen;
}


/* Room for per-row buffers of n rows. */
static void
tagg_reserve_rows(TesseraAggState *as, int n)
{
	if (as->fcap < n)
	{
		as->fcap = Max(n, 1024);
		as->fsel = MemoryContextAlloc(as->buf_cxt, as->fcap);
		as->fidx = MemoryContextAlloc(as->buf_cxt, sizeof(int) * as->fcap);
		as->fgidx = MemoryContextAlloc(as->buf_cxt, sizeof(int32) * as->fcap);
		as->srows = MemoryContextAlloc(as->buf_cxt, sizeof(int) * as->fcap);
		as->sgidx = MemoryContextAlloc(as->buf_cxt, sizeof(int32) * as->fcap);
		as->svalues = MemoryContextAlloc(as->buf_cxt, sizeof(Datum) * as->fcap);
		as->snulls = MemoryContextAlloc(as->buf_cxt, as->fcap);
		as->lrows = MemoryContextAlloc(as->buf_cxt, sizeof(int) * as->fcap);
	}
}

/*
 * Apply rows that count (ok, NULL: all) and each row's group (gidx, NULL:
 * one group) to aggregate k's state(s): BODY sees st, the state, and i,
 * the row.  Of a sparse batch only the listed rows are visited.
 */
/* a batch's counted rows are listed when fewer than one in this many count */
#define TAGG_LIST_BELOW 8

#define TAGG_ROWS(BODY) \
	do { \
		const int  *listed_ = as->listed; \
		int			nvisit_ = listed_ ? as->nlisted : n; \
		for (int j_ = 0; j_ < nvisit_; j_++) \
		{ \
			int			i = listed_ ? listed_[j_] : j_; \
			TAggState  *st; \
			if (isnull && isnull[i]) \
				continue; \
			if (gidx) \
			{ \
				if (gidx[i] < 0) \
					continue; \
				st = TesseraGroupState(as->fold, gidx[i], k); \
			} \
			else \
			{ \
				if (ok && !ok[i]) \
					continue; \
				st = TesseraGroupState(as->fold, 0, k); \
			} \
			{ BODY; } \
		} \
	} while (0)

/* sum/avg of an expression (spec k) over the batch's counted rows. */
static void
tagg_expr_batch(TesseraAggState *as, int k, TesseraBatch *b, const bool *ok, const int32 *gidx,
				int n)
{
	TAggSpec   *sp = &as->specs[k];
	TesseraGroups *g = as->fold;
	MemoryContext old = MemoryContextSwitchTo(as->vx_cxt);
	VxVal		val;

	/*
	 * few rows selected, or few that count (listed): decode and compute only
	 * theirs.  (A star join keeping 4% of the rows leaves a batch dense for
	 * reading, but computing each row's product for 1 row in 25 made TPC-H
	 * Q11's sum(ps_supplycost * ps_availqty) a third of its time.)
	 */
	bool		by_rows = b->sparse || as->listed != NULL;

	if (by_rows)
	{
		int		   *rows = as->srows;
		int32	   *rgidx = gidx ? as->sgidx : NULL;
		int			m = 0;

		if (gidx != NULL)
		{
			const int  *listed = as->listed;
			int			nvisit = listed ? as->nlisted : n;

			for (int j = 0; j < nvisit; j++)
			{
				int			i = listed ? listed[j] : j;

				rows[m] = i;
				rgidx[m] = gidx[i];
				m += gidx[i] >= 0;
			}
		}
		else if (as->listed != NULL)
		{
			/* (the batch's list; ok may be this aggregate's FILTER's, fewer) */
			for (int j = 0; j < as->nlisted; j++)
			{
				rows[m] = as->listed[j];
				m += ok == NULL || ok[as->listed[j]];
			}
		}
		else if (ok != NULL)
			m = TesseraSelRows(ok, n, rows);
		else
			for (int i = 0; i < n; i++)
				rows[m++] = i;
		if (TesseraVxEval(sp->vx, b, rows, m, &val, as->buf_cxt) && !val.scalar)
		{
			TesseraAggScaledRows(g->states, g->nspecs, gidx ? g->ngroups : 1, k, &as->partials,
								 val.v, val.dsc, val.dsc_all, val.bits, val.scale, val.isnull,
								 NULL, rgidx, m, as->fold->cxt);
			goto done;
		}
	}
	if (!by_rows && TesseraVxEval(sp->vx, b, NULL, n, &val, as->buf_cxt) && !val.scalar)
		TesseraAggScaledRows(g->states, g->nspecs, gidx ? g->ngroups : 1, k, &as->partials,
							 val.v, val.dsc, val.dsc_all, val.bits, val.scale, val.isnull, ok,
							 gidx, n, as->fold->cxt);
	else
	{
		/* numerics, row by row, only for the rows that count */
		bool	   *isnull = NULL;

		TAGG_ROWS(bool rnull;
				  Datum d = TesseraVxDatum(sp->vx, b, i, &rnull);

				  if (!rnull)
					  TesseraAggNumericAccum(st, d, as->fold->cxt));
	}
done:
	MemoryContextSwitchTo(old);
	MemoryContextReset(as->vx_cxt);
}

/*
 * With one group and every stored row of the row group counted: a count or
 * integer min/max from the chunk summary, an integer sum from the
 * encoding.  False if the chunk does not tell.
 */
static bool
tagg_from_summary(TesseraAggState *as, int k, TesseraBatch *b)
{
	TAggSpec   *sp = &as->specs[k];
	TAggState  *st = TesseraGroupState(as->fold, 0, k);

	if (sp->kind == TAGG_COUNT ||
		((sp->kind == TAGG_MIN || sp->kind == TAGG_MAX) && !sp->generic &&
		 sp->argtype != FLOAT4OID && sp->argtype != FLOAT8OID))
	{
		TesseraChunkSummary cs;

		TesseraReaderChunkSummary(b->reader, b->stripe, b->rg, sp->attidx, &cs);
		if (sp->kind == TAGG_COUNT)
			st->count += cs.nonnull;
		else if (cs.nonnull == 0)
			;					/* nothing to compare */
		else if (cs.has_minmax)
		{
			int16		len = TupleDescAttr(b->reader->tupdesc, sp->attidx)->attlen;
			int64		v = TesseraIntDatum(sp->kind == TAGG_MIN ? cs.min : cs.max, len);

			if (!st->have || (sp->kind == TAGG_MIN ? v < st->ibest : v > st->ibest))
			{
				st->ibest = v;
				st->have = true;
			}
		}
		else
			return false;
		as->metadata_answers++;
		return true;
	}
	if ((sp->kind == TAGG_SUM || sp->kind == TAGG_AVG) && sp->vx == NULL &&
		(sp->argtype == INT2OID || sp->argtype == INT4OID || sp->argtype == INT8OID))
	{
		/* constants, runs and steady steps sum without decoding */
		int128		sum;
		int64		count;

		if (TesseraBatchIntSum(b, sp->attidx, false, &sum, &count))
		{
			st->sum += sum;
			st->count += count;
			as->metadata_answers++;
			return true;
		}
	}
	return false;
}

/* sum/avg of column spec k over the batch's counted rows. */
static void
tagg_sum_batch(TesseraAggState *as, int k, TesseraBatch *b, const bool *ok, const int32 *gidx,
			   int n)
{
	TAggSpec   *sp = &as->specs[k];
	TesseraGroups *g = as->fold;
	int16		typlen = tagg_typlen(as, b, sp->attidx);
	Datum	   *values;
	bool	   *isnull = NULL;

	if (sp->argtype == NUMERICOID)
	{
		int128	   *sv;
		int64	   *sc;
		int			cmax;
		int			bits;
		int64		dsc_all;

		/* (a sparse batch: its few counted values, singly) */
		if (sp->attidx < TAGG_COMPUTED_ATTIDX && !b->sparse &&
			TesseraBatchScaledInfo(b, sp->attidx, &sv, &sc, &isnull, &cmax, &bits, &dsc_all))
			TesseraAggScaledRows(g->states, g->nspecs, gidx ? g->ngroups : 1, k, &as->partials,
								 sv, dsc_all >= 0 ? NULL : sc, Max(dsc_all, 0), bits, cmax,
								 isnull, ok, gidx, n, as->fold->cxt);
		else
		{
			tagg_column(as, b, sp->attidx, ok, gidx, n, &values, &isnull);
			TAGG_ROWS(TesseraAggNumericAccum(st, values[i], as->fold->cxt));
		}
		return;
	}
	tagg_column(as, b, sp->attidx, ok, gidx, n, &values, &isnull);
	if (sp->argtype == FLOAT4OID || sp->argtype == FLOAT8OID)
		TAGG_ROWS(TesseraAggFloatAccum(sp, st, values[i]));
	else if (sp->argtype == INTERVALOID)
		TAGG_ROWS(TesseraAggIntervalAccum(st, DatumGetIntervalP(values[i])));
	else if (gidx == NULL && ok == NULL)
		TesseraAggIntSumAll(TesseraGroupState(g, 0, k), values, isnull, typlen, n);
	else if (typlen == 2)
		TAGG_ROWS(st->count++; st->sum += DatumGetInt16(values[i]));
	else if (typlen == 4)
		TAGG_ROWS(st->count++; st->sum += DatumGetInt32(values[i]));
	else
		TAGG_ROWS(st->count++; st->sum += DatumGetInt64(values[i]));
}

/* min/max of column spec k over the batch's counted rows. */
static void
tagg_minmax_batch(TesseraAggState *as, int k, TesseraBatch *b, const bool *ok,
				  const int32 *gidx, int n)
{
	TAggSpec   *sp = &as->specs[k];
	bool		want_min = sp->kind == TAGG_MIN;
	Datum	   *values;
	bool	   *isnull;

	tagg_column(as, b, sp->attidx, ok, gidx, n, &values, &isnull);
	if (sp->generic)
		TAGG_ROWS(TesseraAggGenericAccum(sp, st, values[i], as->fold->cxt));
	else if (sp->argtype == FLOAT4OID || sp->argtype == FLOAT8OID)
	{
		bool		f4 = sp->argtype == FLOAT4OID;

		TAGG_ROWS(float8 v = f4 ? (float8) DatumGetFloat4(values[i]) : DatumGetFloat8(values[i]);
				  if (!st->have || (want_min ? float8_lt(v, st->fbest) : float8_gt(v, st->fbest)))
				  {
					  st->fbest = v;
					  st->have = true;
				  });
	}
	else
	{
		int16		typlen = tagg_typlen(as, b, sp->attidx);

		TAGG_ROWS(int64 v = TesseraIntDatum(values[i], typlen);
				  if (!st->have || (want_min ? v < st->ibest : v > st->ibest))
				  {
					  st->ibest = v;
					  st->have = true;
				  });
	}
}

/* Fold the batch into aggregate k: ok, gidx as for TAGG_ROWS; whole: every stored row counts. */
static void
tagg_fold_spec(TesseraAggState *as, int k, TesseraBatch *b, const bool *ok, const int32 *gidx,
			   int n, bool whole)
{
	TAggSpec   *sp = &as->specs[k];

	if (sp->nfq > 0)
	{
		/* FILTER: this aggregate counts only the rows it keeps */
		bool	   *fsel = as->fsel;

		TesseraVecApply(sp->fq, sp->nfq, b, fsel, n, as->fidx);
		if (gidx != NULL)
		{
			int32	   *g2 = as->fgidx;

			for (int i = 0; i < n; i++)
				g2[i] = fsel[i] ? gidx[i] : -1;
			gidx = g2;
		}
		else
		{
			if (ok != NULL)
				for (int i = 0; i < n; i++)
					fsel[i] &= ok[i];
			ok = fsel;
		}
		whole = false;
	}

	if (sp->kind == TAGG_COUNT_STAR)
	{
		bool	   *isnull = NULL;

		if (whole)
			TesseraGroupState(as->fold, 0, k)->count += n;
		else if (gidx == NULL)
			TesseraGroupState(as->fold, 0, k)->count +=
				ok != NULL ? TesseraSelCount(ok, n) : n;
		else if (gidx != NULL && as->listed == NULL && as->fold->ngroups <= n / 4)
			TesseraAggCountGroups(as->fold, k, &as->partials, gidx, n);
		else
			TAGG_ROWS(st->count++);
		return;
	}
	if (whole && sp->vx == NULL && sp->attidx < TAGG_COMPUTED_ATTIDX &&
		tagg_from_summary(as, k, b))
		return;
	/* an integer sum over every stored row: added from the packed values */
	if (whole && sp->vx == NULL && sp->attidx < TAGG_COMPUTED_ATTIDX &&
		(sp->kind == TAGG_SUM || sp->kind == TAGG_AVG) &&
		(sp->argtype == INT2OID || sp->argtype == INT4OID || sp->argtype == INT8OID))
	{
		int128		sum;
		int64		count;

		if (TesseraBatchIntSum(b, sp->attidx, true, &sum, &count))
		{
			TAggState  *st = TesseraGroupState(as->fold, 0, k);

			st->sum += sum;
			st->count += count;
			return;
		}
	}
	if (sp->vx != NULL)
		tagg_expr_batch(as, k, b, ok, gidx, n);
	else if (sp->kind == TAGG_COUNT)
	{
		Datum	   *values;
		bool	   *isnull;

		tagg_column(as, b, sp->attidx, ok, gidx, n, &values, &isnull);
		TAGG_ROWS(st->count++);
	}
	else if (sp->kind == TAGG_SUM || sp->kind == TAGG_AVG)
		tagg_sum_batch(as, k, b, ok, gidx, n);
	else
		tagg_minmax_batch(as, k, b, ok, gidx, n);
}

/*
 * sum/avg(x + c) whose x + c may overflow (tagg_init_offset): PostgreSQL
 * raises the error at the first counted row that overflows; here the
 * batch's extremes of the counted values of x are checked against each
 * aggregate's bounds (computed once for a run of aggregates of one column).
 */
static void
tagg_check_offsets(TesseraAggState *as, TesseraBatch *b, const bool *ok, const int32 *gidx,
				   int n)
{
	int			att = -1;
	int64		lo = PG_INT64_MAX;
	int64		hi = PG_INT64_MIN;

	for (int k = 0; k < as->nspecs; k++)
	{
		TAggSpec   *sp = &as->specs[k];

		if (!sp->offset_check)
			continue;
		if (sp->attidx != att)
		{
			int16		typlen = tagg_typlen(as, b, sp->attidx);
			Datum	   *values;
			bool	   *isnull;

			tagg_column(as, b, sp->attidx, ok, gidx, n, &values, &isnull);
			lo = PG_INT64_MAX;
			hi = PG_INT64_MIN;
			for (int i = 0; i < n; i++)
			{
				int64		x;

				if ((isnull && isnull[i]) || (gidx ? gidx[i] < 0 : ok && !ok[i]))
					continue;
				x = typlen == 2 ? DatumGetInt16(values[i]) :
					typlen == 4 ? DatumGetInt32(values[i]) : DatumGetInt64(values[i]);
				lo = Min(lo, x);
				hi = Max(hi, x);
			}
			att = sp->attidx;
		}
		/* (no counted value: lo > hi, and neither test holds) */
		if (lo < sp->offset_lo || hi > sp->offset_hi)
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("%s out of range",
							sp->offset_type == INT2OID ? "smallint" :
							sp->offset_type == INT4OID ? "integer" : "bigint")));
	}
}

/*
 * Few rows count (ok): they are listed, and only they are visited.  Where
 * a star join listed the rows it kept, the list is those of them ok keeps.
 */
static void
tagg_list_rows(TesseraAggState *as, const bool *ok, int n)
{
	as->listed = NULL;
	if (ok == NULL)
		return;
	if (as->superset != NULL && (Size) as->nsuperset * TAGG_LIST_BELOW < (Size) n)
	{
		int			m = 0;

		for (int j = 0; j < as->nsuperset; j++)
		{
			as->lrows[m] = as->superset[j];
			m += ok[as->superset[j]];
		}
		as->nlisted = m;
		as->listed = as->lrows;
	}
	else if ((Size) TesseraSelCount(ok, n) * TAGG_LIST_BELOW < (Size) n)
	{
		as->nlisted = TesseraSelRows(ok, n, as->lrows);
		as->listed = as->lrows;
	}
}

/*
 * TesseraAggBatch
 *		Fold one batch into every aggregate.  ok: rows to count (NULL: all n).
 */
void
TesseraAggBatch(TesseraAggState *as, TesseraBatch *b, const bool *ok, int n)
{
	int32	   *gidx = NULL;

	tagg_reserve_rows(as, n);
	/* (a slice's rows are known only once the computed keys are) */
	as->listed = NULL;
	if (as->nslices <= 1)
		tagg_list_rows(as, ok, n);
	if (as->comp.n > 0)
	{
		TesseraComputedBatch(&as->comp, b, ok, n, as->listed, as->nlisted, as->buf_cxt);
		tagg_computed_keys(as);
	}
	if (as->nslices > 1)
	{
		/* sliced: the rows of this process's slice only */
		if (as->slice_cap < n)
		{
			as->slice_cap = Max(n, 1024);
			as->slice_mask = MemoryContextAlloc(as->buf_cxt, as->slice_cap);
		}
		if (ok == NULL)
			memset(as->slice_mask, true, n);
		else
			memcpy(as->slice_mask, ok, n);
		TesseraGroupsSlice(&as->groups, as->slice_nkeys, b, as->slice_mask, n, as->slice,
						   as->nslices);
		ok = as->slice_mask;
		as->slice_rows = (int) TesseraSelCount(ok, n);
		tagg_list_rows(as, ok, n);
	}
	if (as->heavy_phase != TAGG_HEAVY_OFF)
	{
		/* a top-N of counts: rows counted into its sketch, or those it keeps */
		ok = TesseraAggHeavyRows(as, b, ok, n);
		if (ok == NULL)
			return;
		tagg_list_rows(as, ok, n);
	}
	if (as->groups.nkeys > 0)
	{
		gidx = TesseraGroupsAssign(&as->groups, b, ok, n, as->listed, as->nlisted);
		/* the new groups' carried keys, read from one row each */
		if (as->groups.ncarry > 0)
		{
			if (as->comp.any_deferred)
			{
				if (as->carry_cap < n)
				{
					as->carry_cap = Max(n, 1024);
					as->carry_mask = MemoryContextAlloc(as->buf_cxt, as->carry_cap);
				}
				TesseraGroupsNewRows(&as->groups, n, as->carry_mask);
				TesseraComputedDeferred(&as->comp, b, as->carry_mask, n, as->buf_cxt);
			}
			TesseraGroupsFillCarried(&as->groups, b);
		}
	}
	if (as->fold != &as->groups)
		gidx = as->fold->nkeys > 0 ?
			TesseraGroupsAssign(as->fold, b, ok, n, as->listed, as->nlisted) : NULL;
	if (as->offset_checks)
		tagg_check_offsets(as, b, ok, gidx, n);

	/*
	 * With one group and every stored row of the row group counted, counts
	 * and min/max come from the chunk summaries without decoding anything.
	 */
	for (int k = 0; k < as->nspecs; k++)
	{
		/* another's state, or count(DISTINCT), counted by the roll-up */
		if (as->specs[k].same_as >= 0 || as->specs[k].kind == TAGG_COUNT_DISTINCT)
			continue;
		tagg_fold_spec(as, k, b, ok, gidx, n,
					   gidx == NULL && ok == NULL && n == b->chunk_rows &&
					   !b->reader->external);
	}
	as->listed = NULL;
}

