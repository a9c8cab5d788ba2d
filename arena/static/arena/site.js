// The site's own behaviour, kept out of the pages so that the Content-Security-Policy can
// forbid inline scripts.
"use strict";

// A form with data-confirm asks before it is sent; a form with data-drop-empty sends only
// the fields that say something (no "?bot=&variant=&..." in the address).
document.addEventListener("submit", function (event) {
  var form = event.target;
  if (!(form instanceof HTMLFormElement)) return;
  var question = form.getAttribute("data-confirm");
  if (question && !window.confirm(question)) {
    event.preventDefault();
    return;
  }
  if (form.hasAttribute("data-drop-empty")) {
    Array.prototype.forEach.call(form.elements, function (field) {
      if (field.name && field.value === "" && !field.disabled) {
        field.disabled = true;
        // Back in the history the page comes back with its fields usable.
        window.addEventListener("pageshow", function () { field.disabled = false; }, {once: true});
      }
    });
  }
});

// What scrolls sideways inside the page (a wide table, a long line of code) says so: it can
// be reached and scrolled with the keyboard, is named for a screen reader ("Table: rank, bot,
// ..., scrolls sideways") and shows a shadow at the edge that hides more (.scrolls, site.css).
function nameOf(element) {
  var named = element.getAttribute("data-scroll-name");
  if (named) return named + ", scrolls sideways";
  var table = element.matches("table") ? element : element.querySelector("table");
  if (!table) return "Code, scrolls sideways";
  var caption = table.querySelector("caption");
  var heads = Array.prototype.map.call(table.querySelectorAll("thead th"), function (th) {
    return th.textContent.trim();
  }).filter(Boolean).slice(0, 4);
  var what = caption ? caption.textContent.trim() : "Table" + (heads.length ? ": " + heads.join(", ") : "");
  return what + ", scrolls sideways";
}

function markScrolling() {
  var names = {};
  var found = document.querySelectorAll("main .scroll, main table, main pre");
  Array.prototype.forEach.call(found, function (element) {
    var scrolls = element.scrollWidth > element.clientWidth + 1 &&
      getComputedStyle(element).overflowX !== "visible";
    var marked = element.hasAttribute("data-scroll-marked");
    if (scrolls && !marked) {
      element.setAttribute("data-scroll-marked", "");
      element.classList.add("scrolls");
      if (!element.hasAttribute("tabindex")) element.setAttribute("tabindex", "0");
      if (!element.matches("table")) element.setAttribute("role", "region");
      if (!element.hasAttribute("aria-label")) {
        var name = nameOf(element);
        names[name] = (names[name] || 0) + 1;  // two tables alike are told apart by number
        if (names[name] > 1) name += " (" + names[name] + ")";
        element.setAttribute("aria-label", name);
      }
    } else if (!scrolls && marked) {
      element.removeAttribute("data-scroll-marked");
      element.classList.remove("scrolls");
      element.removeAttribute("tabindex");
      element.removeAttribute("aria-label");
      if (!element.matches("table")) element.removeAttribute("role");
    }
  });
}

markScrolling();
window.addEventListener("load", markScrolling);  // once the styles and fonts are in
window.addEventListener("resize", markScrolling);

// A form with data-modes (the name of its radio buttons or select choosing a mode) shows only
// the fieldset of the chosen mode (fieldset data-mode="..."): the others are hidden and
// disabled, so their fields are neither required nor sent. Without this script every field
// shows, and the server ignores the fields of the modes not chosen.
function showChosenMode(form) {
  var name = form.getAttribute("data-modes");
  var chosen = form.querySelector('input[name="' + name + '"]:checked, select[name="' + name + '"]');
  form.querySelectorAll("fieldset[data-mode]").forEach(function (set) {
    var off = chosen !== null && set.getAttribute("data-mode") !== chosen.value;
    set.hidden = off;
    set.disabled = off;
  });
}
document.querySelectorAll("form[data-modes]").forEach(showChosenMode);
document.addEventListener("change", function (event) {
  var form = event.target.form;
  if (form && event.target.name === form.getAttribute("data-modes")) showChosenMode(form);
});

// A part of a page that follows something under way (an element with data-events, the address
// of its stream: <main> of a tournament's page, a trial's, a bot's being checked; a duel's
// figures) is told by the server when that thing changed (an event "changed", arena.web.events)
// and fetches itself again (data-fetch, else the page's own address): the part is put in place
// of the old one, without reloading the page, keeping the reader's focus, selection and scroll.
// Not while a field has the focus or something is selected: then once that ends. When the
// fresh part no longer has data-events, the thing is over: the stream is closed, and what only
// a running thing offers (data-while-running) goes. Without EventSource, or when the stream
// keeps failing, the part fetches itself every 30 seconds instead.
function followChanges(part) {
  var stream = null;
  var failures = 0;
  var pending = false;
  var fetching = false;
  var slowTimer = null;

  function pathOf(node) {
    var path = [];
    while (node && node !== part) {
      var parent = node.parentElement;
      if (!parent) return null;
      path.unshift(Array.prototype.indexOf.call(parent.children, node));
      node = parent;
    }
    return node === part ? path : null;
  }

  function nodeAt(path) {
    var node = part;
    for (var i = 0; node && i < path.length; i++) node = node.children[path[i]];
    return node;
  }

  function busy() {
    var active = document.activeElement;
    var editing = active && part.contains(active) && active.matches("input, select, textarea");
    var selected = window.getSelection && String(window.getSelection()) !== "";
    return editing || selected;
  }

  function replace(html) {
    var fresh = new DOMParser().parseFromString(html, "text/html").getElementById(part.id);
    if (!fresh) return;
    var focused = part.contains(document.activeElement) ? pathOf(document.activeElement) : null;
    var x = window.scrollX, y = window.scrollY;
    var messages = part.querySelector(":scope > ul.messages");
    part.replaceChildren.apply(part, Array.prototype.map.call(fresh.childNodes, function (node) {
      return document.importNode(node, true);
    }));
    if (messages && !part.querySelector(":scope > ul.messages")) part.prepend(messages);
    ["data-status", "data-events"].forEach(function (name) {
      if (fresh.hasAttribute(name)) part.setAttribute(name, fresh.getAttribute(name));
      else part.removeAttribute(name);
    });
    if (focused) {
      var again = nodeAt(focused);
      if (again && typeof again.focus === "function") again.focus({preventScroll: true});
    }
    window.scrollTo(x, y);
    markScrolling();
    if (window.YinshReplay) window.YinshReplay.init(part);
    if (!part.hasAttribute("data-events")) {
      stop();
      document.querySelectorAll("[data-while-running]").forEach(function (el) { el.remove(); });
    }
  }

  function refresh() {
    if (busy()) {
      pending = true;
      return;
    }
    if (fetching) {
      pending = true;
      return;
    }
    pending = false;
    fetching = true;
    var url = part.getAttribute("data-fetch") || window.location.href;
    fetch(url, {credentials: "same-origin", cache: "no-store"})
      .then(function (response) {
        return response.ok ? response.text() : Promise.reject(response.status);
      })
      .then(function (html) {
        fetching = false;
        replace(html);
        // A change told while this answer was on its way: fetch again at once.
        if (pending && part.hasAttribute("data-events")) refresh();
      })
      .catch(function () {
        // The server is busy or away: ask again a little later.
        fetching = false;
        pending = true;
        window.setTimeout(refresh, 2000);
      });
  }

  function stop() {
    if (stream) stream.close();
    if (slowTimer) window.clearInterval(slowTimer);
    stream = slowTimer = null;
  }

  function slowly() {
    stop();
    slowTimer = window.setInterval(function () {
      if (!part.hasAttribute("data-events")) stop();
      else refresh();
    }, 30000);
  }

  document.addEventListener("focusout", function () { if (pending) window.setTimeout(refresh, 0); });
  document.addEventListener("selectionchange", function () {
    if (pending && !busy()) refresh();
  });

  if (!window.EventSource) {
    slowly();
    return;
  }
  stream = new EventSource(part.getAttribute("data-events"));
  stream.addEventListener("open", function () { failures = 0; });
  stream.addEventListener("changed", function () {
    failures = 0;
    refresh();
  });
  stream.addEventListener("error", function () {
    // The stream ended (its lifetime is bounded: the browser opens it again by itself) or the
    // server is away; a stream that keeps failing is given up for the slow way.
    if (stream && stream.readyState === EventSource.CLOSED) slowly();
    else if (++failures > 10) slowly();
  });
}
document.querySelectorAll("[data-events]").forEach(followChanges);
