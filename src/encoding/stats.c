/*-------------------------------------------------------------------------
 *
 * stats.c
 *	  A chunk's summary: the least and greatest of its values, and their
 *	  bytes in a stripe directory.
 *
 * NOTES
 *	  Values compare in the column type's default btree order (integers and
 *	  floats directly, anything else through its comparison function and
 *	  collation), the order the planner's row-group filters assume.  A
 *	  value longer than STATS_MAX_BYTES gives the chunk no summary: a scan
 *	  then reads it.  Serialized values are checked when read back, as
 *	  anything else read from disk.
 *
 * IDENTIFICATION
 *	  src/encoding/stats.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/tupmacs.h"
#include "utils/fmgroids.h"
#include "utils/float.h"
#include "utils/varlena.h"

#include "tessera/encoding.h"

#define STATS_MAX_BYTES		1024

static int
cmp_datum(const TesseraColumnType *type, Datum a, Datum b)
{
	switch (type->stats)
	{
		case TESSERA_STATS_SIGNED:
			{
				int64		x = TesseraByvalToInt(a, type->typlen);
				int64		y = TesseraByvalToInt(b, type->typlen);

				return (x > y) - (x < y);
			}
		case TESSERA_STATS_FLOAT4:
			return float4_cmp_internal(DatumGetFloat4(a), DatumGetFloat4(b));
		case TESSERA_STATS_FLOAT8:
			return float8_cmp_internal(DatumGetFloat8(a), DatumGetFloat8(b));
		case TESSERA_STATS_CMP:
			/* text: bttextcmp's comparison, without its call and detoasting */
			if (type->cmp.fn_oid == F_BTTEXTCMP &&
				!VARATT_IS_EXTERNAL(DatumGetPointer(a)) && !VARATT_IS_COMPRESSED(DatumGetPointer(a)) &&
				!VARATT_IS_EXTERNAL(DatumGetPointer(b)) && !VARATT_IS_COMPRESSED(DatumGetPointer(b)))
				return varstr_cmp(VARDATA_ANY(DatumGetPointer(a)), VARSIZE_ANY_EXHDR(DatumGetPointer(a)),
								  VARDATA_ANY(DatumGetPointer(b)), VARSIZE_ANY_EXHDR(DatumGetPointer(b)),
								  type->collation);
			return DatumGetInt32(FunctionCall2Coll((FmgrInfo *) &type->cmp,
												   type->collation, a, b));
		default:
			return 0;
	}
}

/* The least and greatest of n values, by the column's order. */
void
TesseraMinMaxDatums(const TesseraColumnType *type, const Datum *vals, int n,
			  TesseraEncodedChunk *out)
{
	int			imin = 0,
				imax = 0;

	if (type->stats == TESSERA_STATS_NONE || n == 0)
		return;
	for (int i = 1; i < n; i++)
	{
		if (cmp_datum(type, vals[i], vals[imin]) < 0)
			imin = i;
		else if (cmp_datum(type, vals[i], vals[imax]) > 0)
			imax = i;
	}
	out->has_stats = true;
	out->min = vals[imin];
	out->max = vals[imax];
}

/* The same, for integers whose values are in ints[] too. */
void
TesseraMinMaxInts(const TesseraColumnType *type, const Datum *vals, const int64 *ints, int n,
			TesseraEncodedChunk *out)
{
	int			imin = 0,
				imax = 0;

	if (type->stats != TESSERA_STATS_SIGNED)
	{
		TesseraMinMaxDatums(type, vals, n, out);
		return;
	}
	for (int i = 1; i < n; i++)
	{
		if (ints[i] < ints[imin])
			imin = i;
		else if (ints[i] > ints[imax])
			imax = i;
	}
	out->has_stats = true;
	out->min = vals[imin];
	out->max = vals[imax];
}

/*
 * TesseraStatSerialize
 *		Append a min/max value's bytes to out; false if it is too long to
 *		keep (the chunk then has no summary).
 */
bool
TesseraStatSerialize(const TesseraColumnType *type, Datum value, TesseraBuf *out,
					 uint32 *off, uint32 *len)
{
	Size		n;

	if (type->typbyval)
	{
		char		tmp[sizeof(Datum)];

		store_att_byval(tmp, value, type->typlen);
		*off = (uint32) out->len;
		*len = type->typlen;
		TesseraBufAppend(out, tmp, type->typlen);
		return true;
	}
	if (type->typlen > 0)
		n = type->typlen;
	else if (type->typlen == -1)
		n = VARSIZE_ANY(DatumGetPointer(value));
	else
		n = strlen(DatumGetCString(value)) + 1;
	if (n > STATS_MAX_BYTES)
		return false;
	*off = (uint32) out->len;
	*len = (uint32) n;
	TesseraBufAppend(out, DatumGetPointer(value), n);
	return true;
}

/*
 * TesseraStatDeserialize
 *		A Datum for a serialized min/max, palloc'd in the current context.
 *		Returns (Datum) 0 for bytes that do not form a valid value.
 */
Datum
TesseraStatDeserialize(const TesseraColumnType *type, const char *data, uint32 len)
{
	char	   *copy;

	if (type->typbyval)
	{
		if (len != (uint32) type->typlen)
			return (Datum) 0;
		switch (len)
		{
			case 1:
				return CharGetDatum(data[0]);
			case 2:
				{
					int16		v;

					memcpy(&v, data, sizeof(v));
					return Int16GetDatum(v);
				}
			case 4:
				{
					int32		v;

					memcpy(&v, data, sizeof(v));
					return Int32GetDatum(v);
				}
			case 8:
				{
					int64		v;

					memcpy(&v, data, sizeof(v));
					return Int64GetDatum(v);
				}
			default:
				return (Datum) 0;
		}
	}
	if (type->typlen > 0 && len != (uint32) type->typlen)
		return (Datum) 0;
	if (type->typlen == -1 && (len < 1 || VARSIZE_ANY(data) != len ||
							   VARATT_IS_EXTERNAL(data) || VARATT_IS_COMPRESSED(data)))
		return (Datum) 0;
	if (type->typlen == -2 && (len < 1 || data[len - 1] != '\0'))
		return (Datum) 0;
	copy = palloc(MAXALIGN(len));
	memcpy(copy, data, len);
	return PointerGetDatum(copy);
}
