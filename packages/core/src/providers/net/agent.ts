import type { LookupAddress, LookupOptions } from "node:dns";
import { Agent as HttpAgent, type AgentOptions, type ClientRequestArgs } from "node:http";
import { Agent as HttpsAgent, type AgentOptions as HttpsAgentOptions } from "node:https";
import type { LookupFunction } from "node:net";
import { isIP } from "node:net";
import type { Duplex } from "node:stream";
import { checkAddress, defaultEgressAllow, type EgressOptions, EgressRefusedError, resolveEgress } from "./egress";

/**
 * node:http / node:https agents through the egress guard, for clients built on them (our http_request over
 * keep-alive agents, axios inside Slack's WebClient). A literal IP is checked before the socket is made (net skips
 * `lookup` for addresses); a name goes through a `lookup` that resolves it once, checks, and hands net only the
 * checked address. TLS still verifies the certificate against the name. Unix sockets are refused.
 */
function guardedConnection(
  egress: EgressOptions,
  options: ClientRequestArgs,
  defaultPort: number,
  callback: ((err: Error | null, stream: Duplex) => void) | undefined,
  create: (options: ClientRequestArgs) => Duplex | null | undefined,
): Duplex | null | undefined {
  const host = options.host ?? options.hostname ?? "localhost";
  const port = Number(options.port) || defaultPort;
  const fail = (error: Error) => {
    process.nextTick(() => callback?.(error, undefined as unknown as Duplex));
    return undefined;
  };
  if (options.socketPath) return fail(new EgressRefusedError(options.socketPath, "a local socket", null, null));
  const bare = host.startsWith("[") ? host.slice(1, -1) : host;
  if (isIP(bare)) {
    const refused = checkAddress(bare, bare, port, egress.allow ?? defaultEgressAllow());
    if (refused) return fail(refused);
    return create(options);
  }
  return create({ ...options, lookup: egressLookup(port, egress) } as ClientRequestArgs);
}

/** A net `lookup` that resolves through the guard: one resolution, checked, and only the checked address returned. */
export function egressLookup(port: number, egress: EgressOptions = {}): LookupFunction {
  return (hostname: string, options: LookupOptions, callback) => {
    resolveEgress(hostname, port, egress).then(
      (to) => (options.all ? callback(null, [{ address: to.address, family: to.family }] as LookupAddress[]) : callback(null, to.address, to.family)),
      (error: NodeJS.ErrnoException) => callback(error, ""),
    );
  };
}

export class EgressHttpAgent extends HttpAgent {
  constructor(
    options: AgentOptions = {},
    private readonly egress: EgressOptions = {},
  ) {
    super(options);
  }
  override createConnection(options: ClientRequestArgs, callback?: (err: Error | null, stream: Duplex) => void): Duplex | null | undefined {
    return guardedConnection(this.egress, options, 80, callback, (o) => super.createConnection(o, callback));
  }
}

export class EgressHttpsAgent extends HttpsAgent {
  constructor(
    options: HttpsAgentOptions = {},
    private readonly egress: EgressOptions = {},
  ) {
    super(options);
  }
  override createConnection(options: ClientRequestArgs, callback?: (err: Error | null, stream: Duplex) => void): Duplex | null | undefined {
    return guardedConnection(this.egress, options, 443, callback, (o) => super.createConnection(o, callback));
  }
}
