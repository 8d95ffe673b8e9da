/**
 * The size of the product's source: files over 400 lines and functions over 80 (`pnpm code:size`).
 * Product source is every .ts/.tsx under apps/<app>/src and packages/<package>/src (testkit, the tests' own kit, apart),
 * without tests, generated code and declaration files. A function is any function declaration, method, arrow function or function expression;
 * a React component counts like any other function. The architecture test holds the limits.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import ts from "typescript";

export const repo = resolve(import.meta.dirname, "..");

function walk(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return ["node_modules", "generated", "test", "__tests__"].includes(name) || name.startsWith(".") ? [] : walk(path);
    return /\.tsx?$/.test(name) && !/\.(d|test|spec)\.tsx?$/.test(name) ? [path] : [];
  });
}

/** Every product source file, as a path from the repository's root. */
export function productFiles(): string[] {
  const roots = ["apps", "packages"].flatMap((top) => readdirSync(join(repo, top))
    .filter((name) => `${top}/${name}` !== "packages/testkit")
    .map((name) => join(repo, top, name, "src")));
  return roots.flatMap(walk).map((f) => relative(repo, f)).sort();
}

export interface Sized {
  where: string;
  lines: number;
}

const lineCount = (text: string) => text.split("\n").length - (text.endsWith("\n") ? 1 : 0);

export function filesOver(limit: number, files = productFiles()): Sized[] {
  return files.map((f) => ({ where: f, lines: lineCount(readFileSync(join(repo, f), "utf8")) })).filter((f) => f.lines > limit);
}

function nameOf(node: ts.Node): string {
  if ((ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node) || ts.isFunctionExpression(node)) && node.name) return node.name.getText();
  const parent = node.parent;
  if (parent && ts.isVariableDeclaration(parent)) return parent.name.getText();
  if (parent && ts.isPropertyAssignment(parent)) return parent.name.getText();
  if (parent && ts.isCallExpression(parent)) return `${parent.expression.getText().slice(0, 40)}(callback)`;
  return "(anonymous)";
}

/** The functions longer than `limit` lines (from the line of their start to the line of their end). */
export function functionsOver(limit: number, files = productFiles()): Sized[] {
  const found: Sized[] = [];
  for (const file of files) {
    const text = readFileSync(join(repo, file), "utf8");
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith(".tsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
    const visit = (node: ts.Node) => {
      if (ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node) || ts.isArrowFunction(node) || ts.isFunctionExpression(node)) {
        const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
        const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
        if (end - start + 1 > limit) found.push({ where: `${file}:${start + 1} ${nameOf(node)}`, lines: end - start + 1 });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found.sort((a, b) => b.lines - a.lines);
}

if (import.meta.main) {
  const files = filesOver(400);
  const functions = functionsOver(80);
  console.log(`files over 400 lines: ${files.length}`);
  for (const f of files) console.log(`  ${f.lines} ${f.where}`);
  console.log(`functions over 80 lines: ${functions.length}`);
  for (const f of functions) console.log(`  ${f.lines} ${f.where}`);
}
