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
   * load balancer does when an operator moves it to a new release's web process.
   */
  switchTo(target: { host: string; port: number }): void;
  /** Connections open now (client side). */
  open(): number;
  close(): Promise<void>;
}

export async function startTcpProxy(first: { host: string; port: number }): Promise<TcpProxy> {
  let target = first;
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;

  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const s = createServer((client) => {
        const upstream = new Socket();
        sockets.add(client);
        sockets.add(upstream);
        const drop = () => {
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
      s.listen(port, "127.0.0.1", () => {
        s.off("error", reject);
        port = (s.address() as { port: number }).port;
        server = s;
        resolve();
      });
    });
  await listen();

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
      if (!server) await listen();
    },
    switchTo(next) {
      target = next;
    },
    open: () => Math.ceil(sockets.size / 2),
    async close() {
      for (const socket of sockets) socket.destroy();
      sockets.clear();
      const s = server;
      server = undefined;
      if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
    },
  };
}
