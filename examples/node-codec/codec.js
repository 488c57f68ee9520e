// The header codec of docs/spec.md (sections 2 to 6), written from the spec.
//
// Values come from json.js: objects are Maps in member order. Every function
// is pure: JSON values in, JSON values out. It trusts its input the way a
// harness's own codec may (docs/vectors.md, "Profiles"): headers and deltas
// are taken to be well-formed, so it passes the `core` profile and does not
// claim `strict`. The one rejection the design itself makes, a delta before
// any snapshot (FOLD-2), is a CodecError.

"use strict";

const { obj } = require("./json.js");

const FIELDS = {
  "header-events": ["config", "system", "tools"],
  "request-messages": ["config", "system", "tools", "messagePrefix", "messageSuffix"],
  "session-prefix": ["config", "system", "tools", "messagePrefix"],
};
const REVISIONS = Object.keys(FIELDS);

class CodecError extends Error {
  constructor(message, kind, rule, seq) {
    super(message);
    this.kind = kind;
    this.rule = rule;
    this.seq = seq;
  }
}

// JSON-2 value equality; with `ordered`, member order too (JSON-3).
function jsonEqual(a, b, ordered = true) {
  if (a instanceof Map && b instanceof Map) {
    if (a.size !== b.size) return false;
    const left = [...a.keys()];
    const right = [...b.keys()];
    if (ordered && left.some((name, i) => name !== right[i])) return false;
    return left.every((name) => b.has(name) && jsonEqual(a.get(name), b.get(name), ordered));
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((item, i) => jsonEqual(item, b[i], ordered));
  }
  return a === b; // null, booleans, numbers, strings: true is not 1
}

// HDR-4, HDR-5: empty system, tools and message arrays are absent; members
// in the order config, system, tools, messagePrefix, messageSuffix.
function canonical(header, revision) {
  const result = obj(["config", header.get("config")]);
  for (const field of FIELDS[revision].slice(1)) {
    const value = header.get(field);
    if (value === undefined) continue;
    if ((typeof value === "string" || Array.isArray(value)) && value.length === 0) continue;
    result.set(field, value);
  }
  return result;
}

function equals(a, b, revision) {
  return jsonEqual(canonical(a, revision), canonical(b, revision));
}

// SYS-2: lines split on "\n" only; an absent system has no lines.
function lines(system) {
  return system === undefined ? [] : system.split("\n");
}

function joinLines(list) {
  return list.length === 0 ? undefined : list.join("\n");
}

// SYS-3: the longest common leading run, then the longest common trailing
// run among the lines the leading run did not claim.
function diffSystem(prev, next) {
  const a = lines(prev);
  const b = lines(next);
  let keepStart = 0;
  while (keepStart < Math.min(a.length, b.length) && a[keepStart] === b[keepStart]) keepStart += 1;
  let keepEnd = 0;
  const tail = Math.min(a.length, b.length) - keepStart;
  while (keepEnd < tail && a[a.length - 1 - keepEnd] === b[b.length - 1 - keepEnd]) keepEnd += 1;
  return obj(["keepStart", keepStart], ["keepEnd", keepEnd], ["insert", b.slice(keepStart, b.length - keepEnd)]);
}

// TOOLS-3: added (next order), removed (previous order), changed (next order).
function diffTools(prev, next) {
  const before = new Map(prev.map((tool) => [tool.get("name"), tool]));
  const after = new Set(next.map((tool) => tool.get("name")));
  return obj(
    ["added", next.filter((tool) => !before.has(tool.get("name")))],
    ["removed", prev.map((tool) => tool.get("name")).filter((name) => !after.has(name))],
    [
      "changed",
      next.filter((tool) => before.has(tool.get("name")) && !jsonEqual(before.get(tool.get("name")), tool)),
    ],
  );
}

// DELTA-2: null when equal; otherwise the arms of the parts that differ, in
// the order system, tools, config, messagePrefix, messageSuffix.
function diff(prevHeader, nextHeader, revision) {
  const a = canonical(prevHeader, revision);
  const b = canonical(nextHeader, revision);
  const delta = new Map();
  if (a.get("system") !== b.get("system")) delta.set("system", diffSystem(a.get("system"), b.get("system")));
  const toolsBefore = a.get("tools") || [];
  const toolsAfter = b.get("tools") || [];
  if (!jsonEqual(toolsBefore, toolsAfter)) delta.set("tools", diffTools(toolsBefore, toolsAfter));
  if (!jsonEqual(a.get("config"), b.get("config"))) delta.set("config", b.get("config"));
  for (const field of FIELDS[revision].slice(3)) {
    const after = b.get(field) || [];
    if (!jsonEqual(a.get(field) || [], after)) delta.set(field, after);
  }
  return delta.size === 0 ? null : delta;
}

// SYS-4, SYS-5.
function applySystem(prev, arm) {
  const a = lines(prev);
  const keepStart = arm.get("keepStart");
  const keepEnd = arm.get("keepEnd");
  if (keepStart + keepEnd > a.length) {
    throw new CodecError("the system arm keeps more lines than there are", "delta-conflict", "SYS-5");
  }
  return joinLines([...a.slice(0, keepStart), ...arm.get("insert"), ...a.slice(a.length - keepEnd)]);
}

// TOOLS-4: drop the removed names, replace changed schemas in place, then
// append the added ones.
function applyTools(prev, arm) {
  const removed = new Set(arm.get("removed"));
  const changed = new Map(arm.get("changed").map((tool) => [tool.get("name"), tool]));
  const kept = prev
    .filter((tool) => !removed.has(tool.get("name")))
    .map((tool) => changed.get(tool.get("name")) || tool);
  return [...kept, ...arm.get("added")];
}

// DELTA-3: an arm applies when present (not when truthy); the rest is kept.
function apply(prevHeader, delta, revision) {
  const base = canonical(prevHeader, revision);
  const result = obj(["config", delta.has("config") ? delta.get("config") : base.get("config")]);
  const system = delta.has("system") ? applySystem(base.get("system"), delta.get("system")) : base.get("system");
  if (system !== undefined) result.set("system", system);
  result.set("tools", delta.has("tools") ? applyTools(base.get("tools") || [], delta.get("tools")) : base.get("tools") || []);
  for (const field of FIELDS[revision].slice(3)) {
    result.set(field, delta.has(field) ? delta.get(field) : base.get(field) || []);
  }
  return canonical(result, revision);
}

// FOLD-1..3: a snapshot replaces the state with its canonical header, a
// delta applies to it, other events are skipped; `from` resumes a fold.
function fold(events, from, revision) {
  let state = from === undefined || from === null ? null : canonical(from, revision);
  for (const event of events) {
    const type = event.get("type");
    if (type === "request/header") {
      state = canonical(event.get("data").get("header"), revision);
    } else if (type === "request/header-delta") {
      if (state === null) {
        throw new CodecError(
          "a request/header-delta comes before any request/header snapshot",
          "delta-before-snapshot",
          "FOLD-2",
          event.get("seq"),
        );
      }
      state = apply(state, event.get("data"), revision);
    }
  }
  return state;
}

function snapshot(header, reason) {
  return obj(["type", "request/header"], ["data", obj(["header", header], ["reason", reason])]);
}

// WRITER-1..5: the header event one request owes the log, or null.
function record(baseline, loggedThisInstance, header, revision) {
  const current = canonical(header, revision);
  if (!loggedThisInstance) return snapshot(current, baseline === null ? "initial" : "resume");
  if (baseline === null) throw new TypeError("an instance that logged a header has a baseline");
  if (equals(baseline, current, revision)) return null;
  const delta = diff(baseline, current, revision);
  let roundTrips = false;
  try {
    roundTrips = equals(apply(baseline, delta, revision), current, revision);
  } catch (error) {
    if (!(error instanceof CodecError)) throw error;
  }
  if (roundTrips) return obj(["type", "request/header-delta"], ["data", delta]);
  return snapshot(current, "fallback");
}

module.exports = { REVISIONS, CodecError, canonical, equals, diff, apply, fold, record };
