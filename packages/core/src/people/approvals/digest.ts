import { createHash } from "node:crypto";

/** The digest a decision binds: sha256 over the title and the exact content reviewed. */
export function contentDigest(title: string, content: string): string {
  return createHash("sha256").update(JSON.stringify([title, content])).digest("hex");
}
