-- Sessions end at the first of two instants, both by the database clock: expires_at (absolute, from sign-in) and
-- idle_expires_at (pushed forward on use, never past expires_at). A session is valid exactly while
--   expires_at > now() AND idle_expires_at > now()
-- Existing sessions get the default idle window (720 minutes) from now.
ALTER TABLE "sessions" ADD COLUMN "idle_expires_at" TIMESTAMPTZ(6);
UPDATE "sessions" SET "idle_expires_at" = least("expires_at", now() + interval '720 minutes');
ALTER TABLE "sessions" ALTER COLUMN "idle_expires_at" SET NOT NULL;

-- Sign-in throttling counters, in the layout rate-limiter-flexible's RateLimiterPostgres reads and writes
-- (key, points, expire in epoch milliseconds). Created here so the web's database role needs no CREATE right.
CREATE TABLE "signin_throttle" (
  "key" TEXT NOT NULL,
  "points" INTEGER NOT NULL DEFAULT 0,
  "expire" BIGINT,
  CONSTRAINT "signin_throttle_pkey" PRIMARY KEY ("key")
);
CREATE INDEX "signin_throttle_expire_idx" ON "signin_throttle"("expire");
