/**
 * The expand/contract rules (docs/operations.md, "Upgrading under traffic") as a static check of one migration's
 * SQL: the statements that can break the release before it while it still runs are refused, unless the migration
 * says it is a contract for that object (`-- contract: <name>`) and the previous release's source does not use it.
 * Pure: `usesOf(name)` answers where the previous release uses a name (the test asks `git grep` at that commit).
 */
export interface RuleViolation {
  statement: string;
  rule: string;
  /** The name a `-- contract: <name>` line would have to give (and the previous release must not use). */
  object: string;
  /** Where the previous release uses it (empty when no contract line names it). */
  usedAt: string[];
}

interface Refusal {
  rule: string;
  object: string;
}

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

const name = `"?([A-Za-z_][A-Za-z0-9_]*)"?`;
const re = (s: string) => new RegExp(s, "i");

/** What one statement would break for the release before it, if anything. */
export function refusals(statement: string): Refusal[] {
  const s = statement;
  const found: Refusal[] = [];
  let m: RegExpExecArray | null;
  if ((m = re(`^DROP (TABLE|VIEW|MATERIALIZED VIEW|FUNCTION|TRIGGER|INDEX|TYPE|SEQUENCE)( CONCURRENTLY)?( IF EXISTS)? ${name}`).exec(s))) {
    const kind = (m[1] as string).toLowerCase();
    // A trigger's table: the previous release relies on what the trigger does to the rows it writes.
    const on = kind === "trigger" ? re(` ON ${name}`).exec(s)?.[1] : undefined;
    found.push({ rule: `drops ${kind} ${m[4]}, which the previous release may still use`, object: (on ?? m[4]) as string });
  }
  if ((m = re(`^ALTER TABLE( IF EXISTS)?( ONLY)? ${name}(.*)$`).exec(s))) {
    const table = m[3] as string;
    const body = m[4] as string;
    if (re(`^ RENAME TO `).test(body)) found.push({ rule: `renames table ${table}`, object: table });
    if ((m = re(`^ RENAME (COLUMN )?${name} TO`).exec(body))) found.push({ rule: `renames column ${m[2]} of ${table}`, object: m[2] as string });
    for (const action of splitActions(body)) found.push(...actionRefusals(table, action));
  }
  if ((m = re(`^REVOKE .* ON (TABLE |FUNCTION |SEQUENCE )?${name}`).exec(s))) found.push({ rule: `revokes a grant on ${m[2]} the previous release's roles may need`, object: m[2] as string });
  return found;
}

/** ALTER TABLE's comma-separated actions (commas inside parentheses kept). */
function splitActions(body: string): string[] {
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

function actionRefusals(table: string, action: string): Refusal[] {
  let m: RegExpExecArray | null;
  if ((m = re(`^DROP COLUMN( IF EXISTS)? ${name}`).exec(action))) return [{ rule: `drops column ${m[2]} of ${table}`, object: m[2] as string }];
  if ((m = re(`^ALTER (COLUMN )?${name} (SET DATA )?TYPE `).exec(action))) return [{ rule: `changes the type of ${table}.${m[2]}`, object: m[2] as string }];
  // The previous release writes rows without the column, or relying on its default: only safe once it no longer writes the table.
  if ((m = re(`^ALTER (COLUMN )?${name} SET NOT NULL`).exec(action))) return [{ rule: `makes ${table}.${m[2]} NOT NULL`, object: table }];
  if ((m = re(`^ALTER (COLUMN )?${name} DROP DEFAULT`).exec(action))) return [{ rule: `drops the default of ${table}.${m[2]}`, object: table }];
  if ((m = re(`^ADD (COLUMN )?(IF NOT EXISTS )?${name} (.*)$`).exec(action)) && !re("^CONSTRAINT$").test(m[3] as string)) {
    const def = m[4] as string;
    if (/\bNOT NULL\b/i.test(def) && !/\bDEFAULT\b/i.test(def) && !/\bGENERATED\b/i.test(def)) return [{ rule: `adds ${table}.${m[3]} NOT NULL without a default`, object: table }];
    return [];
  }
  if ((m = re(String.raw`^ADD CONSTRAINT ${name} (CHECK|FOREIGN KEY)\b`).exec(action)) && !/\bNOT VALID\b/i.test(action)) {
    return [{ rule: `adds constraint ${m[1]} without NOT VALID (add it NOT VALID, VALIDATE CONSTRAINT in a later migration)`, object: table }];
  }
  if ((m = re(String.raw`^ADD (CONSTRAINT ${name} )?(UNIQUE|PRIMARY KEY|EXCLUDE)\b`).exec(action))) return [{ rule: `adds a ${(m[3] as string).toLowerCase()} constraint to ${table}, which the previous release's writes may break`, object: table }];
  // A CHECK may be dropped (to widen it); a unique or foreign key is what the previous release's ON CONFLICT and joins rely on.
  if ((m = re(`^DROP CONSTRAINT( IF EXISTS)? ${name}`).exec(action)) && !/_check$/i.test(m[2] as string)) return [{ rule: `drops constraint ${m[2]} of ${table}`, object: m[2] as string }];
  if (re(`^(DISABLE|ENABLE) TRIGGER`).test(action)) return [{ rule: `turns a trigger of ${table} off or on`, object: table }];
  return [];
}

/** The `-- contract: a, b` lines of a migration: the objects it says the previous release no longer uses. */
export function contractNames(sql: string): Set<string> {
  const names = new Set<string>();
  for (const m of sql.matchAll(/^\s*--\s*contract:\s*(.+)$/gim)) for (const n of (m[1] as string).split(/[\s,]+/)) if (n) names.add(n.toLowerCase());
  return names;
}

/** The `-- speed only: a, b` lines of a migration: indexes it drops that the previous release reads through for speed alone. */
export function speedOnlyNames(sql: string): Set<string> {
  const names = new Set<string>();
  for (const m of sql.matchAll(/^\s*--\s*speed only:\s*(.+)$/gim)) for (const n of (m[1] as string).split(/[\s,]+/)) if (n) names.add(n.toLowerCase());
  return names;
}

/**
 * The indexes a schema dump (prisma/schema.sql) creates without UNIQUE: dropping one makes no statement fail, only
 * slower. A unique index or a constraint's index is what ON CONFLICT and the keys rely on, and is never among them.
 */
export function plainIndexes(schemaSql: string): Set<string> {
  return new Set([...schemaSql.matchAll(/^CREATE INDEX "?([A-Za-z_][A-Za-z0-9_]*)"? ON /gim)].map((m) => (m[1] as string).toLowerCase()));
}

/**
 * Every statement of `sql` that could break the previous release, unless a contract line names its object and the
 * previous release's source does not use it (`usesOf` returns where it does: files or lines, empty for none), or it
 * drops an index a `-- speed only:` line names and the previous release's schema has as a plain (non-unique) index.
 */
export function checkMigration(sql: string, usesOf: (name: string) => string[], previousPlainIndexes: Set<string> = new Set()): RuleViolation[] {
  const contract = contractNames(sql);
  const speedOnly = speedOnlyNames(sql);
  const out: RuleViolation[] = [];
  const all = statements(sql);
  // A table this migration creates is new to every process: nothing of the previous release can use it yet.
  const created = new Set(all.flatMap((st) => re(`^CREATE (UNLOGGED )?TABLE( IF NOT EXISTS)? ${name}`).exec(st)?.[3]?.toLowerCase() ?? []));
  const tableOf = (st: string) => re(`^(?:ALTER TABLE(?: IF EXISTS)?(?: ONLY)?|REVOKE .* ON(?: TABLE)?) ${name}`).exec(st)?.[1]?.toLowerCase();
  for (const statement of all) {
    if (created.has(tableOf(statement) ?? "")) continue;
    for (const r of refusals(statement)) {
      const object = r.object.toLowerCase();
      if (r.rule.startsWith("drops index ") && speedOnly.has(object) && previousPlainIndexes.has(object)) continue;
      if (!contract.has(object)) {
        out.push({ statement, rule: r.rule, object: r.object, usedAt: [] });
        continue;
      }
      const usedAt = usesOf(r.object);
      if (usedAt.length) out.push({ statement, rule: `${r.rule}: a contract, but the previous release still uses ${r.object}`, object: r.object, usedAt });
    }
  }
  return out;
}

/** The stored functions a file of packages/core/src/store/sql/functions defines, as `name(type, type)` (argument names left out). */
export function functionSignatures(sql: string): string[] {
  const out: string[] = [];
  for (const m of sql.matchAll(/CREATE (?:OR REPLACE )?FUNCTION\s+"?([A-Za-z_][A-Za-z0-9_]*)"?\s*\(([^)]*)\)/gi)) {
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
