/** `--keep-secrets` on the commands that capture (run, mock, proxy): its help lines and its warning. */

export const KEEP_SECRETS_HELP = `  --keep-secrets
                store secrets found in bodies as they were sent (by default
                each is stored as a marker naming its kind and a short hash:
                [redacted:github-token:3f2a9c1e])`;

/** Whether secrets are kept; when they are, says so on stderr, every time the command starts. */
export function keepSecretsFlag(command: string, keep: boolean | undefined): boolean {
  if (keep)
    process.stderr.write(
      `${command}: --keep-secrets: secrets in captured bodies are written as sent to the run folder and payload-probe.db\n`,
    );
  return keep ?? false;
}
