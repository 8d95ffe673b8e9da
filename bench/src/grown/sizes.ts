import type pg from "pg";
import { fmt } from "../report";
import { cloneTables } from "./clone";

export interface TableSize {
  table: string;
  /** Live rows (pg_class.reltuples, exact after the VACUUM the loader runs). */
  rows: number;
  /** Heap and TOAST (pg_table_size). */
  tableBytes: number;
  /** Every index of the table (pg_indexes_size). */
  indexBytes: number;
  indexes: { name: string; bytes: number }[];
}

/** Sizes of the tables a run writes, as PostgreSQL stores them now. */
export async function tableSizes(sql: pg.Client): Promise<TableSize[]> {
  const { rows } = await sql.query<{ table: string; rows: string; tableBytes: string; indexBytes: string }>(
    `SELECT c.relname AS table, greatest(c.reltuples, 0)::bigint AS rows, pg_table_size(c.oid) AS "tableBytes", pg_indexes_size(c.oid) AS "indexBytes"
     FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace
     WHERE s.nspname = 'public' AND c.relname = ANY($1)`,
    [cloneTables],
  );
  const { rows: idx } = await sql.query<{ table: string; name: string; bytes: string }>(
    `SELECT t.relname AS table, i.relname AS name, pg_relation_size(i.oid) AS bytes
     FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid JOIN pg_namespace s ON s.oid = t.relnamespace
     WHERE s.nspname = 'public' AND t.relname = ANY($1) ORDER BY 3 DESC`,
    [cloneTables],
  );
  return cloneTables.map((table) => {
    const r = rows.find((x) => x.table === table);
    return {
      table,
      rows: Number(r?.rows ?? 0),
      tableBytes: Number(r?.tableBytes ?? 0),
      indexBytes: Number(r?.indexBytes ?? 0),
      indexes: idx.filter((i) => i.table === table).map((i) => ({ name: i.name, bytes: Number(i.bytes) })),
    };
  });
}

const mb = (b: number) => b / 1024 / 1024;

/** The sizes as a table: rows, table, index and total MB, bytes per row, and MB per million steps. */
export function sizeLines(sizes: TableSize[], steps: number): string[] {
  const perM = (b: number) => (steps > 0 ? fmt(mb(b) / (steps / 1e6), 0) : "-");
  const line = (cells: string[], largest: string) =>
    `${cells[0]?.padEnd(11)} ${cells.slice(1).map((c, i) => c.padStart([12, 9, 9, 9, 6, 24][i] ?? 9)).join(" ")}  ${largest}`;
  const lines = [line(["table", "rows", "table MB", "index MB", "total MB", "B/row", "MB per M steps (t+i=all)"], "largest index")];
  const sum = { table: 0, index: 0 };
  for (const s of sizes) {
    const bytes = s.tableBytes + s.indexBytes;
    sum.table += s.tableBytes;
    sum.index += s.indexBytes;
    const biggest = s.indexes[0];
    lines.push(
      line(
        [s.table, fmt(s.rows), fmt(mb(s.tableBytes)), fmt(mb(s.indexBytes)), fmt(mb(bytes)), s.rows ? fmt(bytes / s.rows) : "-", `${perM(s.tableBytes)}+${perM(s.indexBytes)}=${perM(bytes)}`],
        biggest ? `${biggest.name} ${fmt(mb(biggest.bytes))} MB` : "-",
      ),
    );
  }
  const all = sum.table + sum.index;
  lines.push(line(["all", "", fmt(mb(sum.table)), fmt(mb(sum.index)), fmt(mb(all)), "", `${perM(sum.table)}+${perM(sum.index)}=${perM(all)}`], `(${fmt(steps)} steps)`));
  lines.push("indexes, MB (MB per million steps):");
  for (const s of sizes.filter((x) => x.indexes.some((i) => i.bytes > 8192 * 4))) {
    lines.push(`  ${s.table}: ${s.indexes.map((i) => `${i.name} ${fmt(mb(i.bytes))} (${perM(i.bytes)})`).join(", ")}`);
  }
  return lines;
}
