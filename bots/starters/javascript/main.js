// A complete YINSH bot in JavaScript for Node.js, no packages needed.
//
// The referee writes one JSON object per line to our standard input and reads one JSON object
// per line from our standard output (docs/protocol.md). Standard error is our log: the referee
// keeps its end in the game's transcript. Never write anything but protocol lines to stdout,
// so use console.error (stderr) for logging, not console.log (stdout).
//
// Run it against the random bot, in the arena's folder:
//   .venv/bin/python manage.py match bots/starters/javascript bots/random
"use strict";

const readline = require("node:readline");

const NAME = "starter-javascript";
const VERSION = "1.0";

function log(...args) {
  console.error(`${NAME}:`, ...args);
}

// Write one message as one line of JSON. Writes to a pipe are synchronous on Linux, so the
// line is on its way when this returns.
function send(message) {
  process.stdout.write(JSON.stringify(message) + "\n");
}

// Math.random cannot be seeded, so here is a small seeded generator (mulberry32): the same
// game's seed gives the same moves, which makes a game easy to replay while debugging.
function seededRandom(seed) {
  let a = seed >>> 0;
  return function next() {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// The strategy: pick one of the legal action tokens. Make this smarter!
// The request also carries "history", "position" and "clock" (see docs/protocol.md).
function choose(actions, random) {
  return actions[Math.floor(random() * actions.length)];
}

let random = Math.random;
const input = readline.createInterface({ input: process.stdin });

// One message per line. When the referee closes our input the loop ends and Node exits.
input.on("line", (line) => {
  const message = JSON.parse(line);
  switch (message.type) {
    case "hello":
      // Mix our colour into the game's seed, so that the two sides play differently.
      random = seededRandom(message.seed * 2 + (message.color === "black" ? 1 : 0));
      log("playing", message.color, "in", message.variant);
      send({ type: "ready", name: NAME, version: VERSION });
      break;
    case "request":
      send({ type: "action", action: choose(message.actions, random) });
      break;
    case "end":
      log("game over:", message.result, "-", message.reason);
      input.close();
      break;
    default:
    // A type from a later protocol version: ignore it.
  }
});
