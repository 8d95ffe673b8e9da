import type pg from "pg";

/**
 * Finished runs written in bulk as copies of one real run: every row the engine wrote for it (runs, steps, effects,
 * timers, run_events, outbox) copied per clone with generate_series, so the grown database holds exactly what real
 * runs of that automation write (the same columns, JSON and index keys), only more of it. Per clone n:
 * - ids time-ordered as the engine's (UUID version 7 digits): 12 hex digits of the clone's start in milliseconds,
 *   '7', then the last 19 of md5('grown:' || n) for the run, of md5(its id || ':' || n) for a step or timer (32 hex
 *   digits in all); timeline and outbox ids from their sequences, in the template's order;
 * - the template's run id inside text and JSON (an effect's key, an outbox payload) replaced by the clone's, and an
 *   outbox payload's stepId by the clone's step;
 * - every timestamp moved back by the clone's age, `baseSeconds + (largest - n) * spacingSeconds`, so clone 1 is the
 *   oldest and clone `largest` finished most recently: loading clones in number order writes them in the order real
 *   runs were written (each index grows at its right edge, as it does in production, instead of splitting pages in
 *   the middle); the clones are spread back over the span (the rows a retention would keep);
 * - outbox rows only for clones younger than `outboxKeepSeconds` (the outbox retention has removed the older ones).
 * Columns are read from the catalogue, so a column added later is copied too. The loader sets
 * session_replication_role = replica (no triggers, no foreign-key checks: the copies are consistent by construction)
 * and synchronous_commit off.
 */
export interface CloneSpec {
  templateRunId: string;
  /** Clone numbers from..to (inclusive); numbers are global, so loading in steps never repeats an id. */
  from: number;
  to: number;
  /** The largest clone number to be loaded (the most recent clone). */
  largest: number;
  baseSeconds: number;
  spacingSeconds: number;
  outboxKeepSeconds: number;
}

export const cloneTables = ["runs", "steps", "effects", "timers", "run_events", "outbox"] as const;
type Table = (typeof cloneTables)[number];

interface Column {
  name: string;
  type: string;
}

async function columnsOf(sql: pg.Client, table: Table): Promise<Column[]> {
  const { rows } = await sql.query<{ name: string; type: string }>(
    `SELECT column_name AS name, data_type AS type FROM information_schema.columns
     WHERE table_schema = 'public' AND table_name = $1 AND is_generated = 'NEVER' ORDER BY ordinal_position`,
    [table],
  );
  return rows;
}

/** A clone's id after its prefix: its start's 12 hex digits, the version digit 7, then 19 digits of md5(seed). */
const orderedDigits = (seed: string) => `g.stamp || '7' || substr(md5(${seed}), 14)`;
const newRun = `('run_' || ${orderedDigits("'grown:' || g.n")})`;
const newId = (col: string) => `(CASE WHEN t.${col} IS NULL THEN NULL ELSE left(t.${col}, 4) || ${orderedDigits(`t.${col} || ':' || g.n`)} END)`;

function expression(table: Table, c: Column): string | null {
  const col = `"${c.name}"`;
  if (c.name === "id") return table === "runs" ? newRun : table === "run_events" || table === "outbox" ? null : newId(col);
  if (c.name === "run_id") return newRun;
  if (c.name === "step_id") return newId(col);
  if (table === "runs" && c.name === "start_key") return `t.start_key || ':' || g.n`;
  if (table === "outbox" && c.name === "payload")
    return `(CASE WHEN t.payload ? 'stepId' THEN replace(replace(t.payload::text, $1, ${newRun}), t.payload->>'stepId', left(t.payload->>'stepId', 4) || ${orderedDigits("(t.payload->>'stepId') || ':' || g.n")})
             ELSE replace(t.payload::text, $1, ${newRun}) END)::jsonb`;
  if (c.type === "timestamp with time zone") return `t.${col} - g.age`;
  if (c.type === "text") return `replace(t.${col}, $1, ${newRun})`;
  if (c.type === "jsonb") return `replace(t.${col}::text, $1, ${newRun})::jsonb`;
  return `t.${col}`;
}

const keyOf = (table: Table) => (table === "runs" ? "id" : "run_id");
const templateOf = (table: Table) => `grown_template_${table}`;

/**
 * Sets the template run's rows aside (temporary tables on this connection) and empties the tables (TRUNCATE, with
 * whatever refers to a run): the clones go into empty tables and indexes, each at its right edge, as real runs of
 * one organisation would have gone in over the days before. (Cloned beside the run they copy, whose ids are the
 * newest, every clone's index entry would land just left of it and split pages in the middle: indexes a third larger
 * than a database that grew in time order.) Returns the rows set aside per table.
 */
export async function setTemplateAside(sql: pg.Client, templateRunId: string): Promise<Record<Table, number>> {
  const rows = {} as Record<Table, number>;
  for (const table of cloneTables) {
    const r = await sql.query(`CREATE TEMP TABLE ${templateOf(table)} AS SELECT * FROM ${table} WHERE ${keyOf(table)} = $1`, [templateRunId]);
    rows[table] = r.rowCount ?? 0;
  }
  await sql.query(`TRUNCATE ${cloneTables.join(", ")} CASCADE`);
  return rows;
}

/** One statement per table for clones from..to (after setTemplateAside); returns the rows written per table. */
export async function cloneRuns(sql: pg.Client, s: CloneSpec): Promise<Record<Table, number>> {
  const written = {} as Record<Table, number>;
  // Per clone: its age, and its start (the template run's, moved back by that age) as the ids' 12 hex digits.
  const clones = `(SELECT c.n, c.age,
      lpad(to_hex(floor(extract(epoch FROM (SELECT r.created_at FROM ${templateOf("runs")} r WHERE r.id = $1) - c.age) * 1000)::bigint), 12, '0') AS stamp
    FROM (SELECT n, make_interval(secs => $3::float8 + ($6::int - n) * $4::float8) AS age FROM generate_series($2::int, $5::int) n) c) g`;
  await sql.query("SET session_replication_role = replica");
  await sql.query("SET synchronous_commit = off");
  for (const table of cloneTables) {
    const cols = (await columnsOf(sql, table)).map((c) => [c.name, expression(table, c)] as const).filter(([, e]) => e !== null);
    const key = `t.${keyOf(table)}`;
    // Clone by clone (the oldest first), each in the template's order: the rows go in as the engine wrote them.
    const order = `ORDER BY g.n, ${table === "effects" ? "t.key" : "t.id"}`;
    const young = table === "outbox" ? "AND g.age < make_interval(secs => $7::float8)" : "";
    const text = `INSERT INTO ${table} (${cols.map(([n]) => `"${n}"`).join(", ")})
      SELECT ${cols.map(([, e]) => e).join(", ")} FROM ${templateOf(table)} t CROSS JOIN ${clones}
      WHERE ${key} = $1 ${young} ${order}`;
    const values: unknown[] = [s.templateRunId, s.from, s.baseSeconds, s.spacingSeconds, s.to, s.largest];
    if (table === "outbox") values.push(s.outboxKeepSeconds);
    const r = await sql.query(text, values);
    written[table] = r.rowCount ?? 0;
  }
  await sql.query("RESET session_replication_role");
  return written;
}
