import type { Browser } from "playwright-core";

/**
 * The browsers launchChromium started and that are still open; failure-report.ts shows their pages when a test
 * fails. A module of its own, with no imports, so the setup file loads nothing else into every test file.
 */
export const openBrowsers = new Set<Browser>();
