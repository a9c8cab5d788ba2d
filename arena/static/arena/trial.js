// A waiting trial's page: ask for its status every two seconds, and show the page again once
// the trial is over (the game and its log are drawn then). Stops after an hour.
"use strict";
(function () {
  var waiting = document.getElementById("trial-waiting");
  if (!waiting) return;
  var url = waiting.getAttribute("data-status-url");
  var status = waiting.getAttribute("data-status");
  var tries = 0;
  function ask() {
    if (++tries > 1800) return;
    fetch(url, { headers: { Accept: "application/json" }, cache: "no-store" })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (data) {
        if (data && (data.done || data.status !== status)) {
          window.location.reload();
        } else {
          window.setTimeout(ask, 2000);
        }
      })
      .catch(function () { window.setTimeout(ask, 5000); });
  }
  window.setTimeout(ask, 2000);
})();
