/** What the capture writes in place of a secret. */
export const REDACTED = "[redacted]";

/**
 * Query parameters that carry credentials, matched case-insensitively: API keys (`?key=` of Google
 * APIs), OAuth 2.0 (RFC 6749 §4.1.2 `code`, §2.3.1 `client_secret`, RFC 6750 §2.3 `access_token`,
 * RFC 7636 `code_verifier`, RFC 7521 `client_assertion`), AWS Signature Version 4 presigned URLs
 * (`X-Amz-Signature`, `X-Amz-Credential`, `X-Amz-Security-Token`) and version 2 (`AWSAccessKeyId`,
 * `Signature`), Google Cloud Storage signed URLs (`X-Goog-Signature`, `X-Goog-Credential`,
 * `GoogleAccessId`), Azure shared access signatures (`sig`), and plain passwords.
 */
export const CREDENTIAL_QUERY_NAMES = [
  "key",
  "apikey",
  "api_key",
  "api-key",
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
 * Decides which query parameters are stored as `[redacted]`: the documented list, anything whose
 * name contains a credential word, and the names the user adds (`--redact NAME`).
 */
export function credentialQueryName(extra: readonly string[] = []): (name: string) => boolean {
  const names = new Set([...CREDENTIAL_QUERY_NAMES, ...extra.map((name) => name.toLowerCase())]);
  return (name) => names.has(name.toLowerCase()) || CREDENTIAL_NAME_PARTS.test(name);
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
  for (const name of new Set(safe.searchParams.keys())) if (isCredential(name)) safe.searchParams.set(name, REDACTED);
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
