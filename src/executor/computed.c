/*-------------------------------------------------------------------------
 *
 * computed.c
 *	  Expressions TesseraAgg computes per row -- group keys and aggregate
 *	  arguments that are not plain columns -- into per-batch arrays that the
 *	  group table and the aggregate loops read as if they were columns.
 *
 * NOTES
 *	  PostgreSQL's expression evaluator does the work, over a virtual slot
 *	  of the relation's row filled from the batch's decoded columns, for the
 *	  rows the aggregation counts and no other (an expression may raise an
 *	  error on a row PostgreSQL would never have evaluated it on).
 *
 *	  An expression of one string column is evaluated once per distinct
 *	  value: once per dictionary entry a counted row has, when the chunk is
 *	  dictionary-encoded, and through a memo of the values already seen
 *	  (their results kept across batches, within work_mem) otherwise.  The
 *	  expressions are immutable or stable, so a value's result cannot
 *	  change within the statement.  (A regular expression costs a few
 *	  microseconds a row; ClickBench's REGEXP_REPLACE over a Referer of
 *	  90,000 values in a million rows is the case.)  The other expressions
 *	  run row by row as one projection, each row's columns set once, as
 *	  PostgreSQL's Agg evaluates its arguments.
 *
 * IDENTIFICATION
 *	  src/executor/computed.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/sysattr.h"
#include "common/hashfn.h"
#include "common/int.h"
#include "executor/executor.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/scansup.h"
#include "datatype/timestamp.h"
#include "utils/date.h"
#include "utils/datetime.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/fmgroids.h"
#include "utils/numeric.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "tessera/tableam.h"
#include "nodes.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

/* A value of a string column and its expression's result. */
typedef struct MemoEntry
{
	struct varlena *key;		/* the value, copied (4-byte header or short) */
	uint32		hash;
	char		status;
	Datum		result;
	bool		isnull;
} MemoEntry;

/* (XXH3, header-only: a few ns for a short string where hash_bytes takes tens) */
static inline uint32
memo_hash_key(struct varlena *key)
{
	return (uint32) XXH3_64bits(VARDATA_ANY(key), VARSIZE_ANY_EXHDR(key));
}

static inline bool
memo_equal(struct varlena *a, struct varlena *b)
{
	return VARSIZE_ANY_EXHDR(a) == VARSIZE_ANY_EXHDR(b) &&
		memcmp(VARDATA_ANY(a), VARDATA_ANY(b), VARSIZE_ANY_EXHDR(a)) == 0;
}

#define SH_PREFIX memo
#define SH_ELEMENT_TYPE MemoEntry
#define SH_KEY_TYPE struct varlena *
#define SH_KEY key
#define SH_HASH_KEY(tb, key) memo_hash_key(key)
#define SH_EQUAL(tb, a, b) memo_equal(a, b)
#define SH_STORE_HASH
#define SH_GET_HASH(tb, a) a->hash
#define SH_SCOPE static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

/* How expression j is computed */
#define COMP_PROJECTED	0		/* in the projection, row by row */
#define COMP_ONE_STRING	1		/* of one string column: per value */
#define COMP_EXTRA		2		/* an extra column itself: its array */
#define COMP_INT_ARITH	3		/* + - * of integer columns and constants: vectors */
#define COMP_TEXTLEN	4		/* length() of a text column: characters counted */
#define COMP_TS_FIELD	5		/* extract(field FROM a timestamp or date column) */
#define COMP_TS_TRUNC	6		/* date_trunc(unit up to a day, a timestamp column) */

/* The fields COMP_TS_FIELD computes; the others are PostgreSQL's */
typedef enum TsField
{
	TSF_MINUTE,
	TSF_HOUR,
	TSF_DAY,
	TSF_MONTH,
	TSF_YEAR,
	TSF_QUARTER,
	TSF_DOW,
	TSF_ISODOW,
	TSF_DOY
} TsField;

#define TSF_SMALL_MAX	366		/* the fields but year stay within 0..this */

/*
 * Integer arithmetic (+, -, * of smallint, integer and bigint columns and
 * constants) computed a column at a time: every node over every counted
 * row, as PostgreSQL evaluates every argument of a strict function before
 * looking for NULLs, with the operators' own overflow errors.
 */
typedef enum IntArithKind
{
	IA_VAR,
	IA_CONST,
	IA_ADD,
	IA_SUB,
	IA_MUL
} IntArithKind;

typedef struct IntArith
{
	IntArithKind kind;
	Oid			type;			/* INT2OID, INT4OID or INT8OID: the result's */
	int			att;			/* IA_VAR */
	int64		value;			/* IA_CONST */
	struct IntArith *l;
	struct IntArith *r;
	int64	   *v;				/* per row, for the current batch */
	bool	   *isnull;
	Datum	   *gathered;		/* IA_VAR of a sparse batch: the rows' values */
	int			cap_rows;
} IntArith;

/* The operator functions taken: integer +, -, * of any two widths. */
static const struct
{
	Oid			funcid;
	IntArithKind kind;
}			int_arith_ops[] = {
	{F_INT2PL, IA_ADD}, {F_INT2MI, IA_SUB}, {F_INT2MUL, IA_MUL},
	{F_INT4PL, IA_ADD}, {F_INT4MI, IA_SUB}, {F_INT4MUL, IA_MUL},
	{F_INT8PL, IA_ADD}, {F_INT8MI, IA_SUB}, {F_INT8MUL, IA_MUL},
	{F_INT24PL, IA_ADD}, {F_INT24MI, IA_SUB}, {F_INT24MUL, IA_MUL},
	{F_INT42PL, IA_ADD}, {F_INT42MI, IA_SUB}, {F_INT42MUL, IA_MUL},
	{F_INT48PL, IA_ADD}, {F_INT48MI, IA_SUB}, {F_INT48MUL, IA_MUL},
	{F_INT84PL, IA_ADD}, {F_INT84MI, IA_SUB}, {F_INT84MUL, IA_MUL},
	{F_INT28PL, IA_ADD}, {F_INT28MI, IA_SUB}, {F_INT28MUL, IA_MUL},
	{F_INT82PL, IA_ADD}, {F_INT82MI, IA_SUB}, {F_INT82MUL, IA_MUL},
};

static bool
int_arith_type(Oid type)
{
	return type == INT2OID || type == INT4OID || type == INT8OID;
}

/* The vector form of expr over rows of rowdesc, or NULL. */
static IntArith *
int_arith_build(Node *expr, TupleDesc rowdesc)
{
	IntArith   *ia;

	if (!int_arith_type(exprType(expr)))
		return NULL;
	ia = palloc0(sizeof(IntArith));
	ia->type = exprType(expr);
	if (IsA(expr, Var))
	{
		Var		   *var = (Var *) expr;

		if (var->varattno <= 0 || var->varattno > rowdesc->natts ||
			TupleDescAttr(rowdesc, var->varattno - 1)->atttypid != var->vartype)
			return NULL;
		ia->kind = IA_VAR;
		ia->att = var->varattno - 1;
		return ia;
	}
	if (IsA(expr, Const))
	{
		Const	   *c = (Const *) expr;

		if (c->constisnull)
			return NULL;
		ia->kind = IA_CONST;
		ia->value = c->consttype == INT2OID ? DatumGetInt16(c->constvalue) :
			c->consttype == INT4OID ? DatumGetInt32(c->constvalue) :
			DatumGetInt64(c->constvalue);
		return ia;
	}
	if (IsA(expr, OpExpr) && list_length(((OpExpr *) expr)->args) == 2)
	{
		OpExpr	   *op = (OpExpr *) expr;

		for (int i = 0; i < (int) lengthof(int_arith_ops); i++)
			if (int_arith_ops[i].funcid == op->opfuncid)
			{
				ia->kind = int_arith_ops[i].kind;
				ia->l = int_arith_build(linitial(op->args), rowdesc);
				ia->r = int_arith_build(lsecond(op->args), rowdesc);
				return ia->l && ia->r ? ia : NULL;
			}
	}
	return NULL;
}

static pg_noinline void
int_arith_overflow(Oid type)
{
	ereport(ERROR,
			(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
			 errmsg(type == INT2OID ? "smallint out of range" :
					type == INT4OID ? "integer out of range" : "bigint out of range")));
}

static inline void comp_column(TesseraComputed *c, TesseraBatch *b, int att, Datum **values,
							   bool **isnull);
static void comp_column_counted(TesseraComputed *c, TesseraBatch *b, int att, const bool *ok,
								int n, Datum **values, bool **isnull);

/*
 * Is expr length() (char_length, character_length) of a text or varchar
 * column, in an encoding whose characters comp_textlen counts from the
 * bytes (UTF-8, or one byte per character)?
 */
static bool
textlen_of_column(Node *expr)
{
	FuncExpr   *f = (FuncExpr *) expr;
	Node	   *arg;

	if (!IsA(expr, FuncExpr) || list_length(f->args) != 1 ||
		(f->funcid != F_TEXTLEN && f->funcid != F_LENGTH_TEXT &&
		 f->funcid != F_CHARACTER_LENGTH_TEXT && f->funcid != F_CHAR_LENGTH_TEXT))
		return false;
	arg = linitial(f->args);
	while (IsA(arg, RelabelType))
		arg = (Node *) ((RelabelType *) arg)->arg;
	return IsA(arg, Var) &&
		(((Var *) arg)->vartype == TEXTOID || ((Var *) arg)->vartype == VARCHAROID) &&
		(GetDatabaseEncoding() == PG_UTF8 || pg_database_encoding_max_length() == 1);
}

/*
 * textlen's answer for a stored text value: its bytes in a single-byte
 * encoding, else its UTF-8 characters, the bytes that do not continue a
 * character (stored text is valid UTF-8 and has no NUL, so this is what
 * pg_mbstrlen_with_len counts), eight bytes at a time.
 */
static inline int32
comp_text_length(Datum d, bool utf8)
{
	text	   *t = (text *) DatumGetPointer(d);
	const unsigned char *s;
	int			len;
	int32		chars;
	int			i = 0;

	if (VARATT_IS_EXTENDED(t) && !VARATT_IS_SHORT(t))
		t = pg_detoast_datum_packed(t);
	s = (const unsigned char *) VARDATA_ANY(t);
	len = VARSIZE_ANY_EXHDR(t);
	if (!utf8)
		return len;
	chars = len;
	for (; i + 8 <= len; i += 8)
	{
		uint64		w;

		memcpy(&w, s + i, sizeof(w));
		/* bytes 10xxxxxx: top bit set, the next one clear */
		w = w & ~(w << 1) & UINT64CONST(0x8080808080808080);
		chars -= (int32) (((w >> 7) * UINT64CONST(0x0101010101010101)) >> 56);
	}
	for (; i < len; i++)
		chars -= (s[i] & 0xC0) == 0x80;
	return chars;
}

/*
 * length() of a text column over the batch's counted rows: once per
 * dictionary entry, else per row, without the function call.
 */
static void
comp_textlen(TesseraComputed *c, int j, TesseraBatch *b, const bool *ok, int n)
{
	int			att = c->atts[j][0];
	Datum	   *out = c->values[j];
	bool	   *outnull = c->nulls[j];
	bool		utf8 = pg_database_encoding_max_length() > 1;
	int64	   *codes;
	Datum	   *entries;
	int			ndict;
	Datum	   *values;
	bool	   *isnull;

	if (att < c->natts_rel && !b->sparse &&
		TesseraBatchDict(b, att, &codes, &entries, &ndict) && ndict < n)
	{
		int32	   *lens = palloc(sizeof(int32) * Max(ndict, 1));

		for (int e = 0; e < ndict; e++)
			lens[e] = comp_text_length(entries[e], utf8);
		for (int i = 0; i < n; i++)
		{
			bool		counted = (ok == NULL || ok[i]) && codes[i] >= 0;

			out[i] = counted ? Int32GetDatum(lens[codes[i]]) : (Datum) 0;
			outnull[i] = !counted;
		}
		return;
	}
	comp_column_counted(c, b, att, ok, n, &values, &isnull);
	for (int i = 0; i < n; i++)
	{
		bool		counted = (ok == NULL || ok[i]) && !isnull[i];

		out[i] = counted ? Int32GetDatum(comp_text_length(values[i], utf8)) : (Datum) 0;
		outnull[i] = !counted;
	}
}

/* A column of the row over the batch: the relation's, or an extra one. */
static inline void
comp_column(TesseraComputed *c, TesseraBatch *b, int att, Datum **values, bool **isnull)
{
	if (att >= c->natts_rel)
	{
		*values = c->ext_values[att - c->natts_rel];
		*isnull = c->ext_nulls[att - c->natts_rel];
	}
	else
		TesseraBatchColumn(b, att, values, isnull);
}

/*
 * comp_column for an expression that reads the counted rows (ok; NULL:
 * all n) alone: of a sparse batch (a star join or filter kept few rows),
 * the relation's column is read value by value for them, the others NULL,
 * rather than decoded whole (a text column's 10,000 values for 20 rows).
 */
static void
comp_column_counted(TesseraComputed *c, TesseraBatch *b, int att, const bool *ok, int n,
					Datum **values, bool **isnull)
{
	Datum	   *v;
	bool	   *vn;

	if (att >= c->natts_rel || !b->sparse)
	{
		comp_column(c, b, att, values, isnull);
		return;
	}
	/* (in the expressions' per-batch memory) */
	v = palloc(sizeof(Datum) * Max(n, 1));
	vn = palloc(Max(n, 1));
	for (int i = 0; i < n; i++)
	{
		if (ok && !ok[i])
		{
			v[i] = (Datum) 0;
			vn[i] = true;
			continue;
		}
		v[i] = TesseraBatchValue(b, att, i, &vn[i]);
	}
	*values = v;
	*isnull = vn;
}

/*
 * Is expr extract(field FROM col), col a timestamp (without time zone) or
 * date column, for a field computed here (*field; a date's time fields are
 * PostgreSQL's: it raises their error)?
 */
static bool
ts_field_of(Node *expr, int *field, bool *is_date)
{
	static const struct
	{
		const char *name;
		TsField		field;
		bool		date_ok;
	}			fields[] = {
		{"minute", TSF_MINUTE, false}, {"hour", TSF_HOUR, false}, {"day", TSF_DAY, true},
		{"month", TSF_MONTH, true}, {"year", TSF_YEAR, true}, {"quarter", TSF_QUARTER, true},
		{"dow", TSF_DOW, true}, {"isodow", TSF_ISODOW, true}, {"doy", TSF_DOY, true}
	};
	FuncExpr   *f = (FuncExpr *) expr;
	Const	   *c;
	char	   *name;

	if (!IsA(expr, FuncExpr) || list_length(f->args) != 2 ||
		(f->funcid != F_EXTRACT_TEXT_TIMESTAMP && f->funcid != F_EXTRACT_TEXT_DATE) ||
		!IsA(lsecond(f->args), Var))
		return false;
	c = (Const *) linitial(f->args);
	if (!IsA(c, Const) || c->consttype != TEXTOID || c->constisnull)
		return false;
	*is_date = f->funcid == F_EXTRACT_TEXT_DATE;
	name = TextDatumGetCString(c->constvalue);
	for (int i = 0; i < lengthof(fields); i++)
		if (strcmp(name, fields[i].name) == 0 && (fields[i].date_ok || !*is_date))
		{
			*field = fields[i].field;
			return true;
		}
	return false;
}

/*
 * extract(field FROM col) over the batch's counted rows, as
 * timestamp_part_common and extract_date compute it: the day of a
 * timestamp by floor division, years before 1 counted from -1, NULL for
 * an infinite value but for year (an infinity).  Small results are
 * numerics made once (c->small); the keys read the integers (ivalues).
 */
static void
comp_ts_field(TesseraComputed *c, int j, TesseraBatch *b, const bool *ok, int n)
{
	int			field = c->ts_field[j];
	bool		is_date = c->ts_is_date[j];
	Datum	   *out = c->values[j];
	bool	   *outnull = c->nulls[j];
	int64	   *iout = c->ivalues[j];
	Datum	   *values;
	bool	   *isnull;
	int64		last_year = PG_INT64_MIN;
	Datum		last_year_d = (Datum) 0;

	comp_column_counted(c, b, c->atts[j][0], ok, n, &values, &isnull);
	for (int i = 0; i < n; i++)
	{
		int64		date;
		int64		time = 0;
		int64		v;
		int			y,
					m,
					d;
		bool		infinite,
					negative = false;

		outnull[i] = true;
		out[i] = (Datum) 0;
		iout[i] = 0;
		if ((ok && !ok[i]) || isnull[i])
			continue;
		if (is_date)
		{
			DateADT		dv = DatumGetDateADT(values[i]);

			infinite = DATE_NOT_FINITE(dv);
			negative = DATE_IS_NOBEGIN(dv);
			date = dv;
		}
		else
		{
			Timestamp	t = DatumGetTimestamp(values[i]);

			infinite = TIMESTAMP_NOT_FINITE(t);
			negative = TIMESTAMP_IS_NOBEGIN(t);
			date = t / USECS_PER_DAY;
			time = t % USECS_PER_DAY;
			if (time < 0)
			{
				time += USECS_PER_DAY;
				date--;
			}
		}
		if (infinite)
		{
			if (field != TSF_YEAR)
				continue;
			iout[i] = negative ? PG_INT64_MIN : PG_INT64_MAX;
			out[i] = negative ? c->ninf : c->pinf;
			outnull[i] = false;
			continue;
		}
		switch (field)
		{
			case TSF_MINUTE:
				v = time / USECS_PER_MINUTE % MINS_PER_HOUR;
				break;
			case TSF_HOUR:
				v = time / USECS_PER_HOUR;
				break;
			case TSF_DOW:
				v = j2day((int) (date + POSTGRES_EPOCH_JDATE));
				break;
			case TSF_ISODOW:
				v = j2day((int) (date + POSTGRES_EPOCH_JDATE));
				v = v == 0 ? 7 : v;
				break;
			default:
				j2date((int) (date + POSTGRES_EPOCH_JDATE), &y, &m, &d);
				v = field == TSF_DAY ? d : field == TSF_MONTH ? m :
					field == TSF_QUARTER ? (m - 1) / 3 + 1 :
					field == TSF_DOY ? date + POSTGRES_EPOCH_JDATE - date2j(y, 1, 1) + 1 :
					(y > 0 ? y : y - 1);
				break;
		}
		iout[i] = v;
		outnull[i] = false;
		if (v >= 0 && v <= TSF_SMALL_MAX)
			out[i] = c->small[v];
		else
		{
			/* a year (in the per-batch memory; a batch's rows share a few) */
			if (v != last_year)
			{
				last_year = v;
				last_year_d = NumericGetDatum(int64_to_numeric(v));
			}
			out[i] = last_year_d;
		}
	}
}

/*
 * Is expr date_trunc(unit, col), col a timestamp (without time zone)
 * column, for a unit of a day or less (*unit: its microseconds)?  The unit
 * is read as timestamp_trunc reads it (downcased, DecodeUnits), so its
 * spellings are PostgreSQL's; other units, and a time zone's days and
 * hours, are PostgreSQL's to compute.
 */
static bool
ts_trunc_of(Node *expr, int64 *unit)
{
	FuncExpr   *f = (FuncExpr *) expr;
	Const	   *c;
	text	   *units;
	char	   *lowunits;
	int			type,
				val;

	if (!IsA(expr, FuncExpr) || f->funcid != F_DATE_TRUNC_TEXT_TIMESTAMP ||
		list_length(f->args) != 2 || !IsA(lsecond(f->args), Var))
		return false;
	c = (Const *) linitial(f->args);
	if (!IsA(c, Const) || c->consttype != TEXTOID || c->constisnull)
		return false;
	units = DatumGetTextPP(c->constvalue);
	lowunits = downcase_truncate_identifier(VARDATA_ANY(units), VARSIZE_ANY_EXHDR(units), false);
	type = DecodeUnits(0, lowunits, &val);
	if (type != UNITS)
		return false;
	switch (val)
	{
		case DTK_DAY:
			*unit = USECS_PER_DAY;
			return true;
		case DTK_HOUR:
			*unit = USECS_PER_HOUR;
			return true;
		case DTK_MINUTE:
			*unit = USECS_PER_MINUTE;
			return true;
		case DTK_SECOND:
			*unit = USECS_PER_SEC;
			return true;
		case DTK_MILLISEC:
			*unit = 1000;
			return true;
		case DTK_MICROSEC:
			*unit = 1;
			return true;
		default:
			return false;
	}
}

/*
 * date_trunc(unit, col) over the batch's counted rows, as timestamp_trunc
 * computes it for a unit of a day or less: the timestamp rounded down to a
 * multiple of the unit (the epoch, 2000-01-01 00:00, starts a day; floor
 * division, as timestamp2tm's, before it), an infinity as it is.  Per row
 * PostgreSQL parses the unit's text and converts to calendar fields and
 * back (ClickBench's date_trunc('minute', EventTime) GROUP BY: half its
 * time).
 */
static void
comp_ts_trunc(TesseraComputed *c, int j, TesseraBatch *b, const bool *ok, int n)
{
	int64		unit = c->ts_unit[j];
	Datum	   *out = c->values[j];
	bool	   *outnull = c->nulls[j];
	Datum	   *values;
	bool	   *isnull;

	comp_column_counted(c, b, c->atts[j][0], ok, n, &values, &isnull);
	for (int i = 0; i < n; i++)
	{
		Timestamp	t;
		int64		r;

		if ((ok && !ok[i]) || isnull[i])
		{
			out[i] = (Datum) 0;
			outnull[i] = true;
			continue;
		}
		t = DatumGetTimestamp(values[i]);
		if (!TIMESTAMP_NOT_FINITE(t))
		{
			r = t % unit;
			t -= r < 0 ? r + unit : r;
		}
		out[i] = TimestampGetDatum(t);
		outnull[i] = false;
	}
}

/*
 * TesseraComputedInit
 *		Set up the expressions (Vars of range table entry relid) to be
 *		computed over rows of rowdesc, under ps: the relation's natts_rel
 *		columns, then extra columns filled by the caller per batch
 *		(ext_values, ext_nulls).
 */
void
TesseraComputedInit(TesseraComputed *c, List *exprs, Index relid, PlanState *ps,
					TupleDesc rowdesc, int natts_rel, EState *estate)
{
	List	   *tlist = NIL;
	Bitmapset  *proj_atts = NULL;
	ListCell   *lc;
	int			a,
				m;

	memset(c, 0, sizeof(TesseraComputed));
	c->natts_rel = natts_rel;
	if (rowdesc->natts > natts_rel)
	{
		c->ext_values = palloc0(sizeof(Datum *) * (rowdesc->natts - natts_rel));
		c->ext_nulls = palloc0(sizeof(bool *) * (rowdesc->natts - natts_rel));
	}
	c->n = list_length(exprs);
	if (c->n == 0)
		return;
	c->states = palloc(sizeof(ExprState *) * c->n);
	c->deferred = palloc0(sizeof(bool) * c->n);
	c->atts = palloc(sizeof(int *) * c->n);
	c->typlen = palloc(sizeof(int16) * c->n);
	c->typbyval = palloc(sizeof(bool) * c->n);
	c->mode = palloc(sizeof(int) * c->n);
	c->proj_col = palloc(sizeof(int) * c->n);
	c->values = palloc0(sizeof(Datum *) * c->n);
	c->nulls = palloc0(sizeof(bool *) * c->n);
	c->memos = palloc0(sizeof(void *) * c->n);
	c->memo_tries = palloc0(sizeof(uint32) * c->n);
	c->memo_hits = palloc0(sizeof(uint32) * c->n);
	c->int_arith = palloc0(sizeof(void *) * c->n);
	c->ivalues = palloc0(sizeof(int64 *) * c->n);
	c->ts_field = palloc0(sizeof(int) * c->n);
	c->ts_is_date = palloc0(sizeof(bool) * c->n);
	c->ts_unit = palloc0(sizeof(int64) * c->n);
	foreach(lc, exprs)
	{
		int			j = foreach_current_index(lc);
		Bitmapset  *attrs = NULL;

		c->states[j] = ExecInitExpr(lfirst(lc), ps);
		get_typlenbyval(exprType(lfirst(lc)), &c->typlen[j], &c->typbyval[j]);
		pull_varattnos(lfirst(lc), relid, &attrs);
		c->atts[j] = palloc(sizeof(int) * (bms_num_members(attrs) + 1));
		a = -1;
		m = 0;
		while ((a = bms_next_member(attrs, a)) >= 0)
			c->atts[j][m++] = a + FirstLowInvalidHeapAttributeNumber - 1;
		c->atts[j][m] = -1;
		/* of one varlena column (text, bytea, numeric, arrays, …): per value */
		c->mode[j] = m == 1 && TupleDescAttr(rowdesc, c->atts[j][0])->attlen == -1 ?
			COMP_ONE_STRING : COMP_PROJECTED;
		if (m == 1 && textlen_of_column(lfirst(lc)))
			c->mode[j] = COMP_TEXTLEN;
		/* an extra column as it is: its array */
		if (IsA(lfirst(lc), Var) && m == 1 && c->atts[j][0] >= natts_rel)
			c->mode[j] = COMP_EXTRA;
		/* a field of a timestamp or date: computed from its integer */
		else if (m == 1 && ts_field_of(lfirst(lc), &c->ts_field[j], &c->ts_is_date[j]))
		{
			c->mode[j] = COMP_TS_FIELD;
			if (c->small == NULL)
			{
				c->small = palloc(sizeof(Datum) * (TSF_SMALL_MAX + 1));
				for (int v = 0; v <= TSF_SMALL_MAX; v++)
					c->small[v] = NumericGetDatum(int64_to_numeric(v));
				c->pinf = DirectFunctionCall3(numeric_in, CStringGetDatum("Infinity"),
											  ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
				c->ninf = DirectFunctionCall3(numeric_in, CStringGetDatum("-Infinity"),
											  ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
			}
		}
		/* date_trunc of a timestamp to a day or less: rounded down */
		else if (m == 1 && ts_trunc_of(lfirst(lc), &c->ts_unit[j]))
			c->mode[j] = COMP_TS_TRUNC;
		/* integer arithmetic: a column at a time */
		else if (!IsA(lfirst(lc), Var) &&
				 (c->int_arith[j] = int_arith_build(lfirst(lc), rowdesc)) != NULL)
			c->mode[j] = COMP_INT_ARITH;
		c->proj_col[j] = -1;
		c->any_int_arith |= c->mode[j] == COMP_INT_ARITH;
		if (c->mode[j] == COMP_PROJECTED)
		{
			c->proj_col[j] = list_length(tlist);
			tlist = lappend(tlist, makeTargetEntry(lfirst(lc), list_length(tlist) + 1, NULL,
												   false));
			for (int k = 0; k < m; k++)
				proj_atts = bms_add_member(proj_atts, c->atts[j][k]);
		}
	}
	c->slot = ExecInitExtraTupleSlot(estate, rowdesc, &TTSOpsVirtual);
	for (int i = 0; i < c->slot->tts_tupleDescriptor->natts; i++)
		c->slot->tts_isnull[i] = true;
	ExecStoreVirtualTuple(c->slot);
	c->econtext = CreateExprContext(estate);
	c->memo_cxt = AllocSetContextCreate(estate->es_query_cxt, "TesseraAgg computed memo",
										ALLOCSET_DEFAULT_SIZES);
	if (tlist != NIL)
	{
		/* one program computing them all, as PostgreSQL's Agg evaluates its arguments */
		c->proj = ExecBuildProjectionInfo(tlist, c->econtext,
										  ExecInitExtraTupleSlot(estate, ExecTypeFromTL(tlist),
																 &TTSOpsVirtual),
										  ps, rowdesc);
	}
	c->proj_atts = palloc(sizeof(int) * (bms_num_members(proj_atts) + 1));
	a = -1;
	m = 0;
	while ((a = bms_next_member(proj_atts, a)) >= 0)
		c->proj_atts[m++] = a;
	c->proj_atts[m] = -1;
}

/* Evaluate expression j on the slot's row, in the current memory context. */
static inline Datum
comp_eval(TesseraComputed *c, int j, bool *isnull)
{
	return ExecEvalExpr(c->states[j], c->econtext, isnull);
}

/*
 * TesseraComputedRescan
 *		Forget the memos: the expressions may read parameters that changed
 *		(a subquery run again for another outer row), and a memo holds the
 *		results of one scan's values.
 */
void
TesseraComputedRescan(TesseraComputed *c)
{
	if (c->n == 0)
		return;
	MemoryContextReset(c->memo_cxt);
	memset(c->memos, 0, sizeof(void *) * c->n);
}

/*
 * Values of its column whose memo hits decide whether an expression keeps
 * one: under one hit in eight (mostly distinct values: comments, md5s),
 * copying each value and result into the memo and growing it to work_mem
 * costs more than it saves (TPC-H orders' min(o_comment::text) by status,
 * 1.5M distinct comments: 242 ms with the memo, heap 147 ms).
 */
#define COMP_MEMO_PROBE		8192

/*
 * Expression j of one string column for a value: from the memo, else
 * evaluated and remembered (the value and a copy of the result in the
 * memo's memory).
 */
static Datum
comp_memo(TesseraComputed *c, int j, Datum value, bool *isnull)
{
	memo_hash  *memo = c->memos[j];
	struct varlena *key = (struct varlena *) DatumGetPointer(value);
	MemoEntry  *e;
	bool		found;
	Datum		result;
	MemoryContext old;

	if (c->memo_tries[j] >= COMP_MEMO_PROBE && c->memo_hits[j] < COMP_MEMO_PROBE / 8)
		key = NULL;				/* no memo: evaluated here */
	if (key == NULL || (VARATT_IS_EXTENDED(key) && !VARATT_IS_SHORT(key)))
	{
		/* (and a value never in a decoded chunk) */
		c->slot->tts_values[c->atts[j][0]] = value;
		c->slot->tts_isnull[c->atts[j][0]] = false;
		return comp_eval(c, j, isnull);
	}
	if (memo == NULL)
		memo = c->memos[j] = memo_create(c->memo_cxt, 1024, NULL);
	e = memo_lookup(memo, key);
	if (c->memo_tries[j] < COMP_MEMO_PROBE)
	{
		c->memo_tries[j]++;
		c->memo_hits[j] += e != NULL;
	}
	if (e != NULL)
	{
		*isnull = e->isnull;
		return e->result;
	}
	c->slot->tts_values[c->atts[j][0]] = value;
	c->slot->tts_isnull[c->atts[j][0]] = false;
	result = comp_eval(c, j, isnull);
	old = MemoryContextSwitchTo(c->memo_cxt);
	{
		Size		len = VARSIZE_ANY(key);
		struct varlena *copy = palloc(len);

		memcpy(copy, key, len);
		e = memo_insert(memo, copy, &found);
		e->isnull = *isnull;
		e->result = *isnull ? (Datum) 0 : datumCopy(result, c->typbyval[j], c->typlen[j]);
	}
	MemoryContextSwitchTo(old);
	return e->result;
}

/*
 * Expression j of one string column over the batch's counted rows: per
 * dictionary entry a counted row has (never for one only other rows have:
 * no error PostgreSQL would not raise), else per row through the memo.
 */
static void
comp_one_string(TesseraComputed *c, int j, TesseraBatch *b, const bool *ok, int n)
{
	TupleTableSlot *slot = c->slot;
	int			att = c->atts[j][0];
	Datum	   *out = c->values[j];
	bool	   *outnull = c->nulls[j];
	int64	   *codes;
	Datum	   *entries;
	int			ndict;
	bool		null_done = false;
	Datum		null_result = (Datum) 0;
	bool		null_isnull = true;

	if (att < c->natts_rel && !b->sparse &&
		TesseraBatchDict(b, att, &codes, &entries, &ndict) && ndict < n)
	{
		Datum	   *ev = (Datum *) palloc(sizeof(Datum) * (ndict + 1)) + 1;
		bool	   *en = (bool *) palloc(ndict + 1) + 1;
		bool	   *used = (bool *) palloc0(ndict + 1) + 1;

		for (int i = 0; i < n; i++)
			used[codes[i]] |= ok == NULL || ok[i];
		for (int e = -1; e < ndict; e++)
		{
			if (!used[e])
				continue;
			if (e < 0)
			{
				slot->tts_isnull[att] = true;
				ev[e] = comp_eval(c, j, &en[e]);
			}
			else
				ev[e] = comp_memo(c, j, entries[e], &en[e]);
		}
		for (int i = 0; i < n; i++)
		{
			bool		counted = ok == NULL || ok[i];

			out[i] = counted ? ev[codes[i]] : (Datum) 0;
			outnull[i] = counted ? en[codes[i]] : true;
		}
		slot->tts_isnull[att] = true;
		return;
	}
	{
		Datum	   *values;
		bool	   *isnull;

		comp_column_counted(c, b, att, ok, n, &values, &isnull);
		for (int i = 0; i < n; i++)
		{
			if (ok && !ok[i])
			{
				out[i] = (Datum) 0;
				outnull[i] = true;
			}
			else if (!isnull[i])
				out[i] = comp_memo(c, j, values[i], &outnull[i]);
			else
			{
				if (!null_done)
				{
					slot->tts_isnull[att] = true;
					null_result = comp_eval(c, j, &null_isnull);
					null_done = true;
				}
				out[i] = null_result;
				outnull[i] = null_isnull;
			}
		}
	}
	slot->tts_isnull[att] = true;
}

/* The projected expressions over the batch's counted rows, row by row. */
static void
comp_projected(TesseraComputed *c, TesseraBatch *b, const bool *ok, int n)
{
	TupleTableSlot *slot = c->slot;
	const int  *atts = c->proj_atts;
	Datum	   *cols[TAGG_COMPUTED_MAX_COLUMNS * 4];
	bool	   *colnulls[lengthof(cols)];
	int			ncols = 0;
	/*
	 * Under one row in eight counted, a numeric column of the table is read
	 * value by value too: each value decoded is a numeric built (TPC-H q09's
	 * three lineitem numerics, 5% of rows joining part: build_numeric was a
	 * fifth of the query)
	 */
	bool		few = ok != NULL && TesseraSelCount(ok, n) * 8 < (uint64) n;

	for (; atts[ncols] >= 0; ncols++)
	{
		if (ncols >= (int) lengthof(cols))
			elog(ERROR, "TesseraAgg: computed expressions read too many columns");
		/* few rows counted: the table's columns are read value by value */
		if (atts[ncols] < c->natts_rel &&
			(b->sparse ||
			 (few && TupleDescAttr(b->reader->tupdesc, atts[ncols])->atttypid == NUMERICOID)))
			cols[ncols] = NULL;
		else
			comp_column(c, b, atts[ncols], &cols[ncols], &colnulls[ncols]);
	}
	for (int i = 0; i < n; i++)
	{
		TupleTableSlot *res;

		if (ok && !ok[i])
		{
			for (int j = 0; j < c->n; j++)
				if (c->mode[j] == COMP_PROJECTED)
				{
					c->values[j][i] = (Datum) 0;
					c->nulls[j][i] = true;
				}
			continue;
		}
		for (int k = 0; k < ncols; k++)
		{
			if (cols[k] == NULL)
				slot->tts_values[atts[k]] = TesseraBatchValue(b, atts[k], i,
															  &slot->tts_isnull[atts[k]]);
			else
			{
				slot->tts_values[atts[k]] = cols[k][i];
				slot->tts_isnull[atts[k]] = colnulls[k][i];
			}
		}
		res = ExecProject(c->proj);
		for (int j = 0; j < c->n; j++)
			if (c->mode[j] == COMP_PROJECTED)
			{
				c->values[j][i] = res->tts_values[c->proj_col[j]];
				c->nulls[j][i] = res->tts_isnull[c->proj_col[j]];
			}
	}
	for (int k = 0; k < ncols; k++)
		slot->tts_isnull[atts[k]] = true;
}

/*
 * The statements for each row i counted: those of rows (m of them), or with rows
 * NULL rows 0..m-1, without the indirection (every row counted: ClickBench's
 * `GROUP BY ClientIP, ClientIP - 1, ...` spent a fourth of its time on its
 * three subtractions through the row list).
 */
#define ROWS_LOOP(...) \
	do { \
		if (rows != NULL) \
			for (int j = 0; j < m; j++) \
			{ \
				int			i = rows[j]; \
				__VA_ARGS__; \
			} \
		else \
			for (int i = 0; i < m; i++) \
			{ \
				__VA_ARGS__; \
			} \
	} while (0)

/*
 * x op y over the rows, y a constant, into v/vn (locals: a store through
 * ia->v may not reload ia->l's pointers per row); a NULL x gives NULL (its
 * value 0 is not checked).  Of a smallint or
 * integer expression (|x|, |y| < 2^31) no 64-bit result overflows: the
 * plain operator, checked against the type's range, without the overflow
 * flag's dependency.  (Not vectorized at the baseline x86-64 target: it
 * has no 64-bit vector compare.)
 */
#define INT_ARITH_CONST_LOOP(op, plainop) \
	do { \
		const int64 *lv = ia->l->v; \
		const bool *ln = ia->l->isnull; \
		int64	   *v = ia->v; \
		bool	   *vn = ia->isnull; \
\
		if (ia->type != INT8OID && y >= PG_INT32_MIN && y <= PG_INT32_MAX) \
			ROWS_LOOP({ \
				int64		z = lv[i] plainop y; \
				bool		n = ln[i]; \
\
				vn[i] = n; \
				overflow |= (!n) & ((z < lo) | (z > hi)); \
				v[i] = n ? 0 : z; \
			}); \
		else \
			ROWS_LOOP({ \
				int64		z; \
				bool		o = op(lv[i], y, &z); \
				bool		n = ln[i]; \
\
				vn[i] = n; \
				overflow |= (!n) & (o | (z < lo) | (z > hi)); \
				v[i] = n ? 0 : z; \
			}); \
	} while (0)

/*
 * Node ia over rows (the counted ones, m of them; NULL: rows 0..m-1) of the
 * batch, into ia->v / ia->isnull.
 */
static void
int_arith_eval(TesseraComputed *c, IntArith *ia, TesseraBatch *b, const int *rows, int m,
			   MemoryContext bufcxt)
{
	if (ia->v == NULL || c->cap > ia->cap_rows)
	{
		ia->v = MemoryContextAlloc(bufcxt, sizeof(int64) * c->cap);
		ia->isnull = MemoryContextAlloc(bufcxt, c->cap);
		ia->gathered = ia->kind == IA_VAR ?
			MemoryContextAlloc(bufcxt, sizeof(Datum) * c->cap) : NULL;
		ia->cap_rows = c->cap;
	}
	switch (ia->kind)
	{
		case IA_CONST:
			ROWS_LOOP({
				ia->v[i] = ia->value;
				ia->isnull[i] = false;
			});
			return;
		case IA_VAR:
			{
				Datum	   *values = NULL;
				bool	   *isnull = NULL;

				if (!b->sparse || ia->att >= c->natts_rel)
					comp_column(c, b, ia->att, &values, &isnull);
				else if (rows != NULL)
				{
					/* a sparse batch's counted rows, read together */
					TesseraBatchGather(b, ia->att, rows, m, ia->gathered, ia->isnull);
					values = ia->gathered;
					isnull = ia->isnull;
				}
				if (values == NULL)
					ROWS_LOOP({
						bool		n;
						Datum		d = TesseraBatchValue(b, ia->att, i, &n);

						ia->isnull[i] = n;
						ia->v[i] = n ? 0 : ia->type == INT2OID ? DatumGetInt16(d) :
							ia->type == INT4OID ? DatumGetInt32(d) : DatumGetInt64(d);
					});
				else
				{
					int64	   *v = ia->v;
					bool	   *vn = ia->isnull;

					if (ia->type == INT2OID)
						ROWS_LOOP({
							vn[i] = isnull[i];
							v[i] = isnull[i] ? 0 : DatumGetInt16(values[i]);
						});
					else if (ia->type == INT4OID)
						ROWS_LOOP({
							vn[i] = isnull[i];
							v[i] = isnull[i] ? 0 : DatumGetInt32(values[i]);
						});
					else
						ROWS_LOOP({
							vn[i] = isnull[i];
							v[i] = isnull[i] ? 0 : DatumGetInt64(values[i]);
						});
				}
				return;
			}
		default:
			break;
	}
	int_arith_eval(c, ia->l, b, rows, m, bufcxt);
	/* a constant on the right (x - 1): not spread over the rows */
	if (ia->r->kind != IA_CONST)
		int_arith_eval(c, ia->r, b, rows, m, bufcxt);
	{
		int64		lo = ia->type == INT2OID ? PG_INT16_MIN : ia->type == INT4OID ? PG_INT32_MIN :
			PG_INT64_MIN;
		int64		hi = ia->type == INT2OID ? PG_INT16_MAX : ia->type == INT4OID ? PG_INT32_MAX :
			PG_INT64_MAX;
		bool		overflow = false;

		if (ia->r->kind == IA_CONST)
		{
			int64		y = ia->r->value;

			/* one loop per operator: no branch on it per row */
			switch (ia->kind)
			{
				case IA_ADD:
					INT_ARITH_CONST_LOOP(pg_add_s64_overflow, +);
					break;
				case IA_SUB:
					INT_ARITH_CONST_LOOP(pg_sub_s64_overflow, -);
					break;
				default:
					INT_ARITH_CONST_LOOP(pg_mul_s64_overflow, *);
					break;
			}
		}
		else
			ROWS_LOOP({
				int64		x = ia->l->v[i],
							y = ia->r->v[i],
							z;
				bool		o;
				bool		n = ia->l->isnull[i] | ia->r->isnull[i];

				o = ia->kind == IA_ADD ? pg_add_s64_overflow(x, y, &z) :
					ia->kind == IA_SUB ? pg_sub_s64_overflow(x, y, &z) :
					pg_mul_s64_overflow(x, y, &z);
				ia->isnull[i] = n;
				overflow |= (!n) & (o | (z < lo) | (z > hi));
				ia->v[i] = n ? 0 : z;
			});
		if (overflow)
			int_arith_overflow(ia->type);
	}
}

/* The integer arithmetic expressions over the batch's counted rows (deferred or not). */
static void
comp_int_arith(TesseraComputed *c, TesseraBatch *b, const bool *ok, int n, const int *listed,
			   int nlisted, MemoryContext bufcxt, bool deferred)
{
	/* (every row counted: no row list, loops over 0..n-1) */
	const int  *rows = ok == NULL ? NULL : listed != NULL ? listed : c->rows;
	int			m = ok == NULL ? n : listed != NULL ? nlisted : TesseraSelRows(ok, n, c->rows);

	for (int j = 0; j < c->n; j++)
	{
		IntArith   *ia = c->int_arith[j];
		Datum	   *values = c->values[j];
		bool	   *nulls = c->nulls[j];
		const int64 *v;
		const bool *vn;

		if (c->mode[j] != COMP_INT_ARITH || c->deferred[j] != deferred)
			continue;
		int_arith_eval(c, ia, b, rows, m, bufcxt);
		v = ia->v;
		vn = ia->isnull;
		/* the rows not counted read as NULLs */
		if (rows != NULL)
			memset(nulls, true, n);
		if (ia->type == INT2OID)
			ROWS_LOOP({
				nulls[i] = vn[i];
				values[i] = Int16GetDatum((int16) v[i]);
			});
		else if (ia->type == INT4OID)
			ROWS_LOOP({
				nulls[i] = vn[i];
				values[i] = Int32GetDatum((int32) v[i]);
			});
		else
			ROWS_LOOP({
				nulls[i] = vn[i];
				values[i] = Int64GetDatum(v[i]);
			});
	}
}

/* The expressions computed column by column, deferred ones or the others. */
static void
comp_columns(TesseraComputed *c, TesseraBatch *b, const bool *ok, int n, const int *listed,
			 int nlisted, MemoryContext bufcxt, bool deferred)
{
	for (int j = 0; j < c->n; j++)
	{
		if (c->deferred[j] != deferred)
			continue;
		if (c->mode[j] == COMP_ONE_STRING)
			comp_one_string(c, j, b, ok, n);
		else if (c->mode[j] == COMP_TEXTLEN)
			comp_textlen(c, j, b, ok, n);
		else if (c->mode[j] == COMP_TS_FIELD)
			comp_ts_field(c, j, b, ok, n);
		else if (c->mode[j] == COMP_TS_TRUNC)
			comp_ts_trunc(c, j, b, ok, n);
	}
	if (c->any_int_arith)
		comp_int_arith(c, b, ok, n, listed, nlisted, bufcxt, deferred);
}

/*
 * TesseraComputedBatch
 *		Every expression over the batch's counted rows (ok; NULL: all n),
 *		into c->values[j] / c->nulls[j], valid until the next batch; the
 *		deferred ones are left to TesseraComputedDeferred.
 *		listed, when not NULL, lists those rows (nlisted, ascending).
 */
void
TesseraComputedBatch(TesseraComputed *c, TesseraBatch *b, const bool *ok, int n,
					 const int *listed, int nlisted, MemoryContext bufcxt)
{
	MemoryContext old;

	if (c->n == 0)
		return;
	ResetExprContext(c->econtext);
	/* the memos stay within work_mem: past it they start again */
	if (MemoryContextMemAllocated(c->memo_cxt, true) > (Size) work_mem * 1024)
	{
		MemoryContextReset(c->memo_cxt);
		memset(c->memos, 0, sizeof(void *) * c->n);
	}
	if (c->cap < n)
	{
		c->cap = Max(n, 1024);
		for (int j = 0; j < c->n; j++)
		{
			if (c->mode[j] == COMP_EXTRA)
				continue;
			c->values[j] = MemoryContextAlloc(bufcxt, sizeof(Datum) * c->cap);
			c->nulls[j] = MemoryContextAlloc(bufcxt, c->cap);
			if (c->mode[j] == COMP_TS_FIELD)
				c->ivalues[j] = MemoryContextAlloc(bufcxt, sizeof(int64) * c->cap);
		}
		c->rows = MemoryContextAlloc(bufcxt, sizeof(int) * c->cap);
	}
	for (int j = 0; j < c->n; j++)
		if (c->mode[j] == COMP_EXTRA)
		{
			/* (the caller cleared the rows not counted) */
			c->values[j] = c->ext_values[c->atts[j][0] - c->natts_rel];
			c->nulls[j] = c->ext_nulls[c->atts[j][0] - c->natts_rel];
		}
	c->econtext->ecxt_scantuple = c->slot;
	old = MemoryContextSwitchTo(c->econtext->ecxt_per_tuple_memory);
	comp_columns(c, b, ok, n, listed, nlisted, bufcxt, false);
	if (c->proj != NULL)
		comp_projected(c, b, ok, n);
	MemoryContextSwitchTo(old);
}

/*
 * TesseraComputedDefer
 *		Leave expression j out of TesseraComputedBatch, for
 *		TesseraComputedDeferred to compute over the rows that need it (a
 *		carried group key's, for each new group's first row).  Only those
 *		computed column by column can be; false for the others (computed
 *		with every batch, as before).
 */
bool
TesseraComputedDefer(TesseraComputed *c, int j)
{
	Assert(j >= 0 && j < c->n);
	if (c->mode[j] != COMP_ONE_STRING && c->mode[j] != COMP_TEXTLEN &&
		c->mode[j] != COMP_TS_FIELD && c->mode[j] != COMP_TS_TRUNC &&
		c->mode[j] != COMP_INT_ARITH)
		return false;
	c->deferred[j] = true;
	c->any_deferred = true;
	return true;
}

/*
 * TesseraComputedDeferred
 *		The deferred expressions over the rows of ok, after
 *		TesseraComputedBatch of the same batch (whose arrays they fill;
 *		their results stay until the next batch's).
 */
void
TesseraComputedDeferred(TesseraComputed *c, TesseraBatch *b, const bool *ok, int n,
						MemoryContext bufcxt)
{
	MemoryContext old;

	if (!c->any_deferred)
		return;
	Assert(c->cap >= n);
	c->econtext->ecxt_scantuple = c->slot;
	old = MemoryContextSwitchTo(c->econtext->ecxt_per_tuple_memory);
	comp_columns(c, b, ok, n, NULL, 0, bufcxt, true);
	MemoryContextSwitchTo(old);
}
