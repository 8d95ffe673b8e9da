import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Daemon, startDaemon } from "./daemon";
import type { PatroniNode } from "./patroni-config";

/**
 * HAProxy's configuration: one read-write listener whose backends are the PostgreSQL nodes, checked with Patroni's
 * REST API (`GET /primary` answers 200 only on the leader). Checks every 500 ms, down after 2 failures, up after 1;
 * when a node is marked down its sessions are cut, so a client never keeps talking to a demoted or dead primary.
 */
export function haproxyConfig(port: number, nodes: PatroniNode[]): string {
  return [
    "global",
    "  maxconn 2000",
    "defaults",
    "  mode tcp",
    "  timeout connect 2s",
    // Pooled and LISTEN connections sit idle for long; the client's keepalive and the checks find dead ones.
    "  timeout client 1h",
    "  timeout server 1h",
    "  timeout check 1s",
    "listen postgres_rw",
    `  bind 127.0.0.1:${port}`,
    "  option httpchk GET /primary",
    "  http-check expect status 200",
    "  default-server inter 500ms fall 2 rise 1 on-marked-down shutdown-sessions",
    ...nodes.map((n) => `  server ${n.name} 127.0.0.1:${n.pgPort} check port ${n.restPort}`),
    "",
  ].join("\n");
}

export function startHaproxy(dir: string, port: number, nodes: PatroniNode[]): Daemon {
  const cfg = join(dir, "haproxy.cfg");
  writeFileSync(cfg, haproxyConfig(port, nodes));
  // -db: stay in the foreground (no daemon), so stop() can kill it by its pid.
  return startDaemon("haproxy", "/usr/sbin/haproxy", ["-db", "-f", cfg], { log: join(dir, "haproxy.log") });
}
