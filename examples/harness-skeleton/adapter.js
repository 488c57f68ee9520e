#!/usr/bin/env node
// A harness adapter skeleton for Node (20 or later): the adapter protocol's
// loop, ready for your harness. Run it as it is and reqfold already talks to it:
//
//   reqfold run --impl "node examples/harness-skeleton/adapter.js" \
//       --only scenarios --scenario plain-turns
//
// It answers `initialize` and `shutdown`; every other method answers "not
// implemented yet", so the run's first problem names the method to write
// next (docs/harness-guide.md, "What to implement, in order"). Fill in the
// handlers with calls into your harness; keep stdout for protocol messages
// only (log to stderr). No dependencies.
"use strict";

const readline = require("node:readline");

const NAME = "my-harness";
const VERSION = "0.0.1";
const REVISIONS = ["session-prefix"]; // the revision your harness implements

// One JSON-RPC message, one line. A turn running on the event loop sends its
// notifications (contributor/started, turn/ended) through here too.
function send(message) {
  process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...message }) + "\n");
}

function notify(method, params) {
  send({ method, params });
}

class NotImplementedYet extends Error {}

function todo(method, step) {
  return () => {
    throw new NotImplementedYet(
      `${method} is not implemented yet: ${step}` +
        " (docs/harness-guide.md, 'What to implement, in order')",
    );
  };
}

const HANDLERS = {
  initialize: () => ({
    name: NAME,
    version: VERSION,
    language: "javascript",
    revisions: REVISIONS,
    capabilities: ["harness"],
  }),
  shutdown: () => null,
  // Step 2: create your session file at params.log, answer {log: path}.
  "session/open": todo("session/open", "create the session's log (step 2)"),
  // Step 2: build your loop over the session, pointed at params.provider.
  "instance/start": todo("instance/start", "start a loop instance (step 2)"),
  // Step 3: start a turn, answer {} at once, notify turn/ended when it ends.
  "instance/send": todo("instance/send", "start a turn (step 3)"),
  "instance/cancel": todo("instance/cancel", "cancel the running turn (step 3)"),
  "instance/dispose": todo("instance/dispose", "dispose the instance (step 3)"),
  "instance/inject": todo("instance/inject", "inject a message (step 3)"),
  "instance/update": todo("instance/update", "change the next request (step 3)"),
  "instance/compact": todo("instance/compact", "compact the session (step 3)"),
  // Step 4: release a blocked contributor.
  "contributor/release": todo("contributor/release", "contributors (step 4)"),
};

// The response to one request (an error response when it is no request).
async function answer(request) {
  if (request === null || typeof request !== "object" || typeof request.method !== "string") {
    return { id: null, error: { code: -32600, message: "not a request" } };
  }
  const id = request.id ?? null;
  const handler = Object.hasOwn(HANDLERS, request.method) ? HANDLERS[request.method] : null;
  if (handler === null) {
    return { id, error: { code: -32601, message: `unknown method ${request.method}` } };
  }
  try {
    return { id, result: (await handler(request.params ?? {})) ?? null };
  } catch (error) {
    if (error instanceof NotImplementedYet) {
      return { id, error: { code: -32601, message: error.message } };
    }
    console.error(`${NAME}: ${error && error.stack ? error.stack : error}`);
    return { id, error: { code: -32603, message: String(error) } };
  }
}

async function serve(line) {
  let request;
  try {
    request = JSON.parse(line);
  } catch {
    send({ id: null, error: { code: -32700, message: "not JSON" } });
    return;
  }
  send(await answer(request));
  if (request && request.method === "shutdown") {
    process.exit(0);
  }
}

// Requests are answered in the order they came; a handler answers promptly
// (instance/send starts its turn and returns), so the queue never waits on a turn.
let queue = Promise.resolve();
const lines = readline.createInterface({ input: process.stdin, terminal: false });
lines.on("line", (line) => {
  queue = queue.then(() => serve(line));
});
// end of input also means exit 0, once every answer is out
lines.on("close", () => queue.then(() => process.exit(0)));

