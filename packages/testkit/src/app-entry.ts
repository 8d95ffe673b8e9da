import { join } from "node:path";

/**
 * The folder (apps/<app>/<folder>/main.mjs, packages/cli/<folder>/main.mjs) of this `vitest run`'s build of the apps, set by the global setup for
 * every worker. Unset (HOLDFAST_TEST_APPS=tsx, or outside vitest): the apps run from source through tsx.
 */
export const testBuildVariable = "HOLDFAST_TEST_APPS_BUILD";

export interface EntryChoice {
  /** true: the production build (apps/<app>/dist); false: the TypeScript source through tsx; unset: see appEntry. */
  built?: boolean;
  /** A copy of the repository to run from (the soak's pinned source): never built by this run. */
  root?: string;
  /** With `root`: the folder of that copy's own build (apps/<app>/<folder>/main.mjs; the soak builds its copy). */
  rootBuild?: string;
  nodeArgs?: string[];
}

/**
 * Node's arguments for an app. Unless a test chose, the run's build is used (started with plain node, it costs far
 * less CPU than tsx compiling the sources at every start, and crash tests start processes many times); the sources
 * run through tsx when a test asks for them, when there is no build, for another copy of the repository, and when a
 * module is preloaded (--import): a preload that changes the app's modules (the bench's kinds, the soak's queue
 * faults) must share them, and the bundle has its own copies.
 */
export function appEntry(root: string, app: string, choice: EntryChoice, env: NodeJS.ProcessEnv = process.env): string[] {
  if (choice.built === true) return ["--enable-source-maps", join(root, "apps", app, "dist/main.mjs")];
  const folder = env[testBuildVariable];
  const preloads = choice.nodeArgs?.includes("--import") ?? false;
  if (choice.built === undefined && folder && choice.root === undefined && !preloads) return [join(root, "apps", app, folder, "main.mjs")];
  if (choice.built === undefined && choice.root !== undefined && choice.rootBuild && !preloads) return [join(root, "apps", app, choice.rootBuild, "main.mjs")];
  return ["--import", "tsx", join(root, "apps", app, "src/main.ts")];
}

/** Node's arguments for the CLI (packages/cli): the run's build when there is one, else its source through tsx. */
export function cliEntry(root: string, env: NodeJS.ProcessEnv = process.env): string[] {
  const folder = env[testBuildVariable];
  return folder ? [join(root, "packages/cli", folder, "main.mjs")] : ["--import", "tsx", join(root, "packages/cli/src/main.ts")];
}
