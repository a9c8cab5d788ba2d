/*
 * Playing a remote side by hand on its match page: the browser is the bot's client.
 *
 * The page holds, beside the live board (board.js), for the viewer who may play a side only:
 *
 *     <section data-play data-match="12" data-color="white" data-opponent="random v1"
 *              data-player="ada" data-events-url="/api/remote/far/events/"
 *              data-answer-url="/api/remote/far/games/GAME/answer/" data-csrf="...">
 *
 * It speaks the remote bots' API (docs/protocol.md, "Remote bots"): it long-polls the events,
 * takes the open game of this match and colour, answers its hello by itself (ready, named after
 * the viewer), and on each request lets the person choose one of its actions, on the board (a
 * point to place a ring on; a ring, then where it goes; a marker of the row to remove; a ring
 * to remove) or from the list of the legal actions with the Play button (the keyboard's way).
 * Resign answers the waiting request with {"type": "resign"}. When the game ends, board.js puts
 * the finished game's page in place of this one, panel included.
 */
(function () {
  "use strict";

  var kit = window.YinshReplay.kit;
  var el = kit.el, svg = kit.svg, clear = kit.clear, cap = kit.cap, request = kit.request;
  // The long poll: the server answers at once when a line waits, else after this (or its cap).
  var WAIT_S = 20;
  var RETRY_MS = 3000;
  var TARGET_R = 0.42;
  var PHASES = {
    place: "place a ring",
    move: "move a ring",
    "remove-row": "remove a row",
    "remove-ring": "remove a ring",
  };
  var counter = 0;

  // ------------------------------------------------------------------------ actions

  // What an action token does: "e5" places, "a2-h9" moves, "xc2-c6" removes a row, "xa5" a ring.
  function kindOf(token) {
    if (token.charAt(0) === "x") return token.indexOf("-") < 0 ? "ring" : "row";
    return token.indexOf("-") < 0 ? "place" : "move";
  }

  function ends(token) {
    return token.replace(/^x/, "").split("-");
  }

  function describe(token) {
    var p = ends(token);
    switch (kindOf(token)) {
      case "place":
        return token + ": place a ring";
      case "move":
        return token + ": move the ring on " + p[0] + " to " + p[1];
      case "row":
        return token + ": remove the row " + p[0] + " to " + p[1];
      default:
        return token + ": remove the ring on " + p[0];
    }
  }

  function formatClock(ms) {
    ms = Math.max(0, ms);
    var tenths = Math.floor(ms / 100);
    var s = Math.floor(tenths / 10);
    var m = Math.floor(s / 60);
    var ss = String(s % 60);
    return m + ":" + (ss.length < 2 ? "0" + ss : ss) + (m < 1 ? "." + (tenths % 10) : "");
  }

  // ------------------------------------------------------------------------ the panel

  function Play(section) {
    this.section = section;
    this.match = parseInt(section.getAttribute("data-match"), 10);
    this.color = section.getAttribute("data-color");
    this.opponent = section.getAttribute("data-opponent");
    this.player = section.getAttribute("data-player");
    this.eventsUrl = section.getAttribute("data-events-url");
    this.answerUrl = section.getAttribute("data-answer-url");
    this.csrf = section.getAttribute("data-csrf");
    this.id = "play" + ++counter;
    this.cursor = 0;
    this.seen = false; // the game was open once
    this.request = null; // { seq, game, message, at }
    this.answered = 0; // the newest seq answered
    this.sending = null; // the seq whose answer is on its way
    this.ended = null; // the end line's reason
    this.selected = null; // the ring picked to move
    this.resigning = false;
    this.replay = null;
    this.build();
    this.findBoard();
    this.render();
    this.poll();
  }

  Play.prototype.build = function () {
    var self = this;
    var s = this.section;
    var nojs = s.querySelector(".play-nojs");
    if (nojs) nojs.parentNode.removeChild(nojs);
    this.status = el("p", { class: "play-status", role: "status" }, s);
    this.clock = el("p", { class: "play-clock", hidden: "" }, s);
    this.error = el("p", { class: "play-error", role: "alert" }, s);
    this.rows = el("div", { class: "play-rows", hidden: "" }, s);
    var form = el("form", { class: "play-form" }, s);
    el("label", { for: this.id + "-action", text: "Your action" }, form);
    this.select = el("select", { id: this.id + "-action", name: "action" }, form);
    this.button = el("button", { type: "submit", class: "play-submit", text: "Play" }, form);
    this.resign = el("button", { type: "button", class: "play-resign", text: "Resign" }, form);
    form.addEventListener("submit", function (e) {
      e.preventDefault();
      if (!self.request) return self.say("It is not your move yet.");
      if (self.select.value) self.play(self.select.value);
    });
    this.resign.addEventListener("click", function () {
      self.askResign();
    });
  };

  // The live board of the page, once board.js built it: the targets are drawn on it.
  Play.prototype.findBoard = function () {
    var self = this;
    var part = this.section.closest("[data-live-page]") || document;
    var widget = part.querySelector(".yinsh-live");
    if (!widget) return;
    if (widget.yinshReplay) this.useBoard(widget.yinshReplay);
    else {
      widget.addEventListener("yinsh-replay-ready", function (e) {
        self.useBoard(e.detail.replay);
      });
    }
  };

  Play.prototype.useBoard = function (replay) {
    var self = this;
    var board = replay && replay.root.querySelector("svg.yr-board");
    if (!board) return;
    this.replay = replay;
    this.layer = svg("g", { class: "play-layer" }, board);
    this.layer.addEventListener("click", function (e) {
      var target = e.target.closest("[data-point]");
      if (target) self.pick(target.getAttribute("data-point"));
    });
    replay.root.addEventListener("yinsh-replay-ply", function () {
      self.showLayer();
    });
    this.draw();
  };

  // ------------------------------------------------------------------------ the events

  Play.prototype.poll = function () {
    var self = this;
    if (!this.section.isConnected) return; // the finished game's page replaced this one
    var url = this.eventsUrl + "?since=" + this.cursor + "&wait=" + WAIT_S;
    request(url)
      .then(function (data) {
        self.cursor = Math.max(self.cursor, data.cursor || 0);
        self.take(data.games || []);
        self.poll();
      })
      .catch(function (err) {
        if (err.status >= 400 && err.status < 500) {
          self.say("The arena refused to give this game's moves: " + err.message);
          return;
        }
        window.setTimeout(function () {
          self.poll();
        }, RETRY_MS);
      });
  };

  // The bot's open games: ours is this match's, of our colour (a new claim of the match makes a
  // new game, which starts with hello again).
  Play.prototype.take = function (games) {
    var self = this;
    var game = null;
    games.forEach(function (g) {
      if (g.match === self.match && g.color === self.color) game = g;
    });
    if (!game) {
      if (this.seen && !this.ended) this.ended = "";
      this.request = null;
      return this.render();
    }
    this.seen = true;
    this.ended = null;
    if (game.seq === null || game.seq <= this.answered || game.seq === this.sending) {
      if (this.request && this.request.seq !== this.sending) this.request = null;
      return this.render();
    }
    if (this.request && this.request.seq === game.seq) return; // still the one shown
    var message;
    try {
      message = JSON.parse(game.line);
    } catch (e) {
      message = {};
    }
    if (message.type === "hello") {
      this.request = null;
      this.send(game.game, game.seq, { type: "ready", name: this.player });
    } else if (message.type === "request") {
      this.request = { seq: game.seq, game: game.game, message: message, at: Date.now() };
      this.selected = null;
      this.hideRows();
      if (this.resigning) return this.send(game.game, game.seq, { type: "resign" });
      if (this.replay && this.replay.ply < this.replay.frames.length) {
        this.replay.go(this.replay.frames.length);
      }
    } else if (message.type === "end") {
      this.request = null;
      this.ended = message.reason || "";
    }
    this.render();
  };

  // Answer the line seq of the game: the action chosen, ready, or resign.
  Play.prototype.send = function (game, seq, message) {
    var self = this;
    var url = this.answerUrl;
    var at = url.lastIndexOf("GAME");
    url = url.slice(0, at) + game + url.slice(at + 4);
    this.sending = seq;
    this.selected = null;
    this.hideRows();
    this.render();
    return request(url, this.csrf, { seq: seq, line: JSON.stringify(message) })
      .then(function () {
        self.error.textContent = "";
      })
      .catch(function (err) {
        self.say(
          (message.type === "action" ? "Your move " + message.action : "Your answer") +
            " was refused: " + err.message
        );
        return err;
      })
      .then(function (err) {
        if (self.sending === seq) self.sending = null;
        if (!err || err.status === 409) self.answered = Math.max(self.answered, seq);
        if (self.request && self.request.seq <= self.answered) self.request = null;
        self.render();
      });
  };

  Play.prototype.play = function (token) {
    var r = this.request;
    if (!r || this.sending !== null || r.message.actions.indexOf(token) < 0) return;
    this.send(r.game, r.seq, { type: "action", action: token });
  };

  Play.prototype.askResign = function () {
    if (this.resigning || this.ended !== null) return;
    if (!window.confirm("Resign this game? " + this.opponent + " wins it.")) return;
    this.resigning = true;
    var r = this.request;
    if (r && this.sending === null) this.send(r.game, r.seq, { type: "resign" });
    else this.render();
  };

  Play.prototype.say = function (text) {
    this.error.textContent = text;
  };

  // ------------------------------------------------------------------------ what it shows

  Play.prototype.render = function () {
    var self = this;
    var r = this.request;
    var text;
    if (this.ended !== null) {
      text = "The game is over" + (this.ended ? ": " + this.ended : ".");
    } else if (this.sending !== null) {
      text = this.resigning ? "Resigning…" : "Sending your answer…";
    } else if (r) {
      text = "Your move: " + (PHASES[r.message.position && r.message.position.next] || "act");
    } else if (!this.seen) {
      text = "Waiting for the game to start.";
    } else {
      text = "Waiting for " + this.opponent + ".";
    }
    if (this.resigning && this.ended === null && this.sending === null && !r) {
      text += " You resign when your turn comes.";
    }
    if (this.status.textContent !== text) this.status.textContent = text;
    var mine = !!r && this.sending === null;
    this.section.classList.toggle("play-mine", mine);
    this.button.setAttribute("aria-disabled", mine ? "false" : "true");
    this.resign.disabled = this.resigning || this.ended !== null;
    if (this.select.getAttribute("data-seq") !== (mine ? String(r.seq) : "")) this.fillChoices(mine);
    this.clock.hidden = !mine;
    if (mine && !this.clockTimer) {
      this.clockTimer = window.setInterval(function () {
        self.tick();
      }, 200);
    } else if (!mine && this.clockTimer) {
      window.clearInterval(this.clockTimer);
      this.clockTimer = null;
    }
    this.tick();
    this.draw();
  };

  // The list of the legal actions (the keyboard's way to play), or none but a note.
  Play.prototype.fillChoices = function (mine) {
    var r = this.request;
    var select = this.select;
    clear(select);
    select.setAttribute("data-seq", mine ? String(r.seq) : "");
    if (!mine) {
      el("option", { value: "", text: "Not your move", disabled: "", selected: "" }, select);
      return;
    }
    r.message.actions.forEach(function (token) {
      el("option", { value: token, text: describe(token) }, select);
    });
  };

  Play.prototype.tick = function () {
    var r = this.request;
    if (!this.section.isConnected && this.clockTimer) {
      window.clearInterval(this.clockTimer); // the finished game's page replaced this one
      this.clockTimer = null;
    }
    if (!r) return;
    var clock = r.message.clock || {};
    var left = (clock.you_ms || 0) - (Date.now() - r.at);
    this.clock.textContent = "Your clock: " + formatClock(left);
  };

  // The points the person may click now, on the board.
  Play.prototype.targets = function () {
    var r = this.request;
    if (!r || this.sending !== null) return [];
    var out = [];
    var selected = this.selected;
    var seen = {};
    var self = this;
    r.message.actions.forEach(function (token) {
      var p = ends(token);
      switch (kindOf(token)) {
        case "place":
          out.push({ point: token, cls: "play-place", label: "Place a ring on " + token });
          break;
        case "ring":
          out.push({ point: p[0], cls: "play-ring", label: "Remove the ring on " + p[0] });
          break;
        case "move":
          if (!seen[p[0]]) {
            seen[p[0]] = true;
            var picked = p[0] === selected;
            out.push({
              point: p[0],
              cls: picked ? "play-from play-selected" : "play-from",
              label: (picked ? "Put back the ring on " : "Move the ring on ") + p[0],
            });
          }
          if (p[0] === selected) {
            out.push({ point: p[1], cls: "play-to", label: "Move it to " + p[1] });
          }
          break;
        default:
          self.rowPoints(token).forEach(function (q) {
            if (seen[q]) return;
            seen[q] = true;
            out.push({ point: q, cls: "play-row", label: "Remove a row with the marker on " + q });
          });
      }
    });
    return out;
  };

  // The points of the row a removal token names, from the board's coordinates: those on the
  // segment between its ends (board.js draws every point where the data places it).
  Play.prototype.rowPoints = function (token) {
    var where = this.replay ? this.replay.where : {};
    var p = ends(token);
    var a = where[p[0]];
    var b = where[p[1]];
    if (!a || !b) return [];
    var dx = b.x - a.x;
    var dy = b.y - a.y;
    var len2 = dx * dx + dy * dy;
    var out = [];
    Object.keys(where).forEach(function (name) {
      var q = where[name];
      var cross = dx * (q.y - a.y) - dy * (q.x - a.x);
      var dot = dx * (q.x - a.x) + dy * (q.y - a.y);
      if (Math.abs(cross) <= 1e-3 * len2 && dot >= -1e-6 && dot <= len2 + 1e-6) out.push(name);
    });
    return out;
  };

  Play.prototype.draw = function () {
    if (!this.layer) return;
    var self = this;
    var where = this.replay.where;
    clear(this.layer);
    this.targets().forEach(function (t) {
      var q = where[t.point];
      if (!q) return;
      var c = svg(
        "circle",
        { class: "play-target " + t.cls, cx: q.x, cy: q.y, r: TARGET_R, "data-point": t.point },
        self.layer
      );
      svg("title", { text: t.label }, c);
    });
    this.showLayer();
  };

  // The targets are for the position being played: hidden while the board shows an earlier one.
  Play.prototype.showLayer = function () {
    if (!this.layer) return;
    var back = this.replay.ply < this.replay.frames.length;
    this.layer.classList.toggle("play-hidden", back);
  };

  // A point clicked (or tapped) on the board.
  Play.prototype.pick = function (point) {
    var r = this.request;
    if (!r || this.sending !== null) return;
    var actions = r.message.actions;
    var self = this;
    if (actions.indexOf(point) >= 0) return this.play(point); // a placement
    if (actions.indexOf("x" + point) >= 0) return this.play("x" + point); // a ring removed
    var moves = actions.filter(function (t) {
      return kindOf(t) === "move";
    });
    if (moves.length) {
      if (this.selected && actions.indexOf(this.selected + "-" + point) >= 0) {
        return this.play(this.selected + "-" + point);
      }
      var from = moves.some(function (t) {
        return ends(t)[0] === point;
      });
      this.selected = from && this.selected !== point ? point : null;
      return this.draw();
    }
    var rows = actions.filter(function (t) {
      return kindOf(t) === "row" && self.rowPoints(t).indexOf(point) >= 0;
    });
    if (rows.length === 1) return this.play(rows[0]);
    if (rows.length > 1) this.offerRows(point, rows);
  };

  // A marker in several rows that may go: the person says which.
  Play.prototype.offerRows = function (point, rows) {
    var self = this;
    clear(this.rows);
    el("p", { text: "The marker on " + point + " is in " + rows.length + " rows: which goes?" }, this.rows);
    rows.forEach(function (token) {
      var p = ends(token);
      var b = el("button", { type: "button", class: "play-row-choice", text: "Remove " + p[0] + " to " + p[1] }, self.rows);
      b.addEventListener("click", function () {
        self.play(token);
      });
    });
    this.rows.hidden = false;
    this.rows.querySelector("button").focus();
  };

  Play.prototype.hideRows = function () {
    clear(this.rows);
    this.rows.hidden = true;
  };

  function init() {
    Array.prototype.forEach.call(document.querySelectorAll("[data-play]"), function (section) {
      if (!section.playPanel) section.playPanel = new Play(section);
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
