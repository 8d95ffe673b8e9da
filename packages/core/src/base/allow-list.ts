import ipaddr from "ipaddr.js";

/**
 * HOLDFAST_EGRESS_ALLOW: exceptions to the egress guard, comma-separated. Each entry is a host name, an IP address
 * or a CIDR range, optionally with a port: `crm.internal`, `crm.internal:8443`, `10.0.0.0/8`, `127.0.0.1:2525`,
 * `[::1]:25`, `::1`, `[fd00::/8]:443`. A host entry matches that name as written in the URL or config
 * (case-insensitive), whatever it resolves to; an IP or CIDR entry matches the address actually connected to.
 */
export type AllowEntry =
  | { kind: "host"; host: string; port: number | null; text: string }
  | { kind: "cidr"; range: [ipaddr.IPv4 | ipaddr.IPv6, number]; port: number | null; text: string };

export type AllowList = readonly AllowEntry[];

export class AllowListError extends Error {}

const hostName = /^(?=.{1,253}$)[a-z0-9_](?:[a-z0-9_-]{0,62})(?:\.[a-z0-9_](?:[a-z0-9_-]{0,62}))*$/;

/** Parses the whole list; a bad entry throws AllowListError naming it. */
export function parseAllowList(text: string): AllowEntry[] {
  return text
    .split(",")
    .map((e) => e.trim())
    .filter(Boolean)
    .map(parseAllowEntry);
}

/** Every bad entry of a list, as readable sentences (for the environment's validation). */
export function allowListProblems(text: string): string[] {
  const problems: string[] = [];
  for (const entry of text.split(",").map((e) => e.trim()).filter(Boolean)) {
    try {
      parseAllowEntry(entry);
    } catch (error) {
      problems.push((error as Error).message);
    }
  }
  return problems;
}

export function parseAllowEntry(text: string): AllowEntry {
  const bad = (why: string) => new AllowListError(`"${text}" is not a host, IP address or CIDR range with an optional :port (${why})`);
  let target = text;
  let portText: string | undefined;
  const bracketed = /^\[([^\]]+)\](?::(.*))?$/.exec(text);
  if (bracketed) {
    target = bracketed[1] as string;
    portText = bracketed[2];
  } else if ((text.match(/:/g) ?? []).length === 1) {
    [target, portText] = text.split(":") as [string, string];
  }
  let port: number | null = null;
  if (portText !== undefined) {
    if (!/^\d{1,5}$/.test(portText) || Number(portText) < 1 || Number(portText) > 65_535) throw bad("the port must be 1-65535");
    port = Number(portText);
  }
  if (target.includes("/")) {
    try {
      return { kind: "cidr", range: ipaddr.parseCIDR(target), port, text };
    } catch {
      throw bad("an invalid CIDR range");
    }
  }
  if (target.includes(":")) {
    if (!ipaddr.IPv6.isValid(target)) throw bad("an invalid IPv6 address");
    return { kind: "cidr", range: [ipaddr.IPv6.parse(target), 128], port, text };
  }
  if (bracketed) throw bad("only IPv6 addresses go in brackets");
  if (/[\s@/\\?#%]/.test(target)) throw bad("an invalid host name");
  // The WHATWG host parser: "127.1" and "0x7f.0.0.1" are the IPv4 address they spell, names are lowercased.
  let host: string;
  try {
    host = new URL(`http://${target}/`).hostname;
  } catch {
    throw bad("an invalid host name");
  }
  if (ipaddr.IPv4.isValidFourPartDecimal(host)) return { kind: "cidr", range: [ipaddr.IPv4.parse(host), 32], port, text };
  host = host.replace(/\.$/, "");
  if (!hostName.test(host)) throw bad("an invalid host name");
  return { kind: "host", host, port, text };
}

const portMatches = (entry: AllowEntry, port: number) => entry.port === null || entry.port === port;

/** The entry that opens this host name (normalized, as normalizeHost gives it) on this port, if any. */
export function allowedHost(allow: AllowList, host: string, port: number): AllowEntry | undefined {
  const name = host.toLowerCase().replace(/\.$/, "");
  return allow.find((e) => e.kind === "host" && e.host === name && portMatches(e, port));
}

/** The entry that opens this address on this port, if any. IPv4-mapped IPv6 addresses match IPv4 entries. */
export function allowedAddress(allow: AllowList, address: string, port: number): AllowEntry | undefined {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.process(address);
  } catch {
    return undefined;
  }
  return allow.find((e) => e.kind === "cidr" && e.range[0].kind() === ip.kind() && ip.match(e.range) && portMatches(e, port));
}
