/*-------------------------------------------------------------------------
 *
 * parquet_columns.c
 *	  A file column's vectors as whole columns of a batch: Datums made a
 *	  column at a time, a decimal column's scaled integers, a dictionary
 *	  column's codes and entries.  What TesseraAgg's batch source over file
 *	  tables (parquet_fdw.c) hands the aggregate kernels.
 *
 * NOTES
 *	  Every path gives the values TesseraParquetFieldDatum (parquet_types.c)
 *	  gives row by row, and falls back to it for what it does not take
 *	  (conversions, casts, values a fast path cannot check); the file's
 *	  values are never trusted (UTF-8 checked, dictionary indexes bounded,
 *	  decimal magnitudes computed from the values).
 *
 * IDENTIFICATION
 *	  src/files/parquet_columns.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "datatype/timestamp.h"
#include "mb/pg_wchar.h"
#include "utils/date.h"

#include "tessera/compat.h"
#include "tessera/encoding.h"
#include "tessera/files.h"

/* days from 1970-01-01 (Parquet's dates) to 2000-01-01 (PostgreSQL's) */
#define TP_EPOCH_DAYS	((int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE))

/* the string at row of v, UTF-8 */
static inline const char *
string_at(const TpVector *v, int64 row, int *len)
{
	*len = (int) (v->offsets[row + 1] - v->offsets[row]);
	return (const char *) v->data + v->offsets[row];
}

static bool column_text_block(const TpVector *v, int n, int maxchars, Datum *values,
							  bool *isnull);

/*
 * text and varchar(n): the file's UTF-8 checked and kept, in one block;
 * varchar(n)'s values within n characters (longer ones are varcharrecv's:
 * blanks cut, else its error)
 */
static bool
column_text(TpFieldReader *fr, const TpVector *v, int n, Datum *values, bool *isnull)
{
	if (!(fr->path == TP_FIELD_DIRECT && fr->atttypid == fr->typid &&
		(fr->type.kind == TP_KIND_TEXT || fr->type.kind == TP_KIND_JSON) &&
		(fr->typid == TEXTOID || fr->typid == VARCHAROID) &&
		GetDatabaseEncoding() == PG_UTF8))
		return false;
	return column_text_block(v, n,
							 fr->typid == VARCHAROID && fr->atttypmod >= (int32) VARHDRSZ ?
							 fr->atttypmod - VARHDRSZ : -1,
							 values, isnull);
}

/* characters of UTF-8 s: the bytes that do not continue one */
static int
utf8_chars(const char *s, int len)
{
	int			n = 0;

	for (int i = 0; i < len; i++)
		n += ((unsigned char) s[i] & 0xC0) != 0x80;
	return n;
}

static bool
column_text_block(const TpVector *v, int n, int maxchars, Datum *values, bool *isnull)
{
	Size		total = 0;
	char	   *p;

	for (int i = 0; i < n; i++)
		total += INTALIGN(VARHDRSZ + (Size) (v->offsets[i + 1] - v->offsets[i]));
	p = MemoryContextAllocHuge(CurrentMemoryContext, Max(total, 1));
	for (int i = 0; i < n; i++)
	{
		int			len;
		const char *s;

		isnull[i] = v->nulls != NULL && v->nulls[i];
		if (isnull[i])
		{
			values[i] = (Datum) 0;
			continue;
		}
		s = string_at(v, i, &len);
		if (!pg_verify_mbstr(PG_UTF8, s, len, true) ||
			(maxchars >= 0 && len > maxchars && utf8_chars(s, len) > maxchars))
			return false;		/* the row's own error (or cut), by the caller */
		if (len + VARHDRSZ_SHORT <= VARATT_SHORT_MAX)
		{
			SET_VARSIZE_SHORT(p, len + VARHDRSZ_SHORT);
			memcpy(p + VARHDRSZ_SHORT, s, len);
			values[i] = PointerGetDatum(p);
			p += len + VARHDRSZ_SHORT;
		}
		else
		{
			p = (char *) INTALIGN(p);
			SET_VARSIZE(p, len + VARHDRSZ);
			memcpy(p + VARHDRSZ, s, len);
			values[i] = PointerGetDatum(p);
			p += len + VARHDRSZ;
		}
	}
	return true;
}

/* char(n): ASCII values padded in one block (else false: bpcharrecv's) */
static bool
column_bpchar(TpFieldReader *fr, const TpVector *v, int n, Datum *values, bool *isnull)
{
	/*
	 * char(n): ASCII strings of at most n bytes are n characters once
	 * padded with blanks, as bpcharrecv makes them
	 */
	int			width = fr->atttypmod >= (int32) VARHDRSZ ? fr->atttypmod - VARHDRSZ : -1;
	Size		total = 0;
	char	   *p;

	if (!(fr->path == TP_FIELD_DIRECT && fr->atttypid == fr->typid && fr->typid == BPCHAROID &&
		  fr->type.kind == TP_KIND_TEXT && GetDatabaseEncoding() == PG_UTF8))
		return false;

	for (int i = 0; i < n; i++)
		total += INTALIGN(VARHDRSZ + Max((Size) (v->offsets[i + 1] - v->offsets[i]),
										(Size) Max(width, 0)));
	p = MemoryContextAllocHuge(CurrentMemoryContext, Max(total, 1));
	for (int i = 0; i < n; i++)
	{
		int			len;
		const char *s;
		int			out;
		bool		ascii = true;

		isnull[i] = v->nulls != NULL && v->nulls[i];
		if (isnull[i])
		{
			values[i] = (Datum) 0;
			continue;
		}
		s = string_at(v, i, &len);
		for (int k = 0; k < len; k++)
			ascii &= (unsigned char) s[k] < 0x80 && s[k] != '\0';
		if (!ascii || (width >= 0 && len > width))
			return false;		/* bpcharrecv's business: the caller's */
		out = width >= 0 ? width : len;
		if (out + VARHDRSZ_SHORT <= VARATT_SHORT_MAX)
		{
			SET_VARSIZE_SHORT(p, out + VARHDRSZ_SHORT);
			memcpy(p + VARHDRSZ_SHORT, s, len);
			memset(p + VARHDRSZ_SHORT + len, ' ', out - len);
			values[i] = PointerGetDatum(p);
			p += out + VARHDRSZ_SHORT;
		}
		else
		{
			p = (char *) INTALIGN(p);
			SET_VARSIZE(p, out + VARHDRSZ);
			memcpy(p + VARHDRSZ, s, len);
			memset(p + VARHDRSZ + len, ' ', out - len);
			values[i] = PointerGetDatum(p);
			p += out + VARHDRSZ;
		}
	}
	return true;
}

/* numeric from a decimal column: as TesseraParquetFieldScaled takes it */
static bool
column_decimal(TpFieldReader *fr, const TpVector *v, int n, Datum *values, bool *isnull)
{
	__int128   *scaled;
	bool	   *nulls;
	int			bits;

	if (!TesseraParquetFieldScaled(fr, v, n, &scaled, &nulls, &bits))
		return false;
	memcpy(isnull, nulls, n);
	TesseraNumericsFromScaled(scaled, isnull, n, fr->type.scale, values);
	if (scaled != v->values)
		pfree(scaled);
	pfree(nulls);
	return true;
}

/* values passed by value: one loop per kind, NULLs flagged after */
static bool
column_byval(TpFieldReader *fr, const TpVector *v, int n, Datum *values, bool *isnull)
{
	bool		done = true;

	if (fr->path != TP_FIELD_DIRECT || fr->atttypid != fr->typid)
		return false;

	switch (fr->type.kind)
	{
		case TP_KIND_INT16:
			for (int i = 0; i < n; i++)
				values[i] = Int16GetDatum(((const int16 *) v->values)[i]);
			break;
		case TP_KIND_INT32:
			for (int i = 0; i < n; i++)
				values[i] = Int32GetDatum(((const int32 *) v->values)[i]);
			break;
		case TP_KIND_INT64:
			for (int i = 0; i < n; i++)
				values[i] = Int64GetDatum(((const int64 *) v->values)[i]);
			break;
		case TP_KIND_FLOAT64:
			for (int i = 0; i < n; i++)
				values[i] = Float8GetDatum(((const float8 *) v->values)[i]);
			break;
		case TP_KIND_DATE:
			{
				/* Parquet's days since 1970 within PostgreSQL's dates? */
				const int32 *d = v->values;
				int32		lo = PG_INT32_MAX;
				int32		hi = PG_INT32_MIN;

				for (int i = 0; i < n; i++)
				{
					int32		x = (v->nulls && v->nulls[i]) ? TP_EPOCH_DAYS : d[i];

					lo = Min(lo, x);
					hi = Max(hi, x);
				}
				if (n > 0 && ((int64) lo - TP_EPOCH_DAYS < DATETIME_MIN_JULIAN - POSTGRES_EPOCH_JDATE ||
							  (int64) hi - TP_EPOCH_DAYS >= DATE_END_JULIAN - POSTGRES_EPOCH_JDATE))
				{
					done = false;	/* the row's own error */
					break;
				}
				for (int i = 0; i < n; i++)
					values[i] = DateADTGetDatum((DateADT) (d[i] - TP_EPOCH_DAYS));
				break;
			}
		default:
			done = false;
	}
	if (!done)
		return false;
	if (v->nulls == NULL)
		memset(isnull, false, n);
	else
		for (int i = 0; i < n; i++)
		{
			isnull[i] = v->nulls[i] != 0;
			if (isnull[i])
				values[i] = (Datum) 0;
		}
	return true;
}

/*
 * TesseraParquetFieldColumnFast
 *		Rows 0..n-1 of v as Datums of the table column's type (NULLs
 *		flagged), allocated in the current memory context, where a whole
 *		column can be made at once: strings of a text or char(n) column in
 *		one block (short headers where they fit, as a tuple stores them),
 *		values passed by value in tight loops, a dictionary column's entries
 *		once.  Never raises an error: false, with values undefined, where a
 *		value needs a conversion or would fail one -- the caller then makes
 *		the values row by row (TesseraParquetFieldDatum), which raises the
 *		row's own error.
 */
bool
TesseraParquetFieldColumnFast(TpFieldReader *fr, const TpVector *v, int n, Datum *values,
							  bool *isnull)
{
	if (v->keys != NULL)
	{
		int			nd = (int) v->child->nrows;
		Datum	   *entries = palloc(sizeof(Datum) * Max(nd, 1));
		bool	   *entnull = palloc(sizeof(bool) * Max(nd, 1));

		if (fr->path == TP_FIELD_NULL ||
			!TesseraParquetFieldColumnFast(fr, v->child, nd, entries, entnull))
			return false;
		for (int i = 0; i < n; i++)
		{
			int32		k = v->keys[i];

			isnull[i] = v->nulls != NULL && v->nulls[i];
			if (!isnull[i] && (k < 0 || k >= nd))
				return false;
			isnull[i] |= !isnull[i] && entnull[k];
			values[i] = isnull[i] ? (Datum) 0 : entries[k];
		}
		return true;
	}
	return column_text(fr, v, n, values, isnull) || column_bpchar(fr, v, n, values, isnull) ||
		column_byval(fr, v, n, values, isnull) || column_decimal(fr, v, n, values, isnull);
}

/*
 * TesseraParquetFieldColumn
 *		TesseraParquetFieldColumnFast, else row by row (a dictionary
 *		column's entries once), raising a value's error.
 */
void
TesseraParquetFieldColumn(TpFieldReader *fr, const TpVector *v, int n, Datum *values,
						  bool *isnull)
{
	if (TesseraParquetFieldColumnFast(fr, v, n, values, isnull))
		return;
	if (v->keys != NULL)
	{
		int			nd = (int) v->child->nrows;
		Datum	   *entries = palloc(sizeof(Datum) * Max(nd, 1));
		bool	   *entnull = palloc(sizeof(bool) * Max(nd, 1));

		TesseraParquetFieldColumn(fr, v->child, nd, entries, entnull);
		for (int i = 0; i < n; i++)
		{
			int32		k = v->keys[i];

			isnull[i] = (v->nulls != NULL && v->nulls[i]) || fr->path == TP_FIELD_NULL;
			if (!isnull[i] && (k < 0 || k >= nd))
				ereport(ERROR,
						(errcode(ERRCODE_BAD_COPY_FILE_FORMAT),
						 errmsg("dictionary index out of range in column \"%s\"", fr->filecol)));
			isnull[i] |= !isnull[i] && entnull[k];
			values[i] = isnull[i] ? (Datum) 0 : entries[k];
		}
		return;
	}
	for (int i = 0; i < n; i++)
		values[i] = TesseraParquetFieldDatum(fr, v, i, &isnull[i]);
}

/*
 * TesseraParquetFieldScaled
 *		A decimal file column read into a numeric column as the integers it
 *		holds, scaled by 10^scale (fr->type.scale), without building a
 *		numeric each: *values (NULL rows 0), *isnull and a bound 2^bits on
 *		their magnitude, computed from the values themselves (a file's
 *		declared precision is not trusted).  False where the values would
 *		need a cast, rounding or a typmod check the scaled form cannot make:
 *		the caller reads Datums instead, and they do.
 */
bool
TesseraParquetFieldScaled(TpFieldReader *fr, const TpVector *v, int n, __int128 **values,
						  bool **isnull, int *bits)
{
	const __int128 *src = v->values;
	unsigned __int128 mag = 0;
	int32		tm = fr->atttypmod - VARHDRSZ;
	int			maxdigits = 38;

	if (fr->path != TP_FIELD_DIRECT || fr->atttypid != fr->typid || fr->typid != NUMERICOID ||
		fr->type.kind != TP_KIND_DECIMAL || fr->type.scale < 0 || fr->type.scale > 38)
		return false;
	if (fr->atttypmod >= 0)
	{
		/* numeric(p, s): the file's scale, and every value within p digits */
		if ((((tm & 0x7ff) ^ 1024) - 1024) != fr->type.scale)
			return false;
		maxdigits = (tm >> 16) & 0xffff;
	}
	*isnull = palloc(Max(n, 1));
	if (v->nulls != NULL)
	{
		__int128   *copy = MemoryContextAllocHuge(CurrentMemoryContext,
												  sizeof(__int128) * Max(n, 1));

		memcpy(*isnull, v->nulls, n);
		for (int i = 0; i < n; i++)
			copy[i] = v->nulls[i] ? 0 : src[i];
		*values = copy;
	}
	else
	{
		memset(*isnull, false, n);
		*values = (__int128 *) src;
	}
	/*
	 * The magnitudes OR'ed: at least the largest, with its highest bit.
	 * Most decimals fit 64 bits: their low halves are OR'ed in a loop the
	 * compiler vectorizes, and the 128-bit loop runs only if one does not.
	 */
	{
		const int64 *halves = (const int64 *) *values;
		uint64		mag64 = 0;
		bool		wide = false;

		for (int i = 0; i < n; i++)
		{
			int64		lo = halves[2 * i];
			int64		hi = halves[2 * i + 1];

			wide |= hi != (lo >> 63);
			mag64 |= (uint64) (lo < 0 ? -(uint64) lo : (uint64) lo);
		}
		mag = mag64;
		if (wide)
			for (int i = 0; i < n; i++)
			{
				__int128	x = (*values)[i];

				mag |= (unsigned __int128) (x < 0 ? -x : x);
			}
	}
	*bits = 1;
	while (*bits < 128 && (mag >> *bits) != 0)
		(*bits)++;
	if (maxdigits < 38)
	{
		/* more than p digits: the Datum path raises numeric's own error */
		__int128	limit = 1;

		for (int d = 0; d < maxdigits; d++)
			limit *= 10;
		if (mag >= (unsigned __int128) limit)
			for (int i = 0; i < n; i++)
				if ((*values)[i] >= limit || (*values)[i] <= -limit)
					return false;
	}
	return *bits < 127;
}

/*
 * TesseraParquetFieldDict
 *		A dictionary column's rows as codes into its entries (-1 for NULL),
 *		the entries as Datums of the table column's type; false if v is not
 *		one.  In the current memory context.
 */
bool
TesseraParquetFieldDict(TpFieldReader *fr, const TpVector *v, int n, int64 **codes,
						Datum **entries, int *ndict)
{
	int			nd;
	bool	   *entnull;

	if (v->keys == NULL || fr->path == TP_FIELD_NULL)
		return false;
	nd = (int) v->child->nrows;
	*entries = palloc(sizeof(Datum) * Max(nd, 1));
	entnull = palloc(sizeof(bool) * Max(nd, 1));
	TesseraParquetFieldColumn(fr, v->child, nd, *entries, entnull);
	*codes = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(int64) * Max(n, 1));
	for (int i = 0; i < n; i++)
	{
		int32		k = v->keys[i];

		if (v->nulls != NULL && v->nulls[i])
			(*codes)[i] = -1;
		else if (k < 0 || k >= nd)
			ereport(ERROR,
					(errcode(ERRCODE_BAD_COPY_FILE_FORMAT),
					 errmsg("dictionary index out of range in column \"%s\"", fr->filecol)));
		else
			(*codes)[i] = entnull[k] ? -1 : k;
	}
	*ndict = nd;
	return true;
}
