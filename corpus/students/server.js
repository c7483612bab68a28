// A student's MCP server in Node: readline, one switch on the method, errors thrown and caught in one place.
//
// Its order of checks: the gate after the switch has found the method's case; tools/call checks the name, then the
// allow-list, then the required arguments, then runs the tool. Tools only; Node's standard library only.
//
//     node corpus/students/server.js

const readline = require("readline");

const VERSIONS = ["2025-11-25", "2025-06-18"];
const session = { version: null, live: false };
const allowed = new Set(["add", "divide", "enable_subtract", "subtract"]);
const queue = [];

const tools = {
  add: { required: ["x", "y"], run: (args) => args.x + args.y },
  divide: {
    required: ["x", "y"],
    run: (args) => {
      if (args.y === 0) throw new Error("division by zero");
      return args.x / args.y;
    },
  },
  delete_db: { required: [], run: () => "deleted" },
  enable_subtract: {
    required: [],
    run: () => {
      tools.subtract = { required: ["x", "y"], run: (args) => args.x - args.y };
      queue.push({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
      return "subtract is now available";
    },
  },
};

class RpcError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

function send(message) {
  process.stdout.write(JSON.stringify(message) + "\n");
}

function fail(id, code, message) {
  return { jsonrpc: "2.0", id, error: { code, message } };
}

function callTool(params) {
  const name = params.name;
  if (typeof name !== "string" || !Object.hasOwn(tools, name)) throw new RpcError(-32601, `unknown tool: ${name}`);
  if (!allowed.has(name)) throw new RpcError(-32600, `${name} is not allowed in this session`);
  const args = params.arguments === undefined ? {} : params.arguments;
  for (const key of tools[name].required) {
    if (!(key in args)) throw new RpcError(-32602, `missing argument: ${key}`);
  }
  try {
    return { content: [{ type: "text", text: String(tools[name].run(args)) }] };
  } catch (error) {
    return { content: [{ type: "text", text: `ERROR: ${error.message}` }], isError: true };
  }
}

function serve(method, params) {
  switch (method) {
    case "initialize": {
      session.version = VERSIONS.includes(params.protocolVersion) ? params.protocolVersion : VERSIONS[0];
      return {
        protocolVersion: session.version,
        capabilities: { tools: { listChanged: true } },
        serverInfo: { name: "node-student", version: "1.0.0" },
      };
    }
    case "ping":
      return {};
    case "tools/list":
    case "tools/call": {
      if (!session.live) throw new RpcError(-32600, "server not initialized");
      if (method === "tools/call") return callTool(params);
      return {
        tools: Object.entries(tools).map(([name, tool]) => ({
          name,
          inputSchema: { type: "object", required: tool.required },
        })),
      };
    }
    default:
      throw new RpcError(-32601, `method not found: ${method}`);
  }
}

function handle(message) {
  if (message === null || typeof message !== "object" || Array.isArray(message)) {
    return fail(null, -32600, "a message is a JSON object");
  }
  if (!("method" in message)) {
    return "result" in message || "error" in message ? null : fail(null, -32600, "not a request");
  }
  if (!("id" in message)) {
    if (message.method === "notifications/initialized" && session.version) session.live = true;
    return null;
  }
  const id = message.id;
  if (typeof id !== "string" && !Number.isInteger(id)) return fail(null, -32600, "id must be a string or an integer");
  if (message.jsonrpc !== "2.0") return fail(id, -32600, 'jsonrpc must be "2.0"');
  try {
    return { jsonrpc: "2.0", id, result: serve(message.method, message.params || {}) };
  } catch (error) {
    if (error instanceof RpcError) return fail(id, error.code, error.message);
    return fail(id, -32603, `internal error: ${error.message}`);
  }
}

const lines = readline.createInterface({ input: process.stdin });
lines.on("line", (line) => {
  if (!line.trim()) return;
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    send(fail(null, -32700, "parse error"));
    return;
  }
  const reply = handle(message);
  while (queue.length) send(queue.shift());
  if (reply !== null) send(reply);
});
