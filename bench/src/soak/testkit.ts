// The parts of @holdfast/testkit the soak reuses (its servers and process supervisor), in one place.
export { publishBenchAutomation as ensurePublishedAutomation } from "../publish";
export {
  type CrmTarget,
  type HttpTarget,
  type ModelTarget,
  type SlackApi,
  type SmtpTarget,
  freePort,
  sessionCookieFor,
  slackInteraction,
  startCrmTarget,
  startHttpTarget,
  startModelTarget,
  startSlackApi,
  startSmtpTarget,
} from "@holdfast/testkit";
