import { createHmac, hkdfSync, timingSafeEqual } from "node:crypto";
import type { Db, Tx } from "@holdfast/db";
import { z } from "zod";
import { secretKey } from "../../store/keys/secret-key";
import { signalsSentMessagesBySteps } from "../../store/sql/signals";

/**
 * Reply routing: a sent email's Reply-To is `reply+<token>@<INBOUND_EMAIL_DOMAIN>`, the token naming the send_email
 * step that sent it and carrying a MAC over (organisation, run, step) keyed with the deployment's secret. A reply to
 * that address is matched to the message without In-Reply-To (clients and forwarders drop it), and nobody can make
 * an address that routes to a run they do not have an email from.
 *
 * The token is base32 (lower case: mail systems may change the case of a local part, and base32 survives it) of the
 * step id's 16 bytes and 10 bytes of HMAC-SHA256: 42 characters, so `reply+<token>` stays within the 64 a local part
 * may have.
 */
const alphabet = "abcdefghijklmnopqrstuvwxyz234567";
const macBytes = 10;
export const routingTokenPattern = /^[a-z2-7]{42}$/;

export interface RouteRef {
  orgId: string;
  runId: string;
  stepId: string;
}

let routingKey: Buffer | undefined;
const key = () => (routingKey ??= Buffer.from(hkdfSync("sha256", secretKey(), Buffer.alloc(0), "holdfast reply routing v1", 32)));

const mac = (ref: RouteRef, k: Buffer) => createHmac("sha256", k).update(`${ref.orgId}\n${ref.runId}\n${ref.stepId}`).digest().subarray(0, macBytes);

function base32(bytes: Uint8Array): string {
  let bits = 0;
  let value = 0;
  let out = "";
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += alphabet[(value << (5 - bits)) & 31];
  return out;
}

function unbase32(text: string): Buffer | null {
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const c of text) {
    const v = alphabet.indexOf(c);
    if (v < 0) return null;
    value = ((value << 5) | v) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  // The canonical encoding only: the bits left over past the last byte are zero, as base32() writes them. Otherwise
  // two addresses (differing in those bits alone) would name one token, and a changed address would still be taken.
  if ((value & ((1 << bits) - 1)) !== 0) return null;
  return Buffer.from(out);
}

/** The routing token of a send_email step (the same for every attempt of the step). */
export function replyRoutingToken(ref: RouteRef, k: Buffer = key()): string {
  const hex = /^stp_([0-9a-f]{32})$/.exec(ref.stepId)?.[1];
  if (!hex) throw new Error(`not a step id: ${ref.stepId}`);
  return base32(Buffer.concat([Buffer.from(hex, "hex"), mac(ref, k)]));
}

/** What a token claims before it is checked: the step it names and its MAC. Null when it is not a token's shape. */
export function parseRoutingToken(token: string): { stepId: string; mac: Buffer } | null {
  const t = token.toLowerCase();
  if (!routingTokenPattern.test(t)) return null;
  const bytes = unbase32(t);
  if (!bytes || bytes.length !== 16 + macBytes) return null;
  return { stepId: `stp_${bytes.subarray(0, 16).toString("hex")}`, mac: bytes.subarray(16) };
}

/** True when the token is the one this deployment issued for exactly this organisation, run and step. */
export function routingTokenMatches(token: string, ref: RouteRef, k: Buffer = key()): boolean {
  const parsed = parseRoutingToken(token);
  if (!parsed || parsed.stepId !== ref.stepId) return false;
  return timingSafeEqual(parsed.mac, mac(ref, k));
}

/** `reply+<token>@<domain>` for a step. */
export function replyRoutingAddress(ref: RouteRef, domain: string, k: Buffer = key()): string {
  return `reply+${replyRoutingToken(ref, k)}@${domain}`;
}

/** The token of a routing address (`reply+<token>@any.domain`, any case), or null when the address is not one. */
export function routingTokenOf(address: string): string | null {
  const m = /^\s*<?reply\+([a-z2-7]{42})@[^\s@>]+>?\s*$/i.exec(address);
  return m?.[1] ? m[1].toLowerCase() : null;
}

const domainSchema = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$|^localhost$/, "must be a mail domain such as reply.example.com");

/**
 * INBOUND_EMAIL_DOMAIN: the domain whose mail reaches this deployment's inbound paths (the SMTP receiver's MX, or a
 * provider's inbound parse). Set: every email carries a routing Reply-To. Unset or empty: no Reply-To is added.
 */
export function inboundEmailDomain(source: Readonly<Record<string, string | undefined>> = process.env): string | null {
  const raw = source.INBOUND_EMAIL_DOMAIN;
  if (raw === undefined || raw.trim() === "") return null;
  if (lastDomain?.raw === raw) return lastDomain.domain;
  const parsed = domainSchema.safeParse(raw);
  if (!parsed.success) throw new Error(`INBOUND_EMAIL_DOMAIN ${parsed.error.issues[0]?.message ?? "is not a domain"}`);
  lastDomain = { raw, domain: parsed.data };
  return parsed.data;
}
let lastDomain: { raw: string; domain: string } | undefined;

/** A verified route: the organisation and run of the step a routing address names, and the Message-ID it sent. */
export interface ReplyRoute extends RouteRef {
  orgSlug: string;
  /** The Message-ID of the email the step sent (null: it has not sent one, e.g. skipped). */
  messageId: string | null;
}

export interface RouteResolution {
  routes: ReplyRoute[];
  /** Routing addresses among the recipients that this deployment did not issue (forged or mangled). */
  refused: string[];
}

/**
 * The routes of the routing addresses among `addresses`: each token's step is read (across organisations: the
 * caller's database scope must allow it), and only a token whose MAC matches that step's organisation and run counts.
 */
export async function resolveReplyRoutes(db: Db | Tx, addresses: string[], k: Buffer = key()): Promise<RouteResolution> {
  const tokens = [...new Set(addresses.map(routingTokenOf).filter((t): t is string => t !== null))];
  if (tokens.length === 0) return { routes: [], refused: [] };
  const claimed = tokens.map((t) => ({ token: t, parsed: parseRoutingToken(t) }));
  const ids = claimed.flatMap((c) => (c.parsed ? [c.parsed.stepId] : []));
  const steps = await signalsSentMessagesBySteps(db as Tx, ids);
  const routes: ReplyRoute[] = [];
  const refused: string[] = [];
  for (const c of claimed) {
    const step = steps.find((s) => s.stepId === c.parsed?.stepId);
    if (step && routingTokenMatches(c.token, step, k)) routes.push(step);
    else refused.push(c.token);
  }
  return { routes, refused };
}
