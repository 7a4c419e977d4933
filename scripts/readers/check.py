"""Every table of a neardup output, and an export, read as analysts read them.

Each table folder (and the export folder) is opened as a user would open it:

    pd.read_parquet(folder)                       pandas, default dtypes
    pyarrow.dataset.dataset(folder).to_table()    pyarrow
    pl.scan_parquet(folder + "/*.parquet")        polars
    spark.read.parquet(folder)                    Spark
    read_parquet(folder/*.parquet)                DuckDB, the reference

and for each reader the script checks that the folder opens at all (no file
in it trips a folder read), that every column has the type docs/tables.md
gives it (for an export: the type DuckDB reads), and that every value
equals DuckDB's: the same rows, in any order, with ints exact (an id read
as a float64 is an error even where it happens to round to itself), floats
to the last bit, nulls as nulls, lists element for element.

    check.py --tables-doc docs/tables.md [--queries DOC.md ...] [--output NAME=DIR ...] OUTPUT [EXPORT]

With --queries, every ```sql block of each file runs in each reader too
(pandas' and pyarrow's tables queried by DuckDB's engine, polars' by
polars' SQL, Spark's by Spark SQL) and must answer as DuckDB does over
the files; the blocks' '/tmp/NAME/T/*.parquet' are table T of the
output --output NAME=DIR gives (OUTPUT for /tmp/neardup-out).

Prints one line per table and reader, and exits 1 if any reader read any
table wrongly or not at all.
"""

import argparse
import math
import os
import re
import sys

import duckdb
import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.dataset as ds

# What each reader calls each type of docs/tables.md.
TYPES = {
    "int64": {
        "duckdb": {"BIGINT"},
        "pyarrow": {"int64"},
        "polars": {"Int64"},
        "spark": {"LongType()"},
        "pandas": {"int64", "Int64"},
    },
    "int32": {
        "duckdb": {"INTEGER"},
        "pyarrow": {"int32"},
        "polars": {"Int32"},
        "spark": {"IntegerType()"},
        "pandas": {"int32", "Int32"},
    },
    "double": {
        "duckdb": {"DOUBLE"},
        "pyarrow": {"double"},
        "polars": {"Float64"},
        "spark": {"DoubleType()"},
        "pandas": {"float64", "Float64"},
    },
    "bool": {
        "duckdb": {"BOOLEAN"},
        "pyarrow": {"bool"},
        "polars": {"Boolean"},
        "spark": {"BooleanType()"},
        "pandas": {"bool", "boolean"},
    },
    "string": {
        "duckdb": {"VARCHAR"},
        "pyarrow": {"string", "large_string"},
        "polars": {"String"},
        "spark": {"StringType()"},
        "pandas": {"object", "str", "string"},
    },
    "list of int64": {
        "duckdb": {"BIGINT[]"},
        "pyarrow": {
            f"{kind}<{name}: int64{null}>"
            for kind in ("list", "large_list")
            for name in ("element", "item")
            for null in ("", " not null")
        },
        "polars": {"List(Int64)"},
        "spark": {"ArrayType(LongType(), True)", "ArrayType(LongType(), False)"},
        "pandas": {"object"},
    },
}

# pandas reads an integer column with nulls as float64 by default, and
# float64 holds integers exactly only up to 2**53: an id column read so is
# wrong, even where its values happen to round to themselves.
PANDAS_FLOAT = {"float64", "Float64", "float32"}


def documented_columns(path):
    """Each table's columns in docs/tables.md: {table: {column: (type, nullable)}}.

    A row whose type is empty and whose meaning is "as in `T`" takes the
    column of table T; a section that says "Same columns as `T`" takes T's.
    """
    tables, refs, same, table = {}, [], {}, None
    for line in open(path, encoding="utf-8"):
        m = re.match(r"^## `([a-z_]+)`", line)
        if m:
            table = m.group(1)
            tables[table] = {}
            continue
        if line.startswith("## "):
            table = None
        if not table:
            continue
        m = re.search(r"Same columns as `([a-z_]+)`", line)
        if m:
            same[table] = m.group(1)
        m = re.match(r"^\| ((?:`[a-z_]+`(?:, )?)+) \|\s*([a-z0-9 ,]*?)(, null)?\s*\| (.*)\|", line)
        if not m:
            continue
        cols = re.findall(r"`([a-z_]+)`", m.group(1))
        # One type for all the row's columns, or one each ("int64, string, null").
        types = m.group(2).split(", ") if m.group(2) else []
        if types and all(t in TYPES for t in types) and len(types) in (1, len(cols)):
            for col, typ in zip(cols, types * len(cols) if len(types) == 1 else types):
                tables[table][col] = (typ, bool(m.group(3)))
        elif m.group(2) == "":
            ref = re.search(r"as in `([a-z_]+)`", m.group(4))
            if ref:
                refs += [(table, col, ref.group(1)) for col in cols]
    for table, col, other in refs:
        tables[table][col] = tables[other][col]
    for table, other in same.items():
        tables[table] = dict(tables[other])
    return tables


def canon(v, null_nan=False):
    """A value in one form for every reader: ('i', int), ('f', hex), ..."""
    if v is None or v is pd.NA:
        return None
    if isinstance(v, (bool, np.bool_)):
        return ("b", bool(v))
    if isinstance(v, (int, np.integer)):
        return ("i", int(v))
    if isinstance(v, (float, np.floating)):
        v = float(v)
        if math.isnan(v):
            # pandas has no null for a float or str column but NaN, and
            # neardup writes no NaN: there it is a null.
            return None if null_nan else ("f", "nan")
        return ("f", v.hex())
    if isinstance(v, str):
        return ("s", v)
    if isinstance(v, (bytes, bytearray, memoryview)):
        return ("y", bytes(v))
    if isinstance(v, (list, tuple, np.ndarray, pa.Array)):
        return ("l", tuple(canon(x, null_nan) for x in list(v)))
    raise TypeError(f"no canonical form for {type(v).__name__} {v!r}")


def sorted_rows(rows, null_nan=False):
    out = [tuple(canon(v, null_nan) for v in r) for r in rows]
    out.sort(key=repr)
    return out


def read_duckdb(con, glob):
    rel = con.sql(f"SELECT * FROM read_parquet('{glob}')")
    return rel.columns, [str(t) for t in rel.types], rel.fetchall()


def read_pandas(folder):
    df = pd.read_parquet(folder)
    cols = list(df.columns)
    types = [str(df[c].dtype) for c in cols]
    rows = zip(*(df[c].tolist() for c in cols)) if cols else []
    return cols, types, list(rows)


def read_pyarrow(folder):
    t = ds.dataset(folder, format="parquet").to_table()
    return t.column_names, [str(f.type) for f in t.schema], [tuple(r.values()) for r in t.to_pylist()]


def read_polars(folder):
    df = pl.scan_parquet(os.path.join(folder, "*.parquet")).collect()
    return df.columns, [str(t) for t in df.dtypes], df.rows()


def read_spark(spark, folder):
    df = spark.read.parquet(folder)
    return df.columns, [repr(f.dataType) for f in df.schema.fields], [tuple(r) for r in df.collect()]


def first_difference(cols, got, want):
    if len(got) != len(want):
        return f"{len(got)} rows, DuckDB {len(want)}"
    for g, w in zip(got, want):
        if g != w:
            for c, a, b in zip(cols, g, w):
                if a != b:
                    return f"column {c}: {a!r}, DuckDB {b!r}"
    return None


def check_folder(name, folder, glob, documented, readers, con):
    """Checks one table (or export) folder with every reader; returns the failures."""
    failures = []
    want_cols, want_types, want_rows = read_duckdb(con, glob)
    want = sorted_rows(want_rows)
    if documented is not None:
        if set(documented) != set(want_cols):
            failures.append(f"{name}: columns {sorted(want_cols)}, docs/tables.md {sorted(documented)}")
    for reader, read in readers:
        try:
            cols, types, rows = read(folder)
        except Exception as e:  # a folder the reader cannot open at all
            failures.append(f"{name}: {reader} cannot read {folder}: {str(e).splitlines()[0]}")
            print(f"FAIL {name:12} {reader:8} cannot read it")
            continue
        bad = []
        if cols != want_cols:
            bad.append(f"columns {cols}, DuckDB {want_cols}")
        for c, t in zip(cols, types):
            if documented is not None and c in documented:
                typ, nullable = documented[c]
                ok = TYPES[typ][reader]
                if t not in ok:
                    bad.append(f"column {c} read as {t}, want one of {sorted(ok)} ({typ}{', null' if nullable else ''})")
            elif documented is None and c in want_cols:
                dt = want_types[want_cols.index(c)]
                if reader == "pandas" and dt in ("BIGINT", "INTEGER") and t in PANDAS_FLOAT:
                    bad.append(f"column {c} ({dt}) read as {t}")
        if cols == want_cols:
            diff = first_difference(cols, sorted_rows(rows, null_nan=(reader == "pandas")), want)
            if diff:
                bad.append(diff)
        if bad:
            failures.extend(f"{name}: {reader}: {b}" for b in bad)
            print(f"FAIL {name:12} {reader:8} {len(rows)} rows: {bad[0]}" + (f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""))
        else:
            print(f"ok   {name:12} {reader:8} {len(rows)} rows, {len(cols)} columns")
    return failures


def answer_difference(got, want, null_nan):
    """How a query's answer differs from DuckDB's, row by row in the order
    the query gives (each documented query orders its rows fully), or
    None. Every value must be equal, except that floats may differ by
    0.01: the docs round what they show to two decimals, and the engines
    round a value at a half differently (DuckDB away from zero on the
    scaled double, Spark half up on its exact decimal value, polars
    otherwise), so round(x, 2) of one value can be 0.62 in one and 0.63
    in another."""
    if len(got) != len(want):
        return f"{len(got)} rows, DuckDB {len(want)}"
    for n, (g, w) in enumerate(zip(got, want)):
        g, w = [canon(v, null_nan) for v in g], [canon(v) for v in w]
        if len(g) != len(w):
            return f"row {n}: {len(g)} columns, DuckDB {len(w)}"
        for k, (a, b) in enumerate(zip(g, w)):
            if a == b:
                continue
            if a and b and a[0] == b[0] == "f" and abs(float.fromhex(a[1]) - float.fromhex(b[1])) <= 0.01 + 1e-12:
                continue
            return f"row {n}, column {k + 1}: {a!r}, DuckDB {b!r}"
    return None


def doc_queries(path):
    """The SQL statements of every ```sql block of a Markdown file, as
    (source, statement) pairs, source naming the file and the query's
    number in it."""
    text = open(path, encoding="utf-8").read()
    out = []
    for block in re.findall(r"```sql\n(.*?)```", text, re.S):
        for stmt in block.split(";"):
            lines = [l for l in stmt.strip().splitlines() if not l.strip().startswith("--")]
            q = "\n".join(lines).strip()
            if q:
                out.append((f"{os.path.basename(path)} query {len(out) + 1}", q))
    if not out:
        raise SystemExit(f"{path}: no SQL blocks")
    return out


TABLE_FILES = re.compile(r"'/tmp/([\w.-]+)/(\w+)/\*\.parquet'")


def view_name(output, table):
    return re.sub(r"\W", "_", output) + "__" + table


def check_queries(outputs, queries, spark):
    """Runs each query over each reader's tables and compares the answer
    with DuckDB's over the files; returns the failures. A query's table
    files ('/tmp/NAME/T/*.parquet', as the docs write them) are the table
    T of outputs[NAME]. pandas' and pyarrow's tables are queried by
    DuckDB's engine (they have no SQL of their own), polars' by polars'
    SQL, Spark's by Spark SQL."""
    failures = []
    used = sorted({m for _, q in queries for m in TABLE_FILES.findall(q)})
    missing = [f"/tmp/{o}" for o, _ in used if o not in outputs]
    if missing:
        raise SystemExit(f"the queries read {', '.join(sorted(set(missing)))}: give --output NAME=DIR for each")
    ref = duckdb.connect()
    frames = {"pandas": duckdb.connect(), "pyarrow": duckdb.connect()}
    pl_frames = {}
    for out, t in used:
        folder = os.path.join(outputs[out], t)
        v = view_name(out, t)
        ref.sql(f"CREATE VIEW {v} AS SELECT * FROM read_parquet('{os.path.join(folder, '*.parquet')}')")
        frames["pandas"].register(v, pd.read_parquet(folder))
        frames["pyarrow"].register(v, ds.dataset(folder, format="parquet").to_table())
        pl_frames[v] = pl.scan_parquet(os.path.join(folder, "*.parquet"))
        spark.read.parquet(folder).createOrReplaceTempView(v)
    ctx = pl.SQLContext(pl_frames)
    runs = [
        ("pandas", lambda q: frames["pandas"].sql(q).fetchall()),
        ("pyarrow", lambda q: frames["pyarrow"].sql(q).fetchall()),
        ("polars", lambda q: ctx.execute(q).collect().rows()),
        ("spark", lambda q: [tuple(r) for r in spark.sql(q).collect()]),
    ]
    for name, q in queries:
        q = TABLE_FILES.sub(lambda m: view_name(m.group(1), m.group(2)), q)
        want = ref.sql(q).fetchall()
        for reader, run in runs:
            try:
                got = run(q)
            except Exception as e:
                failures.append(f"{name}: {reader} cannot run it: {str(e).splitlines()[0]}")
                print(f"FAIL {name:24} {reader:8} cannot run it")
                continue
            diff = answer_difference(got, want, null_nan=(reader == "pandas"))
            if diff:
                failures.append(f"{name}: {reader}: {diff}")
                print(f"FAIL {name:24} {reader:8} {diff}")
            else:
                print(f"ok   {name:24} {reader:8} {len(got)} rows")
    return failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tables-doc", required=True)
    ap.add_argument("--queries", action="append", default=[], help="a Markdown file whose ```sql blocks every reader runs too (repeatable)")
    ap.add_argument("--output", dest="outputs", action="append", default=[], metavar="NAME=DIR",
                    help="the output the queries' '/tmp/NAME/...' files stand for (OUTPUT stands for /tmp/neardup-out)")
    ap.add_argument("output")
    ap.add_argument("export", nargs="?")
    args = ap.parse_args()

    documented = documented_columns(args.tables_doc)
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("neardup-readers")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    readers = [
        ("pandas", read_pandas),
        ("pyarrow", read_pyarrow),
        ("polars", read_polars),
        ("spark", lambda f: read_spark(spark, f)),
    ]
    con = duckdb.connect()
    failures = []
    tables = sorted(
        d
        for d in os.listdir(args.output)
        if os.path.isdir(os.path.join(args.output, d)) and not d.startswith(("_", "."))
    )
    if not tables:
        failures.append(f"{args.output}: no table folders")
    for t in tables:
        folder = os.path.join(args.output, t)
        if t not in documented:
            failures.append(f"{t}: not a table of docs/tables.md")
        failures += check_folder(t, folder, os.path.join(folder, "*.parquet"), documented.get(t), readers, con)
    if args.queries:
        outputs = {"neardup-out": args.output}
        outputs.update(o.split("=", 1) for o in args.outputs)
        failures += check_queries(outputs, [q for f in args.queries for q in doc_queries(f)], spark)
    if args.export:
        failures += check_folder("export", args.export, os.path.join(args.export, "*.parquet"), None, readers, con)
    spark.stop()
    if failures:
        print(f"readers: {len(failures)} failures:")
        for f in failures:
            print("  " + f)
        sys.exit(1)
    print(f"readers: {len(tables)} tables{' and the export' if args.export else ''} read alike by pandas, pyarrow, polars and Spark, equal to DuckDB")


if __name__ == "__main__":
    main()
