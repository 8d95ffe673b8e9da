import { HoldfastError } from "@holdfast/core/base";
import { automationsFindBySlug, organisationsIdBySlug } from "@holdfast/core/store";
import { rotateTriggerCredential, triggerPath, triggerSettings } from "@holdfast/core/versions";
import type { Db } from "@holdfast/db";

/** `hooks url` and `hooks secret [--rotate]`: what a sender needs to call a trigger. */
export async function hooksCommand(
  db: Db,
  o: { sub: string | undefined; orgSlug: string; automationSlug: string; rotate: boolean; publicUrl: string },
): Promise<void> {
  const orgId = await organisationsIdBySlug(db, o.orgSlug);
  if (!orgId) throw new HoldfastError("org_not_found", `organisation "${o.orgSlug}" not found`);
  const org = { id: orgId };
  const automation = await automationsFindBySlug(db, org.id, o.automationSlug);
  if (!automation) throw new HoldfastError("automation_not_found", `automation "${o.automationSlug}" not found in ${o.orgSlug}`);
  const mode = automation.triggerAuth;
  switch (o.sub) {
    case "url": {
      if (o.rotate) throw new HoldfastError("usage", "hooks url takes no --rotate (rotate the token in the trigger's settings)");
      const settings = await triggerSettings(db, org.id, automation.id, mode);
      console.log(`${o.publicUrl.replace(/\/$/, "")}${triggerPath(o.orgSlug, o.automationSlug, mode, settings.urlToken)}`);
      if (mode === "signed") console.error("(signed trigger: requests must carry Standard Webhooks headers; `hooks secret` prints the secret)");
      return;
    }
    case "secret": {
      if (o.rotate) {
        const secret = await rotateTriggerCredential(db, org.id, automation.id, "signing_secret");
        console.log(secret);
        console.error("(rotated: the previous secret is accepted for 24 more hours)");
        return;
      }
      console.log((await triggerSettings(db, org.id, automation.id, mode)).signingSecret);
      if (mode === "url_token") console.error("(this trigger is in url_token mode: the secret is not needed until it is switched to signed)");
      return;
    }
    default:
      throw new HoldfastError("usage", "hooks url|secret <org> <automation> [--rotate]");
  }
}
