/**
 * The environment an agent runs in during a probe, the runtime and the real pi alike: the search
 * path, the workspace's home, a fixed locale and zone. Each agent hands its MCP servers its own
 * environment (plus the config's `env`), so with this one both agents' servers start in the same
 * one whatever the user's shell holds: no keys, proxies or Node options of the user reach a probe's
 * servers, and a server cannot answer one agent differently from the other because of them.
 */
export function probeEnvironment(home: string): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, LANG: "C.UTF-8", TZ: "UTC" };
}
