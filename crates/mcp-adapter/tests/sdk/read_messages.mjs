// How the official MCP TypeScript SDK reads JSON-RPC message lines (issue 35 item 5).
//
// Usage: node read_messages.mjs SDK_DIR < LINES
//
// Prints one JSON array: for each line of stdin, whether the SDK's message schema (what its
// transports parse every incoming line with) accepts it.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(path.join(path.resolve(process.argv[2]), "package.json"));
const { JSONRPCMessageSchema } = require("@modelcontextprotocol/sdk/types.js");
const lines = readFileSync(0, "utf8").split("\n").filter((l) => l.trim() !== "");
console.log(JSON.stringify(lines.map((l) => JSONRPCMessageSchema.safeParse(JSON.parse(l)).success)));
