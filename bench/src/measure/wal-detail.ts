import pg from "pg";

/**
 * Where a window's WAL went: the records the meter counts as the measured database's (a block of it, or a transaction
 * that wrote one, its commit record included), grouped by resource manager and record type and by relation, with the
 * full-page images apart. Read after the window, from the meter's database (pg_walinspect), while the temporary
 * replication slot still holds the segments; the relations are named in the measured database itself
 * (pg_filenode_relation maps a block reference's file node through that database's catalog).
 */
export interface WalGroup {
  /** "Heap/INSERT", or a relation's name ("runs", "steps_pkey"), or "(no block: Transaction/COMMIT)". */
  name: string;
  records: number;
  bytes: number;
  /** Of `bytes`, the full-page images (fpi_length). */
  fpiBytes: number;
}

export interface WalDetail {
  byRecord: WalGroup[];
  byRelation: WalGroup[];
  /** Both at once ("steps Heap/UPDATE"): which table's which writes (absent in results from before it was measured). */
  byRelationRecord?: WalGroup[];
}

// A record is attributed to the relation of its first block reference (blkref #0): a heap update's old and new pages,
// a B-tree split's pages, are one relation's.
const detailSql = `
  WITH r AS (
    SELECT xid, resource_manager AS rm, record_type AS rt, record_length AS len, fpi_length AS fpi,
           block_ref ~ $3 AS ours,
           regexp_match(block_ref, 'blkref #0: rel ([0-9]+)/([0-9]+)/([0-9]+)') AS rel,
           CASE WHEN resource_manager = 'Transaction' AND record_type = 'COMMIT'
                THEN string_to_array(COALESCE(substring(description from 'subxacts: ([0-9 ]+)'), ''), ' ') END AS subxacts
    FROM pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn)
  ), tx AS (SELECT DISTINCT xid FROM r WHERE ours AND xid <> '0'),
  counted AS (
    SELECT * FROM r
    WHERE (subxacts IS NULL AND (ours OR xid IN (SELECT xid FROM tx)))
       OR (subxacts IS NOT NULL AND (xid IN (SELECT xid FROM tx)
           OR EXISTS (SELECT 1 FROM unnest(subxacts) s WHERE s <> '' AND s::xid IN (SELECT xid FROM tx))))
  )
  SELECT rm, rt, rel[1]::int8 AS spc, rel[2]::int8 AS dbo, rel[3]::int8 AS node,
         count(*)::float8 AS records, sum(len)::float8 AS bytes, sum(fpi)::float8 AS fpi
  FROM counted GROUP BY 1, 2, 3, 4, 5`;

interface Row {
  rm: string;
  rt: string;
  spc: string | null;
  dbo: string | null;
  node: string | null;
  records: number;
  bytes: number;
  fpi: number;
}

function group(rows: Row[], key: (r: Row) => string): WalGroup[] {
  const m = new Map<string, WalGroup>();
  for (const r of rows) {
    const k = key(r);
    const g = m.get(k) ?? { name: k, records: 0, bytes: 0, fpiBytes: 0 };
    g.records += Number(r.records);
    g.bytes += Number(r.bytes);
    g.fpiBytes += Number(r.fpi);
    m.set(k, g);
  }
  return [...m.values()].sort((a, b) => b.bytes - a.bytes);
}

/** The breakdown of [lsnStart, lsnEnd) for the database `oid` (named `database`), through the meter's connection `c`. */
export async function walDetail(
  c: { query: (text: string, values?: unknown[]) => Promise<pg.QueryResult> },
  databaseUrl: string,
  oid: number,
  lsnStart: string,
  lsnEnd: string,
): Promise<WalDetail> {
  const rows = (await c.query(detailSql, [lsnStart, lsnEnd, `rel [0-9]+/${oid}/`])).rows as Row[];
  // File nodes of the measured database, named there (the default tablespace is 0 to pg_filenode_relation).
  const names = new Map<string, string>();
  const nodes = [...new Set(rows.filter((r) => r.node !== null && Number(r.dbo) === oid).map((r) => `${r.spc}/${r.node}`))];
  if (nodes.length) {
    const db = new pg.Client({ connectionString: databaseUrl, application_name: "holdfast-bench-meter" });
    await db.connect();
    try {
      const { rows: named } = await db.query<{ key: string; name: string | null }>(
        `SELECT k AS key, pg_filenode_relation(CASE WHEN split_part(k, '/', 1)::oid = dt.dattablespace THEN 0 ELSE split_part(k, '/', 1)::oid END,
                                               split_part(k, '/', 2)::oid)::regclass::text AS name
         FROM unnest($1::text[]) k, (SELECT dattablespace FROM pg_database WHERE datname = current_database()) dt`,
        [nodes],
      );
      for (const n of named) if (n.name) names.set(n.key, n.name);
    } finally {
      await db.end().catch(() => {});
    }
  }
  const relation = (r: Row) => {
    if (r.node === null) return `(no block: ${r.rm}/${r.rt})`;
    if (Number(r.dbo) === 0) return "(shared catalogs)";
    if (Number(r.dbo) !== oid) return "(another database's block)";
    return names.get(`${r.spc}/${r.node}`) ?? `(file node ${r.node}, gone by the end)`;
  };
  return {
    byRecord: group(rows, (r) => `${r.rm}/${r.rt}`),
    byRelation: group(rows, relation),
    byRelationRecord: group(rows, (r) => `${relation(r)} ${r.rm}/${r.rt}`),
  };
}
