/**
 * The rules the secrets scan runs: secretlint's recommended preset, and rules of ours in secretlint's
 * rule format for the kinds the preset does not cover (GitLab, Stripe, Google API keys, JWTs, model
 * providers' prefixed keys, Azure keys, URL passwords of any scheme, Authorization headers, and
 * `NAME=value` lines whose name says it holds a secret) and for OpenAI and SendGrid keys, whose
 * preset rules miss some. Each rule reports the secret's own range.
 */
import { rules as presetRules } from "@secretlint/secretlint-rule-preset-recommend";
import type { SecretLintRuleContext, SecretLintRuleCreator } from "@secretlint/types";
import { LiteralSearch } from "./literal-search.js";

const only = (text: string) => ({ en: (_props?: { VALUE: string }) => text });

/** A rule of one kind: `find` calls `report` with each secret's range in the text. */
function scannerRule(
  id: string,
  message: string,
  find: (content: string, report: (start: number, end: number) => void) => void,
) {
  const messages = { [id]: only(message) };
  return {
    messages,
    meta: { id, type: "scanner", recommended: true, supportedContentTypes: ["text"] },
    create(context: SecretLintRuleContext) {
      const t = context.createTranslator(messages);
      return {
        file({ content }) {
          find(content, (start, end) =>
            context.report({ message: t(id, { VALUE: content.slice(start, end) }), range: [start, end] }),
          );
        },
      };
    },
  } satisfies SecretLintRuleCreator;
}

/** A rule that reports every match of `pattern` (group 1 when it has one: the secret inside the match). */
function patternRule(id: string, message: string, pattern: RegExp) {
  return scannerRule(id, message, (content, report) => {
    for (const match of content.matchAll(pattern)) {
      const value = match[1] ?? match[0];
      const start = match.index + match[0].lastIndexOf(value);
      report(start, start + value.length);
    }
  });
}

const LETTER = /\p{L}/u;

/**
 * A rule for keys that are a prefix and then a run of one alphabet, `min` to `max` long, with no
 * alphabet character after it and no letter before the prefix: what `(?<!\p{L})prefix[…]{min,max}(?![…])`
 * finds, in time linear in the text. That expression tries every length from `max` down at each
 * prefix, and the prefix's own characters are of the alphabet, so a text of prefixes repeated
 * cost `max` steps per prefix; here each run is read once, and a prefix inside a run already read
 * takes its end. `shape`, when given, is what the run must also be (its first and last characters).
 */
function keyRunRule(
  id: string,
  message: string,
  prefix: string,
  alphabet: RegExp,
  [min, max]: [number, number],
  shape?: RegExp,
) {
  return scannerRule(id, message, (content, report) => {
    let runStart = -1;
    let runEnd = -1;
    for (let at = content.indexOf(prefix); at !== -1; at = content.indexOf(prefix, at + 1)) {
      const from = at + prefix.length;
      if (from < runStart || from > runEnd) {
        runStart = from;
        runEnd = from;
        while (runEnd < content.length && alphabet.test(content[runEnd]!)) runEnd++;
      }
      const length = runEnd - from;
      if (length < min || length > max || (at > 0 && LETTER.test(content[at - 1]!))) continue;
      if (!shape || shape.test(content.slice(from, runEnd))) report(at, runEnd);
    }
  });
}

/**
 * Words in a variable's or key's name that say its value is a secret (`DB_PASSWORD`, `"client_secret"`);
 * `key` counts only after `api`, `access`, `private` or `auth` (`apiKey`, `PRIVATE_KEY`).
 */
const SECRET_WORDS = ["secret", "token", "passw", "pwd", "credential", "key"];
const KEY_OWNER = /(?:api|access|private|auth)[_-]?$/i;

/** The secret words, found in one pass (secretWordsIn). */
const WORD_SEARCH = new LiteralSearch(SECRET_WORDS.map((text) => ({ text, caseless: true })));

/** Whether a `key` at `start` has an owner word just before it (`api_key`, `PRIVATE_KEY`). */
const ownedKey = (text: string, start: number) => KEY_OWNER.test(text.slice(Math.max(0, start - 8), start));

/**
 * Calls `found` with where each secret word is in a text, in order (`key` only with an owner before
 * it); `found` may return a place to go on from (LiteralSearch.each).
 */
function eachSecretWord(text: string, found: (start: number, end: number) => number | undefined): void {
  WORD_SEARCH.each(text, (start, index) => {
    const word = SECRET_WORDS[index]!;
    return word !== "key" || ownedKey(text, start) ? found(start, start + word.length) : undefined;
  });
}

/** Where the secret words are in a text, in order (`key` only with an owner before it). */
export function secretWordsIn(text: string): { start: number; end: number }[] {
  const hits: { start: number; end: number }[] = [];
  eachSecretWord(text, (start, end) => {
    hits.push({ start, end });
    return undefined;
  });
  return hits;
}

/** Whether a character may be part of a name: `[A-Za-z0-9_.-]`. */
function nameChar(code: number): boolean {
  return (
    (code >= 97 && code <= 122) ||
    (code >= 65 && code <= 90) ||
    (code >= 48 && code <= 57) ||
    code === 95 ||
    code === 46 ||
    code === 45
  );
}
/** What may stand before a name: a line, a space, a JSON object's brace or comma, a quote. */
const BEFORE_NAME = /[\s{,;(\\"']/;
/**
 * After a name: the `=` or `:`, an opening quote (group 1) and the value (group 2). A quote takes
 * the blanks after it, so no run of blanks can be split two ways (`[ \t]*["']?[ \t]*` tries every
 * split of a long run: quadratic in its length).
 */
const ASSIGNED = /[ \t]*(?:["'][ \t]*)?[:=][ \t]*(?:(["'])[ \t]*)?([^\s"'\x60\\,;{}<>()[\]]{8,})/y;

/** Code, not a value: a member chain (`options.keepSecrets`, `r.tokens`). */
const MEMBER_CHAIN = /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$/;

/** An absolute, home or relative path: `/`, `~/`, `./` or `../`, then segments of name characters. */
const PATH = /^(?:~|\.{1,2})?\/(?:[\w.@+-]+\/)*[\w.@+-]*$/;

/**
 * A file or folder path (`"hostCredential": "/home/me/.config/gcloud"`), which a name that says
 * credential often holds: its segments are names, and none is a key's random run (16 characters or
 * more mixing lower and upper case and digits, as a base64 key that starts with `/` has).
 */
function pathLooking(value: string): boolean {
  if (!PATH.test(value)) return false;
  return !value
    .split("/")
    .some((part) => part.length >= 16 && /[a-z]/.test(part) && /[A-Z]/.test(part) && /\d/.test(part));
}

/**
 * A value worth hiding. Quoted (`"password": "…"`, `token = '…'`): a string literal, hidden when it
 * has a digit or a symbol, or mixes cases over 16 characters or more (a constant's name such as
 * `"PAYLOAD_PROBE_TOKEN_CACHE"` does not). Unquoted (`DB_PASSWORD=…`, `token: …`): code as often as
 * not (`tokens: r.tokens`), so hidden only with a digit and when it is no member chain. Figures
 * (`max_tokens: 100000000`) and references (`${TOKEN}`) never.
 */
function secretLooking(value: string, quoted: boolean): boolean {
  if (/^\d+$/.test(value) || value.startsWith("$") || value.startsWith("%") || pathLooking(value)) return false;
  if (!quoted) return /\d/.test(value) && !MEMBER_CHAIN.test(value);
  return /[\d!@#%^&*+/=~?]/.test(value) || (value.length >= 16 && /[a-z]/.test(value) && /[A-Z]/.test(value));
}

/**
 * `NAME=value`, `NAME: value`, `"name": "value"`, `export NAME=value` where the name holds a secret
 * word: found from the words, so a text without them costs a few `indexOf`s. Scanned texts have
 * their JSON escapes written as a space and the character (secrets.ts), so a quote or a line break
 * inside a JSON string reads as one here.
 */
const genericRule = scannerRule("generic-secret", "a value assigned to a name that says secret", (content, report) => {
  // Each character is read once: a name (`AWS_SECRET_ACCESS_KEY`) is judged once however many
  // secret words it holds, and words inside a judged name or value are passed over (a value
  // holds no character that may stand before a name, so no name starts inside one).
  let next = 0;
  eachSecretWord(content, (hitStart, hitEnd) => {
    let start = hitStart;
    while (start > next && nameChar(content.charCodeAt(start - 1))) start--;
    let end = hitEnd;
    while (end < content.length && nameChar(content.charCodeAt(end))) end++;
    next = end;
    if (start > 0 && !BEFORE_NAME.test(content[start - 1]!)) return next;
    ASSIGNED.lastIndex = end;
    const match = ASSIGNED.exec(content);
    if (!match) return next;
    next = ASSIGNED.lastIndex;
    const value = match[2]!;
    if (secretLooking(value, match[1] !== undefined)) report(next - value.length, next);
    return next;
  });
});

/**
 * Every URL rule's finds hold `://` (its slashes maybe escaped, once or twice, or the whole of it
 * percent-encoded: rare-escapes.ts); a
 * scheme (`mongodb+srv`, `jdbc:mysqlx`) is at most 16 characters ahead.
 */
const URL_REGIONS: Anchor[] = [
  around(["://", ":\\/\\/", ":\\\\/\\\\/", ":\\\\\\/\\\\\\/"], 16, 1024),
  aroundCaseless(["%3a%2f%2f"], 16, 1024),
];

/**
 * Keys of model providers an agent may be set up with, by the prefix and alphabet each provider
 * issues (lengths a little wider than seen, so a longer key is still found): kind, what it is, the
 * prefix, the rest. Azure's storage and Service Bus keys follow their connection string's name.
 */
const PREFIXED_KEYS: [kind: string, label: string, prefix: string, rest: string][] = [
  ["groq-key", "Groq API key", "gsk_", "[A-Za-z0-9]{48,56}"],
  ["huggingface-token", "Hugging Face token", "hf_", "[A-Za-z]{30,40}"],
  ["xai-key", "xAI API key", "xai-", "[A-Za-z0-9]{60,100}"],
  ["openrouter-key", "OpenRouter API key", "sk-or-v1-", "[a-f0-9]{64}"],
  ["perplexity-key", "Perplexity API key", "pplx-", "[A-Za-z0-9]{40,60}"],
  ["replicate-token", "Replicate API token", "r8_", "[A-Za-z0-9_-]{30,45}"],
  ["azure-key", "Azure storage or Service Bus key", "AccountKey=", "[A-Za-z0-9+/]{20,100}={0,2}"],
  ["azure-key", "Azure storage or Service Bus key", "SharedAccessKey=", "[A-Za-z0-9+/]{20,100}={0,2}"],
];

/**
 * One rule per prefixed key: the prefix where no key character stands before it, the rest to its
 * end. A name's `=` is not looked for in the raw text: Gson writes it `\u003d` (rare-escapes.ts).
 */
const prefixedKeyRules = PREFIXED_KEYS.map(([kind, label, prefix, rest]) => {
  const named = prefix.endsWith("=");
  const key = named ? `${prefix}(${rest})` : `${prefix}${rest}`;
  // A key ends where its alphabet does (a `-` after a key of letters is no part of it); a `-` or a
  // `.` may stand before its prefix.
  const alphabet = rest.slice(0, rest.indexOf("]") + 1);
  const more = named ? alphabet.replace("]", "=]") : alphabet;
  return {
    rule: patternRule(kind, label, new RegExp(`(?<![A-Za-z0-9_])${key}(?!${more})`, "g")),
    regions: [around([named ? prefix.slice(0, -1) : prefix], 16, 256)],
  };
});

/** Rules of ours, each with the regions it reads; each id is also the kind its markers name. */
export const OWN_RULES: { rule: SecretLintRuleCreator; regions: Anchor[] }[] = [
  {
    rule: patternRule(
      "gitlab-token",
      "GitLab token",
      /(?<![A-Za-z0-9_])gl(?:pat|dt|rt|ptt|soat|cbt|imt|ffct|agent|oas)-[A-Za-z0-9_-]{20,}/g,
    ),
    regions: [
      around(
        ["glpat-", "gldt-", "glrt-", "glptt-", "glsoat-", "glcbt-", "glimt-", "glffct-", "glagent-", "gloas-"],
        16,
        512,
      ),
    ],
  },
  {
    rule: patternRule("stripe-key", "Stripe secret key", /(?<![A-Za-z0-9])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,}/g),
    regions: [around(["sk_live_", "sk_test_", "rk_live_", "rk_test_"], 16, 512)],
  },
  {
    rule: patternRule("stripe-key", "Stripe webhook secret", /(?<![A-Za-z0-9])whsec_[A-Za-z0-9]{24,}/g),
    regions: [around(["whsec_"], 16, 512)],
  },
  {
    // The preset's OpenAI rule ends a key at `\b`, which a key whose last character is `-` never
    // has before a quote or a line end: such a key was stored as sent. This is its shape without
    // that end (a find may run on into a longer token; hiding more is the safe side).
    rule: patternRule(
      "openai-key",
      "OpenAI API key",
      /sk-(?:proj|svcacct|admin)-(?:[A-Za-z0-9_-]{74}|[A-Za-z0-9_-]{58})T3BlbkFJ(?:[A-Za-z0-9_-]{74}|[A-Za-z0-9_-]{58})|sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}/g,
    ),
    regions: [around(["T3BlbkFJ"], 128, 128)],
  },
  {
    // `user:password@` in a URL of any scheme (redis://, amqp://, ssh://, http to localhost, a password
    // with `.` or `%`): the preset's URL rules take http(s) and ftp with a dotted host and a `[-\w]`
    // password, and three databases. Same finds keep the preset's kind (its rules come first).
    rule: patternRule(
      "url-password",
      "password in a URL",
      // Starting at the `://` (a scheme's last character before it) lets the engine skip to each one.
      /(?<=[A-Za-z0-9+.-]):\/\/[^\s:/?#@"'<>\\]{0,256}:([^\s/?#@"'<>\\]{1,256})@/g,
    ),
    regions: URL_REGIONS,
  },
  {
    // The preset's SendGrid rule takes word characters with one `-` or `_` at most in the second part,
    // but keys are base64url: `-` anywhere, so most real keys were stored as sent. A key is `SG.`,
    // 22 characters and 43 (base64url of 16 and 32 bytes); the lengths leave room around those. Any
    // length from 1 (the preset's) made `SG.SG.SG` a key: a text of them was a find every 9 characters.
    rule: patternRule("sendgrid-key", "SendGrid API key", /(?<!\p{L})SG\.[\w-]{16,32}\.[\w-]{32,64}(?![\w-])/gu),
    regions: [around(["SG."], 16, 512)],
  },
  {
    // 35 characters after `AIza`; a longer run is taken whole (a key that ends in `-` runs on into a dash after it).
    rule: patternRule(
      "google-api-key",
      "Google API key",
      /(?<![A-Za-z0-9_])AIza[A-Za-z0-9_-]{35,40}(?![A-Za-z0-9_-])/g,
    ),
    regions: [around(["AIza"], 16, 64)],
  },
  {
    rule: patternRule(
      "jwt",
      "JSON Web Token",
      /(?<![A-Za-z0-9_])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g,
    ),
    regions: [around(["eyJ"], 16, 16_384)],
  },
  {
    // An HTTP credential as agents write it in a curl command or a headers object: `Bearer <token>`
    // (RFC 6750 §2.1: b64token, its `=` padding last, so a `-` after the padding is not the token's),
    // the token with a digit (not "Bearer token", not a `$TOKEN` reference); a JWT keeps its own kind.
    rule: patternRule(
      "bearer-token",
      "bearer token",
      /\bBearer[ \t]+((?=[A-Za-z0-9._~+/-]*\d)[A-Za-z0-9._~+/-]{16,1024}(?:=+|(?![A-Za-z0-9._~+/=-])))/gi,
    ),
    // From 8 ahead: a region that starts inside the escape before it (`\\tBearer`) reads `tBearer`.
    regions: [aroundCaseless(["bearer"], 8, 1100)],
  },
  {
    rule: patternRule(
      "basic-auth",
      "basic credentials in an Authorization header",
      /\bAuthorization["']?[ \t]*[:=][ \t]*["']?Basic[ \t]+([A-Za-z0-9+/]{8,1024}={0,2})(?![A-Za-z0-9+/=])/gi,
    ),
    regions: [aroundCaseless(["authorization"], 1, 1100)],
  },
  {
    // The preset's Linear rule, read in linear time (keyRunRule): `lin_api_` repeated took a
    // hundred times as long as ordinary text.
    rule: keyRunRule("linear-key", "Linear API key", "lin_api_", /[a-zA-Z0-9_]/, [32, 128]),
    regions: [around(["lin_api_"], 16, 256)],
  },
  {
    // The preset's Anthropic rule (`sk-ant-api0N-`, 90 to 128 characters, then `AA`) the same way.
    rule: keyRunRule(
      "anthropic-key",
      "Anthropic API key",
      "sk-ant-api0",
      /[A-Za-z0-9_-]/,
      [94, 136],
      /^\d-.*AA-{0,4}$/s,
    ),
    regions: [around(["sk-ant-"], 16, 256)],
  },
  {
    // The preset's AWS secret key rule ends the key at `\b`, which a key ending in `/`, `+` or `=`
    // (3 in 64) has only before a word character: this is its shape ending where the alphabet does.
    rule: patternRule(
      "aws-secret-key",
      "AWS secret access key",
      /(?:SECRET|secret|Secret)_?(?:ACCESS|access|Access)_?(?:KEY|key|Key)["']?\s*(?::|=>|=)\s*["']?([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])/g,
    ),
    regions: [secretWords(["secret"], 32, 128)],
  },
  ...prefixedKeyRules,
  // A name is at most 64 characters ahead of its secret word, a value within 512 after it.
  { rule: genericRule, regions: [secretWords(SECRET_WORDS, 64, 512)] },
];

/**
 * Where a rule reads: around each place one of its literals (text every find of the rule contains)
 * is in a text, a region longer than any find of the rule; `accept` may turn a
 * place down. All rules' literals are found in one pass (literal-search.ts): the rules' own
 * expressions start with a look-behind or `\b` and so try every position, and a search per literal
 * adds up to a pass per literal.
 */
export interface Anchor {
  literals: readonly string[];
  caseless?: boolean;
  /** The region: from `before` characters ahead of the literal to `after` past its start (past its end with `fromEnd`). */
  before: number;
  after: number;
  fromEnd?: boolean;
  accept?(text: string, at: number, length: number): boolean;
}

/** Regions from `before` characters ahead of each literal to `after` characters past its start. */
function around(literals: readonly string[], before: number, after: number): Anchor {
  return { literals, before, after };
}

/** Regions as `around` gives them, for literals found in any ASCII case. */
function aroundCaseless(literals: readonly string[], before: number, after: number): Anchor {
  return { ...around(literals, before, after), caseless: true };
}

/** Regions around the secret words: `before` ahead, `after` past the word's end; `key` only with an owner. */
function secretWords(words: readonly string[], before: number, after: number): Anchor {
  return {
    literals: words,
    caseless: true,
    before,
    after,
    fromEnd: true,
    accept: (text, at, length) => length !== 3 || text.slice(at, at + 3).toLowerCase() !== "key" || ownedKey(text, at),
  };
}

const AWS_KEY_ID_REST = /[A-Z0-9]{16}/y;

/**
 * Where the AWS rule can find anything: near the word "secret" (its secret key needs a
 * `aws_secret_access_key`-like name) and at an access key ID (a prefix and 16 capitals or digits).
 */
const AWS_REGIONS: Anchor[] = [
  secretWords(["secret"], 32, 128),
  {
    literals: ["A3T", "AKIA", "AGPA", "AIDA", "AROA", "AIPA", "ANPA", "ANVA", "ASIA"],
    before: 8,
    after: 28,
    accept(text, at, length) {
      AWS_KEY_ID_REST.lastIndex = at + 4;
      return (length === 4 || /[A-Z0-9]/.test(text[at + 3] ?? "")) && AWS_KEY_ID_REST.test(text);
    },
  },
];

/** Where each preset rule (by the end of its id) reads. */
const PRESET_REGIONS: Record<string, Anchor[]> = {
  aws: AWS_REGIONS,
  privatekey: [around(["PRIVATE KEY"], 64, 10_200)],
  npm: [around(["npm_", "_authToken"], 16, 1024)],
  basicauth: URL_REGIONS,
  "database-connection-string": URL_REGIONS,
  slack: [around(["xox", "xapp-"], 16, 512), ...URL_REGIONS],
  shopify: [around(["shppa_", "shpca_", "shpat_", "shpss_"], 16, 256)],
  github: [around(["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", ":x-oauth-basic@"], 280, 256)],
  "1password": [around(["ops_"], 16, 1600)],
};

/**
 * The preset's rules we run, each on its regions: all but its comment filter (a body could switch
 * scanning off with a `secretlint-disable` comment), its GCP rule (it parses the whole text as a
 * service account file, which a body never is; the key in one is found as a private key), its
 * OpenAI and SendGrid rules (OWN_RULES has them, finding the keys with a `-` those lost) and its
 * Linear and Anthropic rules (OWN_RULES reads those keys in linear time). The AWS
 * rule runs with its access key ID scan on.
 */
export const PRESET_RULES: { rule: SecretLintRuleCreator<never>; options: object; regions: Anchor[] }[] = presetRules
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
  privatekey: "private-key",
  basicauth: "basic-auth",
  "database-connection-string": "db-connection",
  gcp: "gcp-service-account",
  shopify: "shopify-token",
  "1password": "1password-token",
};
