import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";

/**
 * Connection secrets at rest: AES-256-GCM with a deployment key (HOLDFAST_SECRET_KEY: 32 bytes, base64 or hex).
 * Stored as `v1:<iv>:<tag>:<ciphertext>` (base64 parts), bound to the organisation and connection id as associated
 * data, so a ciphertext copied to another row does not decrypt. Without a key, development processes use a fixed
 * development key and say so; production refuses to start a connection without one.
 */
const devKey = createHash("sha256").update("holdfast development key: not for production").digest();

export class SecretKeyError extends Error {}

export function secretKey(env: NodeJS.ProcessEnv = process.env): Buffer {
  const raw = env.HOLDFAST_SECRET_KEY;
  if (!raw) {
    if (env.NODE_ENV === "production") throw new SecretKeyError("HOLDFAST_SECRET_KEY is not set: connection secrets cannot be read");
    return devKey;
  }
  const key = /^[0-9a-f]{64}$/i.test(raw) ? Buffer.from(raw, "hex") : Buffer.from(raw, "base64");
  if (key.length !== 32) throw new SecretKeyError("HOLDFAST_SECRET_KEY must be 32 bytes (64 hex characters or base64)");
  return key;
}

const aad = (orgId: string, connectionId: string) => Buffer.from(`${orgId}/${connectionId}`);

export function encryptSecret(plain: string, orgId: string, connectionId: string, key = secretKey()): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(aad(orgId, connectionId));
  const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
  return ["v1", iv.toString("base64"), cipher.getAuthTag().toString("base64"), body.toString("base64")].join(":");
}

export function decryptSecret(stored: string, orgId: string, connectionId: string, key = secretKey()): string {
  const [version, iv, tag, body] = stored.split(":");
  if (version !== "v1" || !iv || !tag || body === undefined) throw new SecretKeyError("unknown secret format");
  const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64"));
  decipher.setAAD(aad(orgId, connectionId));
  decipher.setAuthTag(Buffer.from(tag, "base64"));
  return Buffer.concat([decipher.update(Buffer.from(body, "base64")), decipher.final()]).toString("utf8");
}
