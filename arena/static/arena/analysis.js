/*
 * The analysis board: ask bots for their action in the position a replay widget (board.js) shows.
 *
 * Every element
 *
 *     <section data-analysis data-analysis-url="/api/analysis/" data-bots-url="/api/analysis/bots/"
 *              data-csrf="..." hidden>...</section>
 *
 * placed after a replay widget (.yinsh-replay) becomes, once the widget is ready, a choice of the
 * bots that answer in the game's variant (GET data-bots-url), an "Analyse" button that asks them
 * for their action at the ply shown (POST data-analysis-url with the variant and the history of
 * actions), and the list of their answers: each bot's action in the notation, how long it thought
 * and its info, or why it gave none. The answers are drawn on the board too, one colour per bot,
 * while the ply they were asked at is shown. The page polls GET data-analysis-url?ids=... every
 * half second until every answer is in (the few seconds a bot takes): a small, self-contained
 * loop that a server push may replace later.
 *
 * The server decides who may ask: the page includes this element for logged-in users only.
 */
(function () {
  "use strict";

  var kit = window.YinshReplay.kit;
  var el = kit.el, svg = kit.svg, request = kit.request;
  var POLL_MS = 500;
  //: Polling stops after this long (the server ends an unanswered request before).
  var POLL_LIMIT_MS = 90000;
  var SLOTS = 4;

  function Board(section, widget, replay) {
    this.section = section;
    this.widget = widget;
    this.replay = replay;
    this.url = section.getAttribute("data-analysis-url");
    this.csrf = section.getAttribute("data-csrf");
    this.asked = null; // { ply, answers: [...] }
    this.timer = null;
    this.build();
  }

  Board.prototype.build = function () {
    var self = this;
    var s = this.section;
    var form = el("form", { class: "analysis-form" }, s);
    this.fieldset = el("fieldset", { class: "analysis-bots" }, form);
    el("legend", { text: "Bots to ask" }, this.fieldset);
    this.button = el("button", { type: "submit", class: "analysis-ask", text: "Analyse" }, form);
    this.where = el("span", { class: "note analysis-where" }, form);
    this.status = el("p", { class: "analysis-status", role: "status", "aria-live": "polite" }, s);
    this.list = el("ol", { class: "analysis-answers", "aria-label": "Answers" }, s);
    form.addEventListener("submit", function (e) {
      e.preventDefault();
      self.ask();
    });
    this.widget.addEventListener("yinsh-replay-ply", function () {
      self.showPly();
      self.draw();
    });
    var variant = this.replay.data.variant || "yinsh";
    var botsUrl = s.getAttribute("data-bots-url") + "?variant=" + encodeURIComponent(variant);
    request(botsUrl)
      .then(function (data) {
        self.max = data.max_bots || SLOTS;
        if (!data.bots.length) {
          el("p", { class: "note", text: "No bot answers in this variant yet." }, self.fieldset);
          self.button.disabled = true;
        }
        data.bots.forEach(function (b, k) {
          var id = "analysis-bot-" + b.name;
          var label = el("label", { for: id, class: "analysis-bot" }, self.fieldset);
          el(
            "input",
            { type: "checkbox", id: id, name: "bots", value: b.name, checked: k === 0 ? "" : null },
            label
          );
          label.appendChild(document.createTextNode(" " + b.version + (b.builtin ? " (built-in)" : "")));
        });
        self.showPly();
      })
      .catch(function (err) {
        self.say("The bots could not be listed: " + err.message, true);
        self.button.disabled = true;
      });
    s.hidden = false;
  };

  Board.prototype.history = function (ply) {
    return this.replay.frames.slice(0, ply).map(function (f) {
      return f.action;
    });
  };

  Board.prototype.showPly = function () {
    var ply = this.replay.ply;
    this.where.textContent = ply === 0 ? "at the start" : "after ply " + ply;
  };

  Board.prototype.say = function (text, error) {
    this.status.textContent = text;
    this.status.classList.toggle("error", !!error);
  };

  Board.prototype.ask = function () {
    var self = this;
    var bots = Array.prototype.filter
      .call(this.fieldset.querySelectorAll("input[name=bots]"), function (i) {
        return i.checked;
      })
      .map(function (i) {
        return i.value;
      });
    if (!bots.length) {
      this.say("Choose at least one bot to ask.", true);
      return;
    }
    if (bots.length > this.max) {
      this.say("Ask at most " + this.max + " bots at once.", true);
      return;
    }
    var ply = this.replay.ply;
    var body = { variant: this.replay.data.variant, history: this.history(ply), bots: bots };
    this.stop();
    this.button.disabled = true;
    this.say("Asking " + bots.join(", ") + "…");
    request(this.url, this.csrf, body)
      .then(function (data) {
        self.asked = { ply: ply, answers: data.answers, since: Date.now() };
        self.render();
        self.poll();
      })
      .catch(function (err) {
        self.button.disabled = false;
        self.say(err.message, true);
      });
  };

  Board.prototype.stop = function () {
    if (this.timer) window.clearTimeout(this.timer);
    this.timer = null;
  };

  Board.prototype.poll = function () {
    var self = this;
    var asked = this.asked;
    var waiting = asked.answers.filter(function (a) {
      return !a.done;
    });
    if (!waiting.length) {
      this.button.disabled = false;
      this.say("Every bot asked has answered.");
      return;
    }
    if (Date.now() - asked.since > POLL_LIMIT_MS) {
      this.button.disabled = false;
      this.say("No answer yet: reload the page later, or ask again.", true);
      return;
    }
    this.timer = window.setTimeout(function () {
      var ids = waiting.map(function (a) {
        return a.id;
      });
      request(self.url + "?ids=" + ids.join(","))
        .then(function (data) {
          if (self.asked !== asked) return;
          data.answers.forEach(function (fresh) {
            asked.answers.forEach(function (a, k) {
              if (a.id === fresh.id) asked.answers[k] = fresh;
            });
          });
          self.render();
          self.poll();
        })
        .catch(function (err) {
          self.button.disabled = false;
          self.say("The answers could not be read: " + err.message, true);
        });
    }, POLL_MS);
  };

  Board.prototype.render = function () {
    var list = this.list;
    while (list.firstChild) list.removeChild(list.firstChild);
    var asked = this.asked;
    var where = asked.ply === 0 ? "at the start" : "after ply " + asked.ply;
    list.setAttribute("aria-label", "Answers " + where);
    asked.answers.forEach(function (a, k) {
      var item = el("li", { class: "analysis-answer analysis-slot-" + (k % SLOTS), "data-bot": a.bot }, list);
      el("span", { class: "analysis-swatch", "aria-hidden": "true" }, item);
      el("strong", { text: a.version }, item);
      item.appendChild(document.createTextNode(" "));
      if (a.action) {
        el("code", { class: "analysis-action", text: a.action }, item);
        if (a.think_ms !== null && a.think_ms !== undefined) {
          el("span", { class: "note", text: " (" + Math.round(a.think_ms) + " ms)" }, item);
        }
        if (a.reason) el("span", { class: "note", text: " " + a.reason }, item);
        if (a.info_text) el("div", { class: "analysis-info", text: "info: " + a.info_text }, item);
      } else if (a.done) {
        el("span", { class: "analysis-failure", text: a.status_text + ": " + a.reason }, item);
      } else {
        el("span", { class: "note", text: a.status_text + "…" }, item);
      }
    });
    this.draw();
  };

  // Each answer on the board, in its bot's colour: an arrow for a ring's move or a row taken
  // off, a circle for a placement or a ring taken off. Shown only at the ply it was asked at.
  Board.prototype.draw = function () {
    var board = this.widget.querySelector("svg.yr-board");
    if (!board) return;
    var layer = board.querySelector("g.analysis-layer");
    if (!layer) layer = svg("g", { class: "analysis-layer" }, board);
    while (layer.firstChild) layer.removeChild(layer.firstChild);
    var asked = this.asked;
    if (!asked || asked.ply !== this.replay.ply) return;
    var where = this.replay.where;
    asked.answers.forEach(function (a, k) {
      if (!a.action) return;
      var points = (a.action.match(/[a-z]+\d+/g) || []).map(function (name) {
        return where[name];
      });
      if (!points.length || points.indexOf(undefined) >= 0) return;
      var g = svg("g", { class: "analysis-mark analysis-slot-" + (k % SLOTS), "data-action": a.action }, layer);
      var from = points[0];
      var to = points[points.length - 1];
      svg("circle", { cx: to.x, cy: to.y, r: 0.44 - 0.05 * (k % SLOTS) }, g);
      if (points.length > 1) {
        svg("line", { x1: from.x, y1: from.y, x2: to.x, y2: to.y }, g);
        svg("circle", { class: "analysis-from", cx: from.x, cy: from.y, r: 0.12 }, g);
      }
    });
  };

  function widgetBefore(section) {
    for (var node = section.previousElementSibling; node; node = node.previousElementSibling) {
      if (node.classList.contains("yinsh-replay")) return node;
    }
    return null;
  }

  function start(section) {
    var widget = widgetBefore(section);
    if (!widget || widget.hasAttribute("data-live-url")) return;
    var go = function () {
      if (!section.analysisBoard && widget.yinshReplay) {
        section.analysisBoard = new Board(section, widget, widget.yinshReplay);
      }
    };
    widget.addEventListener("yinsh-replay-ready", go);
    go();
  }

  function init() {
    Array.prototype.forEach.call(document.querySelectorAll("[data-analysis]"), start);
  }

  // A widget put in the page later (a pushed part of the page replaced, as when a trial's game
  // ends while its page is open) says it is ready too: the capture phase hears it here, and its
  // analysis board is started then.
  document.addEventListener(
    "yinsh-replay-ready",
    function (e) {
      Array.prototype.forEach.call(document.querySelectorAll("[data-analysis]"), function (section) {
        if (widgetBefore(section) === e.target) start(section);
      });
    },
    true
  );

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
