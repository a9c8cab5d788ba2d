// A complete YINSH bot in C++17, standard library only.
//
// The referee writes one JSON object per line to our standard input and reads one JSON object
// per line from our standard output (docs/protocol.md). Standard error is our log: the referee
// keeps its end in the game's transcript. Never print anything but protocol lines to stdout.
//
// The standard library has no JSON, so this file has a small reader for what the bot needs:
// the message's "type", "color" and "seed", and the "actions" list. It walks the whole line
// correctly (nested objects, escapes in strings) and skips every other field.
//
// Build it in this folder, then play it against the random bot from the arena's folder:
//   g++ -std=c++17 -O2 -Wall -o bot main.cpp
//   .venv/bin/python manage.py match bots/starters/cpp bots/random

#include <cstdint>
#include <iostream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

const char* const NAME = "starter-cpp";
const char* const VERSION = "1.0";

// ------------------------------------------------------------------ the message we care about

struct Message {
    std::string type;  // "hello", "request", "end"...
    std::string color;  // hello: "white" or "black"
    std::int64_t seed = 0;  // hello: the game's seed
    std::vector<std::string> actions;  // request: the legal action tokens
};

// ------------------------------------------------------------------ a small JSON reader

// Reads one line of JSON; throws std::runtime_error on anything that is not JSON.
class Reader {
public:
    explicit Reader(const std::string& text) : s_(text) {}

    Message message() {
        Message m;
        expect('{');
        if (peek() == '}') return m;
        for (;;) {
            std::string key = string();
            expect(':');
            if (key == "type") m.type = string();
            else if (key == "color") m.color = string();
            else if (key == "seed") m.seed = integer();
            else if (key == "actions") m.actions = strings();
            else skip();
            if (peek() != ',') break;
            ++i_;
        }
        expect('}');
        return m;
    }

private:
    const std::string& s_;
    std::size_t i_ = 0;

    // The next character that is not white space (or '\0' at the end of the line).
    char peek() {
        while (i_ < s_.size() && std::string(" \t\r\n").find(s_[i_]) != std::string::npos) ++i_;
        return i_ < s_.size() ? s_[i_] : '\0';
    }

    void expect(char c) {
        if (peek() != c) throw std::runtime_error(std::string("expected '") + c + "'");
        ++i_;
    }

    // The four hex digits of a \uXXXX escape.
    unsigned hex4() {
        unsigned v = 0;
        for (int k = 0; k < 4; ++k, ++i_) {
            char c = i_ < s_.size() ? s_[i_] : '\0';
            v <<= 4;
            if (c >= '0' && c <= '9') v |= static_cast<unsigned>(c - '0');
            else if (c >= 'a' && c <= 'f') v |= static_cast<unsigned>(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F') v |= static_cast<unsigned>(c - 'A' + 10);
            else throw std::runtime_error("bad \\u escape");
        }
        return v;
    }

    static void put_utf8(std::string& out, unsigned cp) {
        if (cp < 0x80) {
            out += static_cast<char>(cp);
        } else if (cp < 0x800) {
            out += static_cast<char>(0xC0 | (cp >> 6));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            out += static_cast<char>(0xE0 | (cp >> 12));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        } else {
            out += static_cast<char>(0xF0 | (cp >> 18));
            out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        }
    }

    // A string with its escapes decoded (\n, \", \u00e9, surrogate pairs...), as UTF-8.
    std::string string() {
        expect('"');
        std::string out;
        for (;;) {
            if (i_ >= s_.size()) throw std::runtime_error("unterminated string");
            char c = s_[i_++];
            if (c == '"') return out;
            if (static_cast<unsigned char>(c) < 0x20)
                throw std::runtime_error("control character in a string");
            if (c != '\\') {
                out += c;
                continue;
            }
            if (i_ >= s_.size()) throw std::runtime_error("unterminated string");
            switch (char e = s_[i_++]) {
                case '"': case '\\': case '/': out += e; break;
                case 'b': out += '\b'; break;
                case 'f': out += '\f'; break;
                case 'n': out += '\n'; break;
                case 'r': out += '\r'; break;
                case 't': out += '\t'; break;
                case 'u': {
                    unsigned cp = hex4();
                    // A character beyond U+FFFF comes as two escapes, a surrogate pair.
                    if (cp >= 0xD800 && cp < 0xDC00 && s_.compare(i_, 2, "\\u") == 0) {
                        std::size_t back = i_;
                        i_ += 2;
                        unsigned low = hex4();
                        if (low >= 0xDC00 && low < 0xE000) {
                            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                        } else {
                            i_ = back;  // not a pair: read that escape on its own next
                        }
                    }
                    put_utf8(out, cp);
                    break;
                }
                default: throw std::runtime_error("bad escape");
            }
        }
    }

    std::int64_t integer() {
        peek();
        std::size_t used = 0;
        std::int64_t v = std::stoll(s_.substr(i_), &used);
        i_ += used;
        return v;
    }

    std::vector<std::string> strings() {
        std::vector<std::string> out;
        expect('[');
        if (peek() != ']') {
            for (;;) {
                out.push_back(string());
                if (peek() != ',') break;
                ++i_;
            }
        }
        expect(']');
        return out;
    }

    // Skip any value: a string, a number, true, false, null, an object or an array.
    void skip() {
        char c = peek();
        if (c == '"') {
            string();
        } else if (c == '{' || c == '[') {
            char close = c == '{' ? '}' : ']';
            ++i_;
            if (peek() != close) {
                for (;;) {
                    if (c == '{') {  // an object's member is "key": value
                        string();
                        expect(':');
                    }
                    skip();
                    if (peek() != ',') break;
                    ++i_;
                }
            }
            expect(close);
        } else {
            std::size_t start = i_;
            const std::string ends = ",:]} \t\r\n";
            while (i_ < s_.size() && ends.find(s_[i_]) == std::string::npos) ++i_;
            if (i_ == start) throw std::runtime_error("expected a value");
        }
    }
};

// ------------------------------------------------------------------ the bot

void send(const std::string& line) {
    // std::endl writes the newline and flushes: the referee is waiting for the line.
    std::cout << line << std::endl;
}

// The strategy: pick one of the legal action tokens. Make this smarter! The request also
// carries "history", "position" and "clock" (see docs/protocol.md): read them in
// Reader::message when you need them.
const std::string& choose(const std::vector<std::string>& actions, std::mt19937_64& rng) {
    std::uniform_int_distribution<std::size_t> pick(0, actions.size() - 1);
    return actions[pick(rng)];
}

}  // namespace

int main() {
    std::ios::sync_with_stdio(false);
    std::mt19937_64 rng;
    std::string line;

    // One message per line, until the referee closes our input.
    while (std::getline(std::cin, line)) {
        Message m;
        try {
            m = Reader(line).message();
        } catch (const std::exception& e) {
            std::cerr << NAME << ": cannot read this line (" << e.what() << "): " << line << "\n";
            return 1;
        }
        if (m.type == "hello") {
            // Mix our colour into the game's seed, so that the two sides play differently.
            rng.seed(static_cast<std::uint64_t>(m.seed) * 2 + (m.color == "black" ? 1 : 0));
            std::cerr << NAME << ": playing " << m.color << std::endl;
            send(std::string("{\"type\":\"ready\",\"name\":\"") + NAME + "\",\"version\":\"" +
                 VERSION + "\"}");
        } else if (m.type == "request") {
            if (m.actions.empty()) {
                std::cerr << NAME << ": a request without actions" << std::endl;
                return 1;
            }
            // Action tokens are letters, digits and '-': they need no escaping in JSON.
            send("{\"type\":\"action\",\"action\":\"" + choose(m.actions, rng) + "\"}");
        } else if (m.type == "end") {
            std::cerr << NAME << ": game over" << std::endl;
            break;
        }
        // Any other type is from a later protocol version: ignore it.
    }
    return 0;
}
