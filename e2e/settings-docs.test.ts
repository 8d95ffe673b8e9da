import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { begin, collectSettings, end, envExamplePath, operationsPath, renderEnvExample, renderOperations, root } from "../scripts/settings-docs";

/**
 * The settings' documentation is generated from the processes' env schemas (`pnpm docs:settings`): regenerated here in
 * memory, it must equal what is committed, so a default or a description changed in a schema and not in the docs (or
 * in the docs and not in the schema) fails. Schemas that read the same setting must agree on its default.
 */
describe("settings documented from their schemas", () => {
  const settings = collectSettings();

  it(".env.example is what the schemas say (run `pnpm docs:settings` after changing a schema)", () => {
    expect(readFileSync(envExamplePath, "utf8")).toBe(renderEnvExample(settings));
  });

  it("docs/operations.md's settings table is what the schemas say", () => {
    const current = readFileSync(operationsPath, "utf8");
    expect(current).toBe(renderOperations(current, settings));
  });

  it("every setting has one description and, where two processes read it, one default", () => {
    // collectSettings throws on disagreement; here: nothing undescribed slipped through.
    expect(settings.filter((s) => s.description.trim() === "").map((s) => s.name)).toEqual([]);
    const names = settings.map((s) => s.name);
    expect(new Set(names).size).toBe(names.length);
  });

  it("a default the docs state beside a setting's name is the schema's", () => {
    // performance.md and scaling.md report dated measurements, taken with the settings of their day.
    const pages = ["README.md", ...readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md") && !/^(performance|scaling)\.md$/.test(f)).map((f) => `docs/${f}`)];
    const defaults = new Map(settings.map((s) => [s.name, s.defaultValue]));
    const wrong: string[] = [];
    for (const page of pages) {
      const [before = "", rest = ""] = readFileSync(join(root, page), "utf8").split(begin);
      const text = before + (rest.split(end)[1] ?? ""); // the generated table is checked above
      // `NAME` (20), `NAME` (default 20), `NAME` defaults to 20, `NAME`=20; not `NAME` (10 x `OTHER`).
      for (const m of text.matchAll(/`([A-Z][A-Z0-9_]{3,})`(?: \(| defaults? to | default | is |=)(?:default )?`?(\d[\d_,.]*)(?![\d_,.]* ?x )/g)) {
        const [said, name, value] = m as unknown as [string, string, string];
        if (!defaults.has(name)) continue;
        if (defaults.get(name) !== value.replace(/[_,]/g, "").replace(/\.$/, "")) wrong.push(`${page}: ${said} (the schema says ${defaults.get(name)})`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it("every variable the product reads from process.env is a documented setting", () => {
    // The runtime's own variables, not settings of Holdfast.
    const runtime = new Set(["NODE_ENV", "NEXT_RUNTIME"]);
    const documented = new Set(settings.map((s) => s.name));
    const sources = [
      ...["apps/web/src", "apps/engine/src", "apps/relay/src", "apps/sweeper/src", "apps/lane-worker/src", "apps/mail-in/src"],
      ...["packages/core/src", "packages/cli/src", "packages/db/src", "packages/queue/src"],
    ].flatMap((dir) => files(join(root, dir)));
    sources.push(join(root, "scripts/start.mjs"));
    const undocumented: string[] = [];
    for (const file of sources) {
      for (const m of readFileSync(file, "utf8").matchAll(/process\.env\.([A-Z0-9_]+)/g)) {
        const name = m[1] as string;
        if (!runtime.has(name) && !documented.has(name)) undocumented.push(`${relative(root, file)}: ${name}`);
      }
    }
    expect(undocumented).toEqual([]);
  });
});

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name === "node_modules" || name === "generated" || name === ".next") return [];
    if (statSync(path).isDirectory()) return files(path);
    return /\.(ts|tsx|mjs)$/.test(name) ? [path] : [];
  });
}
