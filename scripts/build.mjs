#!/usr/bin/env node
// The production build of the background processes: each app (engine, relay, sweeper, lane-worker, mail-in) is
// compiled by esbuild into one JavaScript file, apps/<app>/dist/main.mjs, with its workspace packages and npm
// dependencies inside and a source map beside it, so `pnpm start` runs it with plain `node` (no TypeScript compiler
// at start-up or in memory). `pnpm dev` and the tests keep running the TypeScript sources through tsx. The web app
// has its own build (`next build`), then its server (apps/web/server.ts: Next.js behind the web's own HTTP server,
// which answers the trigger routes) the same way into apps/web/dist/server.mjs, with Next itself left in
// node_modules (`node scripts/build.mjs --web-server`, run by the web's build script).
import { rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
export const apps = ["engine", "relay", "sweeper", "lane-worker", "mail-in"];

/**
 * Builds every app (or the ones named) into apps/<app>/<folder>/main.mjs; returns each output's size in bytes. The
 * tests' build (testkit's global setup) goes to a folder of its own and leaves the source map out: a test file
 * starts the apps many times and reading the map costs each start about a second of CPU.
 */
export async function buildApps(names = apps, { folder = "dist", sourcemap = true } = {}) {
  const sizes = {};
  for (const app of names) sizes[app] = await buildEntry(`apps/${app}`, { folder, sourcemap });
  return sizes;
}

/**
 * Compiles <dir>/src/main.ts (dir from the repository's root, or from `from`: the soak's copy of the source) into
 * <dir>/<folder>/main.mjs; returns its size in bytes.
 */
export async function buildEntry(dir, { folder = "dist", sourcemap = true, from = root, entry = "src/main.ts", out = "main.mjs", external = [], define = {} } = {}) {
  const outdir = join(from, dir, folder);
  rmSync(outdir, { recursive: true, force: true });
  const result = await build({
    absWorkingDir: from,
    entryPoints: [join(from, dir, entry)],
    outfile: join(outdir, out),
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node22",
    sourcemap,
    metafile: true,
    logLevel: "warning",
    // Optional native add-ons the libraries try and fall back from; never bundled.
    external: ["pg-native", "msgpackr-extract", ...external],
    define,
    // CommonJS dependencies inside an ES module still find require, __filename and __dirname.
    banner: {
      js: [
        'import { createRequire as __holdfastRequire } from "node:module";',
        'import { fileURLToPath as __holdfastPath } from "node:url";',
        "const require = __holdfastRequire(import.meta.url);",
        "const __filename = __holdfastPath(import.meta.url);",
        'const __dirname = __filename.slice(0, __filename.lastIndexOf("/"));',
      ].join("\n"),
    },
  });
  return Object.values(result.metafile.outputs).reduce((n, o) => n + o.bytes, 0);
}

/**
 * apps/web/dist/server.mjs from apps/web/server.ts; Next stays in node_modules (it loads its build and runtime from
 * there). __HOLDFAST_SERVER_BUNDLE__ tells this copy of the web's modules from Next's (apps/web/src/server/db.ts): a
 * name of the build's, not a setting anyone could give the process.
 */
export function buildWebServer({ folder = "dist", sourcemap = true } = {}) {
  const define = { __HOLDFAST_SERVER_BUNDLE__: "true" };
  return buildEntry("apps/web", { folder, sourcemap, entry: "server.ts", out: "server.mjs", external: ["next", "next/*"], define });
}

if (import.meta.url === `file://${process.argv[1]}` && process.argv[2] === "--web-server") {
  const bytes = await buildWebServer();
  console.log(`build: apps/web/dist/server.mjs (${(bytes / 1e6).toFixed(1)} MB with its source map)`);
} else if (import.meta.url === `file://${process.argv[1]}`) {
  const started = Date.now();
  const sizes = await buildApps(process.argv.slice(2).length ? process.argv.slice(2) : apps);
  for (const [app, bytes] of Object.entries(sizes)) console.log(`build: apps/${app}/dist/main.mjs (${(bytes / 1e6).toFixed(1)} MB with its source map)`);
  console.log(`build: ${Object.keys(sizes).length} apps in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
