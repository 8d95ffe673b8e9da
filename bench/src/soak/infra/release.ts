import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { repoRoot } from "@holdfast/testkit/procs";
import { run } from "./exec";

/** A previous release of Holdfast, built from its own sources beside the soak: what an operator runs before upgrading. */
export interface Release {
  /** The commit it was built from. */
  commit: string;
  /** Its source tree, with its own node_modules and builds (apps/<app>/dist, apps/web/.next). */
  root: string;
  /** Its web app's folder (`next start` serves it in place) and its own `next`. */
  webDir: string;
  nextBin: string;
  /** How long each build step took, in seconds, for the report. */
  seconds: Record<string, number>;
}

/** The commit `ref` names in this checkout's history; a plain error when it names none. */
export function resolveCommit(ref: string): string {
  const r = spawnSync("git", ["-C", repoRoot, "rev-parse", "--verify", "--quiet", `${ref}^{commit}`], { encoding: "utf8" });
  if (r.status !== 0) {
    throw new Error(`--upgrade-from ${ref}: no such commit in ${repoRoot}'s history (a shallow clone lacks old commits: fetch them with \`git fetch --unshallow\`)`);
  }
  return r.stdout.trim();
}

/**
 * Materialises the release at `ref` under `dir`/release: its files at that commit (`git archive`, nothing written to
 * this repository), its dependencies installed offline from the shared pnpm store, its Prisma client generated, its
 * apps built by its own scripts/build.mjs and its web by its own `next build`. Nothing of this checkout's code is used.
 */
export async function materialiseRelease(ref: string, dir: string, log: (line: string) => void): Promise<Release> {
  const commit = resolveCommit(ref);
  const root = join(dir, "release");
  mkdirSync(root, { recursive: true });
  const seconds: Record<string, number> = {};
  const step = async (name: string, command: string, args: string[], timeoutMs = 10 * 60_000) => {
    const started = Date.now();
    await run(command, args, { env: { ...process.env, CI: "1", NEXT_TELEMETRY_DISABLED: "1" }, timeoutMs }).catch((error: Error) => {
      throw new Error(`building the release ${commit.slice(0, 12)} failed at "${name}": ${error.message.slice(-3_000)}`);
    });
    seconds[name] = (Date.now() - started) / 1000;
    log(`soak: release ${commit.slice(0, 12)}: ${name} in ${seconds[name].toFixed(1)} s`);
  };
  await step("files (git archive)", "sh", ["-c", `git -C '${repoRoot}' archive --format=tar ${commit} | tar -x -C '${root}'`]);
  await step("dependencies (pnpm install, offline first)", "pnpm", ["--dir", root, "install", "--frozen-lockfile", "--prefer-offline"]);
  await step("Prisma client", "pnpm", ["--dir", root, "--filter", "@holdfast/db", "generate"]);
  await step("apps (its scripts/build.mjs)", process.execPath, [join(root, "scripts/build.mjs")]);
  const webDir = join(root, "apps/web");
  // The web build is the slow step (one to several minutes): the same commit's build is the same, so it is kept
  // outside the repository, under the commit's name, and a later soak of the same release copies it back.
  const cached = join(releaseCache(), commit, "web-next");
  if (existsSync(join(cached, "BUILD_ID"))) {
    const started = Date.now();
    cpSync(cached, join(webDir, ".next"), { recursive: true, verbatimSymlinks: true });
    seconds["web (its next build, kept from an earlier soak)"] = (Date.now() - started) / 1000;
    log(`soak: release ${commit.slice(0, 12)}: web: its own next build of this commit, kept in ${cached} by an earlier soak (remove it to build again)`);
  } else {
    checkedReleaseConfig(webDir);
    await step("web (its next build, types not checked again)", "pnpm", ["--dir", root, "--filter", "@holdfast/web", "build"], 20 * 60_000);
    keepBuild(join(webDir, ".next"), cached);
  }
  return { commit, root, webDir, nextBin: join(webDir, "node_modules/next/dist/bin/next"), seconds };
}

/**
 * The release's own next.config, unchanged, behind a config that turns off two things its build does that change
 * nothing it outputs: checking its types again (that commit passed them when it was made) and writing Turbopack's
 * build cache (thrown away with the soak's folder). About a third of the build's CPU on two cores.
 */
function checkedReleaseConfig(webDir: string): void {
  const own = ["next.config.ts", "next.config.mjs", "next.config.js"].find((f) => existsSync(join(webDir, f)));
  if (!own) return;
  const kept = own.replace("next.config", "next.config.release");
  renameSync(join(webDir, own), join(webDir, kept));
  writeFileSync(
    join(webDir, own.endsWith(".ts") ? "next.config.ts" : "next.config.mjs"),
    `import own from "./${kept.replace(/\.ts$/, "")}";\n` +
      "const config = typeof own === \"function\" ? own : { ...own, typescript: { ...own.typescript, ignoreBuildErrors: true }, experimental: { ...own.experimental, turbopackFileSystemCacheForBuild: false } };\n" +
      "export default config;\n",
  );
}

/** Where builds of past releases are kept between soaks: $HOLDFAST_RELEASE_CACHE, else ~/.cache/holdfast/releases. */
export function releaseCache(): string {
  return process.env.HOLDFAST_RELEASE_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "holdfast", "releases");
}

/** Copies a finished build into the cache (without Next's compiler cache), whole or not at all. */
function keepBuild(from: string, to: string): void {
  const partial = `${to}.partial-${process.pid}`;
  try {
    rmSync(partial, { recursive: true, force: true });
    mkdirSync(join(to, ".."), { recursive: true });
    cpSync(from, partial, { recursive: true, verbatimSymlinks: true, filter: (src) => !src.startsWith(join(from, "cache")) });
    rmSync(to, { recursive: true, force: true });
    renameSync(partial, to);
  } catch {
    rmSync(partial, { recursive: true, force: true }); // a cache that could not be written is only slower next time
  }
}
