/*-------------------------------------------------------------------------
 *
 * am.c
 *	  Which relations and access methods are tessera's.
 *
 * NOTES
 *	  Every layer asks whether a relation is a tessera table: the planner
 *	  before offering its paths, maintenance before compacting a table a
 *	  worker was handed, the hooks before taking options.  The answer is the
 *	  relation's table AM routine, which the handler registers here when the
 *	  module loads (before any relation can be opened with it), so this
 *	  layer needs nothing from the one that defines the routine.
 *
 * IDENTIFICATION
 *	  src/catalog/am.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_am.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "tessera/catalog.h"
#include "tessera/tessera.h"

static const TableAmRoutine *tessera_routine = NULL;

/* _PG_init: the routine tessera_tableam_handler returns. */
void
TesseraSetAmRoutine(const TableAmRoutine *routine)
{
	tessera_routine = routine;
}

bool
IsTesseraRelation(Relation rel)
{
	Assert(tessera_routine != NULL);
	return rel->rd_tableam == tessera_routine;
}

/* Is amoid the tessera access method (of this database)? */
bool
IsTesseraAmOid(Oid amoid)
{
	HeapTuple	tup;
	bool		result = false;

	if (!OidIsValid(amoid))
		return false;
	tup = SearchSysCache1(AMOID, ObjectIdGetDatum(amoid));
	if (HeapTupleIsValid(tup))
	{
		Form_pg_am	am = (Form_pg_am) GETSTRUCT(tup);

		result = am->amtype == AMTYPE_TABLE &&
			strcmp(NameStr(am->amname), TESSERA_AM_NAME) == 0;
		ReleaseSysCache(tup);
	}
	return result;
}
