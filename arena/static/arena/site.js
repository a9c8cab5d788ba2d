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

// A page that follows something under way (data-refresh="seconds" on <main>) reloads itself
// while nobody is using it: not while a field has the focus or something is selected.
function refreshLater() {
  var main = document.querySelector("main[data-refresh]");
  var seconds = main ? Number(main.getAttribute("data-refresh")) : 0;
  if (!(seconds > 0)) return;
  window.setInterval(function () {
    var busy = document.activeElement && document.activeElement.matches("input, select, textarea");
    var selected = String(window.getSelection ? window.getSelection() : "") !== "";
    if (!busy && !selected && document.visibilityState === "visible") window.location.reload();
  }, seconds * 1000);
}

markScrolling();
window.addEventListener("load", markScrolling);  // once the styles and fonts are in
window.addEventListener("resize", markScrolling);
refreshLater();

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
