"""Phases of heap_vs_tessera.py beyond single-session queries.

Each phase runs the same random statements on a heap twin and a tessera twin
and reports every difference in results or errors:

- ddl_phase: every rewriting and non-rewriting ALTER TABLE (ADD COLUMN with
  a constant or volatile default, DROP COLUMN, TYPE changes with and without
  a rewrite, SET/DROP NOT NULL, RENAME, SET ACCESS METHOD both ways, SET
  LOGGED/UNLOGGED, ADD CONSTRAINT), VACUUM FULL, CLUSTER and TRUNCATE, each
  after deletes, updates and row locks or inside the transaction that wrote
  (with savepoints rolled back and released); the tables are compared after
  every step.
- cursor_phase: scroll cursors fetched forward, backward, FIRST/LAST,
  ABSOLUTE and RELATIVE over sequential, TesseraScan, index, bitmap and TID
  range scans.
- concurrency_phase: two sessions per access method running the same
  interleaved schedule (READ COMMITTED, REPEATABLE READ and SERIALIZABLE;
  lock waits, EvalPlanQual re-checks, update conflicts, write skew); a step
  that blocks is recognized through pg_isolation_test_session_is_blocked,
  as the isolation tester does.  Outcomes (rows, errors by SQLSTATE, which
  step waited) are compared with the heap twin's.
"""
import random
import threading
import time

import psycopg


def digest(cur, t):
    cur.execute(f"select coalesce(md5(string_agg(x::text, '|' order by x::text)), 'none'), count(*) "
                f"from {t} x")
    return cur.fetchone()


def run_twins(cur, stmts, tables):
    """Run statements (with {t}) once per table; return each table's outcome."""
    outs = []
    for t in tables:
        out = []
        for s in stmts:
            sql = s.format(t=t)
            try:
                cur.execute(sql)
                if cur.description is not None:
                    out.append(("rows", sorted(str(r) for r in cur.fetchall())))
            except psycopg.Error as e:
                msg = (str(e).splitlines() or [""])[0].replace(t, "{t}")
                out.append(("error", e.sqlstate, msg))
                if cur.connection.info.transaction_status == psycopg.pq.TransactionStatus.INERROR:
                    # the rest of the transaction block is refused the same way
                    pass
        # leave no transaction open between twins
        if cur.connection.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
            cur.execute("rollback")
            out.append(("left open",))
        outs.append(out)
    return outs


# ---- DDL ----

class Schema:
    """The twins' current columns: name -> type (the same for both)."""

    def __init__(self, cols):
        self.cols = dict(cols)
        self.n = 0

    def new_name(self):
        self.n += 1
        return f"x{self.n}"


def ddl_op(rng, sch, has_index):
    """One random schema change as statements with {t}; updates sch."""
    names = [c for c in sch.cols if c != "a"]
    k = rng.random()
    if k < 0.12:
        c = sch.new_name()
        sch.cols[c] = "int"
        return [f"alter table {{t}} add column {c} int default {rng.randint(-5, 5)}"]
    if k < 0.22:
        c = sch.new_name()
        sch.cols[c] = "int"
        # volatile: every row is rewritten
        return [f"alter table {{t}} add column {c} int default tt_twin_vol(7)"]
    if k < 0.27:
        c = sch.new_name()
        sch.cols[c] = "int"
        return [f"alter table {{t}} add column {c} int generated always as (a * 3) stored"]
    if k < 0.36 and names:
        c = rng.choice(names)
        del sch.cols[c]
        return [f"alter table {{t}} drop column {c}"]
    if k < 0.50:
        # type changes: rewriting (int -> bigint, numeric scale) or not (varchar <-> text)
        cands = [(c, t) for c, t in sch.cols.items() if c != "a"]
        if cands:
            c, t = rng.choice(cands)
            new = {"int": "bigint", "smallint": "int", "bigint": "numeric", "numeric": "numeric(20,2)",
                   "numeric(20,2)": "numeric", "text": "varchar(40)", "varchar(40)": "text",
                   "float8": "numeric", "date": "timestamp", "timestamp": "timestamptz",
                   "timestamptz": "timestamp", "real": "float8"}.get(t)
            if new:
                sch.cols[c] = new
                return [f"alter table {{t}} alter column {c} type {new}"]
    if k < 0.56:
        c = rng.choice(list(sch.cols))
        return [f"alter table {{t}} alter column {c} set not null",
                f"alter table {{t}} alter column {c} drop not null"]
    if k < 0.61 and names:
        c = rng.choice(names)
        n = sch.new_name()
        sch.cols[n] = sch.cols.pop(c)
        return [f"alter table {{t}} rename column {c} to {n}"]
    if k < 0.71:
        # both ways: the tessera twin goes through heap and back
        return ["alter table {t} set access method heap", "alter table {t} set access method {am}"]
    if k < 0.76:
        return ["alter table {t} set unlogged", "alter table {t} set logged"]
    if k < 0.81:
        return [f"alter table {{t}} add constraint c{rng.randint(0, 10**6)} check (a is null or a > {rng.randint(-2000, 0)})"]
    if k < 0.88:
        return ["vacuum full {t}"]
    if k < 0.93 and has_index:
        return ["cluster {t} using {t}_a_idx"]
    return ["truncate {t}", f"insert into {{t}} (a) select g from generate_series(1, {rng.randint(0, 50)}) g"]


def dml_before(rng, sch):
    """Changes of rows made before a schema change (in its transaction or not)."""
    k = rng.randint(-1000, 1000)
    return rng.choice([
        [f"delete from {{t}} where a between {k} and {k + rng.randint(1, 300)}"],
        [f"update {{t}} set a = a + 1 where a between {k} and {k + rng.randint(1, 300)}"],
        [f"select count(*) from (select * from {{t}} where a between {k} and {k + 200} for update) l"],
        [f"select count(*) from (select * from {{t}} where a between {k} and {k + 200} for key share) l"],
        [f"insert into {{t}} (a) select g from generate_series({k}, {k + rng.randint(0, 40)}) g"],
        [f"insert into {{t}} select * from {{t}} where a between {k} and {k + 20}"],
    ])


def ddl_phase(cur, rng, cols, tessera_opts):
    """Schema changes on twin copies of fh; returns the number of differences."""
    bad = 0
    cur.execute("create or replace function tt_twin_vol(int) returns int volatile language sql "
                "as 'select $1 * 2'")
    for t, am in (("dh", "heap"), ("dt", "tessera")):
        cur.execute(f"drop table if exists {t} cascade")
        cur.execute(f"create table {t} (like fh) using {am}" + (f" with ({tessera_opts})" if am == "tessera" else ""))
        cur.execute(f"insert into {t} select * from fh")
    has_index = rng.random() < 0.6
    if has_index:
        for t in ("dh", "dt"):
            cur.execute(f"create index {t}_a_idx on {t} (a)")
    sch = Schema(cols)
    for step in range(rng.randint(3, 7)):
        op = ddl_op(rng, sch, has_index)
        before = dml_before(rng, sch) if rng.random() < 0.7 else []
        after = dml_before(rng, sch) if rng.random() < 0.5 else []
        shape = rng.choice(["separate", "in_xact", "in_xact", "savepoint", "locked_before"])
        if shape == "separate":
            stmts = before + op + after
        elif shape == "in_xact":
            # the transaction that wrote changes the schema, then writes again
            stmts = ["begin"] + before + op + after + [rng.choice(["commit", "commit", "rollback"])]
        elif shape == "savepoint":
            stmts = (["begin"] + before + ["savepoint s1"] + op + after +
                     [rng.choice(["rollback to savepoint s1", "release savepoint s1"])] +
                     dml_before(rng, sch) + ["commit"])
        else:
            # rows locked by a finished transaction, then the change
            k = rng.randint(-1000, 1000)
            stmts = ["begin", f"select count(*) from (select * from {{t}} where a > {k} for share) l",
                     "commit"] + op + after
        outs = []
        for t, am in (("dh", "heap"), ("dt", "tessera")):
            outs.append(run_twins(cur, [s.replace("{am}", am) for s in stmts], [t])[0])
        dh, dt = digest(cur, "dh"), digest(cur, "dt")
        if outs[0] != outs[1] or dh != dt:
            bad += 1
            print("DDL MISMATCH", stmts, outs if outs[0] != outs[1] else "", dh, dt)
            break
    cur.execute("select amname from pg_class c join pg_am a on a.oid = c.relam where relname = 'dt'")
    am = cur.fetchone()[0]
    if am != "tessera":
        bad += 1
        print("DDL MISMATCH: dt is", am)
    cur.execute("drop table dh, dt")
    return bad


# ---- scroll cursors ----

def cursor_phase(cur, rng):
    """Scroll cursors over fh and ft; returns the number of differences."""
    bad = 0
    k = rng.randint(-1000, 1000)
    q = rng.choice([f"select a, b, h from {{t}} where a > {k}",
                    f"select a, d from {{t}} where a between {k} and {k + 400} order by a, d",
                    "select a, g from {t} where ctid < '(3,0)'",
                    f"select * from {{t}} where c < {rng.randint(-300, 300)}"])
    settings = rng.choice([[], ["set enable_seqscan = off"], ["set enable_indexscan = off", "set enable_bitmapscan = on"],
                           ["set tessera.enable_custom_scan = off"], ["set enable_bitmapscan = off"]])
    fetches = [rng.choice(["fetch forward 5", "fetch backward 3", "fetch last", "fetch first",
                           f"fetch absolute {rng.randint(-20, 40)}", f"fetch relative {rng.randint(-10, 10)}",
                           "fetch backward all", "fetch forward all", "move last", "fetch prior"])
               for _ in range(rng.randint(4, 10))]
    ordered = "order by" in q
    # TIDs are numbered differently (291 rows per TID block, heap's ~226 a
    # page): a TID range selects different rows, compared only within each
    tid_range = "ctid" in q
    res = []
    for t in ("fh", "ft"):
        out = []
        cur.execute("begin")
        for s in settings:
            cur.execute(s)
        cur.execute(f"declare c scroll cursor for {q.format(t=t)}")
        # forward all, then backward all: the same rows in reverse
        cur.execute("fetch forward all c")
        fwd = [str(r) for r in cur.fetchall()]
        cur.execute("fetch backward all c")
        bwd = [str(r) for r in cur.fetchall()]
        # the same rows; not always exactly reversed (a btree returns equal
        # keys' TIDs in the same order both ways, for heap too)
        out.append(("reverse", sorted(bwd) == sorted(fwd), len(fwd)))
        out.append(("set", sorted(fwd)))
        for f in fetches:
            cur.execute(f"{f} c")
            rows = [str(r) for r in cur.fetchall()] if cur.description else []
            # without ORDER BY only the count of rows is comparable
            out.append((f, rows if ordered else len(rows)))
        cur.execute("commit")
        res.append(out)
    if tid_range:
        res = [[("reverse", r[0][1])] for r in res]
    if res[0] != res[1] or not res[1][0][1]:
        bad += 1
        print("CURSOR MISMATCH", q, settings, fetches, [r[:1] for r in res])
    return bad


# ---- concurrent sessions ----

class Session:
    def __init__(self, dsn, name):
        self.conn = psycopg.connect(dsn, autocommit=True)
        self.name = name
        self.pid = self.conn.info.backend_pid
        self.thread = None
        self.result = None

    def start(self, sql):
        def run():
            try:
                with self.conn.cursor() as c:
                    c.execute(sql)
                    self.result = ("rows", sorted(str(r) for r in c.fetchall())) if c.description else ("ok",)
            except psycopg.Error as e:
                self.result = ("error", e.sqlstate)
        self.result = None
        self.thread = threading.Thread(target=run)
        self.thread.start()

    def busy(self):
        return self.thread is not None and self.thread.is_alive()

    def close(self):
        if self.thread:
            self.thread.join(30)
        self.conn.close()


def wait_step(mon, sess, others, limit=30.0):
    """Until sess's statement finished (True) or waits for a lock another session holds (False)."""
    end = time.time() + limit
    while time.time() < end:
        sess.thread.join(0.005)
        if not sess.thread.is_alive():
            return True
        mon.execute("select pg_isolation_test_session_is_blocked(%s, %s)",
                    (sess.pid, [o.pid for o in others]))
        if mon.fetchone()[0]:
            # blocked: but it may have just finished
            sess.thread.join(0.005)
            return not sess.thread.is_alive()
    raise RuntimeError(f"step of {sess.name} neither finished nor waits")


def run_schedule(dsn, mon, schedule, table):
    """Run [(session index, sql)] on two sessions; return the observed events."""
    sess = [Session(dsn, "s1"), Session(dsn, "s2")]
    events = []
    waiting = set()
    try:
        for i, sql in schedule:
            s = sess[i]
            if s.busy():
                # the schedule never sends to a waiting session: it must finish first
                s.thread.join(30)
                events.append((s.name, "finished late", s.result))
                waiting.discard(i)
            s.start(sql.format(t=table))
            done = wait_step(mon, s, [o for o in sess if o is not s])
            events.append((s.name, sql, s.result if done else "waiting"))
            if not done:
                waiting.add(i)
            # steps this one released
            for w in sorted(waiting - {i}):
                o = sess[w]
                if wait_step(mon, o, [x for x in sess if x is not o]):
                    events.append((o.name, "finished", o.result))
                    waiting.discard(w)
        for w in sorted(waiting):
            sess[w].thread.join(30)
            events.append((sess[w].name, "finished at end", sess[w].result))
    finally:
        for s in sess:
            try:
                s.conn.execute("rollback")
            except psycopg.Error:
                pass
            s.close()
    return events


ISO = ["read committed", "repeatable read", "serializable"]


def make_schedule(rng):
    """A random two-session schedule over table {t}(id int primary key, g int, v int)."""
    k = rng.randint(1, 20)
    k2 = rng.randint(1, 20)
    iso1, iso2 = rng.choice(ISO), rng.choice(ISO)
    plan = ["set enable_indexscan = off", "set enable_bitmapscan = off"] if rng.random() < 0.5 else []
    begin1 = [(0, p) for p in plan] + [(0, f"begin isolation level {iso1}")]
    begin2 = [(1, p) for p in plan] + [(1, f"begin isolation level {iso2}")]
    end1 = (0, rng.choice(["commit", "commit", "rollback"]))
    end2 = (1, rng.choice(["commit", "commit", "rollback"]))
    kind = rng.choice(["update_update", "delete_update", "lock_update", "read_write", "skew", "insert_dup"])
    if kind == "update_update":
        # the second waits for the first, then re-checks (RC) or fails (RR/S)
        body = [(0, f"update {{t}} set v = v + 1 where id = {k}"),
                (1, f"update {{t}} set v = v * 2 where id = {k} returning id, v"),
                end1, (1, f"select * from {{t}} where id = {k}"), end2]
    elif kind == "delete_update":
        body = [(0, f"delete from {{t}} where id = {k}"),
                (1, f"update {{t}} set v = 0 where id = {k} or g = {k % 3} returning id"),
                end1, end2]
    elif kind == "lock_update":
        mode = rng.choice(["for update", "for no key update", "for share", "for key share"])
        body = [(0, f"select id from {{t}} where g = {k % 3} {mode}"),
                (1, rng.choice([f"update {{t}} set v = v + 10 where id = {k}",
                                f"update {{t}} set id = id + 100 where id = {k}",
                                f"delete from {{t}} where id = {k}",
                                f"select id from {{t}} where id = {k} for update skip locked",
                                f"select id from {{t}} where id = {k} for share nowait"])),
                end1, end2]
    elif kind == "read_write":
        # the snapshot reads before and after the other's commit
        body = [(0, f"select sum(v), count(*) from {{t}}"),
                (1, f"update {{t}} set v = v - 5 where g = {k % 3}"),
                (1, f"insert into {{t}} values ({100 + k}, 1, 1)"),
                end2,
                (0, f"select sum(v), count(*) from {{t}}"),
                (0, f"update {{t}} set v = v + 1 where id = {k2}"),
                end1]
    elif kind == "skew":
        # write skew: each reads what the other writes
        body = [(0, "select sum(v) from {t} where g = 0"),
                (1, "select sum(v) from {t} where g = 1"),
                (0, f"update {{t}} set v = v + 1 where g = 1 and id = {k}"),
                (1, f"update {{t}} set v = v + 1 where g = 0 and id = {k2}"),
                end1, end2]
    else:
        body = [(0, f"insert into {{t}} values ({200 + k}, 0, 0) on conflict (id) do update set v = {{t}}.v + 1"),
                (1, f"insert into {{t}} values ({200 + k}, 1, 1) on conflict (id) do nothing returning id"),
                end1, (1, f"insert into {{t}} values ({200 + k}, 2, 2) on conflict (id) do update set v = excluded.v returning v"),
                end2]
    # interleave the begins; s1 always begins first
    return begin1 + begin2 + body


def concurrency_phase(dsn, cur, rng, rounds=3):
    bad = 0
    mon = psycopg.connect(dsn, autocommit=True).cursor()
    for _ in range(rounds):
        gap = rng.random() < 0.3
        for t, am in (("ch", "heap"), ("ct", "tessera")):
            cur.execute(f"drop table if exists {t}")
            cur.execute(f"create table {t} (id int primary key, g int, v int) using {am}")
            cur.execute(f"insert into {t} select i, i % 3, i * 10 from generate_series(1, 20) i")
            if gap:
                cur.execute(f"delete from {t} where id = 7")
                cur.execute(f"vacuum analyze {t}")
            else:
                cur.execute(f"analyze {t}")
        schedule = make_schedule(rng)
        eh = run_schedule(dsn, mon, schedule, "ch")
        et = run_schedule(dsn, mon, schedule, "ct")
        dh, dt = digest(cur, "ch"), digest(cur, "ct")
        if eh != et or dh != dt:
            bad += 1
            print("CONCURRENCY MISMATCH", schedule)
            for a, b in zip(eh, et):
                print("   heap:", a, "\n   tess:", b) if a != b else None
            print("   tables:", dh, dt)
    cur.execute("drop table if exists ch, ct")
    mon.connection.close()
    return bad
