/** The browser-safe entry (`@holdfast/core/kinds`): step kinds, connection kinds and their form fields. No IO. */
export * from "../forms/fields";
export * from "./kind";
export * from "./registry";
export { approversWords, type Approvers, type Decision } from "./approval";
export { conditionSentence, opWords, type Condition } from "./branch";
export { ruleWords, zoneWords } from "./wait";
export { durationWords, listWords, weekdayNames } from "./words";
export { nodeId } from "./ids";
export { commonIdFields, detectIdFields } from "./id-fields";
export { isValidZone, type WaitRule } from "./wait-rule";
export { type Flow, type FlowGraph, flowOf } from "./flow";
export { payloadPaths, sampleOf, type Variable, variablesAt } from "./variables";
export * from "../connection-kinds";
export { defaultConfigIn, triggerZonePath } from "./defaults";
export { type AnswerProblem, type AutomationTemplate, automationTemplates, buildFromTemplate, type TemplateGraph, templateOf } from "./templates";
export {
  attributeLimits,
  type AttributeValue,
  attributeValue,
  contactAttributesOf,
  contactPaths,
  type DeclaredField,
  declaredFieldSchema,
  declaredFieldsSchema,
  fieldRoles,
  fieldRoleWords,
  fieldTypes,
  fieldTypeWords,
  keptKeyOf,
  mergeSamples,
  reservedContactKeys,
  sampleFromFields,
} from "./declared-fields";
export { declaredSample, keptContactKeys } from "./trigger";
