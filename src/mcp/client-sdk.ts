/**
 * The MCP SDK's client side, loaded at the first connection rather than with the CLI: the SDK makes
 * its message schemas as it loads (about 20 ms of a start), which a probe without MCP servers, or a
 * command that never connects, does not need.
 */
async function load() {
  const [client, stdio, types] = await Promise.all([
    import("@modelcontextprotocol/sdk/client/index.js"),
    import("@modelcontextprotocol/sdk/client/stdio.js"),
    import("@modelcontextprotocol/sdk/types.js"),
  ]);
  return {
    Client: client.Client,
    StdioClientTransport: stdio.StdioClientTransport,
    ToolListChangedNotificationSchema: types.ToolListChangedNotificationSchema,
    CreateMessageRequestSchema: types.CreateMessageRequestSchema,
    ErrorCode: types.ErrorCode,
  };
}

export type ClientSdk = Awaited<ReturnType<typeof load>>;

let loading: Promise<ClientSdk> | undefined;

export function clientSdk(): Promise<ClientSdk> {
  loading ??= load();
  return loading;
}
