/*-------------------------------------------------------------------------
 *
 * files.h
 *	  Data files in and out of tables: COPY to and from Parquet
 *	  (src/files/).
 *
 * IDENTIFICATION
 *	  include/tessera/files.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef TESSERA_FILES_H
#define TESSERA_FILES_H

#include "fmgr.h"
#include "lib/stringinfo.h"
#include "nodes/parsenodes.h"
#include "parser/parse_node.h"
#include "tessera/parquet_ffi.h"

/* parquet_copy.c: COPY ... (FORMAT parquet | arrow), run by the utility hook */
typedef enum TesseraCopyFormat
{
	TESSERA_COPY_OTHER,			/* PostgreSQL's own formats */
	TESSERA_COPY_PARQUET,
	TESSERA_COPY_ARROW			/* Arrow IPC files (Feather v2) */
} TesseraCopyFormat;

extern TesseraCopyFormat TesseraCopyFormatOf(CopyStmt *stmt);
extern void TesseraCopySelect(StringInfo sql, List *attlist, Oid relid, bool only);
extern void TesseraParquetCopy(ParseState *pstate, CopyStmt *stmt, int stmt_location,
							   int stmt_len, uint64 *processed);

/* utility/copy_text.c: COPY FROM text or CSV with the input functions in a worker */
extern PGDLLIMPORT int tessera_debug_copy_batch_rows;
extern bool TesseraTextCopyFrom(ParseState *pstate, CopyStmt *stmt, uint64 *processed);

/*
 * parquet_types.c: PostgreSQL values to column vectors (writing) and
 * column vectors to COPY's binary fields (reading).
 */
typedef struct TpColumnBuilder
{
	const char *name;			/* the column's, for messages */
	TpType		type;
	Oid			typid;			/* base type of the column */
	int			width;			/* bytes per value of a fixed-width kind */
	/* arrays: the element type and its builder */
	Oid			elemtyp;
	int16		elmlen;
	bool		elmbyval;
	char		elmalign;
	struct TpColumnBuilder *child;
	/* the batch so far */
	int64		nrows;
	StringInfoData nulls;
	StringInfoData values;
	StringInfoData offsets;
	StringInfoData data;
	TpVector	vector;
	TpVector	child_vector;
} TpColumnBuilder;

extern void TesseraParquetBuilderInit(TpColumnBuilder *b, const char *name, Oid typid,
									  int32 typmod);
extern void TesseraParquetBuilderAppend(TpColumnBuilder *b, Datum value, bool isnull);
extern bool TesseraParquetBuilderAppendScaled(TpColumnBuilder *b, __int128 v, int scale,
											  bool isnull);
extern TpVector *TesseraParquetBuilderVector(TpColumnBuilder *b);
extern void TesseraParquetBuilderReset(TpColumnBuilder *b);
extern size_t TesseraParquetBuilderBytes(TpColumnBuilder *b);

typedef enum TpFieldPath
{
	TP_FIELD_NULL,				/* the file column is all NULL */
	TP_FIELD_DIRECT,			/* the file's value is the column type's binary form */
	TP_FIELD_COERCE,			/* the file's type converted by a cast */
	TP_FIELD_INPUT				/* file text through the column type's input function */
} TpFieldPath;

typedef struct TpFieldReader
{
	const char *attname;
	const char *filecol;
	TpType		type;			/* of the file column */
	TpFieldPath path;
	Oid			typid;			/* base type of the table column */
	int32		typmod;
	Oid			natural;		/* the PostgreSQL type of the file's values */
	/* TP_FIELD_COERCE: a cast function, or none for a binary-compatible one */
	bool		via_io;
	FmgrInfo	cast;
	int			cast_nargs;
	FmgrInfo	length;			/* then the typmod's length coercion, if any */
	int			length_nargs;
	FmgrInfo	natural_out;
	FmgrInfo	natural_recv;
	Oid			natural_param;
	/* TP_FIELD_COERCE and TP_FIELD_INPUT */
	FmgrInfo	input;
	Oid			input_param;
	FmgrInfo	send;
	/* lists into arrays: the element type and its reader */
	Oid			elemtyp;
	struct TpFieldReader *elem;
	bool		convert_text;	/* the client encoding is not UTF-8 */
	/* values as Datums of the table column's type (TesseraParquetFieldDatum) */
	Oid			atttypid;
	int32		atttypmod;
	FmgrInfo	attrecv;
	Oid			attrecv_param;
	StringInfoData scratch;
} TpFieldReader;

extern void TesseraParquetFieldInit(TpFieldReader *fr, const char *attname, Oid atttypid,
									int32 atttypmod, const char *filecol, const char *filetype,
									TpType type);
extern void TesseraParquetFieldEncode(TpFieldReader *fr, const TpVector *v, int64 row,
									  StringInfo out);
extern void TesseraParquetFieldPrepareDatums(TpFieldReader *fr);
extern void TesseraParquetPrefetch(TpReader *reader);
extern Datum TesseraParquetFieldDatum(TpFieldReader *fr, const TpVector *v, int64 row, bool *isnull);
extern bool TesseraParquetFieldColumnFast(TpFieldReader *fr, const TpVector *v, int n,
										  Datum *values, bool *isnull);
extern void TesseraParquetFieldColumn(TpFieldReader *fr, const TpVector *v, int n, Datum *values,
									  bool *isnull);
extern bool TesseraParquetFieldDict(TpFieldReader *fr, const TpVector *v, int n, int64 **codes,
									Datum **entries, int *ndict);
extern bool TesseraParquetFieldScaled(TpFieldReader *fr, const TpVector *v, int n,
									  __int128 **values, bool **isnull, int *bits);

/* parquet_fdw.c: _PG_init registers the file tables' batch source */
extern void TesseraRegisterParquetSource(void);

#endif							/* TESSERA_FILES_H */
