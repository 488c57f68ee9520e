// JSON text in and out, keeping object member order.
//
// JSON.parse builds plain objects, and a plain object lists every member
// whose name is an array index ("10", "0") first, in numeric order, then the
// others: {"model":"m","b":1,"10":2} would come back as
// {"10":2,"model":"m","b":1}. Member order is part of a header (JSON-3 in
// docs/spec.md), so this module parses into Maps, which keep insertion order
// for every key, and writes Maps back in that order.
//
// Values: null, true/false, numbers (doubles), strings, arrays, and Maps for
// objects. A repeated member name is refused (JSON-1).

"use strict";

class JsonSyntaxError extends Error {}

function parse(text) {
  let at = 0;

  function fail(what) {
    throw new JsonSyntaxError(`${what} at offset ${at}`);
  }

  function skipSpace() {
    while (at < text.length) {
      const c = text[at];
      if (c === " " || c === "\t" || c === "\n" || c === "\r") at += 1;
      else break;
    }
  }

  function value() {
    skipSpace();
    const c = text[at];
    if (c === "{") return object();
    if (c === "[") return array();
    if (c === '"') return string();
    if (c === "-" || (c >= "0" && c <= "9")) return number();
    for (const [word, result] of [["true", true], ["false", false], ["null", null]]) {
      if (text.startsWith(word, at)) {
        at += word.length;
        return result;
      }
    }
    return fail("unexpected character");
  }

  function object() {
    const result = new Map();
    at += 1; // {
    skipSpace();
    if (text[at] === "}") {
      at += 1;
      return result;
    }
    for (;;) {
      skipSpace();
      if (text[at] !== '"') fail("expected a member name");
      const name = string();
      if (result.has(name)) fail(`repeated member name ${JSON.stringify(name)}`);
      skipSpace();
      if (text[at] !== ":") fail("expected ':'");
      at += 1;
      result.set(name, value());
      skipSpace();
      if (text[at] === ",") {
        at += 1;
      } else if (text[at] === "}") {
        at += 1;
        return result;
      } else {
        fail("expected ',' or '}'");
      }
    }
  }

  function array() {
    const result = [];
    at += 1; // [
    skipSpace();
    if (text[at] === "]") {
      at += 1;
      return result;
    }
    for (;;) {
      result.push(value());
      skipSpace();
      if (text[at] === ",") {
        at += 1;
      } else if (text[at] === "]") {
        at += 1;
        return result;
      } else {
        fail("expected ',' or ']'");
      }
    }
  }

  const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;

  function number() {
    NUMBER.lastIndex = at;
    const found = NUMBER.exec(text);
    if (found === null) fail("malformed number");
    at += found[0].length;
    return Number(found[0]);
  }

  const ESCAPES = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };

  function string() {
    at += 1; // opening quote
    let result = "";
    for (;;) {
      const c = text[at];
      if (c === undefined) fail("unterminated string");
      if (c === '"') {
        at += 1;
        return result;
      }
      if (c === "\\") {
        const e = text[at + 1];
        if (e === "u") {
          const hex = text.slice(at + 2, at + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail("malformed \\u escape");
          result += String.fromCharCode(parseInt(hex, 16));
          at += 6;
        } else if (e in ESCAPES) {
          result += ESCAPES[e];
          at += 2;
        } else {
          fail("malformed escape");
        }
      } else if (c < " ") {
        fail("control character in a string");
      } else {
        result += c;
        at += 1;
      }
    }
  }

  const result = value();
  skipSpace();
  if (at !== text.length) fail("text after the value");
  return result;
}

function stringify(value) {
  if (value === null) return "null";
  if (value instanceof Map) {
    const members = [];
    for (const [name, member] of value) members.push(`${JSON.stringify(name)}:${stringify(member)}`);
    return `{${members.join(",")}}`;
  }
  if (Array.isArray(value)) return `[${value.map(stringify).join(",")}]`;
  if (typeof value === "number" && !Number.isFinite(value)) {
    throw new RangeError("a number that is not finite is not a JSON value");
  }
  if (!["string", "number", "boolean"].includes(typeof value)) {
    throw new RangeError(`${typeof value} is not a JSON value`);
  }
  return JSON.stringify(value);
}

// Build a Map from [name, value] pairs: results are written in this order.
function obj(...pairs) {
  return new Map(pairs);
}

module.exports = { JsonSyntaxError, parse, stringify, obj };
