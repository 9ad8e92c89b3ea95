/*-------------------------------------------------------------------------
 *
 * parquet_copy.c
 *	  COPY to and from Parquet files and Arrow IPC files (Feather v2):
 *	  COPY t TO 'f.parquet', COPY (query) TO ..., COPY t FROM ..., with
 *	  FORMAT parquet / arrow or by the file's extension, to and from files,
 *	  STDOUT and STDIN; for tables of any access method.  COPY FROM tells
 *	  the two formats apart by the file's first bytes.
 *
 * NOTES
 *	  COPY ... TO runs the query (for a table, SELECT of its columns, so
 *	  that privileges and row-level security apply as for COPY's own
 *	  query form) into a DestReceiver that gathers column vectors and hands
 *	  batches to the Parquet writer (parquet_types.c maps the types),
 *	  which encodes them on a thread of its own when writing a file.
 *
 *	  COPY ... FROM is PostgreSQL's own COPY FROM, reading COPY's binary
 *	  format from a data source callback that encodes the file's batches:
 *	  everything COPY FROM does (defaults, constraints, triggers, partition
 *	  routing, indexes, FREEZE, WHERE, the access method's batch insert)
 *	  applies unchanged.  File columns go to the table's columns by
 *	  position (as COPY's other formats) or, with MATCH_BY 'name', by
 *	  name; every column is checked before any row is loaded.  From STDIN
 *	  the data is spooled to a temporary file first, since a Parquet
 *	  file's footer comes last.
 *
 *	  Privileges are COPY's: files need pg_read_server_files or
 *	  pg_write_server_files (or superuser); STDIN and STDOUT need none.
 *	  PROGRAM is not supported.
 *
 * IDENTIFICATION
 *	  src/files/parquet_copy.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>

#include "access/heapam.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_authid.h"
#include "commands/copy.h"
#include "commands/defrem.h"
#include "commands/progress.h"
#include "executor/executor.h"
#include "libpq/libpq.h"
#include "libpq/pqformat.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parse_coerce.h"
#include "parser/parse_collate.h"
#include "parser/parse_expr.h"
#include "parser/parse_relation.h"
#include "parser/parser.h"
#include "pgstat.h"
#include "storage/fd.h"
#include "tcop/dest.h"
#include "tcop/tcopprot.h"
#include "tcop/utility.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"

#include "tessera/compat.h"
#include "tessera/catalog.h"
#include "tessera/files.h"
#include "tessera/reader.h"
#include "tessera/tableam.h"
#include "tessera/xlog.h"

#define TP_ERRLEN			1024
/* rows per batch handed to the writer, and the most bytes one may hold */
#define TP_WRITE_BATCH_ROWS	65536
#define TP_WRITE_BATCH_BYTES (64 * 1024 * 1024)
#define TP_DEFAULT_ROW_GROUP 131072
/* rows per batch read; bytes of COPY data encoded at a time */
#define TP_READ_BATCH_ROWS	32768
#define TP_ENCODE_CHUNK		(256 * 1024)

typedef struct ParquetCopyOptions
{
	TesseraCopyFormat format;
	int			compression;
	int			level;
	int64		row_group_rows;
	bool		match_by_name;
	DefElem    *freeze;
} ParquetCopyOptions;

/*
 * The Rust handles of one COPY, freed by a memory context callback if an
 * error ends the statement before it frees them.
 */
typedef struct ParquetHandles
{
	TpWriter   *writer;
	TpReader   *reader;
	MemoryContextCallback cb;
} ParquetHandles;

static void
free_handles(void *arg)
{
	ParquetHandles *h = (ParquetHandles *) arg;

	if (h->writer)
		tp_writer_free(h->writer);
	if (h->reader)
		tp_reader_free(h->reader);
	h->writer = NULL;
	h->reader = NULL;
}

static ParquetHandles *
new_handles(void)
{
	ParquetHandles *h = palloc0(sizeof(ParquetHandles));

	h->cb.func = free_handles;
	h->cb.arg = h;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, &h->cb);
	return h;
}

static void
parquet_error(const char *what, const char *msg)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_EXCEPTION),
			 errmsg("%s: %s", what, msg)));
}

/* a file that is there but is not a readable Parquet file */
static void
bad_file(const char *path, const char *msg)
{
	ereport(ERROR,
			(errcode(ERRCODE_BAD_COPY_FILE_FORMAT),
			 errmsg("could not read Parquet file \"%s\": %s", path, msg)));
}

/* PostgreSQL's own errors for a file that cannot be opened */
static void
check_readable(const char *path)
{
	struct stat st;
	FILE	   *f;

	f = AllocateFile(path, PG_BINARY_R);
	if (f == NULL)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open file \"%s\" for reading: %m", path)));
	if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is a directory", path)));
	FreeFile(f);
}

static void
check_writable(const char *path)
{
	FILE	   *f;
	mode_t		oumask = umask(S_IWGRP | S_IWOTH);

	/* as COPY TO: the file is created or truncated, rw-r--r-- */
	PG_TRY();
	{
		f = AllocateFile(path, PG_BINARY_W);
	}
	PG_FINALLY();
	{
		umask(oumask);
	}
	PG_END_TRY();
	if (f == NULL)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open file \"%s\" for writing: %m", path)));
	FreeFile(f);
}

/* ------------------------------------------------------------------------
 * Options
 * ------------------------------------------------------------------------
 */

static bool
has_suffix(const char *s, const char *suffix)
{
	size_t		n = strlen(s);
	size_t		m = strlen(suffix);

	return n >= m && pg_strcasecmp(s + n - m, suffix) == 0;
}

/*
 * Which of tessera's file formats a COPY statement is for: FORMAT parquet
 * or arrow (feather, ipc), or no FORMAT and a file named *.parquet,
 * *.arrow or *.feather.
 */
TesseraCopyFormat
TesseraCopyFormatOf(CopyStmt *stmt)
{
	ListCell   *lc;

	foreach(lc, stmt->options)
	{
		DefElem    *def = lfirst_node(DefElem, lc);
		const char *f;

		if (strcmp(def->defname, "format") != 0)
			continue;
		if (def->arg == NULL || !IsA(def->arg, String))
			return TESSERA_COPY_OTHER;
		f = strVal(def->arg);
		if (pg_strcasecmp(f, "parquet") == 0)
			return TESSERA_COPY_PARQUET;
		if (pg_strcasecmp(f, "arrow") == 0 || pg_strcasecmp(f, "feather") == 0 ||
			pg_strcasecmp(f, "ipc") == 0)
			return TESSERA_COPY_ARROW;
		return TESSERA_COPY_OTHER;
	}
	if (stmt->filename == NULL || stmt->is_program)
		return TESSERA_COPY_OTHER;
	if (has_suffix(stmt->filename, ".parquet"))
		return TESSERA_COPY_PARQUET;
	if (has_suffix(stmt->filename, ".arrow") || has_suffix(stmt->filename, ".feather"))
		return TESSERA_COPY_ARROW;
	return TESSERA_COPY_OTHER;
}

static int
compression_of(DefElem *def)
{
	char	   *name = defGetString(def);

	if (pg_strcasecmp(name, "uncompressed") == 0 || pg_strcasecmp(name, "none") == 0)
		return TP_COMPRESSION_NONE;
	if (pg_strcasecmp(name, "snappy") == 0)
		return TP_COMPRESSION_SNAPPY;
	if (pg_strcasecmp(name, "zstd") == 0)
		return TP_COMPRESSION_ZSTD;
	if (pg_strcasecmp(name, "lz4") == 0)
		return TP_COMPRESSION_LZ4;
	if (pg_strcasecmp(name, "gzip") == 0)
		return TP_COMPRESSION_GZIP;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("COPY compression \"%s\" not recognized", name),
			 errhint("Valid values are uncompressed, snappy, zstd, lz4 and gzip.")));
	return 0;
}

static void
parse_options(CopyStmt *stmt, ParquetCopyOptions *opts)
{
	ListCell   *lc;

	memset(opts, 0, sizeof(*opts));
	opts->format = TesseraCopyFormatOf(stmt);
	opts->compression = opts->format == TESSERA_COPY_ARROW ? TP_COMPRESSION_NONE : TP_COMPRESSION_SNAPPY;
	opts->row_group_rows = TP_DEFAULT_ROW_GROUP;
	foreach(lc, stmt->options)
	{
		DefElem    *def = lfirst_node(DefElem, lc);
		bool		to_only = false;
		bool		from_only = false;

		if (strcmp(def->defname, "format") == 0)
			continue;
		else if (strcmp(def->defname, "compression") == 0)
		{
			opts->compression = compression_of(def);
			to_only = true;
		}
		else if (strcmp(def->defname, "compression_level") == 0)
		{
			opts->level = defGetInt32(def);
			if (opts->level < 1 || opts->level > 22)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("COPY compression_level must be between 1 and 22")));
			to_only = true;
		}
		else if (strcmp(def->defname, "row_group_size") == 0)
		{
			opts->row_group_rows = defGetInt64(def);
			if (opts->row_group_rows < 1)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("COPY row_group_size must be positive")));
			to_only = true;
		}
		else if (strcmp(def->defname, "match_by") == 0)
		{
			char	   *how = defGetString(def);

			if (pg_strcasecmp(how, "name") == 0)
				opts->match_by_name = true;
			else if (pg_strcasecmp(how, "position") != 0)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("COPY match_by must be \"position\" or \"name\"")));
			from_only = true;
		}
		else if (strcmp(def->defname, "freeze") == 0)
		{
			opts->freeze = def;
			from_only = true;
		}
		else
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("COPY option \"%s\" is not supported with FORMAT %s", def->defname,
							opts->format == TESSERA_COPY_ARROW ? "arrow" : "parquet")));
		if (opts->format == TESSERA_COPY_ARROW &&
			(strcmp(def->defname, "compression_level") == 0 ||
			 strcmp(def->defname, "row_group_size") == 0 ||
			 (strcmp(def->defname, "compression") == 0 &&
			  opts->compression != TP_COMPRESSION_NONE && opts->compression != TP_COMPRESSION_LZ4 &&
			  opts->compression != TP_COMPRESSION_ZSTD)))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 strcmp(def->defname, "compression") == 0 ?
					 errmsg("COPY compression \"%s\" is not supported with FORMAT arrow", defGetString(def)) :
					 errmsg("COPY option \"%s\" is not supported with FORMAT arrow", def->defname),
					 errhint("Arrow files take COMPRESSION uncompressed, lz4 or zstd.")));
		if ((to_only && stmt->is_from) || (from_only && !stmt->is_from))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("COPY option \"%s\" is only valid with COPY %s", def->defname,
							to_only ? "TO" : "FROM")));
	}
}

/* ------------------------------------------------------------------------
 * COPY ... TO
 * ------------------------------------------------------------------------
 */

typedef struct ParquetDest
{
	DestReceiver pub;
	ParquetCopyOptions *opts;
	const char *path;			/* NULL: STDOUT */
	ParquetHandles *handles;
	int			natts;
	TpColumnBuilder *cols;
	TpVector   *vectors;
	MemoryContext batch_cxt;
	int64		batch_rows;
	uint64		rows;
} ParquetDest;

static void
send_output(ParquetDest *d)
{
	const uint8_t *data;
	size_t		len;

	if (d->path != NULL)
		return;
	tp_writer_drain(d->handles->writer, &data, &len);
	while (len > 0)
	{
		size_t		n = Min(len, (size_t) 1024 * 1024);

		pq_putmessage('d', (const char *) data, n);
		data += n;
		len -= n;
	}
}

static void
flush_batch(ParquetDest *d)
{
	char		err[TP_ERRLEN];

	if (d->batch_rows == 0)
		return;
	for (int i = 0; i < d->natts; i++)
		d->vectors[i] = *TesseraParquetBuilderVector(&d->cols[i]);
	if (tp_writer_write(d->handles->writer, d->batch_rows, d->vectors, err, sizeof(err)) != 0)
		parquet_error("could not write Parquet data", err);
	for (int i = 0; i < d->natts; i++)
		TesseraParquetBuilderReset(&d->cols[i]);
	MemoryContextReset(d->batch_cxt);
	d->batch_rows = 0;
	send_output(d);
}

static void
dest_startup(DestReceiver *self, int operation, TupleDesc typeinfo)
{
	ParquetDest *d = (ParquetDest *) self;
	const char **names;
	TpType	   *types;
	char		err[TP_ERRLEN];

	d->natts = typeinfo->natts;
	d->cols = palloc0(sizeof(TpColumnBuilder) * Max(d->natts, 1));
	d->vectors = palloc0(sizeof(TpVector) * Max(d->natts, 1));
	names = palloc(sizeof(char *) * Max(d->natts, 1));
	types = palloc(sizeof(TpType) * Max(d->natts, 1));
	for (int i = 0; i < d->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(typeinfo, i);

		names[i] = pstrdup(NameStr(att->attname));
		TesseraParquetBuilderInit(&d->cols[i], names[i], att->atttypid, att->atttypmod);
		types[i] = d->cols[i].type;
	}
	if (d->natts == 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a Parquet or Arrow file needs at least one column")));
	d->batch_cxt = AllocSetContextCreate(CurrentMemoryContext, "tessera parquet batch",
										 ALLOCSET_DEFAULT_SIZES);
	if (d->path)
		check_writable(d->path);

	/*
	 * A writer to a file encodes on a thread of its own: it starts with
	 * every signal blocked, so that the backend's thread gets them all.
	 */
	{
		sigset_t	all;
		sigset_t	old;

		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		d->handles->writer = tp_writer_open(d->path, d->natts, names, types, d->opts->compression,
											d->opts->level, d->opts->row_group_rows,
											d->opts->format == TESSERA_COPY_ARROW ? TP_FORMAT_ARROW : TP_FORMAT_PARQUET,
											err, sizeof(err));
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	if (d->handles->writer == NULL)
		parquet_error("could not write Parquet file", err);
	if (d->path == NULL)
	{
		StringInfoData buf;

		pq_beginmessage(&buf, 'H');
		pq_sendbyte(&buf, 1);	/* binary */
		pq_sendint16(&buf, d->natts);
		for (int i = 0; i < d->natts; i++)
			pq_sendint16(&buf, 1);
		pq_endmessage(&buf);
	}
}

/* a row appended to every column: hand the batch over when it is full */
static void
row_done(ParquetDest *d)
{
	size_t		bytes = 0;

	d->batch_rows++;
	d->rows++;
	if (d->batch_rows % 1024 == 0)
		for (int i = 0; i < d->natts; i++)
			bytes += TesseraParquetBuilderBytes(&d->cols[i]);
	if (d->batch_rows >= TP_WRITE_BATCH_ROWS || bytes >= TP_WRITE_BATCH_BYTES)
		flush_batch(d);
}

static bool
dest_receive(TupleTableSlot *slot, DestReceiver *self)
{
	ParquetDest *d = (ParquetDest *) self;
	MemoryContext old;

	slot_getallattrs(slot);
	old = MemoryContextSwitchTo(d->batch_cxt);
	for (int i = 0; i < d->natts; i++)
		TesseraParquetBuilderAppend(&d->cols[i], slot->tts_values[i], slot->tts_isnull[i]);
	MemoryContextSwitchTo(old);
	row_done(d);
	return true;
}

static void
dest_shutdown(DestReceiver *self)
{
	ParquetDest *d = (ParquetDest *) self;
	char		err[TP_ERRLEN];

	flush_batch(d);
	if (tp_writer_close(d->handles->writer, err, sizeof(err)) != 0)
		parquet_error("could not write Parquet file", err);
	send_output(d);
	if (d->path == NULL)
		pq_putemptymessage('c');
}

static void
dest_destroy(DestReceiver *self)
{
}

/*
 * "SELECT <the COPY's columns, or *> FROM [ONLY] <relation>": the query
 * that COPY table TO (or a COPY replaced by one) reads.
 */
void
TesseraCopySelect(StringInfo sql, List *attlist, Oid relid, bool only)
{
	ListCell   *lc;

	appendStringInfoString(sql, "SELECT ");
	foreach(lc, attlist)
		appendStringInfo(sql, "%s%s", foreach_current_index(lc) > 0 ? ", " : "",
						 quote_identifier(strVal(lfirst(lc))));
	if (attlist == NIL)
		appendStringInfoChar(sql, '*');
	appendStringInfo(sql, " FROM %s%s", only ? "ONLY " : "",
					 quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
												get_rel_name(relid)));
}

/* the query a COPY table TO reads: its columns, of it alone */
static RawStmt *
table_query(CopyStmt *stmt, char **sql_out)
{
	Oid			relid = RangeVarGetRelid(stmt->relation, AccessShareLock, false);
	StringInfoData sql;

	/* a partitioned table's rows are its partitions' */
	initStringInfo(&sql);
	TesseraCopySelect(&sql, stmt->attlist, relid, get_rel_relkind(relid) != RELKIND_PARTITIONED_TABLE);
	*sql_out = sql.data;
	return linitial_node(RawStmt, raw_parser(sql.data, RAW_PARSE_DEFAULT));
}

/*
 * COPY tessera_table TO: the query is "SELECT columns FROM ONLY t" with no
 * row-level security, so its rows are the table's visible rows: they go
 * from the scan's column vectors to the writer's column builders without
 * forming a row or running the plan (which ExecutorStart still sets up, for
 * its permission checks).  The columns each query output reads, or false.
 */
static bool
direct_export_columns(Query *query, Oid *relid, int **atts)
{
	RangeTblEntry *rte;
	Relation	rel;
	bool		ok;
	ListCell   *lc;

	if (query->commandType != CMD_SELECT || list_length(query->rtable) != 1 ||
		query->jointree == NULL || query->jointree->quals != NULL ||
		list_length(query->jointree->fromlist) != 1 || query->hasSubLinks || query->hasAggs ||
		query->hasWindowFuncs || query->hasTargetSRFs || query->hasRowSecurity ||
		query->groupClause != NIL || query->sortClause != NIL || query->distinctClause != NIL ||
		query->limitCount != NULL || query->limitOffset != NULL || query->setOperations != NULL ||
		query->cteList != NIL || query->rowMarks != NIL)
		return false;
	rte = linitial_node(RangeTblEntry, query->rtable);
	if (rte->rtekind != RTE_RELATION || rte->relkind != RELKIND_RELATION || rte->inh ||
		rte->securityQuals != NIL || rte->tablesample != NULL)
		return false;
	*atts = palloc(sizeof(int) * Max(list_length(query->targetList), 1));
	foreach(lc, query->targetList)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);
		Var		   *var = (Var *) tle->expr;

		if (tle->resjunk || !IsA(var, Var) || var->varno != 1 || var->varlevelsup != 0 ||
			var->varattno <= 0)
			return false;
		(*atts)[foreach_current_index(lc)] = var->varattno - 1;
	}
	rel = table_open(rte->relid, NoLock);
	ok = IsTesseraRelation(rel);
	table_close(rel, NoLock);
	*relid = rte->relid;
	return ok;
}

/* Every visible row of relid, its columns atts[], into the builders of d. */
static void
direct_export(ParquetDest *d, Oid relid, const int *atts, Snapshot snapshot)
{
	Relation	rel = table_open(relid, NoLock);
	TableScanDesc scan = table_beginscan(rel, snapshot, 0, NULL);
	TesseraBatch *b;
	const bool *sel;
	Datum	  **values = palloc(sizeof(Datum *) * d->natts);
	bool	  **nulls = palloc(sizeof(bool *) * d->natts);
	__int128  **scaled = palloc(sizeof(__int128 *) * d->natts);
	int		   *scale = palloc(sizeof(int) * d->natts);

	while (TesseraScanNextBatch(scan, &b, &sel))
	{
		MemoryContext old;

		for (int k = 0; k < d->natts; k++)
		{
			int64	   *dscales;

			/* a decimal-encoded numeric: its scaled integers, else Datums */
			scaled[k] = NULL;
			if (d->cols[k].type.kind != TP_KIND_DECIMAL ||
				!TesseraBatchScaled(b, atts[k], &scaled[k], &dscales, &nulls[k], &scale[k]))
			{
				scaled[k] = NULL;
				TesseraBatchColumn(b, atts[k], &values[k], &nulls[k]);
			}
		}
		old = MemoryContextSwitchTo(d->batch_cxt);
		for (int i = 0; i < b->nrows; i++)
		{
			if (b->deleted != NULL && b->deleted[i])
				continue;
			for (int k = 0; k < d->natts; k++)
			{
				bool		isnull;

				if (scaled[k] != NULL &&
					TesseraParquetBuilderAppendScaled(&d->cols[k], scaled[k][i], scale[k],
													  nulls[k][i]))
					continue;
				if (scaled[k] != NULL)
				{
					/* the numeric itself, whose error the builder raises */
					Datum		v = TesseraBatchValue(b, atts[k], i, &isnull);

					TesseraParquetBuilderAppend(&d->cols[k], v, isnull);
				}
				else
					TesseraParquetBuilderAppend(&d->cols[k], values[k][i], nulls[k][i]);
			}
			MemoryContextSwitchTo(old);
			row_done(d);
			old = MemoryContextSwitchTo(d->batch_cxt);
		}
		MemoryContextSwitchTo(old);
	}
	table_endscan(scan);
	table_close(rel, NoLock);
}

static uint64
copy_to(ParseState *pstate, CopyStmt *stmt, ParquetCopyOptions *opts, int stmt_location,
		int stmt_len)
{
	RawStmt    *raw;
	const char *sql = pstate->p_sourcetext;
	List	   *rewritten;
	Query	   *query;
	PlannedStmt *plan;
	QueryDesc  *qd;
	ParquetDest *dest;
	bool		direct;
	Oid			relid = InvalidOid;
	int		   *atts = NULL;

	if (stmt->filename != NULL)
	{
		if (!has_privs_of_role(GetUserId(), ROLE_PG_WRITE_SERVER_FILES))
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("must be superuser or have privileges of the pg_write_server_files role to COPY to a file"),
					 errhint("Anyone can COPY to stdout or from stdin. psql's \\copy command also works for anyone.")));
		if (!is_absolute_path(stmt->filename))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_NAME),
					 errmsg("relative path not allowed for COPY to file")));
	}
	else if (whereToSendOutput != DestRemote)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("COPY TO STDOUT needs a client connection")));
	if (stmt->whereClause)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("WHERE clause not allowed with COPY TO"),
				 errhint("Try the COPY (SELECT ... WHERE ...) TO variant.")));

	if (stmt->relation)
		raw = table_query(stmt, (char **) &sql);
	else
	{
		raw = makeNode(RawStmt);
		raw->stmt = copyObject(stmt->query);
		raw->stmt_location = stmt_location;
		raw->stmt_len = stmt_len;
	}
	rewritten = pg_analyze_and_rewrite_fixedparams(raw, sql, NULL, 0, NULL);
	if (list_length(rewritten) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("COPY query must be a single SELECT with FORMAT parquet")));
	query = linitial_node(Query, rewritten);
	if (query->commandType != CMD_SELECT || query->utilityStmt != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("COPY query must be a SELECT with FORMAT parquet")));
	direct = stmt->relation != NULL && direct_export_columns(query, &relid, &atts);
	plan = pg_plan_query(query, sql, direct ? 0 : CURSOR_OPT_PARALLEL_OK, NULL);

	dest = palloc0(sizeof(ParquetDest));
	dest->pub.receiveSlot = dest_receive;
	dest->pub.rStartup = dest_startup;
	dest->pub.rShutdown = dest_shutdown;
	dest->pub.rDestroy = dest_destroy;
	dest->pub.mydest = DestNone;
	dest->opts = opts;
	dest->path = stmt->filename;
	dest->handles = new_handles();

	PushCopiedSnapshot(GetActiveSnapshot());
	UpdateActiveSnapshotCommandId();
	qd = CreateQueryDesc(plan, sql, GetActiveSnapshot(), InvalidSnapshot, &dest->pub, NULL, NULL, 0);
	ExecutorStart(qd, 0);
	if (direct)
	{
		/* ExecutorStart checked the permissions; the rows come from the scan */
		dest_startup(&dest->pub, CMD_SELECT, qd->tupDesc);
		direct_export(dest, relid, atts, qd->snapshot);
		dest_shutdown(&dest->pub);
	}
	else
		TesseraExecutorRunAll(qd);
	ExecutorFinish(qd);
	ExecutorEnd(qd);
	FreeQueryDesc(qd);
	PopActiveSnapshot();
	free_handles(dest->handles);
	return dest->rows;
}

/* ------------------------------------------------------------------------
 * COPY ... FROM
 * ------------------------------------------------------------------------
 */

typedef struct ParquetSource
{
	ParquetHandles *handles;
	int			ncols;
	TpFieldReader *fields;
	TpVector   *vectors;
	int64		batch_nrows;
	int64		batch_pos;
	bool		header_sent;
	bool		trailer_sent;
	StringInfoData buf;
	int			bufpos;
	MemoryContext encode_cxt;
} ParquetSource;

/* the COPY FROM being fed (its callback takes no argument) */
static ParquetSource *active_source = NULL;

/* the next piece of binary COPY data into src->buf; false at the end */
static bool
refill(ParquetSource *src)
{
	MemoryContext old;

	resetStringInfo(&src->buf);
	src->bufpos = 0;
	if (!src->header_sent)
	{
		static const char signature[11] = "PGCOPY\n\377\r\n\0";
		uint32		zero = 0;

		appendBinaryStringInfo(&src->buf, signature, sizeof(signature));
		appendBinaryStringInfo(&src->buf, (char *) &zero, 4);	/* flags */
		appendBinaryStringInfo(&src->buf, (char *) &zero, 4);	/* extension */
		src->header_sent = true;
		return true;
	}
	if (src->trailer_sent)
		return false;
	if (src->batch_pos >= src->batch_nrows)
	{
		char		err[TP_ERRLEN];
		int64		n = tp_reader_next(src->handles->reader, src->vectors, err, sizeof(err));

		if (n < 0)
			ereport(ERROR,
					(errcode(ERRCODE_BAD_COPY_FILE_FORMAT),
					 errmsg("could not read Parquet file: %s", err)));
		src->batch_nrows = n;
		src->batch_pos = 0;
		if (n == 0)
		{
			uint16		trailer = pg_hton16((uint16) -1);

			appendBinaryStringInfo(&src->buf, (char *) &trailer, 2);
			src->trailer_sent = true;
			return true;
		}
	}
	MemoryContextReset(src->encode_cxt);
	old = MemoryContextSwitchTo(src->encode_cxt);
	while (src->batch_pos < src->batch_nrows && src->buf.len < TP_ENCODE_CHUNK)
	{
		uint16		nfields = pg_hton16((uint16) src->ncols);
		int64		row = src->batch_pos++;

		appendBinaryStringInfo(&src->buf, (char *) &nfields, 2);
		for (int i = 0; i < src->ncols; i++)
			TesseraParquetFieldEncode(&src->fields[i], &src->vectors[i], row, &src->buf);
	}
	MemoryContextSwitchTo(old);
	return true;
}

static int
parquet_source_cb(void *outbuf, int minread, int maxread)
{
	ParquetSource *src = active_source;
	int			copied = 0;

	while (copied < maxread)
	{
		int			n;

		if (src->bufpos >= src->buf.len)
		{
			if (copied >= minread || !refill(src))
				break;
			continue;
		}
		n = Min(maxread - copied, src->buf.len - src->bufpos);
		memcpy((char *) outbuf + copied, src->buf.data + src->bufpos, n);
		copied += n;
		src->bufpos += n;
	}
	return copied;
}

/* COPY FROM STDIN: the client's data into a temporary file; its path */
static const char *
receive_stdin(int natts)
{
	StringInfoData buf;
	File		file;
	off_t		offset = 0;

	if (whereToSendOutput != DestRemote)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("COPY FROM STDIN needs a client connection")));
	file = OpenTemporaryFile(false);
	pq_beginmessage(&buf, 'G');
	pq_sendbyte(&buf, 1);		/* binary */
	pq_sendint16(&buf, natts);
	for (int i = 0; i < natts; i++)
		pq_sendint16(&buf, 1);
	pq_endmessage(&buf);
	pq_flush();

	initStringInfo(&buf);
	for (;;)
	{
		int			mtype;

		HOLD_CANCEL_INTERRUPTS();
		pq_startmsgread();
		mtype = pq_getbyte();
		if (mtype == EOF)
			ereport(ERROR,
					(errcode(ERRCODE_CONNECTION_FAILURE),
					 errmsg("unexpected EOF on client connection with an open transaction")));
		resetStringInfo(&buf);
		if (pq_getmessage(&buf, mtype == 'd' ? PQ_LARGE_MESSAGE_LIMIT : PQ_SMALL_MESSAGE_LIMIT))
			ereport(ERROR,
					(errcode(ERRCODE_CONNECTION_FAILURE),
					 errmsg("unexpected EOF on client connection with an open transaction")));
		RESUME_CANCEL_INTERRUPTS();
		CHECK_FOR_INTERRUPTS();
		if (mtype == 'c')
			break;
		switch (mtype)
		{
			case 'd':
				if (FileWrite(file, buf.data, buf.len, offset, WAIT_EVENT_COPY_FILE_WRITE) != buf.len)
					ereport(ERROR,
							(errcode_for_file_access(),
							 errmsg("could not write to temporary file: %m")));
				offset += buf.len;
				break;
			case 'f':
				ereport(ERROR,
						(errcode(ERRCODE_QUERY_CANCELED),
						 errmsg("COPY from stdin failed: %s", pq_getmsgstring(&buf))));
				break;
			case 'H':
			case 'S':
				break;
			default:
				ereport(ERROR,
						(errcode(ERRCODE_PROTOCOL_VIOLATION),
						 errmsg("unexpected message type 0x%02X during COPY from stdin", mtype)));
		}
	}
	return FilePathName(file);
}

static Node *
transform_where(ParseState *pstate, ParseNamespaceItem *nsitem, Node *where)
{
	addNSItemToQuery(pstate, nsitem, false, true, true);
	where = transformExpr(pstate, where, EXPR_KIND_COPY_WHERE);
	where = coerce_to_boolean(pstate, where, "WHERE");
	assign_expr_collations(pstate, where);
	where = eval_const_expressions(NULL, where);
	where = (Node *) canonicalize_qual((Expr *) where, false);
	return (Node *) make_ands_implicit((Expr *) where);
}

/* the file column each of the COPY's columns reads; checks them all */
static void
match_columns(ParquetSource *src, Relation rel, List *attnums, bool by_name, int *filecols)
{
	TpReader   *reader = src->handles->reader;
	int			nfile = tp_reader_num_columns(reader);
	TupleDesc	desc = RelationGetDescr(rel);
	ListCell   *lc;

	if (!by_name && nfile != list_length(attnums))
		ereport(ERROR,
				(errcode(ERRCODE_BAD_COPY_FILE_FORMAT),
				 errmsg("Parquet file has %d columns, but COPY into \"%s\" expects %d",
						nfile, RelationGetRelationName(rel), list_length(attnums)),
				 errhint("Name the columns to load in COPY's column list, or use MATCH_BY 'name'.")));
	foreach(lc, attnums)
	{
		int			i = foreach_current_index(lc);
		Form_pg_attribute att = TupleDescAttr(desc, lfirst_int(lc) - 1);
		int			f = i;

		if (by_name)
		{
			for (f = 0; f < nfile; f++)
				if (strcmp(tp_reader_column_name(reader, f), NameStr(att->attname)) == 0)
					break;
			if (f == nfile)
				ereport(ERROR,
						(errcode(ERRCODE_BAD_COPY_FILE_FORMAT),
						 errmsg("Parquet file has no column \"%s\"", NameStr(att->attname))));
		}
		filecols[i] = f;
		TesseraParquetFieldInit(&src->fields[i], pstrdup(NameStr(att->attname)),
								att->atttypid, att->atttypmod,
								pstrdup(tp_reader_column_name(reader, f)),
								pstrdup(tp_reader_column_type_name(reader, f)),
								tp_reader_column_type(reader, f));
	}
}

/*
 * COPY FROM a file straight into a tessera table's multi-insert: the
 * file's columns become Datums a column at a time (parquet_columns.c) and
 * rows go to table_multi_insert a thousand at a time, with NOT NULL and
 * CHECK constraints and index entries made as CopyFrom makes them.  Only
 * where CopyFrom would do nothing more: a tessera table that is not a
 * partition, no triggers (foreign keys and deferrable constraints are
 * triggers too), every column from the file (no defaults, no generated
 * columns), no WHERE, no FREEZE.  Everything else is CopyFrom's, fed
 * COPY's binary format (parquet_source_cb).
 */
static bool
direct_import_ok(Relation rel, ParquetCopyOptions *opts, List *attnums, Node *where)
{
	TupleDesc	desc = RelationGetDescr(rel);
	int			live = 0;

	if (rel->rd_rel->relkind != RELKIND_RELATION || rel->rd_rel->relispartition ||
		rel->trigdesc != NULL || where != NULL || opts->freeze != NULL ||
		!IsTesseraRelation(rel))
		return false;
	for (int i = 0; i < desc->natts; i++)
		live += !TupleDescAttr(desc, i)->attisdropped;
	return list_length(attnums) == live;
}

#define TP_IMPORT_SLOTS 1000

typedef struct ImportContext
{
	const char *relname;
	uint64		row;			/* of the file, from 1 */
} ImportContext;

static void
import_error_context(void *arg)
{
	ImportContext *ic = arg;

	errcontext("COPY %s, line %llu", ic->relname, (unsigned long long) ic->row);
}

/* a direct import under way: the batch's values, a column each */
typedef struct ImportState
{
	Relation	rel;
	ParquetSource *src;
	EState	   *estate;
	ResultRelInfo *rri;
	TupleTableSlot **slots;
	BulkInsertState bistate;
	CommandId	cid;
	int			ti_options;
	bool		by_columns;		/* TesseraInsertColumns, else slots */
	int		   *atts;			/* file column -> attribute index */
	Datum	  **values;			/* per file column */
	bool	  **nulls;
	bool	   *fast;			/* made by TesseraParquetFieldColumnFast */
	Datum	  **attvalues;		/* per attribute (dropped ones: all NULL) */
	bool	  **attnulls;
	ItemPointerData *tids;
	ImportContext ic;
	uint64		processed;
} ImportState;

/* row of the batch into slot, as a virtual tuple */
static void
import_slot(ImportState *is, TupleTableSlot *slot, int64 row)
{
	ExecClearTuple(slot);
	memset(slot->tts_isnull, true, sizeof(bool) * RelationGetDescr(is->rel)->natts);
	for (int c = 0; c < is->src->ncols; c++)
	{
		slot->tts_values[is->atts[c]] = is->values[c][row];
		slot->tts_isnull[is->atts[c]] = is->nulls[c][row];
	}
	ExecStoreVirtualTuple(slot);
}

/* the values of row that the fast paths did not make, raising the row's errors */
static void
import_row_values(ImportState *is, int64 row)
{
	for (int c = 0; c < is->src->ncols; c++)
		if (!is->fast[c])
			is->values[c][row] = TesseraParquetFieldDatum(&is->src->fields[c],
														 &is->src->vectors[c], row,
														 &is->nulls[c][row]);
}

/*
 * Rows of the batch through table_multi_insert, as CopyFrom inserts them:
 * a slot each, ExecConstraints, then the index entries.
 */
static void
import_batch_slots(ImportState *is, int64 n)
{
	for (int64 start = 0; start < n; start += TP_IMPORT_SLOTS)
	{
		int			m = (int) Min((int64) TP_IMPORT_SLOTS, n - start);
		MemoryContext old;

		for (int k = 0; k < m; k++)
		{
			is->ic.row = is->processed + k + 1;
			import_row_values(is, start + k);
			import_slot(is, is->slots[k], start + k);
			if (RelationGetDescr(is->rel)->constr != NULL)
				ExecConstraints(is->rri, is->slots[k], is->estate);
		}
		is->ic.row = is->processed + 1;
		old = MemoryContextSwitchTo(GetPerTupleMemoryContext(is->estate));
		table_multi_insert(is->rel, is->slots, m, is->cid, is->ti_options, is->bistate);
		MemoryContextSwitchTo(old);
		for (int k = 0; k < m; k++)
		{
			is->ic.row = is->processed + k + 1;
			if (is->rri->ri_NumIndices > 0)
				list_free(TesseraExecInsertIndexTuples(is->rri, is->slots[k], is->estate));
			ExecClearTuple(is->slots[k]);
		}
		ResetPerTupleExprContext(is->estate);
		is->processed += m;
	}
}

/*
 * The batch's rows checked before they are written as columns, in the
 * order the row path raises errors (a row's conversion errors, then its
 * constraints, then the next row's).  Without CHECK constraints NOT NULL is
 * checked on the columns, and only the first failing row goes to
 * ExecConstraints for its error; with them every row does, on a slot.
 */
static void
import_check_rows(ImportState *is, int64 n)
{
	TupleDesc	desc = RelationGetDescr(is->rel);
	int64		bad = n;
	bool		slow = false;

	if (desc->constr != NULL && desc->constr->num_check > 0)
	{
		for (int64 row = 0; row < n; row++)
		{
			is->ic.row = is->processed + row + 1;
			import_row_values(is, row);
			import_slot(is, is->slots[0], row);
			ExecConstraints(is->rri, is->slots[0], is->estate);
			ResetPerTupleExprContext(is->estate);
		}
		return;
	}
	for (int c = 0; c < is->src->ncols; c++)
	{
		slow |= !is->fast[c];
		if (is->fast[c] && TupleDescAttr(desc, is->atts[c])->attnotnull)
		{
			const bool *p = memchr(is->nulls[c], true, bad);

			if (p != NULL)
				bad = p - is->nulls[c];
		}
	}
	if (slow || bad < n)
		for (int64 row = 0; row <= Min(bad, n - 1); row++)
		{
			is->ic.row = is->processed + row + 1;
			import_row_values(is, row);
			for (int c = 0; c < is->src->ncols; c++)
				if (is->nulls[c][row] && TupleDescAttr(desc, is->atts[c])->attnotnull)
					bad = row;
		}
	if (bad < n)
	{
		is->ic.row = is->processed + bad + 1;
		import_slot(is, is->slots[0], bad);
		ExecConstraints(is->rri, is->slots[0], is->estate);
		elog(ERROR, "NOT NULL check passed a NULL value");
	}
}

/* Rows of the batch written a column at a time; index entries made from slots after. */
static void
import_batch_columns(ImportState *is, int64 n)
{
	TupleDesc	desc = RelationGetDescr(is->rel);

	import_check_rows(is, n);
	for (int c = 0; c < is->src->ncols; c++)
	{
		is->attvalues[is->atts[c]] = is->values[c];
		is->attnulls[is->atts[c]] = is->nulls[c];
	}
	for (int a = 0; a < desc->natts; a++)
		if (TupleDescAttr(desc, a)->attisdropped)
		{
			is->attvalues[a] = palloc0(sizeof(Datum) * n);
			is->attnulls[a] = palloc(n);
			memset(is->attnulls[a], true, n);
		}
	is->tids = palloc(sizeof(ItemPointerData) * n);
	is->ic.row = is->processed + 1;
	if (!TesseraInsertColumns(is->rel, is->attvalues, is->attnulls, (int) n, is->cid,
							  is->ti_options, is->tids))
	{
		import_batch_slots(is, n);
		return;
	}
	if (is->rri->ri_NumIndices > 0)
		for (int64 row = 0; row < n; row++)
		{
			TupleTableSlot *slot = is->slots[0];

			is->ic.row = is->processed + row + 1;
			import_slot(is, slot, row);
			slot->tts_tid = is->tids[row];
			slot->tts_tableOid = RelationGetRelid(is->rel);
			list_free(TesseraExecInsertIndexTuples(is->rri, slot, is->estate));
			ResetPerTupleExprContext(is->estate);
		}
	is->processed += n;
}

static void
import_batch(ImportState *is, int64 n, MemoryContext batch_cxt)
{
	MemoryContext old = MemoryContextSwitchTo(batch_cxt);

	for (int c = 0; c < is->src->ncols; c++)
	{
		is->values[c] = MemoryContextAllocHuge(batch_cxt, sizeof(Datum) * n);
		is->nulls[c] = MemoryContextAllocHuge(batch_cxt, n);
		is->fast[c] = TesseraParquetFieldColumnFast(&is->src->fields[c], &is->src->vectors[c],
													(int) n, is->values[c], is->nulls[c]);
	}
	if (is->by_columns)
		import_batch_columns(is, n);
	else
		import_batch_slots(is, n);
	pgstat_progress_update_param(PROGRESS_COPY_TUPLES_PROCESSED, (int64) is->processed);
	MemoryContextSwitchTo(old);
}

static uint64
direct_import(ParseState *pstate, Relation rel, ParquetSource *src, List *attnums)
{
	TupleDesc	desc = RelationGetDescr(rel);
	ImportState is = {0};
	int			nc = Max(src->ncols, 1);
	MemoryContext batch_cxt = AllocSetContextCreate(CurrentMemoryContext, "tessera parquet import",
													ALLOCSET_DEFAULT_SIZES);
	ErrorContextCallback errcallback = {error_context_stack, import_error_context, &is.ic};
	char		err[TP_ERRLEN];
	ListCell   *lc;

	is.rel = rel;
	is.src = src;
	is.estate = CreateExecutorState();
	is.rri = makeNode(ResultRelInfo);
	is.slots = palloc(sizeof(TupleTableSlot *) * TP_IMPORT_SLOTS);
	is.bistate = GetBulkInsertState();
	is.cid = GetCurrentCommandId(true);
	is.atts = palloc(sizeof(int) * nc);
	is.values = palloc(sizeof(Datum *) * nc);
	is.nulls = palloc(sizeof(bool *) * nc);
	is.fast = palloc(sizeof(bool) * nc);
	is.attvalues = palloc0(sizeof(Datum *) * Max(desc->natts, 1));
	is.attnulls = palloc0(sizeof(bool *) * Max(desc->natts, 1));
	is.ic.relname = RelationGetRelationName(rel);

	/* a table created or given a new file in this subtransaction: no FSM */
	if (rel->rd_createSubid != InvalidSubTransactionId ||
		TesseraRelFirstLocatorSubid(rel) != InvalidSubTransactionId)
		is.ti_options |= TABLE_INSERT_SKIP_FSM;
	/* logical decoding hears of inserts as tuples */
	is.by_columns = !TesseraLogicalWanted(rel, is.ti_options);
	TesseraExecInitRangeTable(is.estate, pstate);
	ExecInitResultRelation(is.estate, is.rri, 1);
	TesseraCheckValidInsertRel(is.rri);
	ExecOpenIndices(is.rri, false);
	for (int k = 0; k < TP_IMPORT_SLOTS; k++)
		is.slots[k] = table_slot_create(rel, NULL);
	foreach(lc, attnums)
		is.atts[foreach_current_index(lc)] = lfirst_int(lc) - 1;
	for (int c = 0; c < src->ncols; c++)
		TesseraParquetFieldPrepareDatums(&src->fields[c]);
	error_context_stack = &errcallback;

	for (;;)
	{
		int64		n = tp_reader_next(src->handles->reader, src->vectors, err, sizeof(err));

		if (n < 0)
			parquet_error("could not read Parquet file", err);
		if (n == 0)
			break;
		CHECK_FOR_INTERRUPTS();
		MemoryContextReset(batch_cxt);
		import_batch(&is, n, batch_cxt);
	}
	error_context_stack = errcallback.previous;
	table_finish_bulk_insert(rel, is.ti_options);
	FreeBulkInsertState(is.bistate);
	for (int k = 0; k < TP_IMPORT_SLOTS; k++)
		ExecDropSingleTupleTableSlot(is.slots[k]);
	ExecCloseResultRelations(is.estate);
	ExecCloseRangeTableRelations(is.estate);
	FreeExecutorState(is.estate);
	MemoryContextDelete(batch_cxt);
	return is.processed;
}

static uint64
copy_from(ParseState *pstate, CopyStmt *stmt, ParquetCopyOptions *opts)
{
	Relation	rel;
	ParseNamespaceItem *nsitem;
	List	   *attnums;
	Bitmapset  *cols = NULL;
	ListCell   *lc;
	Node	   *where = NULL;
	ParquetSource *src;
	ParquetSource *outer = active_source;
	const char *path;
	int		   *filecols;
	char		err[TP_ERRLEN];
	List	   *options;
	uint64		processed = 0;

	if (stmt->filename != NULL && !has_privs_of_role(GetUserId(), ROLE_PG_READ_SERVER_FILES))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be superuser or have privileges of the pg_read_server_files role to COPY from a file"),
				 errhint("Anyone can COPY to stdout or from stdin. psql's \\copy command also works for anyone.")));

	/*
	 * From STDIN too: the Parquet reader sizes some allocations by what a
	 * file declares (list lengths in its footer), and a Rust allocation that
	 * fails ends the process -- a crafted file would restart the server.
	 * Only roles trusted with the server's files may hand it one.
	 */
	if (stmt->filename == NULL && !has_privs_of_role(GetUserId(), ROLE_PG_READ_SERVER_FILES))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be superuser or have privileges of the pg_read_server_files role to COPY FROM STDIN with FORMAT parquet or arrow"),
				 errdetail("A damaged or crafted file can make the file reader fail an allocation, which ends the server process."),
				 errhint("Load the file with a role that has those privileges.")));

	rel = table_openrv(stmt->relation, RowExclusiveLock);
	if (XactReadOnly && !rel->rd_islocaltemp)
		PreventCommandIfReadOnly("COPY FROM");
	nsitem = addRangeTableEntryForRelation(pstate, rel, RowExclusiveLock, NULL, false, false);
	attnums = CopyGetAttnums(RelationGetDescr(rel), rel, stmt->attlist);
	foreach(lc, attnums)
		cols = bms_add_member(cols, lfirst_int(lc) - FirstLowInvalidHeapAttributeNumber);
	TesseraCheckInsertPermission(pstate, nsitem, cols);
	if (check_enable_rls(RelationGetRelid(rel), InvalidOid, false) == RLS_ENABLED)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("COPY FROM not supported with row-level security"),
				 errhint("Use INSERT statements instead.")));
	if (stmt->whereClause)
		where = transform_where(pstate, nsitem, stmt->whereClause);

	src = palloc0(sizeof(ParquetSource));
	src->handles = new_handles();
	path = stmt->filename ? stmt->filename : receive_stdin(list_length(attnums));
	check_readable(path);
	src->handles->reader = tp_reader_open(path, err, sizeof(err));
	if (src->handles->reader == NULL)
		bad_file(stmt->filename ? stmt->filename : "STDIN", err);
	src->ncols = list_length(attnums);
	src->fields = palloc0(sizeof(TpFieldReader) * Max(src->ncols, 1));
	src->vectors = palloc0(sizeof(TpVector) * Max(src->ncols, 1));
	filecols = palloc(sizeof(int) * Max(src->ncols, 1));
	match_columns(src, rel, attnums, opts->match_by_name, filecols);
	if (tp_reader_start(src->handles->reader, src->ncols, filecols, TP_READ_BATCH_ROWS, NULL, -1,
						err, sizeof(err)) != 0)
		parquet_error("could not read Parquet file", err);
	TesseraParquetPrefetch(src->handles->reader);
	initStringInfo(&src->buf);
	src->encode_cxt = AllocSetContextCreate(CurrentMemoryContext, "tessera parquet encode",
											ALLOCSET_DEFAULT_SIZES);

	if (direct_import_ok(rel, opts, attnums, where))
	{
		pgstat_progress_start_command(PROGRESS_COMMAND_COPY, RelationGetRelid(rel));
		pgstat_progress_update_param(PROGRESS_COPY_COMMAND, PROGRESS_COPY_COMMAND_FROM);
		pgstat_progress_update_param(PROGRESS_COPY_TYPE, stmt->filename ? PROGRESS_COPY_TYPE_FILE :
									 PROGRESS_COPY_TYPE_PIPE);
		processed = direct_import(pstate, rel, src, attnums);
		pgstat_progress_end_command();
		free_handles(src->handles);
		table_close(rel, NoLock);
		return processed;
	}
	options = list_make1(makeDefElem("format", (Node *) makeString("binary"), -1));
	if (opts->freeze)
		options = lappend(options, opts->freeze);
	active_source = src;
	PG_TRY();
	{
		CopyFromState cstate = BeginCopyFrom(pstate, rel, where, NULL, false, parquet_source_cb,
											 stmt->attlist, options);

		processed = CopyFrom(cstate);
		EndCopyFrom(cstate);
	}
	PG_FINALLY();
	{
		active_source = outer;
	}
	PG_END_TRY();
	free_handles(src->handles);
	table_close(rel, NoLock);
	return processed;
}

/*
 * Run a COPY statement for which TesseraCopyFormatOf is not
 * TESSERA_COPY_OTHER; *processed
 * is the number of rows written or loaded.
 */
void
TesseraParquetCopy(ParseState *pstate, CopyStmt *stmt, int stmt_location, int stmt_len,
				   uint64 *processed)
{
	ParquetCopyOptions opts;

	if (stmt->is_program)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("COPY with PROGRAM is not supported with FORMAT parquet or arrow")));
	parse_options(stmt, &opts);
	if (stmt->is_from)
		*processed = copy_from(pstate, stmt, &opts);
	else
		*processed = copy_to(pstate, stmt, &opts, stmt_location, stmt_len);
}
