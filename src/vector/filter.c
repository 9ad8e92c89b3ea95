/*-------------------------------------------------------------------------
 *
 * filter.c
 *	  Vector filters: quals evaluated by tight loops over a batch's decoded
 *	  columns (or its packed chunks), leaving a selection of rows.
 *
 * NOTES
 *	  A vector qual is `col op value` or `col op col` on integers, dates,
 *	  timestamps, floats or numerics, or `col op value` on strings
 *	  (VecKind).  String quals are decided once per dictionary entry when
 *	  the chunk is dictionary-encoded, else per row: equality and LIKE
 *	  patterns that are a literal between `%`s by comparing bytes
 *	  (memcmp, memmem), anything else by calling the operator's function.  Its value is computed once
 *	  per (re)scan; a date compared with a timestamp becomes a date
 *	  threshold, a numeric a scaled integer.  The quals on one column that
 *	  bound its stored integers are compared together on the packed chunk
 *	  (TesseraBatchRangeFilter) when the encoding allows, decoding nothing;
 *	  the others run over decoded values, branch-free over every row while
 *	  many rows are selected and over a list of the selected rows once few
 *	  are.  NULLs never pass (the operators are strict); NaN orders above
 *	  every float, as PostgreSQL orders it.
 *
 * IDENTIFICATION
 *	  src/vector/filter.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "access/stratnum.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "mb/pg_wchar.h"
#include "nodes/nodeFuncs.h"
#include "port/pg_bitutils.h"
#include "utils/date.h"
#include "utils/datetime.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/float.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/timestamp.h"

#include "tessera/encoding.h"
#include "tessera/vector.h"
#include "strmatch.h"

int128		tessera_pow10[39];

/* Module setup: the powers of ten. */
void
TesseraVectorInit(void)
{
	if (tessera_pow10[0] != 0)
		return;
	tessera_pow10[0] = 1;
	for (int k = 1; k < lengthof(tessera_pow10); k++)
		tessera_pow10[k] = tessera_pow10[k - 1] * 10;
}

/*
 * Set up a vector qual from the planner's description of qual (an OpExpr
 * of the scanned relation): its value expression is the argument the
 * description names, initialized under ps.
 */
void
TesseraVecQualInit(VecQual *vq, List *desc, Node *qual, PlanState *ps)
{
	List	   *args;

	if (IsA(qual, BoolExpr))
	{
		/* AND / OR: the children's descriptions follow the fields */
		List	   *bargs = ((BoolExpr *) qual)->args;

		memset(vq, 0, sizeof(VecQual));
		vq->kind = VEC_BOOL;
		vq->strategy = desc_int(desc, VEC_DESC_STRATEGY);
		vq->attidx = -1;
		vq->nchildren = list_length(bargs);
		vq->children = palloc0(sizeof(VecQual) * vq->nchildren);
		for (int c = 0; c < vq->nchildren; c++)
			TesseraVecQualInit(&vq->children[c], list_nth(desc, VEC_DESC_NFIELDS + c),
							   list_nth(bargs, c), ps);
		return;
	}
	args = IsA(qual, ScalarArrayOpExpr) ? ((ScalarArrayOpExpr *) qual)->args :
		castNode(OpExpr, qual)->args;

	memset(vq, 0, sizeof(VecQual));
	vq->kind = (VecKind) desc_int(desc, VEC_DESC_KIND);
	vq->strategy = desc_int(desc, VEC_DESC_STRATEGY);
	vq->attidx = desc_int(desc, VEC_DESC_ATTIDX);
	vq->attidx2 = desc_int(desc, VEC_DESC_ATTIDX2);
	vq->valtype = (Oid) desc_int(desc, VEC_DESC_VALTYPE);
	vq->value_arg = desc_int(desc, VEC_DESC_VALUE_ARG);
	if (vq->kind != VEC_COLCOL)
		vq->expr = ExecInitExpr((Expr *) list_nth(args, vq->value_arg), ps);
	if (vq->kind == VEC_STRING || vq->kind == VEC_IN)
	{
		vq->collation = (Oid) desc_int(desc, VEC_DESC_COLLATION);
		fmgr_info((Oid) desc_int(desc, VEC_DESC_FUNCID), &vq->flinfo);
	}
	if (vq->kind == VEC_IN && list_length(desc) > VEC_DESC_TRIM)
	{
		vq->prefix_chars = desc_int(desc, VEC_DESC_PREFIX);
		vq->prefix_trim = desc_int(desc, VEC_DESC_TRIM) != 0;
	}
}

/*
 * A date as the timestamp date_cmp_timestamp compares it as: dates past the
 * end of the timestamp range sort after every finite timestamp and before
 * infinity.  Non-decreasing over all dates.
 */
static inline int64
date_as_timestamp(Datum d)
{
	DateADT		date = DatumGetDateADT(d);

	if (DATE_IS_NOBEGIN(date))
		return DT_NOBEGIN;
	if (DATE_IS_NOEND(date))
		return DT_NOEND;
	if (date >= (TIMESTAMP_END_JULIAN - POSTGRES_EPOCH_JDATE))
		return DT_NOEND - 1;
	/* no such date exists; keeps the mapping monotonic for the search below */
	if (date < (DATETIME_MIN_JULIAN - POSTGRES_EPOCH_JDATE))
		return DT_NOBEGIN + 1;
	return (int64) date * USECS_PER_DAY;
}

/* The smallest date that maps above ts (or to ts or above, if !strict). */
static int64
first_date_above(Timestamp ts, bool strict)
{
	int64		lo = PG_INT32_MIN,
				hi = (int64) PG_INT32_MAX + 1;

	while (lo < hi)
	{
		int64		mid = lo + (hi - lo) / 2;
		int64		t = date_as_timestamp(DateADTGetDatum((DateADT) mid));

		if (strict ? t > ts : t >= ts)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/*
 * `date op timestamp` as a comparison of dates: as date_as_timestamp is
 * monotonic, the dates below a timestamp form a prefix.  Equality keeps
 * comparing timestamps.
 */
static void
date_ts_thresholds(VecQual *vq, Timestamp ts)
{
	switch (vq->strategy)
	{
		case BTLessStrategyNumber:
			vq->run_strategy = BTLessStrategyNumber;
			vq->ival = first_date_above(ts, false);
			break;
		case BTLessEqualStrategyNumber:
			vq->run_strategy = BTLessStrategyNumber;
			vq->ival = first_date_above(ts, true);
			break;
		case BTGreaterEqualStrategyNumber:
			vq->run_strategy = BTGreaterEqualStrategyNumber;
			vq->ival = first_date_above(ts, false);
			break;
		case BTGreaterStrategyNumber:
			vq->run_strategy = BTGreaterEqualStrategyNumber;
			vq->ival = first_date_above(ts, true);
			break;
		default:
			vq->ival = ts;
			break;
	}
}

/* sel[i] &= CMP for every row i, or sel[i] = CMP for the listed rows */
/*
 * (The flags are read as bytes: GCC gives no vector type to a load of a
 * bool, and the loop over every row stayed scalar.)
 */
#define VEC_CMP_LOOP(CMP) \
	do { \
		if (idx == NULL) \
			for (int i = 0; i < n; i++) \
				((uint8 *) sel)[i] &= (uint8) ((((const uint8 *) isnull)[i] ^ 1) & (CMP)); \
		else \
			for (int j = 0; j < nidx; j++) \
			{ \
				int			i = idx[j]; \
				sel[i] = (!isnull[i]) & (CMP); \
			} \
	} while (0)

/*
 * How a VEC_STRING qual matches a value's bytes: equality, a LIKE pattern
 * that is a literal with `%` only at its ends, or literals separated by
 * `%`s (LIKE compares literal characters bytewise; in UTF-8 and
 * single-byte encodings a byte match is a character match), or by calling
 * the operator's function.
 */
typedef enum StringShape
{
	SHAPE_CALL,
	SHAPE_EQUAL,				/* the whole value */
	SHAPE_PREFIX,
	SHAPE_SUFFIX,
	SHAPE_CONTAINS,
	SHAPE_ANY,					/* '%': every non-NULL value */
	SHAPE_PARTS					/* 'a%b', '%a%b%': the literals in order */
} StringShape;

/* Is a VEC_STRING qual's answer the negation of its match? */
static inline bool
string_negated(const VecQual *vq)
{
	return vq->strategy == VSTR_NE || vq->strategy == VSTR_NOT_LIKE ||
		vq->strategy == VSTR_NOT_ILIKE;
}

static void
string_prepare(VecQual *vq, Datum d)
{
	text	   *t = DatumGetTextPCopy(d);
	const char *p = VARDATA_ANY(t);
	int			len = VARSIZE_ANY_EXHDR(t),
				lead = 0,
				trail = 0;

	vq->dval = PointerGetDatum(t);
	vq->shape = SHAPE_CALL;
	vq->sbytes = p;
	vq->slen = len;
	/* (the memory of an earlier scan's lowering went with its value's) */
	vq->lowered = NULL;
	vq->lcap = 0;
	if (vq->strategy == VSTR_EQ || vq->strategy == VSTR_NE)
	{
		vq->shape = SHAPE_EQUAL;
		return;
	}
	if (vq->strategy == VSTR_ILIKE || vq->strategy == VSTR_NOT_ILIKE)
	{
		/*
		 * ILIKE in UTF-8 is LIKE of lower(value) and lower(pattern)
		 * (like.c's Generic_Text_IC_like).  The pattern is lowered here
		 * as it does; a value of ASCII bytes is lowered bytewise where the
		 * collation lowers ASCII so (string_passes), any other goes to
		 * the operator's function.  dval stays the pattern as written,
		 * for those calls.
		 */
		text	   *low;

		if (GetDatabaseEncoding() != PG_UTF8 || !TesseraCollationLowersAscii(vq->collation))
			return;
		low = DatumGetTextPP(DirectFunctionCall1Coll(lower, vq->collation, PointerGetDatum(t)));
		p = VARDATA_ANY(low);
		len = VARSIZE_ANY_EXHDR(low);
		vq->sbytes = p;
		vq->slen = len;
	}
	else if ((vq->strategy != VSTR_LIKE && vq->strategy != VSTR_NOT_LIKE) ||
			 (pg_database_encoding_max_length() != 1 && GetDatabaseEncoding() != PG_UTF8))
		return;
	while (lead < len && p[lead] == '%')
		lead++;
	while (trail < len - lead && p[len - 1 - trail] == '%')
		trail++;
	for (int i = lead; i < len - trail; i++)
		if (p[i] == '_' || p[i] == '\\')
			return;
	if (memchr(p + lead, '%', len - lead - trail) != NULL)
	{
		vq->shape = SHAPE_PARTS;
		vq->open_start = lead > 0;
		vq->open_end = trail > 0;
		TesseraStringParts(vq, p, lead, len - trail);
		return;
	}
	vq->sbytes = p + lead;
	vq->slen = len - lead - trail;
	if (vq->slen == 0)
		vq->shape = lead + trail > 0 ? SHAPE_ANY : SHAPE_EQUAL;
	else if (lead > 0 && trail > 0)
		vq->shape = SHAPE_CONTAINS;
	else if (lead > 0)
		vq->shape = SHAPE_SUFFIX;
	else if (trail > 0)
		vq->shape = SHAPE_PREFIX;
	else
		vq->shape = SHAPE_EQUAL;
}

/* Does a (non-NULL) value pass a VEC_STRING qual? */
static inline bool
string_passes(VecQual *vq, Datum v)
{
	bool		match;

	if (vq->shape != SHAPE_CALL && !VARATT_IS_EXTERNAL(DatumGetPointer(v)) &&
		!VARATT_IS_COMPRESSED(DatumGetPointer(v)))
	{
		const char *p = VARDATA_ANY(DatumGetPointer(v));
		int			len = VARSIZE_ANY_EXHDR(DatumGetPointer(v));
		int			slen = vq->slen;

		if ((vq->strategy == VSTR_ILIKE || vq->strategy == VSTR_NOT_ILIKE) &&
			(p = TesseraStringLowered(vq, p, len)) == NULL)
			goto call;

		switch ((StringShape) vq->shape)
		{
			case SHAPE_EQUAL:
				match = len == slen && memcmp(p, vq->sbytes, slen) == 0;
				break;
			case SHAPE_PREFIX:
				match = len >= slen && memcmp(p, vq->sbytes, slen) == 0;
				break;
			case SHAPE_SUFFIX:
				match = len >= slen && memcmp(p + len - slen, vq->sbytes, slen) == 0;
				break;
			case SHAPE_CONTAINS:
				match = len >= slen && find_bytes(p, len, vq->sbytes, slen) != NULL;
				break;
			case SHAPE_PARTS:
				match = TesseraStringPartsMatch(vq, p, len);
				break;
			default:
				match = true;
				break;
		}
		return string_negated(vq) ? !match : match;
	}
call:
	if (vq->value_arg == 1)
		return DatumGetBool(FunctionCall2Coll(&vq->flinfo, vq->collation, v, vq->dval));
	return DatumGetBool(FunctionCall2Coll(&vq->flinfo, vq->collation, vq->dval, v));
}

/*
 * A qual on a string column over a batch, passes() deciding a non-NULL
 * value: once per dictionary entry when the chunk is dictionary-encoded and
 * has fewer entries than rows to look at, else row by row.
 */
static void
string_column_filter(VecQual *vq, TesseraBatch *b, bool *sel, int n, const int *idx, int nidx,
					 bool (*passes) (VecQual *vq, Datum value))
{
	int64	   *codes;
	Datum	   *entries;
	int			ndict;
	MemoryContext old = MemoryContextSwitchTo(b->reader->batch_cxt);

	if (TesseraBatchDict(b, vq->attidx, &codes, &entries, &ndict) &&
		ndict < (idx ? nidx : n))
	{
		/* code -1 (NULL) reads pass[-1] */
		bool	   *pass = (bool *) palloc(ndict + 1) + 1;

		pass[-1] = false;
		for (int e = 0; e < ndict; e++)
			pass[e] = passes(vq, entries[e]);
		if (idx == NULL)
			for (int i = 0; i < n; i++)
				sel[i] &= pass[codes[i]];
		else
			for (int j = 0; j < nidx; j++)
				sel[idx[j]] = pass[codes[idx[j]]];
	}
	else
	{
		Datum	   *values;
		bool	   *isnull;

		TesseraBatchColumn(b, vq->attidx, &values, &isnull);
		if (passes == string_passes && vq->shape == SHAPE_EQUAL && vq->slen == 0)
		{
			/*
			 * s = '' and s <> '' (or LIKE ''): the length alone, without a
			 * call per row (web tables' strings are mostly empty: ClickBench
			 * filters a million SearchPhrases, URLs or Referers in a dozen
			 * queries).  A compressed or external value is never empty.
			 */
			bool		negate = string_negated(vq);

			for (int j = 0; j < (idx ? nidx : n); j++)
			{
				int			i = idx ? idx[j] : j;
				const char *v = DatumGetPointer(values[i]);
				uint8		h;
				bool		empty;

				if (isnull[i])
				{
					sel[i] = false;
					continue;
				}
				/* a one-byte header (or an external value's) decides alone */
				h = *(const uint8 *) v;
				if (h & 0x01)
					empty = h == 0x03;
				else
					empty = !VARATT_IS_COMPRESSED(v) && VARSIZE_4B(v) == VARHDRSZ;
				sel[i] &= empty != negate;
			}
		}
		else
			for (int j = 0; j < (idx ? nidx : n); j++)
			{
				int			i = idx ? idx[j] : j;

				if (sel[i])
					sel[i] = !isnull[i] && passes(vq, values[i]);
			}
	}
	MemoryContextSwitchTo(old);
}

static void
string_filter(VecQual *vq, TesseraBatch *b, bool *sel, int n, const int *idx, int nidx)
{
	string_column_filter(vq, b, sel, n, idx, nidx, string_passes);
}

static int
int64_cmp(const void *a, const void *b)
{
	int64		x = *(const int64 *) a,
				y = *(const int64 *) b;

	return x < y ? -1 : x > y ? 1 : 0;
}

/*
 * A VEC_IN qual's list for this scan: integers sorted, strings detoasted;
 * whether it holds a NULL (then NOT IN passes no row, and IN passes the
 * rows an element equals).
 */
static void
in_prepare(VecQual *vq, Datum d)
{
	ArrayType  *arr = DatumGetArrayTypePCopy(d);
	int16		elmlen;
	bool		elmbyval;
	char		elmalign;
	Datum	   *elems;
	bool	   *nulls;
	int			n;

	get_typlenbyvalalign(ARR_ELEMTYPE(arr), &elmlen, &elmbyval, &elmalign);
	deconstruct_array(arr, ARR_ELEMTYPE(arr), elmlen, elmbyval, elmalign, &elems, &nulls, &n);
	vq->nelems = 0;
	vq->elem_null = false;
	vq->ielems = palloc(sizeof(int64) * Max(n, 1));
	vq->selems = palloc(sizeof(Datum) * Max(n, 1));
	for (int i = 0; i < n; i++)
	{
		if (nulls[i])
		{
			vq->elem_null = true;
			continue;
		}
		if (elmbyval)
			vq->ielems[vq->nelems++] = TesseraIntDatum(elems[i], elmlen);
		else
			vq->selems[vq->nelems++] = PointerGetDatum(PG_DETOAST_DATUM_PACKED(elems[i]));
	}
	if (elmbyval)
		qsort(vq->ielems, vq->nelems, sizeof(int64), int64_cmp);
	/* strings in a deterministic collation, not char(n): compared as bytes */
	vq->shape = !elmbyval && ARR_ELEMTYPE(arr) != BPCHAROID &&
		get_collation_isdeterministic(vq->collation) ? SHAPE_EQUAL : SHAPE_CALL;
}

/* Is v one of a VEC_IN qual's integers? */
static inline bool
in_int_member(const VecQual *vq, int64 v)
{
	int			lo = 0,
				hi = vq->nelems;

	if (vq->nelems <= 8)
	{
		bool		found = false;

		for (int j = 0; j < vq->nelems; j++)
			found |= vq->ielems[j] == v;
		return found;
	}
	while (lo < hi)
	{
		int			mid = (lo + hi) / 2;

		if (vq->ielems[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < vq->nelems && vq->ielems[lo] == v;
}

/*
 * Does a non-NULL string's prefix of vq->prefix_chars characters pass a
 * VEC_IN qual?  The planner took it only in a deterministic collation, of a
 * text or varchar column or a char(n) one cast to text (prefix_trim): byte
 * equality with the elements, as texteq on text_substr's result (the first
 * n characters, all of a shorter string).
 */
static bool
in_prefix_passes(VecQual *vq, Datum v)
{
	bool		in = vq->strategy == 1;
	struct varlena *t = PG_DETOAST_DATUM_PACKED(v);
	const char *data = VARDATA_ANY(t);
	int			len = VARSIZE_ANY_EXHDR(t);

	/* (text(bpchar) drops trailing blanks, as bpchar's rtrim1 does) */
	if (vq->prefix_trim)
		while (len > 0 && data[len - 1] == ' ')
			len--;
	len = pg_mbcharcliplen(data, len, vq->prefix_chars);

	if (!in && vq->elem_null)
		return false;
	for (int j = 0; j < vq->nelems; j++)
	{
		const struct varlena *e = (const struct varlena *) DatumGetPointer(vq->selems[j]);

		if (VARSIZE_ANY_EXHDR(e) == len && memcmp(VARDATA_ANY(e), data, len) == 0)
			return in;
	}
	return !in;
}

/* Does a non-NULL string pass a VEC_IN qual (IN: strategy 1, NOT IN: 0)? */
static bool
in_string_passes(VecQual *vq, Datum v)
{
	bool		in = vq->strategy == 1;

	if (vq->prefix_chars > 0)
		return in_prefix_passes(vq, v);
	if (!in && vq->elem_null)
		return false;
	for (int j = 0; j < vq->nelems; j++)
	{
		bool		r;

		if (vq->shape == SHAPE_EQUAL && !VARATT_IS_EXTERNAL(DatumGetPointer(v)) &&
			!VARATT_IS_COMPRESSED(DatumGetPointer(v)))
		{
			r = VARSIZE_ANY_EXHDR(DatumGetPointer(v)) == VARSIZE_ANY_EXHDR(DatumGetPointer(vq->selems[j])) &&
				memcmp(VARDATA_ANY(DatumGetPointer(v)), VARDATA_ANY(DatumGetPointer(vq->selems[j])),
					   VARSIZE_ANY_EXHDR(DatumGetPointer(v))) == 0;
			if (!in)
				r = !r;
		}
		else
			r = DatumGetBool(FunctionCall2Coll(&vq->flinfo, vq->collation, v, vq->selems[j]));
		/* IN: any element equal; NOT IN: every element unequal */
		if (in && r)
			return true;
		if (!in && !r)
			return false;
	}
	return !in;
}

/*
 * The values of column attidx a qual compares: the column decoded whole,
 * or -- when the rows still selected are listed and few -- just theirs
 * (TesseraBatchColumnRows): a selective qual applied first leaves the
 * later ones a few hundred rows of a row group, which need not decode
 * 10,000.
 */
static inline void
qual_column(TesseraBatch *b, int attidx, int n, const int *idx, int nidx, Datum **values,
			bool **isnull)
{
	TesseraBatchColumnRows(b, attidx, idx, nidx, n, values, isnull);
}

/* A VEC_IN qual over a batch. */
static void
in_filter(VecQual *vq, TesseraBatch *b, bool *sel, int n, const int *idx, int nidx)
{
	Datum	   *values;
	bool	   *isnull;
	bool		in = vq->strategy == 1;

	/*
	 * `<> ALL` of an empty list is true of every row, NULL ones too:
	 * PostgreSQL's ScalarArrayOpExpr answers before it looks at the value
	 */
	if (!in && vq->nelems == 0 && !vq->elem_null)
		return;
	if (TupleDescAttr(b->reader->tupdesc, vq->attidx)->attbyval)
	{
		int16		typlen = TupleDescAttr(b->reader->tupdesc, vq->attidx)->attlen;

		qual_column(b, vq->attidx, n, idx, nidx, &values, &isnull);
		if (!in && vq->elem_null)
			VEC_CMP_LOOP(false);
		else if (in)
			VEC_CMP_LOOP(in_int_member(vq, TesseraIntDatum(values[i], typlen)));
		else
			VEC_CMP_LOOP(!in_int_member(vq, TesseraIntDatum(values[i], typlen)));
		return;
	}
	string_column_filter(vq, b, sel, n, idx, nidx, in_string_passes);
}

/* The value of a vector qual for this (re)scan, in the current memory context. */
void
TesseraVecQualEval(VecQual *vq, ExprContext *econtext)
{
	if (vq->kind == VEC_BOOL)
	{
		vq->run_strategy = vq->strategy;
		vq->isnull = false;
		for (int c = 0; c < vq->nchildren; c++)
			TesseraVecQualEval(&vq->children[c], econtext);
		return;
	}
	if (vq->kind == VEC_COLCOL)
	{
		/* no value: the other column's */
		vq->run_strategy = vq->strategy;
		vq->isnull = false;
		return;
	}
	{
		Datum		d = ExecEvalExprSwitchContext(vq->expr, econtext, &vq->isnull);

		vq->run_strategy = vq->strategy;
		if (vq->isnull)
			return;
		if (vq->kind == VEC_STRING)
		{
			string_prepare(vq, d);
			return;
		}
		if (vq->kind == VEC_IN)
		{
			in_prepare(vq, d);
			return;
		}
		if (vq->kind == VEC_DATE_TS)
		{
			date_ts_thresholds(vq, DatumGetTimestamp(d));
			return;
		}
		switch (vq->valtype)
		{
			case INT2OID:
				vq->ival = DatumGetInt16(d);
				break;
			case INT4OID:
			case DATEOID:
				vq->ival = DatumGetInt32(d);
				break;
			case INT8OID:
			case TIMESTAMPOID:
			case TIMESTAMPTZOID:
				vq->ival = DatumGetInt64(d);
				break;
			case FLOAT4OID:
				vq->fval = DatumGetFloat4(d);
				break;
			case FLOAT8OID:
				vq->fval = DatumGetFloat8(d);
				break;
			case NUMERICOID:
				vq->dval = datumCopy(d, false, -1);
				vq->scaled = TesseraNumericScaled(vq->dval, &vq->nval, &vq->nscale);
				break;
		}
	}
}


#define VEC_LOOP(GET, VAL, LT, LE, EQ) \
	do { \
		switch (strategy) \
		{ \
			case BTLessStrategyNumber: \
				VEC_CMP_LOOP(LT(GET(values[i]), VAL)); \
				break; \
			case BTLessEqualStrategyNumber: \
				VEC_CMP_LOOP(LE(GET(values[i]), VAL)); \
				break; \
			case BTEqualStrategyNumber: \
				VEC_CMP_LOOP(EQ(GET(values[i]), VAL)); \
				break; \
			case BTGreaterEqualStrategyNumber: \
				VEC_CMP_LOOP(LE(VAL, GET(values[i]))); \
				break; \
			case BTGreaterStrategyNumber: \
				VEC_CMP_LOOP(LT(VAL, GET(values[i]))); \
				break; \
			case TESSERA_NE_STRATEGY: \
				VEC_CMP_LOOP(!EQ(GET(values[i]), VAL)); \
				break; \
		} \
	} while (0)

#define NUM_LT(a, b) ((a) < (b))
#define NUM_LE(a, b) ((a) <= (b))
#define NUM_EQ(a, b) ((a) == (b))

/*
 * `numeric column op value` over a batch.  A decimal-encoded chunk is
 * compared as integers at the chunk's scale: against the value rounded
 * down (fl) and up (ce) to that scale, which decide every strategy
 * exactly.  Other chunks, and values that do not fit, use numeric_cmp.
 */
static bool
numeric_bounds(VecQual *vq, int cmax, int128 *fl, int128 *ce, bool *exact)
{
	if (!vq->scaled || cmax < 0 || cmax >= (int) lengthof(tessera_pow10) ||
		vq->nscale >= (int) lengthof(tessera_pow10))
		return false;
	if (vq->nscale <= cmax)
	{
		*exact = true;
		if (__builtin_mul_overflow(vq->nval, tessera_pow10[cmax - vq->nscale], fl))
			return false;
		*ce = *fl;
	}
	else
	{
		int128		p = tessera_pow10[vq->nscale - cmax];
		int128		r = vq->nval % p;

		*fl = vq->nval / p - (r < 0 ? 1 : 0);
		*exact = r == 0;
		*ce = *exact ? *fl : *fl + 1;
	}
	return true;
}

static void
numeric_filter(VecQual *vq, TesseraBatch *b, bool *sel, int n, const int *idx, int nidx)
{
	int128	   *v;
	int64	   *scales;
	bool	   *isnull;
	int			cmax;
	int128		fl = 0,
				ce = 0;
	bool		exact = false,
				fits = false;

	if (vq->scaled && TesseraBatchScaled(b, vq->attidx, &v, &scales, &isnull, &cmax))
		fits = numeric_bounds(vq, cmax, &fl, &ce, &exact);
	if (fits)
	{
		switch (vq->strategy)
		{
			case BTLessStrategyNumber:
				VEC_CMP_LOOP(v[i] < ce);
				break;
			case BTLessEqualStrategyNumber:
				VEC_CMP_LOOP(v[i] <= fl);
				break;
			case BTEqualStrategyNumber:
				VEC_CMP_LOOP(exact & (v[i] == fl));
				break;
			case BTGreaterEqualStrategyNumber:
				VEC_CMP_LOOP(v[i] >= ce);
				break;
			case BTGreaterStrategyNumber:
				VEC_CMP_LOOP(v[i] > fl);
				break;
			case TESSERA_NE_STRATEGY:
				VEC_CMP_LOOP(!exact | (v[i] != fl));
				break;
		}
	}
	else
	{
		Datum	   *values;
		MemoryContext old = MemoryContextSwitchTo(b->reader->batch_cxt);

		TesseraBatchColumn(b, vq->attidx, &values, &isnull);
		for (int j = 0; j < (idx ? nidx : n); j++)
		{
			int			i = idx ? idx[j] : j;
			int			c;

			if (!sel[i])
				continue;
			if (isnull[i])
			{
				sel[i] = false;
				continue;
			}
			c = DatumGetInt32(DirectFunctionCall2(numeric_cmp, values[i], vq->dval));
			switch (vq->strategy)
			{
				case BTLessStrategyNumber:
					sel[i] = c < 0;
					break;
				case BTLessEqualStrategyNumber:
					sel[i] = c <= 0;
					break;
				case BTEqualStrategyNumber:
					sel[i] = c == 0;
					break;
				case BTGreaterEqualStrategyNumber:
					sel[i] = c >= 0;
					break;
				case BTGreaterStrategyNumber:
					sel[i] = c > 0;
					break;
				case TESSERA_NE_STRATEGY:
					sel[i] = c != 0;
					break;
			}
		}
		MemoryContextSwitchTo(old);
	}
}


#define RANGE_MIN	(-(int128) ((uint128) 1 << 126))
#define RANGE_MAX	((int128) ((uint128) 1 << 126))

/* Can vq be a bound on the stored integers of its column? */
static inline bool
range_qual(const VecQual *vq)
{
	switch (vq->kind)
	{
		case VEC_INT:
			return true;
		case VEC_DATE_TS:
			/* (in)equality compares timestamps, the others date thresholds */
			return vq->strategy != BTEqualStrategyNumber &&
				vq->strategy != TESSERA_NE_STRATEGY;
		case VEC_NUMERIC:
			return vq->scaled;
		default:
			return false;
	}
}

/*
 * Narrow [*lo, *hi] by vq, on the stored integers of its column (numerics
 * at the chunk's scale cmax).  False if it cannot be expressed so.
 */
static bool
range_narrow(VecQual *vq, int cmax, int128 *lo, int128 *hi)
{
	int128		fl,
				ce;
	bool		exact;

	if (vq->kind == VEC_NUMERIC)
	{
		if (!numeric_bounds(vq, cmax, &fl, &ce, &exact))
			return false;
	}
	else
	{
		fl = ce = vq->ival;
		exact = true;
	}
	switch (vq->run_strategy)
	{
		case BTLessStrategyNumber:
			*hi = Min(*hi, ce - 1);
			break;
		case BTLessEqualStrategyNumber:
			*hi = Min(*hi, fl);
			break;
		case BTEqualStrategyNumber:
			if (!exact)
				*hi = RANGE_MIN;	/* no stored value equals it */
			*lo = Max(*lo, fl);
			*hi = Min(*hi, fl);
			break;
		case BTGreaterEqualStrategyNumber:
			*lo = Max(*lo, ce);
			break;
		case BTGreaterStrategyNumber:
			*lo = Max(*lo, fl + 1);
			break;
		default:
			return false;
	}
	return true;
}

/*
 * The quals on the column of vquals[q] that bound its stored integers,
 * from q on, applied together as one range compared on the encoded chunk
 * (TesseraBatchRangeFilter): `x >= a AND x < b` reads the column once and
 * decodes nothing; `x <> c` alone, as the values outside [c, c].  Marks the
 * quals applied in done[]; false if the chunk needs the decoded column.
 */
static bool
range_apply(VecQual *vquals, int nvq, int q, bool *done, TesseraBatch *b, bool *sel, int n,
			const int *idx, int nidx)
{
	int			attidx = vquals[q].attidx;
	int			cmax = 0;
	int128		lo = RANGE_MIN,
				hi = RANGE_MAX;
	bool		member[64];

	if (nvq > (int) lengthof(member))
		return false;
	if (vquals[q].kind == VEC_NUMERIC && !TesseraBatchDecimalScale(b, attidx, &cmax))
		return false;
	if (vquals[q].run_strategy == TESSERA_NE_STRATEGY)
	{
		/* `x <> c`: the values outside [c, c] (every one if no stored value is c) */
		int128		ce;
		bool		exact = true;

		lo = hi = vquals[q].ival;
		if (vquals[q].kind == VEC_NUMERIC && !numeric_bounds(&vquals[q], cmax, &lo, &ce, &exact))
			return false;
		if (!exact)
			lo = 1, hi = 0;
		else
			hi = lo;
		if (TesseraBatchRangeFilter(b, attidx, lo, hi, true, sel, n, idx, nidx) !=
			TESSERA_FILTER_DONE)
			return false;
		done[q] = true;
		return true;
	}
	for (int r = q; r < nvq; r++)
	{
		VecQual    *vq = &vquals[r];

		member[r] = !done[r] && !vq->isnull && vq->attidx == attidx && range_qual(vq) &&
			(vq->kind == VEC_NUMERIC) == (vquals[q].kind == VEC_NUMERIC) &&
			range_narrow(vq, cmax, &lo, &hi);
	}
	if (!member[q])
		return false;
	if (TesseraBatchRangeFilter(b, attidx, lo, hi, false, sel, n, idx, nidx) != TESSERA_FILTER_DONE)
		return false;
	for (int r = q; r < nvq; r++)
		done[r] |= member[r];
	return true;
}

static void vec_apply_one(VecQual *vq, TesseraBatch *b, bool *sel, int n, const int *idx,
						  int nidx);

/*
 * A child of AND / OR over the rows selected (all n, or those listed in
 * idx): sel[i] &= child holds.  A child whose value is NULL holds for no
 * row.
 */
static void
vec_apply_child(VecQual *vq, TesseraBatch *b, bool *sel, int n, const int *idx, int nidx)
{
	if (vq->isnull)
	{
		if (idx == NULL)
			memset(sel, false, n);
		else
			for (int j = 0; j < nidx; j++)
				sel[idx[j]] = false;
		return;
	}
	vec_apply_one(vq, b, sel, n, idx, nidx);
}

/*
 * AND / OR of vector quals.  AND applies its children in turn, OR each on
 * a copy of the selection, keeping a row any of them keeps: a row passes
 * when the AND / OR is true (SQL's NULL is not true either way).
 */
static void
bool_filter(VecQual *vq, TesseraBatch *b, bool *sel, int n, const int *idx, int nidx)
{
	MemoryContext old = MemoryContextSwitchTo(b->reader->batch_cxt);

	if (vq->strategy == 1)
	{
		int		   *list = idx ? palloc(sizeof(int) * Max(nidx, 1)) : NULL;
		int			m = nidx;

		if (idx)
			memcpy(list, idx, sizeof(int) * nidx);
		for (int c = 0; c < vq->nchildren; c++)
		{
			vec_apply_child(&vq->children[c], b, sel, n, list, m);
			if (list)
			{
				/* the next child looks at the rows still selected */
				int			k = 0;

				for (int j = 0; j < m; j++)
				{
					list[k] = list[j];
					k += sel[list[j]];
				}
				m = k;
			}
		}
	}
	else
	{
		bool	   *any = palloc0(n);
		bool	   *tmp = palloc(n);

		for (int c = 0; c < vq->nchildren; c++)
		{
			memcpy(tmp, sel, n);
			vec_apply_child(&vq->children[c], b, tmp, n, idx, nidx);
			for (int i = 0; i < n; i++)
				any[i] |= tmp[i];
		}
		if (idx == NULL)
			for (int i = 0; i < n; i++)
				sel[i] &= any[i];
		else
			for (int j = 0; j < nidx; j++)
				sel[idx[j]] = any[idx[j]];
	}
	MemoryContextSwitchTo(old);
}

/* sel[i] &= vq holds for row i (the rows in idx only, if listed). */
static void
vec_apply_one(VecQual *vq, TesseraBatch *b, bool *sel, int n, const int *idx, int nidx)
{
	Datum	   *values;
	bool	   *isnull;
	int			strategy = vq->run_strategy;

	if (vq->kind == VEC_BOOL)
	{
		bool_filter(vq, b, sel, n, idx, nidx);
		return;
	}
	if (vq->kind != VEC_NUMERIC && vq->kind != VEC_STRING && vq->kind != VEC_IN)
		qual_column(b, vq->attidx, n, idx, nidx, &values, &isnull);
	switch (vq->kind)
	{
		case VEC_INT:
			{
				int16		typlen = TupleDescAttr(b->reader->tupdesc, vq->attidx)->attlen;
				int64		v = vq->ival;

				if (typlen == 4)
					VEC_LOOP(DatumGetInt32, v, NUM_LT, NUM_LE, NUM_EQ);
				else if (typlen == 8)
					VEC_LOOP(DatumGetInt64, v, NUM_LT, NUM_LE, NUM_EQ);
				else
					VEC_LOOP(DatumGetInt16, v, NUM_LT, NUM_LE, NUM_EQ);
				break;
			}
		case VEC_FLOAT4:
			{
				float4		v = (float4) vq->fval;

				VEC_LOOP(DatumGetFloat4, v, float4_lt, float4_le, float4_eq);
				break;
			}
		case VEC_FLOAT8:
			{
				float8		v = vq->fval;

				VEC_LOOP(DatumGetFloat8, v, float8_lt, float8_le, float8_eq);
				break;
			}
		case VEC_DATE_TS:
			{
				int64		v = vq->ival;

				if (strategy == BTEqualStrategyNumber || strategy == TESSERA_NE_STRATEGY)
					VEC_LOOP(date_as_timestamp, v, NUM_LT, NUM_LE, NUM_EQ);
				else
					VEC_LOOP(DatumGetDateADT, v, NUM_LT, NUM_LE, NUM_EQ);
				break;
			}
		case VEC_COLCOL:
			{
				Datum	   *values2;
				bool	   *isnull2;
				int16		typlen = TupleDescAttr(b->reader->tupdesc, vq->attidx)->attlen;

				qual_column(b, vq->attidx2, n, idx, nidx, &values2, &isnull2);
#define COLCOL_LOOP(GET) \
				switch (strategy) \
				{ \
					case BTLessStrategyNumber: \
						VEC_CMP_LOOP((((const uint8 *) isnull2)[i] ^ 1) & (GET(values[i]) < GET(values2[i]))); \
						break; \
					case BTLessEqualStrategyNumber: \
						VEC_CMP_LOOP((((const uint8 *) isnull2)[i] ^ 1) & (GET(values[i]) <= GET(values2[i]))); \
						break; \
					case BTEqualStrategyNumber: \
						VEC_CMP_LOOP((((const uint8 *) isnull2)[i] ^ 1) & (GET(values[i]) == GET(values2[i]))); \
						break; \
					case BTGreaterEqualStrategyNumber: \
						VEC_CMP_LOOP((((const uint8 *) isnull2)[i] ^ 1) & (GET(values[i]) >= GET(values2[i]))); \
						break; \
					case BTGreaterStrategyNumber: \
						VEC_CMP_LOOP((((const uint8 *) isnull2)[i] ^ 1) & (GET(values[i]) > GET(values2[i]))); \
						break; \
					case TESSERA_NE_STRATEGY: \
						VEC_CMP_LOOP((((const uint8 *) isnull2)[i] ^ 1) & (GET(values[i]) != GET(values2[i]))); \
						break; \
				}
				if (typlen == 2)
					COLCOL_LOOP(DatumGetInt16)
				else if (typlen == 4)
					COLCOL_LOOP(DatumGetInt32)
				else
					COLCOL_LOOP(DatumGetInt64)
#undef COLCOL_LOOP
				break;
			}
		case VEC_NUMERIC:
			numeric_filter(vq, b, sel, n, idx, nidx);
			break;
		case VEC_STRING:
			string_filter(vq, b, sel, n, idx, nidx);
			break;
		case VEC_IN:
			in_filter(vq, b, sel, n, idx, nidx);
			break;
		case VEC_BOOL:
			break;				/* above */
	}
}

/*
 * What applying a qual costs per row it looks at, relative to comparing a
 * decoded integer: strings are compared byte by byte (or through the
 * collation), numerics through their scaled integers or numeric_cmp.
 */
static float8
qual_cost(const VecQual *vq)
{
	float8		cost = 0;

	switch (vq->kind)
	{
		case VEC_STRING:
			return 4;
		case VEC_NUMERIC:
		case VEC_COLCOL:
			return 2;
		case VEC_IN:
			return vq->selems != NULL ? 4 : 1;
		case VEC_BOOL:
			for (int c = 0; c < vq->nchildren; c++)
				cost += qual_cost(&vq->children[c]);
			return cost;
		default:
			return 1;
	}
}

/* The rank that orders quals: cheap ones that drop many rows first. */
static inline float8
qual_rank(const VecQual *vq)
{
	float8		drop = 1.0 - (vq->pass_known ? vq->pass_rate : 0.5);

	return qual_cost(vq) / Max(drop, 0.001);
}

/*
 * Put the quals in the order that costs least for the rows they have been
 * keeping: each qual looks only at the rows the ones before it kept, so a
 * cheap qual that keeps 2% of the rows goes before one that keeps them
 * all (ClickBench's `RefererHash = c` after four quals that keep 40-100%
 * of its rows).  The order among conjuncts is free -- the planner orders
 * them by cost, and no vector qual raises an error on a value -- so the
 * rows kept are the same in any order.  A stable insertion sort: quals
 * that rank alike keep the planner's order.
 */
static void
order_quals(VecQual *vquals, int nvq)
{
	for (int i = 1; i < nvq; i++)
	{
		float8		rank = qual_rank(&vquals[i]);
		VecQual		moved;
		int			j = i;

		if (qual_rank(&vquals[i - 1]) <= rank)
			continue;
		moved = vquals[i];
		while (j > 0 && qual_rank(&vquals[j - 1]) > rank)
		{
			vquals[j] = vquals[j - 1];
			j--;
		}
		vquals[j] = moved;
	}
}

/* Fold a batch's share of rows kept into the qual's smoothed pass rate. */
static inline void
note_pass(VecQual *vq, int looked, int kept)
{
	float8		rate;

	if (looked <= 0)
		return;
	rate = (float8) kept / looked;
	vq->pass_rate = vq->pass_known ? 0.75 * vq->pass_rate + 0.25 * rate : rate;
	vq->pass_known = true;
}

/*
 * Count the rows still selected after vq (those listed, if listed), note
 * its pass rate over the *live rows it looked at, and make them *live;
 * false when none is left.
 */
static bool
count_kept(VecQual *vq, const bool *sel, int n, const int *idx, int nidx, int *live)
{
	int			kept = 0;

	if (idx != NULL)
	{
		for (int j = 0; j < nidx; j++)
			kept += sel[idx[j]] ? 1 : 0;
	}
	else
		kept = (int) TesseraSelCount(sel, n);
	note_pass(vq, *live, kept);
	*live = kept;
	return kept > 0;
}

/*
 * sel[i] = every qual of vquals holds for row i of the batch.  idxbuf:
 * room for a row number per row.  The quals are applied in the order their
 * pass rates so far make cheapest (order_quals), and not at all once no row
 * is left.
 */
void
TesseraVecApply(VecQual *vquals, int nvq, TesseraBatch *b, bool *sel, int n, int *idxbuf)
{
	int		   *idx = NULL;
	int			nidx = 0;
	bool		done[64] = {0};
	bool		applied = false;
	int			live = n;

	memset(sel, true, n);
	if (nvq > 1)
		order_quals(vquals, nvq);

	for (int q = 0; q < nvq; q++)
	{
		VecQual    *vq = &vquals[q];

		if (vq->isnull)
		{
			memset(sel, false, n);
			break;
		}
		if (q < (int) lengthof(done) && done[q])
			continue;

		/* the rows listed so far, less those the previous qual dropped */
		if (idx != NULL)
		{
			int			k = 0;

			for (int j = 0; j < nidx; j++)
			{
				idx[k] = idx[j];
				k += sel[idx[j]];
			}
			nidx = k;
		}

		/*
		 * A range compared on the packed chunk costs about what listing the
		 * rows left would (it runs over every row until they are listed), so
		 * it is tried first; only quals on decoded values list the rows.
		 */
		if (range_qual(vq) && q < (int) lengthof(done) &&
			range_apply(vquals, nvq, q, done, b, sel, n, idx, nidx))
		{
			applied = true;
			if (nvq > 1 && !count_kept(vq, sel, n, idx, nidx, &live))
				break;
			continue;
		}

		/* once few rows are left, later quals look at those rows only */
		if (applied && idx == NULL)
		{
			int			k = 0;

			/* a sample decides whether listing the rows pays */
			for (int i = 0; i < n; i += 16)
				k += sel[i];
			if (k * 16 * 4 < n)
			{
				idx = idxbuf;
				nidx = TesseraSelRows(sel, n, idx);
			}
		}
		applied = true;

		vec_apply_one(vq, b, sel, n, idx, nidx);
		if (nvq > 1 && !count_kept(vq, sel, n, idx, nidx, &live))
			break;
	}

}

