// The official MCP TypeScript SDK reading shiftwork-mcp's resources and prompts (issue 35 items 2, 3).
//
// Usage: node ts_resources.mjs SDK_DIR SUBSCRIBE TRIGGER_JSON -- COMMAND ARGS...   (stdio)
//        node ts_resources.mjs SDK_DIR SUBSCRIBE TRIGGER_JSON --url URL --token TOKEN   (Streamable HTTP)
//
// SUBSCRIBE is "yes" to subscribe to shiftwork://status (resources/subscribe) and run the command of
// TRIGGER_JSON (an argv list) once subscribed. Prints one JSON object: the version, the resources,
// templates and prompts listed, each resource's text read, a prompt got, a completion, and how long
// the notification of the trigger's change took.
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";

const [sdkDir, subscribe, triggerJson, ...rest] = process.argv.slice(2);
const trigger = JSON.parse(triggerJson);
const require = createRequire(path.join(path.resolve(sdkDir), "package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { ResourceUpdatedNotificationSchema } = require("@modelcontextprotocol/sdk/types.js");
const STATUS = "shiftwork://status";

let transport;
if (rest[0] === "--") {
  const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
  transport = new StdioClientTransport({ command: rest[1], args: rest.slice(2), env: process.env });
} else {
  const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
  transport = new StreamableHTTPClientTransport(new URL(rest[1]), {
    requestInit: { headers: { Authorization: `Bearer ${rest[3]}` } },
  });
}
const client = new Client({ name: "shiftwork-sdk-test", version: "1.0.0" });
let notified;
const updated = new Promise((resolve) => {
  notified = resolve;
});
client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
  if (n.params.uri === STATUS) notified();
});
await client.connect(transport);
const report = { version: transport.protocolVersion ?? null };
report.resources = (await client.listResources()).resources.map((r) => r.uri);
report.templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
report.reads = {};
for (const uri of [...report.resources, "shiftwork://units/U3/brief"]) {
  report.reads[uri] = (await client.readResource({ uri })).contents[0].text;
}
report.prompts = (await client.listPrompts()).prompts.map((p) => p.name);
const got = await client.getPrompt({ name: "hand_review", arguments: { agent: "bob", focus: "the parser" } });
report.prompt = got.messages.map((m) => m.content.text ?? m.content.resource.uri);
const completed = await client.complete({
  ref: { type: "ref/prompt", name: "start_unit" },
  argument: { name: "unit_id", value: "" },
});
report.completion = completed.completion.values;
if (subscribe === "yes") {
  await client.subscribeResource({ uri: STATUS });
  execFileSync(trigger[0], trigger.slice(1), { stdio: "ignore" });
  const ended = performance.now();
  let timer;
  await Promise.race([
    updated,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error("no notification within 10 s")), 10000);
    }),
  ]);
  clearTimeout(timer);
  report.notified_ms = performance.now() - ended;
}
await client.close();
console.log(JSON.stringify(report));
