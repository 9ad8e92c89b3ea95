/*-------------------------------------------------------------------------
 *
 * classify.c
 *	  What TesseraScan and TesseraAgg can do with a qual, an aggregate or a
 *	  group key: the one classifier of both nodes, and the descriptions of
 *	  its verdicts that the plan carries to the executor (plan.h).
 *
 * NOTES
 *	  - row-group filters: `col op expr`, `col op ANY/ALL (array)`,
 *		`col IS [NOT] NULL`, and AND/OR trees of them, where op is in the
 *		column type's default btree family (the order the chunk min/max
 *		were computed in; same collation for collatable types) and expr uses
 *		no column of this table and nothing volatile.  A row group whose
 *		summary proves the filter false for every row is never read; a
 *		summary covers every row the row group stores, so skipping is exact.
 *	  - vector quals: top-level `col op expr` on integers, dates,
 *		timestamps, floats and numerics (and `date op timestamp`, and two
 *		columns of one integer-like type), with op a btree comparison or
 *		`<>`; and `col op expr` on text, varchar and char(n) with op one of
 *		=, <>, <, <=, >, >=, LIKE, NOT LIKE, ILIKE, NOT ILIKE (operators
 *		that raise no error on any value), and `col IN / NOT IN (list)` of
 *		integer-like and string columns, evaluated over decoded vectors.
 *	  - aggregates: count(*), count, sum/avg of integers, numerics, floats
 *		and intervals, sum/avg of numeric +, -, * over columns and
 *		constants, min/max of any type with a btree order (strings in
 *		deterministic collations), with FILTERs of vector quals; and
 *		count(DISTINCT col) of a column TesseraAgg can group by.
 *	  - group keys: integer-like columns, and text, varchar and char(n) in
 *		deterministic collations.
 *
 * IDENTIFICATION
 *	  src/planner/classify.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/nbtree.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/typcache.h"

#include "tessera/encoding.h"
#include "tessera/plan.h"
#include "planner.h"

/* A comparison's column: Var of the scanned relation, maybe relabeled. */
Var *
TesseraScanVar(Node *node, Index relid)
{
	while (node && IsA(node, RelabelType))
		node = (Node *) ((RelabelType *) node)->arg;
	if (node && IsA(node, Var) && ((Var *) node)->varno == relid &&
		((Var *) node)->varlevelsup == 0 && ((Var *) node)->varattno > 0)
		return (Var *) node;
	return NULL;
}

/* Can expr be evaluated once per scan, before any row is read? */
static bool
scan_constant(Node *expr, Index relid)
{
	return !bms_is_member(relid, pull_varnos(NULL, expr)) &&
		!contain_volatile_functions(expr) && !contain_subplans(expr);
}

/*
 * The btree family that orders a column's chunk min/max: the default one
 * of its base type.
 */
static Oid
column_btree_family(Oid typid)
{
	TypeCacheEntry *tc = lookup_type_cache(getBaseType(typid), TYPECACHE_BTREE_OPFAMILY);

	return tc->btree_opf;
}

/*
 * Is opno (with the column on the left) a comparison that chunk min/max
 * can decide?  Returns the strategy and the cross-type ORDER proc.
 */
static bool
skip_operator(Oid opno, Var *var, Oid inputcollid, Relation rel, int *strategy,
			  Oid *orderproc)
{
	Oid			opf = column_btree_family(var->vartype);
	Oid			lefttype,
				righttype;
	Form_pg_attribute attr;

	if (!OidIsValid(opf) || !op_in_opfamily(opno, opf))
		return false;
	get_op_opfamily_properties(opno, opf, false, strategy, &lefttype, &righttype);
	if (*strategy < BTLessStrategyNumber || *strategy > BTGreaterStrategyNumber)
		return false;
	*orderproc = get_opfamily_proc(opf, lefttype, righttype, BTORDER_PROC);
	if (!OidIsValid(*orderproc))
		return false;
	attr = TupleDescAttr(RelationGetDescr(rel), var->varattno - 1);
	if (attr->attisdropped)
		return false;
	/* min/max were computed in the column's collation */
	if (type_is_collatable(attr->atttypid) && inputcollid != attr->attcollation)
		return false;
	return true;
}

/*
 * Put a comparison in the form `col op value`: returns the column, the
 * operator to use and which argument holds the value, or NULL.
 */
static Var *
normalize_opexpr(OpExpr *op, Index relid, Oid *opno, int *value_arg)
{
	Var		   *var;

	if (list_length(op->args) != 2)
		return NULL;
	if ((var = TesseraScanVar(linitial(op->args), relid)) != NULL &&
		scan_constant(lsecond(op->args), relid))
	{
		*opno = op->opno;
		*value_arg = 1;
		return var;
	}
	if ((var = TesseraScanVar(lsecond(op->args), relid)) != NULL &&
		scan_constant(linitial(op->args), relid))
	{
		*opno = get_commutator(op->opno);
		*value_arg = 0;
		return OidIsValid(*opno) ? var : NULL;
	}
	return NULL;
}

static List *
skip_desc(SkipKind kind, int attidx, int strategy, Oid orderproc, Oid collation, bool use_or,
		  Oid elemtype, int value_arg)
{
	List	   *desc = list_make4(makeInteger(kind), makeInteger(attidx), makeInteger(strategy),
								  makeInteger((int) orderproc));

	desc = lappend(desc, makeInteger((int) collation));
	desc = lappend(desc, makeInteger(use_or));
	desc = lappend(desc, makeInteger((int) elemtype));
	return lappend(desc, makeInteger(value_arg));
}

/*
 * TesseraSkipDescribe
 *		The description of a qual chunk summaries can decide (a tree of
 *		supported parts), or NIL.
 */
List *
TesseraSkipDescribe(Node *node, Index relid, Relation rel)
{
	if (node == NULL)
		return NIL;
	if (IsA(node, OpExpr))
	{
		OpExpr	   *op = (OpExpr *) node;
		Oid			opno,
					proc;
		int			value_arg,
					strategy;
		Var		   *var = normalize_opexpr(op, relid, &opno, &value_arg);

		if (var == NULL || !skip_operator(opno, var, op->inputcollid, rel, &strategy, &proc))
			return NIL;
		return skip_desc(SKIP_CMP, var->varattno - 1, strategy, proc, op->inputcollid, false,
						 InvalidOid, value_arg);
	}
	if (IsA(node, ScalarArrayOpExpr))
	{
		ScalarArrayOpExpr *op = (ScalarArrayOpExpr *) node;
		Var		   *var;
		int			strategy;
		Oid			proc;

		if (list_length(op->args) != 2)
			return NIL;
		var = TesseraScanVar(linitial(op->args), relid);
		if (var == NULL || !scan_constant(lsecond(op->args), relid) ||
			!skip_operator(op->opno, var, op->inputcollid, rel, &strategy, &proc))
			return NIL;
		return skip_desc(SKIP_ARRAY, var->varattno - 1, strategy, proc, op->inputcollid,
						 op->useOr, get_element_type(exprType(lsecond(op->args))), 1);
	}
	if (IsA(node, NullTest))
	{
		NullTest   *nt = (NullTest *) node;
		Var		   *var = TesseraScanVar((Node *) nt->arg, relid);

		if (nt->argisrow || var == NULL)
			return NIL;
		return skip_desc(nt->nulltesttype == IS_NULL ? SKIP_ISNULL : SKIP_NOTNULL,
						 var->varattno - 1, 0, InvalidOid, InvalidOid, false, InvalidOid, -1);
	}
	if (IsA(node, BoolExpr))
	{
		BoolExpr   *b = (BoolExpr *) node;
		List	   *desc;
		ListCell   *lc;

		if (b->boolop == NOT_EXPR)
			return NIL;
		desc = skip_desc(b->boolop == AND_EXPR ? SKIP_AND : SKIP_OR, -1, 0, InvalidOid,
						 InvalidOid, false, InvalidOid, -1);
		foreach(lc, b->args)
		{
			List	   *child = TesseraSkipDescribe(lfirst(lc), relid, rel);

			if (child == NIL)
				return NIL;
			desc = lappend(desc, child);
		}
		return desc;
	}
	return NIL;
}

/*
 * TesseraDescribeVectorQuals
 *		For a node whose every qual is a vector qual (TesseraTopN), or
 *		whose other quals go to *rest (TesseraAgg's row quals): the quals
 *		that skip row groups and their descriptions, and every vector qual
 *		with its description.
 */
void
TesseraDescribeVectorQuals(List *quals, Index relid, Relation rel, List **skip,
						   List **skip_descs, List **vector, List **vector_descs, List **rest)
{
	ListCell   *lc;

	foreach(lc, quals)
	{
		Node	   *qual = lfirst(lc);
		List	   *sdesc = TesseraSkipDescribe(qual, relid, rel);
		List	   *vdesc = TesseraVecDescribe(qual, relid, rel);

		if (sdesc != NIL)
		{
			*skip = lappend(*skip, qual);
			*skip_descs = lappend(*skip_descs, sdesc);
		}
		if (vdesc == NIL && rest != NULL)
		{
			*rest = lappend(*rest, qual);
			continue;
		}
		if (vdesc == NIL)
			elog(ERROR, "tessera: qual no longer a vector qual at plan time");
		*vector = lappend(*vector, qual);
		*vector_descs = lappend(*vector_descs, vdesc);
	}
}

/* Do TesseraAgg's group keys and vector quals take values of this type as int64? */
bool
TesseraIntLikeType(Oid t)
{
	return t == INT2OID || t == INT4OID || t == INT8OID || t == DATEOID ||
		t == TIMESTAMPOID || t == TIMESTAMPTZOID;
}

static List *
vec_desc_call(VecKind kind, int strategy, int attidx, int attidx2, Oid valtype, int value_arg,
			  Oid funcid, Oid collation)
{
	List	   *desc = list_make5(makeInteger(kind), makeInteger(strategy), makeInteger(attidx),
									  makeInteger(attidx2), makeInteger((int) valtype));

	desc = lappend(desc, makeInteger(value_arg));
	desc = lappend(desc, makeInteger((int) funcid));
	return lappend(desc, makeInteger((int) collation));
}

static List *
vec_desc(VecKind kind, int strategy, int attidx, int attidx2, Oid valtype, int value_arg)
{
	return vec_desc_call(kind, strategy, attidx, attidx2, valtype, value_arg, InvalidOid,
						 InvalidOid);
}

/*
 * Is a LIKE pattern one whose matching never raises an error?  The only
 * error textlike can raise on a constant pattern is for an escape character
 * (backslash) at its end; such patterns are left to the ordinary qual.
 */
static bool
like_pattern_safe(Const *c)
{
	text	   *t;
	const char *p;
	int			len,
				trailing = 0;

	if (c->constisnull)
		return true;
	t = DatumGetTextPP(c->constvalue);
	p = VARDATA_ANY(t);
	len = VARSIZE_ANY_EXHDR(t);
	while (trailing < len && p[len - 1 - trailing] == '\\')
		trailing++;
	return trailing % 2 == 0;
}

/*
 * `string column op value` for text, varchar and char(n) columns: equality
 * and inequality, orderings and LIKE / NOT LIKE / ILIKE / NOT ILIKE with a
 * pattern value.  Only operators whose functions raise no error on any
 * value are taken (the vector filter may evaluate them on rows an earlier
 * qual rejected, and once per dictionary entry): LIKE only with a constant
 * pattern that cannot end in an escape, and never in a nondeterministic
 * collation, where PostgreSQL raises an error the ordinary qual must raise.
 */
static List *
string_vec_describe(OpExpr *op, Index relid, Relation rel)
{
	Var		   *var;
	Node	   *value;
	int			value_arg;
	Oid			coltype;
	bool		deterministic;
	VecStringOp sop;

	if ((var = TesseraScanVar(linitial(op->args), relid)) != NULL)
	{
		value_arg = 1;
		value = lsecond(op->args);
	}
	else if ((var = TesseraScanVar(lsecond(op->args), relid)) != NULL)
	{
		value_arg = 0;
		value = linitial(op->args);
	}
	else
		return NIL;
	coltype = getBaseType(var->vartype);
	if ((coltype != TEXTOID && coltype != VARCHAROID && coltype != BPCHAROID) ||
		!scan_constant(value, relid) ||
		TupleDescAttr(RelationGetDescr(rel), var->varattno - 1)->attisdropped ||
		!OidIsValid(op->inputcollid))
		return NIL;
	deterministic = get_collation_isdeterministic(op->inputcollid);
	switch (op->opfuncid)
	{
		case F_TEXTEQ:
		case F_TEXTNE:
			sop = !deterministic ? VSTR_CALL :
				op->opfuncid == F_TEXTEQ ? VSTR_EQ : VSTR_NE;
			break;
		case F_BPCHAREQ:
		case F_BPCHARNE:
		case F_TEXT_LT:
		case F_TEXT_LE:
		case F_TEXT_GT:
		case F_TEXT_GE:
		case F_BPCHARLT:
		case F_BPCHARLE:
		case F_BPCHARGT:
		case F_BPCHARGE:
			sop = VSTR_CALL;
			break;
		case F_TEXTLIKE:
		case F_TEXTNLIKE:
		case F_BPCHARLIKE:
		case F_BPCHARNLIKE:
		case F_TEXTICLIKE:
		case F_TEXTICNLIKE:
		case F_BPCHARICLIKE:
		case F_BPCHARICNLIKE:
			if (value_arg != 1 || !deterministic || !IsA(value, Const) ||
				!like_pattern_safe((Const *) value))
				return NIL;
			sop = op->opfuncid == F_TEXTLIKE ? VSTR_LIKE :
				op->opfuncid == F_TEXTNLIKE ? VSTR_NOT_LIKE :
				op->opfuncid == F_TEXTICLIKE ? VSTR_ILIKE :
				op->opfuncid == F_TEXTICNLIKE ? VSTR_NOT_ILIKE : VSTR_CALL;
			break;
		default:
			return NIL;
	}
	/* char(n) values are compared without their trailing blanks: by call */
	if (coltype == BPCHAROID && sop != VSTR_LIKE && sop != VSTR_NOT_LIKE)
		sop = VSTR_CALL;
	return vec_desc_call(VEC_STRING, sop, var->varattno - 1, -1, exprType(value), value_arg,
						 op->opfuncid, op->inputcollid);
}

/*
 * n if expr is `substring(col FROM 1 FOR n)` (or substr(col, 1, n)) of a
 * text or varchar column of the scanned relation, or of a char(n) one cast
 * to text (*trim: without its trailing blanks), n a constant above 0: its
 * first n characters; else 0.
 */
static int
prefix_of_column(Node *expr, Index relid, Relation rel, Var **var, bool *trim)
{
	FuncExpr   *fe;
	Node	   *arg;
	Const	   *from,
			   *len;
	Oid			coltype;

	if (!IsA(expr, FuncExpr))
		return 0;
	fe = (FuncExpr *) expr;
	if ((fe->funcid != F_SUBSTRING_TEXT_INT4_INT4 && fe->funcid != F_SUBSTR_TEXT_INT4_INT4) ||
		list_length(fe->args) != 3 ||
		!IsA(lsecond(fe->args), Const) || !IsA(lthird(fe->args), Const))
		return 0;
	/* char(n) reaches substring through text(bpchar): its trailing blanks go */
	arg = linitial(fe->args);
	*trim = IsA(arg, FuncExpr) && ((FuncExpr *) arg)->funcid == F_TEXT_BPCHAR &&
		list_length(((FuncExpr *) arg)->args) == 1;
	if (*trim)
		arg = linitial(((FuncExpr *) arg)->args);
	if ((*var = TesseraScanVar(arg, relid)) == NULL)
		return 0;
	from = lsecond_node(Const, fe->args);
	len = lthird_node(Const, fe->args);
	coltype = getBaseType((*var)->vartype);
	if ((*trim ? coltype != BPCHAROID : coltype != TEXTOID && coltype != VARCHAROID) ||
		TupleDescAttr(RelationGetDescr(rel), (*var)->varattno - 1)->attisdropped ||
		from->constisnull || len->constisnull || DatumGetInt32(from->constvalue) != 1 ||
		DatumGetInt32(len->constvalue) <= 0)
		return 0;
	return DatumGetInt32(len->constvalue);
}

/*
 * `col IN (values)` (= ANY) and `col NOT IN (values)` (<> ALL) of an
 * integer-like or string column: the equality of the column's btree family
 * (or its negator), or for strings texteq/bpchareq and their negations.
 */
static List *
in_vec_describe(ScalarArrayOpExpr *op, Index relid, Relation rel)
{
	Var		   *var;
	Oid			coltype,
				eq,
				proc;
	int			strategy;
	Oid			funcid = op->opfuncid;
	int			prefix;
	bool		trim;

	if (list_length(op->args) == 2 &&
		(prefix = prefix_of_column(linitial(op->args), relid, rel, &var, &trim)) > 0)
	{
		/* `substring(col FROM 1 FOR n) IN (...)`: the list against each value's prefix */
		if (!scan_constant(lsecond(op->args), relid) || !OidIsValid(op->inputcollid) ||
			!get_collation_isdeterministic(op->inputcollid) ||
			funcid != (op->useOr ? F_TEXTEQ : F_TEXTNE))
			return NIL;
		return lappend(lappend(vec_desc_call(VEC_IN, op->useOr ? 1 : 0, var->varattno - 1, -1,
											 get_element_type(exprType(lsecond(op->args))), 1,
											 funcid, op->inputcollid),
							   makeInteger(prefix)),
					   makeInteger(trim ? 1 : 0));
	}
	if (list_length(op->args) != 2 ||
		(var = TesseraScanVar(linitial(op->args), relid)) == NULL ||
		!scan_constant(lsecond(op->args), relid) ||
		TupleDescAttr(RelationGetDescr(rel), var->varattno - 1)->attisdropped)
		return NIL;
	coltype = getBaseType(var->vartype);
	if (coltype == TEXTOID || coltype == VARCHAROID || coltype == BPCHAROID)
	{
		bool		bpchar = coltype == BPCHAROID;

		if (!OidIsValid(op->inputcollid) ||
			funcid != (op->useOr ? (bpchar ? F_BPCHAREQ : F_TEXTEQ) :
					   (bpchar ? F_BPCHARNE : F_TEXTNE)))
			return NIL;
		return vec_desc_call(VEC_IN, op->useOr ? 1 : 0, var->varattno - 1, -1,
							 get_element_type(exprType(lsecond(op->args))), 1, funcid,
							 op->inputcollid);
	}
	if (!TesseraIntLikeType(coltype))
		return NIL;
	eq = op->useOr ? op->opno : get_negator(op->opno);
	if (!OidIsValid(eq) ||
		!skip_operator(eq, var, op->inputcollid, rel, &strategy, &proc) ||
		strategy != BTEqualStrategyNumber)
		return NIL;
	/* elements of the column's type, or of any integer type: compared as int64 */
	{
		Oid			elem = getBaseType(get_element_type(exprType(lsecond(op->args))));
		bool		ints = coltype == INT2OID || coltype == INT4OID || coltype == INT8OID;

		if (elem != coltype &&
			!(ints && (elem == INT2OID || elem == INT4OID || elem == INT8OID)))
			return NIL;
	}
	return vec_desc_call(VEC_IN, op->useOr ? 1 : 0, var->varattno - 1, -1,
						 get_element_type(exprType(lsecond(op->args))), 1, funcid, InvalidOid);
}

/*
 * `col <> value` on a type whose btree family has the negated equality:
 * TESSERA_NE_STRATEGY.
 */
static bool
ne_operator(Oid opno, Var *var, Oid inputcollid, Relation rel)
{
	Oid			neg = get_negator(opno);
	int			strategy;
	Oid			proc;

	return OidIsValid(neg) && skip_operator(neg, var, inputcollid, rel, &strategy, &proc) &&
		strategy == BTEqualStrategyNumber;
}

/*
 * TesseraVecDescribe
 *		The description of a top-level qual the vector filter evaluates, or
 *		NIL.
 */
List *
TesseraVecDescribe(Node *node, Index relid, Relation rel)
{
	OpExpr	   *op;
	Oid			opno;
	Var		   *var;
	Oid			coltype,
				valtype,
				proc;
	int			strategy,
				value_arg;
	VecKind		kind;

	if (IsA(node, ScalarArrayOpExpr))
		return in_vec_describe((ScalarArrayOpExpr *) node, relid, rel);
	if (IsA(node, BoolExpr))
	{
		/* AND / OR of vector quals: TPC-H Q19's OR of ranges (NOT: NULL is not false) */
		BoolExpr   *b = (BoolExpr *) node;
		List	   *desc;
		ListCell   *lc;

		if (b->boolop == NOT_EXPR)
			return NIL;
		desc = vec_desc(VEC_BOOL, b->boolop == AND_EXPR ? 1 : 0, -1, -1, InvalidOid, -1);
		foreach(lc, b->args)
		{
			List	   *child = TesseraVecDescribe(lfirst(lc), relid, rel);

			if (child == NIL)
				return NIL;
			desc = lappend(desc, child);
		}
		return desc;
	}
	if (!IsA(node, OpExpr))
		return NIL;
	op = (OpExpr *) node;
	if (list_length(op->args) != 2)
		return NIL;
	if ((var = TesseraScanVar(linitial(op->args), relid)) == NULL)
		var = TesseraScanVar(lsecond(op->args), relid);
	if (var != NULL)
	{
		coltype = getBaseType(var->vartype);
		if (coltype == TEXTOID || coltype == VARCHAROID || coltype == BPCHAROID)
			return string_vec_describe(op, relid, rel);
	}
	if (TesseraScanVar(linitial(op->args), relid) != NULL &&
		TesseraScanVar(lsecond(op->args), relid) != NULL)
	{
		/* two columns of the same integer-like type: `l_commitdate < l_receiptdate` */
		Var		   *l = TesseraScanVar(linitial(op->args), relid);
		Var		   *r = TesseraScanVar(lsecond(op->args), relid);

		coltype = getBaseType(l->vartype);
		if (coltype != getBaseType(r->vartype) || !TesseraIntLikeType(coltype) ||
			TupleDescAttr(RelationGetDescr(rel), r->varattno - 1)->attisdropped)
			return NIL;
		if (ne_operator(op->opno, l, op->inputcollid, rel))
			strategy = TESSERA_NE_STRATEGY;
		else if (!skip_operator(op->opno, l, op->inputcollid, rel, &strategy, &proc))
			return NIL;
		return vec_desc(VEC_COLCOL, strategy, l->varattno - 1, r->varattno - 1, coltype, 1);
	}
	var = normalize_opexpr(op, relid, &opno, &value_arg);
	if (var == NULL)
		return NIL;
	if (ne_operator(opno, var, op->inputcollid, rel))
		strategy = TESSERA_NE_STRATEGY;
	else if (!skip_operator(opno, var, op->inputcollid, rel, &strategy, &proc))
		return NIL;
	coltype = getBaseType(var->vartype);
	valtype = exprType(list_nth(op->args, value_arg));
	switch (coltype)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
			kind = VEC_INT;
			if (valtype != INT2OID && valtype != INT4OID && valtype != INT8OID)
				return NIL;
			break;
		case DATEOID:
			kind = valtype == TIMESTAMPOID ? VEC_DATE_TS : VEC_INT;
			if (valtype != DATEOID && valtype != TIMESTAMPOID)
				return NIL;
			break;
		case NUMERICOID:
			kind = VEC_NUMERIC;
			if (valtype != NUMERICOID)
				return NIL;
			break;
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			kind = VEC_INT;
			if (valtype != coltype)
				return NIL;
			break;
		case FLOAT4OID:
			kind = VEC_FLOAT4;
			if (valtype != FLOAT4OID)
				return NIL;
			break;
		case FLOAT8OID:
			kind = VEC_FLOAT8;
			if (valtype != FLOAT8OID)
				return NIL;
			break;
		default:
			return NIL;
	}
	return vec_desc(kind, strategy, var->varattno - 1, -1, valtype, value_arg);
}

/*
 * The description of sum/avg's argument, or NIL if it is not numeric
 * arithmetic over the relation's numeric columns and finite constants.
 */
static List *
vx_describe(Node *expr, Index relid, Relation rel)
{
	if (IsA(expr, Var))
	{
		Var		   *var = (Var *) expr;

		if (var->varno != relid || var->varlevelsup != 0 || var->varattno <= 0 ||
			var->varattno > RelationGetNumberOfAttributes(rel) ||
			getBaseType(var->vartype) != NUMERICOID ||
			TupleDescAttr(RelationGetDescr(rel), var->varattno - 1)->attisdropped)
			return NIL;
		return list_make2(makeInteger(VX_VAR), makeInteger(var->varattno - 1));
	}
	if (IsA(expr, FuncExpr) && list_length(((FuncExpr *) expr)->args) == 1 &&
		(((FuncExpr *) expr)->funcid == F_NUMERIC_INT2 ||
		 ((FuncExpr *) expr)->funcid == F_NUMERIC_INT4 ||
		 ((FuncExpr *) expr)->funcid == F_NUMERIC_INT8))
	{
		/* an integer column cast to numeric (TPC-H q11's ps_supplycost * ps_availqty) */
		Var		   *var = linitial(((FuncExpr *) expr)->args);
		Oid			t;

		if (!IsA(var, Var) || var->varno != relid || var->varlevelsup != 0 ||
			var->varattno <= 0 || var->varattno > RelationGetNumberOfAttributes(rel) ||
			TupleDescAttr(RelationGetDescr(rel), var->varattno - 1)->attisdropped)
			return NIL;
		t = getBaseType(var->vartype);
		if (t != INT2OID && t != INT4OID && t != INT8OID)
			return NIL;
		return list_make3(makeInteger(VX_INTVAR), makeInteger(var->varattno - 1),
						  makeInteger(get_typlen(t)));
	}
	if (IsA(expr, Const))
	{
		Const	   *c = (Const *) expr;
		int128		v;
		int			scale;

		if (c->consttype != NUMERICOID || c->constisnull ||
			!TesseraNumericScaled(c->constvalue, &v, &scale))
			return NIL;
		return list_make3(makeInteger(VX_CONST), makeInteger(-1), copyObject(c));
	}
	if (IsA(expr, OpExpr) && list_length(((OpExpr *) expr)->args) == 2)
	{
		OpExpr	   *op = (OpExpr *) expr;
		VxKind		kind;
		List	   *l,
				   *r;

		switch (op->opfuncid)
		{
			case F_NUMERIC_ADD:
				kind = VX_ADD;
				break;
			case F_NUMERIC_SUB:
				kind = VX_SUB;
				break;
			case F_NUMERIC_MUL:
				kind = VX_MUL;
				break;
			default:
				return NIL;
		}
		l = vx_describe(linitial(op->args), relid, rel);
		r = vx_describe(lsecond(op->args), relid, rel);
		if (l == NIL || r == NIL)
			return NIL;
		return list_make5(makeInteger(kind), makeInteger(-1), makeNullConst(NUMERICOID, -1, InvalidOid),
						  l, r);
	}
	return NIL;
}

/*
 * min/max of another type is computed with the type's default btree
 * comparison, which orders it as its min/max functions do (text_smaller,
 * numeric_smaller, ... compare with the same function).  Collatable types
 * only in deterministic collations.
 */
static bool
minmax_generic_ok(Oid typid, Oid collation)
{
	TypeCacheEntry *tc = lookup_type_cache(typid, TYPECACHE_CMP_PROC);

	if (!OidIsValid(tc->cmp_proc))
		return false;
	if (type_is_collatable(typid) &&
		(!OidIsValid(collation) || !get_collation_isdeterministic(collation)))
		return false;
	return true;
}


static List *
agg_desc(TAggKind kind, int attidx, Oid argtype, Oid restype, bool generic, List *vx,
		 List *filter)
{
	List	   *desc = list_make4(makeInteger(kind), makeInteger(attidx),
								  makeInteger((int) argtype), makeInteger((int) restype));

	desc = lappend(desc, makeInteger(generic));
	desc = lappend(desc, makeInteger(-1));	/* AGG_DESC_SAME_AS, set by the caller */
	desc = lappend(desc, vx);
	desc = lappend(desc, filter);
	desc = lappend(desc, NULL); /* AGG_DESC_OFFSET */
	desc = lappend(desc, makeInteger((int) InvalidOid));	/* AGG_DESC_OFFSET_TYPE */
	return lappend(desc, makeInteger(TAGG_VAR_NONE));	/* AGG_DESC_VAR_FORM */
}

/* The variance or standard deviation an aggregate of this name is, if any. */
static TAggVarForm
var_form_of(const char *name)
{
	if (strcmp(name, "var_pop") == 0)
		return TAGG_VAR_POP;
	if (strcmp(name, "variance") == 0 || strcmp(name, "var_samp") == 0)
		return TAGG_VAR_SAMP;
	if (strcmp(name, "stddev_pop") == 0)
		return TAGG_STDDEV_POP;
	if (strcmp(name, "stddev") == 0 || strcmp(name, "stddev_samp") == 0)
		return TAGG_STDDEV_SAMP;
	return TAGG_VAR_NONE;
}

/*
 * sum/avg of an integer column plus or minus an integer constant, x + c,
 * x - c or c + x: described as sum/avg of x with an offset, so that it is
 * summed as sum(x) + c * count(x) from x's state, which every sum/avg of x
 * shares (ClickBench's q29 sums x + 0 .. x + 89), rather than adding c to
 * every row.  The results are PostgreSQL's: sum(int4) wraps in int64 as
 * int4_sum does, avg divides the same sum by the same count.  PostgreSQL
 * raises "integer out of range" where x + c overflows its type; the
 * executor checks the extremes of the counted values of x against the
 * bounds (agg_node.c).  Not under FILTER (the state is shared).
 */
static List *
offset_describe(Aggref *agg, const char *name, Node *expr, Index relid, Relation rel,
				List *filter)
{
	OpExpr	   *op = (OpExpr *) expr;
	Node	   *l;
	Node	   *r;
	Var		   *var;
	Const	   *c;
	bool		minus;
	int64		off;
	Oid			xt;
	Oid			et;
	TAggKind	kind;
	List	   *desc;

	if (!IsA(expr, OpExpr) || list_length(op->args) != 2 || filter != NIL)
		return NIL;
	if (strcmp(name, "sum") == 0)
		kind = TAGG_SUM;
	else if (strcmp(name, "avg") == 0)
		kind = TAGG_AVG;
	else
		return NIL;
	switch (op->opfuncid)
	{
		case F_INT2PL:
		case F_INT4PL:
		case F_INT8PL:
		case F_INT24PL:
		case F_INT42PL:
		case F_INT28PL:
		case F_INT82PL:
		case F_INT48PL:
		case F_INT84PL:
			minus = false;
			break;
		case F_INT2MI:
		case F_INT4MI:
		case F_INT8MI:
		case F_INT24MI:
		case F_INT42MI:
		case F_INT28MI:
		case F_INT82MI:
		case F_INT48MI:
		case F_INT84MI:
			minus = true;
			break;
		default:
			return NIL;
	}
	l = linitial(op->args);
	r = lsecond(op->args);
	if (!minus && IsA(l, Const))
	{
		Node	   *t = l;

		l = r;
		r = t;
	}
	if (!IsA(l, Var) || !IsA(r, Const))
		return NIL;
	var = (Var *) l;
	c = (Const *) r;
	if (var->varno != relid || var->varlevelsup != 0 || var->varattno <= 0 ||
		var->varattno > RelationGetNumberOfAttributes(rel) ||
		TupleDescAttr(RelationGetDescr(rel), var->varattno - 1)->attisdropped || c->constisnull)
		return NIL;
	xt = getBaseType(var->vartype);
	et = op->opresulttype;
	if ((xt != INT2OID && xt != INT4OID && xt != INT8OID) ||
		(et != INT2OID && et != INT4OID && et != INT8OID))
		return NIL;
	switch (c->consttype)
	{
		case INT2OID:
			off = DatumGetInt16(c->constvalue);
			break;
		case INT4OID:
			off = DatumGetInt32(c->constvalue);
			break;
		case INT8OID:
			off = DatumGetInt64(c->constvalue);
			break;
		default:
			return NIL;
	}
	if (minus)
	{
		if (off == PG_INT64_MIN)
			return NIL;
		off = -off;
	}
	/* the result types PostgreSQL's sum/avg of x + c have */
	if (agg->aggtype != (kind == TAGG_SUM && et != INT8OID ? INT8OID : NUMERICOID))
		return NIL;
	desc = agg_desc(kind, var->varattno - 1, xt, agg->aggtype, false, NIL, NIL);
	list_nth_cell(desc, AGG_DESC_OFFSET)->ptr_value =
		makeConst(INT8OID, -1, InvalidOid, sizeof(int64), Int64GetDatum(off), false, FLOAT8PASSBYVAL);
	intVal(list_nth(desc, AGG_DESC_OFFSET_TYPE)) = (int) et;
	return desc;
}

/*
 * count(DISTINCT col) of a column TesseraAgg can group by, with the
 * equality a GROUP BY of it would use: the aggregation groups by the
 * column too and counts the groups (agg_node.c).  No FILTER.
 */
static List *
count_distinct_describe(Aggref *agg, Index relid, Relation rel, List *filter)
{
	Var		   *var;
	SortGroupClause *sgc;
	TypeCacheEntry *tc;
	char	   *name;

	if (filter != NIL || agg->aggorder != NIL || agg->aggkind != AGGKIND_NORMAL ||
		agg->agglevelsup != 0 || agg->aggsplit != AGGSPLIT_SIMPLE || agg->aggvariadic ||
		agg->aggstar || list_length(agg->args) != 1 || list_length(agg->aggdistinct) != 1 ||
		agg->aggtype != INT8OID ||
		get_func_namespace(agg->aggfnoid) != PG_CATALOG_NAMESPACE)
		return NIL;
	name = get_func_name(agg->aggfnoid);
	if (name == NULL || strcmp(name, "count") != 0)
		return NIL;
	var = (Var *) ((TargetEntry *) linitial(agg->args))->expr;
	if (!IsA(var, Var) || var->varno != relid || var->varlevelsup != 0 || var->varattno <= 0 ||
		var->varattno > RelationGetNumberOfAttributes(rel) ||
		TupleDescAttr(RelationGetDescr(rel), var->varattno - 1)->attisdropped ||
		TesseraKeyDescribe((Node *) var, var->varattno - 1) == NIL)
		return NIL;
	sgc = linitial_node(SortGroupClause, agg->aggdistinct);
	tc = lookup_type_cache(getBaseType(var->vartype), TYPECACHE_EQ_OPR);
	if (sgc->eqop != tc->eq_opr)
		return NIL;
	return agg_desc(TAGG_COUNT_DISTINCT, var->varattno - 1, getBaseType(var->vartype),
					agg->aggtype, false, NIL, NIL);
}

/*
 * An aggregate of one argument (a column, or the computed column attidx)
 * of base type t, by name: its description, or NIL.
 */
static List *
describe_one_argument(Aggref *agg, const char *name, int attidx, Oid t, List *filter)
{
	TAggKind	kind;

	if (strcmp(name, "count") == 0)
	{
		if (agg->aggtype != INT8OID)
			return NIL;
		kind = TAGG_COUNT;
	}
	else if (strcmp(name, "sum") == 0 || strcmp(name, "avg") == 0)
	{
		bool		ok;

		kind = name[0] == 's' ? TAGG_SUM : TAGG_AVG;
		if (t == INT2OID || t == INT4OID)
			ok = agg->aggtype == (kind == TAGG_SUM ? INT8OID : NUMERICOID);
		else if (t == INT8OID || t == NUMERICOID)
			ok = agg->aggtype == NUMERICOID;
		/* floats: summed in row order, as PostgreSQL's transition functions do */
		else if (t == FLOAT4OID || t == FLOAT8OID)
			ok = agg->aggtype == (kind == TAGG_AVG ? FLOAT8OID : t);
		else
			ok = t == INTERVALOID && agg->aggtype == INTERVALOID;
		if (!ok)
			return NIL;
	}
	else if (var_form_of(name) != TAGG_VAR_NONE)
	{
		List	   *desc;

		/*
		 * of floats only: those of integers and numerics are numerics
		 * computed at a scale only numeric.c's internals choose
		 */
		if ((t != FLOAT4OID && t != FLOAT8OID) || agg->aggtype != FLOAT8OID)
			return NIL;
		desc = agg_desc(TAGG_AVG, attidx, t, agg->aggtype, false, NIL, filter);
		intVal(list_nth(desc, AGG_DESC_VAR_FORM)) = var_form_of(name);
		return desc;
	}
	else if (strcmp(name, "bool_and") == 0 || strcmp(name, "every") == 0 ||
			 strcmp(name, "bool_or") == 0)
	{
		/*
		 * the least and the greatest of a bool (false < true): both skip
		 * NULLs and are NULL where every value was, as min and max are
		 */
		if (t != BOOLOID || agg->aggtype != BOOLOID)
			return NIL;
		kind = strcmp(name, "bool_or") == 0 ? TAGG_MAX : TAGG_MIN;
	}
	else if (strcmp(name, "min") == 0 || strcmp(name, "max") == 0)
	{
		kind = name[1] == 'i' ? TAGG_MIN : TAGG_MAX;
		if (getBaseType(agg->aggtype) != t)
			return NIL;
		if (!TesseraIntLikeType(t) && t != FLOAT4OID && t != FLOAT8OID)
		{
			if (!minmax_generic_ok(t, agg->inputcollid))
				return NIL;
			return agg_desc(kind, attidx, t, agg->aggtype, true, NIL, filter);
		}
	}
	else
		return NIL;
	return agg_desc(kind, attidx, t, agg->aggtype, false, NIL, filter);
}

/*
 * TesseraAggDescribe
 *		The description of an aggregate TesseraAgg computes, or NIL.
 */
List *
TesseraAggDescribe(Aggref *agg, Index relid, Relation rel, List **computed)
{
	char	   *name;
	Var		   *var = NULL;
	Oid			t = InvalidOid;
	Oid			relabeled = InvalidOid;
	List	   *filter = NIL;
	int			attidx;

	if (agg->aggfilter != NULL)
	{
		ListCell   *lc;

		/* FILTER (WHERE ...): a conjunction the vector filter evaluates */
		foreach(lc, make_ands_implicit(agg->aggfilter))
		{
			List	   *vdesc = TesseraVecDescribe(lfirst(lc), relid, rel);

			if (vdesc == NIL)
				return NIL;
			filter = lappend(filter, vdesc);
		}
	}
	if (agg->aggdistinct != NIL)
		return count_distinct_describe(agg, relid, rel, filter);
	if (agg->aggorder != NIL ||
		agg->aggkind != AGGKIND_NORMAL || agg->agglevelsup != 0 ||
		agg->aggsplit != AGGSPLIT_SIMPLE || agg->aggvariadic ||
		get_func_namespace(agg->aggfnoid) != PG_CATALOG_NAMESPACE)
		return NIL;
	name = get_func_name(agg->aggfnoid);
	if (name == NULL)
		return NIL;
	if (agg->aggstar)
	{
		if (strcmp(name, "count") != 0 || agg->aggtype != INT8OID)
			return NIL;
		return agg_desc(TAGG_COUNT_STAR, -1, InvalidOid, agg->aggtype, false, NIL, filter);
	}
	if (list_length(agg->args) != 1)
		return NIL;
	var = (Var *) ((TargetEntry *) linitial(agg->args))->expr;
	/*
	 * A column of the table relabeled to a binary-compatible type (min of a
	 * varchar is min(col::text)): the column itself, its values read as the
	 * relabeled type, not an expression computed per row
	 */
	if (IsA(var, RelabelType))
	{
		Var		   *inner = TesseraScanVar((Node *) var, relid);

		if (inner != NULL && inner->varattno <= RelationGetNumberOfAttributes(rel))
		{
			relabeled = exprType((Node *) var);
			var = inner;
		}
	}
	if (!IsA(var, Var))
	{
		/* sum/avg of numeric arithmetic */
		List	   *vx = vx_describe((Node *) var, relid, rel);
		List	   *odesc = offset_describe(agg, name, (Node *) var, relid, rel, filter);

		if (odesc != NIL)
			return odesc;

		if (vx != NIL && agg->aggtype == NUMERICOID &&
			(strcmp(name, "sum") == 0 || strcmp(name, "avg") == 0))
			return agg_desc(name[0] == 's' ? TAGG_SUM : TAGG_AVG, -1, NUMERICOID, agg->aggtype,
							false, vx, filter);
		/*
		 * any other expression: computed row by row, for every row counted;
		 * not under a FILTER, which PostgreSQL applies before evaluating the
		 * argument (sum(1 / x) FILTER (WHERE x > 0) must not divide by zero)
		 */
		if (computed == NULL || filter != NIL || !TesseraComputable((Node *) var, relid))
			return NIL;
		attidx = TesseraComputedColumn(computed, (Node *) var);
		t = getBaseType(exprType((Node *) var));
	}
	else if (var->varno == relid && var->varlevelsup == 0 &&
			 var->varattno > RelationGetNumberOfAttributes(rel))
	{
		/* an extra column of the row (a star join's dimension): computed */
		if (computed == NULL || filter != NIL)
			return NIL;
		attidx = TesseraComputedColumn(computed, (Node *) var);
		t = getBaseType(var->vartype);
	}
	else
	{
		if (var->varno != relid || var->varlevelsup != 0 || var->varattno <= 0 ||
			TupleDescAttr(RelationGetDescr(rel), var->varattno - 1)->attisdropped)
			return NIL;
		attidx = var->varattno - 1;
		t = getBaseType(OidIsValid(relabeled) ? relabeled : var->vartype);
	}

	return describe_one_argument(agg, name, attidx, t, filter);
}

/*
 * Is expr extract(field FROM a date or timestamp) of a field whose values
 * are integers (numerics of display scale 0, or an infinity for an
 * infinite timestamp)?  Such a key is grouped as an int64.
 */
static bool
integral_extract(Node *expr)
{
	static const char *const fields[] = {
		"year", "month", "day", "hour", "minute", "quarter", "week", "dow", "isodow", "doy",
		"decade", "century", "millennium", "isoyear"
	};
	FuncExpr   *f = (FuncExpr *) expr;
	Const	   *c;
	char	   *field;

	if (!IsA(expr, FuncExpr) || list_length(f->args) != 2 ||
		(f->funcid != F_EXTRACT_TEXT_DATE && f->funcid != F_EXTRACT_TEXT_TIMESTAMP &&
		 f->funcid != F_EXTRACT_TEXT_TIMESTAMPTZ))
		return false;
	c = (Const *) linitial(f->args);
	if (!IsA(c, Const) || c->consttype != TEXTOID || c->constisnull)
		return false;
	field = TextDatumGetCString(c->constvalue);
	for (int i = 0; i < lengthof(fields); i++)
		if (strcmp(field, fields[i]) == 0)
			return true;
	return false;
}

/*
 * TesseraKeyDescribe
 *		The description of a group key on an expression (a column, attidx
 *		its index, or a computed expression, attidx its computed column), or
 *		NIL.
 */
List *
TesseraKeyDescribe(Node *expr, int attidx)
{
	Oid			type = exprType(expr);
	Oid			t = getBaseType(type);
	Oid			collation = exprCollation(expr);
	TAggKeyKind kind;
	List	   *desc;

	/* (a bool as an integer of one byte: false 0, true 1, in that order) */
	if (TesseraIntLikeType(t) || t == BOOLOID)
		kind = TAGG_KEY_INT;
	else if (t == TEXTOID || t == VARCHAROID)
		kind = TAGG_KEY_TEXT;
	else if (t == BPCHAROID)
		kind = TAGG_KEY_BPCHAR;
	else if (t == NUMERICOID && integral_extract(expr))
		kind = TAGG_KEY_NUMINT;
	else if (type == NUMERICOID && IsA(expr, Var) && ((Var *) expr)->vartypmod >= 0)
	{
		/*
		 * A numeric(p, s) column: every value was rounded to display scale
		 * s and built by make_result (leading and trailing zero digits
		 * stripped, zero positive), so equal values have equal bytes and
		 * are grouped by them as strings are (TPC-H q10's c_acctbal).
		 */
		kind = TAGG_KEY_TEXT;
		collation = InvalidOid;
	}
	else
		return NIL;
	/* strings are grouped by their bytes: equality must be byte equality */
	if ((kind == TAGG_KEY_TEXT || kind == TAGG_KEY_BPCHAR) && t != NUMERICOID &&
		(!OidIsValid(collation) || !get_collation_isdeterministic(collation)))
		return NIL;
	desc = list_make4(makeInteger(attidx), makeInteger((int) t),
					  makeInteger((int) collation), makeInteger(get_typlen(type)));
	return lappend(desc, makeInteger(kind));
}

/*
 * Can TesseraAgg compute expr row by row from the relation's columns, as a
 * group key or an aggregate's argument?  Anything PostgreSQL's executor
 * evaluates on one row of this relation alone, with the same result
 * whenever it is evaluated: no volatile function, subquery, aggregate,
 * window function or set-returning function, and no column but the
 * relation's own (no system column, no whole row).
 */
bool
TesseraComputable(Node *expr, Index relid)
{
	List	   *vars;
	ListCell   *lc;

	if (expr == NULL || IsA(expr, Var) ||
		contain_volatile_functions(expr) || contain_subplans(expr) ||
		contain_agg_clause(expr) || contain_window_function(expr) ||
		expression_returns_set(expr))
		return false;
	vars = pull_var_clause(expr, PVC_INCLUDE_PLACEHOLDERS);
	if (list_length(vars) > TAGG_COMPUTED_MAX_COLUMNS)
		return false;
	foreach(lc, vars)
	{
		Var		   *var = lfirst(lc);

		if (!IsA(var, Var) || var->varno != relid || var->varlevelsup != 0 ||
			var->varattno <= 0)
			return false;
	}
	return true;
}

/*
 * Does the expression read a parameter set at run time (PARAM_EXEC)?  Its
 * value would not reach parallel workers, and quals with one stay where
 * PostgreSQL evaluates them.  (An expression_tree_walker: context unused.)
 */
bool
TesseraHasExecParam(Node *node, void *context)
{
	List	   *own = (List *) context;

	if (node == NULL)
		return false;
	if (IsA(node, Param) && ((Param *) node)->paramkind == PARAM_EXEC)
		return !list_member_int(own, ((Param *) node)->paramid);

	/*
	 * A subplan's test compares with its own output columns, Params of its
	 * paramIds that it sets itself for each of its rows: not run-time
	 * parameters of the plan it sits in.
	 */
	if (IsA(node, SubPlan))
	{
		SubPlan    *sp = (SubPlan *) node;

		return TesseraHasExecParam((Node *) sp->args, context) ||
			TesseraHasExecParam(sp->testexpr, list_concat_copy(own, sp->paramIds));
	}
	return expression_tree_walker(node, TesseraHasExecParam, context);
}

/*
 * TesseraOrderQuals
 *		Put quals (RestrictInfos) in the order PostgreSQL evaluates a node's
 *		quals (order_qual_clauses: cheapest first, ties as written): they
 *		are evaluated as one AND, so a later one is not evaluated where an
 *		earlier one failed, and errors come as PostgreSQL's would.  False if
 *		one comes from a security barrier (its order among them matters
 *		otherwise).
 */
bool
TesseraOrderQuals(PlannerInfo *root, List **quals)
{
	int			n = list_length(*quals);
	RestrictInfo **rinfos = palloc(sizeof(RestrictInfo *) * Max(n, 1));
	Cost	   *costs = palloc(sizeof(Cost) * Max(n, 1));
	ListCell   *lc;

	foreach(lc, *quals)
	{
		RestrictInfo *rinfo = lfirst(lc);
		QualCost	qc;
		int			i = foreach_current_index(lc);

		if (rinfo->security_level > 0)
			return false;
		cost_qual_eval_node(&qc, (Node *) rinfo->clause, root);
		/* (a stable insertion sort by cost) */
		while (i > 0 && costs[i - 1] > qc.per_tuple)
		{
			rinfos[i] = rinfos[i - 1];
			costs[i] = costs[i - 1];
			i--;
		}
		rinfos[i] = rinfo;
		costs[i] = qc.per_tuple;
	}
	*quals = NIL;
	for (int i = 0; i < n; i++)
		*quals = lappend(*quals, rinfos[i]);
	return true;
}

typedef struct RowQualContext
{
	Index		relid;
	int			ncolumns;
	bool		ok;
} RowQualContext;

static bool
row_qual_walker(Node *node, RowQualContext *cxt)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var))
	{
		Var		   *var = (Var *) node;

		if (var->varno != cxt->relid || var->varlevelsup != 0 || var->varattno <= 0)
			cxt->ok = false;
		cxt->ncolumns++;
		return false;
	}
	/*
	 * An uncorrelated subplan that hashes its rows (x [NOT] IN (SELECT
	 * ...)) is run once and probed per row.  Any other subplan runs per
	 * row, and an AlternativeSubPlan is resolved by setrefs, which does not
	 * see this copy of the qual.
	 */
	if (IsA(node, SubPlan))
	{
		SubPlan    *sp = (SubPlan *) node;

		if (!sp->useHashTable || sp->args != NIL || sp->parParam != NIL || sp->setParam != NIL)
			cxt->ok = false;
		return row_qual_walker(sp->testexpr, cxt);
	}
	if (IsA(node, AlternativeSubPlan) || IsA(node, SubLink) || IsA(node, PlaceHolderVar) ||
		IsA(node, Aggref) || IsA(node, WindowFunc) || IsA(node, GroupingFunc))
	{
		cxt->ok = false;
		return false;
	}
	return expression_tree_walker(node, row_qual_walker, cxt);
}

/*
 * TesseraRowQual
 *		Can TesseraAgg evaluate qual of relation relid row by row, on the
 *		rows its vector quals keep?  A qual with no vector form, of the
 *		relation's own columns, with no volatile function, set-returning
 *		function or run-time parameter, and no subplan but a hashed
 *		uncorrelated one; not one of a security barrier (the order of quals
 *		across barriers matters, and the vector quals go first).
 */
bool
TesseraRowQual(RestrictInfo *rinfo, Index relid)
{
	RowQualContext cxt = {relid, 0, true};
	Node	   *qual = (Node *) rinfo->clause;

	if (rinfo->security_level > 0 || rinfo->pseudoconstant ||
		contain_volatile_functions(qual) || expression_returns_set(qual) ||
		TesseraHasExecParam(qual, NIL))
		return false;
	(void) row_qual_walker(qual, &cxt);
	return cxt.ok && cxt.ncolumns <= TAGG_COMPUTED_MAX_COLUMNS;
}

/* The computed column of expr, added to *computed if new. */
int
TesseraComputedColumn(List **computed, Node *expr)
{
	ListCell   *lc;

	foreach(lc, *computed)
	{
		if (equal(lfirst(lc), expr))
			return TAGG_COMPUTED_ATTIDX + foreach_current_index(lc);
	}
	*computed = lappend(*computed, expr);
	return TAGG_COMPUTED_ATTIDX + list_length(*computed) - 1;
}
