/*-------------------------------------------------------------------------
 *
 * parquet_ffi.h
 *	  The C interface of tessera's Parquet and Arrow file layer
 *	  (rust/src/lib.rs: Apache Arrow's Rust parquet, arrow and arrow-ipc
 *	  crates, linked statically).
 *
 * NOTES
 *	  The Rust side never calls back into PostgreSQL and never unwinds into
 *	  C: a call that fails returns NULL or a negative number and leaves a
 *	  message in the caller's buffer, which the caller reports with
 *	  ereport.  Handles must be freed on every path (a memory context
 *	  callback does it on error).
 *
 *	  Column vectors are the currency both ways: for writing, the caller
 *	  owns them; for reading, they point into the reader's current batch
 *	  and stay valid until the next tp_reader_next.
 *
 * IDENTIFICATION
 *	  include/tessera/parquet_ffi.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef TESSERA_PARQUET_FFI_H
#define TESSERA_PARQUET_FFI_H

#include <stddef.h>
#include <stdint.h>

/* canonical kinds of column values (rust/src/lib.rs KIND_*) */
#define TP_KIND_UNSUPPORTED	(-1)
#define TP_KIND_NULL		0	/* reading only: a column of nothing but NULLs */
#define TP_KIND_BOOL		1	/* one byte per value */
#define TP_KIND_INT16		2
#define TP_KIND_INT32		3
#define TP_KIND_INT64		4
#define TP_KIND_FLOAT32		5
#define TP_KIND_FLOAT64		6
#define TP_KIND_DECIMAL		7	/* __int128 scaled by 10^scale */
#define TP_KIND_TEXT		8	/* UTF-8 bytes at offsets */
#define TP_KIND_BINARY		9	/* bytes at offsets */
#define TP_KIND_DATE		10	/* int32 days since 1970-01-01 */
#define TP_KIND_TIME		11	/* int64 microseconds since midnight */
#define TP_KIND_TIMESTAMP	12	/* int64 microseconds since 1970-01-01 */
#define TP_KIND_TIMESTAMPTZ	13	/* the same, UTC */
#define TP_KIND_UUID		14	/* 16 bytes */
#define TP_KIND_JSON		15	/* UTF-8 JSON text at offsets */
#define TP_KIND_INTERVAL	16	/* reading only: TpInterval */
#define TP_KIND_LIST		17	/* offsets into the element vector */

#define TP_FORMAT_PARQUET	0
#define TP_FORMAT_ARROW		1	/* Arrow IPC file (Feather v2) */

#define TP_COMPRESSION_NONE		0
#define TP_COMPRESSION_SNAPPY	1
#define TP_COMPRESSION_ZSTD		2
#define TP_COMPRESSION_LZ4		3
#define TP_COMPRESSION_GZIP		4

typedef struct TpType
{
	int32_t		kind;
	int32_t		precision;		/* decimal */
	int32_t		scale;
	int32_t		elem_kind;		/* list: its elements' */
	int32_t		elem_precision;
	int32_t		elem_scale;
} TpType;

typedef struct TpVector
{
	int64_t		nrows;
	const uint8_t *nulls;		/* 1 for NULL; NULL pointer: none */
	const void *values;			/* fixed-width kinds */
	const int64_t *offsets;		/* text, json, binary, list: nrows + 1 */
	const uint8_t *data;		/* text, json, binary */
	const struct TpVector *child;	/* list: the elements; dictionary: its values */
	const int32_t *keys;		/* a dictionary column (tp_reader_want_dictionary):
								 * each row's index into child, or NULL */
} TpVector;

typedef struct TpInterval
{
	int32_t		months;
	int32_t		days;
	int64_t		nanoseconds;
} TpInterval;

typedef struct TpWriter TpWriter;
typedef struct TpReader TpReader;

/* path NULL: the file is built in memory, read with tp_writer_drain */
extern TpWriter *tp_writer_open(const char *path, int ncols, const char *const *names,
								const TpType *types, int compression, int level,
								int64_t row_group_rows, int format, char *err, size_t errlen);
extern int	tp_writer_write(TpWriter *w, int64_t nrows, const TpVector *vectors,
							char *err, size_t errlen);
extern int	tp_writer_close(TpWriter *w, char *err, size_t errlen);
extern void tp_writer_drain(TpWriter *w, const uint8_t **data, size_t *len);
extern void tp_writer_free(TpWriter *w);

/* a Parquet file, or an Arrow IPC file (told by its first bytes) */
extern TpReader *tp_reader_open(const char *path, char *err, size_t errlen);
extern TpReader *tp_reader_open_memory(const uint8_t *data, size_t len, char *err, size_t errlen);
extern int	tp_reader_num_columns(TpReader *r);
extern int64_t tp_reader_num_rows(TpReader *r);
extern const char *tp_reader_column_name(TpReader *r, int i);
extern const char *tp_reader_column_type_name(TpReader *r, int i);
extern TpType tp_reader_column_type(TpReader *r, int i);
/* row groups; an Arrow file's record batches */
extern int	tp_reader_num_row_groups(TpReader *r);
extern int	tp_reader_is_arrow(TpReader *r);
/* read string column col with its dictionary (keys into child); 1 if it can */
extern int	tp_reader_want_dictionary(TpReader *r, int col);
/* row_groups: those to read; nrow_groups < 0: all; may be called again */
extern int	tp_reader_start(TpReader *r, int ncols, const int *columns, int64_t batch_rows,
							const int *row_groups, int nrow_groups, char *err, size_t errlen);
/* decode the started read on a thread of its own (call with signals blocked) */
extern int	tp_reader_prefetch(TpReader *r, char *err, size_t errlen);
extern int64_t tp_reader_next(TpReader *r, TpVector *vectors, char *err, size_t errlen);
/* per row group min and max of a column; 0 done, 1 none kept, -1 error */
extern int	tp_reader_stats(TpReader *r, int col, TpVector *mins, TpVector *maxs,
							char *err, size_t errlen);
extern void tp_reader_free(TpReader *r);

#endif							/* TESSERA_PARQUET_FFI_H */
