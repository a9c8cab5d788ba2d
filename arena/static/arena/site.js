// The site's own behaviour, kept out of the pages so that the Content-Security-Policy can
// forbid inline scripts: a form with data-confirm asks before it is sent.
"use strict";
document.addEventListener("submit", function (event) {
  var form = event.target;
  var question = form instanceof HTMLFormElement ? form.getAttribute("data-confirm") : null;
  if (question && !window.confirm(question)) event.preventDefault();
});

// A form with data-modes (the name of its radio buttons choosing a mode) shows only the
// fieldset of the chosen mode (fieldset data-mode="..."): the others are hidden and disabled,
// so their fields are neither required nor sent. Without this script every field shows, and
// the server ignores the fields of the modes not chosen.
function showChosenMode(form) {
  var name = form.getAttribute("data-modes");
  var chosen = form.querySelector('input[name="' + name + '"]:checked');
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
