import { subscribe } from "node:diagnostics_channel";
import type { IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import { peerHeader } from "./request-info";

let stamped = false;

/**
 * Node publishes `http.server.request.start` for each request before the server's 'request' listener (Next) runs;
 * route handlers read the real peer address from the header written here. The web server (server.ts) sets this up
 * before it listens; under `next dev` a request that arrived before instrumentation ran carries no stamp and is
 * counted under the address "unknown".
 */
export function stampPeerAddress(): void {
  if (stamped) return;
  stamped = true;
  const name = peerHeader();
  subscribe("http.server.request.start", (message) => {
    const { request, socket } = message as { request: IncomingMessage; socket: Socket };
    request.headers[name] = socket.remoteAddress ?? "";
  });
}
