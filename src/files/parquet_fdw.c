/*-------------------------------------------------------------------------
 *
 * parquet_fdw.c
 *	  Parquet files as tables: the foreign data wrapper tessera_parquet.
 *
 *	  CREATE SERVER files FOREIGN DATA WRAPPER tessera_parquet;
 *	  CREATE FOREIGN TABLE t (a int, b text) SERVER files
 *		  OPTIONS (filename '/data/t/part-*.parquet');
 *	  IMPORT FOREIGN SCHEMA "/data/t" FROM SERVER files INTO public;
 *
 * NOTES
 *	  A table reads one file, or every file a glob pattern matches (in
 *	  name order).  Columns are matched to file columns by name (the
 *	  column option column_name names another); a file column's type
 *	  meets the table column's as in COPY FROM (parquet_types.c), checked
 *	  when the scan opens each file.  Only the columns the query uses are
 *	  read.  The unit of work is a row group of a file: a parallel scan
 *	  hands row groups out through a counter in shared memory.
 *	  IMPORT FOREIGN SCHEMA takes a directory (every *.parquet file in it
 *	  becomes a table named after the file) or one file, and gives each
 *	  column the type its values have.
 *
 *	  Setting filename takes the privileges of pg_read_server_files (or
 *	  superuser), as reading a file with COPY does; reading the table then
 *	  needs only SELECT on it, as with file_fdw.
 *
 * IDENTIFICATION
 *	  src/files/parquet_fdw.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <glob.h>
#include <sys/stat.h>

#include "access/reloptions.h"
#include "access/stratnum.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_am.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_foreign_table.h"
#include "catalog/pg_opclass.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "commands/explain.h"
#include "commands/vacuum.h"
#include "foreign/fdwapi.h"
#include "foreign/foreign.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/planmain.h"
#include "optimizer/restrictinfo.h"
#include "port/atomics.h"
#include "storage/fd.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/sampling.h"

#include "tessera/compat.h"
#include "tessera/files.h"
#include "tessera/plan.h"
#include "tessera/reader.h"

#define TP_ERRLEN 1024
#define TP_SCAN_BATCH_ROWS 8192

PG_FUNCTION_INFO_V1(tessera_parquet_fdw_handler);
PG_FUNCTION_INFO_V1(tessera_parquet_fdw_validator);

/* ------------------------------------------------------------------------
 * Options
 * ------------------------------------------------------------------------
 */

static void
check_file_privilege(void)
{
	if (!has_privs_of_role(GetUserId(), ROLE_PG_READ_SERVER_FILES))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("only superuser or a role with privileges of the pg_read_server_files role may name the files of a tessera_parquet foreign table")));
}

Datum
tessera_parquet_fdw_validator(PG_FUNCTION_ARGS)
{
	List	   *options = untransformRelOptions(PG_GETARG_DATUM(0));
	Oid			catalog = PG_GETARG_OID(1);
	bool		have_filename = false;
	ListCell   *lc;

	foreach(lc, options)
	{
		DefElem    *def = lfirst_node(DefElem, lc);

		if (catalog == ForeignTableRelationId && strcmp(def->defname, "filename") == 0)
		{
			check_file_privilege();
			(void) defGetString(def);
			have_filename = true;
		}
		else if (catalog == AttributeRelationId && strcmp(def->defname, "column_name") == 0)
			(void) defGetString(def);
		else
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
					 errmsg("invalid option \"%s\"", def->defname),
					 catalog == ForeignTableRelationId ?
					 errhint("Valid options in this context are: filename.") :
					 catalog == AttributeRelationId ?
					 errhint("Valid options in this context are: column_name.") :
					 errhint("There are no valid options in this context.")));
	}
	if (catalog == ForeignTableRelationId && !have_filename)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_DYNAMIC_PARAMETER_VALUE_NEEDED),
				 errmsg("a tessera_parquet foreign table needs the option filename")));
	PG_RETURN_VOID();
}

static char *
table_filename(Oid relid)
{
	ForeignTable *ft = GetForeignTable(relid);
	ListCell   *lc;

	foreach(lc, ft->options)
	{
		DefElem    *def = lfirst_node(DefElem, lc);

		if (strcmp(def->defname, "filename") == 0)
			return defGetString(def);
	}
	ereport(ERROR,
			(errcode(ERRCODE_FDW_DYNAMIC_PARAMETER_VALUE_NEEDED),
			 errmsg("foreign table \"%s\" has no option filename", get_rel_name(relid))));
	return NULL;
}

/* the file column a table column reads: its column_name option or its name */
static char *
column_file_name(Oid relid, AttrNumber attnum, const char *attname)
{
	ListCell   *lc;

	foreach(lc, GetForeignColumnOptions(relid, attnum))
	{
		DefElem    *def = lfirst_node(DefElem, lc);

		if (strcmp(def->defname, "column_name") == 0)
			return defGetString(def);
	}
	return pstrdup(attname);
}

static int
list_sort_cmp_str(const ListCell *a, const ListCell *b)
{
	return strcmp((const char *) lfirst(a), (const char *) lfirst(b));
}

/* the files of a filename option: itself, or what a pattern matches */
static List *
expand_files(const char *pattern)
{
	glob_t		g;
	List	   *files = NIL;
	int			rc;

	if (strpbrk(pattern, "*?[") == NULL)
		return list_make1(pstrdup(pattern));
	rc = glob(pattern, GLOB_NOSORT, NULL, &g);
	if (rc == 0)
	{
		for (size_t i = 0; i < g.gl_pathc; i++)
			files = lappend(files, pstrdup(g.gl_pathv[i]));
	}
	globfree(&g);
	if (rc != 0 && rc != GLOB_NOMATCH)
		ereport(ERROR,
				(errcode(ERRCODE_IO_ERROR),
				 errmsg("could not read the files matching \"%s\"", pattern)));
	list_sort(files, list_sort_cmp_str);
	return files;
}

/* open a file's reader; errors as COPY FROM reports them */
static TpReader *
open_file(const char *path)
{
	char		err[TP_ERRLEN];
	struct stat st;
	TpReader   *r;

	if (stat(path, &st) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open file \"%s\" for reading: %m", path)));
	if (S_ISDIR(st.st_mode))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is a directory", path)));
	r = tp_reader_open(path, err, sizeof(err));
	if (r == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_BAD_COPY_FILE_FORMAT),
				 errmsg("could not read Parquet file \"%s\": %s", path, err)));
	return r;
}

/* ------------------------------------------------------------------------
 * Planning
 * ------------------------------------------------------------------------
 */

typedef struct PlanInfo
{
	List	   *files;
	double		file_rows;
	int			units;			/* row groups of all files */
	double		pages;			/* the files' bytes in pages */
} PlanInfo;

/* the pages a file takes on disk (0 if it cannot be looked at) */
static double
file_pages(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (double) ((st.st_size + BLCKSZ - 1) / BLCKSZ) : 0;
}

static void
get_rel_size(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid)
{
	PlanInfo   *info = palloc0(sizeof(PlanInfo));
	ListCell   *lc;

	info->files = expand_files(table_filename(foreigntableid));
	foreach(lc, info->files)
	{
		TpReader   *r = open_file(lfirst(lc));

		info->file_rows += tp_reader_num_rows(r);
		info->units += tp_reader_num_row_groups(r);
		tp_reader_free(r);
		info->pages += file_pages(lfirst(lc));
	}
	baserel->fdw_private = info;
	baserel->tuples = info->file_rows;
	/* what PostgreSQL sizes a parallel scan by */
	baserel->pages = (BlockNumber) Min(info->pages, (double) MaxBlockNumber);
	baserel->rows = clamp_row_est(info->file_rows *
								  clauselist_selectivity(root, baserel->baserestrictinfo, 0,
														 JOIN_INNER, NULL));
}

/*
 * The attribute numbers (offset by FirstLowInvalidHeapAttributeNumber) the
 * query reads: its target list and quals, not the plan's target list,
 * which is the table's whole row when a physical target list is used.
 */
static Bitmapset *
columns_used(RelOptInfo *baserel)
{
	Bitmapset  *used = NULL;
	ListCell   *lc;

	pull_varattnos((Node *) baserel->reltarget->exprs, baserel->relid, &used);
	foreach(lc, baserel->baserestrictinfo)
		pull_varattnos((Node *) lfirst_node(RestrictInfo, lc)->clause, baserel->relid, &used);
	return used;
}

/*
 * columns read: a fraction of the table's (*fraction), and what forming
 * their values per row costs, in operators: measured on TPC-H lineitem,
 * 60-90 ns a value to decode it and build its Datum, about four times that
 * for a numeric or a string (a palloc and a conversion each) than for a
 * value passed by value.
 */
static double
column_ops(RelOptInfo *baserel, Oid relid, double *fraction)
{
	Bitmapset  *used = columns_used(baserel);
	int			natts = baserel->max_attr;
	double		ops = 0;
	int			x = -1;

	if (natts <= 0 || bms_is_member(0 - FirstLowInvalidHeapAttributeNumber, used))
	{
		used = bms_add_range(NULL, 1 - FirstLowInvalidHeapAttributeNumber,
							 natts - FirstLowInvalidHeapAttributeNumber);
		*fraction = 1.0;
	}
	else
		*fraction = Max(bms_num_members(used), 1) / (double) natts;
	while ((x = bms_next_member(used, x)) >= 0)
	{
		AttrNumber	a = x + FirstLowInvalidHeapAttributeNumber;

		if (a > 0)
			ops += get_typbyval(get_atttype(relid, a)) ? 4 : 16;
	}
	return ops;
}

static void
get_paths(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid)
{
	PlanInfo   *info = baserel->fdw_private;
	double		fraction;
	double		ops = column_ops(baserel, foreigntableid, &fraction);
	Cost		startup = baserel->baserestrictcost.startup;
	Cost		per_row = cpu_tuple_cost + ops * cpu_operator_cost +
		baserel->baserestrictcost.per_tuple;
	/* the bytes of the columns read (TesseraAgg's estimate over the file is the same) */
	Cost		run = per_row * info->file_rows + seq_page_cost * info->pages * fraction;
	ForeignPath *path;

	path = TesseraCreateForeignscanPath(root, baserel, NULL, baserel->rows, startup, startup + run,
										NIL, NULL, NULL, NIL);
	add_path(baserel, (Path *) path);

	if (baserel->consider_parallel && info->units > 1 && max_parallel_workers_per_gather > 0)
	{
		int			workers = Min(max_parallel_workers_per_gather, info->units - 1);
		double		share = workers + (parallel_leader_participation ? 1.0 : 0.0);

		path = TesseraCreateForeignscanPath(root, baserel, NULL, clamp_row_est(baserel->rows / share),
											startup, startup + run / share, NIL, NULL, NULL, NIL);
		path->path.parallel_aware = true;
		path->path.parallel_safe = true;
		path->path.parallel_workers = workers;
		add_partial_path(baserel, (Path *) path);
	}
}

/*
 * Quals a row group's min/max statistics can rule out: column op constant
 * (either way round) with a btree comparison operator, on types whose
 * Parquet statistics order as PostgreSQL does (integers, numeric, date,
 * timestamps; not strings, whose statistics are in byte order, nor
 * floats).  Each as a list (attnum, strategy, opfamily, column type,
 * Const).
 * They stay quals of the scan too: skipping is only an optimization.
 */
static List *
prunable_quals(RelOptInfo *baserel, List *clauses)
{
	List	   *out = NIL;
	ListCell   *lc;

	foreach(lc, clauses)
	{
		Expr	   *clause = lfirst_node(RestrictInfo, lc)->clause;
		OpExpr	   *op;
		Node	   *left;
		Node	   *right;
		Oid			opno;
		Var		   *var;
		Const	   *con;
		Oid			opclass;
		Oid			opfamily;
		int			strategy;

		if (!IsA(clause, OpExpr) || list_length(((OpExpr *) clause)->args) != 2)
			continue;
		op = (OpExpr *) clause;
		left = strip_implicit_coercions(linitial(op->args));
		right = strip_implicit_coercions(lsecond(op->args));
		opno = op->opno;
		if (IsA(right, Var) && IsA(left, Const))
		{
			Node	   *t = left;

			left = right;
			right = t;
			opno = get_commutator(opno);
		}
		if (!OidIsValid(opno) || !IsA(left, Var) || !IsA(right, Const))
			continue;
		var = (Var *) left;
		con = (Const *) right;
		if (var->varno != baserel->relid || var->varattno <= 0 || var->varlevelsup != 0 ||
			con->constisnull)
			continue;
		switch (getBaseType(var->vartype))
		{
			case INT2OID:
			case INT4OID:
			case INT8OID:
			case NUMERICOID:
			case DATEOID:
			case TIMESTAMPOID:
			case TIMESTAMPTZOID:
				break;
			default:
				continue;
		}
		opclass = GetDefaultOpClass(getBaseType(var->vartype), BTREE_AM_OID);
		if (!OidIsValid(opclass))
			continue;
		opfamily = get_opclass_family(opclass);
		strategy = get_op_opfamily_strategy(opno, opfamily);
		if (strategy < BTLessStrategyNumber || strategy > BTGreaterStrategyNumber)
			continue;
		out = lappend(out, list_make5(makeInteger(var->varattno), makeInteger(strategy),
									  makeInteger((int) opfamily),
									  makeInteger((int) getBaseType(var->vartype)),
									  copyObject(con)));
	}
	return out;
}

static ForeignScan *
get_plan(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid, ForeignPath *best_path,
		 List *tlist, List *scan_clauses, Plan *outer_plan)
{
	PlanInfo   *info = baserel->fdw_private;
	List	   *files = NIL;
	List	   *columns = NIL;
	Bitmapset  *used = columns_used(baserel);
	bool		all = bms_is_member(0 - FirstLowInvalidHeapAttributeNumber, used);
	ListCell   *lc;

	foreach(lc, info->files)
		files = lappend(files, makeString(lfirst(lc)));
	for (int a = 1; a <= baserel->max_attr; a++)
		if (all || bms_is_member(a - FirstLowInvalidHeapAttributeNumber, used))
			columns = lappend_int(columns, a);
	return make_foreignscan(tlist, extract_actual_clauses(scan_clauses, false), baserel->relid, NIL,
							list_make3(files, columns, prunable_quals(baserel, scan_clauses)),
							NIL, NIL, outer_plan);
}

/* ------------------------------------------------------------------------
 * Scanning
 * ------------------------------------------------------------------------
 */

typedef struct ParquetShared
{
	pg_atomic_uint32 next_unit;
} ParquetShared;

typedef struct ScanColumn
{
	int			attnum;			/* 0-based index in the tuple descriptor */
	char	   *filename;		/* the file column's name */
} ScanColumn;

typedef struct PqScanState
{
	MemoryContext cxt;
	TupleDesc	desc;			/* the foreign table's */
	Oid			relid;
	int64		batch_rows;		/* rows a batch holds at most */
	bool		want_dict;		/* string columns with their dictionaries */
	List	   *files;
	int			nfiles;
	int		   *file_groups;	/* row groups of each file (opened files only: -1) */
	int			ncols;
	ScanColumn *cols;
	/* the file being read */
	int			file;
	TpReader   *reader;
	TpFieldReader *fields;
	int		   *filecols;
	TpVector   *vectors;
	int64		nrows;
	int64		row;
	/* serial: the next file; parallel: units from the counter */
	int			next_file;
	ParquetShared *shared;
	int			units_read;
	/* row groups the quals rule out by their statistics */
	List	   *prune;
	bool	   *keep;			/* [row groups of the file being read] */
	int			groups_skipped;
	MemoryContextCallback cb;
} PqScanState;

static void choose_groups(PqScanState *s);
static PqScanState *scan_state_create(Relation rel, List *plan, int64 batch_rows);

static void
free_reader(void *arg)
{
	PqScanState  *s = arg;

	if (s->reader)
		tp_reader_free(s->reader);
	s->reader = NULL;
}

/*
 * The state of a scan of rel as planned (get_plan's fdw_private, or a batch
 * source's plan: files, the columns read, the quals that prune), in a new
 * memory context under the current one.
 */
static PqScanState *
scan_state_create(Relation rel, List *plan, int64 batch_rows)
{
	TupleDesc	desc = RelationGetDescr(rel);
	PqScanState *s;
	Bitmapset  *used = NULL;
	ListCell   *lc;

	s = palloc0(sizeof(PqScanState));
	s->cxt = AllocSetContextCreate(CurrentMemoryContext, "tessera parquet scan",
								   ALLOCSET_DEFAULT_SIZES);
	s->cb.func = free_reader;
	s->cb.arg = s;
	MemoryContextRegisterResetCallback(s->cxt, &s->cb);
	s->desc = desc;
	s->relid = RelationGetRelid(rel);
	s->batch_rows = batch_rows;
	foreach(lc, (List *) linitial(plan))
		s->files = lappend(s->files, strVal(lfirst(lc)));
	s->nfiles = list_length(s->files);
	s->file_groups = palloc(sizeof(int) * Max(s->nfiles, 1));
	for (int i = 0; i < s->nfiles; i++)
		s->file_groups[i] = -1;
	s->file = -1;

	/* the columns the query reads (get_plan) */
	foreach(lc, (List *) lsecond(plan))
		used = bms_add_member(used, lfirst_int(lc));
	s->prune = (List *) lthird(plan);
	s->cols = palloc(sizeof(ScanColumn) * Max(desc->natts, 1));
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (att->attisdropped || !bms_is_member(att->attnum, used))
			continue;
		s->cols[s->ncols].attnum = i;
		s->cols[s->ncols].filename = column_file_name(s->relid, att->attnum,
													  NameStr(att->attname));
		s->ncols++;
	}
	return s;
}

static void
begin_scan(ForeignScanState *node, int eflags)
{
	ForeignScan *plan = (ForeignScan *) node->ss.ps.plan;
	MemoryContext old;

	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		return;
	old = MemoryContextSwitchTo(node->ss.ps.state->es_query_cxt);
	node->fdw_state = scan_state_create(node->ss.ss_currentRelation, plan->fdw_private,
										TP_SCAN_BATCH_ROWS);
	MemoryContextSwitchTo(old);
}

/* open file i: its reader, and its columns matched to the table's */
static void
open_scan_file(PqScanState *s, int i)
{
	TupleDesc	desc = s->desc;
	MemoryContext old = MemoryContextSwitchTo(s->cxt);
	const char *path = list_nth(s->files, i);
	int			nfile;

	free_reader(s);
	s->reader = open_file(path);
	s->file = i;
	s->file_groups[i] = tp_reader_num_row_groups(s->reader);
	nfile = tp_reader_num_columns(s->reader);
	s->fields = palloc0(sizeof(TpFieldReader) * Max(s->ncols, 1));
	s->filecols = palloc(sizeof(int) * Max(s->ncols, 1));
	s->vectors = palloc0(sizeof(TpVector) * Max(s->ncols, 1));
	for (int c = 0; c < s->ncols; c++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, s->cols[c].attnum);
		int			f;

		for (f = 0; f < nfile; f++)
			if (strcmp(tp_reader_column_name(s->reader, f), s->cols[c].filename) == 0)
				break;
		if (f == nfile)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_COLUMN_NAME_NOT_FOUND),
					 errmsg("Parquet file \"%s\" has no column \"%s\"", path, s->cols[c].filename)));
		s->filecols[c] = f;
		TesseraParquetFieldInit(&s->fields[c], NameStr(att->attname), att->atttypid, att->atttypmod,
								pstrdup(tp_reader_column_name(s->reader, f)),
								pstrdup(tp_reader_column_type_name(s->reader, f)),
								tp_reader_column_type(s->reader, f));
		TesseraParquetFieldPrepareDatums(&s->fields[c]);
		if (s->want_dict && s->fields[c].type.kind == TP_KIND_TEXT)
			(void) tp_reader_want_dictionary(s->reader, f);
	}
	MemoryContextSwitchTo(old);
	choose_groups(s);
}

static bool
compare(Oid opfamily, Oid lefttype, Oid righttype, int strategy, Datum a, Datum b)
{
	Oid			opr = get_opfamily_member(opfamily, lefttype, righttype, strategy);

	if (!OidIsValid(opr))
		return true;			/* cannot tell: keep the row group */
	return DatumGetBool(OidFunctionCall2Coll(get_opcode(opr), InvalidOid, a, b));
}

/*
 * Whether a row group whose column lies in [min, max] may hold a row that
 * satisfies qual (prunable_quals).
 */
static bool
group_may_match(List *qual, Datum min, Datum max)
{
	int			strategy = intVal(lsecond(qual));
	Oid			opfamily = (Oid) intVal(lthird(qual));
	Oid			coltype = (Oid) intVal(lfourth(qual));
	Const	   *con = list_nth(qual, 4);

	switch (strategy)
	{
		case BTLessStrategyNumber:
		case BTLessEqualStrategyNumber:
			return compare(opfamily, coltype, con->consttype, strategy, min, con->constvalue);
		case BTGreaterStrategyNumber:
		case BTGreaterEqualStrategyNumber:
			return compare(opfamily, coltype, con->consttype, strategy, max, con->constvalue);
		default:
			return compare(opfamily, coltype, con->consttype, BTLessEqualStrategyNumber,
						   min, con->constvalue) &&
				compare(opfamily, coltype, con->consttype, BTGreaterEqualStrategyNumber,
						max, con->constvalue);
	}
}

/* which row groups of the file being read the quals leave (s->keep) */
static void
choose_groups(PqScanState *s)
{
	int			n = s->file_groups[s->file];
	ListCell   *lc;

	s->keep = MemoryContextAlloc(s->cxt, sizeof(bool) * Max(n, 1));
	memset(s->keep, true, sizeof(bool) * Max(n, 1));
	foreach(lc, s->prune)
	{
		List	   *qual = lfirst(lc);
		int			attidx = intVal(linitial(qual)) - 1;
		TpVector	mins;
		TpVector	maxs;
		char		err[TP_ERRLEN];
		int			c;

		for (c = 0; c < s->ncols; c++)
			if (s->cols[c].attnum == attidx)
				break;
		if (c == s->ncols ||
			tp_reader_stats(s->reader, s->filecols[c], &mins, &maxs, err, sizeof(err)) != 0)
			continue;
		for (int g = 0; g < n; g++)
		{
			bool		lo_null;
			bool		hi_null;
			Datum		lo;
			Datum		hi;

			if (!s->keep[g])
				continue;
			lo = TesseraParquetFieldDatum(&s->fields[c], &mins, g, &lo_null);
			hi = TesseraParquetFieldDatum(&s->fields[c], &maxs, g, &hi_null);
			if (!lo_null && !hi_null && !group_may_match(qual, lo, hi))
				s->keep[g] = false;
		}
	}
}

static void
start_groups(PqScanState *s, const int *groups, int ngroups)
{
	char		err[TP_ERRLEN];

	if (tp_reader_start(s->reader, s->ncols, s->filecols, s->batch_rows, groups, ngroups,
						err, sizeof(err)) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_BAD_COPY_FILE_FORMAT),
				 errmsg("could not read Parquet file \"%s\": %s",
						(char *) list_nth(s->files, s->file), err)));
}

/*
 * The next piece of work: serially the next file; in a parallel scan the
 * next row group from the shared counter.  False when there is none.
 */
static bool
next_unit(PqScanState *s)
{
	if (s->shared == NULL)
	{
		int		   *groups;
		int			n = 0;
		int			ngroups;

		if (s->next_file >= s->nfiles)
			return false;
		open_scan_file(s, s->next_file++);
		ngroups = s->file_groups[s->file];
		groups = palloc(sizeof(int) * Max(ngroups, 1));
		for (int g = 0; g < ngroups; g++)
			if (s->keep[g])
				groups[n++] = g;
		s->groups_skipped += ngroups - n;
		start_groups(s, groups, n == ngroups ? -1 : n);
		/* a serial scan's file is decoded a batch or two ahead, on the other core */
		TesseraParquetPrefetch(s->reader);
		pfree(groups);
		return true;
	}
	for (;;)
	{
		uint32		unit = pg_atomic_fetch_add_u32(&s->shared->next_unit, 1);
		uint32		base = 0;
		int			i;

		/* units number the row groups of the files in order */
		for (i = 0; i < s->nfiles; i++)
		{
			if (s->file_groups[i] < 0)
				open_scan_file(s, i);
			if (unit < base + s->file_groups[i])
				break;
			base += s->file_groups[i];
		}
		if (i == s->nfiles)
			return false;
		if (s->file != i)
			open_scan_file(s, i);
		if (!s->keep[unit - base])
		{
			s->groups_skipped++;
			continue;
		}
		{
			int			group = (int) (unit - base);

			start_groups(s, &group, 1);
		}
		s->units_read++;
		return true;
	}
}

/* the next batch of the unit being read into s->vectors: its rows, 0 at its end */
static int64
read_vectors(PqScanState *s)
{
	char		err[TP_ERRLEN];
	int64		n = s->reader ? tp_reader_next(s->reader, s->vectors, err, sizeof(err)) : 0;

	if (n < 0)
		ereport(ERROR,
				(errcode(ERRCODE_BAD_COPY_FILE_FORMAT),
				 errmsg("could not read Parquet file \"%s\": %s",
						(char *) list_nth(s->files, s->file), err)));
	return n;
}

static TupleTableSlot *
iterate_scan(ForeignScanState *node)
{
	PqScanState  *s = node->fdw_state;
	TupleTableSlot *slot = node->ss.ss_ScanTupleSlot;

	ExecClearTuple(slot);
	while (s->row >= s->nrows)
	{
		s->nrows = read_vectors(s);
		s->row = 0;
		if (s->nrows == 0 && !next_unit(s))
			return slot;
		CHECK_FOR_INTERRUPTS();
	}
	memset(slot->tts_isnull, true, sizeof(bool) * slot->tts_tupleDescriptor->natts);
	for (int c = 0; c < s->ncols; c++)
	{
		int			a = s->cols[c].attnum;

		slot->tts_values[a] = TesseraParquetFieldDatum(&s->fields[c], &s->vectors[c], s->row,
													   &slot->tts_isnull[a]);
	}
	s->row++;
	return ExecStoreVirtualTuple(slot);
}

/* back to the first file (a serial scan; a parallel one's counter is its DSM's) */
static void
restart_scan(PqScanState *s)
{
	free_reader(s);
	s->file = -1;
	s->next_file = 0;
	s->nrows = s->row = 0;
}

static void
rescan(ForeignScanState *node)
{
	restart_scan(node->fdw_state);
}

static void
end_scan(ForeignScanState *node)
{
	PqScanState  *s = node->fdw_state;

	if (s)
		free_reader(s);
}

static void
explain_scan(ForeignScanState *node, ExplainState *es)
{
	ForeignScan *plan = (ForeignScan *) node->ss.ps.plan;
	PqScanState  *s = node->fdw_state;

	ExplainPropertyInteger("Parquet Files", NULL, list_length((List *) linitial(plan->fdw_private)), es);
	if (s)
	{
		ExplainPropertyInteger("Columns Read", NULL, s->ncols, es);
		if (es->analyze && s->prune != NIL)
			ExplainPropertyInteger("Row Groups Skipped", NULL, s->groups_skipped, es);
	}
}

static bool
parallel_safe(PlannerInfo *root, RelOptInfo *rel, RangeTblEntry *rte)
{
	return true;
}

static Size
estimate_dsm(ForeignScanState *node, ParallelContext *pcxt)
{
	return sizeof(ParquetShared);
}

static void
init_dsm(ForeignScanState *node, ParallelContext *pcxt, void *coordinate)
{
	ParquetShared *shared = coordinate;

	pg_atomic_init_u32(&shared->next_unit, 0);
	if (node->fdw_state)
		((PqScanState *) node->fdw_state)->shared = shared;
}

static void
reinit_dsm(ForeignScanState *node, ParallelContext *pcxt, void *coordinate)
{
	pg_atomic_write_u32(&((ParquetShared *) coordinate)->next_unit, 0);
}

static void
init_worker(ForeignScanState *node, shm_toc *toc, void *coordinate)
{
	if (node->fdw_state)
		((PqScanState *) node->fdw_state)->shared = coordinate;
}

/* ------------------------------------------------------------------------
 * ANALYZE: a sample of the files' rows
 * ------------------------------------------------------------------------
 */

/*
 * Every row of the files is read (only the sampled ones are made into
 * Datums) and targrows of them kept by reservoir sampling, as file_fdw
 * does, so the planner knows the columns' distinct values and ranges.
 */
static int
acquire_sample(Relation rel, int elevel, HeapTuple *rows, int targrows, double *totalrows,
			   double *totaldeadrows)
{
	TupleDesc	desc = RelationGetDescr(rel);
	List	   *files = NIL;
	List	   *columns = NIL;
	ListCell   *lc;
	PqScanState *s;
	ReservoirStateData rstate;
	double		seen = 0;
	double		skip = 0;
	int			kept = 0;
	Datum	   *values = palloc(sizeof(Datum) * Max(desc->natts, 1));
	bool	   *nulls = palloc(sizeof(bool) * Max(desc->natts, 1));
	MemoryContext rowcxt = AllocSetContextCreate(CurrentMemoryContext, "tessera parquet sample",
												 ALLOCSET_DEFAULT_SIZES);

	foreach(lc, expand_files(table_filename(RelationGetRelid(rel))))
		files = lappend(files, makeString(lfirst(lc)));
	for (int a = 1; a <= desc->natts; a++)
		columns = lappend_int(columns, a);
	s = scan_state_create(rel, list_make3(files, columns, NIL), TP_SCAN_BATCH_ROWS);
	reservoir_init_selection_state(&rstate, targrows);
	for (;;)
	{
		int64		n = read_vectors(s);

		if (n == 0)
		{
			if (!next_unit(s))
				break;
			continue;
		}
		TesseraVacuumDelayPoint();
		for (int64 row = 0; row < n; row++, seen++)
		{
			int			slot;
			MemoryContext old;

			if (kept < targrows)
				slot = kept++;
			else
			{
				if (skip > 0)
				{
					skip--;
					continue;
				}
				skip = reservoir_get_next_S(&rstate, seen, targrows);
				slot = (int) (targrows * sampler_random_fract(&rstate.randstate));
				heap_freetuple(rows[slot]);
			}
			old = MemoryContextSwitchTo(rowcxt);
			memset(nulls, true, sizeof(bool) * desc->natts);
			for (int c = 0; c < s->ncols; c++)
				values[s->cols[c].attnum] = TesseraParquetFieldDatum(&s->fields[c], &s->vectors[c],
																	row, &nulls[s->cols[c].attnum]);
			MemoryContextSwitchTo(old);
			rows[slot] = heap_form_tuple(desc, values, nulls);
			MemoryContextReset(rowcxt);
		}
	}
	free_reader(s);
	MemoryContextDelete(s->cxt);
	MemoryContextDelete(rowcxt);
	*totalrows = seen;
	*totaldeadrows = 0;
	ereport(elevel,
			(errmsg("\"%s\": file contains %.0f rows; %d rows in sample",
					RelationGetRelationName(rel), seen, kept)));
	return kept;
}

static bool
analyze_table(Relation rel, AcquireSampleRowsFunc *func, BlockNumber *totalpages)
{
	double		pages = 0;
	ListCell   *lc;

	foreach(lc, expand_files(table_filename(RelationGetRelid(rel))))
		pages += file_pages(lfirst(lc));
	*func = acquire_sample;
	*totalpages = (BlockNumber) Min(Max(pages, 1), (double) MaxBlockNumber);
	return true;
}

/* ------------------------------------------------------------------------
 * IMPORT FOREIGN SCHEMA
 * ------------------------------------------------------------------------
 */

/* the type a file column's values have in PostgreSQL, or NULL */
static const char *
import_type(TpType t)
{
	static char buf[64];

	switch (t.kind == TP_KIND_LIST ? t.elem_kind : t.kind)
	{
		case TP_KIND_BOOL:
			snprintf(buf, sizeof(buf), "boolean");
			break;
		case TP_KIND_INT16:
			snprintf(buf, sizeof(buf), "smallint");
			break;
		case TP_KIND_INT32:
			snprintf(buf, sizeof(buf), "integer");
			break;
		case TP_KIND_INT64:
			snprintf(buf, sizeof(buf), "bigint");
			break;
		case TP_KIND_FLOAT32:
			snprintf(buf, sizeof(buf), "real");
			break;
		case TP_KIND_FLOAT64:
			snprintf(buf, sizeof(buf), "double precision");
			break;
		case TP_KIND_DECIMAL:
			if (t.kind == TP_KIND_LIST)
				snprintf(buf, sizeof(buf), "numeric(%d,%d)", t.elem_precision, Max(t.elem_scale, 0));
			else
				snprintf(buf, sizeof(buf), "numeric(%d,%d)", t.precision, Max(t.scale, 0));
			break;
		case TP_KIND_TEXT:
			snprintf(buf, sizeof(buf), "text");
			break;
		case TP_KIND_JSON:
			snprintf(buf, sizeof(buf), "jsonb");
			break;
		case TP_KIND_BINARY:
			snprintf(buf, sizeof(buf), "bytea");
			break;
		case TP_KIND_DATE:
			snprintf(buf, sizeof(buf), "date");
			break;
		case TP_KIND_TIME:
			snprintf(buf, sizeof(buf), "time");
			break;
		case TP_KIND_TIMESTAMP:
			snprintf(buf, sizeof(buf), "timestamp");
			break;
		case TP_KIND_TIMESTAMPTZ:
			snprintf(buf, sizeof(buf), "timestamptz");
			break;
		case TP_KIND_UUID:
			snprintf(buf, sizeof(buf), "uuid");
			break;
		case TP_KIND_INTERVAL:
			snprintf(buf, sizeof(buf), "interval");
			break;
		case TP_KIND_NULL:
			snprintf(buf, sizeof(buf), "text");
			break;
		default:
			return NULL;
	}
	if (t.kind == TP_KIND_LIST)
		strlcat(buf, "[]", sizeof(buf));
	return buf;
}

/* the table a file becomes: its name without the directory and .parquet */
static char *
import_name(const char *path)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	char	   *name = pstrdup(base);
	size_t		n = strlen(name);

	if (n > 8 && pg_strcasecmp(name + n - 8, ".parquet") == 0)
		name[n - 8] = '\0';
	return name;
}

/* whether LIMIT TO / EXCEPT of the statement keep table name */
static bool
import_wanted(ImportForeignSchemaStmt *stmt, const char *name)
{
	ListCell   *lc;
	bool		listed = false;

	if (stmt->list_type == FDW_IMPORT_SCHEMA_ALL)
		return true;
	foreach(lc, stmt->table_list)
		listed |= strcmp(((RangeVar *) lfirst(lc))->relname, name) == 0;
	return stmt->list_type == FDW_IMPORT_SCHEMA_LIMIT_TO ? listed : !listed;
}

static char *
import_table(const char *path, const char *name, const char *server)
{
	TpReader   *r = open_file(path);
	StringInfoData sql;
	int			n = 0;

	initStringInfo(&sql);
	appendStringInfo(&sql, "CREATE FOREIGN TABLE %s (", quote_identifier(name));
	for (int i = 0; i < tp_reader_num_columns(r); i++)
	{
		const char *type = import_type(tp_reader_column_type(r, i));

		if (type == NULL)
		{
			ereport(NOTICE,
					(errmsg("column \"%s\" of Parquet file \"%s\" is of type %s, which tessera cannot read: left out",
							tp_reader_column_name(r, i), path, tp_reader_column_type_name(r, i))));
			continue;
		}
		appendStringInfo(&sql, "%s%s %s", n++ > 0 ? ", " : "",
						 quote_identifier(tp_reader_column_name(r, i)), type);
	}
	appendStringInfo(&sql, ") SERVER %s OPTIONS (filename %s)", quote_identifier(server),
					 quote_literal_cstr(path));
	tp_reader_free(r);
	return sql.data;
}

static List *
import_schema(ImportForeignSchemaStmt *stmt, Oid serverOid)
{
	const char *where = stmt->remote_schema;
	const char *server = GetForeignServer(serverOid)->servername;
	struct stat st;
	List	   *commands = NIL;
	List	   *files;
	ListCell   *lc;

	check_file_privilege();
	if (stat(where, &st) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open \"%s\": %m", where)));
	files = S_ISDIR(st.st_mode) ? expand_files(psprintf("%s/*.parquet", where)) : list_make1(pstrdup(where));
	/* files LIMIT TO or EXCEPT leave out are not opened */
	foreach(lc, files)
	{
		char	   *name = import_name(lfirst(lc));

		if (import_wanted(stmt, name))
			commands = lappend(commands, import_table(lfirst(lc), name, server));
	}
	return commands;
}

/* ------------------------------------------------------------------------
 * The batch source: TesseraAgg over a file table
 *
 * TesseraAgg aggregates a tessera_parquet table's rows as column vectors
 * (plan.h, TesseraBatchSource): the scan above, its units handed out by
 * the same counter, fills an external reader's batches, and the vector
 * quals, group tables and aggregate kernels run over them as over a
 * tessera row group.  Decimal columns go in as the scaled integers they
 * are in the file, without building a numeric per value.
 * ------------------------------------------------------------------------
 */

/*
 * A batch of the source: up to this many rows of one row group.  Small
 * enough that a batch's columns (a decimal column is 16 bytes a value)
 * stay in the L2 cache between the reader's decoding and the kernels'
 * passes: TPC-H Q1 on the lineitem file 290 ms with 65,536-row batches,
 * 250 with 32,768, 215-225 with 16,384, 220-226 with 8,192.
 */
#define TP_SOURCE_BATCH_ROWS 16384

typedef struct PqSource
{
	PqScanState *scan;
	TesseraReader *reader;
	int		   *col_of_att;		/* [natts]: the scan's column, or -1 */
	/* dictionary columns of the current batch: [scan column] */
	int		   *dict_batch;		/* the batch (b->rg) they were made for */
	int64	  **dict_codes;
	Datum	  **dict_entries;
	int		   *dict_n;
} PqSource;

static bool
source_accepts(Relation rel)
{
	FdwRoutine *routine = GetFdwRoutineForRelation(rel, false);

	return routine->GetForeignRelSize == get_rel_size;
}

static List *
source_plan(PlannerInfo *root, RelOptInfo *baserel, List *attnums)
{
	PlanInfo   *info = baserel->fdw_private;
	List	   *files = NIL;
	List	   *columns = NIL;
	ListCell   *lc;

	foreach(lc, info->files)
		files = lappend(files, makeString(lfirst(lc)));
	foreach(lc, attnums)
		if (lfirst_int(lc) > 0)
			columns = lappend_int(columns, lfirst_int(lc));
	return list_make3(files, columns, prunable_quals(baserel, baserel->baserestrictinfo));
}

/* Column attidx of the source's batch, as Datums or as scaled integers. */
static void
source_fill(void *arg, TesseraBatch *b, int attidx, bool scaled)
{
	PqSource   *src = arg;
	PqScanState *s = src->scan;
	int			c = src->col_of_att[attidx];
	int			n = b->chunk_rows;
	MemoryContext old = MemoryContextSwitchTo(src->reader->batch_cxt);

	if (scaled)
	{
		__int128   *values;
		bool	   *isnull;
		int			bits;

		if (c >= 0 &&
			TesseraParquetFieldScaled(&s->fields[c], &s->vectors[c], n, &values, &isnull, &bits))
			TesseraBatchSetScaled(b, attidx, values, isnull, s->fields[c].type.scale, bits);
	}
	else
	{
		Datum	   *values = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(Datum) * Max(n, 1));
		bool	   *isnull = MemoryContextAllocHuge(CurrentMemoryContext, Max(n, 1));

		if (c < 0)
		{
			memset(values, 0, sizeof(Datum) * n);
			memset(isnull, true, n);
		}
		else
			TesseraParquetFieldColumn(&s->fields[c], &s->vectors[c], n, values, isnull);
		b->values[attidx] = values;
		b->isnull[attidx] = isnull;
	}
	MemoryContextSwitchTo(old);
}

/* A dictionary column of the source's batch: codes and entries, made once per batch. */
static bool
source_dict(void *arg, TesseraBatch *b, int attidx, int64 **codes, Datum **entries, int *ndict)
{
	PqSource   *src = arg;
	int			c = src->col_of_att[attidx];

	if (c < 0 || src->scan->vectors[c].keys == NULL)
		return false;
	if (src->dict_batch[c] != b->rg)
	{
		if (!TesseraParquetFieldDict(&src->scan->fields[c], &src->scan->vectors[c], b->chunk_rows,
									 &src->dict_codes[c], &src->dict_entries[c],
									 &src->dict_n[c]))
			return false;
		src->dict_batch[c] = b->rg;
	}
	*codes = src->dict_codes[c];
	*entries = src->dict_entries[c];
	*ndict = src->dict_n[c];
	return true;
}

static void *
source_begin(Relation rel, List *plan, TesseraReader **reader)
{
	PqSource   *src = palloc0(sizeof(PqSource));
	TupleDesc	desc = RelationGetDescr(rel);

	src->scan = scan_state_create(rel, plan, TP_SOURCE_BATCH_ROWS);
	src->col_of_att = palloc(sizeof(int) * Max(desc->natts, 1));
	for (int i = 0; i < desc->natts; i++)
		src->col_of_att[i] = -1;
	for (int c = 0; c < src->scan->ncols; c++)
		src->col_of_att[src->scan->cols[c].attnum] = c;
	src->dict_batch = palloc(sizeof(int) * Max(src->scan->ncols, 1));
	for (int c = 0; c < src->scan->ncols; c++)
		src->dict_batch[c] = -1;
	src->dict_codes = palloc0(sizeof(int64 *) * Max(src->scan->ncols, 1));
	src->dict_entries = palloc0(sizeof(Datum *) * Max(src->scan->ncols, 1));
	src->dict_n = palloc0(sizeof(int) * Max(src->scan->ncols, 1));
	/* string columns keep the file's dictionaries */
	src->scan->want_dict = true;
	src->reader = TesseraReaderExternal(rel, source_fill, source_dict, src, CurrentMemoryContext);
	*reader = src->reader;
	return src;
}

static bool
source_next(void *state)
{
	PqSource   *src = state;
	PqScanState *s = src->scan;

	for (;;)
	{
		int64		n = read_vectors(s);

		if (n > 0)
		{
			TesseraReaderExternalBatch(src->reader, (int) n);
			return true;
		}
		if (!next_unit(s))
			return false;
	}
}

static void
source_rescan(void *state)
{
	restart_scan(((PqSource *) state)->scan);
}

static void
source_end(void *state)
{
	PqSource   *src = state;

	free_reader(src->scan);
	TesseraReaderEnd(src->reader);
}

static void
source_init_shared(void *shared)
{
	pg_atomic_init_u32(&((ParquetShared *) shared)->next_unit, 0);
}

static void
source_attach(void *state, void *shared)
{
	((PqSource *) state)->scan->shared = shared;
}

static void
source_explain(void *state, List *plan, ExplainState *es)
{
	PqSource   *src = state;

	ExplainPropertyInteger("Parquet Files", NULL, list_length((List *) linitial(plan)), es);
	ExplainPropertyInteger("Columns Read", NULL, list_length((List *) lsecond(plan)), es);
	if (es->analyze && src != NULL && lthird(plan) != NIL)
		ExplainPropertyInteger("Row Groups Skipped", NULL, src->scan->groups_skipped, es);
}

static const TesseraBatchSource parquet_source = {
	.accepts = source_accepts,
	.plan = source_plan,
	.begin = source_begin,
	.next = source_next,
	.rescan = source_rescan,
	.end = source_end,
	.shared_size = sizeof(ParquetShared),
	.init_shared = source_init_shared,
	.attach = source_attach,
	.explain = source_explain,
};

/* _PG_init: TesseraAgg may aggregate file tables' batches */
void
TesseraRegisterParquetSource(void)
{
	tessera_batch_source = &parquet_source;
}

Datum
tessera_parquet_fdw_handler(PG_FUNCTION_ARGS)
{
	FdwRoutine *routine = makeNode(FdwRoutine);

	routine->GetForeignRelSize = get_rel_size;
	routine->GetForeignPaths = get_paths;
	routine->GetForeignPlan = get_plan;
	routine->BeginForeignScan = begin_scan;
	routine->IterateForeignScan = iterate_scan;
	routine->ReScanForeignScan = rescan;
	routine->EndForeignScan = end_scan;
	routine->ExplainForeignScan = explain_scan;
	routine->IsForeignScanParallelSafe = parallel_safe;
	routine->EstimateDSMForeignScan = estimate_dsm;
	routine->InitializeDSMForeignScan = init_dsm;
	routine->ReInitializeDSMForeignScan = reinit_dsm;
	routine->InitializeWorkerForeignScan = init_worker;
	routine->ImportForeignSchema = import_schema;
	routine->AnalyzeForeignTable = analyze_table;
	PG_RETURN_POINTER(routine);
}
