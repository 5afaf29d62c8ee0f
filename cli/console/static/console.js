// Live updates: a table with data-live streams its rows from the console
// (server-sent events, one rendered row per change) and swaps them in.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("table[data-live]").forEach(function (table) {
    var source = new EventSource(table.dataset.live);
    // The list the page holds is too old to watch from: list again.
    source.addEventListener("reload", function () { source.close(); window.location.reload(); });
    source.addEventListener("cluster", function (e) {
      var msg = JSON.parse(e.data);
      var body = table.tBodies[0];
      var row = body.querySelector('tr[data-cluster="' + CSS.escape(msg.name) + '"]');
      var tile = document.querySelector('.tile[data-cluster="' + CSS.escape(msg.name) + '"]');
      if (msg.deleted) {
        if (row) { row.remove(); }
        if (tile) { tile.remove(); }
        return;
      }
      var tmp = document.createElement("tbody");
      tmp.innerHTML = msg.html;
      var fresh = tmp.firstElementChild;
      if (row) { row.replaceWith(fresh); } else { body.appendChild(fresh); }
      if (tile) {
        tile.className = "tile " + fresh.className;
        tile.querySelector(".visually-hidden").textContent = " Ready " + fresh.querySelector(".state").textContent.trim();
      }
      document.body.dataset.lastUpdate = String(Date.now());
    });
  });
});
