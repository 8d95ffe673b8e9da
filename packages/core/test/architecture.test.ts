import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * The shape of the code, read from the source files: core in seven layers, each a folder with one entry (issue 42);
 * the apps and the CLI through those entries only; SQL only in core's table modules (store/sql/, below every other
 * folder); no import cycle inside core (between files or between folders, type imports included); calls to the
 * outside without step code; pure modules that reach no IO; one door to the walk.
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

/** A file's concern: its folder inside its layer (store/sql, run/steps ...), or a file at a layer's top (base/errors.ts). */
const concernOf = (file: string) => relative(core, file).split("/").slice(0, 2).join("/");

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

  it("no SQL statement outside packages/core/src/store/sql in core, the CLI, the queue package or any app", () => {
    const roots = [core, join(repo, "packages/cli/src"), join(repo, "packages/queue/src"), ...readdirSync(join(repo, "apps")).map((a) => join(repo, "apps", a, "src"))];
    const found = sqlOutside(roots, (file) => file.startsWith(join(core, "store/sql") + "/"));
    expect(found, `SQL belongs in a table module under packages/core/src/store/sql (named Table + Verb + Guard):\n${found.join("\n")}`).toEqual([]);
  });
});

describe("dependencies inside core", () => {
  it("store/sql/ imports only store/sql/, base/types/ and the leaf modules base/catalog.ts and base/errors.ts", () => {
    const allowed = new Set(["store/sql", "base/types", "base/catalog.ts", "base/errors.ts"]);
    const wrong = [...graph]
      .filter(([file]) => concernOf(file) === "store/sql")
      .flatMap(([file, imports]) => imports.filter(({ to }) => !allowed.has(concernOf(to))).map(({ to }) => `${relative(core, file)} -> ${relative(core, to)}`));
    expect(wrong).toEqual([]);
    // The leaves stay leaves: they import nothing of core's.
    for (const leaf of ["base/catalog.ts", "base/errors.ts"]) expect(graph.get(join(core, leaf))?.map((i) => relative(core, i.to)), leaf).toEqual([]);
    for (const [file, imports] of graph) if (concernOf(file) === "base/types") expect(imports.every(({ to }) => concernOf(to) === "base/types"), relative(core, file)).toBe(true);
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

  it("the calls to the outside (run/connectors/, providers/effects/, providers/net/) import no step code", () => {
    const wrong = [...graph]
      .filter(([file]) => ["run/connectors", "providers/effects", "providers/net"].includes(concernOf(file)))
      .flatMap(([file, imports]) => imports.filter(({ to }) => concernOf(to) === "run/steps").map(({ to }) => `${relative(core, file)} -> ${relative(core, to)}`));
    expect(wrong).toEqual([]);
  });

  it("the pure modules (decide/walk/, the editor's preview, the schedule, the timer plan, the wait rule, the contact rule, Slack text) reach no IO through their runtime imports", () => {
    // @holdfast/queue/names is the queues' names alone (no client): the catalog's one place for them.
    const io = /^(@holdfast\/(db|queue(?!\/names$))|pg|bullmq|ioredis|nodemailer|undici|@slack\/bolt|node:(fs|net|http|https|dns|tls|child_process))(\/|$)/;
    const starts = [...sourceFiles(join(core, "decide/walk")), ...["run/preview/journey.ts", "decide/timers/schedule.ts", "decide/timers/plan.ts", "versions/kinds/wait-rule.ts", "run/contacts/rules.ts", "people/slack/mrkdwn.ts", "people/approvals/slack-blocks.ts"].map((f) => join(core, f))];
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
  const walkModule = join(core, "decide/walk/walk.ts");
  const door = join(core, "decide/walk/plan.ts");

  it("the walk (decide/walk/walk.ts) is imported by decide/walk/plan.ts alone, the walk's one door", () => {
    const importers = [...graph].filter(([file, imports]) => file !== door && imports.some(({ to, typeOnly }) => to === walkModule && !typeOnly)).map(([file]) => relative(core, file));
    expect(importers).toEqual([]);
  });

  it("decide() is called in decide/walk/plan.ts and nowhere else", () => {
    const calls = sourceFiles(core).flatMap((file) =>
      readFileSync(file, "utf8")
        .split("\n")
        .flatMap((line, i) => (/(^|[^\w.])decide\(/.test(line) && !/function decide\(/.test(line) ? [`${relative(core, file)}:${i + 1}`] : [])),
    );
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.every((c) => c.startsWith("decide/walk/plan.ts:")), calls.join("\n")).toBe(true);
  });

  it("the applier carries out commands and never walks: run/apply/ imports nothing from decide/walk/ but the commands' type", () => {
    const wrong = [...graph]
      .filter(([file]) => concernOf(file) === "run/apply")
      .flatMap(([file, imports]) => imports.filter(({ to, typeOnly }) => concernOf(to) === "decide/walk" && !typeOnly).map(({ to }) => `${relative(core, file)} -> ${relative(core, to)}`));
    expect(wrong).toEqual([]);
  });
});

/** The seven layers, lowest first, and what each may import (type imports included). */
const layers = ["base", "store", "versions", "decide", "providers", "people", "run"] as const;
type Layer = (typeof layers)[number];
const mayImport: Record<Layer, readonly Layer[]> = {
  base: [],
  store: ["base"],
  versions: ["base", "store"],
  decide: ["base", "versions"],
  providers: ["base", "store", "versions"],
  people: ["base", "store", "versions", "decide", "providers"],
  run: ["base", "store", "versions", "decide", "providers", "people"],
};
const layerOf = (file: string) => relative(core, file).split("/")[0] as Layer;

/** The doors to core: one entry per layer, and three pure modules the browser bundles (the web's client components). */
const browserDoors = { kinds: "versions/kinds/index.ts", story: "run/runs/story.ts", "status-words": "run/runs/status-words.ts" } as const;
const doorPattern = new RegExp(`^@holdfast/core/(${[...layers, ...Object.keys(browserDoors)].join("|")})$`);

/** Every import specifier of a file (static, dynamic and type-position `import("...")`), with its line; typeOnly for `import type`. */
function specifiers(file: string): { spec: string; line: number; typeOnly: boolean }[] {
  const text = readFileSync(file, "utf8");
  const found: { spec: string; line: number; typeOnly: boolean }[] = [];
  for (const m of text.matchAll(/(^\s*(?:import|export)\s+type\s[^;]*?)?(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)["']([^"']+)["']/gm)) {
    found.push({ spec: m[2] as string, line: text.slice(0, m.index).split("\n").length, typeOnly: m[1] !== undefined });
  }
  return found;
}

const appsAndCli = [...readdirSync(join(repo, "apps")).map((a) => join(repo, "apps", a, "src")), join(repo, "packages/cli/src")];

describe("core in layers, each with one entry", () => {
  it("packages/core/src holds the seven layer folders and nothing else", () => {
    expect(readdirSync(core).sort()).toEqual([...layers].sort());
  });

  it("every import inside core goes to its own layer or one it may import (type imports included)", () => {
    const wrong = [...graph].flatMap(([file, imports]) =>
      imports
        .filter(({ to }) => layerOf(to) !== layerOf(file) && !mayImport[layerOf(file)].includes(layerOf(to)))
        .map(({ to }) => `${relative(core, file)} (${layerOf(file)}) -> ${relative(core, to)} (${layerOf(to)})`),
    );
    expect(wrong).toEqual([]);
  });

  it("the layer check sees an import that goes up", () => {
    const up = (from: Layer, to: Layer) => from !== to && !mayImport[from].includes(to);
    expect(up("store", "run")).toBe(true);
    expect(up("decide", "store")).toBe(true);
    expect(up("run", "base")).toBe(false);
    // The order has no cycle: each layer imports only layers listed before it.
    for (const [i, l] of layers.entries()) expect(mayImport[l].every((m) => layers.indexOf(m) < i), l).toBe(true);
  });

  it("each layer's entry (index.ts) only re-exports, and only from its own folder", () => {
    for (const layer of layers) {
      const entry = join(core, layer, "index.ts");
      const code = readFileSync(entry, "utf8")
        .replace(/\/\*[\s\S]*?\*\//g, "")
        .split("\n")
        .filter((l) => l.trim() && !l.trim().startsWith("//"));
      expect(
        code.filter((l) => !/^export (type )?\{[^}]*\} from "\.\/[^"]+";$/.test(l)),
        `${layer}/index.ts`,
      ).toEqual([]);
      const outside = (graph.get(entry) ?? []).filter(({ to }) => layerOf(to) !== layer).map(({ to }) => relative(core, to));
      expect(outside, `${layer}/index.ts`).toEqual([]);
    }
  });

  it("the package's doors are the layer entries and the browser's three pure modules, each inside its layer", () => {
    const pkg = JSON.parse(readFileSync(join(repo, "packages/core/package.json"), "utf8")) as { exports: Record<string, string> };
    const expected = Object.fromEntries([
      ...layers.map((l) => [`./${l}`, `./src/${l}/index.ts`]),
      ...Object.entries(browserDoors).map(([name, file]) => [`./${name}`, `./src/${file}`]),
    ]);
    expect(pkg.exports).toEqual(expected);
  });

  it("the apps and the CLI import core only through its doors (no barrel, no deep path, no relative path into core)", () => {
    const wrong = appsAndCli.flatMap(sourceFiles).flatMap((file) =>
      specifiers(file)
        .filter(({ spec }) => (spec.startsWith("@holdfast/core") && !doorPattern.test(spec)) || (spec.startsWith(".") && resolve(dirname(file), spec).startsWith(core)))
        .map(({ spec, line }) => `${relative(repo, file)}:${line} ${spec}`),
    );
    expect(wrong).toEqual([]);
    // The doors are used: an app that imports nothing of core would make this test say nothing.
    expect(appsAndCli.flatMap(sourceFiles).some((f) => specifiers(f).some(({ spec }) => spec === "@holdfast/core/run"))).toBe(true);
  });

  it("the web's client components import core's code only through the browser's doors (types from any door are erased)", () => {
    const web = join(repo, "apps/web/src");
    const client = sourceFiles(web).filter((f) => /^\s*["']use client["']/m.test(readFileSync(f, "utf8").split("\n").slice(0, 3).join("\n")));
    expect(client.length).toBeGreaterThan(10);
    const allowed = new Set(Object.keys(browserDoors).map((d) => `@holdfast/core/${d}`));
    const wrong = client.flatMap((file) =>
      specifiers(file)
        .filter(({ spec, typeOnly }) => spec.startsWith("@holdfast/core") && !allowed.has(spec) && !typeOnly)
        .map(({ spec, line }) => `${relative(repo, file)}:${line} ${spec}`),
    );
    expect(wrong).toEqual([]);
  });

  it("the queue and db packages import nothing of core (core sits on them)", () => {
    const wrong = ["packages/queue/src", "packages/db/src"].flatMap((d) =>
      sourceFiles(join(repo, d)).flatMap((file) => specifiers(file).filter(({ spec }) => spec.startsWith("@holdfast/core")).map(({ spec }) => `${relative(repo, file)} ${spec}`)),
    );
    expect(wrong).toEqual([]);
  });

  it("core calls no findUnique: Prisma batches those of one tick into one query under the first caller's scope (scope-batching.test.ts)", () => {
    const unique = /\.findUnique(?:OrThrow)?\(/;
    const wrong = [join(repo, "packages/core/src"), ...appsAndCli].flatMap(sourceFiles).flatMap((file) =>
      readFileSync(file, "utf8")
        .split("\n")
        .flatMap((line, i) => (unique.test(line) ? [`${relative(repo, file)}:${i + 1}: ${line.trim().slice(0, 100)}`] : [])),
    );
    expect(wrong).toEqual([]);
  });

  it("the apps and the CLI make no Prisma model call: reads and writes go through core's table modules", () => {
    const modelCall = /\b(?:db|tx|prisma|client)\.[a-z]\w*\.(?:findMany|findFirst|findUnique|findFirstOrThrow|findUniqueOrThrow|create|createMany|update|updateMany|upsert|delete|deleteMany|count|aggregate|groupBy)\(/;
    expect(modelCall.test("await ctx.db.run.findMany({ where })")).toBe(true);
    expect(modelCall.test("await tx.automation.update({ data })")).toBe(true);
    expect(modelCall.test("list: viewerProcedure.query(({ ctx }) => automationsList(ctx.db, ctx.org.id))")).toBe(false);
    const wrong = appsAndCli.flatMap(sourceFiles).flatMap((file) =>
      readFileSync(file, "utf8")
        .split("\n")
        .flatMap((line, i) => (modelCall.test(line) ? [`${relative(repo, file)}:${i + 1}: ${line.trim().slice(0, 100)}`] : [])),
    );
    expect(wrong).toEqual([]);
  });
});

describe("the size of the product's source (pnpm code:size)", () => {
  it("no product source file over 400 lines, at most 10 functions over 80 lines", async () => {
    const { filesOver, functionsOver } = await import("../../../scripts/code-size");
    expect(filesOver(400).map((f) => `${f.where} ${f.lines}`)).toEqual([]);
    const long = functionsOver(80).map((f) => `${f.where} ${f.lines}`);
    expect(long.length, long.join("\n")).toBeLessThanOrEqual(10);
  });

  it("the counter sees a long function in a component, a method and an arrow", async () => {
    const { functionsOver } = await import("../../../scripts/code-size");
    const { mkdtempSync, writeFileSync, rmSync } = await import("node:fs");
    const dir = mkdtempSync(join(repo, "packages/.code-size-"));
    const body = Array.from({ length: 85 }, (_, i) => `  const v${i} = ${i};`).join("\n");
    writeFileSync(join(dir, "a.tsx"), `export function Page() {\n${body}\n  return null;\n}\nclass C {\n  m() {\n${body}\n  }\n}\nexport const f = () => {\n${body}\n};\n`);
    try {
      const found = functionsOver(80, [relative(repo, join(dir, "a.tsx"))]).map((f) => f.where.split(" ")[1]);
      expect(found).toEqual(["Page", "m", "f"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
