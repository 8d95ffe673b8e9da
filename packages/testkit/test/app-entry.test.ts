import { describe, expect, it } from "vitest";
import { appEntry, cliEntry, testBuildVariable } from "../src/app-entry";

const withBuild = { [testBuildVariable]: ".test-build-abc" };

describe("which entry a test's app process runs", () => {
  it("the run's build by default, started with plain node", () => {
    expect(appEntry("/r", "engine", {}, withBuild)).toEqual(["/r/apps/engine/.test-build-abc/main.mjs"]);
  });
  it("the sources through tsx when there is no build or the test asks for them", () => {
    expect(appEntry("/r", "relay", {}, {})).toEqual(["--import", "tsx", "/r/apps/relay/src/main.ts"]);
    expect(appEntry("/r", "relay", { built: false }, withBuild)).toEqual(["--import", "tsx", "/r/apps/relay/src/main.ts"]);
  });
  it("the production build when asked", () => {
    expect(appEntry("/r", "sweeper", { built: true }, withBuild)).toEqual(["--enable-source-maps", "/r/apps/sweeper/dist/main.mjs"]);
  });
  it("the sources for a preload (it must share the app's modules) and for another copy of the repository", () => {
    expect(appEntry("/r", "relay", { nodeArgs: ["--import", "/x/faults.ts"] }, withBuild)).toEqual(["--import", "tsx", "/r/apps/relay/src/main.ts"]);
    expect(appEntry("/copy", "relay", { root: "/copy" }, withBuild)).toEqual(["--import", "tsx", "/copy/apps/relay/src/main.ts"]);
    expect(appEntry("/r", "relay", { nodeArgs: ["--cpu-prof"] }, withBuild)).toEqual(["/r/apps/relay/.test-build-abc/main.mjs"]);
  });
  it("another copy's own build when it has one (the soak's), but its sources for a preload", () => {
    expect(appEntry("/copy", "engine", { root: "/copy", rootBuild: "soak-build" }, {})).toEqual(["/copy/apps/engine/soak-build/main.mjs"]);
    expect(appEntry("/copy", "relay", { root: "/copy", rootBuild: "soak-build", nodeArgs: ["--import", "/x/faults.mjs"] }, {})).toEqual([
      "--import",
      "tsx",
      "/copy/apps/relay/src/main.ts",
    ]);
  });
});

describe("which entry the CLI runs", () => {
  it("the run's build when there is one, else its source through tsx", () => {
    expect(cliEntry("/r", withBuild)).toEqual(["/r/packages/cli/.test-build-abc/main.mjs"]);
    expect(cliEntry("/r", {})).toEqual(["--import", "tsx", "/r/packages/cli/src/main.ts"]);
  });
});
