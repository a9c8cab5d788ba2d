// A complete YINSH bot in Java (17), standard library only.
//
// The referee writes one JSON object per line to our standard input and reads one JSON object
// per line from our standard output (docs/protocol.md). Standard error is our log: the referee
// keeps its end in the game's transcript. Never print anything but protocol lines to
// System.out: log with System.err.
//
// The standard library has no JSON, so this file has a small reader for what the bot needs:
// the message's "type", "color" and "seed", and the "actions" list. It walks the whole line
// correctly (nested objects, escapes in strings) and skips every other field.
//
// Build it in this folder, then play it against the random bot from the arena's folder:
//   javac -d out Main.java
//   .venv/bin/python manage.py match bots/starters/java bots/random

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

public final class Main {
    static final String NAME = "starter-java";
    static final String VERSION = "1.0";

    /** The fields of a message this bot uses; the others are skipped. */
    static final class Message {
        String type = ""; // "hello", "request", "end"...
        String color = ""; // hello: "white" or "black"
        long seed; // hello: the game's seed
        List<String> actions = new ArrayList<>(); // request: the legal action tokens
    }

    /** Reads one line of JSON; throws IllegalArgumentException on anything that is not JSON. */
    static final class Reader {
        private final String s;
        private int i;

        Reader(String line) {
            s = line;
        }

        Message message() {
            Message m = new Message();
            expect('{');
            if (peek() != '}') {
                while (true) {
                    String key = string();
                    expect(':');
                    switch (key) {
                        case "type" -> m.type = string();
                        case "color" -> m.color = string();
                        case "seed" -> m.seed = integer();
                        case "actions" -> m.actions = strings();
                        default -> skip();
                    }
                    if (peek() != ',') break;
                    i++;
                }
            }
            expect('}');
            return m;
        }

        /** The next character that is not white space, or 0 at the end of the line. */
        private char peek() {
            while (i < s.length() && " \t\r\n".indexOf(s.charAt(i)) >= 0) i++;
            return i < s.length() ? s.charAt(i) : 0;
        }

        private void expect(char c) {
            if (peek() != c) throw new IllegalArgumentException("expected '" + c + "' at " + i);
            i++;
        }

        /** A string with its escapes decoded. Java strings are UTF-16, as \\u escapes are. */
        private String string() {
            expect('"');
            StringBuilder out = new StringBuilder();
            while (true) {
                if (i >= s.length()) throw new IllegalArgumentException("unterminated string");
                char c = s.charAt(i++);
                if (c == '"') return out.toString();
                if (c < 0x20) throw new IllegalArgumentException("control character in a string");
                if (c != '\\') {
                    out.append(c);
                    continue;
                }
                if (i >= s.length()) throw new IllegalArgumentException("unterminated string");
                char e = s.charAt(i++);
                switch (e) {
                    case '"', '\\', '/' -> out.append(e);
                    case 'b' -> out.append('\b');
                    case 'f' -> out.append('\f');
                    case 'n' -> out.append('\n');
                    case 'r' -> out.append('\r');
                    case 't' -> out.append('\t');
                    case 'u' -> out.append(hex4());
                    default -> throw new IllegalArgumentException("bad escape \\" + e);
                }
            }
        }

        /** The four hex digits of a \\uXXXX escape, as one UTF-16 unit. */
        private char hex4() {
            int v = 0;
            for (int k = 0; k < 4; k++, i++) {
                int digit = i < s.length() ? Character.digit(s.charAt(i), 16) : -1;
                if (digit < 0) throw new IllegalArgumentException("bad \\u escape at " + i);
                v = v * 16 + digit;
            }
            return (char) v;
        }

        private long integer() {
            peek();
            int start = i;
            if (i < s.length() && s.charAt(i) == '-') i++;
            while (i < s.length() && Character.isDigit(s.charAt(i))) i++;
            return Long.parseLong(s.substring(start, i));
        }

        private List<String> strings() {
            List<String> out = new ArrayList<>();
            expect('[');
            if (peek() != ']') {
                while (true) {
                    out.add(string());
                    if (peek() != ',') break;
                    i++;
                }
            }
            expect(']');
            return out;
        }

        /** Skip any value: a string, a number, true, false, null, an object or an array. */
        private void skip() {
            char c = peek();
            if (c == '"') {
                string();
            } else if (c == '{' || c == '[') {
                char close = c == '{' ? '}' : ']';
                i++;
                if (peek() != close) {
                    while (true) {
                        if (c == '{') { // an object's member is "key": value
                            string();
                            expect(':');
                        }
                        skip();
                        if (peek() != ',') break;
                        i++;
                    }
                }
                expect(close);
            } else {
                int start = i;
                while (i < s.length() && ",:]} \t\r\n".indexOf(s.charAt(i)) < 0) i++;
                if (i == start) throw new IllegalArgumentException("expected a value at " + i);
            }
        }
    }

    /**
     * The strategy: pick one of the legal action tokens. Make this smarter! The request also
     * carries "history", "position" and "clock" (see docs/protocol.md): read them in
     * Reader.message when you need them.
     */
    static String choose(List<String> actions, Random random) {
        return actions.get(random.nextInt(actions.size()));
    }

    public static void main(String[] args) throws IOException {
        BufferedReader in =
                new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        // Our own stream on standard output, flushed by hand after each line.
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        Random random = new Random();

        // One message per line, until the referee closes our input (readLine returns null).
        String line;
        while ((line = in.readLine()) != null) {
            Message m;
            try {
                m = new Reader(line).message();
            } catch (IllegalArgumentException e) {
                System.err.println(NAME + ": cannot read a line (" + e.getMessage() + "): " + line);
                System.exit(1);
                return;
            }
            switch (m.type) {
                case "hello" -> {
                    // Mix our colour into the game's seed: the two sides play differently.
                    random = new Random(m.seed * 2 + (m.color.equals("black") ? 1 : 0));
                    System.err.println(NAME + ": playing " + m.color);
                    out.print("{\"type\":\"ready\",\"name\":\"" + NAME
                            + "\",\"version\":\"" + VERSION + "\"}\n");
                }
                case "request" -> {
                    // Action tokens are letters, digits and '-': they need no escaping in JSON.
                    String action = choose(m.actions, random);
                    out.print("{\"type\":\"action\",\"action\":\"" + action + "\"}\n");
                }
                case "end" -> {
                    System.err.println(NAME + ": game over");
                    return;
                }
                default -> {
                    // A type from a later protocol version: ignore it.
                }
            }
            out.flush(); // the referee is waiting for the line: send it now
        }
    }
}
