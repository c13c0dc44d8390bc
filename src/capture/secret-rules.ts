/**
 * The rules the secrets scan runs: secretlint's recommended preset, and rules of ours in secretlint's
 * rule format for the kinds the preset does not cover (GitLab, Stripe, Google API keys, JWTs, and
 * `NAME=value` lines whose name says it holds a secret). Each rule reports the secret's own range.
 */
import { rules as presetRules } from "@secretlint/secretlint-rule-preset-recommend";
import type { SecretLintRuleContext, SecretLintRuleCreator } from "@secretlint/types";

const only = (text: string) => ({ en: (_props?: { VALUE: string }) => text });

/** A rule that reports every match of `pattern` (group 1 when it has one: the secret inside the match). */
function patternRule(id: string, message: string, pattern: RegExp) {
  const messages = { [id]: only(message) };
  return {
    messages,
    meta: { id, type: "scanner", recommended: true, supportedContentTypes: ["text"] },
    create(context: SecretLintRuleContext) {
      const t = context.createTranslator(messages);
      return {
        file(source) {
          for (const match of source.content.matchAll(pattern)) {
            const value = match[1] ?? match[0];
            const start = match.index + match[0].lastIndexOf(value);
            context.report({ message: t(id, { VALUE: value }), range: [start, start + value.length] });
          }
        },
      };
    },
  } satisfies SecretLintRuleCreator;
}

/**
 * Words in a variable's or key's name that say its value is a secret (`DB_PASSWORD`, `"client_secret"`);
 * `key` counts only after `api`, `access`, `private` or `auth` (`apiKey`, `PRIVATE_KEY`).
 */
const SECRET_WORDS = ["secret", "token", "passw", "pwd", "credential", "key"];
const KEY_OWNER = /(?:api|access|private|auth)[_-]?$/i;

/**
 * Where the words are in a text, in order: one case-insensitive expression per word, each searched
 * as fast as `indexOf` (one expression of them all, or the text in lower case, takes ten times as long).
 */
export function secretWordsIn(text: string, words: readonly string[] = SECRET_WORDS): { start: number; end: number }[] {
  const hits: { start: number; end: number }[] = [];
  for (const word of words)
    for (const match of text.matchAll(new RegExp(word, "gi"))) {
      const start = match.index;
      if (word === "key" && !KEY_OWNER.test(text.slice(Math.max(0, start - 8), start))) continue;
      hits.push({ start, end: start + word.length });
    }
  return hits.sort((a, b) => a.start - b.start);
}

const NAME_CHAR = /[A-Za-z0-9_.-]/;
/** What may stand before a name: a line, a space, a JSON object's brace or comma, a quote. */
const BEFORE_NAME = /[\s{,;(\\"']/;
/** The rest of the name after a secret word, the `=` or `:`, an opening quote (group 1) and the value (group 2). */
const ASSIGNED = /[A-Za-z0-9_.-]*[ \t]*["']?[ \t]*[:=][ \t]*(["']?)[ \t]*([^\s"'\x60\\,;{}<>()[\]]{8,})/y;

/** Code, not a value: a member chain (`options.keepSecrets`, `r.tokens`). */
const MEMBER_CHAIN = /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$/;

/**
 * A value worth hiding. Quoted (`"password": "…"`, `token = '…'`): a string literal, hidden when it
 * has a digit or a symbol, or mixes cases over 16 characters or more (a constant's name such as
 * `"PAYLOAD_PROBE_TOKEN_CACHE"` does not). Unquoted (`DB_PASSWORD=…`, `token: …`): code as often as
 * not (`tokens: r.tokens`), so hidden only with a digit and when it is no member chain. Figures
 * (`max_tokens: 100000000`) and references (`${TOKEN}`) never.
 */
function secretLooking(value: string, quoted: boolean): boolean {
  if (/^\d+$/.test(value) || value.startsWith("$") || value.startsWith("%")) return false;
  if (!quoted) return /\d/.test(value) && !MEMBER_CHAIN.test(value);
  return /[\d!@#%^&*+/=~?]/.test(value) || (value.length >= 16 && /[a-z]/.test(value) && /[A-Z]/.test(value));
}

/**
 * `NAME=value`, `NAME: value`, `"name": "value"`, `export NAME=value` where the name holds a secret
 * word: found from the words, so a text without them costs a few `indexOf`s. Scanned texts have
 * their JSON escapes written as a space and the character (secrets.ts), so a quote or a line break
 * inside a JSON string reads as one here.
 */
const genericMessages = { "generic-secret": only("a value assigned to a name that says secret") };
const genericRule = {
  messages: genericMessages,
  meta: { id: "generic-secret", type: "scanner", recommended: true, supportedContentTypes: ["text"] },
  create(context: SecretLintRuleContext) {
    const t = context.createTranslator(genericMessages);
    return {
      file({ content }) {
        for (const hit of secretWordsIn(content)) {
          let start = hit.start;
          while (start > 0 && NAME_CHAR.test(content[start - 1]!)) start--;
          if (start > 0 && !BEFORE_NAME.test(content[start - 1]!)) continue;
          ASSIGNED.lastIndex = hit.end;
          const match = ASSIGNED.exec(content);
          if (!match || !secretLooking(match[2]!, match[1] !== "")) continue;
          const end = ASSIGNED.lastIndex;
          const value = match[2]!;
          context.report({ message: t("generic-secret", { VALUE: value }), range: [end - value.length, end] });
        }
      },
    };
  },
} satisfies SecretLintRuleCreator;

/** Rules of ours, each with the regions it reads; each id is also the kind its markers name. */
export const OWN_RULES: { rule: SecretLintRuleCreator; regions: Regions }[] = [
  {
    rule: patternRule(
      "gitlab-token",
      "GitLab token",
      /(?<![A-Za-z0-9_-])gl(?:pat|dt|rt|ptt|soat|cbt|imt|ffct|agent|oas)-[A-Za-z0-9_-]{20,}/g,
    ),
    regions: around(
      ["glpat-", "gldt-", "glrt-", "glptt-", "glsoat-", "glcbt-", "glimt-", "glffct-", "glagent-", "gloas-"],
      16,
      512,
    ),
  },
  {
    rule: patternRule("stripe-key", "Stripe secret key", /(?<![A-Za-z0-9])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,}/g),
    regions: around(["sk_live_", "sk_test_", "rk_live_", "rk_test_"], 16, 512),
  },
  {
    rule: patternRule("stripe-key", "Stripe webhook secret", /(?<![A-Za-z0-9])whsec_[A-Za-z0-9]{24,}/g),
    regions: around(["whsec_"], 16, 512),
  },
  {
    rule: patternRule("google-api-key", "Google API key", /(?<![A-Za-z0-9_-])AIza[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])/g),
    regions: around(["AIza"], 16, 64),
  },
  {
    rule: patternRule(
      "jwt",
      "JSON Web Token",
      /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}(?![A-Za-z0-9_-])/g,
    ),
    regions: around(["eyJ"], 16, 16_384),
  },
  // A name is at most 64 characters ahead of its secret word, a value within 512 after it.
  {
    rule: genericRule,
    regions: (text) => secretWordsIn(text).map((hit) => ({ start: hit.start - 64, end: hit.end + 512 })),
  },
];

/** A text's parts worth a rule's time: a rule given them reads only those (and what is near them). */
export type Regions = (text: string) => { start: number; end: number }[];

/**
 * Regions around each place one of `anchors` (literal text every find of the rule contains) is in a
 * text: from `before` characters ahead of it (a rule's look-behind, a URL's scheme) to `after`
 * characters past it, longer than any find of the rule. `indexOf` finds literals many times faster
 * than the rules' expressions, which start with a look-behind or `\b` and so try every position.
 */
function around(anchors: readonly string[], before: number, after: number): Regions {
  // One expression of literals: V8 searches it as fast as one `indexOf`, where one `indexOf` per anchor adds up.
  const pattern = new RegExp(anchors.map((anchor) => anchor.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|"), "g");
  return (text) =>
    [...text.matchAll(pattern)].map((match) => ({ start: match.index - before, end: match.index + after }));
}

const AWS_KEY_ID = /(?:A3T[A-Z0-9]|AKIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ASIA)[A-Z0-9]{16}/g;

/**
 * Where the AWS rule can find anything: near the word "secret" (its secret key needs a
 * `aws_secret_access_key`-like name) and at an access key ID.
 */
const awsRegions: Regions = (text) => [
  ...secretWordsIn(text, ["secret"]).map((hit) => ({ start: hit.start - 32, end: hit.end + 128 })),
  ...[...text.matchAll(AWS_KEY_ID)].map((match) => ({ start: match.index - 8, end: match.index + 28 })),
];

/** Every URL rule's finds hold `://`; a scheme (`mongodb+srv`, `jdbc:mysqlx`) is at most 16 characters ahead. */
const URL_REGIONS = around(["://"], 16, 1024);

/** Where each preset rule (by the end of its id) reads. */
const PRESET_REGIONS: Record<string, Regions> = {
  aws: awsRegions,
  privatekey: around(["PRIVATE KEY"], 64, 10_200),
  npm: around(["npm_", "_authToken"], 16, 1024),
  basicauth: URL_REGIONS,
  "database-connection-string": URL_REGIONS,
  slack: (text) => [...around(["xox", "xapp-"], 16, 512)(text), ...URL_REGIONS(text)],
  sendgrid: around(["SG."], 16, 512),
  shopify: around(["shppa_", "shpca_", "shpat_", "shpss_"], 16, 256),
  github: around(["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", ":x-oauth-basic@"], 280, 256),
  openai: around(["T3BlbkFJ"], 128, 128),
  anthropic: around(["sk-ant-"], 16, 256),
  linear: around(["lin_api_"], 16, 256),
  "1password": around(["ops_"], 16, 1600),
};

/**
 * The preset's rules we run, each on its regions: all but its comment filter (a body could switch
 * scanning off with a `secretlint-disable` comment) and its GCP rule (it parses the whole text as a
 * service account file, which a body never is; the key in one is found as a private key). The AWS
 * rule runs with its access key ID scan on.
 */
export const PRESET_RULES: { rule: SecretLintRuleCreator<never>; options: object; regions: Regions }[] = presetRules
  .map((rule) => ({ rule, short: rule.meta.id.replace("@secretlint/secretlint-rule-", "") }))
  .filter(({ short }) => PRESET_REGIONS[short] !== undefined)
  .map(({ rule, short }) => ({
    rule,
    options: short === "aws" ? { enableIDScanRule: true } : {},
    regions: PRESET_REGIONS[short]!,
  }));

/** Preset message ids that name no secret (an AWS account id is an identifier), so nothing is replaced. */
export const NOT_SECRET_MESSAGES = new Set(["AWSAccountID"]);

/** The kind a marker names for a preset rule's finding, by message id where one rule finds several kinds. */
export function presetKind(ruleId: string, messageId: string): string {
  if (messageId === "AWSSecretAccessKey") return "aws-secret-key";
  if (messageId === "AWSAccessKeyID") return "aws-access-key-id";
  const short = ruleId.replace("@secretlint/secretlint-rule-", "");
  return PRESET_KINDS[short] ?? short;
}

const PRESET_KINDS: Record<string, string> = {
  github: "github-token",
  slack: "slack-token",
  npm: "npm-token",
  openai: "openai-key",
  anthropic: "anthropic-key",
  privatekey: "private-key",
  basicauth: "basic-auth",
  "database-connection-string": "db-connection",
  gcp: "gcp-service-account",
  sendgrid: "sendgrid-key",
  shopify: "shopify-token",
  linear: "linear-key",
  "1password": "1password-token",
};
