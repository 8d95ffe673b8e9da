import { createHmac, randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { z } from "zod";
import { HoldfastError } from "../../base/errors";

/**
 * The deployment's secret key (32 bytes): encrypts connection secrets at rest and derives the approval buttons' token
 * key. It is never written in the source: it comes from HOLDFAST_SECRET_KEY, or from a file that `holdfast key init`
 * (run by `pnpm start`) generates once, readable by its owner only, outside the repository.
 */
export class SecretKeyError extends HoldfastError {
  constructor(message: string) {
    super("secret_key", message);
  }
}

/** The key's settings, for the documentation (`pnpm docs:settings`); the functions below read them from a KeySource. */
export const secretKeyEnv = z.object({
  HOLDFAST_SECRET_KEY: z
    .string()
    .optional()
    .describe(
      "The deployment's secret key (32 bytes, 64 hex characters or base64): encrypts connection secrets and signs approval buttons; back it up. Unset = read from HOLDFAST_SECRET_KEY_FILE",
    ),
  HOLDFAST_SECRET_KEY_FILE: z
    .string()
    .optional()
    .describe("The key's file, which `pnpm holdfast key init` (run by `pnpm start`) generates once; unset = $XDG_CONFIG_HOME/holdfast/secret.key (~/.config)"),
});

/** The environment variables the key is found by: HOLDFAST_SECRET_KEY, HOLDFAST_SECRET_KEY_FILE, XDG_CONFIG_HOME, HOME. */
export type KeySource = Readonly<Record<string, string | undefined>>;

/** Where the generated key lives: HOLDFAST_SECRET_KEY_FILE, else $XDG_CONFIG_HOME/holdfast/secret.key (~/.config). */
export function secretKeyPath(source: KeySource = process.env): string {
  if (source.HOLDFAST_SECRET_KEY_FILE) return source.HOLDFAST_SECRET_KEY_FILE;
  const config = source.XDG_CONFIG_HOME || join(source.HOME || homedir(), ".config");
  return join(config, "holdfast", "secret.key");
}

export function parseSecretKey(raw: string, from: string): Buffer {
  const text = raw.trim();
  const key = /^[0-9a-f]{64}$/i.test(text) ? Buffer.from(text, "hex") : Buffer.from(text, "base64");
  if (key.length !== 32) throw new SecretKeyError(`${from} must hold 32 bytes (64 hex characters or base64)`);
  return key;
}

/** Reads the key from the environment or its file; a clear error when there is none. */
export function loadSecretKey(source: KeySource = process.env): Buffer {
  if (source.HOLDFAST_SECRET_KEY) return parseSecretKey(source.HOLDFAST_SECRET_KEY, "HOLDFAST_SECRET_KEY");
  const path = secretKeyPath(source);
  let raw: string;
  try {
    raw = readFileSync(/* turbopackIgnore: true */ path, "utf8");
  } catch {
    throw new SecretKeyError(
      `no secret key: HOLDFAST_SECRET_KEY is not set and ${path} does not exist. Run \`pnpm holdfast key init\` (pnpm start does) or set HOLDFAST_SECRET_KEY`,
    );
  }
  const mode = statSync(/* turbopackIgnore: true */ path).mode & 0o077;
  if (mode !== 0) throw new SecretKeyError(`${path} can be read by other users (mode ${(statSync(/* turbopackIgnore: true */ path).mode & 0o777).toString(8)}); run chmod 600 ${path}`);
  return parseSecretKey(raw, path);
}

let cached: Buffer | undefined;

/** The process's key, loaded once. */
export function secretKey(): Buffer {
  cached ??= loadSecretKey();
  return cached;
}

/**
 * Creates the key file when neither it nor HOLDFAST_SECRET_KEY exists: 32 random bytes, hex, mode 0600 in a 0700
 * directory, created exclusively (two starts at once cannot write two keys). Returns what happened.
 */
export function initSecretKey(source: KeySource = process.env): { path: string | null; created: boolean } {
  if (source.HOLDFAST_SECRET_KEY) return { path: null, created: false };
  const path = secretKeyPath(source);
  mkdirSync(/* turbopackIgnore: true */ dirname(path), { recursive: true, mode: 0o700 });
  try {
    writeFileSync(/* turbopackIgnore: true */ path, `${randomBytes(32).toString("hex")}\n`, { flag: "wx", mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") {
      loadSecretKey(source); // an unreadable or malformed file is reported now, not at first use
      return { path, created: false };
    }
    throw error;
  }
  chmodSync(/* turbopackIgnore: true */ path, 0o600);
  return { path, created: true };
}

/** A value derived from the key that reveals nothing about it: stored once per database to catch a wrong key. */
export function keyCheckOf(key: Buffer): string {
  return createHmac("sha256", key).update("holdfast secret key check v1").digest("hex");
}
