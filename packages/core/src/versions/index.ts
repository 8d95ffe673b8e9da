/**
 * The versions layer: the graph, the step kinds and connection kinds, the forms they are edited with, and
 * the checks a version must pass. It imports the base and store layers.
 *
 * `@holdfast/core/versions`: what the apps, the CLI and the tests use of it.
 */
export { orgProblems, runtimeProblems } from "./checks";
export { crmConnectionConfig, type CrmConnectionConfig, crmKind } from "./connection-kinds/crm";
export { httpConnectionConfig, type HttpConnectionConfig, httpKind, underBaseUrl } from "./connection-kinds/http";
export { connectionKind, connectionKindNames, connectionKinds } from "./connection-kinds";
export { type ConfigProblem, connectionConfigProblems, connectionIssueWords, type ConnectionKindModule, connectionNamePattern, connectionNameProblem, connectionSecretProblem, defineConnectionKind, httpUrl, problemSentence } from "./connection-kinds/kind";
export { modelConnectionConfig, type ModelConnectionConfig, modelKind } from "./connection-kinds/model";
export { slackConnectionConfig, type SlackConnectionConfig, slackKind } from "./connection-kinds/slack";
export { smtpConnectionConfig, type SmtpConnectionConfig, smtpKind } from "./connection-kinds/smtp";
export { diffGraphs, type GraphDiff, isEmptyDiff } from "./diff";
export { GraphCache } from "./graph-cache";
export { type Graph, type GraphEdge, graphEdgeSchema, type GraphNode, graphNodeSchema, graphProblems, graphSchema, parseGraph, templateFields, triggerOf, unreachable } from "./graph";
export { type ApprovalConfig, type Approvers, approversSchema, type Decision, type OnDeadline, onDeadlineSchema } from "./kinds/approval";
export { type Condition, conditionSchema } from "./kinds/branch";
export { crmUpsertConfig } from "./kinds/crm_upsert";
export { type HttpRequestConfig, httpRequestConfig } from "./kinds/http_request";
export type { GraphProblem } from "./kinds/kind";
export { modelDraftConfig } from "./kinds/model_draft";
export { type SendEmailConfig, sendEmailConfig } from "./kinds/send_email";
export { type TriggerConfig, triggerConfig } from "./kinds/trigger";
export { isValidZone, type WaitRule, waitRuleSchema } from "./kinds/wait-rule";
export { notAZone, type WaitConfig, waitConfig } from "./kinds/wait";
export { waitForReplyConfig } from "./kinds/wait_for_reply";
export { type AnswerProblem, type AutomationTemplate, automationTemplates, buildFromTemplate, type TemplateGraph, templateOf } from "./kinds/templates";
export { AutomationExistsError, createAutomation, findOrCreateAutomation, newSigningSecret, newUrlToken, revokePreviousTriggerCredentials, rotateTriggerCredential, rotationOverlapSeconds, setTriggerAuth, triggerPath, triggerSettings, type TriggerSettings } from "./triggers/credentials";
export { checkEmailTemplate, type EmailField, emailFieldWords, type EmailTemplateCheck, type EmailVariable } from "./email-templates/check";
export { createSavedEmail, deleteSavedEmail, getSavedEmail, listSavedEmails, type SavedEmail, SavedEmailChangedError, SavedEmailExistsError, SavedEmailInvalidError, SavedEmailLimitError, SavedEmailNotFoundError, updateSavedEmail } from "./email-templates/saved-emails";
