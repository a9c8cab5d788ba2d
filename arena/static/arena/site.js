// The site's own behaviour, kept out of the pages so that the Content-Security-Policy can
// forbid inline scripts: a form with data-confirm asks before it is sent.
"use strict";
document.addEventListener("submit", function (event) {
  var form = event.target;
  var question = form instanceof HTMLFormElement ? form.getAttribute("data-confirm") : null;
  if (question && !window.confirm(question)) event.preventDefault();
});
