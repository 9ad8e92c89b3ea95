/*-------------------------------------------------------------------------
 *
 * cost.c
 *	  What a scan of a tessera table costs: the estimate TesseraScan's and
 *	  TesseraAgg's paths are costed from.
 *
 * NOTES
 *	  What a scan costs is decoding, not reading.  The estimate counts the
 *	  columns decoded, the physical pages of the row groups expected to be
 *	  read, and the selectivity of the quals evaluated on vectors.  The
 *	  share of row groups read is a column's quals' selectivity where the
 *	  column's values follow the row order (pg_stats correlation), all of
 *	  them where they do not; the best column decides.
 *
 * IDENTIFICATION
 *	  src/planner/cost.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>
#include <unistd.h>

#include "access/sysattr.h"
#include "catalog/pg_statistic.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/paths.h"
#include "optimizer/restrictinfo.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/selfuncs.h"
#include "utils/syscache.h"

#include "tessera/storage.h"
#include "planner.h"

/* Correlation of a column with the row order (0 when unknown). */
double
TesseraColumnCorrelation(Oid relid, AttrNumber attnum)
{
	HeapTuple	tup = SearchSysCache3(STATRELATTINH, ObjectIdGetDatum(relid),
									  Int16GetDatum(attnum), BoolGetDatum(false));
	AttStatsSlot sslot;
	double		corr = 0.0;

	if (!HeapTupleIsValid(tup))
		return 0.0;
	if (get_attstatsslot(&sslot, tup, STATISTIC_KIND_CORRELATION, InvalidOid,
						 ATTSTATSSLOT_NUMBERS))
	{
		if (sslot.nnumbers == 1)
			corr = sslot.numbers[0];
		free_attstatsslot(&sslot);
	}
	ReleaseSysCache(tup);
	return corr;
}

/* The single column a qual tree refers to, or 0. */
AttrNumber
TesseraSingleColumn(Node *clause, Index relid)
{
	Bitmapset  *attrs = NULL;
	int			k;

	pull_varattnos(clause, relid, &attrs);
	if (bms_num_members(attrs) != 1)
		return 0;
	k = bms_singleton_member(attrs) + FirstLowInvalidHeapAttributeNumber;
	return k > 0 ? k : 0;
}

/*
 * TesseraParallelDivisor
 *		The share of a parallel scan's rows each process handles, as
 *		PostgreSQL's cost model counts it (costsize.c's parallel divisor):
 *		the leader helps less the more workers there are.
 */
double
TesseraParallelDivisor(int workers)
{
	double		divisor = workers;

	if (parallel_leader_participation)
	{
		double		leader = 1.0 - (0.3 * workers);

		if (leader > 0)
			divisor += leader;
	}
	return divisor;
}

/*
 * TesseraCoreWorkers
 *		The workers compute_parallel_worker plans for rel, at most as many
 *		as the machine has cores besides the leader's where the leader takes
 *		part (tessera.limit_workers_to_cores): a tessera scan decodes what
 *		is in memory, bound by the CPU, and a third process on two cores
 *		only shares them (ClickBench 10M's top-N of SearchPhrase: 87 ms
 *		with one worker, 101 ms with two, 125 ms serial).  A table's own
 *		parallel_workers setting is taken as it is.
 */
bool		tessera_limit_workers_to_cores = true;

int
TesseraCoreWorkers(RelOptInfo *rel)
{
	static int	cores = 0;
	int			workers = compute_parallel_worker(rel, rel->pages, -1,
												  max_parallel_workers_per_gather);
	int			cap;

	if (!tessera_limit_workers_to_cores || rel->rel_parallel_workers >= 0)
		return workers;
	if (cores == 0)
	{
		long		n = sysconf(_SC_NPROCESSORS_ONLN);

		cores = n > 0 ? (int) Min(n, 1024) : 1;
	}
	cap = parallel_leader_participation ? cores - 1 : cores;
	return Min(workers, Max(cap, 1));
}

/*
 * TesseraReadFraction
 *		The share of rel's row groups a scan reads when the row-group filters
 *		among rinfos skip the others (clauselist_selectivity's varRelid).
 *		Skipping pays where a column follows the row order: then only the
 *		share of row groups its quals select is read (a BETWEEN's two bounds
 *		together), otherwise nearly all.  The best column decides; at least
 *		one row group (of the default size) is read.
 */
double
TesseraReadFraction(PlannerInfo *root, RelOptInfo *rel, Relation relation, List *rinfos,
					int varRelid)
{
	TupleDesc	desc = RelationGetDescr(relation);
	double		frac = 1.0;

	for (int i = 0; i < desc->natts; i++)
	{
		List	   *col_quals = NIL;
		ListCell   *lc;
		Selectivity sel;
		double		corr;

		foreach(lc, rinfos)
		{
			RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);

			if (TesseraSingleColumn((Node *) rinfo->clause, rel->relid) == i + 1 &&
				TesseraSkipDescribe((Node *) rinfo->clause, rel->relid, relation) != NIL)
				col_quals = lappend(col_quals, rinfo);
		}
		if (col_quals == NIL)
			continue;
		sel = clauselist_selectivity(root, col_quals, varRelid, JOIN_INNER, NULL);
		corr = TesseraColumnCorrelation(RelationGetRelid(relation), i + 1);
		frac = Min(frac, sel + (1.0 - sel) * (1.0 - corr * corr));
		list_free(col_quals);
	}
	return Max(frac, 1.0 / Max(rel->tuples / 10000.0, 1.0));
}

/*
 * Operators to decode one value of a column: one for a pass-by-value type
 * (a few ns: an unpack), more for values built by reference, in proportion
 * to their width -- variable-length values are decompressed, copied and
 * given a header each.  Measured here: an md5 text column (33 bytes) costs
 * about 40 ns a value to decode, an integer 1-2 ns, a numeric(12,2) ~15 ns.
 */
static double
decode_ops(Oid relid, Form_pg_attribute attr)
{
	int32		width;

	if (attr->attbyval)
		return 1.0;
	width = get_attavgwidth(relid, attr->attnum);
	if (width <= 0)
		width = get_typavgwidth(attr->atttypid, attr->atttypmod);
	return 1.0 + width / 8.0;
}

/*
 * TesseraScanEstimate
 *		What a TesseraScan of rel reading the columns attrs costs, apart
 *		from parallelism: the share of row groups read, the columns
 *		decoded, the vector quals' selectivity and the quals left over.
 */
void
TesseraScanEstimate(PlannerInfo *root, RelOptInfo *rel, Relation relation, Bitmapset *attrs,
					TscanEstimate *est)
{
	TupleDesc	desc = RelationGetDescr(relation);
	bool		all = TesseraWholeRow(attrs);
	double		read_width = 0,
				all_width = 0;
	ListCell   *lc;

	memset(est, 0, sizeof(TscanEstimate));
	est->read_frac = 1.0;
	est->vec_sel = 1.0;
	/* a foreign table's batch source: its files' pages (the FDW's estimate) */
	est->phys_pages = relation->rd_rel->relkind == RELKIND_FOREIGN_TABLE ? rel->pages :
		TesseraPhysicalBlocks(relation);

	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute attr = TupleDescAttr(desc, i);
		int32		width;

		if (attr->attisdropped)
			continue;
		width = get_attavgwidth(RelationGetRelid(relation), attr->attnum);
		if (width <= 0)
			width = get_typavgwidth(attr->atttypid, attr->atttypmod);
		all_width += width;
		if (all || bms_is_member(attr->attnum - FirstLowInvalidHeapAttributeNumber, attrs))
		{
			est->ncols++;
			est->decode_ops += decode_ops(RelationGetRelid(relation), attr);
			read_width += width;
		}
	}

	/*
	 * A tessera table's columns are stored apart: a scan reads the pages of
	 * the columns it needs, their share of the table by their average width
	 * (its chunks and row groups' summaries, at least half a column's
	 * share, when it reads none).  Charging every page of the table made a
	 * count(*) of ClickBench's 105 columns cost 150,000 and each such query
	 * was compiled by JIT (10 ms of a 46 ms query).
	 */
	if (!all && all_width > 0 && relation->rd_rel->relkind != RELKIND_FOREIGN_TABLE)
		est->phys_pages = (BlockNumber) ceil(est->phys_pages *
											 Max(read_width, 0.5 * all_width / desc->natts) /
											 all_width);

	foreach(lc, rel->baserestrictinfo)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);
		Node	   *clause = (Node *) rinfo->clause;
		if (TesseraVecDescribe(clause, rel->relid, relation) != NIL)
		{
			est->nvec++;
			est->vec_sel *= clause_selectivity(root, (Node *) rinfo, 0, JOIN_INNER, NULL);
		}
		else
			est->other_quals = lappend(est->other_quals, rinfo);
	}

	if (relation->rd_rel->relkind != RELKIND_FOREIGN_TABLE)
		est->read_frac = TesseraReadFraction(root, rel, relation, rel->baserestrictinfo, 0);
	else if (desc->natts > 0)
	{
		/* a file read column by column: the share of its bytes the columns are */
		est->phys_pages = (BlockNumber) (est->phys_pages * (double) est->ncols / desc->natts);
	}
}

/*
 * The values extract(field FROM col) or date_part(field, col) takes: a
 * field with a fixed range by that range (months 12, hours 24...), a year
 * by the span of the column's histogram; at most the column's own
 * distinct values.  0 if key is no such expression or nothing is known.
 */
static double
time_field_values(PlannerInfo *root, Node *key, double rows)
{
	static const struct
	{
		const char *field;
		double		values;
	}			fixed[] = {{"month", 12}, {"quarter", 4}, {"day", 31}, {"dow", 7}, {"isodow", 7},
	{"hour", 24}, {"minute", 60}, {"doy", 366}, {"week", 53}};
	FuncExpr   *f = (FuncExpr *) key;
	char	   *name;
	Const	   *c;
	char	   *field;
	double		values = 0;
	VariableStatData vardata;
	AttStatsSlot sslot;

	if (!IsA(key, FuncExpr) || list_length(f->args) != 2)
		return 0;
	name = get_func_name(f->funcid);
	c = linitial(f->args);
	if (name == NULL || (strcmp(name, "extract") != 0 && strcmp(name, "date_part") != 0) ||
		!IsA(c, Const) || c->constisnull || c->consttype != TEXTOID ||
		(f->funcresulttype != NUMERICOID && f->funcresulttype != FLOAT8OID))
		return 0;
	field = text_to_cstring(DatumGetTextPP(c->constvalue));
	for (int i = 0; i < lengthof(fixed); i++)
		if (pg_strcasecmp(field, fixed[i].field) == 0)
			values = fixed[i].values;
	if (values == 0 && pg_strcasecmp(field, "year") == 0)
	{
		/* the years between the histogram's first and last values */
		examine_variable(root, lsecond(f->args), 0, &vardata);
		if (HeapTupleIsValid(vardata.statsTuple) &&
			get_attstatsslot(&sslot, vardata.statsTuple, STATISTIC_KIND_HISTOGRAM, InvalidOid,
							 ATTSTATSSLOT_VALUES))
		{
			if (sslot.nvalues >= 2)
			{
				Datum		lo = OidFunctionCall2Coll(f->funcid, f->inputcollid, c->constvalue,
													  sslot.values[0]);
				Datum		hi = OidFunctionCall2Coll(f->funcid, f->inputcollid, c->constvalue,
													  sslot.values[sslot.nvalues - 1]);

				if (f->funcresulttype == NUMERICOID)
				{
					lo = DirectFunctionCall1(numeric_float8, lo);
					hi = DirectFunctionCall1(numeric_float8, hi);
				}
				values = fabs(DatumGetFloat8(hi) - DatumGetFloat8(lo)) + 1;
			}
			free_attstatsslot(&sslot);
		}
		ReleaseVariableStats(vardata);
	}
	if (values == 0)
		return 0;
	return Min(values, estimate_num_groups(root, list_make1(key), rows, NULL, NULL));
}

/*
 * TesseraEstimateGroups
 *		The groups of keys over rows, as estimate_num_groups has them, but
 *		for time fields of a column (time_field_values): PostgreSQL takes
 *		extract(year FROM o_orderdate) to have o_orderdate's 2,406 values
 *		(TPC-H q09's 25 nations by 7 years: 60,150 groups expected, 175
 *		found), which costs a parallel aggregation's gathering of partial
 *		groups far above what it is.
 */
double
TesseraEstimateGroups(PlannerInfo *root, List *keys, double rows)
{
	List	   *rest = NIL;
	double		groups = 1;
	ListCell   *lc;

	foreach(lc, keys)
	{
		double		values = time_field_values(root, lfirst(lc), rows);

		if (values > 0)
			groups *= values;
		else
			rest = lappend(rest, lfirst(lc));
	}
	if (rest != NIL)
		groups *= estimate_num_groups(root, rest, rows, NULL, NULL);
	return clamp_row_est(Min(groups, rows));
}
