/*-------------------------------------------------------------------------
 *
 * aggtrans.c
 *	  Aggregate states of TesseraAgg: transitions over a batch, combining
 *	  partial states, results, and the states' serialized form.
 *
 * NOTES
 *	  Results are PostgreSQL's to the digit, by doing its arithmetic rather
 *	  than imitating it: sums of int2/int4 in int64 (int2_sum/int4_sum), of
 *	  int8 and numeric exactly in 128 bits at the largest display scale
 *	  seen (numerics that do not fit are added as numerics), averages as
 *	  numeric_div(sum, count) as int8_avg and numeric_avg compute them, NaN
 *	  and infinities as numeric_sum treats them; floats through float4pl,
 *	  float8pl and float8_accum's Youngs-Cramer N, Sx, Sxx row by row in scan
 *	  order (the same digits and overflow errors as PostgreSQL's Agg);
 *	  intervals with interval_pl's overflow checks; min/max of other ordered
 *	  types through the type's btree comparison.
 *
 *	  Sums over a batch go into per-group partial sums, folded into the
 *	  groups once per batch; with few groups each group keeps
 *	  TAGG_LANES interleaved partials, so that rows of one group in a row do
 *	  not chain every addition through one memory location.
 *
 *	  A group's states serialize to a bytea (the partial node's output, the
 *	  spill's rows): per aggregate the state struct, then its extra numeric
 *	  and, for generic min/max, its value.  Partial and final nodes run the
 *	  same binary, so the layout is private.
 *
 * IDENTIFICATION
 *	  src/vector/aggtrans.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/float.h"
#include "utils/fmgrprotos.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/timestamp.h"

#include "tessera/encoding.h"
#include "tessera/vector.h"

/*
 * A numeric as int128 * 10^-scale: straight from the integer where it fits
 * in 64 bits (what numeric_in makes of its digits, without them: the
 * finishing of a million sums and averages spent a third of its time
 * printing and parsing), else through its decimal digits.
 */
Numeric
TesseraScaledNumeric(int128 v, int scale)
{
	char		buf[96];
	char	   *p = buf + sizeof(buf) - 1;
	bool		neg = v < 0;
	uint128		u = neg ? -(uint128) v : (uint128) v;
	int			digits = 0;

	if (v >= PG_INT64_MIN && v <= PG_INT64_MAX)
		return scale == 0 ? int64_to_numeric((int64) v) :
			int64_div_fast_to_numeric((int64) v, scale);
	*p = '\0';
	do
	{
		*--p = '0' + (int) (u % 10);
		u /= 10;
		digits++;
		if (digits == scale)
			*--p = '.';
	} while (u != 0 || digits < scale + 1);
	if (*p == '.')
		*--p = '0';
	if (neg)
		*--p = '-';
	return DatumGetNumeric(DirectFunctionCall3(numeric_in, CStringGetDatum(p),
											   ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1)));
}

static void
add_extra(TAggState *st, Datum value, MemoryContext cxt)
{
	MemoryContext old = MemoryContextSwitchTo(cxt);
	Numeric		prev = st->extra;

	st->extra = prev == NULL ? DatumGetNumericCopy(value) :
		DatumGetNumeric(DirectFunctionCall2(numeric_add, NumericGetDatum(prev), value));
	if (prev != NULL)
		pfree(prev);
	MemoryContextSwitchTo(old);
}

/*
 * TesseraAggIntSumAll
 *		sum/avg of n values of an integer column into one state, every row
 *		counted: loops the compiler vectorizes.
 */
void
TesseraAggIntSumAll(TAggState *st, Datum *values, bool *isnull, int16 typlen, int n)
{
	int64		count = 0;

	if (typlen <= 4)
	{
		int64		sum = 0;

		if (memchr(isnull, true, n) == NULL)
		{
			/* no NULLs (the usual case): a plain sum */
			if (typlen == 2)
				for (int i = 0; i < n; i++)
					sum += (int16) values[i];
			else
				for (int i = 0; i < n; i++)
					sum += (int32) values[i];
			count = n;
		}
		else if (typlen == 2)
			for (int i = 0; i < n; i++)
			{
				/* (as below: masks over bytes) */
				sum += DatumGetInt16(values[i]) & ((int64) ((const uint8 *) isnull)[i] - 1);
				count += 1 - ((const uint8 *) isnull)[i];
			}
		else
			for (int i = 0; i < n; i++)
			{
				sum += DatumGetInt32(values[i]) & ((int64) ((const uint8 *) isnull)[i] - 1);
				count += 1 - ((const uint8 *) isnull)[i];
			}
		st->sum += sum;
	}
	else
	{
		/*
		 * bigint: the values' high and low 32 bits (as unsigned) and their
		 * signs summed apart, none of which can overflow 64 bits within a
		 * batch (n < 2^31), with logical shifts only, so that the loop has
		 * no branch and vectorizes (random 64-bit values overflowed a
		 * running int64 sum every few rows: AVG(UserID) spent a third of
		 * its time here)
		 */
		uint64		hi = 0,
					lo = 0,
					neg = 0;
		const uint8 *nb = (const uint8 *) isnull;

		for (int i = 0; i < n; i++)
		{
			/* (a mask, not a conditional load; bytes, not bools: both vectorize) */
			uint64		v = (uint64) DatumGetInt64(values[i]) & ((uint64) nb[i] - 1);

			count += 1 - nb[i];
			hi += v >> 32;
			lo += v & UINT64CONST(0xffffffff);
			neg += v >> 63;
		}
		/* a negative value's unsigned reading is 2^64 too large */
		st->sum += (int128) hi * ((int64) 1 << 32) + (int128) lo -
			(int128) neg * ((int128) 1 << 64);
	}
	st->count += count;
}

/* Add one numeric to a sum kept exactly as int128 at the largest scale. */
void
TesseraAggNumericAccum(TAggState *st, Datum value, MemoryContext cxt)
{
	int128		v;
	int			sc;

	st->count++;
	if (!TesseraNumericScaled(value, &v, &sc))
	{
		Numeric		num = DatumGetNumeric(value);

		if (numeric_is_nan(num))
			st->nan = true;
		else if (numeric_is_inf(num))
		{
			if (DatumGetBool(DirectFunctionCall2(numeric_lt, value,
												 NumericGetDatum(int64_to_numeric(0)))))
				st->ninf = true;
			else
				st->pinf = true;
		}
		else
			add_extra(st, value, cxt);
		return;
	}
	st->dscale = Max(st->dscale, sc);
	if (sc > st->scale)
	{
		/* a value with more decimals: rescale the sum */
		int128		r = st->sum;

		for (int k = st->scale; k < sc; k++)
		{
			if (__builtin_mul_overflow(r, (int128) 10, &r))
			{
				/* the sum no longer fits at this scale: keep it as a numeric */
				add_extra(st, NumericGetDatum(TesseraScaledNumeric(st->sum, st->scale)), cxt);
				r = 0;
				break;
			}
		}
		st->sum = r;
		st->scale = sc;
	}
	for (int k = sc; k < st->scale; k++)
	{
		if (__builtin_mul_overflow(v, (int128) 10, &v))
		{
			add_extra(st, value, cxt);
			return;
		}
	}
	{
		int128		t;

		if (__builtin_add_overflow(st->sum, v, &t))
			add_extra(st, value, cxt);
		else
			st->sum = t;
	}
}

/*
 * Add count values whose sum is v * 10^-cmax, the largest display scale
 * among them dsc (v is then a multiple of 10^(cmax - dsc)).
 */
void
TesseraAggScaledFold(TAggState *st, int128 v, int64 count, int dsc, int cmax, MemoryContext cxt)
{
	int128		t;

	if (count == 0)
		return;
	st->count += count;
	if (cmax > st->scale)
	{
		if (__builtin_mul_overflow(st->sum, tessera_pow10[cmax - st->scale], &t))
		{
			add_extra(st, NumericGetDatum(TesseraScaledNumeric(st->sum / tessera_pow10[st->scale - st->dscale],
														 st->dscale)), cxt);
			t = 0;
		}
		st->sum = t;
		st->scale = cmax;
	}
	else if (cmax < st->scale)
	{
		if (__builtin_mul_overflow(v, tessera_pow10[st->scale - cmax], &t))
		{
			add_extra(st, NumericGetDatum(TesseraScaledNumeric(v / tessera_pow10[cmax - dsc], dsc)), cxt);
			return;
		}
		v = t;
	}
	if (__builtin_add_overflow(st->sum, v, &t))
	{
		/* v is at st->scale here: back to its own display scale */
		add_extra(st, NumericGetDatum(TesseraScaledNumeric(v / tessera_pow10[st->scale - dsc], dsc)), cxt);
		return;
	}
	st->sum = t;
	if (dsc > st->dscale)
		st->dscale = dsc;
}

/* per-group partial sums of a batch with few groups: TAGG_LANES of them */
#define TAGG_LANES				4
#define TAGG_LANES_MAX_GROUPS	64

/* Room for per-group partial sums and counts of a batch (ng groups + 1). */
static void
reserve_partials(TesseraPartials *p, int ng)
{
	if (p->bcap < ng + 1)
	{
		p->bcap = Max(ng + 1, 64);
		p->bsum = MemoryContextAllocHuge(p->cxt, sizeof(int128) * p->bcap);
		p->bcnt = MemoryContextAllocHuge(p->cxt, sizeof(int64) * p->bcap);
		p->bdsc = MemoryContextAllocHuge(p->cxt, sizeof(int64) * p->bcap);
	}
}

/*
 * Sum the counted rows' scaled values v[i] (scale `scale`, display scale
 * dsc[i], or dsc_all for every row if dsc is NULL) into aggregate k: in
 * per-group partial sums over the batch, folded into the groups once.
 */
void
TesseraAggScaledRows(TAggState *states, int nspecs, int ngroups, int k, TesseraPartials *p,
					 const int128 *v, const int64 *dsc, int64 dsc_all, int bits, int scale,
					 const bool *isnull, const bool *ok, const int32 *gidx, int n, MemoryContext cxt)
{
	int			ng = gidx ? ngroups : 1;

	if (ng > 64 && ng > n / 4)
	{
		/*
		 * More groups than a few per row (many groups, or a small batch: a
		 * delta stripe of a few rows): partial sums, cleared and folded for
		 * every group, would cost more than they save.
		 */
		for (int i = 0; i < n; i++)
		{
			int			g = gidx ? gidx[i] : (ok && !ok[i] ? -1 : 0);

			/*
			 * the state of the row eight ahead: past the CPU caches (TPC-H
			 * q17's memo, 200k groups) every state was a wait on memory
			 */
			if (gidx && i + 8 < n && gidx[i + 8] >= 0)
				__builtin_prefetch(&states[(Size) gidx[i + 8] * nspecs + k], 1);
			if (g < 0 || (isnull && isnull[i]))
				continue;
			TesseraAggScaledFold(&states[(Size) g * nspecs + k], v[i], 1,
							 (int) (dsc ? dsc[i] : dsc_all), scale, cxt);
		}
		return;
	}
	reserve_partials(p, ng <= TAGG_LANES_MAX_GROUPS ? (ng + 1) * TAGG_LANES - 1 : ng);
	memset(p->bsum, 0, sizeof(int128) * (ng + 1));
	memset(p->bcnt, 0, sizeof(int64) * (ng + 1));
	for (int g = 0; g <= ng; g++)
		p->bdsc[g] = dsc_all;
	if (bits + 32 <= 126 && dsc == NULL && (ng + 1) * TAGG_LANES <= p->bcap)
	{
		/*
		 * n < 2^31 values below 2^bits cannot overflow: no checks, no
		 * branches.  Four sums per group, row i adding to lane i % 4:
		 * consecutive rows of one group (few groups, or sorted keys) would
		 * otherwise chain every addition through the same memory.
		 */
		int128	   *bsum = p->bsum;
		int64	   *bcnt = p->bcnt;

		memset(bsum, 0, sizeof(int128) * (ng + 1) * TAGG_LANES);
		memset(bcnt, 0, sizeof(int64) * (ng + 1) * TAGG_LANES);
		for (int i = 0; i < n; i++)
		{
			int			g = gidx ? gidx[i] : (ok && !ok[i] ? -1 : 0);
			bool		skip = g < 0 || (isnull && isnull[i]);
			int			slot = (skip ? ng : g) * TAGG_LANES + (i & (TAGG_LANES - 1));

			/* the extra group takes what does not count */
			bsum[slot] += v[i];
			bcnt[slot]++;
		}
		for (int g = 0; g < ng; g++)
		{
			int128		sum = 0;
			int64		cnt = 0;

			for (int l = 0; l < TAGG_LANES; l++)
			{
				sum += bsum[g * TAGG_LANES + l];
				cnt += bcnt[g * TAGG_LANES + l];
			}
			bsum[g] = sum;		/* g <= g * TAGG_LANES: read before written */
			bcnt[g] = cnt;
		}
	}
	else
	for (int i = 0; i < n; i++)
	{
		int			g = gidx ? gidx[i] : (ok && !ok[i] ? -1 : 0);
		int128		t;

		if (g < 0 || (isnull && isnull[i]))
			continue;
		if (unlikely(__builtin_add_overflow(p->bsum[g], v[i], &t)))
		{
			/* the partial sum is full: fold it and start again */
			TesseraAggScaledFold(&states[(Size) g * nspecs + k], p->bsum[g], p->bcnt[g],
							 (int) p->bdsc[g], scale, cxt);
			t = v[i];
			p->bcnt[g] = 0;
			p->bdsc[g] = dsc_all;
		}
		p->bsum[g] = t;
		p->bcnt[g]++;
		if (dsc && dsc[i] > p->bdsc[g])
			p->bdsc[g] = dsc[i];
	}
	for (int g = 0; g < ng; g++)
		TesseraAggScaledFold(&states[(Size) g * nspecs + k], p->bsum[g], p->bcnt[g],
						 (int) p->bdsc[g], scale, cxt);
}

/*
 * count(*) (spec k) per group over the batch's rows (gidx[i] < 0: not
 * counted): a histogram of the batch, then one addition per group.
 */
void
TesseraAggCountGroups(struct TesseraGroups *g, int k, TesseraPartials *p, const int32 *gidx, int n)
{
	int			ng = g->ngroups;
	/* few groups: interleaved counts, as in TesseraAggScaledRows */
	int			lanes = ng <= TAGG_LANES_MAX_GROUPS ? TAGG_LANES : 1;
	int64	   *cnt;

	reserve_partials(p, (ng + 1) * lanes - 1);
	cnt = p->bcnt;
	memset(cnt, 0, sizeof(int64) * (ng + 1) * lanes);
	for (int i = 0; i < n; i++)
		cnt[(gidx[i] < 0 ? ng : gidx[i]) * lanes + (i & (lanes - 1))]++;
	for (int j = 0; j < ng; j++)
		for (int l = 0; l < lanes; l++)
			TesseraGroupState(g, j, k)->count += cnt[j * lanes + l];
}

/*
 * A float into a sum or average state exactly as PostgreSQL's transition
 * functions take it, row after row: sum(float4) is float4pl (float4
 * arithmetic, the first value the initial state), sum(float8) float8pl,
 * avg(float4/float8) float4_accum/float8_accum (Youngs-Cramer N, Sx, Sxx,
 * whose overflow checks raise the same errors).  The order of the rows is
 * the scan's, as under PostgreSQL's Agg.
 */
void
TesseraAggFloatAccum(TAggSpec *sp, TAggState *st, Datum d)
{
	float8		newval,
				oldN,
				N,
				Sx,
				Sxx;

	if (sp->kind == TAGG_SUM)
	{
		if (sp->argtype == FLOAT4OID)
			st->f4sum = st->count == 0 ? DatumGetFloat4(d) :
				float4_pl(st->f4sum, DatumGetFloat4(d));
		else
			st->fsx = st->count == 0 ? DatumGetFloat8(d) :
				float8_pl(st->fsx, DatumGetFloat8(d));
		st->count++;
		return;
	}

	/* float4_accum / float8_accum */
	newval = sp->argtype == FLOAT4OID ? (float8) DatumGetFloat4(d) : DatumGetFloat8(d);
	oldN = (float8) st->count;
	N = oldN + 1.0;
	Sx = st->fsx + newval;
	Sxx = st->fsxx;
	if (oldN > 0.0)
	{
		float8		tmp = newval * N - Sx;

		Sxx += tmp * tmp / (N * oldN);
		if (isinf(Sx) || isinf(Sxx))
		{
			if (!isinf(st->fsx) && !isinf(newval))
				float_overflow_error();
			Sxx = get_float8_nan();
		}
	}
	else if (isnan(newval) || isinf(newval))
		Sxx = get_float8_nan();
	st->count++;
	st->fsx = Sx;
	st->fsxx = Sxx;
}

/* interval_pl's sum: each field added with int4pl's / int8pl's overflow check. */
static inline void
interval_add(Interval *sum, const Interval *v)
{
	if (__builtin_add_overflow(sum->month, v->month, &sum->month) ||
		__builtin_add_overflow(sum->day, v->day, &sum->day) ||
		__builtin_add_overflow(sum->time, v->time, &sum->time))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("interval out of range")));
}

/*
 * An interval into a sum or average state, as interval_pl (sum, the first
 * value the initial state) and interval_accum (avg, from zero) take it.
 */
void
TesseraAggIntervalAccum(TAggState *st, const Interval *v)
{
	if (st->count == 0)
		st->isum = *v;
	else
		interval_add(&st->isum, v);
	st->count++;
}

/*
 * A variance or standard deviation of floats from float8_accum's N and Sxx,
 * as float8_var_pop, float8_var_samp, float8_stddev_pop and
 * float8_stddev_samp finish them: NULL for no value (or one, for a sample).
 */
static Datum
float_variance(const TAggSpec *sp, const TAggState *st, bool *isnull)
{
	float8		N = (float8) st->count;
	float8		Sxx = st->fsxx;
	bool		sample = sp->var_form == TAGG_VAR_SAMP || sp->var_form == TAGG_STDDEV_SAMP;
	float8		v;

	if (sample ? N <= 1.0 : N == 0.0)
	{
		*isnull = true;
		return (Datum) 0;
	}
	/* (Sxx is never negative) */
	v = Sxx / (sample ? N - 1.0 : N);
	if (sp->var_form == TAGG_STDDEV_POP || sp->var_form == TAGG_STDDEV_SAMP)
		v = sqrt(v);
	*isnull = false;
	return Float8GetDatum(v);
}

/* float8_combine / float4pl / float8pl of two float states (src into dst). */
static void
float_combine(TAggSpec *sp, TAggState *dst, const TAggState *src)
{
	if (src->count == 0)
		return;
	if (dst->count == 0)
	{
		dst->count = src->count;
		dst->f4sum = src->f4sum;
		dst->fsx = src->fsx;
		dst->fsxx = src->fsxx;
		return;
	}
	if (sp->kind == TAGG_SUM)
	{
		if (sp->argtype == FLOAT4OID)
			dst->f4sum = float4_pl(dst->f4sum, src->f4sum);
		else
			dst->fsx = float8_pl(dst->fsx, src->fsx);
	}
	else
	{
		float8		N1 = (float8) dst->count,
					N2 = (float8) src->count;
		float8		N = N1 + N2;
		float8		tmp = dst->fsx / N1 - src->fsx / N2;
		float8		Sxx = dst->fsxx + src->fsxx + N1 * N2 * tmp * tmp / N;

		dst->fsx = float8_pl(dst->fsx, src->fsx);
		if (unlikely(isinf(Sxx)) && !isinf(dst->fsxx) && !isinf(src->fsxx))
			float_overflow_error();
		dst->fsxx = Sxx;
	}
	dst->count += src->count;
}

/*
 * min/max through the type's comparison.  Like text_smaller and friends,
 * a value equal to the one kept replaces it (equal is not always identical:
 * 1.0 and 1.00), except for char(n), whose functions keep the old one.
 */
void
TesseraAggGenericAccum(TAggSpec *sp, TAggState *st, Datum value, MemoryContext cxt)
{
	if (st->have)
	{
		int			c = DatumGetInt32(FunctionCall2Coll(&sp->cmp, sp->collation, value, st->dbest));

		/* bpchar_smaller/larger alone keep the old value on a tie */
		if (sp->kind == TAGG_MIN ? c > 0 : c < 0)
			return;
		if (c == 0 && sp->argtype == BPCHAROID)
			return;
		if (!sp->typbyval)
			pfree(DatumGetPointer(st->dbest));
	}
	{
		MemoryContext old = MemoryContextSwitchTo(cxt);

		st->dbest = datumCopy(value, sp->typbyval, sp->typlen);
		MemoryContextSwitchTo(old);
	}
	st->have = true;
}

/* The numeric sum of a state, or NULL for NaN/infinite handled by caller. */
static Datum
numeric_state_sum(TAggState *st, TAggSpec *sp)
{
	Numeric		r;

	if (st->nan || (st->pinf && st->ninf))
		return DirectFunctionCall3(numeric_in, CStringGetDatum("NaN"),
								   ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
	if (st->pinf || st->ninf)
		return DirectFunctionCall3(numeric_in, CStringGetDatum(st->pinf ? "Infinity" : "-Infinity"),
								   ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
	if (sp->argtype == NUMERICOID)
	{
		/* exact: every value added is a multiple of 10^(scale - dscale) */
		r = TesseraScaledNumeric(st->sum / tessera_pow10[st->scale - st->dscale], st->dscale);
	}
	else
		r = TesseraScaledNumeric(st->sum, 0);
	if (st->extra != NULL)
		return DirectFunctionCall2(numeric_add, NumericGetDatum(r), NumericGetDatum(st->extra));
	return NumericGetDatum(r);
}

Datum
TesseraAggResult(TAggSpec *sp, TAggState *st, bool *isnull)
{
	TAggState	shifted;

	*isnull = false;
	if (sp->has_offset && st->count > 0)
	{
		/* sum(x + c) = sum(x) + c * count(x), in the 128-bit sum */
		shifted = *st;
		shifted.sum += (int128) sp->offset * st->count;
		st = &shifted;
	}
	switch (sp->kind)
	{
		case TAGG_COUNT_STAR:
		case TAGG_COUNT:
		case TAGG_COUNT_DISTINCT:
			return Int64GetDatum(st->count);
		case TAGG_SUM:
			if (st->count == 0)
				break;
			if (sp->restype == INT8OID)
				return Int64GetDatum((int64) st->sum);
			if (sp->argtype == FLOAT4OID)
				return Float4GetDatum(st->f4sum);
			if (sp->argtype == FLOAT8OID)
				return Float8GetDatum(st->fsx);
			if (sp->argtype == INTERVALOID)
			{
				Interval   *r = palloc(sizeof(Interval));

				*r = st->isum;
				return IntervalPGetDatum(r);
			}
			return numeric_state_sum(st, sp);
		case TAGG_AVG:
			if (sp->var_form != TAGG_VAR_NONE)
				return float_variance(sp, st, isnull);
			if (st->count == 0)
				break;
			if (sp->argtype == FLOAT4OID || sp->argtype == FLOAT8OID)
				return Float8GetDatum(st->fsx / (float8) st->count);	/* float8_avg */
			if (sp->argtype == INTERVALOID)		/* interval_avg */
				return DirectFunctionCall2(interval_div, IntervalPGetDatum(&st->isum),
										   Float8GetDatum((double) st->count));
			return DirectFunctionCall2(numeric_div, numeric_state_sum(st, sp),
									   NumericGetDatum(int64_to_numeric(st->count)));
		case TAGG_MIN:
		case TAGG_MAX:
			if (!st->have)
				break;
			if (sp->generic)
				return st->dbest;
			switch (sp->argtype)
			{
				case FLOAT4OID:
					return Float4GetDatum((float4) st->fbest);
				case FLOAT8OID:
					return Float8GetDatum(st->fbest);
				case BOOLOID:	/* bool_and, bool_or, every */
					return BoolGetDatum(st->ibest != 0);
				case INT2OID:
					return Int16GetDatum((int16) st->ibest);
				case INT4OID:
				case DATEOID:
					return Int32GetDatum((int32) st->ibest);
				default:
					return Int64GetDatum(st->ibest);
			}
	}
	*isnull = true;
	return (Datum) 0;
}

/* Fold a partial state of spec sp into dst. */
static void
merge_state(TAggSpec *sp, TAggState *dst, const TAggState *src, Numeric extra,
				 MemoryContext cxt)
{
	switch (sp->kind)
	{
		case TAGG_COUNT_STAR:
		case TAGG_COUNT:
		case TAGG_COUNT_DISTINCT:
			dst->count += src->count;
			break;
		case TAGG_MIN:
		case TAGG_MAX:
			if (!src->have)
				break;
			if (sp->argtype == FLOAT4OID || sp->argtype == FLOAT8OID)
			{
				if (!dst->have || (sp->kind == TAGG_MIN ? float8_lt(src->fbest, dst->fbest) :
								   float8_gt(src->fbest, dst->fbest)))
					dst->fbest = src->fbest;
			}
			else if (!dst->have || (sp->kind == TAGG_MIN ? src->ibest < dst->ibest :
									src->ibest > dst->ibest))
				dst->ibest = src->ibest;
			dst->have = true;
			break;
		case TAGG_SUM:
		case TAGG_AVG:
			if (sp->argtype == FLOAT4OID || sp->argtype == FLOAT8OID)
			{
				float_combine(sp, dst, src);
				break;
			}
			if (sp->argtype == INTERVALOID)
			{
				/* interval_pl / interval_combine */
				if (src->count > 0 && dst->count == 0)
					dst->isum = src->isum;
				else if (src->count > 0)
					interval_add(&dst->isum, &src->isum);
				dst->count += src->count;
				break;
			}
			dst->nan |= src->nan;
			dst->pinf |= src->pinf;
			dst->ninf |= src->ninf;
			if (extra != NULL)
				add_extra(dst, NumericGetDatum(extra), cxt);
			if (sp->argtype == NUMERICOID)
				TesseraAggScaledFold(dst, src->sum, src->count, src->dscale, src->scale, cxt);
			else
			{
				dst->sum += src->sum;
				dst->count += src->count;
			}
			break;
	}
}

/*
 * How a state travels (TesseraAggSerialize): a count alone (a varint); a
 * sum or average of integers or numerics without its pointer, then its extra
 * numeric; or the whole struct.  A spill of a million groups writes each
 * group's states, and a parallel plan ships them through its queues.
 */
typedef enum TAggSerForm
{
	TAGG_SER_COUNT,
	TAGG_SER_SUM,
	TAGG_SER_WHOLE
} TAggSerForm;

static inline TAggSerForm
ser_form(const TAggSpec *sp)
{
	if (sp->generic)
		return TAGG_SER_WHOLE;
	if (sp->kind == TAGG_COUNT_STAR || sp->kind == TAGG_COUNT || sp->kind == TAGG_COUNT_DISTINCT)
		return TAGG_SER_COUNT;
	if (TAggStateHasSum(sp))
		return TAGG_SER_SUM;
	return TAGG_SER_WHOLE;
}

/*
 * A sum's state in its short form: a tag byte, its count and its sum as
 * varints (the sum zigzagged), where it has no scale, no extra numeric, no
 * special and fits 64 bits (every sum of integers in practice); else the tag
 * and the long form.  A count alone is a varint too.  ClickBench's 10M
 * WatchID, ClientIP groups spill a count and two such sums each: 86 -> 42
 * bytes of states with 64-bit fields, 8-9 with varints.
 */
#define SER_SUM_SHORT	0
#define SER_SUM_LONG	1

static inline bool
ser_sum_short(const TAggState *st)
{
	return st->extra == NULL && !st->nan && !st->pinf && !st->ninf &&
		st->scale == 0 && st->dscale == 0 &&
		st->sum >= PG_INT64_MIN && st->sum <= PG_INT64_MAX;
}

/*
 * The bytes of one group's states (nspecs of them) serialized: per
 * aggregate its state (ser_form), then for a sum the length and bytes of
 * its extra numeric and, for generic min/max, the length and bytes of its
 * value.  Sized exactly first, then written in place (TesseraAggSerialWrite):
 * a spill of ten million groups spent a tenth of its time growing
 * StringInfos, and later a palloc and a copy per group.
 */
Size
TesseraAggSerialSize(TAggSpec *specs, int nspecs, TAggState *states)
{
	Size		size = 0;

	for (int k = 0; k < nspecs; k++)
	{
		TAggState  *st = &states[k];

		switch (ser_form(&specs[k]))
		{
			case TAGG_SER_COUNT:
				size += TesseraVarintSize((uint64) st->count);
				continue;
			case TAGG_SER_SUM:
				if (ser_sum_short(st))
				{
					size += 1 + TesseraVarintSize((uint64) st->count) +
						TesseraVarintSize(TesseraZigzag((int64) st->sum));
					continue;
				}
				size += 1 + offsetof(TAggState, extra) + 3 * sizeof(bool);
				break;
			case TAGG_SER_WHOLE:
				size += sizeof(TAggState);
				break;
		}
		size += sizeof(int32);
		if (TAggStateHasSum(&specs[k]) && st->extra)
			size += VARSIZE(st->extra);
		if (specs[k].generic && st->have)
			size += sizeof(int32) + (specs[k].typbyval ? 0 :
									 datumGetSize(st->dbest, false, specs[k].typlen));
	}
	return size;
}

/* ... written at p (TesseraAggSerialSize bytes); the end of them */
char *
TesseraAggSerialWrite(TAggSpec *specs, int nspecs, TAggState *states, char *p)
{
#define SER_PUT(src, n) (memcpy(p, (src), (n)), p += (n))
	for (int k = 0; k < nspecs; k++)
	{
		TAggState  *st = &states[k];
		int32		len;

		switch (ser_form(&specs[k]))
		{
			case TAGG_SER_COUNT:
				p = TesseraVarintPut(p, (uint64) st->count);
				continue;
			case TAGG_SER_SUM:
				if (ser_sum_short(st))
				{
					*p++ = SER_SUM_SHORT;
					p = TesseraVarintPut(p, (uint64) st->count);
					p = TesseraVarintPut(p, TesseraZigzag((int64) st->sum));
					continue;
				}
				*p++ = SER_SUM_LONG;
				SER_PUT(st, offsetof(TAggState, extra));
				SER_PUT(&st->nan, sizeof(bool));
				SER_PUT(&st->pinf, sizeof(bool));
				SER_PUT(&st->ninf, sizeof(bool));
				break;
			case TAGG_SER_WHOLE:
				SER_PUT(st, sizeof(TAggState));
				break;
		}
		len = TAggStateHasSum(&specs[k]) && st->extra ? VARSIZE(st->extra) : 0;
		SER_PUT(&len, sizeof(int32));
		if (len > 0)
			SER_PUT(st->extra, len);
		if (specs[k].generic && st->have)
		{
			TAggSpec   *sp = &specs[k];

			len = sp->typbyval ? 0 : (int32) datumGetSize(st->dbest, false, sp->typlen);
			SER_PUT(&len, sizeof(int32));
			if (len > 0)
				SER_PUT(DatumGetPointer(st->dbest), len);
		}
	}
#undef SER_PUT
	return p;
}

/* One group's states as a bytea (a parallel plan's partial rows, sorted spills). */
Datum
TesseraAggSerialize(TAggSpec *specs, int nspecs, TAggState *states)
{
	Size		size = VARHDRSZ + TesseraAggSerialSize(specs, nspecs, states);
	char	   *buf = palloc(size);
	char	   *end PG_USED_FOR_ASSERTS_ONLY;

	end = TesseraAggSerialWrite(specs, nspecs, states, buf + VARHDRSZ);
	Assert(end == buf + size);
	SET_VARSIZE(buf, size);
	return PointerGetDatum(buf);
}

/* The varint at p into *v. */
static inline const char *
ser_take_varint(const char *p, const char *end, uint64 *v)
{
	p = TesseraVarintGet(p, end, v);
	if (p == NULL)
		elog(ERROR, "TesseraAgg: partial aggregate states truncated");
	return p;
}

/* The next n bytes of a serialized group into dst. */
static inline const char *
ser_take(const char *p, const char *end, void *dst, Size n)
{
	if (end - p < (ptrdiff_t) n)
		elog(ERROR, "TesseraAgg: partial aggregate states truncated");
	memcpy(dst, p, n);
	return p + n;
}

/* Merge one group's serialized states (TesseraAggSerialize) into states. */
void
TesseraAggMergeRow(TAggSpec *specs, int nspecs, TAggState *states, Datum statesd,
				   MemoryContext cxt)
{
	bytea	   *ser = DatumGetByteaPP(statesd);
	const char *p = VARDATA_ANY(ser);
	const char *end = p + VARSIZE_ANY_EXHDR(ser);

	for (int k = 0; k < nspecs; k++)
	{
		TAggState	src;
		int32		len;
		Numeric		extra = NULL;

		memset(&src, 0, sizeof(src));
		switch (ser_form(&specs[k]))
		{
			case TAGG_SER_COUNT:
				{
					uint64		count;

					p = ser_take_varint(p, end, &count);
					src.count = (int64) count;
				}
				merge_state(&specs[k], &states[k], &src, NULL, cxt);
				continue;
			case TAGG_SER_SUM:
				{
					char		tag;

					p = ser_take(p, end, &tag, 1);
					if (tag == SER_SUM_SHORT)
					{
						uint64		count;
						uint64		sum;

						p = ser_take_varint(p, end, &count);
						p = ser_take_varint(p, end, &sum);
						src.count = (int64) count;
						src.sum = TesseraUnzigzag(sum);
						merge_state(&specs[k], &states[k], &src, NULL, cxt);
						continue;
					}
					if (tag != SER_SUM_LONG)
						elog(ERROR, "TesseraAgg: partial aggregate state of unknown form");
				}
				p = ser_take(p, end, &src, offsetof(TAggState, extra));
				p = ser_take(p, end, &src.nan, sizeof(bool));
				p = ser_take(p, end, &src.pinf, sizeof(bool));
				p = ser_take(p, end, &src.ninf, sizeof(bool));
				break;
			case TAGG_SER_WHOLE:
				p = ser_take(p, end, &src, sizeof(TAggState));
				break;
		}
		p = ser_take(p, end, &len, sizeof(int32));
		if (len < 0 || end - p < len)
			elog(ERROR, "TesseraAgg: partial aggregate states truncated");
		if (len > 0)
		{
			extra = palloc(len);
			memcpy(extra, p, len);
			p += len;
		}
		if (specs[k].generic && src.have)
		{
			p = ser_take(p, end, &len, sizeof(int32));
			if (len < 0 || end - p < len)
				elog(ERROR, "TesseraAgg: partial aggregate states truncated");
			if (len > 0)
			{
				char	   *copy = palloc(len);

				memcpy(copy, p, len);
				src.dbest = PointerGetDatum(copy);
				p += len;
			}
			/* by value: the struct carried it */
			TesseraAggGenericAccum(&specs[k], &states[k], src.dbest, cxt);
			continue;
		}
		merge_state(&specs[k], &states[k], &src, extra, cxt);
	}
}

/*
 * Fold one group's states into another's (count(DISTINCT)'s roll-up): what
 * merging their serialized form would do, without the copy.  A
 * count(DISTINCT) counts the source group once if its value is not NULL.
 */
void
TesseraAggCombine(TAggSpec *specs, int nspecs, TAggState *dst, const TAggState *src,
				  bool distinct_notnull, MemoryContext cxt)
{
	for (int k = 0; k < nspecs; k++)
	{
		/* (src has no states if every aggregate is a count(DISTINCT)) */
		if (specs[k].kind == TAGG_COUNT_DISTINCT)
			dst[k].count += distinct_notnull ? 1 : 0;
		else if (specs[k].same_as >= 0)
			continue;			/* its state is another's */
		else if (specs[k].generic)
		{
			if (src[k].have)
				TesseraAggGenericAccum(&specs[k], &dst[k], src[k].dbest, cxt);
		}
		else
			merge_state(&specs[k], &dst[k], &src[k],
						TAggStateHasSum(&specs[k]) ? src[k].extra : NULL, cxt);
	}
}
