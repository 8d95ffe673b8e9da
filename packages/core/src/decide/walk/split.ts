import { canonicalJson } from "../../base/json";
import { contactPaths, readDottedPath } from "../../versions/kinds/declared-fields";
import { type SplitConfig, splitPaths } from "../../versions/kinds/split";
import type { TriggerConfig } from "../../versions/kinds/trigger";

/**
 * Which path of an A/B split a run takes: a pure function of (who the run is about, the split's node id, the weights).
 * Who the run is about is the contact's email (lower-cased, as a start resolves it: run/start/contact-of.ts), read from
 * the run's input where the trigger says; a run with no contact is known by its input itself (the same delivery is the
 * same input). The same inputs always give the same path: a repeated delivery, a retry or a re-walk cannot change it,
 * and one contact takes the same path in every run that passes the same split.
 */

/** 53 well-mixed bits of a string (cyrb53: two 32-bit multiply-xor lanes). */
export function hash53(text: string): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

/** The split's point for (who, node): a whole number in [0, total weight). */
export function splitPoint(who: string, nodeId: string, total: number): number {
  return hash53(`${who}\u0000${nodeId}`) % total;
}

/** The path a run known by `who` takes at split `nodeId`: the path whose share of the weights holds its point. */
export function choosePath(config: Pick<SplitConfig, "paths">, who: string, nodeId: string): string {
  const paths = splitPaths(config);
  const total = paths.reduce((s, p) => s + p.weight, 0);
  let point = splitPoint(who, nodeId, total);
  for (const p of paths) {
    if (point < p.weight) return p.label;
    point -= p.weight;
  }
  return paths[paths.length - 1]?.label ?? "";
}

/** Who a run is about, for the split: `contact:<email>` from its input where the trigger says, else `input:<its input>`. */
export function splitSubject(trigger: Pick<TriggerConfig, "contactEmailField" | "fields"> | undefined, input: unknown): string {
  const path = trigger ? contactPaths({ ...trigger, contactTimeZoneField: undefined }).email : "email";
  const email = readDottedPath(input, path);
  if (typeof email === "string" && /^[^\s@]+@[^\s@]+$/.test(email.trim())) return `contact:${email.trim().toLowerCase()}`;
  return `input:${canonicalJson(input)}`;
}
