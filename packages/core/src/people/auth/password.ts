import { randomBytes, scrypt as scryptCb, timingSafeEqual } from "node:crypto";
import { promisify } from "node:util";

/**
 * Passwords hashed with scrypt (a slow, memory-hard KDF in Node's crypto): N=2^15, r=8, p=1, 16-byte salt, 64-byte
 * key, stored as `scrypt$N$r$p$salt$hash` so the cost can be raised later without breaking stored hashes.
 */
const scrypt = promisify(scryptCb) as (pw: string, salt: Buffer, len: number, opts: { N: number; r: number; p: number; maxmem: number }) => Promise<Buffer>;
const params = { N: 2 ** 15, r: 8, p: 1 };
const maxmem = 256 * 1024 * 1024;

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password.normalize("NFKC"), salt, 64, { ...params, maxmem });
  return `scrypt$${params.N}$${params.r}$${params.p}$${salt.toString("base64")}$${key.toString("base64")}`;
}

export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  const parts = (stored ?? "").split("$");
  if (parts.length !== 6 || parts[0] !== "scrypt") {
    // Spend the same time as a real check, so a missing user is not told apart from a wrong password by timing.
    await scrypt(password, Buffer.alloc(16), 64, { ...params, maxmem });
    return false;
  }
  const [, n, r, p, salt, hash] = parts as [string, string, string, string, string, string];
  const want = Buffer.from(hash, "base64");
  const got = await scrypt(password.normalize("NFKC"), Buffer.from(salt, "base64"), want.length, { N: Number(n), r: Number(r), p: Number(p), maxmem });
  return got.length === want.length && timingSafeEqual(got, want);
}
