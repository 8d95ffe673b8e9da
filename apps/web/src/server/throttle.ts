import { createSignInThrottle, type SignInThrottle } from "@holdfast/core/people";
import { createPool } from "@holdfast/db";
import { env, webDatabaseUrl } from "../env";

// rate-limiter-flexible speaks plain `pg`: a small pool of its own (one query per attempt), as the same role as the
// web's Prisma client (holdfast_web; server/db.ts), which may write the table but not create one. Kept on globalThis
// like the Prisma client, so `next dev` reloads do not open a pool each.
const cache = globalThis as typeof globalThis & { holdfastSignInThrottle?: SignInThrottle };

export function signInThrottle(): SignInThrottle {
  cache.holdfastSignInThrottle ??= createSignInThrottle(
    createPool(webDatabaseUrl, { poolSize: 2, applicationName: "holdfast-web-throttle", poolMode: env.DATABASE_POOL_MODE }),
    {
      perAccount: env.SIGNIN_MAX_FAILURES_PER_ACCOUNT,
      perAddress: env.SIGNIN_MAX_FAILURES_PER_ADDRESS,
      windowSeconds: env.SIGNIN_WINDOW_SECONDS,
    },
  );
  return cache.holdfastSignInThrottle;
}
