#!/usr/bin/env node
// Starts every Holdfast process (relay, engine, sweeper, one lane worker per lane with work, web) as children,
// prefixes their logs, restarts one that dies, and passes SIGTERM/SIGINT on so each shuts down gracefully.
// `--dev` runs the web app with `next dev`. The key, migrations and the demo seed run before this (package.json).
// Every child runs with NODE_ENV=production under `pnpm start` (development only under `pnpm dev`).
import { spawn, spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const dev = process.argv.includes("--dev");
const port = process.env.PORT ?? "3000";
// `pnpm start` runs each app's production build (scripts/build.mjs: apps/<app>/dist/main.mjs) with plain node;
// `pnpm dev` runs the TypeScript sources through tsx.
const app = (name) => (dev ? ["--import", "tsx", `apps/${name}/src/main.ts`] : ["--enable-source-maps", `apps/${name}/dist/main.mjs`]);
// The demo's http_request step calls this web app's /api/demo/echo on loopback, which the egress guard refuses: the
// demo gets that one documented exception (and the echo route) unless the operator configured egress themselves.
const demoEnv = {
  HOLDFAST_DEMO_ECHO: process.env.HOLDFAST_DEMO_ECHO ?? "1",
  HOLDFAST_EGRESS_ALLOW: process.env.HOLDFAST_EGRESS_ALLOW ?? `127.0.0.1:${port}`,
};
const procs = [
  // WAKEUPS=poll: engine and workers poll the outbox; no relay (and no Redis) is needed.
  ...(process.env.WAKEUPS === "poll" ? [] : [{ name: "relay", cmd: process.execPath, args: app("relay") }]),
  { name: "engine", cmd: process.execPath, args: app("engine") },
  { name: "sweeper", cmd: process.execPath, args: app("sweeper") },
  { name: "lane-io", cmd: process.execPath, args: app("lane-worker"), env: { LANE: "io" } },
  // Model drafts run on their own lane, so a burst of slow calls never holds up emails and CRM calls.
  { name: "lane-slow", cmd: process.execPath, args: app("lane-worker"), env: { LANE: "slow" } },
  // Approvals' Slack messages (posted on request, updated on decision) go out from the human lane.
  { name: "lane-human", cmd: process.execPath, args: app("lane-worker"), env: { LANE: "human" } },
  // The self-hosted inbound email receiver, when a port is configured (replies to reply+<org>@this host).
  ...(process.env.INBOUND_SMTP_PORT ? [{ name: "mail-in", cmd: process.execPath, args: app("mail-in") }] : []),
  {
    name: "web",
    cmd: "pnpm",
    args: ["--filter", "@holdfast/web", dev ? "dev" : "start"],
    // The web process gets only its own role's URL: not the workers' nor the migrator's (their passwords).
    env: { PORT: port, WEB_DATABASE_URL: webDatabaseUrl(), DATABASE_URL: undefined, MIGRATE_DATABASE_URL: undefined },
  },
];

/** WEB_DATABASE_URL, else DATABASE_URL (or its default) as holdfast_web without a password (apps/web/src/env.ts). */
function webDatabaseUrl() {
  if (process.env.WEB_DATABASE_URL) return process.env.WEB_DATABASE_URL;
  const url = new URL(process.env.DATABASE_URL ?? "postgresql://holdfast_worker@127.0.0.1:5432/holdfast");
  url.username = "holdfast_web";
  url.password = "";
  return url.toString();
}

let stopping = false;
const children = new Map();
const colours = [36, 35, 33, 32, 34, 31];

function run(p, i) {
  const child = spawn(p.cmd, p.args, {
    cwd: root,
    env: { ...process.env, NODE_ENV: dev ? "development" : "production", ...demoEnv, NEXT_TELEMETRY_DISABLED: "1", ...p.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.set(p.name, child);
  const tag = `\x1b[${colours[i % colours.length]}m${p.name.padEnd(8)}\x1b[0m|`;
  const pipe = (stream, out) => {
    let buf = "";
    stream.on("data", (d) => {
      buf += d;
      const lines = buf.split("\n");
      buf = lines.pop();
      for (const line of lines) out.write(`${tag} ${line}\n`);
    });
  };
  pipe(child.stdout, process.stdout);
  pipe(child.stderr, process.stderr);
  child.on("exit", (code, signal) => {
    children.delete(p.name);
    if (stopping) {
      if (children.size === 0) process.exit(0);
      return;
    }
    process.stderr.write(`${tag} exited (code ${code}, signal ${signal}); restarting in 1 s\n`);
    setTimeout(() => run(p, i), 1000);
  });
}

procs.forEach(run);
process.stdout.write(`holdfast: starting ${procs.map((p) => p.name).join(", ")}; web on http://localhost:${port}\n`);
// The demo's trigger URL (with its token), for the README's curl.
const hook = spawnSync(process.execPath, ["--import", "tsx", "packages/cli/src/main.ts", "hooks", "url", "demo", "demo-follow-up"], {
  cwd: root,
  env: { ...process.env, HOLDFAST_PUBLIC_URL: process.env.HOLDFAST_PUBLIC_URL ?? `http://localhost:${port}` },
  encoding: "utf8",
});
if (hook.status === 0 && hook.stdout.trim()) {
  process.stdout.write(`holdfast: the demo's trigger URL: ${hook.stdout.trim()}\n`);
  process.stdout.write(`holdfast: sign in at http://localhost:${port} as demo@holdfast.local (password printed by the first start's seed)\n`);
}

for (const sig of ["SIGINT", "SIGTERM"]) {
  process.on(sig, () => {
    if (stopping) process.exit(1);
    stopping = true;
    for (const child of children.values()) child.kill("SIGTERM");
    setTimeout(() => process.exit(1), 20_000).unref();
  });
}
