import { crmUpsertConnector } from "./crm-upsert";
import { httpRequestConnector } from "./http-request";
import { modelDraftConnector } from "./model-draft";
import { sendEmailConnector } from "./send-email";

/** Every connector the workers know; each node kind with `effect: true` in the catalog has one here. */
export const connectors = [httpRequestConnector, sendEmailConnector, crmUpsertConnector, modelDraftConnector] as const;
