import ipaddr from "ipaddr.js";

/**
 * Which IP addresses an outbound connection may reach: only plain public unicast. Everything else (loopback,
 * RFC 1918, link-local with the cloud metadata service, CGNAT, multicast, reserved, IPv6 ULA ...) belongs to the
 * machine or the network we run in, where an editor's URL could read what only we should see.
 */
export type AddressVerdict =
  | { allowed: true; address: string }
  /** `what` completes "refused to connect to X: <what>"; `reason` is a whole sentence: "127.0.0.1 is a loopback address". */
  | { allowed: false; address: string; range: string; what: string; reason: string };

const ipv4Words: Record<string, string> = {
  unspecified: "an unspecified address (0.0.0.0/8)",
  broadcast: "the broadcast address",
  multicast: "a multicast address",
  linkLocal: "a link-local address",
  loopback: "a loopback address",
  carrierGradeNat: "a carrier-grade NAT address (100.64.0.0/10)",
  private: "a private address (RFC 1918)",
  reserved: "a reserved address",
};

const ipv6Words: Record<string, string> = {
  unspecified: "the unspecified address (::)",
  linkLocal: "a link-local address (fe80::/10)",
  multicast: "a multicast address",
  loopback: "a loopback address",
  uniqueLocal: "a unique local address (fc00::/7)",
  deprecatedSiteLocal: "a site-local address (fec0::/10)",
  discard: "a discard-only address (100::/64)",
  reserved: "a reserved address",
};

/** The cloud metadata services (AWS, GCP, Azure, OpenStack; AWS's IPv6 one): named, since they hold credentials. */
const metadata = new Set(["169.254.169.254", "fd00:ec2::254"]);

/** IPv6 unicast is only ever assigned from 2000::/3; anything else outside the named ranges is unassigned. */
const globalUnicast = ipaddr.IPv6.parseCIDR("2000::/3");

/** Address text as Node and dns.lookup give it (no brackets); a zone id (fe80::1%eth0) is accepted. */
export function classifyAddress(text: string): AddressVerdict {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(text);
  } catch {
    return refuse(text, "invalid", "not an IP address");
  }
  const address = parsed.toString();
  if (parsed.kind() === "ipv4") return classifyIPv4(parsed as ipaddr.IPv4, address);
  return classifyIPv6(parsed as ipaddr.IPv6, address);
}

function classifyIPv4(ip: ipaddr.IPv4, address: string): AddressVerdict {
  const range = ip.range();
  if (range === "unicast") return { allowed: true, address };
  const words = ipv4Words[range] ?? `a special-purpose address (${range})`;
  return refuse(address, range, metadata.has(address) ? `${words} (cloud metadata)` : words);
}

/** NAT64 local-use prefix (RFC 8215): its IPv4 may sit at any RFC 6052 offset, so none can be trusted; refused. */
const nat64LocalUse = ipaddr.parseCIDR("64:ff9b:1::/48");

function classifyIPv6(ip: ipaddr.IPv6, address: string): AddressVerdict {
  if (ip.match(nat64LocalUse)) return refuse(address, "nat64LocalUse", "a local-use NAT64 address (it may translate to any IPv4 address)");
  const range = ip.range();
  // Forms that carry an IPv4 address: what they reach is that IPv4 address, so it decides.
  const embedded = embeddedIPv4(ip, range);
  if (embedded) {
    for (const v4 of embedded.addresses) {
      const inner = classifyIPv4(v4, v4.toString());
      if (!inner.allowed) return refuse(address, `${range}/${inner.range}`, `${embedded.form} of ${inner.address}, ${inner.what}`);
    }
    return { allowed: true, address };
  }
  if (range === "unicast" && ip.match(globalUnicast)) return { allowed: true, address };
  const words = ipv6Words[range] ?? (range === "unicast" ? "an unassigned address (outside 2000::/3)" : `a special-purpose address (${range})`);
  return refuse(address, range, metadata.has(address) ? `${words} (cloud metadata)` : words);
}

function embeddedIPv4(ip: ipaddr.IPv6, range: string): { form: string; addresses: ipaddr.IPv4[] } | null {
  const bytes = ip.toByteArray();
  const v4 = (offset: number, mask = 0) => new ipaddr.IPv4(bytes.slice(offset, offset + 4).map((b) => b ^ mask));
  switch (range) {
    case "ipv4Mapped":
      return { form: "an IPv4-mapped form", addresses: [v4(12)] };
    case "rfc6145":
      return { form: "an IPv4-translated form", addresses: [v4(12)] };
    case "rfc6052":
      return { form: "a NAT64 form", addresses: [v4(12)] };
    case "6to4":
      return { form: "a 6to4 form", addresses: [v4(2)] };
    case "teredo":
      // The Teredo server (bytes 4-7) and the client's obfuscated address (bytes 12-15, inverted).
      return { form: "a Teredo form", addresses: [v4(4), v4(12, 0xff)] };
    default:
      // ::a.b.c.d, the deprecated IPv4-compatible form (::/96 minus :: and ::1).
      if (bytes.slice(0, 12).every((b) => b === 0) && range === "unicast") return { form: "an IPv4-compatible form", addresses: [v4(12)] };
      return null;
  }
}

function refuse(address: string, range: string, what: string): AddressVerdict {
  return { allowed: false, address, range, what, reason: `${address} is ${what}` };
}
