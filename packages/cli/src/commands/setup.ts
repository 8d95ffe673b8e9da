import { migrateUrl as migrateUrlOf } from "@holdfast/core/base";
import { initSecretKey } from "@holdfast/core/store";
import { type Db, ensureDatabase, migrate, setRolePasswords, urlAsRole } from "@holdfast/db";
import { type CommandInput, UsageError } from "../command-line";

/** `migrate`: create the database if needed, apply migrations and give the roles the configured passwords. */
export async function migrateCommand({ env }: CommandInput): Promise<void> {
  // Never through PgBouncer's transaction mode: migrations hold a session lock (say so rather than fail halfway).
  const migrateUrl = migrateUrlOf(env, (url) => urlAsRole(url, "postgres"));
  const created = await ensureDatabase(migrateUrl);
  const result = await migrate(migrateUrl);
  console.log(
    `${created ? "created database; " : ""}applied ${result.applied.length}, already applied ${result.skipped.length}; ` +
      `stored functions from their files: ${result.functions.length}`,
  );
  for (const name of result.applied) console.log(`  + ${name}`);
  const passwords = await setRolePasswords(migrateUrl, [env.DATABASE_URL, ...(env.WEB_DATABASE_URL ? [env.WEB_DATABASE_URL] : [])]);
  if (passwords.length) console.log(`set the password of ${passwords.join(", ")} from the configured URLs`);
}

/**
 * `key check`: main's start-up check already ran (the key exists and is the database's; the first process to check
 * records it): say so. The compose file's migrate service runs it, so a missing or wrong key stops the deployment
 * before any process starts.
 */
export async function keyCheckCommand(_db: Db, { sub, rest }: CommandInput): Promise<void> {
  if (sub !== "check" || rest.length) throw new UsageError("key check");
  console.log("the secret key is this database's");
}

/** `key init`: generate the secret key file if there is no key. */
export async function keyCommand({ sub, rest }: CommandInput): Promise<void> {
  if (sub !== "init" || rest.length) throw new UsageError("key init");
  const key = initSecretKey();
  if (!key.path) console.log("using HOLDFAST_SECRET_KEY from the environment");
  else if (key.created) {
    console.log(`generated the secret key: ${key.path} (readable by you only)`);
    console.log("  back it up: connection secrets in the database cannot be read without it");
  } else console.log(`using the secret key in ${key.path}`);
}
