import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { allKinds } from "../src/versions/kinds/registry";

/**
 * docs/architecture.md is true to the code (issue 18 item 8): it names every table the migrated schema has, every
 * step kind in the registry, every process in apps/, every stored function with its file, and every CLI command the
 * CLI's usage lists. A failure lists what the page is missing.
 */
const root = join(__dirname, "../../..");
const doc = readFileSync(join(root, "docs/architecture.md"), "utf8");
const ticked = (name: string) => doc.includes(`\`${name}\``);

describe("docs/architecture.md", () => {
  it("names every table of the migrated schema", () => {
    const tables = [...readFileSync(join(root, "prisma/schema.sql"), "utf8").matchAll(/^CREATE TABLE public\.(\w+) \(/gm)].map((m) => m[1] as string);
    expect(tables.length).toBeGreaterThan(25);
    expect(tables.filter((t) => !ticked(t))).toEqual([]);
  });

  it("names every step kind", () => {
    const kinds = allKinds().map((k) => k.kind);
    expect(kinds.length).toBeGreaterThan(8);
    expect(kinds.filter((k) => !ticked(k))).toEqual([]);
  });

  it("names every process", () => {
    const apps = readdirSync(join(root, "apps"));
    expect(apps.filter((a) => !doc.includes(`**${a}**`))).toEqual([]);
  });

  it("names every stored function with its file", () => {
    const files = readdirSync(join(root, "packages/core/src/store/sql/functions")).filter((f) => f.endsWith(".sql"));
    const missing = files.filter((f) => {
      const name = `holdfast_${f.replace(/\.sql$/, "")}`;
      const row = doc.split("\n").find((line) => line.startsWith("|") && line.includes(`\`${name}\``));
      return !row?.includes(`\`${f}\``) && !row?.includes(` ${f}`) && !row?.split("|")[2]?.includes(f);
    });
    expect(missing).toEqual([]);
  });

  it("names every CLI command the usage lists", () => {
    const main = readFileSync(join(root, "packages/cli/src/main.ts"), "utf8");
    const usage = main.slice(main.indexOf("commands:"), main.indexOf("environment:"));
    const commands = new Set<string>();
    for (const m of usage.matchAll(/^ {2}([a-z]+)(?: ([a-z-]+(?:\|[a-z-]+)*))?/gm)) {
      const [, command, subs] = m;
      for (const sub of subs ? subs.split("|") : [""]) commands.add(sub ? `${command} ${sub}` : (command as string));
    }
    // The second form on a line ("budgets show <org> | budgets set <org> <USD>").
    for (const m of usage.matchAll(/\| ([a-z]+) ([a-z-]+) </g)) commands.add(`${m[1]} ${m[2]}`);
    expect(commands.size).toBeGreaterThan(30);
    expect([...commands].filter((c) => !doc.includes(`holdfast ${c}`))).toEqual([]);
  });
});
