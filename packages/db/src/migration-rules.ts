/**
 * The expand/contract rules (docs/operations.md, "Upgrading under traffic") as a static check of one migration's
 * SQL: the statements that can break the release before it while it still runs are refused, unless the migration
 * says it is a contract for that object (`-- contract: <name>`) and the previous release's source does not use it.
 * Pure: `usesOf(name)` answers where the previous release uses a name (the test asks `git grep` at that commit).
 */
import { contractNames, indexAndConstraintNames, name, namesOf, notNullColumns, plainColumns, plainIndexes, re, reviewedDoBlocks, speedOnlyNames, splitList, statements, tableNames, uniqueIndexStatement, uniqueKeys } from "./migration-sql";

export { contractNames, functionSignatures, plainIndexes, speedOnlyNames, statements, tableNames } from "./migration-sql";

/** What the previous release's schema dump (prisma/schema.sql at its commit) holds, as far as the rules ask. */
export interface PreviousSchema {
  /** Its plain (non-unique) indexes: a `-- speed only:` line may drop one. */
  plainIndexes?: Set<string>;
  /** Its tables: a new unique index, trigger or restrictive policy is refused only on one of them. */
  tables?: Set<string>;
  /** Its unique keys by table: a new unique index holding all the columns of one refuses nothing that key allows. */
  uniqueKeys?: Map<string, string[][]>;
  /** Its NOT NULL columns by table: a primary key on columns all NOT NULL already refuses no write for being one. */
  notNull?: Map<string, Set<string>>;
  /** Its index and constraint names: a CREATE UNIQUE INDEX IF NOT EXISTS of one of them makes nothing. */
  names?: Set<string>;
}

/** Everything the rules read from the previous release's schema dump. */
export function previousSchema(schemaSql: string): Required<PreviousSchema> {
  return {
    plainIndexes: plainIndexes(schemaSql),
    tables: tableNames(schemaSql),
    uniqueKeys: uniqueKeys(schemaSql),
    notNull: notNullColumns(schemaSql),
    names: indexAndConstraintNames(schemaSql),
  };
}

export interface RuleViolation {
  statement: string;
  rule: string;
  /** The name a `-- contract: <name>` line would have to give (and the previous release must not use). */
  object: string;
  /** Where the previous release uses it (empty when no contract line names it). */
  usedAt: string[];
}

export interface Refusal {
  rule: string;
  object: string;
  /** What lifts it: a contract line (the default), a `-- reviewed do-block:` line, or nothing. */
  unless?: "contract" | "reviewed do-block" | "never";
  /** A dropped index: a `-- speed only:` line lifts it when the previous release's schema has it as a plain index. */
  index?: true;
  /** Refused only when this table is in the previous release's schema (a new unique index, trigger or restrictive policy). */
  onTable?: string;
  /** `table.column` whose default is set: not refused when this migration adds the column. */
  column?: string;
  /** A new unique index's plain columns (no WHERE, no expression): not refused when a previous unique key of `onTable` is among them. */
  uniqueColumns?: string[];
  /** A key made from an index (ADD CONSTRAINT ... USING INDEX): not refused when this migration makes that index (checked there). */
  usingIndex?: { table: string; index: string; primaryKey: boolean };
}

const dropKinds = "TABLE|VIEW|MATERIALIZED VIEW|FUNCTION|PROCEDURE|TRIGGER|INDEX|TYPE|SEQUENCE|SCHEMA|DOMAIN|EXTENSION|ROLE|POLICY";

/** DROP <kind> [CONCURRENTLY] [IF EXISTS] a, b, ...: one refusal per name; a CASCADE is refused whatever the notes say. */
function dropRefusals(s: string): Refusal[] {
  const m = re(`^DROP (${dropKinds})( CONCURRENTLY)?( IF EXISTS)? (.*?)( CASCADE| RESTRICT)?$`).exec(s);
  if (!m) return [];
  const kind = (m[1] as string).toLowerCase();
  const list = m[4] as string;
  const found: Refusal[] = [];
  if (m[5] && /CASCADE/i.test(m[5])) found.push({ rule: `drops ${kind} ${list} with CASCADE, which drops whatever depends on it unnamed`, object: list, unless: "never" });
  // A trigger's table: the previous release relies on what the trigger does to the rows it writes. A policy: its own name.
  const on = re(`^${name} ON ${name}`).exec(list);
  if (kind === "trigger" || kind === "policy") {
    const what = on?.[1] ?? list;
    return [...found, { rule: `drops ${kind} ${what}, which the previous release may still use`, object: (kind === "trigger" ? (on?.[2] ?? what) : what) as string }];
  }
  for (const n of namesOf(list)) found.push({ rule: `drops ${kind} ${n}, which the previous release may still use`, object: n, ...(kind === "index" ? { index: true as const } : {}) });
  return found;
}

/** ALTER TABLE [IF EXISTS] [ONLY] t <actions>. */
function alterTableRefusals(s: string): Refusal[] {
  const m = re(`^ALTER TABLE( IF EXISTS)?( ONLY)? ${name}(.*)$`).exec(s);
  if (!m) return [];
  const table = m[3] as string;
  const body = m[4] as string;
  let r: RegExpExecArray | null;
  if (re(`^ RENAME TO `).test(body)) return [{ rule: `renames table ${table}`, object: table }];
  if ((r = re(`^ RENAME CONSTRAINT ${name} TO`).exec(body))) return [{ rule: `renames constraint ${r[1]} of ${table}`, object: r[1] as string }];
  if ((r = re(`^ RENAME (COLUMN )?${name} TO`).exec(body))) return [{ rule: `renames column ${r[2]} of ${table}`, object: r[2] as string }];
  return splitList(body).flatMap((action) => actionRefusals(table, action));
}

function columnActionRefusals(table: string, action: string): Refusal[] | undefined {
  let m: RegExpExecArray | null;
  if ((m = re(`^ALTER (COLUMN )?${name} (SET DATA )?TYPE `).exec(action))) return [{ rule: `changes the type of ${table}.${m[2]}`, object: m[2] as string }];
  // The previous release writes rows without the column, or relying on its default: only safe once it no longer writes the table.
  if ((m = re(`^ALTER (COLUMN )?${name} SET NOT NULL`).exec(action))) return [{ rule: `makes ${table}.${m[2]} NOT NULL`, object: table }];
  if ((m = re(`^ALTER (COLUMN )?${name} DROP DEFAULT`).exec(action))) return [{ rule: `drops the default of ${table}.${m[2]}`, object: table }];
  // A new default changes what the previous release's inserts write.
  if ((m = re(`^ALTER (COLUMN )?${name} SET DEFAULT `).exec(action))) return [{ rule: `changes the default of ${table}.${m[2]}`, object: table, column: `${table}.${m[2]}`.toLowerCase() }];
  if ((m = re(`^ADD (COLUMN )?(IF NOT EXISTS )?${name} (.*)$`).exec(action)) && !re("^CONSTRAINT$").test(m[3] as string)) {
    const def = m[4] as string;
    if (/\bNOT NULL\b/i.test(def) && !/\bDEFAULT\b/i.test(def) && !/\bGENERATED\b/i.test(def)) return [{ rule: `adds ${table}.${m[3]} NOT NULL without a default`, object: table }];
    return [];
  }
  return undefined;
}

function actionRefusals(table: string, action: string): Refusal[] {
  let m: RegExpExecArray | null;
  const cascade: Refusal[] = /^DROP\b.*\bCASCADE$/i.test(action) ? [{ rule: `drops from ${table} with CASCADE, which drops whatever depends on it unnamed`, object: table, unless: "never" }] : [];
  if ((m = re(`^DROP CONSTRAINT( IF EXISTS)? ${name}`).exec(action))) {
    // A CHECK may be dropped (to widen it); a unique or foreign key is what the previous release's ON CONFLICT and joins rely on.
    return /_check$/i.test(m[2] as string) ? cascade : [...cascade, { rule: `drops constraint ${m[2]} of ${table}`, object: m[2] as string }];
  }
  if ((m = re(`^DROP (COLUMN )?(IF EXISTS )?${name}`).exec(action))) return [...cascade, { rule: `drops column ${m[3]} of ${table}`, object: m[3] as string }];
  const column = columnActionRefusals(table, action);
  if (column) return column;
  if ((m = re(String.raw`^ADD CONSTRAINT ${name} (CHECK|FOREIGN KEY)\b`).exec(action)) && !/\bNOT VALID\b/i.test(action)) {
    return [{ rule: `adds constraint ${m[1]} without NOT VALID (add it NOT VALID, VALIDATE CONSTRAINT in a later migration)`, object: table }];
  }
  if ((m = re(`^ADD (CONSTRAINT ${name} )?(UNIQUE|PRIMARY KEY) USING INDEX ${name}$`).exec(action))) {
    const kind = (m[3] as string).toLowerCase();
    return [{ rule: `adds a ${kind} constraint to ${table}, which the previous release's writes may break`, object: table, usingIndex: { table: table.toLowerCase(), index: (m[4] as string).toLowerCase(), primaryKey: kind === "primary key" } }];
  }
  if ((m = re(String.raw`^ADD (CONSTRAINT ${name} )?(UNIQUE|PRIMARY KEY|EXCLUDE)\b`).exec(action))) return [{ rule: `adds a ${(m[3] as string).toLowerCase()} constraint to ${table}, which the previous release's writes may break`, object: table }];
  if (re(`^(DISABLE|ENABLE) TRIGGER`).test(action)) return [{ rule: `turns a trigger of ${table} off or on`, object: table }];
  if (re(`^(ENABLE|DISABLE|FORCE|NO FORCE) ROW LEVEL SECURITY`).test(action)) return [{ rule: `changes row level security of ${table}`, object: table }];
  return [];
}

/** Statements other than DROP and ALTER TABLE that can break the previous release. */
function otherRefusals(s: string): Refusal[] {
  let m: RegExpExecArray | null;
  const unique = uniqueIndexStatement(s);
  if (unique) {
    return [{ rule: `creates a unique index on ${unique.tableName}, which the previous release's writes may break`, object: unique.tableName, onTable: unique.table, ...(unique.columns ? { uniqueColumns: unique.columns } : {}) }];
  }
  if ((m = re(`^CREATE (OR REPLACE )?(CONSTRAINT )?TRIGGER ${name} .*? ON ${name}`).exec(s))) {
    return [{ rule: `creates trigger ${m[3]} on ${m[4]}, which acts on the previous release's writes`, object: m[3] as string, onTable: (m[4] as string).toLowerCase() }];
  }
  if ((m = re(`^CREATE POLICY ${name} ON ${name} AS RESTRICTIVE\\b`).exec(s))) {
    return [{ rule: `creates restrictive policy ${m[1]} on ${m[2]}, which may hide rows from the previous release`, object: m[1] as string, onTable: (m[2] as string).toLowerCase() }];
  }
  if ((m = re(`^ALTER POLICY ${name} ON ${name}`).exec(s))) return [{ rule: `changes policy ${m[1]} of ${m[2]}`, object: m[1] as string }];
  if ((m = re(`^ALTER TYPE ${name} RENAME\\b`).exec(s))) return [{ rule: `renames type ${m[1]} or one of its values or attributes`, object: m[1] as string }];
  if ((m = re(`^ALTER INDEX( IF EXISTS)? ${name} RENAME\\b`).exec(s))) return [{ rule: `renames index ${m[2]}`, object: m[2] as string }];
  if ((m = re(`^ALTER (ROLE|USER) ${name}`).exec(s))) return [{ rule: `alters role ${m[2]}, which the previous release's processes log in as or switch to`, object: m[2] as string }];
  if ((m = re(`^TRUNCATE( TABLE)?( ONLY)? (.*?)( RESTART IDENTITY| CONTINUE IDENTITY)?( CASCADE| RESTRICT)?$`).exec(s))) {
    const cascade: Refusal[] = m[5] && /CASCADE/i.test(m[5]) ? [{ rule: `truncates ${m[3]} with CASCADE, which empties the tables referencing it unnamed`, object: m[3] as string, unless: "never" }] : [];
    return [...cascade, ...namesOf(m[3] as string).map((t) => ({ rule: `truncates ${t}, deleting rows the previous release may read`, object: t }))];
  }
  if ((m = re(`^REVOKE .* ON (TABLE |FUNCTION |SEQUENCE )?(.*?) FROM `).exec(s))) {
    return namesOf(m[2] as string).map((n) => ({ rule: `revokes a grant on ${n} the previous release's roles may need`, object: n }));
  }
  if (re(`^DO\\b`).test(s)) return [{ rule: "runs a DO block, which cannot be checked statically (a person reads it: -- reviewed do-block: <why>)", object: "do-block", unless: "reviewed do-block" }];
  return [];
}

/** What one statement would break for the release before it, if anything. */
export function refusals(statement: string): Refusal[] {
  return [...dropRefusals(statement), ...alterTableRefusals(statement), ...otherRefusals(statement)];
}

/** The table a statement works on, when it names one (ALTER TABLE, REVOKE, CREATE INDEX or TRIGGER, a policy's, a trigger's). */
const tablePatterns = [
  `^ALTER TABLE(?: IF EXISTS)?(?: ONLY)? ${name}`,
  `^REVOKE .* ON(?: TABLE)? ${name}`,
  `^CREATE (?:UNIQUE )?INDEX .*?\\bON(?: ONLY)? ${name}`,
  `^CREATE (?:OR REPLACE )?(?:CONSTRAINT )?TRIGGER .*? ON ${name}`,
  `^(?:CREATE|ALTER|DROP) POLICY .*? ON ${name}`,
  `^DROP TRIGGER .*? ON ${name}`,
].map(re);
const tableOf = (st: string) => tablePatterns.map((p) => p.exec(st)?.[1]?.toLowerCase()).find(Boolean);

/** The `table.column`s this migration adds (ALTER TABLE ... ADD [COLUMN]). */
function addedColumns(all: string[]): Set<string> {
  const out = new Set<string>();
  for (const st of all) {
    const m = re(`^ALTER TABLE(?: IF EXISTS)?(?: ONLY)? ${name}(.*)$`).exec(st);
    if (!m) continue;
    for (const action of splitList(m[2] as string)) {
      const a = re(`^ADD (?:COLUMN )?(?:IF NOT EXISTS )?${name} `).exec(action);
      if (a && !re("^CONSTRAINT$").test(a[1] as string)) out.add(`${m[1]}.${a[1]}`.toLowerCase());
    }
  }
  return out;
}

/**
 * The unique indexes this migration makes on plain columns: index name -> its table and columns. A CREATE ... IF NOT
 * EXISTS of a name the previous schema may have (`previousNames`; all names when it is not known) makes nothing: a key
 * made USING it would be built on whatever index has that name.
 */
function uniqueIndexesMade(all: string[], previousNames: Set<string> | undefined): Map<string, { table: string; columns: string[] }> {
  const out = new Map<string, { table: string; columns: string[] }>();
  for (const st of all) {
    const u = uniqueIndexStatement(st);
    if (!u?.index || !u.columns) continue;
    if (u.ifNotExists && (!previousNames || previousNames.has(u.index))) continue;
    out.set(u.index, { table: u.table, columns: u.columns });
  }
  return out;
}

/**
 * Whether a refused-by-default key cannot refuse a write the previous schema allows: a unique index holding every
 * column of a unique key the table already has (rows unique on the key are unique on more columns), or a key made
 * from such an index made here (a primary key only on columns already NOT NULL, as it makes them so).
 */
function keyAllowed(r: Refusal, made: Map<string, { table: string; columns: string[] }>, previous: PreviousSchema): boolean {
  if (r.uniqueColumns && r.onTable) {
    const cols = r.uniqueColumns;
    return (previous.uniqueKeys?.get(r.onTable) ?? []).some((key) => key.every((c) => cols.includes(c)));
  }
  if (r.usingIndex) {
    const index = made.get(r.usingIndex.index);
    if (!index || index.table !== r.usingIndex.table) return false;
    const notNull = previous.notNull?.get(index.table);
    return !r.usingIndex.primaryKey || (notNull !== undefined && index.columns.every((c) => notNull.has(c)));
  }
  return false;
}

/**
 * Every statement of `sql` that could break the previous release, unless a contract line names its object and the
 * previous release's source does not use it (`usesOf` returns where it does: files or lines, empty for none), or it
 * drops an index a `-- speed only:` line names and the previous release's schema has as a plain (non-unique) index.
 * A CASCADE is refused whatever the lines say; a DO block is allowed only with a `-- reviewed do-block:` line.
 * `previous` is what the previous release's schema holds (previousSchema): a new unique index, trigger or restrictive
 * policy is refused only on one of its tables, and a CREATE TABLE (IF NOT EXISTS) of one does not make it new; left
 * out, every table not created here counts. A unique index a key of that schema already implies, and a key made
 * from it, are allowed (keyAllowed).
 */
export function checkMigration(sql: string, usesOf: (name: string) => string[], previous: PreviousSchema = {}): RuleViolation[] {
  const previousPlainIndexes = previous.plainIndexes ?? new Set<string>();
  const previousTables = previous.tables;
  const contract = contractNames(sql);
  const speedOnly = speedOnlyNames(sql);
  const reviewed = reviewedDoBlocks(sql);
  const out: RuleViolation[] = [];
  const all = statements(sql);
  // A table this migration creates is new to every process, unless the previous release's schema has it (IF NOT EXISTS).
  const created = new Set(all.flatMap((st) => re(`^CREATE (?:UNLOGGED )?TABLE(?: IF NOT EXISTS)? ${name}`).exec(st)?.[1]?.toLowerCase() ?? []).filter((t) => !previousTables?.has(t)));
  const added = addedColumns(all);
  const made = uniqueIndexesMade(all, previous.names);
  for (const statement of all) {
    if (created.has(tableOf(statement) ?? "")) continue;
    for (const r of refusals(statement)) {
      const object = r.object.toLowerCase();
      if (r.unless === "never" || (r.unless === "reviewed do-block" && !reviewed)) out.push({ statement, rule: r.rule, object: r.object, usedAt: [] });
      if (r.unless === "never" || r.unless === "reviewed do-block") continue;
      if (r.index && speedOnly.has(object) && previousPlainIndexes.has(object)) continue;
      if (r.onTable && previousTables && !previousTables.has(r.onTable)) continue;
      if (r.column && added.has(r.column)) continue;
      if (keyAllowed(r, made, previous)) continue;
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
