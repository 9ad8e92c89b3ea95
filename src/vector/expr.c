/*-------------------------------------------------------------------------
 *
 * expr.c
 *	  sum/avg arguments of numeric arithmetic (+, -, * over numeric columns
 *	  and constants), evaluated over a batch on scaled 128-bit integers.
 *
 * NOTES
 *	  A VExpr is built from the planner's description.  Evaluating it gives,
 *	  per row, an integer v scaled by 10^-scale and the display scale
 *	  numeric.c would give the result (products add their operands' scales,
 *	  sums take the larger), so that sums of it equal numeric_add's.  Bounds
 *	  on the operands' magnitudes pick loops without overflow checks where
 *	  none can overflow; where one could, the checked loops report it and
 *	  the caller computes with numerics instead (TesseraVxDatum).
 *
 * IDENTIFICATION
 *	  src/vector/expr.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/fmgrprotos.h"
#include "utils/memutils.h"
#include "utils/numeric.h"

#include "tessera/encoding.h"
#include "tessera/vector.h"

/* The VExpr of a planner description (plan.h, VX_DESC_*). */
VExpr *
TesseraVxBuild(List *desc)
{
	VExpr	   *vx = palloc0(sizeof(VExpr));

	vx->kind = (VxKind) desc_int(desc, VX_DESC_KIND);
	switch (vx->kind)
	{
		case VX_VAR:
			vx->attidx = desc_int(desc, VX_DESC_ATTIDX);
			break;
		case VX_INTVAR:
			vx->attidx = desc_int(desc, VX_DESC_ATTIDX);
			vx->typlen = desc_int(desc, VX_DESC_CONST);
			break;
		case VX_CONST:
			{
				Const	   *c = castNode(Const, list_nth(desc, VX_DESC_CONST));

				vx->cdatum = c->constvalue;
				if (!TesseraNumericScaled(c->constvalue, &vx->cval, &vx->cscale))
					elog(ERROR, "TesseraAgg: constant out of range");
				break;
			}
		default:
			vx->l = TesseraVxBuild(list_nth(desc, VX_DESC_LEFT));
			vx->r = TesseraVxBuild(list_nth(desc, VX_DESC_RIGHT));
			break;
	}
	return vx;
}

static inline int
bits128(uint128 u)
{
	uint64		hi = (uint64) (u >> 64),
				lo = (uint64) u;

	return hi ? 128 - __builtin_clzll(hi) : lo ? 64 - __builtin_clzll(lo) : 0;
}

static inline uint128
abs128(int128 x)
{
	return x < 0 ? -(uint128) x : (uint128) x;
}

/*
 * Evaluate vx over the batch on scaled integers.  False if some column is
 * not decimal-encoded or some value does not fit 128 bits (or 38 decimals
 * of scale): the caller then computes with numerics.  Magnitude bounds
 * choose loops without overflow checks where no overflow can happen.
 */
static void
vx_reserve(MemoryContext bufcxt, VExpr *vx, int n)
{
	if (vx->cap < n)
	{
		vx->cap = Max(n, 1024);
		vx->buf_v = MemoryContextAllocHuge(bufcxt, sizeof(int128) * vx->cap);
		vx->buf_dsc = MemoryContextAllocHuge(bufcxt, sizeof(int64) * vx->cap);
		vx->buf_null = MemoryContextAllocHuge(bufcxt, vx->cap);
	}
}

/*
 * A column's values in rows[0..n) of the batch, gathered into vx's buffers
 * (few rows selected: only theirs are decoded).
 */
static bool
vx_gather(MemoryContext bufcxt, VExpr *vx, TesseraBatch *b, const int *rows, int n, VxVal *out)
{
	int			cmax;
	uint128		acc = 0;
	bool		anynull = false;
	int64		first = -1;
	bool		uniform = true;

	vx_reserve(bufcxt, vx, n);
	if (!TesseraBatchScaledGather(b, vx->attidx, rows, n, vx->buf_v, vx->buf_dsc, vx->buf_null,
								  &cmax))
		return false;
	for (int j = 0; j < n; j++)
	{
		acc |= abs128(vx->buf_v[j]);
		anynull |= vx->buf_null[j];
		if (!vx->buf_null[j])
		{
			if (first < 0)
				first = vx->buf_dsc[j];
			uniform &= vx->buf_dsc[j] == first;
		}
	}
	out->v = vx->buf_v;
	out->isnull = anynull ? vx->buf_null : NULL;
	out->scale = cmax;
	out->bits = bits128(acc);
	out->dsc = uniform ? NULL : vx->buf_dsc;
	out->dsc_all = uniform ? Max(first, 0) : 0;
	return true;
}

/* An integer of a column of length typlen. */
static inline int64
vx_int(Datum d, int typlen)
{
	return typlen == 2 ? DatumGetInt16(d) : typlen == 4 ? DatumGetInt32(d) : DatumGetInt64(d);
}

/*
 * An integer column's values (cast to numeric: scale 0, display scale 0) in
 * the batch's rows[0..n), or rows 0..n if rows is NULL.  Always true.
 */
static bool
vx_ints(MemoryContext bufcxt, VExpr *vx, TesseraBatch *b, const int *rows, int n, VxVal *out)
{
	Datum	   *values = NULL;
	bool	   *nulls = NULL;
	uint64		acc = 0;
	bool		anynull = false;

	vx_reserve(bufcxt, vx, n);
	if (rows == NULL)
		TesseraBatchColumn(b, vx->attidx, &values, &nulls);
	for (int j = 0; j < n; j++)
	{
		bool		isnull;
		Datum		d = rows == NULL ? values[j] : TesseraBatchValue(b, vx->attidx, rows[j], &isnull);
		int64		v;

		if (rows == NULL)
			isnull = nulls[j];
		v = isnull ? 0 : vx_int(d, vx->typlen);
		vx->buf_v[j] = v;
		vx->buf_null[j] = isnull;
		anynull |= isnull;
		acc |= v < 0 ? -(uint64) v : (uint64) v;
	}
	out->v = vx->buf_v;
	out->isnull = anynull ? vx->buf_null : NULL;
	out->scale = 0;
	out->bits = bits128(acc);
	out->dsc = NULL;
	out->dsc_all = 0;
	return true;
}

bool
TesseraVxEval(VExpr *vx, TesseraBatch *b, const int *rows, int n, VxVal *out,
			  MemoryContext bufcxt)
{
	VxVal		l,
				r;
	int128		lm = 1,
				rm = 1;
	bool		overflow = false;
	int			m;

	memset(out, 0, sizeof(VxVal));
	switch (vx->kind)
	{
		case VX_VAR:
			{
				int			cmax;

				if (rows != NULL)
					return vx_gather(bufcxt, vx, b, rows, n, out);
				if (!TesseraBatchScaledInfo(b, vx->attidx, &out->v, &out->dsc, &out->isnull,
											&cmax, &out->bits, &out->dsc_all))
					return false;
				/* no NULLs (the usual case): no null flags to merge per row */
				if (memchr(out->isnull, true, n) == NULL)
					out->isnull = NULL;
				out->scale = cmax;
				if (out->dsc_all >= 0)
					out->dsc = NULL;
				else
					out->dsc_all = 0;
				return true;
			}
		case VX_INTVAR:
			return vx_ints(bufcxt, vx, b, rows, n, out);
		case VX_CONST:
			out->scalar = true;
			out->scale = vx->cscale;
			out->v = &vx->cval;
			out->dsc_all = vx->cscale;
			out->bits = bits128(abs128(vx->cval));
			return true;
		default:
			break;
	}
	if (!TesseraVxEval(vx->l, b, rows, n, &l, bufcxt) || !TesseraVxEval(vx->r, b, rows, n, &r, bufcxt))
		return false;
	vx_reserve(bufcxt, vx, n);
	out->scalar = l.scalar && r.scalar;
	m = out->scalar ? 1 : n;
	out->v = vx->buf_v;
	if (vx->kind == VX_MUL)
	{
		out->scale = l.scale + r.scale;
		if (out->scale >= (int) lengthof(tessera_pow10))
			return false;
		out->bits = l.bits + r.bits;
	}
	else
	{
		out->scale = Max(l.scale, r.scale);
		lm = tessera_pow10[out->scale - l.scale];
		rm = tessera_pow10[out->scale - r.scale];
		out->bits = Max(l.bits + bits128(lm), r.bits + bits128(rm)) + 1;
	}

	/* NULL if either side is */
	if (l.isnull && r.isnull)
	{
		out->isnull = vx->buf_null;
		for (int i = 0; i < m; i++)
			out->isnull[i] = l.isnull[i] | r.isnull[i];
	}
	else if (l.isnull || r.isnull)
		out->isnull = l.isnull ? l.isnull : r.isnull;

	/* display scales: numeric_mul adds them, numeric_add/sub take the larger */
	if (l.dsc == NULL && r.dsc == NULL)
		out->dsc_all = vx->kind == VX_MUL ? l.dsc_all + r.dsc_all : Max(l.dsc_all, r.dsc_all);
	else
	{
		out->dsc = vx->buf_dsc;
		for (int i = 0; i < m; i++)
		{
			int64		da = l.dsc ? l.dsc[i] : l.dsc_all,
						dc = r.dsc ? r.dsc[i] : r.dsc_all;

			out->dsc[i] = vx->kind == VX_MUL ? da + dc : Max(da, dc);
		}
	}

	/* the values: each side a vector or a constant */
#define VX_LOOP(OP) \
	do { \
		if (!l.scalar && !r.scalar) \
			for (int i = 0; i < m; i++) { int128 a = l.v[i], c = r.v[i]; OP; } \
		else if (!l.scalar) \
			for (int i = 0; i < m; i++) { int128 a = l.v[i], c = r.v[0]; OP; } \
		else if (!r.scalar) \
			for (int i = 0; i < m; i++) { int128 a = l.v[0], c = r.v[i]; OP; } \
		else \
			{ int i = 0; int128 a = l.v[0], c = r.v[0]; OP; } \
	} while (0)

	if (out->bits <= 126)
	{
		int128	   *v = out->v;

		switch (vx->kind)
		{
			case VX_MUL:
				/* operands of 63 bits or fewer: one widening 64-bit multiply */
				if (l.bits <= 63 && r.bits <= 63)
					VX_LOOP(v[i] = (int128) (int64) a * (int64) c);
				else
					VX_LOOP(v[i] = a * c);
				break;
			case VX_ADD:
				VX_LOOP(v[i] = a * lm + c * rm);
				break;
			default:
				VX_LOOP(v[i] = a * lm - c * rm);
				break;
		}
	}
	else
	{
		int128	   *v = out->v;
		bool	   *isnull = out->isnull;

		/* values of NULL rows are not looked at: they may be anything */
		switch (vx->kind)
		{
			case VX_MUL:
				VX_LOOP(if (!(isnull && isnull[i])) overflow |= __builtin_mul_overflow(a, c, &v[i]));
				break;
			default:
				VX_LOOP(if (!(isnull && isnull[i]))
						{
							overflow |= __builtin_mul_overflow(a, lm, &a);
							overflow |= __builtin_mul_overflow(c, rm, &c);
							if (vx->kind == VX_ADD)
								overflow |= __builtin_add_overflow(a, c, &v[i]);
							else
								overflow |= __builtin_sub_overflow(a, c, &v[i]);
						});
				break;
		}
		out->bits = 127;
	}
#undef VX_LOOP
	return !overflow;
}

/* vx of one row as a numeric (NULL if an input is NULL), as numeric.c computes it. */
Datum
TesseraVxDatum(VExpr *vx, TesseraBatch *b, int row, bool *isnull)
{
	Datum		l,
				r;

	switch (vx->kind)
	{
		case VX_VAR:
			/* decodes just this value if the batch is sparse */
			return TesseraBatchValue(b, vx->attidx, row, isnull);
		case VX_INTVAR:
			l = TesseraBatchValue(b, vx->attidx, row, isnull);
			if (*isnull)
				return (Datum) 0;
			return DirectFunctionCall1(vx->typlen == 2 ? int2_numeric :
									   vx->typlen == 4 ? int4_numeric : int8_numeric, l);
		case VX_CONST:
			*isnull = false;
			return vx->cdatum;
		default:
			break;
	}
	l = TesseraVxDatum(vx->l, b, row, isnull);
	if (*isnull)
		return (Datum) 0;
	r = TesseraVxDatum(vx->r, b, row, isnull);
	if (*isnull)
		return (Datum) 0;
	return DirectFunctionCall2(vx->kind == VX_ADD ? numeric_add :
							   vx->kind == VX_SUB ? numeric_sub : numeric_mul, l, r);
}

