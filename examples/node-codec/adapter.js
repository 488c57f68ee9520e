#!/usr/bin/env node
// A codec adapter for reqfold (docs/adapter-protocol.md, part 1), in plain
// JavaScript for Node, with no dependencies:
//
//   reqfold vectors --impl "node examples/node-codec/adapter.js"
//
// One JSON-RPC 2.0 request per line on stdin, one response per line on
// stdout; stderr is free for logs. Start here when your harness is in
// JavaScript or TypeScript: replace codec.js with calls into your own codec,
// keep json.js (JSON.parse would reorder integer-like keys, see json.js).

"use strict";

const readline = require("node:readline");
const { JsonSyntaxError, parse, stringify, obj } = require("./json.js");
const codec = require("./codec.js");

const PROTOCOL_VERSION = 1;

class RpcError extends Error {
  constructor(code, message, data) {
    super(message);
    this.code = code;
    this.data = data;
  }
}

function param(params, name) {
  if (!params.has(name)) throw new RpcError(-32602, `missing param ${JSON.stringify(name)}`);
  return params.get(name);
}

function revision(params) {
  const name = params.has("revision") ? params.get("revision") : "session-prefix";
  if (!codec.REVISIONS.includes(name)) throw new RpcError(-32602, `unknown revision ${JSON.stringify(name)}`);
  return name;
}

const METHODS = {
  initialize(params) {
    if (params.get("protocolVersion") !== PROTOCOL_VERSION) {
      throw new RpcError(-32602, `unsupported protocolVersion; this adapter speaks ${PROTOCOL_VERSION}`);
    }
    return obj(
      ["name", "example-node-codec"],
      ["version", "0.1.0"],
      ["language", "javascript"],
      ["revisions", [...codec.REVISIONS]],
      // No "strict": this codec trusts its input (docs/vectors.md, "Profiles").
      ["capabilities", ["codec"]],
    );
  },
  "codec/canonical": (p) => obj(["header", codec.canonical(param(p, "header"), revision(p))]),
  "codec/equals": (p) => obj(["equal", codec.equals(param(p, "a"), param(p, "b"), revision(p))]),
  "codec/diff": (p) => obj(["delta", codec.diff(param(p, "prev"), param(p, "next"), revision(p))]),
  "codec/apply": (p) => obj(["header", codec.apply(param(p, "prev"), param(p, "delta"), revision(p))]),
  "codec/fold": (p) => {
    const events = param(p, "events");
    if (!Array.isArray(events)) throw new RpcError(-32602, "events must be an array");
    return obj(["header", codec.fold(events, p.get("from"), revision(p))]);
  },
  "codec/record": (p) => {
    const logged = param(p, "loggedThisInstance");
    if (typeof logged !== "boolean") throw new RpcError(-32602, "loggedThisInstance must be a boolean");
    return obj(["event", codec.record(param(p, "baseline"), logged, param(p, "header"), revision(p))]);
  },
};

function answer(id, body) {
  let line;
  try {
    line = stringify(obj(["jsonrpc", "2.0"], ["id", id], ...body));
  } catch (error) {
    // A result that is not JSON (a bug of the codec): say so, never crash.
    const failure = obj(["code", -32603], ["message", `internal error: ${error.message}`]);
    line = stringify(obj(["jsonrpc", "2.0"], ["id", id], ["error", failure]));
  }
  process.stdout.write(`${line}\n`);
}

function fail(id, error) {
  const body = obj(["code", error.code], ["message", error.message]);
  if (error.data !== undefined) body.set("data", error.data);
  answer(id, [["error", body]]);
}

function handle(line) {
  let request;
  try {
    request = parse(line);
  } catch (error) {
    if (!(error instanceof JsonSyntaxError)) throw error;
    return fail(null, new RpcError(-32700, `parse error: ${error.message}`));
  }
  if (!(request instanceof Map) || typeof request.get("method") !== "string") {
    return fail(null, new RpcError(-32600, "not a JSON-RPC request"));
  }
  const id = request.has("id") ? request.get("id") : null;
  const method = request.get("method");
  if (method === "shutdown") {
    answer(id, [["result", null]]);
    process.stdout.write("", () => process.exit(0));
    return undefined;
  }
  const handler = METHODS[method];
  if (handler === undefined || !Object.hasOwn(METHODS, method)) {
    return fail(id, new RpcError(-32601, `unknown method ${JSON.stringify(method)}`));
  }
  const params = request.has("params") ? request.get("params") : new Map();
  try {
    if (!(params instanceof Map)) throw new RpcError(-32602, "params must be an object");
    return answer(id, [["result", handler(params)]]);
  } catch (error) {
    if (error instanceof RpcError) return fail(id, error);
    if (error instanceof codec.CodecError) {
      const data = obj(["kind", error.kind], ["rule", error.rule]);
      if (error.seq !== undefined) data.set("seq", error.seq);
      return fail(id, new RpcError(-32000, error.message, data));
    }
    // Input this codec does not validate can make it fail anywhere: that is
    // bad params, not a crash (an adapter always answers).
    if (error instanceof TypeError || error instanceof RangeError) {
      return fail(id, new RpcError(-32602, `invalid params: ${error.message}`));
    }
    process.stderr.write(`${error && error.stack}\n`);
    return fail(id, new RpcError(-32603, `internal error: ${error}`));
  }
}

const input = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
input.on("line", (line) => {
  if (line.trim() !== "") handle(line);
});
input.on("close", () => process.exit(0));
