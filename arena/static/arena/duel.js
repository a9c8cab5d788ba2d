// A running test's or challenge's page: every few seconds, fetch the changing part of the page
// (its figures, pair counts and games: the element #duel-live, served alone at its data-live
// address) and put it in place of the old one, keeping the reader's focus and scroll position.
// Polling stops once the duel is over. Without this script the page reloads itself instead.
"use strict";
(function () {
  var live = document.getElementById("duel-live");
  if (!live || live.getAttribute("data-status") !== "running") return;
  var every = 1000 * (Number(live.getAttribute("data-every")) || 5);

  // Where the focus is inside the live part, as a path of child indexes from it.
  function pathOf(node) {
    var path = [];
    while (node && node !== live) {
      var parent = node.parentElement;
      if (!parent) return null;
      path.unshift(Array.prototype.indexOf.call(parent.children, node));
      node = parent;
    }
    return node === live ? path : null;
  }

  function nodeAt(path) {
    var node = live;
    for (var i = 0; node && i < path.length; i++) node = node.children[path[i]];
    return node;
  }

  function replace(html) {
    var fresh = new DOMParser().parseFromString(html, "text/html").getElementById("duel-live");
    if (!fresh) return false;
    var focused = live.contains(document.activeElement) ? pathOf(document.activeElement) : null;
    var x = window.scrollX, y = window.scrollY;
    live.replaceChildren.apply(live, Array.prototype.slice.call(fresh.childNodes));
    live.setAttribute("data-status", fresh.getAttribute("data-status") || "");
    if (live.getAttribute("data-status") !== "running") {
      // Over: what only a running duel offers (the Cancel button) goes.
      document.querySelectorAll("[data-while-running]").forEach(function (el) {
        el.remove();
      });
    }
    if (focused) {
      var again = nodeAt(focused);
      if (again && typeof again.focus === "function") again.focus({preventScroll: true});
    }
    window.scrollTo(x, y);
    return true;
  }

  function poll() {
    fetch(live.getAttribute("data-live"), {credentials: "same-origin", cache: "no-store"})
      .then(function (response) {
        return response.ok ? response.text() : Promise.reject(response.status);
      })
      .then(function (html) {
        if (replace(html) && live.getAttribute("data-status") === "running") {
          window.setTimeout(poll, every);
        }
      })
      .catch(function () {
        window.setTimeout(poll, every * 2); // the server is busy or away: ask again later
      });
  }

  window.setTimeout(poll, every);
})();
