import { lookup as dnsLookup } from "node:dns/promises";
import { isIP } from "node:net";
import { egressAllowFromEnv } from "../../base/env";
import { HoldfastError } from "../../base/errors";
import type { StepError } from "../../base/outcome/outcome";
import { classifyAddress } from "./address";
import { type AllowList, allowedAddress, allowedHost } from "../../base/allow-list";

/**
 * The egress guard: every outbound connection whose destination an organisation can choose (http_request, CRM,
 * model, Slack, SMTP, probes) is decided here, at connect time. A name is resolved once, every address it resolves
 * to is checked, and the connection goes to the checked address: a DNS answer that changes between the check and
 * the connect (rebinding) cannot swap it. Only plain public unicast is reached unless HOLDFAST_EGRESS_ALLOW opens
 * an exception. The transports' adapters are in fetch.ts (with request.ts) and smtp.ts.
 */

/** A destination the guard refused: permanent (retrying reaches the same place). */
export class EgressRefusedError extends HoldfastError {
  constructor(
    /** The host as the URL or config named it. */
    readonly host: string,
    /** Plain words: "a link-local address (cloud metadata)", "it resolves to 10.0.0.5, a private address (RFC 1918)". */
    readonly reason: string,
    readonly address: string | null,
    readonly port: number | null,
  ) {
    super("egress_refused", `refused to connect to ${host}: ${reason}; set HOLDFAST_EGRESS_ALLOW to allow it`);
  }
}

export type LookupAll = (host: string) => Promise<{ address: string; family: number }[]>;

export interface EgressOptions {
  /** The exceptions; default HOLDFAST_EGRESS_ALLOW. */
  allow?: AllowList;
  /** Name resolution (tests swap it); default dns.lookup with all: true. */
  lookup?: LookupAll;
}

/** A checked destination: connect to `address` (never to `host` again, which would resolve a second time). */
export interface Destination {
  host: string;
  address: string;
  family: 4 | 6;
  port: number;
  /** The host was an IP address: no TLS server name. */
  literal: boolean;
}

let envAllow: AllowList | undefined;
/** HOLDFAST_EGRESS_ALLOW, parsed on first use (each app has already validated it with its env at start-up). */
export function defaultEgressAllow(): AllowList {
  envAllow ??= egressAllowFromEnv();
  return envAllow;
}

const systemLookup: LookupAll = (host) => dnsLookup(host, { all: true });

/**
 * A host as a URL or config gives it, in the one spelling the guard compares: the WHATWG host parser turns
 * `2130706433`, `0x7f.1`, `0177.0.0.1` and `127.1` into 127.0.0.1 and lowercases names; IPv6 loses its brackets.
 * null: not a host at all.
 */
export function normalizeHost(raw: string): string | null {
  const text = raw.trim();
  const inner = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  if (isIP(inner) === 6) {
    try {
      return new URL(`http://[${inner}]/`).hostname.slice(1, -1);
    } catch {
      return inner.toLowerCase(); // a zone id (fe80::1%eth0), which URLs cannot carry
    }
  }
  if (!text || /[\s@/\\?#%:[\]]/.test(text)) return null;
  try {
    return new URL(`http://${text}/`).hostname.replace(/\.$/, "");
  } catch {
    return null;
  }
}

const shown = (host: string) => (isIP(host) === 6 ? `[${host}]` : host);

/**
 * The decision for one address `host` resolved to (or `host` itself when it is an address). Pure: an exception by
 * name or by address, else the address's own class.
 */
export function checkAddress(host: string, address: string, port: number, allow: AllowList): EgressRefusedError | null {
  if (allowedHost(allow, host, port) || allowedAddress(allow, address, port)) return null;
  const verdict = classifyAddress(address);
  if (verdict.allowed) return null;
  const literal = isIP(host) !== 0;
  // For a name, the reason gives the class but not the address: step errors are shown to every member, and the
  // internal addresses names resolve to are not theirs to map (the error keeps it in `address` for the logs).
  return new EgressRefusedError(shown(host), literal ? verdict.what : `it resolves to ${verdict.what}`, verdict.address, port);
}

/** Resolves `rawHost` once and returns the first address the guard allows; throws EgressRefusedError otherwise. */
export async function resolveEgress(rawHost: string, port: number, options: EgressOptions = {}): Promise<Destination> {
  const allow = options.allow ?? defaultEgressAllow();
  const host = normalizeHost(rawHost);
  if (host === null) throw new EgressRefusedError(rawHost, "not a valid host name", null, port);
  const family = isIP(host);
  if (family) {
    const refused = checkAddress(host, host, port, allow);
    if (refused) throw refused;
    return { host, address: host, family: family as 4 | 6, port, literal: true };
  }
  const candidates = await (options.lookup ?? systemLookup)(host);
  let first: EgressRefusedError | null = null;
  for (const c of candidates) {
    const refused = checkAddress(host, c.address, port, allow);
    if (!refused) return { host, address: c.address, family: c.family === 6 ? 6 : 4, port, literal: false };
    first ??= refused;
  }
  if (!first) throw Object.assign(new Error(`${host} resolves to no address`), { code: "ENOTFOUND" });
  const more = candidates.length - 1;
  throw more > 0 ? new EgressRefusedError(first.host, `${first.reason} (and ${more} more refused address${more > 1 ? "es" : ""})`, first.address, port) : first;
}

/** Hosts that are loopback by definition (RFC 6761), whatever a resolver would say. */
const loopbackName = (host: string) => host === "localhost" || host.endsWith(".localhost");

/**
 * The refusal a literal destination already has, without resolving anything (publish-time and connection checks):
 * an IP address in a refused range, or `localhost`. null: nothing to say before connecting (a name is decided at
 * connect time, since what it resolves to can change).
 */
export function literalUrlRefusal(url: string, allow: AllowList = defaultEgressAllow()): EgressRefusedError | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  const port = Number(parsed.port) || (parsed.protocol === "https:" ? 443 : 80);
  return literalHostRefusal(parsed.hostname, port, allow);
}

export function literalHostRefusal(rawHost: string, port: number, allow: AllowList = defaultEgressAllow()): EgressRefusedError | null {
  const host = normalizeHost(rawHost);
  if (host === null) return new EgressRefusedError(rawHost, "not a valid host name", null, port);
  if (isIP(host)) return checkAddress(host, host, port, allow);
  if (!loopbackName(host) || allowedHost(allow, host, port) || allowedAddress(allow, "127.0.0.1", port)) return null;
  return new EgressRefusedError(host, "a loopback name", null, port);
}

/**
 * The EgressRefusedError behind an error, also when wrapped: as the `cause` of fetch's "fetch failed" TypeError or
 * of an AxiosError, or as the `original` of Slack's request error.
 */
export function egressRefusalOf(error: unknown): EgressRefusedError | null {
  let e: unknown = error;
  for (let i = 0; i < 5 && e && typeof e === "object"; i++) {
    if (e instanceof EgressRefusedError) return e;
    const o = e as { cause?: unknown; original?: unknown };
    e = o.cause ?? o.original;
  }
  return null;
}

/** A refused destination as a step's error: permanent (never retried) and certainly not performed. */
export const egressStepError = (e: EgressRefusedError): StepError & { permanent: true; notPerformed: true } => ({
  code: e.code,
  message: e.message,
  host: e.host,
  reason: e.reason,
  permanent: true,
  notPerformed: true,
});
