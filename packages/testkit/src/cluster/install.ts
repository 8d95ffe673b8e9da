import { existsSync } from "node:fs";
import { userInfo } from "node:os";
import { runCommand } from "./daemon";

/** The Debian packages the cluster tests run, each with the binary that shows it is installed. */
const packages: { pkg: string; binary: string }[] = [
  { pkg: "patroni", binary: "/usr/bin/patroni" },
  { pkg: "etcd-server", binary: "/usr/bin/etcd" },
  { pkg: "etcd-client", binary: "/usr/bin/etcdctl" },
  { pkg: "pgbouncer", binary: "/usr/sbin/pgbouncer" },
  { pkg: "haproxy", binary: "/usr/sbin/haproxy" },
  { pkg: "redis-server", binary: "/usr/bin/redis-server" },
];

/** The packages whose binary is missing (pure apart from the file checks). */
export function missingClusterPackages(exists: (path: string) => boolean = existsSync): string[] {
  return packages.filter((p) => !exists(p.binary)).map((p) => p.pkg);
}

/**
 * Installs, with apt-get, whichever of patroni, etcd, pgbouncer, haproxy and redis-server is missing. Needs root;
 * otherwise it says which packages to install by hand.
 */
export async function ensureClusterPackages(): Promise<void> {
  const missing = missingClusterPackages();
  if (missing.length === 0) return;
  if (userInfo().uid !== 0)
    throw new Error(
      `The cluster tests need ${missing.join(", ")}, which are not installed, and installing them needs root. Run: sudo apt-get install -y ${missing.join(" ")}`,
    );
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  // Test files run two at a time and each may find the packages missing: one lock, so the second waits for the first
  // install instead of failing on dpkg's lock; the package list is refreshed only when the install fails without it.
  const install = `apt-get install -y --no-install-recommends ${missing.join(" ")} || (apt-get update && apt-get install -y --no-install-recommends ${missing.join(" ")})`;
  await runCommand("flock", ["/tmp/holdfast-cluster-install.lock", "sh", "-c", install], { env, timeoutMs: 900_000 });
  const still = missingClusterPackages();
  if (still.length) throw new Error(`apt-get finished but ${still.join(", ")} still look missing; install them by hand (apt-get install -y ${still.join(" ")}).`);
}
