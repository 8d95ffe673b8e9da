/**
 * Slack's consent page for "Add to Slack": SLACK_AUTHORIZE_URL's default, in a module without imports so the proxy
 * (which builds the pages' Content-Security-Policy and does not load the web's settings) reads the same value.
 */
export const slackAuthorizeUrlDefault = "https://slack.com/oauth/v2/authorize";
