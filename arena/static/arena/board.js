/*
 * The board replay widget of the arena: YINSH, Blitz YINSH and Yangsh games, ply by ply.
 *
 * Progressive enhancement, no dependencies, no build step. Every element
 *
 *     <div class="yinsh-replay" data-replay-url="/matches/12/replay.json"></div>
 *
 * (or one holding the data inline in a <script type="application/json"> child) becomes an SVG
 * board with controls, a slider and the move list. The data comes from arena.games.replay.replay_frames
 * (its format is in docs/replay.md): the board's points and lines are drawn as given, so this
 * file knows nothing about hexagons or squares beyond how to shade the squares.
 *
 * Options, as data- attributes on the element:
 *     data-replay-url   where to fetch the data (unless it is inline)
 *     data-start        "end" (default) or "start": the ply shown first when the URL names none
 *     data-hash         the URL-hash key that holds the ply ("ply" by default: #ply=12); "off"
 *     data-speed        milliseconds per ply when playing (default 700)
 *     data-live-url     a game being played: its live feed (/matches/12/live.json), read once;
 *     data-live-events  then its stream (/matches/12/live/events) pushes the new actions and the
 *                       clocks as they come (the feed asked again every 5 s instead where there is
 *                       no EventSource or the stream keeps failing); when the game ends, the part
 *                       of the page around the widget ([data-live-page], else the widget) is
 *                       fetched again, so the page becomes the finished game's (its replay)
 *
 * Keys (when the widget has focus): Left/Right one ply, Up/Down one turn, Home/End, Space plays.
 * window.YinshReplay.init(root) enhances elements added later. The element fires
 * "yinsh-replay-ready" once the widget is built (its Replay object is then element.yinshReplay)
 * and "yinsh-replay-ply" whenever another ply is shown (detail.ply). window.YinshReplay.kit holds
 * the small helpers that the scripts built on the widget (analysis.js, play.js) share.
 */
(function () {
  "use strict";

  var SVGNS = "http://www.w3.org/2000/svg";
  var RING_R = 0.36;
  var MARKER_R = 0.26;
  var HL_R = 0.5;
  var COLOURS = ["white", "black"];
  var ICONS = {
    first: "M5 5h2.5v14H5zM20 5v14L9 12z",
    // One step is a chevron, playing a solid triangle: the two must not be told apart by a pixel.
    prev: "M15 5.5 16.5 7l-5 5 5 5-1.5 1.5L8.5 12z",
    play: "M7 5v14l12-7z",
    pause: "M6.5 5h4v14h-4zM13.5 5h4v14h-4z",
    next: "M9 5.5 7.5 7l5 5-5 5L9 18.5 15.5 12z",
    last: "M4 5v14l11-7zM16.5 5H19v14h-2.5z",
  };
  var TERMINATIONS = {
    rows: "rows completed",
    "pool-exhausted": "the pool ran out",
    "no-moves": "no legal moves",
    resignation: "resignation",
    time: "time",
    crash: "a bot crashed",
    "illegal-move": "an illegal move",
    "protocol-error": "a protocol error",
    "sandbox-violation": "a sandbox violation",
    "no-start": "a bot failed to start",
    aborted: "aborted",
  };
  var counter = 0;

  function el(tag, attrs, parent) {
    var node = document.createElement(tag);
    setAttrs(node, attrs);
    if (parent) parent.appendChild(node);
    return node;
  }

  function svg(tag, attrs, parent) {
    var node = document.createElementNS(SVGNS, tag);
    setAttrs(node, attrs);
    if (parent) parent.appendChild(node);
    return node;
  }

  function setAttrs(node, attrs) {
    if (!attrs) return;
    Object.keys(attrs).forEach(function (k) {
      if (k === "text") node.textContent = attrs[k];
      else if (attrs[k] !== null && attrs[k] !== undefined) node.setAttribute(k, attrs[k]);
    });
  }

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
  }

  function cap(s) {
    return s.charAt(0).toUpperCase() + s.slice(1);
  }

  function icon(name) {
    var s = svg("svg", { viewBox: "0 0 24 24", "aria-hidden": "true", focusable: "false" });
    svg("path", { d: ICONS[name] }, s);
    return s;
  }

  // ------------------------------------------------------------------------ the widget

  function Replay(root, data) {
    this.root = root;
    this.data = data;
    this.frames = data.frames || [];
    this.turns = data.turns || deriveTurns(this.frames);
    this.ply = 0;
    this.timer = null;
    this.speed = parseInt(root.getAttribute("data-speed"), 10) || 700;
    var key = root.getAttribute("data-hash");
    this.hashKey = key === "off" ? null : key || "ply";
    this.where = {};
    var self = this;
    (data.board.points || []).forEach(function (p) {
      self.where[p.name] = p;
    });
    this.id = "yr" + ++counter;
    this.build();
    var fromHash = this.readHash();
    var start = root.getAttribute("data-start") === "start" ? 0 : this.frames.length;
    this.go(fromHash === null ? start : fromHash, { hash: false });
  }

  function deriveTurns(frames) {
    var turns = [];
    frames.forEach(function (f) {
      var t = turns[f.turn_index];
      if (!t) turns[f.turn_index] = { label: f.turn, by: f.by, first: f.n, last: f.n };
      else {
        t.last = f.n;
        t.label = f.turn; // a turn still being played grows: its latest frame names it whole
      }
    });
    return turns;
  }

  Replay.prototype.build = function () {
    var d = this.data;
    var root = this.root;
    var self = this;
    clear(root);
    root.classList.add("yr");
    root.classList.add("yr-" + d.board.kind);
    root.setAttribute("role", "group");
    root.setAttribute("tabindex", "0");
    var names = playerName(d, "white") + " vs " + playerName(d, "black");
    root.setAttribute("aria-label", (d.title || "YINSH") + " replay: " + names);

    // Players and score.
    var head = el("div", { class: "yr-head" }, root);
    this.score = {};
    COLOURS.forEach(function (c) {
      var side = el("div", { class: "yr-player yr-player-" + c }, head);
      el("span", { class: "yr-swatch yr-" + c, "aria-hidden": "true" }, side);
      el("span", { class: "yr-name", text: playerName(d, c) }, side);
      var score = el("span", { class: "yr-score", "data-color": c }, side);
      self.score[c] = score;
      if (d.live) self.buildClock(side, c);
    });
    this.result = el("div", { class: "yr-result", text: resultText(d) }, head);

    // The board.
    var b = d.board;
    var box = el("div", { class: "yr-boardbox" }, root);
    var s = svg(
      "svg",
      {
        class: "yr-board",
        viewBox: "0 0 " + b.width + " " + b.height,
        role: "img",
        "aria-labelledby": this.id + "-title",
      },
      box
    );
    this.title = svg("title", { id: this.id + "-title" }, s);
    this.drawBoard(s);
    this.hl = svg("g", { class: "yr-highlights" }, s);
    this.pieces = svg("g", { class: "yr-pieces" }, s);
    this.ghosts = svg("g", { class: "yr-ghosts" }, s);

    // Status, controls, slider, move list.
    var side = el("div", { class: "yr-side" }, root);
    this.status = el("div", { class: "yr-status", "aria-live": "polite" }, side);
    this.turnText = el("div", { class: "yr-turn" }, this.status);
    this.toMove = el("div", { class: "yr-tomove" }, this.status);
    this.extra = el("div", { class: "yr-extra" }, this.status);
    var controls = el("div", { class: "yr-controls" }, side);
    this.buttons = {
      first: button(controls, "first", "First position (Home)"),
      prev: button(controls, "prev", "Previous ply (Left arrow)"),
      play: button(controls, "play", "Play (Space)"),
      next: button(controls, "next", "Next ply (Right arrow)"),
      last: button(controls, "last", "Last position (End)"),
    };
    this.buttons.play.setAttribute("aria-pressed", "false");
    this.buttons.first.addEventListener("click", function () {
      self.stop();
      self.go(0);
    });
    this.buttons.prev.addEventListener("click", function () {
      self.stop();
      self.go(self.ply - 1);
    });
    this.buttons.next.addEventListener("click", function () {
      self.stop();
      self.go(self.ply + 1);
    });
    this.buttons.last.addEventListener("click", function () {
      self.stop();
      self.go(self.frames.length);
    });
    this.buttons.play.addEventListener("click", function () {
      self.toggle();
    });
    this.slider = el(
      "input",
      {
        type: "range",
        class: "yr-slider",
        min: "0",
        max: String(this.frames.length),
        step: "1",
        value: "0",
        "aria-label": "Position (ply)",
      },
      side
    );
    this.slider.addEventListener("input", function () {
      self.stop();
      self.go(parseInt(self.slider.value, 10));
    });
    this.logs = (d.logs || []).filter(function (c) {
      return COLOURS.indexOf(c) >= 0;
    });
    if (this.logs.length) {
      this.log = el("section", { class: "yr-log", "aria-labelledby": this.id + "-log" }, side);
      this.logTitle = el("h3", { class: "yr-log-title", id: this.id + "-log" }, this.log);
      this.logBody = el("div", { class: "yr-log-body" }, this.log);
    }
    this.moves = el("ol", { class: "yr-moves", "aria-label": "Moves" }, side);
    this.buildMoves();

    root.addEventListener("keydown", function (e) {
      self.onKey(e);
    });
    if (this.hashKey) {
      window.addEventListener("hashchange", function () {
        var n = self.readHash();
        if (n !== null && n !== self.ply) self.go(n, { hash: false });
      });
    }
  };

  Replay.prototype.buildMoves = function () {
    var self = this;
    clear(this.moves);
    this.turnItems = this.turns.map(function (t, k) {
      var li = el("li", { class: "yr-" + t.by }, self.moves);
      var btn = el(
        "button",
        { type: "button", class: "yr-turnbtn", "data-turn": String(k), text: t.label },
        li
      );
      btn.addEventListener("click", function () {
        self.stop();
        self.go(self.turns[k].last);
      });
      return btn;
    });
  };

  function button(parent, name, label) {
    var b = el(
      "button",
      { type: "button", class: "yr-btn yr-btn-" + name, "aria-label": label, title: label },
      parent
    );
    b.appendChild(icon(name));
    return b;
  }

  function playerName(d, c) {
    return d[c] || cap(c);
  }

  function resultText(d) {
    if (!d.result) return d.live ? "Being played now" : "Unfinished";
    var why = TERMINATIONS[d.termination] || d.termination || "";
    var who = d.result === "draw" ? "Draw" : cap(d.result) + " wins";
    return (d.score ? d.score + " · " : "") + who + (why ? " (" + why + ")" : "");
  }

  Replay.prototype.drawBoard = function (s) {
    var b = this.data.board;
    var g = svg("g", { class: "yr-grid" }, s);
    if (b.kind === "square") {
      b.points.forEach(function (p) {
        var dark = (p.name.charCodeAt(0) + parseInt(p.name.slice(1), 10)) % 2 === 0;
        svg(
          "rect",
          {
            class: "yr-cell " + (dark ? "yr-cell-dark" : "yr-cell-light"),
            x: p.x - 0.5,
            y: p.y - 0.5,
            width: 1,
            height: 1,
          },
          g
        );
      });
    } else {
      var path = (b.lines || [])
        .map(function (l) {
          return "M" + l[0] + " " + l[1] + "L" + l[2] + " " + l[3];
        })
        .join("");
      svg("path", { class: "yr-lines", d: path }, g);
    }
    (b.labels || []).forEach(function (l) {
      svg("text", { class: "yr-label", x: l.x, y: l.y, text: l.text }, g);
    });
  };

  // ------------------------------------------------------------------------ showing a ply

  Replay.prototype.position = function (ply) {
    return ply === 0 ? this.data.initial : this.frames[ply - 1].position;
  };

  Replay.prototype.go = function (ply, opts) {
    if (isNaN(ply)) return;
    ply = Math.max(0, Math.min(this.frames.length, ply));
    this.ply = ply;
    this.render();
    if (!opts || opts.hash !== false) this.writeHash();
    // Others (the analysis board, analysis.js) follow the ply shown.
    this.root.dispatchEvent(new CustomEvent("yinsh-replay-ply", { detail: { ply: ply } }));
  };

  Replay.prototype.render = function () {
    var self = this;
    var ply = this.ply;
    var pos = this.position(ply);
    var frame = ply > 0 ? this.frames[ply - 1] : null;
    var flipped = {};
    ((frame && frame.flipped) || []).forEach(function (p) {
      flipped[p] = true;
    });

    // Highlights under the pieces.
    clear(this.hl);
    if (frame && frame.moved) {
      var a = this.where[frame.moved[0]];
      var b = this.where[frame.moved[1]];
      svg("line", { class: "yr-path", x1: a.x, y1: a.y, x2: b.x, y2: b.y }, this.hl);
      svg("circle", { class: "yr-from", cx: a.x, cy: a.y, r: HL_R }, this.hl);
      svg("circle", { class: "yr-to", cx: b.x, cy: b.y, r: HL_R }, this.hl);
    } else if (frame && frame.kind === "place") {
      var p = this.where[frame.action];
      if (p) svg("circle", { class: "yr-to", cx: p.x, cy: p.y, r: HL_R }, this.hl);
    }

    // Markers first, rings over them (a ring that has just left leaves its marker inside).
    clear(this.pieces);
    COLOURS.forEach(function (c) {
      (pos.markers[c] || []).forEach(function (name) {
        var q = self.where[name];
        var cls = "yr-marker yr-" + c + (flipped[name] ? " yr-flipped" : "");
        svg("circle", { class: cls, cx: q.x, cy: q.y, r: MARKER_R, "data-point": name }, self.pieces);
      });
    });
    COLOURS.forEach(function (c) {
      (pos.rings[c] || []).forEach(function (name) {
        self.pieces.appendChild(ring(self.where[name], "yr-ring yr-" + c, name));
      });
    });

    // What was taken off on this ply, shown faded.
    clear(this.ghosts);
    if (frame && frame.removed && frame.removed.length) {
      frame.removed.forEach(function (name) {
        var q = self.where[name];
        if (frame.kind === "remove-ring") {
          self.ghosts.appendChild(ring(q, "yr-ghost yr-ghost-ring yr-" + frame.by, name));
        } else {
          svg(
            "circle",
            { class: "yr-ghost yr-ghost-marker yr-" + frame.by, cx: q.x, cy: q.y, r: MARKER_R },
            self.ghosts
          );
        }
      });
    }

    this.renderText(pos, frame);
  };

  function ring(q, cls, name) {
    var g = document.createElementNS(SVGNS, "g");
    setAttrs(g, { class: cls, "data-point": name });
    svg("circle", { class: "yr-ring-edge", cx: q.x, cy: q.y, r: RING_R }, g);
    svg("circle", { class: "yr-ring-body", cx: q.x, cy: q.y, r: RING_R }, g);
    return g;
  }

  Replay.prototype.renderText = function (pos, frame) {
    var d = this.data;
    var n = this.frames.length;
    var ply = this.ply;
    var self = this;

    // Turn and action.
    clear(this.turnText);
    if (frame) {
      el("span", { class: "yr-turnlabel", text: frame.turn }, this.turnText);
      var t = this.turns[frame.turn_index];
      var detail = "ply " + ply + " of " + n;
      if (t && t.last > t.first) {
        detail += " · " + frame.action + " (" + (ply - t.first + 1) + "/" + (t.last - t.first + 1) + ")";
      }
      el("span", { class: "yr-plyno", text: detail }, this.turnText);
    } else {
      el("span", { class: "yr-turnlabel", text: "Start" }, this.turnText);
      el("span", { class: "yr-plyno", text: "ply 0 of " + n }, this.turnText);
    }

    // Who acts next, or the result.
    clear(this.toMove);
    var over = pos.next === "over" || (ply === n && d.result);
    if (over) {
      this.toMove.textContent = "Game over: " + resultText(d);
    } else {
      el("span", { class: "yr-swatch yr-" + pos.turn, "aria-hidden": "true" }, this.toMove);
      this.toMove.appendChild(document.createTextNode(phaseText(pos)));
    }
    this.toMove.setAttribute("data-turn", over ? "" : pos.turn);

    // Pool, think time, info.
    clear(this.extra);
    el("span", { class: "yr-pool", text: "Pool: " + pos.pool }, this.extra);
    if (frame && typeof frame.think_ms === "number") {
      el("span", { class: "yr-think", text: "Thought " + formatMs(frame.think_ms) }, this.extra);
    }
    if (frame && !this.log && frame.info !== undefined && frame.info !== null) {
      var info = typeof frame.info === "string" ? frame.info : JSON.stringify(frame.info);
      el("span", { class: "yr-info", text: info }, this.extra);
    }

    if (this.log) this.renderLog(frame);

    // Score: rings removed per side.
    var goal = d.rows_to_win || 3;
    COLOURS.forEach(function (c) {
      var removed = (pos.removed && pos.removed[c]) || 0;
      var box = self.score[c];
      clear(box);
      box.setAttribute("data-removed", String(removed));
      box.setAttribute("title", removed + " of " + goal + " rings removed");
      var dots = el("span", { class: "yr-dots", "aria-hidden": "true" }, box);
      for (var i = 0; i < goal; i++) {
        el("span", { class: "yr-dot" + (i < removed ? " yr-dot-on" : "") }, dots);
      }
      el("span", { class: "yr-visually-hidden", text: removed + " of " + goal + " rings removed" }, box);
    });

    // Controls, slider, move list.
    this.setDisabled({ first: ply === 0, prev: ply === 0, next: ply === n, last: ply === n });
    this.slider.value = String(ply);
    this.slider.setAttribute(
      "aria-valuetext",
      "ply " + ply + " of " + n + (frame ? ", " + frame.turn : ", start")
    );
    var current = frame ? frame.turn_index : -1;
    this.turnItems.forEach(function (btn, k) {
      if (k === current) btn.setAttribute("aria-current", "step");
      else btn.removeAttribute("aria-current");
    });
    if (current >= 0) scrollIntoList(this.moves, this.turnItems[current]);
    this.title.textContent =
      (d.title || "YINSH") + " board after ply " + ply + (frame ? " (" + frame.turn + ")" : "");
  };

  // The owner's panel: what their bot said on the ply shown (its info, its think time, what it
  // wrote to its standard error meanwhile). The data holds these for the viewer's bots only.
  Replay.prototype.renderLog = function (frame) {
    var d = this.data;
    var body = this.logBody;
    clear(body);
    var mine = frame && this.logs.indexOf(frame.by) >= 0;
    this.log.setAttribute("data-color", mine ? frame.by : "");
    if (!frame) {
      this.logTitle.textContent = "Your bot's log";
      el("p", { class: "yr-log-note", text: "Step to a ply to read what your bot said on it." }, body);
      return;
    }
    this.logTitle.textContent = cap(frame.by) + "'s log, ply " + frame.n + " (" + frame.action + ")";
    if (!mine) {
      el("p", { class: "yr-log-note", text: "A ply of " + playerName(d, frame.by) + ", not your bot." }, body);
      return;
    }
    if (typeof frame.think_ms !== "number") {
      el("p", { class: "yr-log-note", text: "Played for it: it was not asked." }, body);
      return;
    }
    var facts = el("dl", { class: "yr-log-facts" }, body);
    el("dt", { text: "Thought" }, facts);
    el("dd", { class: "yr-log-think", text: formatMs(frame.think_ms) }, facts);
    el("dt", { text: "Info" }, facts);
    var info = frame.info === undefined || frame.info === null ? "" : frame.info;
    if (typeof info !== "string") info = JSON.stringify(info);
    el("dd", { class: "yr-log-info", text: info || "none" }, facts);
    var cut = typeof frame.stderr_bytes === "number" ? " (the end of " + frame.stderr_bytes + " bytes)" : "";
    el("h4", { class: "yr-log-sub", text: "Standard error" + cut }, body);
    if (d.live) el("p", { class: "yr-log-note", text: "Shown once the game is over." }, body);
    else if (frame.stderr) el("pre", { class: "yr-log-stderr", text: frame.stderr }, body);
    else el("p", { class: "yr-log-note", text: "Nothing written on this ply." }, body);
  };

  // A button pressed from the keyboard may disable itself (First at the first position): the
  // browser would drop its focus to the page, and the keys would no longer reach the widget.
  // The focus stays in the widget instead.
  Replay.prototype.setDisabled = function (which) {
    var self = this;
    var lost = false;
    Object.keys(which).forEach(function (name) {
      var b = self.buttons[name];
      if (which[name] && document.activeElement === b) lost = true;
      b.disabled = which[name];
    });
    if (lost) this.root.focus({ preventScroll: true });
  };

  function phaseText(pos) {
    var who = cap(pos.turn);
    switch (pos.next) {
      case "place":
        return who + " to place a ring";
      case "remove-row":
        return who + " to remove a row";
      case "remove-ring":
        return who + " to remove a ring";
      default:
        return who + " to move";
    }
  }

  function formatMs(ms) {
    return ms < 1000 ? Math.round(ms) + " ms" : (ms / 1000).toFixed(ms < 10000 ? 2 : 1) + " s";
  }

  function scrollIntoList(list, item) {
    var li = item.parentNode;
    var top = li.offsetTop; // the list is positioned, so this is relative to it
    if (top < list.scrollTop) list.scrollTop = top;
    else if (top + li.offsetHeight > list.scrollTop + list.clientHeight) {
      list.scrollTop = top + li.offsetHeight - list.clientHeight;
    }
  }

  // ------------------------------------------------------------------------ playing, keys, URL

  Replay.prototype.toggle = function () {
    if (this.timer) this.stop();
    else this.play();
  };

  Replay.prototype.play = function () {
    var self = this;
    if (this.ply >= this.frames.length) this.go(0);
    this.setPlaying(true);
    var step = function () {
      if (self.ply >= self.frames.length) {
        self.stop();
        return;
      }
      self.go(self.ply + 1);
      self.timer = window.setTimeout(step, self.speed);
    };
    this.timer = window.setTimeout(step, this.speed);
  };

  Replay.prototype.stop = function () {
    if (this.timer) window.clearTimeout(this.timer);
    this.timer = null;
    this.setPlaying(false);
  };

  Replay.prototype.setPlaying = function (on) {
    var b = this.buttons.play;
    b.setAttribute("aria-pressed", on ? "true" : "false");
    b.setAttribute("aria-label", on ? "Pause (Space)" : "Play (Space)");
    b.setAttribute("title", on ? "Pause (Space)" : "Play (Space)");
    clear(b);
    b.appendChild(icon(on ? "pause" : "play"));
  };

  Replay.prototype.turnStep = function (delta) {
    var frame = this.ply > 0 ? this.frames[this.ply - 1] : null;
    var k = frame ? frame.turn_index : -1;
    // Inside a turn, Down finishes it; Up goes back to its start (the previous turn's end).
    if (delta > 0 && frame && this.ply < this.turns[k].last) k -= 1;
    k = Math.max(-1, Math.min(this.turns.length - 1, k + delta));
    this.go(k < 0 ? 0 : this.turns[k].last);
  };

  Replay.prototype.onKey = function (e) {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    var tag = e.target && e.target.tagName;
    if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT") return;
    var handled = true;
    switch (e.key) {
      case "ArrowLeft":
        this.stop();
        this.go(this.ply - 1);
        break;
      case "ArrowRight":
        this.stop();
        this.go(this.ply + 1);
        break;
      case "ArrowUp":
        this.stop();
        this.turnStep(-1);
        break;
      case "ArrowDown":
        this.stop();
        this.turnStep(1);
        break;
      case "Home":
        this.stop();
        this.go(0);
        break;
      case "End":
        this.stop();
        this.go(this.frames.length);
        break;
      case " ":
        if (tag === "BUTTON") return; // the button itself answers
        this.toggle();
        break;
      default:
        handled = false;
    }
    if (handled) e.preventDefault();
  };

  function hashParams() {
    return new URLSearchParams(window.location.hash.replace(/^#/, ""));
  }

  Replay.prototype.readHash = function () {
    if (!this.hashKey) return null;
    var v = hashParams().get(this.hashKey);
    if (v === null || !/^\d+$/.test(v)) return null;
    return Math.min(parseInt(v, 10), this.frames.length);
  };

  Replay.prototype.writeHash = function () {
    if (!this.hashKey || !window.history || !window.history.replaceState) return;
    var params = hashParams();
    if (params.get(this.hashKey) === String(this.ply)) return;
    params.set(this.hashKey, String(this.ply));
    window.history.replaceState(null, "", "#" + params.toString());
  };


  // ------------------------------------------------------------------------ live games

  // Asking for the feed is the way without the stream only: slowly.
  var POLL_MS = 5000;
  var HIDDEN_POLL_MS = 10000;
  var RETRY_MS = 10000;
  // Errors of the stream in a row (without an event between them) before it is given up.
  var STREAM_FAILURES = 10;

  Replay.prototype.buildClock = function (side, c) {
    if (!this.clocks) this.clocks = {};
    var box = el("span", { class: "yr-clock", "data-color": c }, side);
    this.clocks[c] = {
      time: el("span", { class: "yr-clock-time", role: "timer", "aria-label": cap(c) + "'s clock" }, box),
      last: el("span", { class: "yr-clock-last" }, box),
    };
  };

  // The clocks as the feed gives them (docs/replay.md, "Watching a game live"); the side to act
  // counts down from there until the next answer.
  Replay.prototype.setClocks = function (clocks) {
    var self = this;
    this.clockData = clocks;
    this.clockAt = Date.now();
    if (!this.clockTimer) {
      this.clockTimer = window.setInterval(function () {
        self.renderClocks();
      }, 200);
    }
    this.renderClocks();
  };

  Replay.prototype.renderClocks = function () {
    var k = this.clockData;
    if (!k || !this.clocks) return;
    var self = this;
    COLOURS.forEach(function (c) {
      var side = k[c] || { ms: 0, last_ms: null };
      var ms = side.ms;
      var running = k.turn === c && typeof k.running_ms === "number";
      if (running) ms -= k.running_ms + (Date.now() - self.clockAt);
      var box = self.clocks[c];
      box.time.textContent = formatClock(ms);
      box.time.parentNode.classList.toggle("yr-clock-running", k.turn === c);
      box.last.textContent =
        typeof side.last_ms === "number" ? "last move " + formatMs(side.last_ms) : "";
    });
  };

  function formatClock(ms) {
    ms = Math.max(0, ms);
    var tenths = Math.floor(ms / 100);
    var s = Math.floor(tenths / 10);
    var m = Math.floor(s / 60);
    var ss = String(s % 60);
    return m + ":" + (ss.length < 2 ? "0" + ss : ss) + (m < 1 ? "." + (tenths % 10) : "");
  }

  // New actions from the feed: the frames after feed.after replace what followed it; a watcher
  // at the last ply follows the game, one looking back stays where they are.
  Replay.prototype.extend = function (feed) {
    if (feed.after === this.frames.length && !(feed.frames || []).length) return;
    var following = this.ply === this.frames.length;
    this.frames = this.frames.slice(0, feed.after).concat(feed.frames || []);
    this.data.frames = this.frames;
    this.turns = deriveTurns(this.frames);
    this.buildMoves();
    this.slider.max = String(this.frames.length);
    this.go(following ? this.frames.length : Math.min(this.ply, this.frames.length), { hash: false });
  };

  Replay.prototype.stopLive = function () {
    if (this.source) this.source.close();
    this.source = null;
    if (this.pollTimer) window.clearTimeout(this.pollTimer);
    if (this.clockTimer) window.clearInterval(this.clockTimer);
    this.pollTimer = this.clockTimer = null;
    this.stop();
  };

  function liveUrl(url, since) {
    return url + (url.indexOf("?") < 0 ? "?" : "&") + "since=" + since;
  }

  // JSON from the site, never from the cache; a POST of ``body`` when given one, with the
  // page's CSRF token. Its data ({} for none), or an Error with the server's detail and status.
  function request(url, csrf, body) {
    var opts = { credentials: "same-origin", cache: "no-store", headers: { Accept: "application/json" } };
    if (body) {
      opts.method = "POST";
      opts.headers["Content-Type"] = "application/json";
      opts.headers["X-CSRFToken"] = csrf;
      opts.body = JSON.stringify(body);
    }
    return fetch(url, opts).then(function (r) {
      if (r.status === 204) return {};
      return r
        .json()
        .catch(function () {
          return {};
        })
        .then(function (data) {
          if (!r.ok) {
            var e = new Error(data.detail || "the request failed (HTTP " + r.status + ")");
            e.status = r.status;
            throw e;
          }
          return data;
        });
    });
  }

  function liveData(feed) {
    var data = {};
    Object.keys(feed.game || {}).forEach(function (k) {
      data[k] = feed.game[k];
    });
    data.frames = feed.frames || [];
    data.result = null;
    data.score = "*";
    data.live = true;
    data.logs = feed.logs || [];
    return data;
  }

  function mountLive(root) {
    var url = root.getAttribute("data-live-url");
    return request(liveUrl(url, 0)).then(function (feed) {
      if (feed.over) {
        becomeReplay(root);
        return null;
      }
      var replay = new Replay(root, liveData(feed));
      replay.liveUrl = url;
      replay.attempt = feed.attempt;
      replay.setClocks(feed.clocks);
      root.setAttribute("data-live-state", "live");
      replay.listen(root.getAttribute("data-live-events"));
      return replay;
    });
  }

  // The stream of the game (docs/replay.md): each event "feed" is what the feed would answer,
  // from the ply this widget has; a reconnecting EventSource resumes from its last event's id.
  Replay.prototype.listen = function (url) {
    var self = this;
    if (!url || !window.EventSource) {
      this.schedulePoll(POLL_MS);
      return;
    }
    var failures = 0;
    var source = new EventSource(url + "?since=" + this.attempt + "." + this.frames.length);
    this.source = source;
    source.addEventListener("open", function () {
      failures = 0;
    });
    source.addEventListener("feed", function (message) {
      failures = 0;
      if (!self.root.isConnected) return self.stopLive();
      var feed = JSON.parse(message.data);
      self.attempt = feed.attempt;
      self.take(feed);
    });
    source.addEventListener("error", function () {
      // The stream ended (its lifetime is bounded: EventSource opens it again by itself) or
      // the server is away; one that keeps failing is given up for the feed, asked slowly.
      if (self.source !== source) return;
      if (source.readyState === EventSource.CLOSED || ++failures > STREAM_FAILURES) {
        source.close();
        self.source = null;
        if (self.root.isConnected) self.schedulePoll(RETRY_MS);
      }
    });
  };

  // What the feed says, from the stream or asked for: the new actions and the clocks, or the
  // end of the game (the page then becomes its replay).
  Replay.prototype.take = function (feed) {
    if (feed.over) {
      this.stopLive();
      becomeReplay(this.root);
      return;
    }
    this.extend(feed);
    this.setClocks(feed.clocks);
    this.root.setAttribute("data-live-ply", String(feed.plies));
  };

  Replay.prototype.schedulePoll = function (ms) {
    var self = this;
    if (this.pollTimer) window.clearTimeout(this.pollTimer);
    if (document.hidden) ms = Math.max(ms, HIDDEN_POLL_MS);
    this.pollTimer = window.setTimeout(function () {
      self.poll();
    }, ms);
  };

  Replay.prototype.poll = function () {
    var self = this;
    var asked = Date.now();
    var since = this.restart ? 0 : this.frames.length;
    this.restart = false;
    request(liveUrl(this.liveUrl, since))
      .then(function (feed) {
        if (!self.root.isConnected) return;
        if (!feed.over && feed.attempt !== self.attempt) {
          // The game was started again: take it from its start.
          self.attempt = feed.attempt;
          if (feed.after > 0) {
            self.restart = true;
            self.schedulePoll(0);
            return;
          }
        }
        self.take(feed);
        if (!feed.over) self.schedulePoll(Math.max(0, POLL_MS - (Date.now() - asked)));
      })
      .catch(function () {
        if (self.root.isConnected) self.schedulePoll(RETRY_MS);
      });
  };

  // The game is over: fetch the page again and put its part around the widget in place of
  // ours (the result, the reason, the downloads and the replay), without a reload.
  function becomeReplay(root) {
    var part = root.closest("[data-live-page]") || root;
    root.setAttribute("data-live-state", "over");
    return fetch(window.location.href, { credentials: "same-origin", cache: "no-store" })
      .then(function (r) {
        if (!r.ok) throw new Error("HTTP " + r.status);
        return r.text();
      })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        var fresh = part.id ? doc.getElementById(part.id) : null;
        if (!fresh || fresh.querySelector("[data-live-url]")) throw new Error("still live");
        var node = document.importNode(fresh, true);
        part.parentNode.replaceChild(node, part);
        if (doc.title) document.title = doc.title;
        return init(node);
      })
      .catch(function () {
        window.location.reload();
      });
  }

  // ------------------------------------------------------------------------ start-up

  function load(root) {
    var inline = root.querySelector('script[type="application/json"]');
    if (inline) {
      return Promise.resolve().then(function () {
        return JSON.parse(inline.textContent);
      });
    }
    var url = root.getAttribute("data-replay-url");
    if (!url) return Promise.reject(new Error("no data-replay-url and no inline data"));
    return fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } }).then(
      function (r) {
        if (!r.ok) throw new Error("HTTP " + r.status);
        return r.json();
      }
    );
  }

  function mount(root) {
    if (root.getAttribute("data-replay-state")) return Promise.resolve(root.yinshReplay);
    root.setAttribute("data-replay-state", "loading");
    root.setAttribute("aria-busy", "true");
    var live = root.hasAttribute("data-live-url");
    return (live ? mountLive(root) : load(root).then(function (data) {
      return new Replay(root, data);
    }))
      .then(function (replay) {
        root.yinshReplay = replay;
        root.setAttribute("data-replay-state", "ready");
        root.removeAttribute("aria-busy");
        root.dispatchEvent(new CustomEvent("yinsh-replay-ready", { detail: { replay: replay } }));
        return root.yinshReplay;
      })
      .catch(function (err) {
        root.setAttribute("data-replay-state", "error");
        root.removeAttribute("aria-busy");
        clear(root);
        el("p", { class: "yr-error", role: "alert", text: "The replay could not be loaded: " + err.message }, root);
      });
  }

  function init(scope) {
    var nodes = (scope || document).querySelectorAll(".yinsh-replay");
    return Promise.all(Array.prototype.map.call(nodes, mount));
  }

  window.YinshReplay = {
    init: init,
    mount: mount,
    // For the scripts that build on the widget (analysis.js, play.js), loaded after it.
    kit: { el: el, svg: svg, clear: clear, cap: cap, request: request },
  };
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", function () {
      init();
    });
  } else {
    init();
  }
})();
