//! Plays the first legal action, written as a current Rust toolchain allows: edition 2024
//! (Rust 1.85), `let ... else` (1.65) and `Option::is_some_and` (1.70), with a Cargo.lock of
//! version 4 (Cargo 1.78). Debian 12's own rustc 1.63 and cargo 1.65 reject each of them.
//!
//! The referee writes compact JSON (docs/protocol.md) and action tokens need no escaping, so
//! finding a field's value by its key is enough for this bot.

use std::io::{self, BufRead, Write};

const NAME: &str = "rust_let_else";

/// The string value of `"key":"..."` in a compact JSON line.
fn string_field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let start = line.find(&format!("\"{key}\":\""))? + key.len() + 4;
    let len = line[start..].find('"')?;
    Some(&line[start..start + len])
}

/// The first token of `"actions":["...", ...]`.
fn first_action(line: &str) -> Option<&str> {
    let Some(start) = line.find("\"actions\":[\"") else {
        return None;
    };
    let rest = &line[start + 12..];
    let Some(len) = rest.find('"') else {
        return None;
    };
    Some(&rest[..len])
}

fn main() -> io::Result<()> {
    let mut out = io::stdout().lock();
    for line in io::stdin().lock().lines() {
        let line = line?;
        let Some(kind) = string_field(&line, "type") else {
            eprintln!("{NAME}: a line without a type: {line}");
            std::process::exit(1);
        };
        match kind {
            "hello" => {
                let color = string_field(&line, "color").unwrap_or("?");
                eprintln!("{NAME}: built by a toolchain with let-else; playing {color}");
                writeln!(out, r#"{{"type":"ready","name":"{NAME}","version":"1"}}"#)?;
            }
            "request" => {
                let Some(action) = first_action(&line).filter(|a| !a.is_empty()) else {
                    eprintln!("{NAME}: a request without actions: {line}");
                    std::process::exit(1);
                };
                writeln!(out, r#"{{"type":"action","action":"{action}"}}"#)?;
            }
            "end" => {
                if string_field(&line, "reason").is_some_and(|r| !r.is_empty()) {
                    eprintln!("{NAME}: the game ended: {line}");
                }
                break;
            }
            _ => {}
        }
        out.flush()?;
    }
    Ok(())
}
