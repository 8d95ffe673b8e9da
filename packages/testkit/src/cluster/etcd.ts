import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Daemon, freeLocalPort, pollUntil, startDaemon } from "./daemon";

export interface EtcdCluster {
  /** "127.0.0.1:port" client endpoints, for Patroni's `etcd3.hosts`. */
  hosts: string[];
  daemons: Daemon[];
}

/** Three etcd 3.4 members on free ports, data under `dir`; resolves once the cluster answers a health check. */
export async function startEtcd(dir: string, token: string): Promise<EtcdCluster> {
  const members = [];
  for (const name of ["etcd1", "etcd2", "etcd3"]) members.push({ name, client: await freeLocalPort(), peer: await freeLocalPort() });
  const initialCluster = members.map((m) => `${m.name}=http://127.0.0.1:${m.peer}`).join(",");
  const daemons: Daemon[] = [];
  for (const m of members) {
    const data = join(dir, m.name);
    mkdirSync(data, { recursive: true });
    daemons.push(
      startDaemon(
        m.name,
        "etcd",
        [
          `--name=${m.name}`,
          `--data-dir=${data}`,
          `--listen-client-urls=http://127.0.0.1:${m.client}`,
          `--advertise-client-urls=http://127.0.0.1:${m.client}`,
          `--listen-peer-urls=http://127.0.0.1:${m.peer}`,
          `--initial-advertise-peer-urls=http://127.0.0.1:${m.peer}`,
          `--initial-cluster=${initialCluster}`,
          "--initial-cluster-state=new",
          `--initial-cluster-token=${token}`,
        ],
        { log: join(dir, `${m.name}.log`) },
      ),
    );
  }
  const hosts = members.map((m) => `127.0.0.1:${m.client}`);
  const cluster = { hosts, daemons };
  try {
    await pollUntil("etcd to report healthy", 30_000, async () => {
      const res = await fetch(`http://${hosts[0]}/health`, { signal: AbortSignal.timeout(1_000) });
      return res.ok && ((await res.json()) as { health?: string }).health === "true";
    });
  } catch (error) {
    for (const d of daemons) d.kill();
    throw error;
  }
  return cluster;
}
