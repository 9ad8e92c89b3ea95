"""The Star Schema Benchmark's tables, primary keys and 13 queries (P. O'Neil,
E. O'Neil, X. Chen, "Star Schema Benchmark", revision 3, June 2009).

Tables: the fact table lineorder and its four dimensions date, customer,
supplier and part, with the specification's columns.  Types as PostgreSQL
SSB set-ups commonly declare them: integer keys, the date key an integer
yyyymmdd (19940205), money columns integers as the specification's
generator writes them (cents: lo_extendedprice 1..10,495,000), the 1-bit
flags of date integers 0/1, every text a varchar of the specification's
size (varchar rather than char: no blank padding, the same semantics in
DuckDB, which reads the same DDL).  d_dayofweek is varchar(9), not the
specification's 8: 'Wednesday' has nine letters.

The queries are the specification's four flights (section 3), in its SQL,
without trailing semicolons: flight 1 (q1.1..q1.3) joins lineorder with
date only and returns one sum; flights 2 to 4 join lineorder with part,
supplier, customer and date, group and order as the specification says
(q2.3's brand is revision 3's 'MFGR#2221'; some kits carry 'MFGR#2239').
One change, as the TPC-H workload makes for its queries: the ORDER BY of
flight 3 (d_year asc, revenue desc) can tie on revenue within a year, so it
ends with the grouping columns (c_nation, s_nation or c_city, s_city), which
fix the order of tied rows; rows that do not tie are ordered as the
specification orders them.  Every query parses in PostgreSQL and DuckDB."""

TABLES = {
    "lineorder": """lo_orderkey integer NOT NULL, lo_linenumber integer NOT NULL, lo_custkey integer NOT NULL,
                    lo_partkey integer NOT NULL, lo_suppkey integer NOT NULL, lo_orderdate integer NOT NULL,
                    lo_orderpriority varchar(15) NOT NULL, lo_shippriority varchar(1) NOT NULL,
                    lo_quantity integer NOT NULL, lo_extendedprice integer NOT NULL,
                    lo_ordtotalprice integer NOT NULL, lo_discount integer NOT NULL, lo_revenue integer NOT NULL,
                    lo_supplycost integer NOT NULL, lo_tax integer NOT NULL, lo_commitdate integer NOT NULL,
                    lo_shipmode varchar(10) NOT NULL""",
    "date": """d_datekey integer NOT NULL, d_date varchar(18) NOT NULL, d_dayofweek varchar(9) NOT NULL,
               d_month varchar(9) NOT NULL, d_year integer NOT NULL, d_yearmonthnum integer NOT NULL,
               d_yearmonth varchar(7) NOT NULL, d_daynuminweek integer NOT NULL, d_daynuminmonth integer NOT NULL,
               d_daynuminyear integer NOT NULL, d_monthnuminyear integer NOT NULL,
               d_weeknuminyear integer NOT NULL, d_sellingseason varchar(12) NOT NULL,
               d_lastdayinweekfl integer NOT NULL, d_lastdayinmonthfl integer NOT NULL,
               d_holidayfl integer NOT NULL, d_weekdayfl integer NOT NULL""",
    "customer": """c_custkey integer NOT NULL, c_name varchar(25) NOT NULL, c_address varchar(25) NOT NULL,
                   c_city varchar(10) NOT NULL, c_nation varchar(15) NOT NULL, c_region varchar(12) NOT NULL,
                   c_phone varchar(15) NOT NULL, c_mktsegment varchar(10) NOT NULL""",
    "supplier": """s_suppkey integer NOT NULL, s_name varchar(25) NOT NULL, s_address varchar(25) NOT NULL,
                   s_city varchar(10) NOT NULL, s_nation varchar(15) NOT NULL, s_region varchar(12) NOT NULL,
                   s_phone varchar(15) NOT NULL""",
    "part": """p_partkey integer NOT NULL, p_name varchar(22) NOT NULL, p_mfgr varchar(6) NOT NULL,
               p_category varchar(7) NOT NULL, p_brand1 varchar(9) NOT NULL, p_color varchar(11) NOT NULL,
               p_type varchar(25) NOT NULL, p_size integer NOT NULL, p_container varchar(10) NOT NULL""",
}

PRIMARY_KEYS = {
    "lineorder": "lo_orderkey, lo_linenumber",
    "date": "d_datekey",
    "customer": "c_custkey",
    "supplier": "s_suppkey",
    "part": "p_partkey",
}

QUERIES = {
    # -- flight 1: one dimension (date), restrictions on the fact table's columns
    "q1.1": """
select sum(lo_extendedprice * lo_discount) as revenue
from lineorder, date
where lo_orderdate = d_datekey
  and d_year = 1993
  and lo_discount between 1 and 3
  and lo_quantity < 25""",
    "q1.2": """
select sum(lo_extendedprice * lo_discount) as revenue
from lineorder, date
where lo_orderdate = d_datekey
  and d_yearmonthnum = 199401
  and lo_discount between 4 and 6
  and lo_quantity between 26 and 35""",
    "q1.3": """
select sum(lo_extendedprice * lo_discount) as revenue
from lineorder, date
where lo_orderdate = d_datekey
  and d_weeknuminyear = 6
  and d_year = 1994
  and lo_discount between 5 and 7
  and lo_quantity between 26 and 35""",
    # -- flight 2: part and supplier restricted, revenue per year and brand
    "q2.1": """
select sum(lo_revenue), d_year, p_brand1
from lineorder, date, part, supplier
where lo_orderdate = d_datekey
  and lo_partkey = p_partkey
  and lo_suppkey = s_suppkey
  and p_category = 'MFGR#12'
  and s_region = 'AMERICA'
group by d_year, p_brand1
order by d_year, p_brand1""",
    "q2.2": """
select sum(lo_revenue), d_year, p_brand1
from lineorder, date, part, supplier
where lo_orderdate = d_datekey
  and lo_partkey = p_partkey
  and lo_suppkey = s_suppkey
  and p_brand1 between 'MFGR#2221' and 'MFGR#2228'
  and s_region = 'ASIA'
group by d_year, p_brand1
order by d_year, p_brand1""",
    "q2.3": """
select sum(lo_revenue), d_year, p_brand1
from lineorder, date, part, supplier
where lo_orderdate = d_datekey
  and lo_partkey = p_partkey
  and lo_suppkey = s_suppkey
  and p_brand1 = 'MFGR#2221'
  and s_region = 'EUROPE'
group by d_year, p_brand1
order by d_year, p_brand1""",
    # -- flight 3: customer, supplier and date restricted, revenue per place and year
    "q3.1": """
select c_nation, s_nation, d_year, sum(lo_revenue) as revenue
from customer, lineorder, supplier, date
where lo_custkey = c_custkey
  and lo_suppkey = s_suppkey
  and lo_orderdate = d_datekey
  and c_region = 'ASIA'
  and s_region = 'ASIA'
  and d_year >= 1992 and d_year <= 1997
group by c_nation, s_nation, d_year
order by d_year asc, revenue desc, c_nation, s_nation""",
    "q3.2": """
select c_city, s_city, d_year, sum(lo_revenue) as revenue
from customer, lineorder, supplier, date
where lo_custkey = c_custkey
  and lo_suppkey = s_suppkey
  and lo_orderdate = d_datekey
  and c_nation = 'UNITED STATES'
  and s_nation = 'UNITED STATES'
  and d_year >= 1992 and d_year <= 1997
group by c_city, s_city, d_year
order by d_year asc, revenue desc, c_city, s_city""",
    "q3.3": """
select c_city, s_city, d_year, sum(lo_revenue) as revenue
from customer, lineorder, supplier, date
where lo_custkey = c_custkey
  and lo_suppkey = s_suppkey
  and lo_orderdate = d_datekey
  and (c_city = 'UNITED KI1' or c_city = 'UNITED KI5')
  and (s_city = 'UNITED KI1' or s_city = 'UNITED KI5')
  and d_year >= 1992 and d_year <= 1997
group by c_city, s_city, d_year
order by d_year asc, revenue desc, c_city, s_city""",
    "q3.4": """
select c_city, s_city, d_year, sum(lo_revenue) as revenue
from customer, lineorder, supplier, date
where lo_custkey = c_custkey
  and lo_suppkey = s_suppkey
  and lo_orderdate = d_datekey
  and (c_city = 'UNITED KI1' or c_city = 'UNITED KI5')
  and (s_city = 'UNITED KI1' or s_city = 'UNITED KI5')
  and d_yearmonth = 'Dec1997'
group by c_city, s_city, d_year
order by d_year asc, revenue desc, c_city, s_city""",
    # -- flight 4: profit (revenue - supply cost) drilled down from region to city and brand
    "q4.1": """
select d_year, c_nation, sum(lo_revenue - lo_supplycost) as profit
from date, customer, supplier, part, lineorder
where lo_custkey = c_custkey
  and lo_suppkey = s_suppkey
  and lo_partkey = p_partkey
  and lo_orderdate = d_datekey
  and c_region = 'AMERICA'
  and s_region = 'AMERICA'
  and (p_mfgr = 'MFGR#1' or p_mfgr = 'MFGR#2')
group by d_year, c_nation
order by d_year, c_nation""",
    "q4.2": """
select d_year, s_nation, p_category, sum(lo_revenue - lo_supplycost) as profit
from date, customer, supplier, part, lineorder
where lo_custkey = c_custkey
  and lo_suppkey = s_suppkey
  and lo_partkey = p_partkey
  and lo_orderdate = d_datekey
  and c_region = 'AMERICA'
  and s_region = 'AMERICA'
  and (d_year = 1997 or d_year = 1998)
  and (p_mfgr = 'MFGR#1' or p_mfgr = 'MFGR#2')
group by d_year, s_nation, p_category
order by d_year, s_nation, p_category""",
    "q4.3": """
select d_year, s_city, p_brand1, sum(lo_revenue - lo_supplycost) as profit
from date, customer, supplier, part, lineorder
where lo_custkey = c_custkey
  and lo_suppkey = s_suppkey
  and lo_partkey = p_partkey
  and lo_orderdate = d_datekey
  and c_region = 'AMERICA'
  and s_nation = 'UNITED STATES'
  and (d_year = 1997 or d_year = 1998)
  and p_category = 'MFGR#14'
group by d_year, s_city, p_brand1
order by d_year, s_city, p_brand1""",
}


def columns(table: str) -> list:
    """The column names of `table`, in order."""
    return [c.split()[0] for c in TABLES[table].split(",")]


def queries() -> dict:
    """name -> SQL (the queries take no scale-dependent parameters)."""
    return {name: sql.strip() for name, sql in QUERIES.items()}
