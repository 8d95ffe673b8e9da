import { readFileSync } from "node:fs";
import { createServer, type Server, Socket } from "node:net";

/**
 * A TCP proxy that can be cut: processes under test connect to PostgreSQL or Redis through it, and a test takes the
 * service away from them (and gives it back) without stopping the real one, which other test files share.
 */
export interface TcpProxy {
  port: number;
  /** `url` with its host and port replaced by this proxy's (user, password, path and query kept). */
  urlFor(url: string): string;
  /** Resets every open connection (both sides) and refuses new ones (the port is closed: ECONNREFUSED). */
  cut(): Promise<void>;
  /** Listens again on the same port. */
  restore(): Promise<void>;
  /**
   * Sends new connections to another server; open ones stay with the old one until either side closes them, as a
   * load balancer does when an operator moves it to a new release's web process. `drainOld`: each connection to an
   * earlier server is closed (FIN) once it has been quiet for 100 ms, i.e. between an HTTP answer and the client's
   * next request on it, as an HTTP load balancer closes a kept-alive connection after its answer while it drains a
   * server: clients reconnect to the new one, and the old server's graceful stop is not kept waiting by keep-alive.
   */
  switchTo(target: { host: string; port: number }, options?: { drainOld?: boolean }): void;
  /** Connections open now (client side). */
  open(): number;
  close(): Promise<void>;
}

export async function startTcpProxy(first: { host: string; port: number }): Promise<TcpProxy> {
  let target = first;
  const sockets = new Set<Socket>();
  /** Each open connection's server and last byte either way (ms), for draining an earlier server. */
  const pairs = new Map<Socket, { upstream: Socket; target: { host: string; port: number }; last: number }>();
  let drainTimer: NodeJS.Timeout | undefined;
  let server: Server | undefined;
  let port = 0;

  const listen = (at: number) =>
    new Promise<void>((resolve, reject) => {
      const s = createServer((client) => {
        const upstream = new Socket();
        sockets.add(client);
        sockets.add(upstream);
        const pair = { upstream, target, last: Date.now() };
        pairs.set(client, pair);
        const touch = () => {
          pair.last = Date.now();
        };
        client.on("data", touch);
        upstream.on("data", touch);
        const drop = () => {
          pairs.delete(client);
          sockets.delete(client);
          sockets.delete(upstream);
          client.destroy();
          upstream.destroy();
        };
        client.on("error", drop);
        upstream.on("error", drop);
        client.on("close", drop);
        upstream.on("close", drop);
        upstream.connect(target.port, target.host);
        client.pipe(upstream);
        upstream.pipe(client);
      });
      s.once("error", reject);
      s.listen(at, "127.0.0.1", () => {
        s.off("error", reject);
        port = (s.address() as { port: number }).port;
        server = s;
        resolve();
      });
    });
  // The port is taken below the kernel's ephemeral range, from which every listener of port 0 gets its own:
  // restore() listens on it again after a cut, and a port of that range could have been handed to another test's
  // server meanwhile (EADDRINUSE). Random within 12,000 ports under the range, so two proxies rarely meet.
  const below = ephemeralLow() - 1;
  for (let tries = 0; ; tries++) {
    const at = tries < 20 && below > 13_024 ? below - Math.floor(Math.random() * 12_000) : 0;
    try {
      await listen(at);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EADDRINUSE" || at === 0) throw error;
    }
  }

  return {
    get port() {
      return port;
    },
    urlFor(url) {
      const u = new URL(url);
      u.hostname = "127.0.0.1";
      u.port = String(port);
      return u.toString();
    },
    async cut() {
      const s = server;
      server = undefined;
      const closed = s ? new Promise<void>((resolve) => s.close(() => resolve())) : Promise.resolve();
      // An abrupt loss (RST), as when the database host or its network goes away; not a polite goodbye.
      for (const socket of sockets) socket.resetAndDestroy();
      sockets.clear();
      await closed;
    },
    async restore() {
      if (!server) await listen(port);
    },
    switchTo(next, options) {
      target = next;
      if (!options?.drainOld || drainTimer) return;
      drainTimer = setInterval(() => {
        let old = 0;
        for (const [client, pair] of pairs) {
          if (pair.target === target) continue;
          old++;
          if (Date.now() - pair.last < 100) continue;
          pairs.delete(client);
          client.end();
          pair.upstream.end();
        }
        if (old === 0) {
          clearInterval(drainTimer);
          drainTimer = undefined;
        }
      }, 25);
    },
    open: () => Math.ceil(sockets.size / 2),
    async close() {
      if (drainTimer) clearInterval(drainTimer);
      drainTimer = undefined;
      for (const socket of sockets) socket.destroy();
      sockets.clear();
      const s = server;
      server = undefined;
      if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
    },
  };
}

/** The first port of the kernel's ephemeral range (Linux's ip_local_port_range; its default, 32768, elsewhere). */
function ephemeralLow(): number {
  try {
    return Number.parseInt(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0] ?? "", 10) || 32_768;
  } catch {
    return 32_768;
  }
}
