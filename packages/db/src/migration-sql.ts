/**
 * Reading a migration's SQL for the expand/contract check (migration-rules.ts): its statements, the names they give,
 * the notes a migration writes for the check, and what the previous release's schema dump (prisma/schema.sql) holds.
 */

/** The SQL's statements without comments, each on one line with its whitespace collapsed; dollar-quoted bodies kept whole. */
export function statements(sql: string): string[] {
  const out: string[] = [];
  let current = "";
  let i = 0;
  while (i < sql.length) {
    const rest = sql.slice(i);
    const dollar = /^\$[A-Za-z_]*\$/.exec(rest);
    if (rest.startsWith("--")) {
      const end = sql.indexOf("\n", i);
      i = end === -1 ? sql.length : end;
    } else if (rest.startsWith("/*")) {
      const end = sql.indexOf("*/", i + 2);
      i = end === -1 ? sql.length : end + 2;
    } else if (rest[0] === "'") {
      const end = /^'(?:[^']|'')*'/.exec(rest)?.[0] ?? rest;
      current += end;
      i += end.length;
    } else if (dollar) {
      const tag = dollar[0];
      const end = sql.indexOf(tag, i + tag.length);
      const body = end === -1 ? rest : sql.slice(i, end + tag.length);
      current += body;
      i += body.length;
    } else if (rest[0] === ";") {
      if (current.trim()) out.push(current.replace(/\s+/g, " ").trim());
      current = "";
      i++;
    } else {
      current += rest[0];
      i++;
    }
  }
  if (current.trim()) out.push(current.replace(/\s+/g, " ").trim());
  return out;
}

/** `[schema.]name`, either part quoted or not: one capture group, the bare name (the object the rules speak of). */
export const name = `(?:"?[A-Za-z_][A-Za-z0-9_$]*"?\\.)?"?([A-Za-z_][A-Za-z0-9_$]*)"?`;
export const re = (s: string) => new RegExp(s, "i");

/** A comma-separated list (ALTER TABLE's actions, a DROP's names) with commas inside parentheses kept. */
export function splitList(body: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let current = "";
  for (const ch of body) {
    if (ch === "(") depth++;
    if (ch === ")") depth--;
    if (ch === "," && depth === 0) {
      out.push(current.trim());
      current = "";
    } else current += ch;
  }
  if (current.trim()) out.push(current.trim());
  return out;
}

/** The bare names of a list such as `a, public.b, "c"(text, int)`. */
export function namesOf(list: string): string[] {
  return splitList(list).flatMap((item) => re(`^${name}`).exec(item)?.[1] ?? []);
}

function noteNames(sql: string, note: string): Set<string> {
  const names = new Set<string>();
  for (const m of sql.matchAll(new RegExp(`^\\s*--\\s*${note}:\\s*(.+)$`, "gim"))) for (const n of (m[1] as string).split(/[\s,]+/)) if (n) names.add(n.toLowerCase());
  return names;
}

/** The `-- contract: a, b` lines of a migration: the objects it says the previous release no longer uses. */
export const contractNames = (sql: string) => noteNames(sql, "contract");

/** The `-- speed only: a, b` lines of a migration: indexes it drops that the previous release reads through for speed alone. */
export const speedOnlyNames = (sql: string) => noteNames(sql, "speed only");

/** Whether a line `-- reviewed do-block: <why>` says a person read the migration's DO blocks against the previous release. */
export const reviewedDoBlocks = (sql: string) => /^\s*--\s*reviewed do-block:/im.test(sql);

/**
 * The indexes a schema dump (prisma/schema.sql) creates without UNIQUE: dropping one makes no statement fail, only
 * slower. A unique index or a constraint's index is what ON CONFLICT and the keys rely on, and is never among them.
 */
export function plainIndexes(schemaSql: string): Set<string> {
  return new Set([...schemaSql.matchAll(new RegExp(`^CREATE INDEX ${name} ON `, "gim"))].map((m) => (m[1] as string).toLowerCase()));
}

/** The tables a schema dump (prisma/schema.sql) creates: the ones the previous release's processes may use. */
export function tableNames(schemaSql: string): Set<string> {
  return new Set([...schemaSql.matchAll(new RegExp(`^CREATE (?:UNLOGGED )?TABLE (?:IF NOT EXISTS )?${name}`, "gim"))].map((m) => (m[1] as string).toLowerCase()));
}

/** The stored functions a file of packages/core/src/store/sql/functions defines, as `name(type, type)` (argument names left out). */
export function functionSignatures(sql: string): string[] {
  const out: string[] = [];
  for (const m of sql.matchAll(new RegExp(`CREATE (?:OR REPLACE )?FUNCTION\\s+${name}\\s*\\(([^)]*)\\)`, "gi"))) {
    const args = (m[2] as string)
      .split(",")
      .map((a) => a.trim().replace(/\s+DEFAULT\s+.*$/i, ""))
      .filter(Boolean)
      .map((a) => a.replace(/^(IN|OUT|INOUT|VARIADIC)\s+/i, ""))
      // "p_lane text" names its argument, "text" does not.
      .map((a) => normaliseType(isType(a) ? a : a.replace(/^\S+\s+/, "")));
    out.push(`${(m[1] as string).toLowerCase()}(${args.join(", ")})`);
  }
  return out;
}

const typeWords = /^(text|int|integer|bigint|smallint|boolean|bool|jsonb|json|float8|double precision|real|numeric|timestamptz|timestamp|date|uuid|regclass|bytea)\b/i;
const isType = (arg: string) => typeWords.test(arg.trim());
function normaliseType(t: string): string {
  return t
    .trim()
    .toLowerCase()
    .replace(/^integer\b/, "int")
    .replace(/^int4\b/, "int")
    .replace(/^float8\b/, "double precision")
    .replace(/^bool\b/, "boolean");
}

/** The plain column list of `(a, "b", c)` (lower case), or undefined when an item is an expression or has options. */
export function plainColumns(list: string): string[] | undefined {
  const cols = splitList(list).map((c) => re(`^${name}$`).exec(c.trim())?.[1]?.toLowerCase());
  return cols.every((c): c is string => Boolean(c)) ? cols : undefined;
}

/**
 * A CREATE UNIQUE INDEX statement's parts: its name when it gives one, its table (`tableName` as written), whether it
 * says IF NOT EXISTS, and its plain columns (none when it has an expression, a WHERE, an INCLUDE or options).
 */
export function uniqueIndexStatement(statement: string): { index?: string; table: string; tableName: string; ifNotExists: boolean; columns?: string[] } | undefined {
  const m = re(`^CREATE UNIQUE INDEX(?: CONCURRENTLY)?( IF NOT EXISTS)?(?: (?!ON )${name})? ON(?: ONLY)? ${name}(.*)$`).exec(statement);
  if (!m) return undefined;
  const list = /^(?: USING btree)? \(([^()]*)\)$/i.exec(m[4] as string)?.[1];
  const columns = list === undefined ? undefined : plainColumns(list);
  return { ...(m[2] ? { index: m[2].toLowerCase() } : {}), table: (m[3] as string).toLowerCase(), tableName: m[3] as string, ifNotExists: Boolean(m[1]), ...(columns ? { columns } : {}) };
}

/**
 * The unique keys a schema dump holds, by table: primary keys, unique constraints and unique indexes on plain columns
 * without a WHERE (a partial or expression index says nothing of the columns' other rows).
 */
export function uniqueKeys(schemaSql: string): Map<string, string[][]> {
  const keys = new Map<string, string[][]>();
  const add = (table: string, list: string) => {
    const cols = plainColumns(list);
    if (cols) keys.set(table.toLowerCase(), [...(keys.get(table.toLowerCase()) ?? []), cols]);
  };
  for (const m of schemaSql.matchAll(new RegExp(`^ALTER TABLE ONLY ${name}\\s+ADD CONSTRAINT ${name} (?:PRIMARY KEY|UNIQUE) \\(([^)]*)\\);$`, "gim"))) add(m[1] as string, m[3] as string);
  for (const m of schemaSql.matchAll(new RegExp(`^CREATE UNIQUE INDEX ${name} ON (?:ONLY )?${name} USING btree \\(([^)]*)\\);$`, "gim"))) add(m[2] as string, m[3] as string);
  return keys;
}

/** The columns a schema dump declares NOT NULL, by table (from its CREATE TABLE statements). */
export function notNullColumns(schemaSql: string): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  // A table's body ends at its own closing line (`);`, or `)` before `WITH (...)`); a column is a line of four spaces,
  // its name and a type in pg_dump's lower case (a CHECK's continuation lines start otherwise: WHEN, ELSE, a parenthesis).
  for (const m of schemaSql.matchAll(new RegExp(`^CREATE (?:UNLOGGED )?TABLE ${name} \\(\\n([\\s\\S]*?)\\n\\)(?:;|\\nWITH \\()`, "gim"))) {
    const cols = new Set<string>();
    for (const line of (m[2] as string).split("\n")) {
      const c = /^ {4}"?([a-z_][a-z0-9_$]*)"? [a-z].*\bNOT NULL\b/.exec(line);
      if (c && c[1] !== "constraint") cols.add(c[1] as string);
    }
    out.set((m[1] as string).toLowerCase(), cols);
  }
  return out;
}

/** Every index and constraint name a schema dump gives: a CREATE ... IF NOT EXISTS of one of them makes nothing. */
export function indexAndConstraintNames(schemaSql: string): Set<string> {
  const names = new Set<string>();
  for (const m of schemaSql.matchAll(new RegExp(`^CREATE (?:UNIQUE )?INDEX ${name} ON `, "gim"))) names.add((m[1] as string).toLowerCase());
  for (const m of schemaSql.matchAll(new RegExp(`^\\s+ADD CONSTRAINT ${name} `, "gim"))) names.add((m[1] as string).toLowerCase());
  return names;
}
