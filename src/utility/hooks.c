/*-------------------------------------------------------------------------
 *
 * hooks.c
 *	  Hooks into PostgreSQL: utility statements, object drops, executor
 *	  start.
 *
 * NOTES
 *	  ProcessUtility: tessera options are taken out of CREATE TABLE, CREATE
 *	  TABLE AS and ALTER TABLE SET/RESET before PostgreSQL validates the
 *	  statement, validated by options.c, and stored in pg_class.reloptions
 *	  afterwards -- on the relation the statement created (found through
 *	  object_access, never by name) or the one ALTER TABLE locked.  They
 *	  are rejected on tables that are not tessera tables, and removed (with
 *	  a notice) when ALTER TABLE ... SET ACCESS METHOD moves a tessera table
 *	  to another access method.  After a top-level VACUUM, more rounds of
 *	  giving space back run in transactions of their own
 *	  (maintenance/schedule.c).
 *
 *	  object_access (OAT_DROP): dropping a tessera table deletes its stripe
 *	  catalog rows in the same transaction and forgets buffered rows.
 *
 *	  ExecutorStart: a parallel plan's workers cannot see this backend's
 *	  buffered rows, and nothing may be written once parallel mode starts,
 *	  so buffered rows are written out first.
 *
 *	  Publications: a tessera table is decodable where tessera's resource
 *	  manager logs its rows (tableam/logical.c), which needs
 *	  shared_preload_libraries; without it, after every statement that can
 *	  put a table into a publication (CREATE/ALTER PUBLICATION, CREATE
 *	  TABLE, ALTER TABLE, ALTER ... SET SCHEMA) the tessera tables are
 *	  checked and the statement fails if one of them is published.
 *	  tessera's own catalog tables (tessera_internal) describe this server's
 *	  storage only: naming them or their schema in a publication fails, and
 *	  FOR ALL TABLES, which PostgreSQL cannot make leave them out, takes
 *	  them without their contents -- decoding skips their changes (they are
 *	  marked as rewrite targets) and the initial copy a subscriber's table
 *	  sync asks a walsender for is empty (copy_internal_table_empty).
 *
 *	  Every hook calls the previous one.
 *
 * IDENTIFICATION
 *	  src/utility/hooks.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/reloptions.h"
#include "access/sysattr.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/objectaccess.h"
#include "catalog/partition.h"
#include "catalog/pg_class.h"
#include "catalog/pg_database.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_publication.h"
#include "commands/defrem.h"
#include "commands/extension.h"
#include "commands/tablecmds.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "nodes/parsenodes.h"
#include "optimizer/optimizer.h"
#include "parser/parse_node.h"
#include "parser/parser.h"
#include "replication/walsender.h"
#include "tcop/utility.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "tessera/catalog.h"
#include "tessera/files.h"
#include "tessera/hooks.h"
#include "tessera/maintenance.h"
#include "tessera/options.h"
#include "tessera/shared_cache.h"
#include "tessera/slot.h"
#include "tessera/storage.h"
#include "tessera/tableam.h"
#include "tessera/tessera.h"
#include "tessera/writer.h"
#include "tessera/xlog.h"

static ProcessUtility_hook_type prev_ProcessUtility = NULL;
static object_access_hook_type prev_object_access = NULL;
static ExecutorStart_hook_type prev_ExecutorStart = NULL;

/* the table the running CREATE TABLE AS creates, whose options are pending */
static const RangeVar *pending_target = NULL;

/*
 * Relations created by the statement being processed, at this nesting level
 * of ProcessUtility (a CREATE TABLE runs its sequences and indexes as
 * nested statements, which collect their own).  Options of a CREATE TABLE
 * go only to a relation the statement created: with IF NOT EXISTS an
 * existing table, perhaps another role's, is left alone, and a same-named
 * table elsewhere on the search_path is never looked up.
 */
static List *created_relids = NIL;
static bool tracking_created = false;
/*
 * where that list lives: the statement's context (CREATE TABLE AS creates
 * its table inside the executor since 17, whose memory is gone by the time
 * the statement's options are stored)
 */
static MemoryContext created_cxt = NULL;

/* Is the relation just created (in the relcache, not yet visible) target's? */
static bool
created_as(Oid relid, const RangeVar *target)
{
	Relation	rel = RelationIdGetRelation(relid);
	bool		match = false;

	if (rel == NULL)
		return false;
	if ((rel->rd_rel->relkind == RELKIND_RELATION ||
		 rel->rd_rel->relkind == RELKIND_PARTITIONED_TABLE ||
		 rel->rd_rel->relkind == RELKIND_MATVIEW) &&
		strcmp(RelationGetRelationName(rel), target->relname) == 0 &&
		(target->schemaname == NULL ||
		 RelationGetNamespace(rel) == get_namespace_oid(target->schemaname, true)))
		match = true;
	RelationClose(rel);
	return match;
}

/* The relation named target that the statement created, or InvalidOid. */
static Oid
created_relation(List *created, const RangeVar *target)
{
	ListCell   *lc;

	foreach(lc, created)
	{
		if (created_as(lfirst_oid(lc), target))
			return lfirst_oid(lc);
	}
	return InvalidOid;
}

typedef struct AlterOptionOp
{
	bool		reset;
	List	   *defs;
} AlterOptionOp;

static Oid
relation_am(Oid relid)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Oid			am = InvalidOid;

	if (HeapTupleIsValid(tup))
	{
		am = ((Form_pg_class) GETSTRUCT(tup))->relam;
		ReleaseSysCache(tup);
	}
	return am;
}

static void
reject_non_tessera(Oid relid)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("tessera storage parameters are only valid for tessera tables"),
			 errdetail("Table \"%s\" does not use the tessera access method.",
					   get_rel_name(relid)),
			 errhint("Create the table with USING tessera, or leave out the tessera_* parameters.")));
}

/*
 * The publication that a change to table relid (a permanent tessera table)
 * would be published through, or InvalidOid.
 */
static Oid
publication_of(Oid relid, Oid relnamespace, List *all_tables_pubs)
{
	List	   *pubs;
	List	   *ancestors;
	ListCell   *lc;

	if (all_tables_pubs != NIL)
		return linitial_oid(all_tables_pubs);
	pubs = list_concat(GetRelationPublications(relid), GetSchemaPublications(relnamespace));
	if (pubs != NIL)
		return linitial_oid(pubs);

	/* a partition is published through a published ancestor */
	ancestors = get_partition_ancestors(relid);
	foreach(lc, ancestors)
	{
		Oid			ancestor = lfirst_oid(lc);

		pubs = list_concat(GetRelationPublications(ancestor),
						   GetSchemaPublications(get_rel_namespace(ancestor)));
		if (pubs != NIL)
			return linitial_oid(pubs);
	}
	return InvalidOid;
}

/*
 * Raise feature_not_supported if any tessera table is in a publication.
 * Cheap when there are no publications, which is the common case.
 */
static void
check_no_published_tessera_tables(void)
{
	Relation	pubrel;
	SysScanDesc pubscan;
	bool		any_pub;
	Relation	classrel;
	TableScanDesc scan;
	HeapTuple	tup;
	List	   *all_tables_pubs;
	Oid			internal_nsp;

	CommandCounterIncrement();
	pubrel = table_open(PublicationRelationId, AccessShareLock);
	pubscan = systable_beginscan(pubrel, InvalidOid, false, NULL, 0, NULL);
	any_pub = HeapTupleIsValid(systable_getnext(pubscan));
	systable_endscan(pubscan);
	table_close(pubrel, AccessShareLock);
	if (!any_pub)
		return;

	all_tables_pubs = TesseraRmgrRegistered() ? NIL : GetAllTablesPublications();
	internal_nsp = get_namespace_oid(TESSERA_INTERNAL_SCHEMA, true);
	classrel = table_open(RelationRelationId, AccessShareLock);
	scan = table_beginscan_catalog(classrel, 0, NULL);
	while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		Form_pg_class form = (Form_pg_class) GETSTRUCT(tup);
		Oid			pubid;

		if (form->relkind != RELKIND_RELATION ||
			form->relpersistence != RELPERSISTENCE_PERMANENT)
			continue;

		/*
		 * tessera's own catalog (heap tables) describes this server's
		 * storage: applied on a subscriber its rows would name that
		 * server's storage ids, and they carry small writes' rows
		 * compressed.  Named, or its schema named, it is refused; FOR ALL
		 * TABLES takes it, empty (see above), where the resource manager
		 * is loaded, and is refused otherwise.
		 */
		if (OidIsValid(internal_nsp) && form->relnamespace == internal_nsp)
		{
			pubid = publication_of(form->oid, form->relnamespace, all_tables_pubs);
			if (OidIsValid(pubid))
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("tessera's internal table \"%s.%s\" cannot be published",
								TESSERA_INTERNAL_SCHEMA, NameStr(form->relname)),
						 errdetail("Publication \"%s\" would include it, and it describes this server's storage only.",
								   get_publication_name(pubid, false)),
						 all_tables_pubs != NIL ?
						 errhint("Publish tables by name or schema (FOR TABLE, FOR TABLES IN SCHEMA) instead of FOR ALL TABLES in a database with tessera.") :
						 errhint("Leave the schema \"%s\" out of the publication.", TESSERA_INTERNAL_SCHEMA)));
			continue;
		}
		if (!IsTesseraAmOid(form->relam) || TesseraRmgrRegistered())
			continue;
		pubid = publication_of(form->oid, form->relnamespace, all_tables_pubs);
		if (OidIsValid(pubid))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("tessera table \"%s\" cannot be published",
							NameStr(form->relname)),
					 errdetail("Publication \"%s\" would include it, and tessera logs rows for logical decoding only when it is loaded through shared_preload_libraries.",
							   get_publication_name(pubid, false)),
					 errhint("Add tessera to shared_preload_libraries and restart the server, or leave the table out of the publication.")));
	}
	table_endscan(scan);
	table_close(classrel, AccessShareLock);
}

/* What a utility statement does with tessera options, collected before it runs. */
typedef struct UtilityOptions
{
	RangeVar   *target;			/* the table they are for, or NULL */
	bool		is_create;		/* CREATE TABLE [AS] of target */
	Datum		create_options; /* is_create: the new table's options */
	Oid			relid;			/* ALTER TABLE: the table, locked */
	List	   *alter_ops;		/* ALTER TABLE: AlterOptionOps, in order */
	bool		am_changed;		/* ALTER TABLE ... SET ACCESS METHOD */
	bool		stripped;		/* our options taken out of pg_class meanwhile */
	Datum		saved_options;	/* stripped: what they were */
} UtilityOptions;

/* CREATE TABLE [AS]: take the tessera options out of the statement. */
static void
take_create_options(Node *parsetree, UtilityOptions *uo)
{
	List	  **options;
	RangeVar   *target;
	List	   *defs;

	if (IsA(parsetree, CreateStmt))
	{
		options = &((CreateStmt *) parsetree)->options;
		target = ((CreateStmt *) parsetree)->relation;
	}
	else
	{
		options = &((CreateTableAsStmt *) parsetree)->into->options;
		target = ((CreateTableAsStmt *) parsetree)->into->rel;
	}
	defs = TesseraExtractOptions(options);
	if (defs == NIL)
		return;
	uo->create_options = TesseraApplyOptions((Datum) 0, defs, false);
	uo->target = target;
	uo->is_create = true;
	/* CREATE TABLE AS writes rows before we can store the options */
	if (IsA(parsetree, CreateTableAsStmt))
	{
		TesseraBeginPendingOptions(uo->create_options);
		pending_target = target;
	}
}

/* ALTER TABLE: take the tessera options out of SET/RESET, validated. */
static void
take_alter_options(AlterTableStmt *stmt, UtilityOptions *uo)
{
	List	   *cmds = NIL;
	bool		other_reloptions = false;
	LOCKMODE	lockmode = AlterTableGetLockLevel(stmt->cmds);
	ListCell   *lc;

	foreach(lc, stmt->cmds)
	{
		AlterTableCmd *cmd = lfirst_node(AlterTableCmd, lc);

		if (cmd->subtype == AT_SetRelOptions || cmd->subtype == AT_ResetRelOptions)
		{
			List	   *defs = (List *) cmd->def;
			List	   *ours = TesseraExtractOptions(&defs);

			if (ours != NIL)
			{
				AlterOptionOp *op = palloc(sizeof(AlterOptionOp));

				op->reset = (cmd->subtype == AT_ResetRelOptions);
				op->defs = ours;
				/* validate now, before anything changes */
				(void) TesseraApplyOptions((Datum) 0, ours, op->reset);
				uo->alter_ops = lappend(uo->alter_ops, op);
			}
			cmd->def = (Node *) defs;
			if (defs == NIL)
				continue;
			other_reloptions = true;
		}
		else if (cmd->subtype == AT_SetAccessMethod)
			uo->am_changed = true;
		cmds = lappend(cmds, cmd);
	}

	/*
	 * An ALTER TABLE left with no command still goes down the chain: other
	 * extensions' hooks see it, and PostgreSQL checks ownership and in-use
	 * cursors as for any ALTER TABLE.
	 */
	stmt->cmds = cmds;

	if (uo->alter_ops != NIL || uo->am_changed || other_reloptions)
	{
		/*
		 * The table, locked as PostgreSQL will lock it for the whole
		 * statement (no lock upgrade later) and owned by the current role;
		 * our options go to this relation and no other.
		 */
		uo->target = stmt->relation;
		uo->relid = RangeVarGetRelidExtended(stmt->relation, lockmode,
											 stmt->missing_ok ? RVR_MISSING_OK : 0,
											 RangeVarCallbackOwnsRelation, NULL);
	}

	/*
	 * PostgreSQL re-validates the stored reloptions when it changes other
	 * ones, and would reject ours: take them out meanwhile.
	 */
	if (other_reloptions && OidIsValid(uo->relid))
	{
		Datum		cur = TesseraGetRelOptions(uo->relid);

		if (cur != (Datum) 0 && TesseraRelOptionsPresent(cur))
		{
			uo->saved_options = TesseraOnlyRelOptions(cur);
			TesseraSetRelOptions(uo->relid, (Datum) 0);
			uo->stripped = true;
		}
	}
}

/* After the statement: store the options in pg_class. */
static void
store_options(UtilityOptions *uo, List *created)
{
	Oid			relid = uo->relid;
	bool		is_tessera;
	Datum		cur;
	ListCell   *lc;

	CommandCounterIncrement();
	if (uo->is_create)
	{
		/* IF NOT EXISTS found the table there: it keeps what it has */
		relid = created_relation(created, uo->target);
		if (!OidIsValid(relid))
			return;
		if (!IsTesseraAmOid(relation_am(relid)))
			reject_non_tessera(relid);
		TesseraSetRelOptions(relid, uo->create_options);
		return;
	}
	if (!OidIsValid(relid))
		return;

	is_tessera = IsTesseraAmOid(relation_am(relid));
	if (uo->stripped)
		cur = uo->saved_options;
	else
	{
		cur = TesseraGetRelOptions(relid);
		cur = cur == (Datum) 0 ? (Datum) 0 : TesseraOnlyRelOptions(cur);
	}
	if (uo->alter_ops != NIL && !is_tessera)
		reject_non_tessera(relid);
	foreach(lc, uo->alter_ops)
	{
		AlterOptionOp *op = lfirst(lc);

		cur = TesseraApplyOptions(cur, op->defs, op->reset);
	}
	if (uo->am_changed && !is_tessera && cur != (Datum) 0)
	{
		ereport(NOTICE,
				(errmsg("tessera storage parameters of table \"%s\" were removed",
						get_rel_name(relid))));
		cur = (Datum) 0;
		uo->stripped = true;
	}
	if (uo->alter_ops != NIL || uo->stripped)
		TesseraSetRelOptions(relid, cur);
}

/* After a top-level VACUUM: give space back in transactions of its own. */
static void
reclaim_after_vacuum(VacuumStmt *stmt)
{
	int			elevel = DEBUG2;
	ListCell   *lc;

	foreach(lc, stmt->options)
	{
		DefElem    *opt = lfirst_node(DefElem, lc);

		if (strcmp(opt->defname, "verbose") == 0 && defGetBoolean(opt))
			elevel = INFO;
	}
	TesseraReclaimAfterVacuum(elevel);
}

/*
 * A subscriber's table sync asks a walsender to COPY each table of its
 * publications to it, tessera's catalog tables too where the publication
 * is FOR ALL TABLES: those it gets empty (same columns, no rows).  Returns
 * the statement to run in place of pstmt.
 */
static PlannedStmt *
copy_internal_table_empty(PlannedStmt *pstmt)
{
	CopyStmt   *stmt = (CopyStmt *) pstmt->utilityStmt;
	Oid			internal_nsp;
	Oid			relid;
	StringInfoData sql;
	List	   *raw;

	if (stmt->is_from || stmt->relation == NULL || stmt->filename != NULL)
		return pstmt;
	internal_nsp = get_namespace_oid(TESSERA_INTERNAL_SCHEMA, true);
	if (!OidIsValid(internal_nsp))
		return pstmt;
	relid = RangeVarGetRelid(stmt->relation, AccessShareLock, true);
	if (!OidIsValid(relid) || get_rel_namespace(relid) != internal_nsp)
		return pstmt;

	initStringInfo(&sql);
	TesseraCopySelect(&sql, stmt->attlist, relid, false);
	appendStringInfoString(&sql, " LIMIT 0");
	raw = raw_parser(sql.data, RAW_PARSE_DEFAULT);

	pstmt = copyObject(pstmt);
	stmt = (CopyStmt *) pstmt->utilityStmt;
	stmt->query = linitial_node(RawStmt, raw)->stmt;
	stmt->relation = NULL;
	stmt->attlist = NIL;
	return pstmt;
}

static void
tessera_ProcessUtility(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree,
					   ProcessUtilityContext context, ParamListInfo params,
					   QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc)
{
	Node	   *parsetree = pstmt->utilityStmt;
	UtilityOptions uo;
	List	   *outer_created = created_relids;
	bool		outer_tracking = tracking_created;
	MemoryContext outer_cxt = created_cxt;
	List	   *created = NIL;

	if (IsA(parsetree, CopyStmt) && TesseraCopyFormatOf((CopyStmt *) parsetree) != TESSERA_COPY_OTHER)
	{
		ParseState *pstate = make_parsestate(NULL);
		uint64		processed;

		pstate->p_sourcetext = queryString;
		pstate->p_queryEnv = queryEnv;
		TesseraParquetCopy(pstate, (CopyStmt *) parsetree, pstmt->stmt_location,
						   pstmt->stmt_len, &processed);
		free_parsestate(pstate);
		if (qc)
			SetQueryCompletion(qc, CMDTAG_COPY, processed);
		return;
	}

	if (IsA(parsetree, CopyStmt) && ((CopyStmt *) parsetree)->is_from && !am_walsender)
	{
		ParseState *pstate = make_parsestate(NULL);
		uint64		processed;
		bool		done;

		pstate->p_sourcetext = queryString;
		pstate->p_queryEnv = queryEnv;
		done = TesseraTextCopyFrom(pstate, (CopyStmt *) parsetree, &processed);
		free_parsestate(pstate);
		if (done)
		{
			if (qc)
				SetQueryCompletion(qc, CMDTAG_COPY, processed);
			return;
		}
	}

	memset(&uo, 0, sizeof(uo));
	if (IsA(parsetree, CreateStmt) || IsA(parsetree, CreateTableAsStmt) ||
		IsA(parsetree, AlterTableStmt))
	{
		/* we edit the option lists: work on a copy if we may not scribble */
		if (readOnlyTree)
		{
			pstmt = copyObject(pstmt);
			parsetree = pstmt->utilityStmt;
			readOnlyTree = false;
		}
	}

	if (IsA(parsetree, CreateStmt) || IsA(parsetree, CreateTableAsStmt))
		take_create_options(parsetree, &uo);
	else if (IsA(parsetree, AlterTableStmt) &&
			 (((AlterTableStmt *) parsetree)->objtype == OBJECT_TABLE ||
			  ((AlterTableStmt *) parsetree)->objtype == OBJECT_MATVIEW))
		take_alter_options((AlterTableStmt *) parsetree, &uo);

	if (IsA(parsetree, VacuumStmt))
		TesseraForgetVacuumed();
	if (am_walsender && IsA(parsetree, CopyStmt))
	{
		PlannedStmt *replaced = copy_internal_table_empty(pstmt);

		if (replaced != pstmt)
		{
			pstmt = replaced;
			parsetree = pstmt->utilityStmt;
			readOnlyTree = false;
		}
	}

	created_relids = NIL;
	tracking_created = uo.is_create;
	created_cxt = CurrentMemoryContext;
	PG_TRY();
	{
		if (prev_ProcessUtility)
			prev_ProcessUtility(pstmt, queryString, readOnlyTree, context, params,
								queryEnv, dest, qc);
		else
			standard_ProcessUtility(pstmt, queryString, readOnlyTree, context, params,
									queryEnv, dest, qc);
	}
	PG_FINALLY();
	{
		created = created_relids;
		created_relids = outer_created;
		tracking_created = outer_tracking;
		created_cxt = outer_cxt;
		if (uo.is_create)
		{
			TesseraEndPendingOptions();
			pending_target = NULL;
		}
	}
	PG_END_TRY();

	if (!IsTransactionState())
		return;
	if (IsA(parsetree, VacuumStmt) && ((VacuumStmt *) parsetree)->is_vacuumcmd &&
		context == PROCESS_UTILITY_TOPLEVEL && !IsTransactionBlock())
	{
		reclaim_after_vacuum((VacuumStmt *) parsetree);
		return;
	}
	if (IsA(parsetree, CreatePublicationStmt) || IsA(parsetree, AlterPublicationStmt) ||
		IsA(parsetree, CreateStmt) || IsA(parsetree, CreateTableAsStmt) ||
		IsA(parsetree, AlterTableStmt) || IsA(parsetree, AlterObjectSchemaStmt))
		check_no_published_tessera_tables();
	if (uo.target != NULL)
		store_options(&uo, created);
	list_free(created);
}

static void
tessera_object_access(ObjectAccessType access, Oid classId, Oid objectId, int subId, void *arg)
{
	if (prev_object_access)
		prev_object_access(access, classId, objectId, subId, arg);

	if (access == OAT_POST_CREATE && classId == RelationRelationId && subId == 0 &&
		tracking_created)
	{
		MemoryContext old = MemoryContextSwitchTo(created_cxt);

		created_relids = lappend_oid(created_relids, objectId);
		MemoryContextSwitchTo(old);
		if (TesseraPendingOptionsUnbound() && created_as(objectId, pending_target))
			TesseraBindPendingOptions(objectId);
	}

	if (access == OAT_DROP && classId == RelationRelationId && subId == 0)
	{
		Relation	rel = RelationIdGetRelation(objectId);

		if (rel != NULL)
		{
			if (IsTesseraRelation(rel))
			{
				uint64		storage_id;

				TesseraDiscardWrites(&TesseraRelLocator(rel));
				if (TesseraReadStorageIdForDrop(rel, &storage_id))
				{
					TesseraDeleteStripes(storage_id);
					TesseraSharedCacheForget(MyDatabaseId, storage_id);
				}
			}
			RelationClose(rel);
		}
	}

	/*
	 * The shared cache's keys hold storage ids, which a new CREATE EXTENSION
	 * counts from 1 again, and a database's OID may come back one day.
	 */
	if (access == OAT_DROP && subId == 0 &&
		((classId == ExtensionRelationId && objectId == get_extension_oid("tessera", true)) ||
		 classId == DatabaseRelationId))
		TesseraSharedCacheForget(classId == DatabaseRelationId ? objectId : MyDatabaseId, 0);
}

/* Is tlist the plain list of a relation's columns (a physical tlist)? */
static bool
is_physical_tlist(List *tlist, Index scanrelid, int natts)
{
	ListCell   *lc;
	int			i = 0;

	if (list_length(tlist) != natts)
		return false;
	foreach(lc, tlist)
	{
		Var		   *var = (Var *) lfirst_node(TargetEntry, lc)->expr;

		i++;
		if (!IsA(var, Var) || var->varno != (int) scanrelid || var->varattno != i)
			return false;
	}
	return true;
}

/*
 * The columns of child's output that its parent reads, if the parent is a
 * join, into *cols as pull_varattnos numbers them; false if it is not.  A
 * join always projects: its target list, quals, join quals, merge and hash
 * clauses and, for its outer input, a nested loop's parameters are all
 * that reads its inputs' slots, naming their columns by number (INNER_VAR
 * or OUTER_VAR Vars).
 */
static bool
join_reads_child(PlanState *parent, PlanState *child, Bitmapset **cols)
{
	Plan	   *plan;
	List	   *exprs;
	int			side;

	if (parent == NULL)
		return false;
	if (innerPlanState(parent) == child)
		side = INNER_VAR;
	else if (outerPlanState(parent) == child)
		side = OUTER_VAR;
	else
		return false;			/* (a subplan's or an Append's child) */
	plan = parent->plan;
	exprs = list_make2(plan->targetlist, plan->qual);
	switch (nodeTag(parent))
	{
		case T_NestLoopState:
			if (side == OUTER_VAR)
			{
				ListCell   *lc;

				foreach(lc, ((NestLoop *) plan)->nestParams)
					exprs = lappend(exprs, lfirst_node(NestLoopParam, lc)->paramval);
			}
			break;
		case T_MergeJoinState:
			exprs = lappend(exprs, ((MergeJoin *) plan)->mergeclauses);
			break;
		case T_HashJoinState:
			exprs = lappend(exprs, ((HashJoin *) plan)->hashclauses);
			break;
		default:
			return false;
	}
	exprs = lappend(exprs, ((Join *) plan)->joinqual);
	pull_varattnos((Node *) exprs, (Index) side, cols);
	return true;
}

/*
 * The columns whoever reads scan node ss's slot reads, or NULL for all (or
 * unknown): what the node's own quals and target list use, and where it
 * does not project, what the query selects from its relation (the columns
 * checked for SELECT privilege: a physical target list lists every column
 * but is read only for those selected); nothing if a whole row is used.
 */
static bool *
scan_needed_columns(ScanState *ss, List *quals, PlanState *parent)
{
	Scan	   *plan = (Scan *) ss->ps.plan;
	EState	   *estate = ss->ps.state;
	Relation	rel = ss->ss_currentRelation;
	int			natts = RelationGetDescr(rel)->natts;
	Bitmapset  *cols = NULL;
	bool	   *needed;
	int			k = -1;

#if PG_VERSION_NUM >= 180000
	/*
	 * A virtual generated column is an expression of other columns that
	 * the planner puts in its place without marking those selected: every
	 * column is read.
	 */
	if (RelationGetDescr(rel)->constr != NULL &&
		RelationGetDescr(rel)->constr->has_generated_virtual)
		return NULL;
#endif

	/*
	 * A node that projects hands its consumers the projection, never the
	 * scan slot: what its quals and target list use is all that is read.
	 * One that does not hands on the scan slot: under a join (the inner
	 * side of EXISTS (SELECT * ...), which selects every column while
	 * TPC-H q21's probes read the three its filter compares) the join's
	 * expressions read it, by the relation's column numbers (its target
	 * list is physical); elsewhere at most what the query selects is read.
	 */
	if (ss->ps.ps_ProjInfo == NULL && !join_reads_child(parent, &ss->ps, &cols))
	{
		cols = TesseraRteSelectedCols(estate, exec_rt_fetch(plan->scanrelid, estate));
		if (bms_is_empty(cols))
			return NULL;
		cols = bms_copy(cols);
	}
	pull_varattnos((Node *) quals, plan->scanrelid, &cols);
	pull_varattnos((Node *) plan->plan.qual, plan->scanrelid, &cols);
	if (ss->ps.ps_ProjInfo != NULL ||
		!is_physical_tlist(plan->plan.targetlist, plan->scanrelid, natts))
		pull_varattnos((Node *) plan->plan.targetlist, plan->scanrelid, &cols);
	if (bms_is_member(0 - FirstLowInvalidHeapAttributeNumber, cols))
		return NULL;			/* a whole row */
	needed = MemoryContextAllocZero(estate->es_query_cxt, sizeof(bool) * Max(natts, 1));
	while ((k = bms_next_member(cols, k)) >= 0)
	{
		int			attno = k + FirstLowInvalidHeapAttributeNumber;

		if (attno > 0 && attno <= natts)
			needed[attno - 1] = true;
	}
	return needed;
}

/*
 * Tell the scan slots of index, bitmap and TID scans of tessera tables
 * which columns their rows will be read for: a fetch decodes a row's
 * columns one by one, and a slot is deformed in column order, so a probe
 * needing column 10 would decode the nine before it.  Slots other code
 * fills (EvalPlanQual, triggers, constraint checks, RETURNING) keep all.
 */
static bool
mark_needed_columns(PlanState *ps, void *context)
{
	ScanState  *ss = NULL;
	List	   *quals = NIL;

	if (ps == NULL)
		return false;
	switch (nodeTag(ps))
	{
		case T_IndexScanState:
			ss = (ScanState *) ps;
			quals = list_concat_copy(((IndexScan *) ps->plan)->indexqualorig,
									 ((IndexScan *) ps->plan)->indexorderbyorig);
			break;
		case T_BitmapHeapScanState:
			ss = (ScanState *) ps;
			quals = ((BitmapHeapScan *) ps->plan)->bitmapqualorig;
			break;
		case T_TidScanState:
			ss = (ScanState *) ps;
			quals = ((TidScan *) ps->plan)->tidquals;
			break;
		case T_TidRangeScanState:
			ss = (ScanState *) ps;
			quals = ((TidRangeScan *) ps->plan)->tidrangequals;
			break;
		default:
			break;
	}
	if (ss != NULL && ss->ss_currentRelation != NULL && ss->ss_ScanTupleSlot != NULL &&
		ss->ss_ScanTupleSlot->tts_ops == &TTSOpsTessera &&
		IsTesseraRelation(ss->ss_currentRelation))
		TesseraSlotSetNeeded(ss->ss_ScanTupleSlot,
							 scan_needed_columns(ss, quals, (PlanState *) context));
	/* each child learns who its parent is */
	return planstate_tree_walker(ps, mark_needed_columns, ps);
}

static void
tessera_ExecutorStart(QueryDesc *queryDesc, int eflags)
{
	if (queryDesc->plannedstmt->parallelModeNeeded && TesseraHavePendingWrites())
		TesseraFlushAll();

	if (prev_ExecutorStart)
		prev_ExecutorStart(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);

	if (!(eflags & EXEC_FLAG_EXPLAIN_ONLY) && queryDesc->planstate != NULL)
		mark_needed_columns(queryDesc->planstate, NULL);
}

void
TesseraInstallHooks(void)
{
	prev_ProcessUtility = ProcessUtility_hook;
	ProcessUtility_hook = tessera_ProcessUtility;
	prev_object_access = object_access_hook;
	object_access_hook = tessera_object_access;
	prev_ExecutorStart = ExecutorStart_hook;
	ExecutorStart_hook = tessera_ExecutorStart;
}
