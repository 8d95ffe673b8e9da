import type { AppProcess } from "@holdfast/testkit/procs";

/** A process the soak supervises: testkit's spawnApp for the apps, infra/web.ts for `next start`. */
export type Supervised = Pick<AppProcess, "name" | "exits" | "kills" | "output" | "pid" | "signal" | "stop">;
