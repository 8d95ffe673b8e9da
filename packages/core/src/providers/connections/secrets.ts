import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { SecretKeyError, secretKey } from "../../store/keys/secret-key";

/**
 * Connection secrets at rest: AES-256-GCM with the deployment's key (store/keys/secret-key.ts: HOLDFAST_SECRET_KEY or the
 * generated key file; never a key written in the source). Stored as `v1:<iv>:<tag>:<ciphertext>` (base64 parts),
 * bound to the organisation and connection id as associated data, so a ciphertext copied to another row does not
 * decrypt.
 */
export { SecretKeyError, secretKey };

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
