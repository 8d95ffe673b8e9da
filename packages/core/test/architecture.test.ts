import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * The shape of the code, read from the source files (issue 18 item 2): SQL only in core's table modules, sql/ below
 * every domain folder, no import cycle inside core (between files or between folders, type imports included),
 * providers without step code, and pure modules that reach no IO.
 */

const repo = resolve(import.meta.dirname, "../../..");
const core = join(repo, "packages/core/src");

function sourceFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === "node_modules" || name === "generated" || name.startsWith(".") ? [] : sourceFiles(path);
    return /\.tsx?$/.test(name) && !name.endsWith(".d.ts") ? [path] : [];
  });
}

/** SQL written in TypeScript: Prisma's raw statements and fragments, and pg's query() given a statement. */
const sqlPattern = /\$(queryRaw|executeRaw)(Unsafe)?\b|\bPrisma\.(sql|raw|join)\b|\.query\s*(<[^>]*>)?\(\s*[`'"{]/;

function sqlOutside(roots: string[], allowed: (file: string) => boolean): string[] {
  return roots.flatMap(sourceFiles).flatMap((file) =>
    allowed(file)
      ? []
      : readFileSync(file, "utf8")
          .split("\n")
          .flatMap((line, i) => (sqlPattern.test(line) ? [`${relative(repo, file)}:${i + 1}: ${line.trim().slice(0, 100)}`] : [])),
  );
}

const importPattern = /^\s*(?:import|export)\s+(type\s+)?(?:[^'";]*?\s+from\s+)?["']([^"']+)["']/gm;

interface Import {
  to: string;
  typeOnly: boolean;
}

/** The relative imports of each file under `root` (type imports too), resolved to files. */
function importGraph(root: string): Map<string, Import[]> {
  const graph = new Map<string, Import[]>();
  for (const file of sourceFiles(root)) {
    const imports: Import[] = [];
    for (const m of readFileSync(file, "utf8").matchAll(importPattern)) {
      const spec = m[2] as string;
      if (!spec.startsWith(".")) continue;
      const base = resolve(dirname(file), spec);
      const to = [base, `${base}.ts`, `${base}.tsx`, join(base, "index.ts")].find((c) => existsSync(c) && statSync(c).isFile());
      if (to) imports.push({ to, typeOnly: m[1] !== undefined });
    }
    graph.set(file, imports);
  }
  return graph;
}

/** Every cycle's members (strongly connected components of more than one node, or a node importing itself). */
export function cycles(edges: Map<string, Set<string>>): string[][] {
  let index = 0;
  const stack: string[] = [];
  const onStack = new Set<string>();
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const found: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, idx.get(w) as number));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop() as string;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || edges.get(v)?.has(v)) found.push(scc.sort());
    }
  };
  for (const v of edges.keys()) if (!idx.has(v)) visit(v);
  return found;
}

/** A file's concern: its folder under core/src, or the file itself at the top (catalog.ts, errors.ts, env.ts ...). */
const concernOf = (file: string) => relative(core, file).split("/")[0] as string;

const graph = importGraph(core);

/** The import graph with files grouped by `key`; an import inside one group counts only when `selfEdges`. */
function edgesBy(key: (file: string) => string, selfEdges: boolean, withTypes = true): Map<string, Set<string>> {
  const edges = new Map<string, Set<string>>();
  for (const [from, imports] of graph) {
    const a = key(from);
    if (!edges.has(a)) edges.set(a, new Set());
    for (const { to, typeOnly } of imports) {
      if (typeOnly && !withTypes) continue;
      const b = key(to);
      if (a !== b || selfEdges) edges.get(a)?.add(b);
    }
  }
  return edges;
}

/** The imports from one concern to another that make up a cycle, in words. */
function explain(members: string[]): string {
  const inCycle = new Set(members);
  const lines: string[] = [];
  for (const [from, imports] of graph) {
    for (const { to } of imports) {
      const a = concernOf(from);
      const b = concernOf(to);
      if (a !== b && inCycle.has(a) && inCycle.has(b)) lines.push(`${relative(core, from)} -> ${relative(core, to)}`);
    }
  }
  return `${members.join(", ")}:\n  ${lines.join("\n  ")}`;
}

describe("live SQL in one place", () => {
  it("the detector sees each way of writing SQL, and not a tRPC procedure's .query", () => {
    for (const line of [
      "await tx.$queryRaw`SELECT 1`",
      "db.$executeRaw`DELETE FROM x`",
      'db.$queryRawUnsafe("SELECT 1")',
      "const where = Prisma.sql`a = b`",
      'await client.query("LISTEN holdfast_outbox")',
      "await sql.query<{ n: number }>({ name: 'x', text: 'SELECT 1' })",
      "await pool.query(`SELECT 1`)",
    ]) {
      expect(sqlPattern.test(line), line).toBe(true);
    }
    for (const line of ["list: viewerProcedure.query(({ ctx }) => automationsList(ctx.db, ctx.org.id)),", "  .query(async ({ ctx, input }) => {"]) {
      expect(sqlPattern.test(line), line).toBe(false);
    }
  });

  it("no SQL statement outside packages/core/src/sql in core, the CLI, the queue package or any app", () => {
    const roots = [core, join(repo, "packages/cli/src"), join(repo, "packages/queue/src"), ...readdirSync(join(repo, "apps")).map((a) => join(repo, "apps", a, "src"))];
    const found = sqlOutside(roots, (file) => file.startsWith(join(core, "sql") + "/"));
    expect(found, `SQL belongs in a table module under packages/core/src/sql (named Table + Verb + Guard):\n${found.join("\n")}`).toEqual([]);
  });
});

describe("dependencies inside core", () => {
  it("sql/ imports only sql/, types/ and the leaf modules catalog.ts and errors.ts", () => {
    const allowed = new Set(["sql", "types", "catalog.ts", "errors.ts"]);
    const wrong = [...graph]
      .filter(([file]) => concernOf(file) === "sql")
      .flatMap(([file, imports]) => imports.filter(({ to }) => !allowed.has(concernOf(to))).map(({ to }) => `${relative(core, file)} -> ${relative(core, to)}`));
    expect(wrong).toEqual([]);
    // The leaves stay leaves: they import nothing of core's.
    for (const leaf of ["catalog.ts", "errors.ts"]) expect(graph.get(join(core, leaf))?.map((i) => relative(core, i.to)), leaf).toEqual([]);
    for (const [file, imports] of graph) if (concernOf(file) === "types") expect(imports.every(({ to }) => concernOf(to) === "types"), relative(core, file)).toBe(true);
  });

  it("the cycle finder finds a cycle, a longer one and a self-import, and nothing in a chain", () => {
    const e = (pairs: [string, string][]) => {
      const m = new Map<string, Set<string>>();
      for (const [a, b] of pairs) {
        if (!m.has(a)) m.set(a, new Set());
        if (!m.has(b)) m.set(b, new Set());
        m.get(a)?.add(b);
      }
      return m;
    };
    expect(cycles(e([["a", "b"], ["b", "a"]]))).toEqual([["a", "b"]]);
    expect(cycles(e([["a", "b"], ["b", "c"], ["c", "a"], ["c", "d"]]))).toEqual([["a", "b", "c"]]);
    expect(cycles(e([["a", "a"]]))).toEqual([["a"]]);
    expect(cycles(e([["a", "b"], ["b", "c"]]))).toEqual([]);
  });

  it("no import cycle between files through runtime imports (a type-only import is erased when compiled)", () => {
    const found = cycles(edgesBy((f) => relative(core, f), true, false));
    expect(found).toEqual([]);
  });

  it("no import cycle between folders (each top-level file is its own), type imports included", () => {
    const found = cycles(edgesBy(concernOf, false));
    expect(found.map(explain)).toEqual([]);
  });

  it("providers (connectors/, effects/, net/) import no step code", () => {
    const wrong = [...graph]
      .filter(([file]) => ["connectors", "effects", "net"].includes(concernOf(file)))
      .flatMap(([file, imports]) => imports.filter(({ to }) => concernOf(to) === "steps").map(({ to }) => `${relative(core, file)} -> ${relative(core, to)}`));
    expect(wrong).toEqual([]);
  });

  it("the pure modules (walk/, the editor's preview, the schedule, the timer plan, the wait rule, the contact rule, Slack text) reach no IO through their runtime imports", () => {
    const io = /^(@holdfast\/(db|queue)|pg|bullmq|ioredis|nodemailer|undici|@slack\/bolt|node:(fs|net|http|https|dns|tls|child_process))(\/|$)/;
    const starts = [...sourceFiles(join(core, "walk")), ...["preview/journey.ts", "timers/schedule.ts", "timers/plan.ts", "kinds/wait-rule.ts", "contacts/rules.ts", "slack/mrkdwn.ts", "approvals/slack-blocks.ts"].map((f) => join(core, f))];
    const reached: string[] = [];
    const seen = new Set<string>();
    const visit = (file: string, path: string[]) => {
      if (seen.has(file)) return;
      seen.add(file);
      const text = readFileSync(file, "utf8");
      for (const m of text.matchAll(importPattern)) {
        if (m[1] !== undefined) continue;
        const spec = m[2] as string;
        if (io.test(spec)) reached.push(`${[...path, relative(core, file)].join(" -> ")} imports ${spec}`);
      }
      for (const { to, typeOnly } of graph.get(file) ?? []) if (!typeOnly) visit(to, [...path, relative(core, file)]);
    };
    for (const s of starts) visit(s, []);
    expect(seen.size).toBeGreaterThan(starts.length); // the walk followed imports
    expect(reached).toEqual([]);
  });
});

describe("one path from an event to rows", () => {
  const walkModule = join(core, "walk/walk.ts");
  const door = join(core, "walk/plan.ts");

  it("the walk (walk/walk.ts) is imported by walk/plan.ts alone, the walk's one door", () => {
    const importers = [...graph].filter(([file, imports]) => file !== door && imports.some(({ to }) => to === walkModule)).map(([file]) => relative(core, file));
    expect(importers).toEqual([]);
  });

  it("decide() is called in walk/plan.ts and nowhere else", () => {
    const calls = sourceFiles(core).flatMap((file) =>
      readFileSync(file, "utf8")
        .split("\n")
        .flatMap((line, i) => (/(^|[^\w.])decide\(/.test(line) && !/function decide\(/.test(line) ? [`${relative(core, file)}:${i + 1}`] : [])),
    );
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.every((c) => c.startsWith("walk/plan.ts:")), calls.join("\n")).toBe(true);
  });

  it("the applier carries out commands and never walks: apply/ imports nothing from walk/ but the commands' type", () => {
    const wrong = [...graph]
      .filter(([file]) => concernOf(file) === "apply")
      .flatMap(([file, imports]) => imports.filter(({ to, typeOnly }) => concernOf(to) === "walk" && !typeOnly).map(({ to }) => `${relative(core, file)} -> ${relative(core, to)}`));
    expect(wrong).toEqual([]);
  });
});
