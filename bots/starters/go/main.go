// A complete YINSH bot in Go, standard library only.
//
// The referee writes one JSON object per line to our standard input and reads one JSON object
// per line from our standard output (docs/protocol.md). Standard error is our log: the referee
// keeps its end in the game's transcript. Never print anything but protocol lines to stdout:
// the log package writes to stderr.
//
// Build it in this folder, then play it against the random bot from the arena's folder:
//
//	go build -o bot .
//	.venv/bin/python manage.py match bots/starters/go bots/random
package main

import (
	"encoding/json"
	"io"
	"log"
	"math/rand"
	"os"
)

const (
	name    = "starter-go"
	version = "1.0"
)

// message holds the fields of every message the referee sends that this bot uses; a field
// a message does not have stays empty. See docs/protocol.md for the others ("history",
// "position", "clock"...): add them here when you need them.
type message struct {
	Type    string   `json:"type"`    // "hello", "request", "end"...
	Color   string   `json:"color"`   // hello: "white" or "black"
	Variant string   `json:"variant"` // hello: "yinsh", "blitz"...
	Seed    int64    `json:"seed"`    // hello: the game's seed
	Actions []string `json:"actions"` // request: the legal action tokens
	Result  string   `json:"result"`  // end: "white", "black" or "draw"
	Reason  string   `json:"reason"`  // end: why the game ended
}

type ready struct {
	Type    string `json:"type"`
	Name    string `json:"name"`
	Version string `json:"version"`
}

type action struct {
	Type   string `json:"type"`
	Action string `json:"action"`
}

// choose is the strategy: pick one of the legal action tokens. Make this smarter!
func choose(actions []string, rng *rand.Rand) string {
	return actions[rng.Intn(len(actions))]
}

func main() {
	log.SetFlags(0)
	log.SetPrefix(name + ": ")

	// A Decoder reads one JSON value after another; the referee sends one per line.
	// An Encoder writes each value followed by a newline, and os.Stdout is not buffered,
	// so every answer reaches the referee at once.
	in := json.NewDecoder(os.Stdin)
	out := json.NewEncoder(os.Stdout)
	rng := rand.New(rand.NewSource(1))

	for {
		var m message
		if err := in.Decode(&m); err == io.EOF {
			return // the referee closed our input
		} else if err != nil {
			log.Fatalf("cannot read a message: %v", err)
		}
		var err error
		switch m.Type {
		case "hello":
			// Mix our colour into the game's seed, so that the two sides play differently.
			seed := m.Seed * 2
			if m.Color == "black" {
				seed++
			}
			rng = rand.New(rand.NewSource(seed))
			log.Printf("playing %s in %s", m.Color, m.Variant)
			err = out.Encode(ready{Type: "ready", Name: name, Version: version})
		case "request":
			err = out.Encode(action{Type: "action", Action: choose(m.Actions, rng)})
		case "end":
			log.Printf("game over: %s - %s", m.Result, m.Reason)
			return
		default:
			// A type from a later protocol version: ignore it.
		}
		if err != nil {
			log.Fatalf("cannot answer: %v", err)
		}
	}
}
