import { Agent, buildConnector, fetch as undiciFetch } from "undici";
import { type EgressOptions, resolveEgress } from "./egress";

/**
 * fetch through the egress guard: an undici Agent whose `connect` resolves and checks the destination, then opens
 * the socket to the checked address (TLS keeps the original name for SNI and the certificate). Every connection
 * the agent makes goes through it, so a redirect to another host, or a URL with a literal IP, is checked too.
 */
export function egressDispatcher(options: EgressOptions & { connectTimeoutMs?: number } = {}): Agent {
  const connect = buildConnector({ timeout: options.connectTimeoutMs ?? 10_000 });
  return new Agent({
    // At most this many connections to one origin at once (more calls wait for one), as node:http's agents had.
    connections: 256,
    connect(opts, callback) {
      const port = Number(opts.port) || (opts.protocol === "https:" ? 443 : 80);
      resolveEgress(opts.hostname, port, options).then(
        (to) => connect({ ...opts, hostname: to.address, ...(to.literal || opts.servername ? {} : { servername: to.host }) }, callback),
        (error: Error) => callback(error, null),
      );
    },
  });
}

export type GuardedFetch = typeof undiciFetch;

/** A fetch bound to its own guarded agent (tests pass their own allow list and resolver). */
export function egressFetch(options: EgressOptions = {}): GuardedFetch {
  const dispatcher = egressDispatcher(options);
  return (input, init) => undiciFetch(input, { ...init, dispatcher });
}

let shared: Agent | undefined;
/**
 * The process's guarded agent, with HOLDFAST_EGRESS_ALLOW: its connections are kept alive and shared by every outside
 * call of the process (guardedFetch, net/request.ts), so a chain of calls to one provider reuses them.
 */
export function guardedDispatcher(): Agent {
  shared ??= egressDispatcher();
  return shared;
}

/** The process's guarded fetch, with HOLDFAST_EGRESS_ALLOW. The only fetch core code uses for outside calls. */
export const guardedFetch: GuardedFetch = (input, init) => undiciFetch(input, { ...init, dispatcher: guardedDispatcher() });
