//! A complete YINSH bot in Rust, standard library only (no crates).
//!
//! The referee writes one JSON object per line to our standard input and reads one JSON object
//! per line from our standard output (docs/protocol.md). Standard error is our log: the referee
//! keeps its end in the game's transcript. Never print anything but protocol lines to stdout:
//! log with `eprintln!`.
//!
//! The standard library has no JSON, so this file has a small reader for what the bot needs:
//! the message's "type", "color" and "seed", and the "actions" list. It walks the whole line
//! correctly (nested objects, escapes in strings) and skips every other field.
//!
//! Build it in this folder, then play it against the random bot from the arena's folder:
//!   cargo build --release --offline
//!   .venv/bin/python manage.py match bots/starters/rust bots/random

use std::io::{self, BufRead, Write};

const NAME: &str = "starter-rust";
const VERSION: &str = "1.0";

/// The fields of a message this bot uses; the others are skipped.
#[derive(Default)]
struct Message {
    kind: String,         // "type": "hello", "request", "end"...
    color: String,        // hello: "white" or "black"
    seed: i64,            // hello: the game's seed
    actions: Vec<String>, // request: the legal action tokens
}

// ------------------------------------------------------------------ a small JSON reader

/// Reads one line of JSON; every method returns `Err` with a message on anything that is not JSON.
struct Reader<'a> {
    s: &'a [u8],
    i: usize,
}

type Result<T> = std::result::Result<T, String>;

impl<'a> Reader<'a> {
    fn new(line: &'a str) -> Self {
        Reader {
            s: line.as_bytes(),
            i: 0,
        }
    }

    fn message(&mut self) -> Result<Message> {
        let mut m = Message::default();
        self.expect(b'{')?;
        if self.peek() != Some(b'}') {
            loop {
                let key = self.string()?;
                self.expect(b':')?;
                match key.as_str() {
                    "type" => m.kind = self.string()?,
                    "color" => m.color = self.string()?,
                    "seed" => m.seed = self.integer()?,
                    "actions" => m.actions = self.strings()?,
                    _ => self.skip()?,
                }
                if self.peek() != Some(b',') {
                    break;
                }
                self.i += 1;
            }
        }
        self.expect(b'}')?;
        Ok(m)
    }

    /// The next byte that is not white space, if any.
    fn peek(&mut self) -> Option<u8> {
        while self.i < self.s.len() && b" \t\r\n".contains(&self.s[self.i]) {
            self.i += 1;
        }
        self.s.get(self.i).copied()
    }

    fn expect(&mut self, c: u8) -> Result<()> {
        if self.peek() != Some(c) {
            return Err(format!("expected '{}' at byte {}", c as char, self.i));
        }
        self.i += 1;
        Ok(())
    }

    /// The four hex digits of a `\uXXXX` escape.
    fn hex4(&mut self) -> Result<u32> {
        let digits = self.s.get(self.i..self.i + 4).ok_or("short \\u escape")?;
        let text = std::str::from_utf8(digits).map_err(|_| "bad \\u escape")?;
        if !text.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(format!("bad \\u escape at byte {}", self.i));
        }
        self.i += 4;
        Ok(u32::from_str_radix(text, 16).unwrap())
    }

    /// A string with its escapes decoded (\n, \", \u00e9, surrogate pairs...).
    fn string(&mut self) -> Result<String> {
        self.expect(b'"')?;
        let mut out: Vec<u8> = Vec::new();
        loop {
            let c = *self.s.get(self.i).ok_or("unterminated string")?;
            self.i += 1;
            match c {
                b'"' => break,
                0..=0x1f => return Err("control character in a string".into()),
                b'\\' => {
                    let e = *self.s.get(self.i).ok_or("unterminated string")?;
                    self.i += 1;
                    let decoded = match e {
                        b'"' | b'\\' | b'/' => e as char,
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let mut cp = self.hex4()?;
                            // A character beyond U+FFFF comes as two escapes, a surrogate pair.
                            if (0xD800..0xDC00).contains(&cp)
                                && self.s[self.i..].starts_with(b"\\u")
                            {
                                let back = self.i;
                                self.i += 2;
                                let low = self.hex4()?;
                                if (0xDC00..0xE000).contains(&low) {
                                    cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                                } else {
                                    self.i = back; // not a pair: read that escape on its own
                                }
                            }
                            // A lone surrogate is no character: replace it, as Rust strings must
                            // hold valid UTF-8.
                            char::from_u32(cp).unwrap_or(char::REPLACEMENT_CHARACTER)
                        }
                        _ => return Err(format!("bad escape \\{}", e as char)),
                    };
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(decoded.encode_utf8(&mut buf).as_bytes());
                }
                _ => out.push(c),
            }
        }
        // The line was valid UTF-8 and we cut it only at ASCII bytes, so this cannot fail.
        String::from_utf8(out).map_err(|e| e.to_string())
    }

    fn integer(&mut self) -> Result<i64> {
        self.peek();
        let start = self.i;
        if self.s.get(self.i) == Some(&b'-') {
            self.i += 1;
        }
        while matches!(self.s.get(self.i), Some(b) if b.is_ascii_digit()) {
            self.i += 1;
        }
        let text = std::str::from_utf8(&self.s[start..self.i]).unwrap();
        text.parse()
            .map_err(|_| format!("bad integer at byte {}", start))
    }

    fn strings(&mut self) -> Result<Vec<String>> {
        let mut out = Vec::new();
        self.expect(b'[')?;
        if self.peek() != Some(b']') {
            loop {
                out.push(self.string()?);
                if self.peek() != Some(b',') {
                    break;
                }
                self.i += 1;
            }
        }
        self.expect(b']')?;
        Ok(out)
    }

    /// Skip any value: a string, a number, true, false, null, an object or an array.
    fn skip(&mut self) -> Result<()> {
        match self.peek() {
            Some(b'"') => {
                self.string()?;
            }
            Some(open @ (b'{' | b'[')) => {
                let close = if open == b'{' { b'}' } else { b']' };
                self.i += 1;
                if self.peek() != Some(close) {
                    loop {
                        if open == b'{' {
                            // an object's member is "key": value
                            self.string()?;
                            self.expect(b':')?;
                        }
                        self.skip()?;
                        if self.peek() != Some(b',') {
                            break;
                        }
                        self.i += 1;
                    }
                }
                self.expect(close)?;
            }
            _ => {
                let start = self.i;
                while self.i < self.s.len() && !b",:]} \t\r\n".contains(&self.s[self.i]) {
                    self.i += 1;
                }
                if self.i == start {
                    return Err(format!("expected a value at byte {}", start));
                }
            }
        }
        Ok(())
    }
}

// ------------------------------------------------------------------ the bot

/// A small seeded random generator (xorshift64*): the same seed gives the same game.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        // xorshift needs a state that is not zero, and works best with many bits set.
        let state = seed ^ 0x9E37_79B9_7F4A_7C15;
        Rng(if state == 0 { 1 } else { state })
    }

    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n as u64) as usize
    }
}

/// The strategy: pick one of the legal action tokens. Make this smarter! The request also
/// carries "history", "position" and "clock" (see docs/protocol.md): read them in
/// `Reader::message` when you need them.
fn choose<'a>(actions: &'a [String], rng: &mut Rng) -> &'a str {
    &actions[rng.below(actions.len())]
}

fn main() -> io::Result<()> {
    let stdin = io::stdin();
    let mut out = io::stdout().lock();
    let mut rng = Rng::new(0);

    // One message per line, until the referee closes our input.
    for line in stdin.lock().lines() {
        let line = line?;
        let m = match Reader::new(&line).message() {
            Ok(m) => m,
            Err(e) => {
                eprintln!("{}: cannot read a line ({}): {}", NAME, e, line);
                std::process::exit(1);
            }
        };
        match m.kind.as_str() {
            "hello" => {
                // Mix our colour into the game's seed, so that the two sides play differently.
                let black = u64::from(m.color == "black");
                rng = Rng::new((m.seed as u64).wrapping_mul(2).wrapping_add(black));
                eprintln!("{}: playing {}", NAME, m.color);
                writeln!(
                    out,
                    r#"{{"type":"ready","name":"{}","version":"{}"}}"#,
                    NAME, VERSION
                )?;
            }
            "request" => {
                // Action tokens are letters, digits and '-': they need no escaping in JSON.
                let action = choose(&m.actions, &mut rng);
                writeln!(out, r#"{{"type":"action","action":"{}"}}"#, action)?;
            }
            "end" => {
                eprintln!("{}: game over", NAME);
                break;
            }
            _ => {} // a type from a later protocol version: ignore it
        }
        out.flush()?; // the referee is waiting for the line: send it now
    }
    Ok(())
}
