import { randomBytes } from "node:crypto";
import { HoldfastError } from "@holdfast/core/base";
import { setUserPassword } from "@holdfast/core/people";
import type { Db } from "@holdfast/db";

/** `users password <email> [--password-env VAR]`: a new password, and every session of the user ends. */
export async function setPasswordCommand(db: Db, email: string, passwordVar: string | undefined): Promise<void> {
  let password: string;
  if (passwordVar) {
    const fromEnv = process.env[passwordVar];
    if (!fromEnv || fromEnv.length < 10) throw new HoldfastError("usage", `environment variable ${passwordVar} must hold a password of 10 characters or more`);
    password = fromEnv;
  } else password = randomBytes(12).toString("base64url");
  const outcome = await setUserPassword(db, email, password);
  if (!outcome) throw new HoldfastError("user_not_found", `no user with the email ${email}`);
  console.log(passwordVar ? `password of ${email} set from $${passwordVar}` : `new password of ${email}: ${password}`);
  console.log(`signed out of ${outcome.sessionsRevoked} session(s)`);
}
