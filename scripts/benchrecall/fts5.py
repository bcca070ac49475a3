"""The SQLite FTS5 side of `benchrecall --fts5` (fts5.go).

Driven by the Go side over stdin and stdout, one JSON object a line each
way, so that its query rounds can alternate with the recall index's:

  {"cmd": "stage", "rows": F, "dir": D}
      loads F (JSON lines [session, seq, role, text], one a message) into
      the plain table D/stage.db:m, untimed; answers the SQLite and Python
      versions, the rows and text bytes, and the CPU of reading every
      staged text back (what each build below also spends reading them).
  {"cmd": "build", "name": N, "tokenize": T, "dir": D}
      creates D/N.db holding the FTS5 table msg (schema in SCHEMA) and
      fills it from the staged rows in one transaction, then runs
      'optimize'; answers the process CPU and wall time of each and the
      file's size (and its free pages).
  {"cmd": "queries", "name": N, "snippet": K, "order": O, "matches": [Q, ...]}
      runs each MATCH expression Q on N's table: the first 20 rows by O,
      "rank" (bm25) or "rowid" (the rows were staged newest session
      first, so: the newest, as dsh-refls answers), with a snippet() of K
      tokens per row; answers per query the wall and process CPU
      nanoseconds and the rows returned.
  {"cmd": "quit"}

CPU is time.process_time_ns(): the CPU of this whole process, SQLite's
work and the little Python around each statement.
"""

import json
import os
import sqlite3
import sys
import time

SCHEMA = ("CREATE VIRTUAL TABLE msg USING fts5("
          "text, role UNINDEXED, session UNINDEXED, seq UNINDEXED, tokenize='{tokenize}')")
QUERY = ("SELECT session, seq, role, snippet(msg, 0, '[', ']', '…', {snippet}) "
         "FROM msg WHERE msg MATCH ? ORDER BY {order} LIMIT 20")
ORDERS = ("rank", "rowid")


def now():
    return time.process_time_ns(), time.perf_counter_ns()


def since(t):
    c, w = now()
    return c - t[0], w - t[1]


def stage(rows, d):
    path = os.path.join(d, "stage.db")
    if os.path.exists(path):
        os.remove(path)
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("CREATE TABLE m(session TEXT, seq INTEGER, role TEXT, text TEXT)")
    con.execute("BEGIN")
    n = nbytes = 0
    with open(rows, encoding="utf-8") as f:
        batch = []
        for line in f:
            r = json.loads(line)
            batch.append(r)
            n += 1
            nbytes += len(r[3].encode("utf-8", "surrogatepass"))
            if len(batch) == 10000:
                con.executemany("INSERT INTO m VALUES (?, ?, ?, ?)", batch)
                batch = []
        con.executemany("INSERT INTO m VALUES (?, ?, ?, ?)", batch)
    con.execute("COMMIT")
    t = now()
    con.execute("SELECT sum(length(text)) FROM m").fetchone()
    read_cpu, read_wall = since(t)
    con.close()
    return {"sqlite": sqlite3.sqlite_version, "python": sys.version.split()[0],
            "rows": n, "textBytes": nbytes, "readCPU": read_cpu, "readWall": read_wall}


def build(name, tokenize, d):
    path = os.path.join(d, name + ".db")
    if os.path.exists(path):
        os.remove(path)
    con = sqlite3.connect(path, isolation_level=None)
    con.execute(SCHEMA.format(tokenize=tokenize))
    con.execute("ATTACH ? AS stage", (os.path.join(d, "stage.db"),))
    t = now()
    con.execute("BEGIN")
    con.execute("INSERT INTO msg(text, role, session, seq) SELECT text, role, session, seq FROM stage.m ORDER BY rowid")
    con.execute("COMMIT")
    build_cpu, build_wall = since(t)
    t = now()
    con.execute("INSERT INTO msg(msg) VALUES ('optimize')")
    opt_cpu, opt_wall = since(t)
    con.execute("DETACH stage")
    page = con.execute("PRAGMA page_size").fetchone()[0]
    free = con.execute("PRAGMA freelist_count").fetchone()[0] * page
    con.close()
    return {"buildCPU": build_cpu, "buildWall": build_wall, "optimizeCPU": opt_cpu,
            "optimizeWall": opt_wall, "fileBytes": os.path.getsize(path), "freeBytes": free,
            "schema": SCHEMA.format(tokenize=tokenize)}


conns = {}


def queries(name, snippet, order, matches, d):
    con = conns.get(name)
    if con is None:
        con = conns[name] = sqlite3.connect(os.path.join(d, name + ".db"), isolation_level=None)
    if order not in ORDERS:
        raise ValueError("order %r is none of %s" % (order, ORDERS))
    sql = QUERY.format(snippet=int(snippet), order=order)
    wall, cpu, rows = [], [], []
    for q in matches:
        t = now()
        got = con.execute(sql, (q,)).fetchall()
        c, w = since(t)
        cpu.append(c)
        wall.append(w)
        rows.append(len(got))
    return {"wall": wall, "cpu": cpu, "rows": rows, "sql": sql}


def main():
    d = None
    for line in sys.stdin:
        m = json.loads(line)
        cmd = m["cmd"]
        if cmd == "quit":
            break
        try:
            if cmd == "stage":
                d = m["dir"]
                out = stage(m["rows"], d)
            elif cmd == "build":
                out = build(m["name"], m["tokenize"], m["dir"])
            elif cmd == "queries":
                out = queries(m["name"], m["snippet"], m["order"], m["matches"], d)
            else:
                out = {"error": "unknown command " + cmd}
        except (sqlite3.Error, OSError, ValueError) as e:
            out = {"error": "%s: %s" % (cmd, e)}
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
