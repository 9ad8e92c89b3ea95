/*-------------------------------------------------------------------------
 *
 * hook_witness.c
 *	  A test module standing in for another extension in the
 *	  ProcessUtility hook chain: it reports, as a NOTICE, each ALTER TABLE
 *	  and CREATE TABLE it is given, with its commands and storage
 *	  parameters, then passes the statement on.  With
 *	  shared_preload_libraries = 'hook_witness, tessera' tessera's hook runs
 *	  first and must hand every statement on to this one.
 *
 * IDENTIFICATION
 *	  test/modules/hook_witness/hook_witness.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "lib/stringinfo.h"
#include "nodes/parsenodes.h"
#include "tcop/utility.h"
#include "utils/guc.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

static ProcessUtility_hook_type prev_ProcessUtility = NULL;
static bool witness_enabled = false;

static void
append_options(StringInfo buf, List *defs)
{
	ListCell   *lc;

	foreach(lc, defs)
	{
		DefElem    *def = lfirst_node(DefElem, lc);

		appendStringInfo(buf, " %s", def->defname);
	}
}

static void
witness_ProcessUtility(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree,
					   ProcessUtilityContext context, ParamListInfo params,
					   QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc)
{
	Node	   *parsetree = pstmt->utilityStmt;

	if (witness_enabled && IsA(parsetree, AlterTableStmt))
	{
		AlterTableStmt *stmt = (AlterTableStmt *) parsetree;
		StringInfoData buf;
		ListCell   *lc;

		initStringInfo(&buf);
		appendStringInfo(&buf, "hook_witness: ALTER TABLE %s, %d command(s)",
						 stmt->relation->relname, list_length(stmt->cmds));
		foreach(lc, stmt->cmds)
		{
			AlterTableCmd *cmd = lfirst_node(AlterTableCmd, lc);

			if (cmd->subtype == AT_SetRelOptions || cmd->subtype == AT_ResetRelOptions)
			{
				appendStringInfoString(&buf, cmd->subtype == AT_SetRelOptions ? "; SET" : "; RESET");
				append_options(&buf, (List *) cmd->def);
			}
		}
		ereport(NOTICE, (errmsg_internal("%s", buf.data)));
	}
	else if (witness_enabled && IsA(parsetree, CreateStmt))
	{
		CreateStmt *stmt = (CreateStmt *) parsetree;
		StringInfoData buf;

		initStringInfo(&buf);
		appendStringInfo(&buf, "hook_witness: CREATE TABLE %s; WITH", stmt->relation->relname);
		append_options(&buf, stmt->options);
		ereport(NOTICE, (errmsg_internal("%s", buf.data)));
	}

	if (prev_ProcessUtility)
		prev_ProcessUtility(pstmt, queryString, readOnlyTree, context, params,
							queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context, params,
								queryEnv, dest, qc);
}

void
_PG_init(void)
{
	DefineCustomBoolVariable("hook_witness.enabled",
							 "Report utility statements seen by hook_witness.",
							 NULL, &witness_enabled, false, PGC_USERSET, 0,
							 NULL, NULL, NULL);
	MarkGUCPrefixReserved("hook_witness");
	prev_ProcessUtility = ProcessUtility_hook;
	ProcessUtility_hook = witness_ProcessUtility;
}
