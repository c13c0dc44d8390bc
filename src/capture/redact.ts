/** What the capture writes in place of a secret. */
const REDACTED = "[redacted]";

/**
 * Query parameters that carry credentials, matched case-insensitively: API keys (`?key=` of Google
 * APIs), OAuth 2.0 (RFC 6749 §4.1.2 `code`, §2.3.1 `client_secret`, RFC 6750 §2.3 `access_token`,
 * RFC 7636 `code_verifier`, RFC 7521 `client_assertion`), AWS Signature Version 4 presigned URLs
 * (`X-Amz-Signature`, `X-Amz-Credential`, `X-Amz-Security-Token`) and version 2 (`AWSAccessKeyId`,
 * `Signature`), Google Cloud Storage signed URLs (`X-Goog-Signature`, `X-Goog-Credential`,
 * `GoogleAccessId`), Azure shared access signatures (`sig`), Azure API Management subscription keys
 * (`subscription-key`), the query forms of API key headers (`x-api-key`, `x-goog-api-key`), and plain passwords.
 */
export const CREDENTIAL_QUERY_NAMES = [
  "key",
  "apikey",
  "api_key",
  "api-key",
  "x-api-key",
  "x-goog-api-key",
  "subscription-key",
  "ocp-apim-subscription-key",
  "access_key",
  "access-key",
  "accesskey",
  "secret_key",
  "auth",
  "authorization",
  "token",
  "access_token",
  "refresh_token",
  "id_token",
  "code",
  "code_verifier",
  "client_secret",
  "client_assertion",
  "assertion",
  "password",
  "passwd",
  "pass",
  "pwd",
  "secret",
  "sig",
  "signature",
  "x-amz-signature",
  "x-amz-credential",
  "x-amz-security-token",
  "awsaccesskeyid",
  "x-goog-signature",
  "x-goog-credential",
  "googleaccessid",
] as const;

/** Names that hold a secret wherever they appear in a parameter's name (`x_session_token`, `db_password`). */
const CREDENTIAL_NAME_PARTS = /token|secret|passw|signature|credential/i;

/**
 * A query name as it is compared: NFKC-folded (fullwidth letters become ASCII), stripped of control,
 * format and white-space characters anywhere (a server that reads `key%00` as a C string sees `key`),
 * lower-cased. Folding more than a server does only redacts more.
 */
function comparableName(name: string): string {
  return name
    .normalize("NFKC")
    .replace(/[\p{Cc}\p{Cf}\s]/gu, "")
    .toLowerCase();
}

/**
 * Decides which decoded query names are stored as `[redacted]`: the documented list, anything whose
 * name contains a credential word, and the names the user adds (`--redact NAME`), all compared as
 * `comparableName` gives them.
 */
export function credentialQueryName(extra: readonly string[] = []): (name: string) => boolean {
  const names = new Set([...CREDENTIAL_QUERY_NAMES, ...extra].map(comparableName));
  return (name) => {
    const comparable = comparableName(name);
    return names.has(comparable) || CREDENTIAL_NAME_PARTS.test(comparable);
  };
}

/** A query name decoded as servers decode it (WHATWG form decoding: `+` is a space, `%6B` is `k`, bad escapes stay). */
function decodedName(raw: string): string {
  return new URLSearchParams(`${raw}=`).keys().next().value ?? "";
}

const STORED_REDACTED = encodeURIComponent(REDACTED);

/**
 * The query with the value of each credential parameter replaced and every other byte kept: every
 * parameter stays, in order, duplicates too. `;` separates parameters as well as `&`, as some servers
 * read it, so `a=1;key=…` cannot hide a key inside another parameter's value.
 */
export function redactQuery(query: string, isCredential: (name: string) => boolean): string {
  return query
    .split(/([&;])/)
    .map((part) => {
      const equals = part.indexOf("=");
      if (equals === -1) return part;
      const name = part.slice(0, equals);
      return isCredential(decodedName(name)) ? `${name}=${STORED_REDACTED}` : part;
    })
    .join("");
}

/**
 * The URL as it is stored: userinfo (`user:password@`, RFC 3986 §3.2.1, deprecated for exactly this
 * reason) is always replaced, and so is the value of every credential query parameter.
 */
export function redactUrl(url: URL, isCredential: (name: string) => boolean): string {
  const safe = new URL(url);
  if (safe.username !== "" || safe.password !== "") {
    safe.username = "redacted";
    safe.password = "";
  }
  if (safe.search.length > 1) safe.search = redactQuery(safe.search.slice(1), isCredential);
  return safe.toString();
}

/** Replaces every match of the patterns (`--redact-body REGEX`) with `[redacted]`; no patterns, no change. */
export function bodyRedactor(patterns: readonly RegExp[]): ((text: string) => string) | undefined {
  if (patterns.length === 0) return undefined;
  const global = patterns.map(
    (pattern) => new RegExp(pattern.source, pattern.flags.includes("g") ? pattern.flags : `${pattern.flags}g`),
  );
  return (text) => global.reduce((redacted, pattern) => redacted.replace(pattern, REDACTED), text);
}
