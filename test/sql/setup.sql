-- Helpers shared by every test file: compare a query over a heap table
-- with the same query over a tessera table.
CREATE EXTENSION tessera;
CREATE SCHEMA tt;
-- plans print their workers: as many as the tests ask for, whatever this
-- machine's cores (tessera.limit_workers_to_cores caps them by default;
-- topn.sql plans with the cap)
DO $$BEGIN
    EXECUTE format('ALTER DATABASE %I SET tessera.limit_workers_to_cores = off', current_database());
END$$;

-- tt.cmp(query, heap, tessera): run query with {t} replaced by each table
-- and compare the results as multisets of rows (row_to_json text, so
-- every type compares, NULLs included).
CREATE FUNCTION tt.cmp(q text, h text, t text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    qh text := replace(q, '{t}', h);
    qt text := replace(q, '{t}', t);
    nh bigint;
    nt bigint;
    d bigint;
BEGIN
    EXECUTE format('SELECT count(*) FROM (%s) q', qh) INTO nh;
    EXECUTE format('SELECT count(*) FROM (%s) q', qt) INTO nt;
    EXECUTE format($f$SELECT count(*) FROM (
        (SELECT row_to_json(tt_a)::text FROM (%1$s) tt_a EXCEPT ALL SELECT row_to_json(tt_b)::text FROM (%2$s) tt_b)
        UNION ALL
        (SELECT row_to_json(tt_b)::text FROM (%2$s) tt_b EXCEPT ALL SELECT row_to_json(tt_a)::text FROM (%1$s) tt_a)) d$f$,
        qh, qt) INTO d;
    IF d = 0 AND nh = nt THEN
        RETURN format('same (%s rows)', nh);
    END IF;
    RETURN format('DIFFERENT: heap %s rows, tessera %s rows, %s differ', nh, nt, d);
END $$;

-- tt.cmp_ordered: the same, but the row order must match too
CREATE FUNCTION tt.cmp_ordered(q text, h text, t text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    rh text;
    rt text;
    n bigint;
BEGIN
    EXECUTE format('SELECT string_agg(row_to_json(tt_a)::text, E''\n''), count(*) FROM (%s) tt_a',
                   replace(q, '{t}', h)) INTO rh, n;
    EXECUTE format('SELECT string_agg(row_to_json(tt_a)::text, E''\n'') FROM (%s) tt_a',
                   replace(q, '{t}', t)) INTO rt;
    IF rh IS NOT DISTINCT FROM rt THEN
        RETURN format('same (%s rows, same order)', n);
    END IF;
    RETURN 'DIFFERENT';
END $$;

-- tt.same_table(heap, tessera): every row of both tables, as multisets
CREATE FUNCTION tt.same_table(h text, t text) RETURNS text
LANGUAGE sql AS $$ SELECT tt.cmp('SELECT * FROM {t}', h, t) $$;

-- tt.explain(query): EXPLAIN output lines, for tests that inspect plans
CREATE FUNCTION tt.explain(q text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
    line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN ' || q LOOP
        RETURN NEXT line;
    END LOOP;
END $$;

-- tt.explain_analyze(query): EXPLAIN ANALYZE without timing, costs or
-- buffers, its row counts printed as whole numbers (18 prints "rows=1.00")
CREATE FUNCTION tt.explain_analyze(q text) RETURNS TABLE ("QUERY PLAN" text)
LANGUAGE plpgsql AS $$
DECLARE
    line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF) ' || q LOOP
        "QUERY PLAN" := regexp_replace(line, 'rows=(\d+)\.00 ', 'rows=\1 ', 'g');
        RETURN NEXT;
    END LOOP;
END $$;

-- tt.plan(query): EXPLAIN (COSTS OFF) without 18's "Disabled: true" lines
-- under enable_* = off
CREATE FUNCTION tt.plan(q text) RETURNS TABLE ("QUERY PLAN" text)
LANGUAGE plpgsql AS $$
BEGIN
    FOR "QUERY PLAN" IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
        IF "QUERY PLAN" !~ '^\s*Disabled: true$' THEN
            RETURN NEXT;
        END IF;
    END LOOP;
END $$;

-- tt.subplan_runs_charged(query, query without the subquery): what a
-- subquery adds to the TesseraJoin node's cost, in runs of the subquery
CREATE FUNCTION tt.subplan_runs_charged(with_sub text, without text) RETURNS float8
LANGUAGE plpgsql AS $$
DECLARE
    w jsonb;
    wo jsonb;
    jcost jsonpath := '$.** ? (@."Custom Plan Provider" == "TesseraJoin")."Total Cost"';
BEGIN
    EXECUTE 'EXPLAIN (FORMAT JSON) ' || with_sub INTO w;
    EXECUTE 'EXPLAIN (FORMAT JSON) ' || without INTO wo;
    RETURN ((SELECT max(c::text::float8) FROM jsonb_path_query(w, jcost) c) -
            (SELECT max(c::text::float8) FROM jsonb_path_query(wo, jcost) c)) /
           (SELECT max(c::text::float8)
            FROM jsonb_path_query(w, '$.** ? (@."Parent Relationship" == "SubPlan")."Total Cost"') c);
END $$;
