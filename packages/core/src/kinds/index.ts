/** The browser-safe entry (`@holdfast/core/kinds`): step kinds, connection kinds and their form fields. No IO. */
export * from "./fields";
