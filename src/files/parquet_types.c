/*-------------------------------------------------------------------------
 *
 * parquet_types.c
 *	  PostgreSQL types and Parquet's, both ways: values of a column into
 *	  the Parquet layer's column vectors (writing), and the vectors of a
 *	  file's column into the binary form of COPY (reading).
 *
 * NOTES
 *	  Writing maps each type with a Parquet counterpart (domains by their
 *	  base type): integers, floats, numeric(p,s) as decimal(p,s) (numeric
 *	  without a typmod as decimal(38,9), where a value with more fraction
 *	  digits is an error rather than a silent rounding), text, varchar,
 *	  char(n), name, bytea, bool, date, time, timestamp, timestamptz (UTC),
 *	  uuid, json and jsonb (strings with the JSON logical type), and
 *	  one-dimensional arrays of those as lists.  Anything else is an error
 *	  naming the column.  Infinite dates and timestamps have no Parquet
 *	  counterpart either.
 *
 *	  Reading turns each value into the binary form that the table
 *	  column's receive function takes, so that COPY's own machinery
 *	  (constraints, triggers, defaults, partition routing, indexes and
 *	  tessera's batch insert) loads it.  Where the file's type is the
 *	  column's, the value is written in that form directly; otherwise it
 *	  becomes a value of its own PostgreSQL type and goes through the cast
 *	  that an INSERT would apply (an assignment cast), and strings go
 *	  through the column type's input function, as with COPY from CSV.
 *	  Text goes to the client encoding, which binary COPY's receive
 *	  functions convert from.
 *
 * IDENTIFICATION
 *	  src/files/parquet_types.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <pthread.h>
#include <signal.h>

#include "catalog/pg_type.h"
#include "common/int.h"
#include "datatype/timestamp.h"
#include "funcapi.h"
#include "mb/pg_wchar.h"
#include "parser/parse_coerce.h"
#include "port/pg_bswap.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/timestamp.h"
#include "utils/uuid.h"

#include "tessera/compat.h"
#include "tessera/files.h"

/* days and microseconds from 1970-01-01 (Parquet's epoch) to 2000-01-01 */
#define TP_EPOCH_DAYS	((int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE))
#define TP_EPOCH_USECS	(TP_EPOCH_DAYS * USECS_PER_DAY)

/* a numeric column without precision and scale is written as this decimal */
#define TP_UNBOUNDED_PRECISION	38
#define TP_UNBOUNDED_SCALE		9

/* numeric's binary form (numeric_send) */
#define TP_NUMERIC_POS	0x0000
#define TP_NUMERIC_NEG	0x4000
#define TP_NUMERIC_NBASE 10000

typedef unsigned __int128 tp_uint128;

static const char *
type_name(Oid typid, int32 typmod)
{
	return format_type_with_typemod(typid, typmod);
}

/* ------------------------------------------------------------------------
 * Writing
 * ------------------------------------------------------------------------
 */

static void
decimal_type(const char *name, int32 typmod, int32 *precision, int32 *scale)
{
	if (typmod < (int32) VARHDRSZ)
	{
		*precision = TP_UNBOUNDED_PRECISION;
		*scale = TP_UNBOUNDED_SCALE;
		return;
	}
	*precision = ((typmod - VARHDRSZ) >> 16) & 0xffff;
	*scale = (((typmod - VARHDRSZ) & 0x7ff) ^ 1024) - 1024;
	if (*scale < 0)
	{
		/* numeric(p,-s) holds integers with p + s digits */
		*precision -= *scale;
		*scale = 0;
	}
	if (*precision > 38)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("column \"%s\" has type %s, which has more digits than a Parquet decimal (38)",
						name, type_name(NUMERICOID, typmod)),
				 errhint("Cast it in COPY (SELECT ...) TO, to numeric(38,s) or to text.")));
}

/* the kind of a scalar type, or TP_KIND_UNSUPPORTED */
static int
scalar_kind(Oid typid)
{
	switch (typid)
	{
		case BOOLOID:
			return TP_KIND_BOOL;
		case INT2OID:
			return TP_KIND_INT16;
		case INT4OID:
			return TP_KIND_INT32;
		case INT8OID:
			return TP_KIND_INT64;
		case FLOAT4OID:
			return TP_KIND_FLOAT32;
		case FLOAT8OID:
			return TP_KIND_FLOAT64;
		case NUMERICOID:
			return TP_KIND_DECIMAL;
		case TEXTOID:
		case VARCHAROID:
		case BPCHAROID:
		case NAMEOID:
			return TP_KIND_TEXT;
		case JSONOID:
		case JSONBOID:
			return TP_KIND_JSON;
		case BYTEAOID:
			return TP_KIND_BINARY;
		case DATEOID:
			return TP_KIND_DATE;
		case TIMEOID:
			return TP_KIND_TIME;
		case TIMESTAMPOID:
			return TP_KIND_TIMESTAMP;
		case TIMESTAMPTZOID:
			return TP_KIND_TIMESTAMPTZ;
		case UUIDOID:
			return TP_KIND_UUID;
		default:
			return TP_KIND_UNSUPPORTED;
	}
}

static int
kind_width(int kind)
{
	switch (kind)
	{
		case TP_KIND_BOOL:
			return 1;
		case TP_KIND_INT16:
			return 2;
		case TP_KIND_INT32:
		case TP_KIND_FLOAT32:
		case TP_KIND_DATE:
			return 4;
		case TP_KIND_INT64:
		case TP_KIND_FLOAT64:
		case TP_KIND_TIME:
		case TP_KIND_TIMESTAMP:
		case TP_KIND_TIMESTAMPTZ:
			return 8;
		case TP_KIND_DECIMAL:
		case TP_KIND_UUID:
			return 16;
		default:
			return 0;
	}
}

static void
unsupported_column(const char *name, Oid typid, int32 typmod)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("column \"%s\" has type %s, which cannot be written to Parquet",
					name, type_name(typid, typmod)),
			 errhint("Cast it in COPY (SELECT ...) TO, for example to text.")));
}

static void
builder_reset_buffers(TpColumnBuilder *b)
{
	int64		zero = 0;

	b->nrows = 0;
	resetStringInfo(&b->nulls);
	resetStringInfo(&b->values);
	resetStringInfo(&b->offsets);
	resetStringInfo(&b->data);
	appendBinaryStringInfo(&b->offsets, (char *) &zero, sizeof(zero));
}

void
TesseraParquetBuilderInit(TpColumnBuilder *b, const char *name, Oid typid, int32 typmod)
{
	Oid			base;
	int32		basemod = typmod;
	Oid			elem;

	memset(b, 0, sizeof(*b));
	b->name = name;
	base = getBaseTypeAndTypmod(typid, &basemod);
	initStringInfo(&b->nulls);
	initStringInfo(&b->values);
	initStringInfo(&b->offsets);
	initStringInfo(&b->data);
	builder_reset_buffers(b);
	b->typid = base;

	elem = get_element_type(base);
	if (OidIsValid(elem))
	{
		TpColumnBuilder *child = palloc(sizeof(TpColumnBuilder));

		TesseraParquetBuilderInit(child, name, elem, basemod);
		if (child->type.kind == TP_KIND_LIST)
			unsupported_column(name, typid, typmod);
		b->elemtyp = elem;
		get_typlenbyvalalign(elem, &b->elmlen, &b->elmbyval, &b->elmalign);
		b->child = child;
		b->type.kind = TP_KIND_LIST;
		b->type.elem_kind = child->type.kind;
		b->type.elem_precision = child->type.precision;
		b->type.elem_scale = child->type.scale;
		return;
	}
	b->type.kind = scalar_kind(base);
	if (b->type.kind == TP_KIND_UNSUPPORTED)
		unsupported_column(name, typid, typmod);
	if (b->type.kind == TP_KIND_DECIMAL)
		decimal_type(name, basemod, &b->type.precision, &b->type.scale);
	b->width = kind_width(b->type.kind);
}

/* 10^0 .. 10^38 */
static tp_uint128 pow10_table[39];

static void
init_pow10(void)
{
	if (pow10_table[0] != 0)
		return;
	pow10_table[0] = 1;
	for (int i = 1; i < 39; i++)
		pow10_table[i] = pow10_table[i - 1] * 10;
}

/*
 * numeric as an integer scaled by 10^scale; false if it is not finite, has
 * digits beyond the scale or 39 digits or more.
 */
static bool
numeric_to_scaled(Numeric num, int scale, __int128 *out)
{
	bytea	   *raw = DatumGetByteaPP(DirectFunctionCall1(numeric_send, NumericGetDatum(num)));
	const uint8 *p = (const uint8 *) VARDATA_ANY(raw);
	int			ndigits = (int16) pg_ntoh16(*(uint16 *) p);
	int			weight = (int16) pg_ntoh16(*(uint16 *) (p + 2));
	uint16		sign = pg_ntoh16(*(uint16 *) (p + 4));
	tp_uint128	limit;
	tp_uint128	acc = 0;

	init_pow10();
	limit = pow10_table[38];
	if (sign != TP_NUMERIC_POS && sign != TP_NUMERIC_NEG)
		return false;			/* NaN or an infinity */
	for (int i = 0; i < ndigits; i++)
	{
		int			digit = pg_ntoh16(*(uint16 *) (p + 8 + 2 * i));
		int			exp10 = 4 * (weight - i) + scale;

		if (digit == 0)
			continue;
		if (exp10 < 0)
		{
			/* digits below the scale must be zeros */
			if (exp10 <= -4 || digit % (int) pow10_table[-exp10] != 0)
				return false;
			acc += digit / (int) pow10_table[-exp10];
		}
		else
		{
			if (exp10 > 38 || (tp_uint128) digit > (limit - 1) / pow10_table[exp10])
				return false;
			acc += (tp_uint128) digit * pow10_table[exp10];
		}
		if (acc >= limit)
			return false;
	}
	pfree(raw);
	*out = sign == TP_NUMERIC_NEG ? -(__int128) acc : (__int128) acc;
	return true;
}

/* room for n more bytes in s */
static inline char *
reserve(StringInfo s, int n)
{
	if (s->len + n >= s->maxlen)
		enlargeStringInfo(s, n);
	return s->data + s->len;
}

static void
append_bytes(StringInfo s, const char *p, int len)
{
	memcpy(reserve(s, len), p, len);
	s->len += len;
}

static void
append_text(TpColumnBuilder *b, const char *s, int len)
{
	int			enc = GetDatabaseEncoding();

	if (enc != PG_UTF8 && enc != PG_SQL_ASCII)
	{
		char	   *conv = pg_server_to_any(s, len, PG_UTF8);

		if (conv != s)
			len = strlen(conv);
		s = conv;
	}
	append_bytes(&b->data, s, len);
}

static void
append_varlena(TpColumnBuilder *b, Datum value)
{
	switch (b->typid)
	{
		case NAMEOID:
			{
				Name		n = DatumGetName(value);

				append_text(b, NameStr(*n), strlen(NameStr(*n)));
				break;
			}
		case JSONBOID:
			{
				Jsonb	   *jb = DatumGetJsonbP(value);
				char	   *s = JsonbToCString(NULL, &jb->root, VARSIZE(jb));

				append_text(b, s, strlen(s));
				break;
			}
		case BYTEAOID:
			{
				bytea	   *v = DatumGetByteaPP(value);

				append_bytes(&b->data, VARDATA_ANY(v), VARSIZE_ANY_EXHDR(v));
				break;
			}
		default:
			{
				text	   *t = DatumGetTextPP(value);

				append_text(b, VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));
				break;
			}
	}
}

static void
not_writable(TpColumnBuilder *b, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
			 errmsg("%s in column \"%s\" cannot be written to Parquet", what, b->name)));
}

#define STORE(dst, type, v) do { type v_ = (v); memcpy((dst), &v_, sizeof(type)); } while (0)

/* value, not NULL, at dst: b->width bytes */
static void
append_fixed(TpColumnBuilder *b, Datum value, char *dst)
{
	switch (b->type.kind)
	{
		case TP_KIND_BOOL:
			*dst = DatumGetBool(value) ? 1 : 0;
			break;
		case TP_KIND_INT16:
			STORE(dst, int16, DatumGetInt16(value));
			break;
		case TP_KIND_INT32:
			STORE(dst, int32, DatumGetInt32(value));
			break;
		case TP_KIND_INT64:
		case TP_KIND_TIME:
			STORE(dst, int64, DatumGetInt64(value));
			break;
		case TP_KIND_FLOAT32:
			STORE(dst, float4, DatumGetFloat4(value));
			break;
		case TP_KIND_FLOAT64:
			STORE(dst, float8, DatumGetFloat8(value));
			break;
		case TP_KIND_DATE:
			{
				DateADT		d = DatumGetDateADT(value);

				if (DATE_NOT_FINITE(d))
					not_writable(b, "an infinite date");
				STORE(dst, int32, (int32) (d + TP_EPOCH_DAYS));
				break;
			}
		case TP_KIND_TIMESTAMP:
		case TP_KIND_TIMESTAMPTZ:
			{
				Timestamp	ts = DatumGetTimestamp(value);
				int64		unix_us;

				if (TIMESTAMP_NOT_FINITE(ts))
					not_writable(b, "an infinite timestamp");
				/* the last few thousand years before 294277 AD do not fit */
				if (pg_add_s64_overflow(ts, TP_EPOCH_USECS, &unix_us))
					not_writable(b, "a timestamp after 294246 AD");
				STORE(dst, int64, unix_us);
				break;
			}
		case TP_KIND_UUID:
			memcpy(dst, DatumGetUUIDP(value)->data, UUID_LEN);
			break;
		case TP_KIND_DECIMAL:
			{
				__int128	scaled;

				if (!numeric_to_scaled(DatumGetNumeric(value), b->type.scale, &scaled))
					ereport(ERROR,
							(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
							 errmsg("value %s in column \"%s\" does not fit decimal(%d,%d)",
									DatumGetCString(DirectFunctionCall1(numeric_out, value)),
									b->name, b->type.precision, b->type.scale),
							 errhint("Give the column a precision and scale, or cast it in COPY (SELECT ...) TO.")));
				memcpy(dst, &scaled, sizeof(scaled));
				break;
			}
	}
}

static inline void
append_offset(StringInfo offsets, int64 end)
{
	STORE(reserve(offsets, sizeof(int64)), int64, end);
	offsets->len += sizeof(int64);
}

void
TesseraParquetBuilderAppend(TpColumnBuilder *b, Datum value, bool isnull)
{
	*reserve(&b->nulls, 1) = isnull ? 1 : 0;
	b->nulls.len++;
	b->nrows++;
	if (b->width > 0)
	{
		char	   *dst = reserve(&b->values, b->width);

		b->values.len += b->width;
		if (isnull)
			memset(dst, 0, b->width);
		else
			append_fixed(b, value, dst);
		return;
	}
	if (b->type.kind == TP_KIND_LIST)
	{
		if (!isnull)
		{
			ArrayType  *arr = DatumGetArrayTypeP(value);
			Datum	   *elems;
			bool	   *enulls;
			int			n;

			if (ARR_NDIM(arr) > 1)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("column \"%s\" has a multidimensional array, which cannot be written to Parquet",
								b->name)));
			deconstruct_array(arr, b->elemtyp, b->elmlen, b->elmbyval, b->elmalign,
							  &elems, &enulls, &n);
			for (int i = 0; i < n; i++)
				TesseraParquetBuilderAppend(b->child, elems[i], enulls[i]);
		}
		append_offset(&b->offsets, b->child->nrows);
		return;
	}
	if (!isnull)
		append_varlena(b, value);
	append_offset(&b->offsets, b->data.len);
}

/*
 * TesseraParquetBuilderAppendScaled
 *		Append the numeric value v / 10^scale to a decimal column without
 *		building a numeric (a tessera chunk's scaled integers); false, with
 *		nothing appended, if it does not fit the column's decimal(p, s)
 *		exactly: the caller appends the numeric, which raises the error.
 */
bool
TesseraParquetBuilderAppendScaled(TpColumnBuilder *b, __int128 v, int scale, bool isnull)
{
	__int128	x = v;
	char	   *dst;

	if (b->type.kind != TP_KIND_DECIMAL || scale < 0 || scale > 38)
		return false;
	init_pow10();
	if (!isnull)
	{
		tp_uint128	mag;

		if (scale > b->type.scale)
		{
			__int128	div = (__int128) pow10_table[scale - b->type.scale];

			if (x % div != 0)
				return false;	/* digits below the column's scale */
			x /= div;
		}
		else if (scale < b->type.scale)
		{
			__int128	mul = (__int128) pow10_table[b->type.scale - scale];
			tp_uint128	m = (tp_uint128) (x < 0 ? -x : x);

			if (m > (pow10_table[38] - 1) / (tp_uint128) mul)
				return false;
			x *= mul;
		}
		mag = (tp_uint128) (x < 0 ? -x : x);
		if (mag >= pow10_table[38])
			return false;
	}
	*reserve(&b->nulls, 1) = isnull ? 1 : 0;
	b->nulls.len++;
	b->nrows++;
	dst = reserve(&b->values, sizeof(x));
	b->values.len += sizeof(x);
	if (isnull)
		x = 0;
	memcpy(dst, &x, sizeof(x));
	return true;
}

/* the batch so far as a vector (valid until the next append or reset) */
TpVector *
TesseraParquetBuilderVector(TpColumnBuilder *b)
{
	TpVector   *v = &b->vector;

	memset(v, 0, sizeof(*v));
	v->nrows = b->nrows;
	v->nulls = (const uint8_t *) b->nulls.data;
	if (b->width > 0)
		v->values = b->values.data;
	else
	{
		v->offsets = (const int64_t *) b->offsets.data;
		v->data = (const uint8_t *) b->data.data;
	}
	if (b->child)
	{
		b->child_vector = *TesseraParquetBuilderVector(b->child);
		v->child = &b->child_vector;
	}
	return v;
}

void
TesseraParquetBuilderReset(TpColumnBuilder *b)
{
	builder_reset_buffers(b);
	if (b->child)
		TesseraParquetBuilderReset(b->child);
}

size_t
TesseraParquetBuilderBytes(TpColumnBuilder *b)
{
	return b->values.len + b->data.len + b->offsets.len +
		(b->child ? TesseraParquetBuilderBytes(b->child) : 0);
}

/* ------------------------------------------------------------------------
 * Reading
 * ------------------------------------------------------------------------
 */

/* the PostgreSQL type of a kind's values */
static Oid
natural_type(int kind)
{
	switch (kind)
	{
		case TP_KIND_BOOL:
			return BOOLOID;
		case TP_KIND_INT16:
			return INT2OID;
		case TP_KIND_INT32:
			return INT4OID;
		case TP_KIND_INT64:
			return INT8OID;
		case TP_KIND_FLOAT32:
			return FLOAT4OID;
		case TP_KIND_FLOAT64:
			return FLOAT8OID;
		case TP_KIND_DECIMAL:
			return NUMERICOID;
		case TP_KIND_TEXT:
			return TEXTOID;
		case TP_KIND_JSON:
			return JSONOID;
		case TP_KIND_BINARY:
			return BYTEAOID;
		case TP_KIND_DATE:
			return DATEOID;
		case TP_KIND_TIME:
			return TIMEOID;
		case TP_KIND_TIMESTAMP:
			return TIMESTAMPOID;
		case TP_KIND_TIMESTAMPTZ:
			return TIMESTAMPTZOID;
		case TP_KIND_UUID:
			return UUIDOID;
		case TP_KIND_INTERVAL:
			return INTERVALOID;
		default:
			return InvalidOid;
	}
}

/* whether a kind's values are written in type typid's binary form as they are */
static bool
direct_kind(int kind, Oid typid)
{
	if (kind == TP_KIND_TEXT || kind == TP_KIND_JSON)
		return typid == TEXTOID || typid == VARCHAROID || typid == BPCHAROID ||
			typid == JSONOID || typid == JSONBOID || typid == NAMEOID;
	return natural_type(kind) == typid;
}

static void
mismatch(TpFieldReader *fr, Oid atttypid, int32 atttypmod, const char *filetype)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATATYPE_MISMATCH),
			 errmsg("column \"%s\" is of type %s, but Parquet file column \"%s\" is of type %s",
					fr->attname, type_name(atttypid, atttypmod), fr->filecol, filetype),
			 errhint("Load the file into a table whose columns match it, or cast after loading.")));
}

void
TesseraParquetFieldInit(TpFieldReader *fr, const char *attname, Oid atttypid, int32 atttypmod,
						const char *filecol, const char *filetype, TpType type)
{
	Oid			funcid;
	Oid			sendfn;
	bool		isvarlena;
	Oid			infn;

	memset(fr, 0, sizeof(*fr));
	fr->atttypid = atttypid;
	fr->atttypmod = atttypmod;
	fr->attname = attname;
	fr->filecol = filecol;
	fr->type = type;
	fr->typmod = atttypmod;
	fr->typid = getBaseTypeAndTypmod(atttypid, &fr->typmod);
	fr->natural = natural_type(type.kind);
	fr->convert_text = pg_get_client_encoding() != PG_UTF8;

	if (type.kind == TP_KIND_UNSUPPORTED)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("Parquet file column \"%s\" is of type %s, which cannot be loaded",
						filecol, filetype)));
	if (type.kind == TP_KIND_NULL)
	{
		fr->path = TP_FIELD_NULL;
		return;
	}
	if (type.kind == TP_KIND_LIST)
	{
		TpType		et = {.kind = type.elem_kind,.precision = type.elem_precision,.scale = type.elem_scale};

		fr->elemtyp = get_element_type(fr->typid);
		if (!OidIsValid(fr->elemtyp))
			mismatch(fr, atttypid, atttypmod, filetype);
		fr->elem = palloc(sizeof(TpFieldReader));
		TesseraParquetFieldInit(fr->elem, attname, fr->elemtyp, fr->typmod, filecol, filetype, et);
		fr->path = TP_FIELD_DIRECT;
		return;
	}
	if (direct_kind(type.kind, fr->typid))
	{
		fr->path = TP_FIELD_DIRECT;
		return;
	}

	getTypeBinaryOutputInfo(fr->typid, &sendfn, &isvarlena);
	fmgr_info(sendfn, &fr->send);
	if (type.kind == TP_KIND_TEXT || type.kind == TP_KIND_JSON)
	{
		/* strings are read by the column type's input function, as in CSV */
		fr->path = TP_FIELD_INPUT;
		getTypeInputInfo(fr->typid, &infn, &fr->input_param);
		fmgr_info(infn, &fr->input);
		return;
	}

	fr->path = TP_FIELD_COERCE;
	{
		Oid			recvfn;

		getTypeBinaryInputInfo(fr->natural, &recvfn, &fr->natural_param);
		fmgr_info(recvfn, &fr->natural_recv);
	}
	switch (find_coercion_pathway(fr->typid, fr->natural, COERCION_ASSIGNMENT, &funcid))
	{
		case COERCION_PATH_FUNC:
			fmgr_info(funcid, &fr->cast);
			fr->cast_nargs = get_func_nargs(funcid);
			break;
		case COERCION_PATH_RELABELTYPE:
			break;
		case COERCION_PATH_COERCEVIAIO:
			{
				Oid			outfn;

				fr->via_io = true;
				getTypeOutputInfo(fr->natural, &outfn, &isvarlena);
				fmgr_info(outfn, &fr->natural_out);
				getTypeInputInfo(fr->typid, &infn, &fr->input_param);
				fmgr_info(infn, &fr->input);
				break;
			}
		default:
			mismatch(fr, atttypid, atttypmod, filetype);
	}
	/*
	 * A cast that does not take the typmod (int to numeric, a binary
	 * compatible one) is followed by the type's length coercion, as an
	 * assignment would be: numeric(p, s), varchar(n), timestamp(p).
	 */
	if (fr->typmod >= 0 && !fr->via_io && fr->cast_nargs < 2)
	{
		Oid			lenfn;

		if (find_typmod_coercion_function(fr->typid, &lenfn) == COERCION_PATH_FUNC)
		{
			fmgr_info(lenfn, &fr->length);
			fr->length_nargs = get_func_nargs(lenfn);
		}
	}
}

static inline void
put16(StringInfo out, uint16 v)
{
	v = pg_hton16(v);
	appendBinaryStringInfoNT(out, (char *) &v, 2);
}

static inline void
put32(StringInfo out, uint32 v)
{
	v = pg_hton32(v);
	appendBinaryStringInfoNT(out, (char *) &v, 4);
}

static inline void
put64(StringInfo out, uint64 v)
{
	v = pg_hton64(v);
	appendBinaryStringInfoNT(out, (char *) &v, 8);
}

/* numeric's binary form of value / 10^scale */
static void
put_numeric(StringInfo out, __int128 value, int scale)
{
	bool		negative = value < 0;
	tp_uint128	u = negative ? -(tp_uint128) value : (tp_uint128) value;
	uint16		groups[24];
	int			nint = 0;
	int			nfrac = 0;
	uint16		frac[12];
	tp_uint128	ip;

	if (scale < 0)
	{
		for (int k = 0; k < -scale; k++)
		{
			if (u > ~(tp_uint128) 0 / 10)
				ereport(ERROR,
						(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
						 errmsg("decimal value out of range")));
			u *= 10;
		}
		scale = 0;
	}
	/* the fraction: scale digits, in groups of 4 aligned at the point */
	if (scale > 0)
	{
		int			first = scale % 4 == 0 ? 4 : scale % 4;

		nfrac = (scale + 3) / 4;
		for (int g = nfrac - 1; g >= 0; g--)
		{
			int			ndig = g == nfrac - 1 ? first : 4;
			int			mult = 1;
			int			d = 0;

			for (int k = 0; k < ndig; k++)
			{
				d += (int) (u % 10) * mult;
				u /= 10;
				mult *= 10;
			}
			for (int k = ndig; k < 4; k++)
				d *= 10;
			frac[g] = d;
		}
	}
	for (ip = u; ip > 0; ip /= TP_NUMERIC_NBASE)
		groups[nint++] = (uint16) (ip % TP_NUMERIC_NBASE);

	put16(out, nint + nfrac);
	put16(out, nint > 0 ? nint - 1 : -1);
	put16(out, negative ? TP_NUMERIC_NEG : TP_NUMERIC_POS);
	put16(out, scale);
	for (int i = nint - 1; i >= 0; i--)
		put16(out, groups[i]);
	for (int i = 0; i < nfrac; i++)
		put16(out, frac[i]);
}

static void
out_of_range(TpFieldReader *fr, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
			 errmsg("%s out of range in Parquet file column \"%s\"", what, fr->filecol)));
}

/* the string at row of v, UTF-8 */
static inline const char *
string_at(const TpVector *v, int64 row, int *len)
{
	*len = (int) (v->offsets[row + 1] - v->offsets[row]);
	return (const char *) v->data + v->offsets[row];
}

/*
 * The value at row of v (not NULL) in the binary form of type typid, which
 * direct_kind or natural_type chose.
 */
static void
put_direct(TpFieldReader *fr, Oid typid, const TpVector *v, int64 row, StringInfo out)
{
	switch (fr->type.kind)
	{
		case TP_KIND_BOOL:
			appendStringInfoCharMacro(out, ((const uint8 *) v->values)[row] ? 1 : 0);
			break;
		case TP_KIND_INT16:
			put16(out, ((const int16 *) v->values)[row]);
			break;
		case TP_KIND_INT32:
		case TP_KIND_FLOAT32:
			put32(out, ((const uint32 *) v->values)[row]);
			break;
		case TP_KIND_INT64:
		case TP_KIND_FLOAT64:
		case TP_KIND_TIME:
			put64(out, ((const uint64 *) v->values)[row]);
			break;
		case TP_KIND_DECIMAL:
			put_numeric(out, ((const __int128 *) v->values)[row], fr->type.scale);
			break;
		case TP_KIND_DATE:
			{
				int64		d = (int64) ((const int32 *) v->values)[row] - TP_EPOCH_DAYS;

				if (d < PG_INT32_MIN || d > PG_INT32_MAX)
					out_of_range(fr, "date");
				put32(out, (uint32) (int32) d);
				break;
			}
		case TP_KIND_TIMESTAMP:
		case TP_KIND_TIMESTAMPTZ:
			{
				int64		ts;

				if (pg_sub_s64_overflow(((const int64 *) v->values)[row], TP_EPOCH_USECS, &ts))
					out_of_range(fr, "timestamp");
				put64(out, (uint64) ts);
				break;
			}
		case TP_KIND_UUID:
			appendBinaryStringInfoNT(out, (const char *) v->values + 16 * row, 16);
			break;
		case TP_KIND_INTERVAL:
			{
				const TpInterval *iv = &((const TpInterval *) v->values)[row];

				put64(out, (uint64) (iv->nanoseconds / 1000));
				put32(out, (uint32) iv->days);
				put32(out, (uint32) iv->months);
				break;
			}
		case TP_KIND_BINARY:
			{
				int			len;
				const char *s = string_at(v, row, &len);

				appendBinaryStringInfoNT(out, s, len);
				break;
			}
		case TP_KIND_TEXT:
		case TP_KIND_JSON:
			{
				int			len;
				const char *s = string_at(v, row, &len);

				if (typid == JSONBOID)
					appendStringInfoCharMacro(out, 1);	/* jsonb's format version */
				if (fr->convert_text)
				{
					s = (const char *) pg_do_encoding_conversion((unsigned char *) s, len, PG_UTF8,
																 pg_get_client_encoding());
					len = strlen(s);
				}
				appendBinaryStringInfoNT(out, s, len);
				break;
			}
	}
}

/* a list at row of v as an array of fr->elemtyp */
static void
put_array(TpFieldReader *fr, const TpVector *v, int64 row, StringInfo out)
{
	int64		start = v->offsets[row];
	int64		n = v->offsets[row + 1] - start;
	bool		hasnull = false;

	if (n > MaxArraySize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("list in Parquet file column \"%s\" has too many elements", fr->filecol)));
	for (int64 i = 0; i < n && v->child->nulls; i++)
		hasnull |= v->child->nulls[start + i] != 0;
	put32(out, n > 0 ? 1 : 0);
	put32(out, hasnull ? 1 : 0);
	put32(out, fr->elemtyp);
	if (n > 0)
	{
		put32(out, (uint32) n);
		put32(out, 1);
	}
	for (int64 i = 0; i < n; i++)
		TesseraParquetFieldEncode(fr->elem, v->child, start + i, out);
}

/* the value at row of v through the column type's input function or a cast */
static Datum
converted_value(TpFieldReader *fr, const TpVector *v, int64 row)
{
	Datum		d;

	if (fr->path == TP_FIELD_INPUT)
	{
		int			len;
		const char *s = string_at(v, row, &len);
		char	   *str = pg_any_to_server(s, len, PG_UTF8);

		if (str == s)
			str = pnstrdup(s, len);
		return InputFunctionCall(&fr->input, str, fr->input_param, fr->typmod);
	}

	/* the file's value as its own type, then cast */
	{
		StringInfoData raw;

		initStringInfo(&raw);
		put_direct(fr, fr->natural, v, row, &raw);
		d = ReceiveFunctionCall(&fr->natural_recv, &raw, fr->natural_param, -1);
	}
	if (fr->via_io)
		return InputFunctionCall(&fr->input, OutputFunctionCall(&fr->natural_out, d),
								 fr->input_param, fr->typmod);
	if (fr->cast_nargs >= 3)
		return FunctionCall3(&fr->cast, d, Int32GetDatum(fr->typmod), BoolGetDatum(false));
	if (fr->cast_nargs == 2)
		return FunctionCall2(&fr->cast, d, Int32GetDatum(fr->typmod));
	if (OidIsValid(fr->cast.fn_oid))
		d = FunctionCall1(&fr->cast, d);
	/* then the typmod (TesseraParquetFieldInit) */
	if (fr->length_nargs >= 3)
		return FunctionCall3(&fr->length, d, Int32GetDatum(fr->typmod), BoolGetDatum(false));
	if (fr->length_nargs == 2)
		return FunctionCall2(&fr->length, d, Int32GetDatum(fr->typmod));
	return d;
}

/*
 * Append the value at row of v as one field of binary COPY: its length and
 * the column type's binary form, or -1 for NULL.
 */
void
TesseraParquetFieldEncode(TpFieldReader *fr, const TpVector *v, int64 row, StringInfo out)
{
	int			lenpos;
	uint32		len;

	if (fr->path == TP_FIELD_NULL || (v->nulls && v->nulls[row]))
	{
		put32(out, (uint32) -1);
		return;
	}
	if (v->keys != NULL)
	{
		if (v->keys[row] < 0 || v->keys[row] >= v->child->nrows)
			ereport(ERROR,
					(errcode(ERRCODE_BAD_COPY_FILE_FORMAT),
					 errmsg("dictionary index out of range in column \"%s\"", fr->filecol)));
		TesseraParquetFieldEncode(fr, v->child, v->keys[row], out);
		return;
	}
	lenpos = out->len;
	put32(out, 0);
	if (fr->type.kind == TP_KIND_LIST)
		put_array(fr, v, row, out);
	else if (fr->path == TP_FIELD_DIRECT)
		put_direct(fr, fr->typid, v, row, out);
	else
	{
		bytea	   *sent = SendFunctionCall(&fr->send, converted_value(fr, v, row));

		appendBinaryStringInfoNT(out, VARDATA(sent), VARSIZE(sent) - VARHDRSZ);
	}
	len = pg_hton32((uint32) (out->len - lenpos - 4));
	memcpy(out->data + lenpos, &len, 4);
}

/*
 * Ready fr (initialized by TesseraParquetFieldInit) for
 * TesseraParquetFieldDatum: the table column type's receive function.
 */
void
TesseraParquetFieldPrepareDatums(TpFieldReader *fr)
{
	Oid			recvfn;

	getTypeBinaryInputInfo(fr->atttypid, &recvfn, &fr->attrecv_param);
	fmgr_info(recvfn, &fr->attrecv);
	initStringInfo(&fr->scratch);
}

/*
 * The value at row of v as a Datum of the table column's type (in the
 * current memory context).  The common types are built directly; the rest
 * go through their binary form and the type's receive function, which
 * also checks domains and typmods.
 */
Datum
TesseraParquetFieldDatum(TpFieldReader *fr, const TpVector *v, int64 row, bool *isnull)
{
	const char *p = v->values;
	int			len;

	*isnull = fr->path == TP_FIELD_NULL || (v->nulls && v->nulls[row]);
	if (*isnull)
		return (Datum) 0;
	if (v->keys != NULL)
	{
		if (v->keys[row] < 0 || v->keys[row] >= v->child->nrows)
			ereport(ERROR,
					(errcode(ERRCODE_BAD_COPY_FILE_FORMAT),
					 errmsg("dictionary index out of range in column \"%s\"", fr->filecol)));
		return TesseraParquetFieldDatum(fr, v->child, v->keys[row], isnull);
	}
	if (fr->path == TP_FIELD_DIRECT && fr->atttypid == fr->typid)
	{
		switch (fr->type.kind)
		{
			case TP_KIND_BOOL:
				return BoolGetDatum(((const uint8 *) p)[row] != 0);
			case TP_KIND_INT16:
				return Int16GetDatum(((const int16 *) p)[row]);
			case TP_KIND_INT32:
				return Int32GetDatum(((const int32 *) p)[row]);
			case TP_KIND_INT64:
				return Int64GetDatum(((const int64 *) p)[row]);
			case TP_KIND_FLOAT32:
				return Float4GetDatum(((const float4 *) p)[row]);
			case TP_KIND_FLOAT64:
				return Float8GetDatum(((const float8 *) p)[row]);
			case TP_KIND_DATE:
				{
					int64		d = (int64) ((const int32 *) p)[row] - TP_EPOCH_DAYS;

					if (d < PG_INT32_MIN || d > PG_INT32_MAX || !IS_VALID_DATE((DateADT) d))
						out_of_range(fr, "date");
					return DateADTGetDatum((DateADT) d);
				}
			case TP_KIND_TIMESTAMP:
			case TP_KIND_TIMESTAMPTZ:
				{
					int64		ts;

					/* timestamp(p): the receive function rounds */
					if (fr->atttypmod >= 0)
						break;

					if (pg_sub_s64_overflow(((const int64 *) p)[row], TP_EPOCH_USECS, &ts) ||
						!IS_VALID_TIMESTAMP(ts))
						out_of_range(fr, "timestamp");
					return TimestampGetDatum(ts);
				}
			case TP_KIND_TEXT:
			case TP_KIND_JSON:
				if (fr->typid == TEXTOID || (fr->typid == VARCHAROID && fr->atttypmod < 0))
				{
					const char *s = string_at(v, row, &len);
					char	   *conv = pg_any_to_server(s, len, PG_UTF8);

					if (conv != s)
						len = strlen(conv);
					return PointerGetDatum(cstring_to_text_with_len(conv, len));
				}
				break;
			case TP_KIND_DECIMAL:
				{
					__int128	x = ((const __int128 *) p)[row];
					int32		tm = fr->atttypmod - VARHDRSZ;

					/*
					 * up to 18 digits, at the scale the column keeps (or
					 * none): no rounding or overflow to check
					 */
					if (x >= PG_INT64_MIN && x <= PG_INT64_MAX && fr->type.scale >= 0 &&
						(fr->atttypmod < 0 ||
						 ((((tm & 0x7ff) ^ 1024) - 1024) == fr->type.scale &&
						  ((tm >> 16) & 0xffff) >= fr->type.precision)))
						return NumericGetDatum(int64_div_fast_to_numeric((int64) x, fr->type.scale));
					break;
				}
			case TP_KIND_BINARY:
				{
					const char *s = string_at(v, row, &len);
					bytea	   *b = palloc(len + VARHDRSZ);

					SET_VARSIZE(b, len + VARHDRSZ);
					memcpy(VARDATA(b), s, len);
					return PointerGetDatum(b);
				}
		}
	}
	if ((fr->path == TP_FIELD_INPUT || fr->path == TP_FIELD_COERCE) && fr->atttypid == fr->typid)
		return converted_value(fr, v, row);
	/* the binary form without its length word, then the receive function */
	resetStringInfo(&fr->scratch);
	TesseraParquetFieldEncode(fr, v, row, &fr->scratch);
	{
		StringInfoData body;

		body.data = fr->scratch.data + 4;
		body.len = fr->scratch.len - 4;
		body.maxlen = body.len + 1;
		body.cursor = 0;
		return ReceiveFunctionCall(&fr->attrecv, &body, fr->attrecv_param, fr->atttypmod);
	}
}

/*
 * TesseraParquetPrefetch
 *		The started read is decoded on a thread of the Rust layer from now
 *		on, a batch or two ahead of the backend: the thread starts with
 *		every signal blocked, so that the backend's thread gets them all.
 */
void
TesseraParquetPrefetch(TpReader *reader)
{
	sigset_t	all;
	sigset_t	old;
	char		err[1024];
	int			rc;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = tp_reader_prefetch(reader, err, sizeof(err));
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_RESOURCES),
				 errmsg("could not read Parquet file: %s", err)));
}
