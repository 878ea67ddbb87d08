// The official MCP TypeScript SDK as a client of shiftwork-mcp (issue 29 item 1).
//
// Usage: node ts_client.mjs SDK_DIR CALLS_JSON -- COMMAND ARGS...      (stdio)
//        node ts_client.mjs SDK_DIR CALLS_JSON --url URL [--token TOKEN]   (Streamable HTTP)
//
// SDK_DIR holds node_modules/@modelcontextprotocol/sdk. Prints one JSON object: the negotiated
// version, the tools listed, and each call's isError and structuredContent.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const [sdkDir, callsPath, ...rest] = process.argv.slice(2);
const require = createRequire(path.join(path.resolve(sdkDir), "package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const calls = JSON.parse(readFileSync(callsPath, "utf8"));

let transport;
if (rest[0] === "--") {
  const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
  transport = new StdioClientTransport({ command: rest[1], args: rest.slice(2), env: process.env });
} else {
  const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
  const headers = rest[2] === "--token" ? { Authorization: `Bearer ${rest[3]}` } : {};
  transport = new StreamableHTTPClientTransport(new URL(rest[1]), { requestInit: { headers } });
}
const client = new Client({ name: "shiftwork-sdk-test", version: "1.0.0" });
await client.connect(transport);
const report = { version: transport.protocolVersion ?? null, tools: [], calls: [] };
const listed = await client.listTools();
report.tools = listed.tools.map((t) => t.name);
for (const call of calls) {
  const result = await client.callTool({ name: call.tool, arguments: call.arguments });
  report.calls.push({
    tool: call.tool,
    isError: Boolean(result.isError),
    structuredContent: result.structuredContent ?? null,
    text: (result.content ?? []).filter((c) => c.type === "text").map((c) => c.text),
  });
}
await client.close();
console.log(JSON.stringify(report));
